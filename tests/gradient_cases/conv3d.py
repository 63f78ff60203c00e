"""Gradient cases: Conv3D and its backprop ops, and the 3-D pools with their gradient ops (whose
own gradients are TF's: MaxPool3DGradGrad, AvgPool3D, ...). Max-pool inputs are distinct values
0.05 apart, so no window has a tie within the checker's step."""
import numpy as np

from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.nn import convolution3d as conv3d_ops, pooling3d as pool3d_ops
from tests.gradient_cases import GradCase

SAME = {"strides": [1, 1, 2, 1, 1], "padding": "SAME"}
POOL = {"ksize": [1, 2, 2, 2, 1], "strides": [1, 1, 2, 1, 1], "padding": "SAME"}
NCDHW_POOL = {"ksize": [1, 1, 2, 2, 2], "strides": [1, 1, 2, 1, 2], "padding": "VALID", "data_format": "NCDHW"}


def _distinct(*shapes, extra=()):
    def init(rng):
        values = [(rng.permutation(int(np.prod(s))).reshape(s) - np.prod(s) / 2) * 0.05 for s in shapes]
        return values + [rng.uniform(-1, 1, s) for s in extra]
    return init


def _backprop_input(sizes, **kw):
    return lambda f, dy: apply_op(conv3d_ops.Conv3DBackpropInputV2, input_sizes=sizes, filter=f, out_backprop=dy,
                                  **{**SAME, **kw})


def _backprop_filter(sizes, **kw):
    return lambda x, dy: apply_op(conv3d_ops.Conv3DBackpropFilterV2, input=x, filter_sizes=sizes, out_backprop=dy,
                                  **{**SAME, **kw})


def _max_grad(attrs, grad_grad=False):
    def build(x, g):
        y = apply_op(pool3d_ops.MaxPool3D, input=x, **attrs)
        op = pool3d_ops.MaxPool3DGradGrad if grad_grad else pool3d_ops.MaxPool3DGrad
        return apply_op(op, orig_input=x, orig_output=y, grad=g, **attrs)
    return build


CASES = [
    GradCase("conv3d_same_strided", ("Conv3D",), lambda x, f: conv3d_ops.conv3d(x, f, **SAME),
             [(2, 3, 4, 3, 2), (2, 2, 3, 2, 3)]),
    GradCase("conv3d_valid_ncdhw_dilated", ("Conv3D",),
             lambda x, f: conv3d_ops.conv3d(x, f, [1, 1, 1, 1, 1], "VALID", data_format="NCDHW",
                                            dilations=[1, 1, 2, 1, 1]),
             [(1, 2, 4, 3, 4), (2, 2, 2, 2, 2)]),
    GradCase("conv3d_backprop_input", ("Conv3DBackpropInputV2",), _backprop_input([2, 3, 4, 3, 2]),
             [(2, 2, 3, 2, 3), (2, 3, 2, 3, 3)]),
    GradCase("conv3d_backprop_filter", ("Conv3DBackpropFilterV2",), _backprop_filter([2, 2, 3, 2, 3]),
             [(2, 3, 4, 3, 2), (2, 3, 2, 3, 3)]),
    GradCase("max_pool3d_same", ("MaxPool3D",), lambda x: apply_op(pool3d_ops.MaxPool3D, input=x, **POOL),
             [(2, 3, 4, 3, 2)], init=_distinct((2, 3, 4, 3, 2))),
    GradCase("max_pool3d_valid_ncdhw", ("MaxPool3D",),
             lambda x: apply_op(pool3d_ops.MaxPool3D, input=x, **NCDHW_POOL),
             [(1, 2, 3, 4, 5)], init=_distinct((1, 2, 3, 4, 5))),
    GradCase("avg_pool3d_same", ("AvgPool3D",), lambda x: pool3d_ops.avg_pool3d(x, 3, 2, "SAME"),
             [(2, 3, 4, 5, 2)]),
    GradCase("avg_pool3d_grad", ("AvgPool3DGrad",),
             lambda g: apply_op(pool3d_ops.AvgPool3DGrad, orig_input_shape=[2, 3, 4, 3, 2], grad=g, **POOL),
             [(2, 3, 2, 3, 2)]),
    GradCase("max_pool3d_grad", ("MaxPool3DGrad",), _max_grad(POOL), [(2, 3, 4, 3, 2), (2, 3, 2, 3, 2)],
             init=_distinct((2, 3, 4, 3, 2), extra=[(2, 3, 2, 3, 2)])),
    GradCase("max_pool3d_grad_grad", ("MaxPool3DGradGrad",), _max_grad(POOL, True),
             [(2, 3, 4, 3, 2), (2, 3, 4, 3, 2)], init=_distinct((2, 3, 4, 3, 2), extra=[(2, 3, 4, 3, 2)])),
]
