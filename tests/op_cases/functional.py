"""Op cases for ops that functions and the distributed runtime use: the SymbolicGradient of a
Defun call (a tape differentiating it runs one, as tf.gradients builds one), and the bfloat16
packing of tensors sent between processes."""
import numpy as np

import tensorweave as tf
from tests.gradient_cases.functional import _defun_two_inputs
from tests.op_cases import OpCase, raw


def _symbolic_gradient(x, y):
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = _defun_two_inputs(x, y)
    return [z] + tape.gradient(z, [x, y])


def _bfloat16(x):
    packed = raw("_Bfloat16Pack", x)
    return [packed, raw("_Bfloat16Unpack", packed)]


CASES = [
    OpCase("functional:symbolic_gradient", _symbolic_gradient,
           lambda rng: [rng.randn(2, 3), rng.randn(2, 3)], ("SymbolicGradient",)),
    OpCase("sendrecv:bfloat16", _bfloat16, lambda rng: [rng.randn(2, 5).astype(np.float32)],
           ("_Bfloat16Pack", "_Bfloat16Unpack")),
]
