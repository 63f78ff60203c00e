"""`tf.linalg`: matrix functions under their TF1.13+ namespace (re-exports only)."""
from tensorweave.ops.math.clip import global_norm  # noqa: F401
from tensorweave.ops.linalg.linalg_impl import eye, norm  # noqa: F401
from tensorweave.ops.linalg.matrix import cholesky, matmul, matrix_transpose, trace  # noqa: F401
from tensorweave.ops.linalg.matrix import matrix_determinant as det  # noqa: F401
from tensorweave.ops.linalg.matrix import matrix_diag as diag  # noqa: F401
from tensorweave.ops.linalg.matrix import matrix_diag_part as diag_part  # noqa: F401
from tensorweave.ops.linalg.matrix import matrix_inverse as inv  # noqa: F401
from tensorweave.ops.linalg.matrix import matrix_solve as solve  # noqa: F401
from tensorweave.ops.linalg.matrix import matrix_transpose as transpose  # noqa: F401
from tensorweave.ops.linalg.einsum import einsum, tensordot  # noqa: F401
