"""`tf.linalg`: matrix functions under their TF1.13+ namespace (re-exports only)."""
from tensorweave.ops.math import global_norm  # noqa: F401
from tensorweave.ops.linalg import eye, norm  # noqa: F401
from tensorweave.ops.linalg import cholesky, matmul, matrix_transpose, trace  # noqa: F401
from tensorweave.ops.linalg import matrix_determinant as det  # noqa: F401
from tensorweave.ops.linalg import matrix_diag as diag  # noqa: F401
from tensorweave.ops.linalg import matrix_diag_part as diag_part  # noqa: F401
from tensorweave.ops.linalg import matrix_inverse as inv  # noqa: F401
from tensorweave.ops.linalg import matrix_solve as solve  # noqa: F401
from tensorweave.ops.linalg import matrix_transpose as transpose  # noqa: F401
from tensorweave.ops.linalg import einsum, tensordot  # noqa: F401
from tensorweave.ops.nn import l2_normalize  # noqa: F401,E402
from tensorweave.ops.linalg import diag as tensor_diag, diag_part as tensor_diag_part  # noqa: F401,E402
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("linalg", __name__)
