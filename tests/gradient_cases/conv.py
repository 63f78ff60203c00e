"""Gradient cases: Conv2D and its backprop ops, depthwise convolution, and pooling with its
gradient ops (whose own gradients are TF's: MaxPoolGradGrad, AvgPool, ...). Max-pool inputs are
distinct values 0.05 apart, so no window has a tie within the checker's step."""
import numpy as np

from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.nn import conv as conv_ops, depthwise_conv as depthwise_conv_ops, pooling as pooling_ops
from tests.gradient_cases import GradCase

SAME1 = {"strides": [1, 1, 1, 1], "padding": "SAME"}


def _distinct(*shapes, extra=()):
    """Tie-free inputs for max pooling (first shapes), then uniform inputs (extra shapes)."""
    def init(rng):
        values = [(rng.permutation(int(np.prod(s))).reshape(s) - np.prod(s) / 2) * 0.05 for s in shapes]
        return values + [rng.uniform(-1, 1, s) for s in extra]
    return init


def _conv(x, w, **kw):
    return conv_ops.conv2d(x, w, **{**SAME1, **kw})


def _backprop_input(sizes, **kw):
    return lambda w, dy: apply_op(conv_ops.Conv2DBackpropInput, input_sizes=sizes, filter=w, out_backprop=dy,
                                  **{**SAME1, **kw})


def _backprop_filter(sizes, **kw):
    return lambda x, dy: apply_op(conv_ops.Conv2DBackpropFilter, input=x, filter_sizes=sizes, out_backprop=dy,
                                  **{**SAME1, **kw})


def _depthwise(op_def, **kw):
    def build(a, b, sizes=None):
        return apply_op(op_def, **{**SAME1, **kw, **_depthwise_args(op_def, a, b, sizes)})
    return build


def _depthwise_args(op_def, a, b, sizes):
    if op_def is depthwise_conv_ops.DepthwiseConv2dNative:
        return {"input": a, "filter": b}
    if op_def is depthwise_conv_ops.DepthwiseConv2dNativeBackpropInput:
        return {"input_sizes": sizes, "filter": a, "out_backprop": b}
    return {"input": a, "filter_sizes": sizes, "out_backprop": b}


def _pool(ksize, strides, padding):
    return {"ksize": [1, ksize, ksize, 1], "strides": [1, strides, strides, 1], "padding": padding}


def _max_pool_grad(ksize, strides, padding):
    def build(x, g):
        y = pooling_ops.max_pool(x, ksize, strides, padding)
        return apply_op(pooling_ops.MaxPoolGrad, orig_input=x, orig_output=y, grad=g,
                        **_pool(ksize, strides, padding))
    return build


def _max_pool_grad_v2(x, g):
    y = pooling_ops.max_pool_v2(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    return apply_op(pooling_ops.MaxPoolGradV2, orig_input=x, orig_output=y, grad=g, ksize=[1, 3, 3, 1],
                    strides=[1, 2, 2, 1], padding="SAME")


def _max_pool_grad_grad(v2):
    def build(x, g):
        if v2:
            y = pooling_ops.max_pool_v2(x, [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
            return apply_op(pooling_ops.MaxPoolGradGradV2, orig_input=x, orig_output=y, grad=g,
                            ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="VALID")
        y = pooling_ops.max_pool(x, 2, 1, "VALID")
        return apply_op(pooling_ops.MaxPoolGradGrad, orig_input=x, orig_output=y, grad=g,
                        **_pool(2, 1, "VALID"))
    return build


CONV = [
    GradCase("conv2d_same", ("Conv2D",), _conv, [(2, 5, 4, 2), (3, 2, 2, 3)]),
    GradCase("conv2d_valid_stride2", ("Conv2D",), lambda x, w: _conv(x, w, strides=[1, 2, 2, 1], padding="VALID"),
             [(2, 6, 5, 2), (2, 3, 2, 2)]),
    GradCase("conv2d_dilated", ("Conv2D",), lambda x, w: _conv(x, w, dilations=[1, 2, 2, 1]),
             [(1, 6, 6, 2), (2, 2, 2, 2)]),
    GradCase("conv2d_explicit", ("Conv2D",),
             lambda x, w: conv_ops.conv2d(x, w, [1, 2, 1, 1], [[0, 0], [1, 2], [0, 1], [0, 0]]),
             [(1, 5, 4, 2), (3, 2, 2, 2)]),
    GradCase("conv2d_nchw", ("Conv2D",), lambda x, w: _conv(x, w, strides=[1, 1, 2, 2], data_format="NCHW"),
             [(2, 2, 5, 5), (2, 2, 2, 3)]),
    GradCase("conv2d_groups", ("Conv2D",), _conv, [(1, 4, 4, 4), (2, 2, 2, 4)]),
    GradCase("conv2d_one_channel", ("Conv2D",), _conv, [(2, 5, 5, 1), (3, 3, 1, 2)]),
    GradCase("conv2d_pointwise", ("Conv2D",), _conv, [(2, 3, 3, 3), (1, 1, 3, 2)]),
    GradCase("conv2d_backprop_input", ("Conv2DBackpropInput",),
             _backprop_input([2, 5, 5, 2], strides=[1, 2, 2, 1]), [(3, 3, 2, 3), (2, 3, 3, 3)]),
    GradCase("conv2d_backprop_input_many_channels", ("Conv2DBackpropInput",),
             _backprop_input([1, 4, 3, 8]), [(2, 2, 8, 2), (1, 4, 3, 2)]),
    GradCase("conv2d_backprop_filter", ("Conv2DBackpropFilter",),
             _backprop_filter([3, 2, 2, 3], padding="VALID"), [(2, 5, 4, 2), (2, 3, 3, 3)]),
    GradCase("conv2d_backprop_filter_dilated", ("Conv2DBackpropFilter",),
             _backprop_filter([2, 2, 2, 2], dilations=[1, 2, 2, 1]), [(1, 5, 5, 2), (1, 5, 5, 2)]),
]

DEPTHWISE = [
    GradCase("depthwise_conv2d", ("DepthwiseConv2dNative",), _depthwise(depthwise_conv_ops.DepthwiseConv2dNative),
             [(2, 5, 4, 2), (3, 2, 2, 2)]),
    GradCase("depthwise_conv2d_strided_valid", ("DepthwiseConv2dNative",),
             _depthwise(depthwise_conv_ops.DepthwiseConv2dNative, strides=[1, 2, 2, 1], padding="VALID"),
             [(1, 6, 5, 3), (2, 2, 3, 1)]),
    GradCase("depthwise_backprop_input", ("DepthwiseConv2dNativeBackpropInput",),
             lambda w, dy: _depthwise(depthwise_conv_ops.DepthwiseConv2dNativeBackpropInput)(w, dy, [2, 4, 4, 2]),
             [(3, 3, 2, 2), (2, 4, 4, 4)]),
    GradCase("depthwise_backprop_filter", ("DepthwiseConv2dNativeBackpropFilter",),
             lambda x, dy: _depthwise(depthwise_conv_ops.DepthwiseConv2dNativeBackpropFilter,
                                      dilations=[1, 2, 2, 1])(x, dy, [2, 2, 2, 2]),
             [(1, 5, 5, 2), (1, 5, 5, 4)]),
]

POOL = [
    GradCase("max_pool_tiled", ("MaxPool",), lambda x: pooling_ops.max_pool(x, 2, 2, "VALID"), [(2, 4, 4, 2)],
             init=_distinct((2, 4, 4, 2))),
    GradCase("max_pool_overlapping_same", ("MaxPool",), lambda x: pooling_ops.max_pool(x, 3, [1, 2], "SAME"),
             [(1, 5, 5, 2)], init=_distinct((1, 5, 5, 2))),
    GradCase("max_pool_v2", ("MaxPoolV2",), lambda x: pooling_ops.max_pool_v2(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
             [(1, 5, 5, 2)], init=_distinct((1, 5, 5, 2))),
    GradCase("avg_pool_same", ("AvgPool",), lambda x: pooling_ops.avg_pool(x, 3, 2, "SAME"), [(2, 5, 5, 2)]),
    GradCase("avg_pool_valid_nchw", ("AvgPool",),
             lambda x: pooling_ops.avg_pool(x, [1, 1, 2, 2], [1, 1, 1, 1], "VALID", data_format="NCHW"),
             [(1, 2, 4, 3)]),
    GradCase("max_pool_grad", ("MaxPoolGrad",), _max_pool_grad(3, 1, "SAME"), [(1, 4, 4, 2), (1, 4, 4, 2)],
             init=_distinct((1, 4, 4, 2), extra=[(1, 4, 4, 2)])),
    GradCase("max_pool_grad_tiled", ("MaxPoolGrad",), _max_pool_grad(2, 2, "VALID"), [(1, 4, 4, 2), (1, 2, 2, 2)],
             init=_distinct((1, 4, 4, 2), extra=[(1, 2, 2, 2)])),
    GradCase("max_pool_grad_v2", ("MaxPoolGradV2",), _max_pool_grad_v2, [(1, 5, 5, 2), (1, 3, 3, 2)],
             init=_distinct((1, 5, 5, 2), extra=[(1, 3, 3, 2)])),
    GradCase("avg_pool_grad", ("AvgPoolGrad",),
             lambda g: apply_op(pooling_ops.AvgPoolGrad, orig_input_shape=[1, 5, 5, 2], grad=g,
                                **_pool(3, 2, "SAME")), [(1, 3, 3, 2)]),
    GradCase("max_pool_grad_grad", ("MaxPoolGradGrad",), _max_pool_grad_grad(False), [(1, 4, 4, 2), (1, 4, 4, 2)],
             init=_distinct((1, 4, 4, 2), extra=[(1, 4, 4, 2)])),
    GradCase("max_pool_grad_grad_v2", ("MaxPoolGradGradV2",), _max_pool_grad_grad(True),
             [(1, 4, 4, 2), (1, 4, 4, 2)], init=_distinct((1, 4, 4, 2), extra=[(1, 4, 4, 2)])),
]

CASES = CONV + DEPTHWISE + POOL
