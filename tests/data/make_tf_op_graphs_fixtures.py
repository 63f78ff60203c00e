"""Records, op type by op type, a tiny GraphDef that real TensorFlow (TF 2.21, TF1 graph mode;
run with /opt/tfref/bin/python) builds around that op, and the op's outputs for fixed inputs.

It reads tests/data/tw_registered_ops.json (written by make_tw_registered_ops.py with
tensorweave's venv) and writes tests/data/tf_op_graphs.npz:
- "meta": JSON (as uint8) {"cases": {op: {"outputs": [tensor names], "setup": [op names to run
  first, one run each, e.g. variable initialisers and queue enqueues], "targets": [op names run
  with the outputs]}}, "skipped": {op: reason}};
- "<op>/graph": the serialized GraphDef (uint8);
- "<op>/<i>": the i-th recorded output (string outputs as fixed-width bytes).

Ops whose inputs all share one type attribute and need no other attribute are built generically
(inputs: small constants of the first dtype the op accepts among float32, int32, bool, string);
the rest come from the CASES table below, which calls tf.raw_ops or the public API.
"""

import json
import os

import numpy as np
import tensorflow.compat.v1 as tf
from tensorflow.python.framework import op_def_registry

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))
R = tf.raw_ops
F32 = np.float32


def rng():
    return np.random.RandomState(1215)


def c(value, dtype=None):
    return tf.constant(value, dtype=dtype)


def fa(*shape, lo=0.1, hi=0.9):
    return tf.constant(rng().uniform(lo, hi, size=shape).astype(F32))


def image(n=1, h=4, w=5, ch=3):
    return tf.constant(rng().uniform(0, 1, size=(n, h, w, ch)).astype(F32))


def boxes():
    return c([[0.1, 0.1, 0.5, 0.5], [0.12, 0.1, 0.52, 0.5], [0.5, 0.5, 0.9, 0.9]], tf.float32)


SCORES = [0.9, 0.8, 0.7]

# Every case builds its op (returning it or a tensor of it) and may return several outputs.
CASES = {
    "AddN": lambda: R.AddN(inputs=[fa(2, 3), fa(2, 3), fa(2, 3)]),
    "All": lambda: R.All(input=c([[True, False], [True, True]]), axis=c([1])),
    "Any": lambda: R.Any(input=c([[True, False], [False, False]]), axis=c([1])),
    "ArgMax": lambda: R.ArgMax(input=fa(3, 4), dimension=c(1)),
    "ArgMin": lambda: R.ArgMin(input=fa(3, 4), dimension=c(0)),
    "AsString": lambda: R.AsString(input=c([1.5, -2.25]), precision=2),
    "AvgPool": lambda: R.AvgPool(value=image(1, 4, 4, 2), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME"),
    "AvgPool3D": lambda: R.AvgPool3D(
        input=fa(1, 4, 4, 4, 2), ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID"
    ),
    "AvgPoolGrad": lambda: R.AvgPoolGrad(
        orig_input_shape=c([1, 4, 4, 2]), grad=fa(1, 2, 2, 2), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"
    ),
    "AvgPool3DGrad": lambda: R.AvgPool3DGrad(
        orig_input_shape=c([1, 4, 4, 4, 2]),
        grad=fa(1, 2, 2, 2, 2),
        ksize=[1, 2, 2, 2, 1],
        strides=[1, 2, 2, 2, 1],
        padding="VALID",
    ),
    "BatchMatMulV2": lambda: R.BatchMatMulV2(x=fa(2, 2, 3), y=fa(3, 4), adj_x=False),
    "BiasAdd": lambda: R.BiasAdd(value=fa(2, 3), bias=c([1.0, 2.0, 3.0])),
    "BiasAddGrad": lambda: R.BiasAddGrad(out_backprop=fa(2, 3)),
    "BroadcastGradientArgs": lambda: R.BroadcastGradientArgs(s0=c([2, 1, 3]), s1=c([4, 3])),
    "BroadcastTo": lambda: R.BroadcastTo(input=c([1.0, 2.0]), shape=c([3, 2])),
    "Cast": lambda: R.Cast(x=c([1.7, -2.5, 3.2]), DstT=tf.int32),
    "Cholesky": lambda: R.Cholesky(input=c([[4.0, 2.0], [2.0, 3.0]])),
    "ClipByValue": lambda: R.ClipByValue(t=fa(2, 3), clip_value_min=c(0.3), clip_value_max=c(0.6)),
    "ComplexAbs": None,
    "ConcatV2": lambda: R.ConcatV2(values=[fa(2, 3), fa(2, 1)], axis=c(1)),
    "ConjugateTranspose": lambda: R.ConjugateTranspose(x=fa(2, 3), perm=c([1, 0])),
    "Const": lambda: c([[1, 2], [3, 4]]),
    "Conv2D": lambda: R.Conv2D(input=image(1, 5, 5, 2), filter=fa(3, 3, 2, 4), strides=[1, 1, 1, 1], padding="SAME"),
    "Conv2DBackpropFilter": lambda: R.Conv2DBackpropFilter(
        input=image(1, 5, 5, 2),
        filter_sizes=c([3, 3, 2, 4]),
        out_backprop=fa(1, 5, 5, 4),
        strides=[1, 1, 1, 1],
        padding="SAME",
    ),
    "Conv2DBackpropInput": lambda: R.Conv2DBackpropInput(
        input_sizes=c([1, 5, 5, 2]),
        filter=fa(3, 3, 2, 4),
        out_backprop=fa(1, 5, 5, 4),
        strides=[1, 1, 1, 1],
        padding="SAME",
    ),
    "Conv3D": lambda: R.Conv3D(
        input=fa(1, 4, 4, 4, 2), filter=fa(2, 2, 2, 2, 3), strides=[1, 1, 1, 1, 1], padding="VALID"
    ),
    "Conv3DBackpropFilterV2": lambda: R.Conv3DBackpropFilterV2(
        input=fa(1, 4, 4, 4, 2),
        filter_sizes=c([2, 2, 2, 2, 3]),
        out_backprop=fa(1, 3, 3, 3, 3),
        strides=[1, 1, 1, 1, 1],
        padding="VALID",
    ),
    "Conv3DBackpropInputV2": lambda: R.Conv3DBackpropInputV2(
        input_sizes=c([1, 4, 4, 4, 2]),
        filter=fa(2, 2, 2, 2, 3),
        out_backprop=fa(1, 3, 3, 3, 3),
        strides=[1, 1, 1, 1, 1],
        padding="VALID",
    ),
    "CropAndResize": lambda: R.CropAndResize(
        image=image(1, 5, 5, 2), boxes=boxes()[:2], box_ind=c([0, 0]), crop_size=c([3, 3])
    ),
    "Cumprod": lambda: R.Cumprod(x=fa(2, 3), axis=c(1), exclusive=True),
    "Cumsum": lambda: R.Cumsum(x=fa(2, 3), axis=c(1), reverse=True),
    "DepthwiseConv2dNative": lambda: R.DepthwiseConv2dNative(
        input=image(1, 5, 5, 2), filter=fa(3, 3, 2, 2), strides=[1, 1, 1, 1], padding="SAME"
    ),
    "DepthwiseConv2dNativeBackpropFilter": lambda: R.DepthwiseConv2dNativeBackpropFilter(
        input=image(1, 5, 5, 2),
        filter_sizes=c([3, 3, 2, 2]),
        out_backprop=fa(1, 5, 5, 4),
        strides=[1, 1, 1, 1],
        padding="SAME",
    ),
    "DepthwiseConv2dNativeBackpropInput": lambda: R.DepthwiseConv2dNativeBackpropInput(
        input_sizes=c([1, 5, 5, 2]),
        filter=fa(3, 3, 2, 2),
        out_backprop=fa(1, 5, 5, 4),
        strides=[1, 1, 1, 1],
        padding="SAME",
    ),
    "Diag": lambda: R.Diag(diagonal=c([1.0, 2.0, 3.0])),
    "DiagPart": lambda: R.DiagPart(input=fa(3, 3)),
    "DivNoNan": lambda: R.DivNoNan(x=c([1.0, 2.0]), y=c([0.0, 4.0])),
    "DynamicPartition": lambda: R.DynamicPartition(
        data=c([10, 20, 30, 40]), partitions=c([1, 0, 1, 0]), num_partitions=2
    ),
    "DynamicStitch": lambda: R.DynamicStitch(indices=[c([0, 2]), c([1, 3])], data=[c([1.0, 3.0]), c([2.0, 4.0])]),
    "ParallelDynamicStitch": lambda: R.ParallelDynamicStitch(
        indices=[c([0, 2]), c([1, 3])], data=[c([1.0, 3.0]), c([2.0, 4.0])]
    ),
    "Elu": lambda: R.Elu(features=c([-1.0, 0.5])),
    "ExpandDims": lambda: R.ExpandDims(input=fa(2, 3), axis=c(1)),
    "Fill": lambda: R.Fill(dims=c([2, 3]), value=c(1.5)),
    "FusedBatchNorm": lambda: R.FusedBatchNorm(
        x=image(2, 3, 3, 2), scale=c([1.0, 2.0]), offset=c([0.1, 0.2]), mean=c([]), variance=c([]), is_training=True
    )[:3],
    "FusedBatchNormV3": lambda: tf.nn.fused_batch_norm(
        image(2, 3, 3, 2), c([1.0, 2.0]), c([0.1, 0.2]), c([0.5, 0.4]), c([1.0, 2.0]), is_training=False
    )[0],
    "GatherNd": lambda: R.GatherNd(params=fa(3, 4), indices=c([[0, 1], [2, 3]])),
    "GatherV2": lambda: R.GatherV2(params=fa(3, 4), indices=c([2, 0]), axis=c(1)),
    "HSVToRGB": lambda: R.HSVToRGB(images=image()),
    "RGBToHSV": lambda: R.RGBToHSV(images=image()),
    "AdjustContrastv2": lambda: R.AdjustContrastv2(images=image(), contrast_factor=c(1.5)),
    "AdjustHue": lambda: R.AdjustHue(images=image(), delta=c(0.2)),
    "AdjustSaturation": lambda: R.AdjustSaturation(images=image(), scale=c(0.5)),
    "Identity": lambda: R.Identity(input=fa(2)),
    "InTopKV2": lambda: R.InTopKV2(predictions=fa(3, 4), targets=c([0, 1, 2]), k=c(2)),
    "InTopK": lambda: R.InTopK(predictions=fa(3, 4), targets=c([0, 1, 2]), k=2),
    "InvertPermutation": lambda: R.InvertPermutation(x=c([2, 0, 1])),
    "L2Loss": lambda: R.L2Loss(t=fa(2, 3)),
    "LRN": lambda: R.LRN(input=image(1, 2, 2, 5), depth_radius=2),
    "LRNGrad": lambda: R.LRNGrad(
        input_grads=image(1, 2, 2, 5),
        input_image=image(1, 2, 2, 5),
        output_image=R.LRN(input=image(1, 2, 2, 5), depth_radius=2),
        depth_radius=2,
    ),
    "LeakyRelu": lambda: R.LeakyRelu(features=c([-1.0, 2.0]), alpha=0.3),
    "LeakyReluGrad": lambda: R.LeakyReluGrad(gradients=c([1.0, 1.0]), features=c([-1.0, 2.0]), alpha=0.3),
    "LinSpace": lambda: R.LinSpace(start=c(0.0), stop=c(1.0), num=c(5)),
    "LogSoftmax": lambda: R.LogSoftmax(logits=fa(2, 3)),
    "MatMul": lambda: R.MatMul(a=fa(2, 3), b=fa(4, 3), transpose_b=True),
    "MatrixDeterminant": lambda: R.MatrixDeterminant(input=c([[2.0, 1.0], [1.0, 3.0]])),
    "MatrixDiag": lambda: R.MatrixDiag(diagonal=fa(2, 3)),
    "MatrixDiagPart": lambda: R.MatrixDiagPart(input=fa(2, 3, 3)),
    "MatrixInverse": lambda: R.MatrixInverse(input=c([[2.0, 1.0], [1.0, 3.0]])),
    "MatrixSolve": lambda: R.MatrixSolve(matrix=c([[2.0, 1.0], [1.0, 3.0]]), rhs=c([[1.0], [2.0]])),
    "Max": lambda: R.Max(input=fa(2, 3), axis=c([1]), keep_dims=True),
    "Mean": lambda: R.Mean(input=fa(2, 3), axis=c([0])),
    "Min": lambda: R.Min(input=fa(2, 3), axis=c([1])),
    "Prod": lambda: R.Prod(input=fa(2, 3), axis=c([0, 1])),
    "Sum": lambda: R.Sum(input=fa(2, 3), axis=c([1]), keep_dims=True),
    "MaxPool": lambda: R.MaxPool(input=image(1, 4, 4, 2), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
    "MaxPoolV2": lambda: R.MaxPoolV2(
        input=image(1, 4, 4, 2), ksize=c([1, 3, 3, 1]), strides=c([1, 1, 1, 1]), padding="SAME"
    ),
    "MaxPool3D": lambda: R.MaxPool3D(
        input=fa(1, 4, 4, 4, 2), ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID"
    ),
    "MaxPoolGrad": lambda: R.MaxPoolGrad(
        orig_input=image(1, 4, 4, 2),
        orig_output=R.MaxPool(input=image(1, 4, 4, 2), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
        grad=fa(1, 2, 2, 2),
        ksize=[1, 2, 2, 1],
        strides=[1, 2, 2, 1],
        padding="VALID",
    ),
    "MaxPoolGradV2": lambda: R.MaxPoolGradV2(
        orig_input=image(1, 4, 4, 2),
        orig_output=R.MaxPool(input=image(1, 4, 4, 2), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
        grad=fa(1, 2, 2, 2),
        ksize=c([1, 2, 2, 1]),
        strides=c([1, 2, 2, 1]),
        padding="VALID",
    ),
    "MaxPoolGradGrad": lambda: R.MaxPoolGradGrad(
        orig_input=image(1, 4, 4, 2),
        orig_output=R.MaxPool(input=image(1, 4, 4, 2), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
        grad=image(1, 4, 4, 2),
        ksize=[1, 2, 2, 1],
        strides=[1, 2, 2, 1],
        padding="VALID",
    ),
    "MaxPoolGradGradV2": lambda: R.MaxPoolGradGradV2(
        orig_input=image(1, 4, 4, 2),
        orig_output=R.MaxPool(input=image(1, 4, 4, 2), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
        grad=image(1, 4, 4, 2),
        ksize=c([1, 2, 2, 1]),
        strides=c([1, 2, 2, 1]),
        padding="VALID",
    ),
    "MaxPool3DGrad": lambda: R.MaxPool3DGrad(
        orig_input=fa(1, 4, 4, 4, 2),
        orig_output=R.MaxPool3D(
            input=fa(1, 4, 4, 4, 2), ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID"
        ),
        grad=fa(1, 2, 2, 2, 2),
        ksize=[1, 2, 2, 2, 1],
        strides=[1, 2, 2, 2, 1],
        padding="VALID",
    ),
    "MirrorPad": lambda: R.MirrorPad(input=fa(2, 3), paddings=c([[1, 1], [2, 2]]), mode="REFLECT"),
    "MirrorPadGrad": lambda: R.MirrorPadGrad(input=fa(4, 7), paddings=c([[1, 1], [2, 2]]), mode="SYMMETRIC"),
    "OneHot": lambda: R.OneHot(indices=c([0, 2, -1]), depth=c(3), on_value=c(5.0), off_value=c(-1.0)),
    "Pack": lambda: R.Pack(values=[fa(2), fa(2)], axis=1),
    "Unpack": lambda: R.Unpack(value=fa(3, 2), num=3),
    "Pad": lambda: R.Pad(input=fa(2, 3), paddings=c([[1, 0], [0, 2]])),
    "PadV2": lambda: R.PadV2(input=fa(2, 3), paddings=c([[1, 0], [0, 2]]), constant_values=c(7.0)),
    "PlaceholderWithDefault": lambda: R.PlaceholderWithDefault(input=fa(2, 3), shape=[None, 3]),
    "Range": lambda: R.Range(start=c(1), limit=c(10), delta=c(3)),
    "Rank": lambda: R.Rank(input=fa(2, 3)),
    "Relu6": lambda: R.Relu6(features=c([-1.0, 3.0, 8.0])),
    "Relu": lambda: R.Relu(features=c([-1.0, 3.0])),
    "Reshape": lambda: R.Reshape(tensor=fa(2, 3), shape=c([3, -1])),
    "ResizeArea": lambda: R.ResizeArea(images=image(1, 4, 4, 2), size=c([3, 3])),
    "ResizeBicubic": lambda: R.ResizeBicubic(images=image(1, 4, 4, 2), size=c([6, 5])),
    "ResizeBilinear": lambda: R.ResizeBilinear(images=image(1, 4, 4, 2), size=c([6, 5]), half_pixel_centers=True),
    "ResizeNearestNeighbor": lambda: R.ResizeNearestNeighbor(images=image(1, 4, 4, 2), size=c([6, 5])),
    "ResizeBilinearGrad": lambda: R.ResizeBilinearGrad(grads=image(1, 6, 5, 2), original_image=image(1, 4, 4, 2)),
    "ResizeNearestNeighborGrad": lambda: R.ResizeNearestNeighborGrad(grads=image(1, 6, 5, 2), size=c([4, 4])),
    "ResizeBicubicGrad": lambda: R.ResizeBicubicGrad(grads=image(1, 6, 5, 2), original_image=image(1, 4, 4, 2)),
    "ReverseSequence": lambda: R.ReverseSequence(input=fa(2, 4), seq_lengths=c([2, 3]), seq_dim=1, batch_dim=0),
    "ReverseV2": lambda: R.ReverseV2(tensor=fa(2, 3), axis=c([1])),
    "ScatterNd": lambda: R.ScatterNd(indices=c([[1], [3]]), updates=c([5.0, 6.0]), shape=c([5])),
    "SegmentMax": lambda: R.SegmentMax(data=fa(4, 2), segment_ids=c([0, 0, 1, 1])),
    "SegmentMean": lambda: R.SegmentMean(data=fa(4, 2), segment_ids=c([0, 0, 1, 2])),
    "SegmentMin": lambda: R.SegmentMin(data=fa(4, 2), segment_ids=c([0, 1, 1, 1])),
    "SegmentProd": lambda: R.SegmentProd(data=fa(4, 2), segment_ids=c([0, 0, 1, 1])),
    "SegmentSum": lambda: R.SegmentSum(data=fa(4, 2), segment_ids=c([0, 0, 0, 1])),
    "UnsortedSegmentMax": lambda: R.UnsortedSegmentMax(data=fa(4, 2), segment_ids=c([1, 0, 1, 0]), num_segments=c(3)),
    "UnsortedSegmentMin": lambda: R.UnsortedSegmentMin(data=fa(4, 2), segment_ids=c([1, 0, 1, 0]), num_segments=c(2)),
    "UnsortedSegmentProd": lambda: R.UnsortedSegmentProd(data=fa(4, 2), segment_ids=c([1, 0, 1, 0]), num_segments=c(3)),
    "UnsortedSegmentSum": lambda: R.UnsortedSegmentSum(data=fa(4, 2), segment_ids=c([1, 0, 1, 0]), num_segments=c(3)),
    "Select": lambda: R.Select(condition=c([True, False]), x=fa(2, 3), y=fa(2, 3, lo=2, hi=3)),
    "SelectV2": lambda: R.SelectV2(condition=c([True, False, True]), t=fa(2, 3), e=c(9.0)),
    "Shape": lambda: R.Shape(input=fa(2, 3)),
    "ShapeN": lambda: R.ShapeN(input=[fa(2, 3), fa(4)]),
    "Size": lambda: R.Size(input=fa(2, 3)),
    "Slice": lambda: R.Slice(input=fa(3, 4), begin=c([1, 0]), size=c([2, -1])),
    "Softmax": lambda: R.Softmax(logits=fa(2, 3)),
    "SoftmaxCrossEntropyWithLogits": lambda: R.SoftmaxCrossEntropyWithLogits(
        features=fa(2, 3), labels=c([[0.0, 1.0, 0.0], [0.5, 0.5, 0.0]])
    ),
    "SparseSoftmaxCrossEntropyWithLogits": lambda: R.SparseSoftmaxCrossEntropyWithLogits(
        features=fa(2, 3), labels=c([1, 2])
    ),
    "Split": lambda: R.Split(axis=c(1), value=fa(2, 4), num_split=2),
    "SplitV": lambda: R.SplitV(value=fa(2, 5), size_splits=c([1, -1, 2]), axis=c(1), num_split=3),
    "Squeeze": lambda: R.Squeeze(input=fa(1, 3, 1), axis=[2]),
    "StridedSlice": lambda: R.StridedSlice(
        input=fa(4, 5), begin=c([1, 0]), end=c([4, 5]), strides=c([2, 2]), shrink_axis_mask=0
    ),
    "StridedSliceGrad": lambda: R.StridedSliceGrad(
        shape=c([4, 5]), begin=c([1, 0]), end=c([4, 5]), strides=c([2, 2]), dy=fa(2, 3)
    ),
    "Tile": lambda: R.Tile(input=fa(2, 3), multiples=c([2, 1])),
    "TopKV2": lambda: R.TopKV2(input=fa(2, 5), k=c(3)),
    "Transpose": lambda: R.Transpose(x=fa(2, 3, 4), perm=c([2, 0, 1])),
    "Unique": lambda: R.Unique(x=c([3, 1, 3, 2, 1])),
    "UniqueWithCounts": lambda: R.UniqueWithCounts(x=c([3, 1, 3, 2, 1])),
    "Where": lambda: R.Where(condition=c([[True, False], [False, True]])),
    "OnesLike": lambda: R.OnesLike(x=fa(2, 3)),
    "ZerosLike": lambda: R.ZerosLike(x=fa(2, 3)),
    "StopGradient": lambda: R.StopGradient(input=fa(2)),
    "CheckNumerics": lambda: R.CheckNumerics(tensor=fa(2), message="bad"),
    "Selu": lambda: R.Selu(features=c([-1.0, 2.0])),
    "Softplus": lambda: R.Softplus(features=c([-1.0, 2.0])),
    "Softsign": lambda: R.Softsign(features=c([-1.0, 2.0])),
    "NoOp": None,
    "ComputeAccidentalHits": lambda: R.ComputeAccidentalHits(
        true_classes=c([[1, 2], [0, 3]], tf.int64), sampled_candidates=c([2, 0, 4], tf.int64), num_true=2
    ),
    "CombinedNonMaxSuppression": lambda: R.CombinedNonMaxSuppression(
        boxes=tf.reshape(boxes(), [1, 3, 1, 4]),
        scores=c([[[0.9, 0.1], [0.8, 0.6], [0.7, 0.2]]]),
        max_output_size_per_class=c(2),
        max_total_size=c(3),
        iou_threshold=c(0.5),
        score_threshold=c(0.0),
    ),
    "NonMaxSuppression": lambda: R.NonMaxSuppression(
        boxes=boxes(), scores=c(SCORES), max_output_size=c(3), iou_threshold=0.5
    ),
    "NonMaxSuppressionV2": lambda: R.NonMaxSuppressionV2(
        boxes=boxes(), scores=c(SCORES), max_output_size=c(3), iou_threshold=c(0.5)
    ),
    "NonMaxSuppressionV3": lambda: R.NonMaxSuppressionV3(
        boxes=boxes(), scores=c(SCORES), max_output_size=c(3), iou_threshold=c(0.5), score_threshold=c(0.75)
    ),
    "NonMaxSuppressionV4": lambda: R.NonMaxSuppressionV4(
        boxes=boxes(),
        scores=c(SCORES),
        max_output_size=c(3),
        iou_threshold=c(0.5),
        score_threshold=c(0.0),
        pad_to_max_output_size=True,
    ),
    "NonMaxSuppressionV5": lambda: R.NonMaxSuppressionV5(
        boxes=boxes(),
        scores=c(SCORES),
        max_output_size=c(3),
        iou_threshold=c(0.5),
        score_threshold=c(0.0),
        soft_nms_sigma=c(0.5),
    ),
    "NonMaxSuppressionWithOverlaps": lambda: R.NonMaxSuppressionWithOverlaps(
        overlaps=c([[1.0, 0.9, 0.0], [0.9, 1.0, 0.1], [0.0, 0.1, 1.0]]),
        scores=c(SCORES),
        max_output_size=c(3),
        overlap_threshold=c(0.5),
        score_threshold=c(0.0),
    ),
    "CropAndResizeGradBoxes": lambda: R.CropAndResizeGradBoxes(
        grads=fa(2, 3, 3, 2), image=image(1, 5, 5, 2), boxes=boxes()[:2], box_ind=c([0, 0])
    ),
    "CropAndResizeGradImage": lambda: R.CropAndResizeGradImage(
        grads=fa(2, 3, 3, 2), boxes=boxes()[:2], box_ind=c([0, 0]), image_size=c([1, 5, 5, 2]), T=tf.float32
    ),
    "DrawBoundingBoxes": lambda: R.DrawBoundingBoxes(images=image(1, 6, 6, 3), boxes=c([[[0.1, 0.1, 0.8, 0.8]]])),
    "DrawBoundingBoxesV2": lambda: R.DrawBoundingBoxesV2(
        images=image(1, 6, 6, 3), boxes=c([[[0.1, 0.1, 0.8, 0.8]]]), colors=c([[1.0, 0.0, 0.0, 1.0]])
    ),
    "ExtractGlimpse": lambda: R.ExtractGlimpse(
        input=image(1, 6, 6, 2), size=c([3, 3]), offsets=c([[0.1, -0.2]]), noise="zero", uniform_noise=False
    ),
    "StringJoin": lambda: R.StringJoin(inputs=[c(["a", "b"]), c(["x", "y"])], separator="-"),
    "StringLength": lambda: R.StringLength(input=c(["ab", "héllo"]), unit="UTF8_CHAR"),
    "StringToNumber": lambda: R.StringToNumber(string_tensor=c(["1.5", "-2"]), out_type=tf.float32),
    "Substr": lambda: R.Substr(input=c(["hello", "world"]), pos=c(1), len=c(3)),
    "StringStrip": lambda: R.StringStrip(input=c(["  a b ", "c\t"])),
    "RegexReplace": lambda: R.RegexReplace(
        input=c(["aa-bb", "c"]), pattern=c("[ab]"), rewrite=c("x"), replace_global=True
    ),
    "StaticRegexReplace": lambda: R.StaticRegexReplace(
        input=c(["aa-bb", "c"]), pattern="[ab]+", rewrite="y", replace_global=False
    ),
    "RegexFullMatch": lambda: R.RegexFullMatch(input=c(["abc", "a1"]), pattern=c("[a-z]+")),
    "StaticRegexFullMatch": lambda: R.StaticRegexFullMatch(input=c(["abc", "a1"]), pattern="[a-z]+"),
    "StringSplit": lambda: R.StringSplit(input=c(["a b", "c"]), delimiter=c(" ")),
    "StringSplitV2": lambda: R.StringSplitV2(input=c(["a,b,c", "d"]), sep=c(","), maxsplit=1),
    "StringFormat": lambda: R.StringFormat(inputs=[c([1, 2])], template="v=%s"),
    "DecodeRaw": lambda: R.DecodeRaw(bytes=c([b"\x01\x02\x03\x04"]), out_type=tf.int16),
    "DecodeCSV": lambda: R.DecodeCSV(records=c(["1,2.5,a", "3,,b"]), record_defaults=[c([0]), c([9.0]), c([""])]),
    "SparseToDense": lambda: R.SparseToDense(
        sparse_indices=c([[0, 1], [2, 0]]), output_shape=c([3, 2]), sparse_values=c([5.0, 6.0]), default_value=c(-1.0)
    ),
    "SparseTensorDenseMatMul": lambda: R.SparseTensorDenseMatMul(
        a_indices=c([[0, 1], [1, 0]], tf.int64), a_values=c([2.0, 3.0]), a_shape=c([2, 2], tf.int64), b=fa(2, 3)
    ),
    "SparseTensorDenseAdd": lambda: R.SparseTensorDenseAdd(
        a_indices=c([[0, 1], [1, 0]], tf.int64), a_values=c([2.0, 3.0]), a_shape=c([2, 2], tf.int64), b=fa(2, 2)
    ),
    "SparseDenseCwiseAdd": lambda: R.SparseDenseCwiseAdd(
        sp_indices=c([[0, 1], [1, 0]], tf.int64), sp_values=c([2.0, 3.0]), sp_shape=c([2, 2], tf.int64), dense=fa(2)
    ),
    "SparseDenseCwiseMul": lambda: R.SparseDenseCwiseMul(
        sp_indices=c([[0, 1], [1, 0]], tf.int64), sp_values=c([2.0, 3.0]), sp_shape=c([2, 2], tf.int64), dense=fa(2, 2)
    ),
    "SparseDenseCwiseDiv": lambda: R.SparseDenseCwiseDiv(
        sp_indices=c([[0, 1], [1, 0]], tf.int64), sp_values=c([2.0, 3.0]), sp_shape=c([2, 2], tf.int64), dense=fa(2, 2)
    ),
    "SparseReduceSum": lambda: R.SparseReduceSum(
        input_indices=c([[0, 1], [1, 0], [1, 1]], tf.int64),
        input_values=c([2.0, 3.0, 4.0]),
        input_shape=c([2, 2], tf.int64),
        reduction_axes=c([1]),
    ),
    "SparseReduceMax": lambda: R.SparseReduceMax(
        input_indices=c([[0, 1], [1, 0], [1, 1]], tf.int64),
        input_values=c([2.0, 3.0, 4.0]),
        input_shape=c([2, 2], tf.int64),
        reduction_axes=c([0]),
    ),
    "SparseReduceSumSparse": lambda: R.SparseReduceSumSparse(
        input_indices=c([[0, 1], [1, 0], [1, 1]], tf.int64),
        input_values=c([2.0, 3.0, 4.0]),
        input_shape=c([2, 2], tf.int64),
        reduction_axes=c([1]),
    ),
    "SparseReduceMaxSparse": lambda: R.SparseReduceMaxSparse(
        input_indices=c([[0, 1], [1, 0], [1, 1]], tf.int64),
        input_values=c([2.0, 3.0, 4.0]),
        input_shape=c([2, 2], tf.int64),
        reduction_axes=c([0]),
    ),
    "SparseReorder": lambda: R.SparseReorder(
        input_indices=c([[1, 0], [0, 1]], tf.int64), input_values=c([2.0, 3.0]), input_shape=c([2, 2], tf.int64)
    ),
    "SparseReshape": lambda: R.SparseReshape(
        input_indices=c([[0, 1], [1, 0]], tf.int64), input_shape=c([2, 2], tf.int64), new_shape=c([4, -1], tf.int64)
    ),
    "SparseSoftmax": lambda: R.SparseSoftmax(
        sp_indices=c([[0, 0], [0, 1], [1, 1]], tf.int64), sp_values=c([1.0, 2.0, 3.0]), sp_shape=c([2, 2], tf.int64)
    ),
    "SparseAdd": lambda: R.SparseAdd(
        a_indices=c([[0, 1]], tf.int64),
        a_values=c([2.0]),
        a_shape=c([2, 2], tf.int64),
        b_indices=c([[0, 1], [1, 0]], tf.int64),
        b_values=c([1.0, -3.0]),
        b_shape=c([2, 2], tf.int64),
        thresh=c(0.0),
    ),
    "SparseConcat": lambda: R.SparseConcat(
        indices=[c([[0, 1]], tf.int64), c([[1, 0]], tf.int64)],
        values=[c([1.0]), c([2.0])],
        shapes=[c([2, 2], tf.int64), c([2, 3], tf.int64)],
        concat_dim=1,
    ),
    "SparseFillEmptyRows": lambda: R.SparseFillEmptyRows(
        indices=c([[0, 1], [2, 0]], tf.int64),
        values=c([1.0, 2.0]),
        dense_shape=c([3, 2], tf.int64),
        default_value=c(-1.0),
    ),
    "SparseSlice": lambda: R.SparseSlice(
        indices=c([[0, 1], [2, 0]], tf.int64),
        values=c([1.0, 2.0]),
        shape=c([3, 2], tf.int64),
        start=c([1, 0], tf.int64),
        size=c([2, 2], tf.int64),
    ),
    "SparseSplit": lambda: R.SparseSplit(
        split_dim=c(0, tf.int64),
        indices=c([[0, 1], [2, 0]], tf.int64),
        values=c([1.0, 2.0]),
        shape=c([4, 2], tf.int64),
        num_split=2,
    ),
    "SparseSparseMaximum": lambda: R.SparseSparseMaximum(
        a_indices=c([[0, 1]], tf.int64),
        a_values=c([2.0]),
        a_shape=c([2, 2], tf.int64),
        b_indices=c([[0, 1], [1, 0]], tf.int64),
        b_values=c([1.0, -3.0]),
        b_shape=c([2, 2], tf.int64),
    ),
    "SparseSparseMinimum": lambda: R.SparseSparseMinimum(
        a_indices=c([[0, 1]], tf.int64),
        a_values=c([2.0]),
        a_shape=c([2, 2], tf.int64),
        b_indices=c([[0, 1], [1, 0]], tf.int64),
        b_values=c([1.0, -3.0]),
        b_shape=c([2, 2], tf.int64),
    ),
    "SparseSegmentSum": lambda: R.SparseSegmentSum(data=fa(4, 2), indices=c([0, 2, 3]), segment_ids=c([0, 0, 1])),
    "SparseSegmentMean": lambda: R.SparseSegmentMean(data=fa(4, 2), indices=c([0, 2, 3]), segment_ids=c([0, 0, 1])),
    "SparseSegmentSqrtN": lambda: R.SparseSegmentSqrtN(data=fa(4, 2), indices=c([0, 2, 3]), segment_ids=c([0, 0, 1])),
    "SparseSegmentSumWithNumSegments": lambda: R.SparseSegmentSumWithNumSegments(
        data=fa(4, 2), indices=c([0, 2, 3]), segment_ids=c([0, 0, 2]), num_segments=c(4)
    ),
    "SparseSegmentMeanWithNumSegments": lambda: R.SparseSegmentMeanWithNumSegments(
        data=fa(4, 2), indices=c([0, 2, 3]), segment_ids=c([0, 0, 2]), num_segments=c(4)
    ),
    "SparseSegmentSqrtNWithNumSegments": lambda: R.SparseSegmentSqrtNWithNumSegments(
        data=fa(4, 2), indices=c([0, 2, 3]), segment_ids=c([0, 0, 2]), num_segments=c(4)
    ),
    "SparseSegmentMeanGrad": lambda: R.SparseSegmentMeanGrad(
        grad=fa(2, 2), indices=c([0, 2, 3]), segment_ids=c([0, 0, 1]), output_dim0=c(4)
    ),
    "SparseSegmentSqrtNGrad": lambda: R.SparseSegmentSqrtNGrad(
        grad=fa(2, 2), indices=c([0, 2, 3]), segment_ids=c([0, 0, 1]), output_dim0=c(4)
    ),
    "StatelessRandomUniformV2": lambda: R.StatelessRandomUniformV2(
        shape=c([2, 3]), key=c([7], tf.uint64), counter=c([1, 2], tf.uint64), alg=c(1)
    ),
    "StatelessRandomNormalV2": lambda: R.StatelessRandomNormalV2(
        shape=c([2, 3]), key=c([7], tf.uint64), counter=c([1, 2], tf.uint64), alg=c(1)
    ),
    "StatelessTruncatedNormalV2": lambda: R.StatelessTruncatedNormalV2(
        shape=c([2, 3]), key=c([7], tf.uint64), counter=c([1, 2], tf.uint64), alg=c(1)
    ),
    "StatelessRandomUniformIntV2": lambda: R.StatelessRandomUniformIntV2(
        shape=c([2, 3]), key=c([7], tf.uint64), counter=c([1, 2], tf.uint64), alg=c(1), minval=c(0), maxval=c(10)
    ),
    "StatelessRandomUniformFullIntV2": lambda: R.StatelessRandomUniformFullIntV2(
        shape=c([2, 3]), key=c([7], tf.uint64), counter=c([1, 2], tf.uint64), alg=c(1), dtype=tf.int32
    ),
    "StatelessRandomGetKeyCounter": lambda: R.StatelessRandomGetKeyCounter(seed=c([1, 2], tf.int64)),
    "StatelessMultinomial": lambda: R.StatelessMultinomial(
        logits=c([[0.0, 1.0, 2.0]]), num_samples=c(5), seed=c([1, 2], tf.int64)
    ),
    "EncodePng": lambda: R.EncodePng(image=c(np.arange(24, dtype=np.uint8).reshape(2, 4, 3))),
    "DecodePng": lambda: R.DecodePng(contents=R.EncodePng(image=c(np.arange(24, dtype=np.uint8).reshape(2, 4, 3)))),
    "DecodeImage": lambda: R.DecodeImage(
        contents=R.EncodePng(image=c(np.arange(24, dtype=np.uint8).reshape(2, 4, 3))), expand_animations=False
    ),
    "ExtractJpegShape": lambda: R.ExtractJpegShape(
        contents=R.EncodeJpeg(image=c(np.arange(48, dtype=np.uint8).reshape(4, 4, 3)))
    ),
    "EncodeJpeg": lambda: R.EncodeJpeg(image=c(np.arange(48, dtype=np.uint8).reshape(4, 4, 3)), quality=90),
    "DecodeJpeg": lambda: R.DecodeJpeg(
        contents=R.EncodeJpeg(image=c(np.arange(48, dtype=np.uint8).reshape(4, 4, 3)), quality=90)
    ),
    "ShardedFilename": lambda: R.ShardedFilename(basename=c("model"), shard=c(1), num_shards=c(3)),
    "ShardedFilespec": lambda: R.ShardedFilespec(basename=c("model"), num_shards=c(3)),
    "ReluGrad": lambda: R.ReluGrad(gradients=c([1.0, 2.0]), features=c([-1.0, 2.0])),
    "Relu6Grad": lambda: R.Relu6Grad(gradients=c([1.0, 2.0, 3.0]), features=c([-1.0, 2.0, 7.0])),
    "EluGrad": lambda: R.EluGrad(gradients=c([1.0, 2.0]), outputs=c([-0.5, 2.0])),
    "SeluGrad": lambda: R.SeluGrad(gradients=c([1.0, 2.0]), outputs=c([-0.5, 2.0])),
    "SoftplusGrad": lambda: R.SoftplusGrad(gradients=c([1.0, 2.0]), features=c([-0.5, 2.0])),
    "SoftsignGrad": lambda: R.SoftsignGrad(gradients=c([1.0, 2.0]), features=c([-0.5, 2.0])),
    "FusedBatchNormGrad": lambda: R.FusedBatchNormGrad(
        y_backprop=image(2, 3, 3, 2),
        x=image(2, 3, 3, 2),
        scale=c([1.0, 2.0]),
        reserve_space_1=c([0.5, 0.4]),
        reserve_space_2=c([1.0, 2.0]),
        is_training=False,
    )[:3],
    "MatrixDiagPartV3": None,
    "Multinomial": None,
    "Print": lambda: R.Print(input=fa(2), data=[fa(2)], message="m"),
    "Assert": None,
    "BiasAddV1": None,
    "Round": lambda: R.Round(x=c([0.5, 1.5, -2.5, 2.3])),
    "Rint": lambda: R.Rint(x=c([0.5, 1.5, -2.5, 2.3])),
    "FloorDiv": lambda: R.FloorDiv(x=c([7, -7, 5]), y=c([2, 2, -3])),
    "FloorMod": lambda: R.FloorMod(x=c([7, -7, 5]), y=c([2, 2, -3])),
    "TruncateDiv": lambda: R.TruncateDiv(x=c([7, -7, 5]), y=c([2, 2, -3])),
    "TruncateMod": lambda: R.TruncateMod(x=c([7, -7, 5]), y=c([2, 2, -3])),
    "Div": lambda: R.Div(x=c([7, -7, 5]), y=c([2, 2, -3])),
    "Sign": lambda: R.Sign(x=c([-2.0, 0.0, 3.0])),
    "Neg": lambda: R.Neg(x=c([-2.0, 0.0, 3.0])),
    "IsInf": lambda: R.IsInf(x=c([np.inf, 0.0, np.nan])),
    "IsNan": lambda: R.IsNan(x=c([np.inf, 0.0, np.nan])),
    "IsFinite": lambda: R.IsFinite(x=c([np.inf, 0.0, np.nan])),
    "Atan2": lambda: R.Atan2(y=c([1.0, -1.0]), x=c([-1.0, 2.0])),
    "Acosh": lambda: R.Acosh(x=c([1.5, 3.0])),
}


def var(value, dtype=tf.float32):
    """A TF1 ref variable (VariableV2) and the Assign that initialises it."""
    value = np.asarray(value, dtype.as_numpy_dtype)
    v = R.VariableV2(shape=value.shape, dtype=dtype)
    return v, R.Assign(ref=v, value=c(value))


def with_vars(values, build):
    """A case whose op reads variables: they are initialised (setup) before the outputs run."""
    made = [var(v) for v in values]
    return {"out": build(*[v for v, _ in made]), "setup": [a for _, a in made]}


def queue(kind, **attrs):
    q = getattr(R, kind)(component_types=[tf.float32], **attrs)
    return q, R.QueueEnqueueManyV2(handle=q, components=[c([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])])


def queue_case(kind, read, **attrs):
    q, enqueue = queue(kind, **attrs)
    return {"out": read(q), "setup": [enqueue]}


def priority_queue(read):
    q = R.PriorityQueueV2(component_types=[tf.float32], shapes=[[]])
    enqueue = R.QueueEnqueueManyV2(handle=q, components=[c([3, 1, 2], tf.int64), c([30.0, 10.0, 20.0])])
    return {"out": read(q), "setup": [enqueue]}


def tensor_array(read):
    ta = R.TensorArrayV3(size=c(3), dtype=tf.float32, element_shape=[2])
    flow = R.TensorArrayScatterV3(handle=ta.handle, indices=c([0, 1, 2]), value=fa(3, 2), flow_in=ta.flow)
    return read(ta.handle, flow)


def close_after_read(handle, flow):
    read = R.TensorArrayReadV3(handle=handle, index=c(0), flow_in=flow, dtype=tf.float32)
    with tf.control_dependencies([read]):  # closing first would make the read fail
        return [read, R.TensorArrayCloseV3(handle=handle)]


def while_loop():
    i = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2.0), [c(0), c(1.5)])
    return list(i)


def cond():
    return tf.cond(c(True), lambda: c(1.0) + 1.0, lambda: c(5.0))


def stack():
    h = R.StackV2(max_size=c(-1), elem_type=tf.float32)
    push = R.StackPushV2(handle=h, elem=c([1.0, 2.0]))
    with tf.control_dependencies([push]):
        return R.StackPopV2(handle=h, elem_type=tf.float32)


def stack_closed():
    h = R.StackV2(max_size=c(-1), elem_type=tf.float32)
    push = R.StackPushV2(handle=h, elem=c([1.0, 2.0]))
    with tf.control_dependencies([push]):
        pop = R.StackPopV2(handle=h, elem_type=tf.float32)
    with tf.control_dependencies([pop]):
        return [pop, R.StackCloseV2(handle=h)]


def with_target(op):
    """An op without outputs, run as a target next to a tensor that depends on it."""
    with tf.control_dependencies([op]):
        return [tf.identity(c([1.0, 2.0])), op]


def reader_case(read, read_first=False, reset=False):
    """An IdentityReader over a queue of two work strings (its records are the work itself)."""
    reader = R.IdentityReaderV2()
    q = R.FIFOQueueV2(component_types=[tf.string])
    setup = [R.QueueEnqueueManyV2(handle=q, components=[c(["w1", "w2"])])]
    if read_first:
        setup.append(R.ReaderReadV2(reader_handle=reader, queue_handle=q).key.op)
    if reset:
        setup.append(R.ReaderResetV2(reader_handle=reader))
    return {"out": read(reader, q), "setup": setup}


def mutex_case():
    lock = R.MutexLock(mutex=R.MutexV2())
    with tf.control_dependencies([lock]):
        out = tf.identity(c([1.0, 2.0]))
    with tf.control_dependencies([out]):
        return [out, R.ConsumeMutexLock(mutex_lock=lock)]


SLOTS = ([1.0, 2.0], [0.5, 0.5])
CENTERED = ([1.0, 2.0], [0.0, 0.1], [0.5, 0.5], [0.1, 0.2])  # var, mg, ms, mom: ms > mg**2 keeps sqrt real
STATEFUL_CASES = {
    "VariableV2": lambda: with_vars([[1.0, 2.0]], lambda v: v),
    "Assign": lambda: R.Assign(ref=R.VariableV2(shape=[2], dtype=tf.float32), value=c([3.0, 4.0])),
    "AssignAdd": lambda: with_vars([[1.0, 2.0]], lambda v: R.AssignAdd(ref=v, value=c([3.0, 4.0]))),
    "AssignSub": lambda: with_vars([[1.0, 2.0]], lambda v: R.AssignSub(ref=v, value=c([3.0, 4.0]))),
    "IsVariableInitialized": lambda: R.IsVariableInitialized(ref=R.VariableV2(shape=[2], dtype=tf.float32)),
    "CountUpTo": lambda: (lambda va: {"out": R.CountUpTo(ref=va[0], limit=5), "setup": [va[1]]})(var(2, tf.int32)),
    "ScatterAdd": lambda: with_vars(
        [[1.0, 2.0, 3.0]], lambda v: R.ScatterAdd(ref=v, indices=c([0, 2]), updates=c([5.0, 6.0]))
    ),
    "ScatterSub": lambda: with_vars(
        [[1.0, 2.0, 3.0]], lambda v: R.ScatterSub(ref=v, indices=c([0, 2]), updates=c([5.0, 6.0]))
    ),
    "ScatterMul": lambda: with_vars(
        [[1.0, 2.0, 3.0]], lambda v: R.ScatterMul(ref=v, indices=c([0, 2]), updates=c([5.0, 6.0]))
    ),
    "ScatterDiv": lambda: with_vars(
        [[1.0, 2.0, 3.0]], lambda v: R.ScatterDiv(ref=v, indices=c([0, 2]), updates=c([5.0, 6.0]))
    ),
    "ScatterUpdate": lambda: with_vars(
        [[1.0, 2.0, 3.0]], lambda v: R.ScatterUpdate(ref=v, indices=c([0, 2]), updates=c([5.0, 6.0]))
    ),
    "ApplyGradientDescent": lambda: with_vars(
        [[1.0, 2.0]], lambda v: R.ApplyGradientDescent(var=v, alpha=c(0.1), delta=c([1.0, -1.0]))
    ),
    "ApplyMomentum": lambda: with_vars(
        SLOTS,
        lambda v, a: R.ApplyMomentum(
            var=v, accum=a, lr=c(0.1), grad=c([1.0, -1.0]), momentum=c(0.9), use_nesterov=True
        ),
    ),
    "ApplyAdagrad": lambda: with_vars(
        SLOTS, lambda v, a: R.ApplyAdagrad(var=v, accum=a, lr=c(0.1), grad=c([1.0, -1.0]))
    ),
    "ApplyAdam": lambda: with_vars(
        SLOTS + ([0.1, 0.2],),
        lambda v, m, s: R.ApplyAdam(
            var=v,
            m=m,
            v=s,
            beta1_power=c(0.9),
            beta2_power=c(0.999),
            lr=c(0.1),
            beta1=c(0.9),
            beta2=c(0.999),
            epsilon=c(1e-7),
            grad=c([1.0, -1.0]),
        ),
    ),
    "ApplyRMSProp": lambda: with_vars(
        SLOTS + ([0.1, 0.2],),
        lambda v, ms, mom: R.ApplyRMSProp(
            var=v, ms=ms, mom=mom, lr=c(0.1), rho=c(0.9), momentum=c(0.5), epsilon=c(1e-7), grad=c([1.0, -1.0])
        ),
    ),
    "ApplyCenteredRMSProp": lambda: with_vars(
        CENTERED,
        lambda v, mg, ms, mom: R.ApplyCenteredRMSProp(
            var=v, mg=mg, ms=ms, mom=mom, lr=c(0.1), rho=c(0.9), momentum=c(0.5), epsilon=c(1e-7), grad=c([1.0, -1.0])
        ),
    ),
    "ApplyAdadelta": lambda: with_vars(
        SLOTS + ([0.1, 0.2],),
        lambda v, a, u: R.ApplyAdadelta(
            var=v, accum=a, accum_update=u, lr=c(1.0), rho=c(0.95), epsilon=c(1e-7), grad=c([1.0, -1.0])
        ),
    ),
    "ApplyFtrl": lambda: with_vars(
        SLOTS + ([0.1, 0.2],),
        lambda v, a, lin: R.ApplyFtrl(
            var=v, accum=a, linear=lin, grad=c([1.0, -1.0]), lr=c(0.1), l1=c(0.01), l2=c(0.02), lr_power=c(-0.5)
        ),
    ),
    "ApplyFtrlV2": lambda: with_vars(
        SLOTS + ([0.1, 0.2],),
        lambda v, a, lin: R.ApplyFtrlV2(
            var=v,
            accum=a,
            linear=lin,
            grad=c([1.0, -1.0]),
            lr=c(0.1),
            l1=c(0.01),
            l2=c(0.02),
            l2_shrinkage=c(0.03),
            lr_power=c(-0.5),
        ),
    ),
    "SparseApplyMomentum": lambda: with_vars(
        SLOTS,
        lambda v, a: R.SparseApplyMomentum(var=v, accum=a, lr=c(0.1), grad=c([1.0]), indices=c([1]), momentum=c(0.9)),
    ),
    "SparseApplyAdagrad": lambda: with_vars(
        SLOTS, lambda v, a: R.SparseApplyAdagrad(var=v, accum=a, lr=c(0.1), grad=c([1.0]), indices=c([1]))
    ),
    "SparseApplyRMSProp": lambda: with_vars(
        SLOTS + ([0.1, 0.2],),
        lambda v, ms, mom: R.SparseApplyRMSProp(
            var=v,
            ms=ms,
            mom=mom,
            lr=c(0.1),
            rho=c(0.9),
            momentum=c(0.5),
            epsilon=c(1e-7),
            grad=c([1.0]),
            indices=c([0]),
        ),
    ),
    "SparseApplyCenteredRMSProp": lambda: with_vars(
        CENTERED,
        lambda v, mg, ms, mom: R.SparseApplyCenteredRMSProp(
            var=v,
            mg=mg,
            ms=ms,
            mom=mom,
            lr=c(0.1),
            rho=c(0.9),
            momentum=c(0.5),
            epsilon=c(1e-7),
            grad=c([1.0]),
            indices=c([1]),
        ),
    ),
    "SparseApplyAdadelta": lambda: with_vars(
        SLOTS + ([0.1, 0.2],),
        lambda v, a, u: R.SparseApplyAdadelta(
            var=v, accum=a, accum_update=u, lr=c(1.0), rho=c(0.95), epsilon=c(1e-7), grad=c([1.0]), indices=c([0])
        ),
    ),
    "SparseApplyFtrl": lambda: with_vars(
        SLOTS + ([0.1, 0.2],),
        lambda v, a, lin: R.SparseApplyFtrl(
            var=v,
            accum=a,
            linear=lin,
            grad=c([1.0]),
            indices=c([1]),
            lr=c(0.1),
            l1=c(0.01),
            l2=c(0.02),
            lr_power=c(-0.5),
        ),
    ),
    "SparseApplyFtrlV2": lambda: with_vars(
        SLOTS + ([0.1, 0.2],),
        lambda v, a, lin: R.SparseApplyFtrlV2(
            var=v,
            accum=a,
            linear=lin,
            grad=c([1.0]),
            indices=c([1]),
            lr=c(0.1),
            l1=c(0.01),
            l2=c(0.02),
            l2_shrinkage=c(0.03),
            lr_power=c(-0.5),
        ),
    ),
    "FIFOQueueV2": lambda: queue_case(
        "FIFOQueueV2", lambda q: R.QueueDequeueV2(handle=q, component_types=[tf.float32]), shapes=[[2]]
    ),
    "QueueEnqueueManyV2": lambda: queue_case("FIFOQueueV2", lambda q: R.QueueSizeV2(handle=q), shapes=[[2]]),
    "QueueSizeV2": lambda: queue_case("FIFOQueueV2", lambda q: R.QueueSizeV2(handle=q), shapes=[[2]]),
    "QueueDequeueV2": lambda: queue_case(
        "FIFOQueueV2", lambda q: R.QueueDequeueV2(handle=q, component_types=[tf.float32]), shapes=[[2]]
    ),
    "QueueDequeueManyV2": lambda: queue_case(
        "FIFOQueueV2", lambda q: R.QueueDequeueManyV2(handle=q, n=c(2), component_types=[tf.float32]), shapes=[[2]]
    ),
    "QueueDequeueUpToV2": lambda: queue_case(
        "FIFOQueueV2", lambda q: R.QueueDequeueUpToV2(handle=q, n=c(2), component_types=[tf.float32]), shapes=[[2]]
    ),
    "QueueEnqueueV2": lambda: (
        lambda q: {"out": R.QueueSizeV2(handle=q), "setup": [R.QueueEnqueueV2(handle=q, components=[c(1.0)])]}
    )(R.FIFOQueueV2(component_types=[tf.float32])),
    "QueueCloseV2": lambda: (lambda q: {"out": R.QueueIsClosedV2(handle=q), "setup": [R.QueueCloseV2(handle=q)]})(
        R.FIFOQueueV2(component_types=[tf.float32])
    ),
    "QueueIsClosedV2": lambda: R.QueueIsClosedV2(handle=R.FIFOQueueV2(component_types=[tf.float32])),
    "PaddingFIFOQueueV2": lambda: (
        lambda q: {
            "out": R.QueueDequeueManyV2(handle=q, n=c(2), component_types=[tf.float32]),
            "setup": [
                R.QueueEnqueueV2(handle=q, components=[c([1.0])]),
                R.QueueEnqueueV2(handle=q, components=[c([2.0, 3.0])]),
            ],
        }
    )(R.PaddingFIFOQueueV2(component_types=[tf.float32], shapes=[[None]])),
    "RandomShuffleQueueV2": lambda: (
        lambda q: {
            "out": R.QueueDequeueV2(handle=q, component_types=[tf.float32]),
            "setup": [R.QueueEnqueueV2(handle=q, components=[c([1.0, 2.0])])],
        }
    )(R.RandomShuffleQueueV2(component_types=[tf.float32], shapes=[[2]], seed=3, seed2=4)),
    "PriorityQueueV2": lambda: priority_queue(
        lambda q: R.QueueDequeueManyV2(handle=q, n=c(3), component_types=[tf.int64, tf.float32])
    ),
    "TensorArrayV3": lambda: tensor_array(lambda h, flow: R.TensorArraySizeV3(handle=h, flow_in=flow)),
    "TensorArrayScatterV3": lambda: tensor_array(
        lambda h, flow: R.TensorArrayGatherV3(handle=h, indices=c([2, 0]), flow_in=flow, dtype=tf.float32)
    ),
    "TensorArrayGatherV3": lambda: tensor_array(
        lambda h, flow: R.TensorArrayGatherV3(handle=h, indices=c([2, 0]), flow_in=flow, dtype=tf.float32)
    ),
    "TensorArrayReadV3": lambda: tensor_array(
        lambda h, flow: R.TensorArrayReadV3(handle=h, index=c(1), flow_in=flow, dtype=tf.float32)
    ),
    "TensorArrayWriteV3": lambda: (
        lambda ta: R.TensorArrayReadV3(
            handle=ta.handle,
            index=c(1),
            flow_in=R.TensorArrayWriteV3(handle=ta.handle, index=c(1), value=c([7.0, 8.0]), flow_in=ta.flow),
            dtype=tf.float32,
        )
    )(R.TensorArrayV3(size=c(2), dtype=tf.float32)),
    "TensorArraySizeV3": lambda: tensor_array(lambda h, flow: R.TensorArraySizeV3(handle=h, flow_in=flow)),
    "TensorArrayConcatV3": lambda: tensor_array(
        lambda h, flow: R.TensorArrayConcatV3(handle=h, flow_in=flow, dtype=tf.float32)
    ),
    "TensorArraySplitV3": lambda: (
        lambda ta: R.TensorArrayConcatV3(
            handle=ta.handle,
            flow_in=R.TensorArraySplitV3(handle=ta.handle, value=fa(5), lengths=c([2, 3], tf.int64), flow_in=ta.flow),
            dtype=tf.float32,
        )
    )(R.TensorArrayV3(size=c(2), dtype=tf.float32)),
    "TensorArrayCloseV3": lambda: tensor_array(close_after_read),
    "StackV2": stack,
    "StackPushV2": stack,
    "StackPopV2": stack,
    "Enter": while_loop,
    "Exit": while_loop,
    "NextIteration": while_loop,
    "LoopCond": while_loop,
    "Merge": cond,
    "Switch": cond,
    "ScalarSummary": lambda: R.ScalarSummary(tags=c(["a", "b"]), values=c([1.5, 2.5])),
    "HistogramSummary": lambda: R.HistogramSummary(tag=c("h"), values=fa(4, 3)),
    "TensorSummaryV2": lambda: R.TensorSummaryV2(tag=c("t"), tensor=fa(2), serialized_summary_metadata=c("")),
    "MergeSummary": lambda: R.MergeSummary(
        inputs=[R.ScalarSummary(tags=c("a"), values=c(1.0)), R.ScalarSummary(tags=c("b"), values=c(2.0))]
    ),
    "RandomUniform": lambda: R.RandomUniform(shape=c([2, 3]), dtype=tf.float32, seed=7, seed2=11),
    "RandomStandardNormal": lambda: R.RandomStandardNormal(shape=c([2, 3]), dtype=tf.float32, seed=7, seed2=11),
    "TruncatedNormal": lambda: R.TruncatedNormal(shape=c([2, 3]), dtype=tf.float32, seed=7, seed2=11),
    "RandomUniformInt": lambda: R.RandomUniformInt(shape=c([2, 3]), minval=c(0), maxval=c(100), seed=7, seed2=11),
    "RandomShuffle": lambda: R.RandomShuffle(value=c([1, 2, 3, 4, 5]), seed=7, seed2=11),
    "Multinomial": lambda: R.Multinomial(logits=c([[0.0, 1.0, 2.0]]), num_samples=c(6), seed=7, seed2=11),
    "DecodeAndCropJpeg": lambda: R.DecodeAndCropJpeg(
        contents=R.EncodeJpeg(image=c(np.arange(48, dtype=np.uint8).reshape(4, 4, 3)), quality=90),
        crop_window=c([1, 0, 2, 3]),
    ),
    "EncodeJpegVariableQuality": lambda: R.EncodeJpegVariableQuality(
        images=c(np.arange(48, dtype=np.uint8).reshape(4, 4, 3)), quality=c(75)
    ),
    "StackCloseV2": lambda: stack_closed(),
    "TensorArrayGradV3": lambda: tensor_array(
        lambda h, flow: R.TensorArrayGradV3(handle=h, flow_in=flow, source="g").flow_out
    ),
    "ImageSummary": lambda: R.ImageSummary(
        tag=c("img"), tensor=c(np.arange(48, dtype=np.uint8).reshape(1, 4, 4, 3)), max_images=1
    ),
    "AudioSummaryV2": lambda: R.AudioSummaryV2(tag=c("snd"), tensor=c([[0.0, 0.5, -0.5, 0.25]]), sample_rate=c(8000.0)),
    "MutexLock": mutex_case,
    "IdentityReaderV2": lambda: reader_case(lambda r, q: list(R.ReaderReadV2(reader_handle=r, queue_handle=q))),
    "ReaderReadV2": lambda: reader_case(lambda r, q: list(R.ReaderReadV2(reader_handle=r, queue_handle=q))),
    "ReaderReadUpToV2": lambda: reader_case(
        lambda r, q: list(R.ReaderReadUpToV2(reader_handle=r, queue_handle=q, num_records=c(2, tf.int64)))
    ),
    "ReaderNumRecordsProducedV2": lambda: reader_case(
        lambda r, q: R.ReaderNumRecordsProducedV2(reader_handle=r), read_first=True
    ),
    "ReaderNumWorkUnitsCompletedV2": lambda: reader_case(
        lambda r, q: R.ReaderNumWorkUnitsCompletedV2(reader_handle=r), read_first=True
    ),
    "ReaderResetV2": lambda: reader_case(
        lambda r, q: R.ReaderNumRecordsProducedV2(reader_handle=r), read_first=True, reset=True
    ),
    "NoOp": lambda: with_target(R.NoOp()),
    "ControlTrigger": lambda: with_target(R.ControlTrigger()),
    "Assert": lambda: with_target(R.Assert(condition=c(True), data=[c([1.0])])),
    "PrintV2": lambda: with_target(R.PrintV2(input=c("printed"), output_stream="stdout")),
    "SampleDistortedBoundingBoxV2": lambda: R.SampleDistortedBoundingBoxV2(
        image_size=c([20, 30, 3]),
        bounding_boxes=c([[[0.1, 0.1, 0.9, 0.8]]]),
        min_object_covered=c(0.3),
        seed=5,
        seed2=6,
    ),
    "SampleDistortedBoundingBox": lambda: R.SampleDistortedBoundingBox(
        image_size=c([20, 30, 3]), bounding_boxes=c([[[0.1, 0.1, 0.9, 0.8]]]), seed=5, seed2=6
    ),
    "UniformCandidateSampler": lambda: R.UniformCandidateSampler(
        true_classes=c([[1], [3]], tf.int64), num_true=1, num_sampled=4, unique=True, range_max=10, seed=5, seed2=6
    ),
    "LogUniformCandidateSampler": lambda: R.LogUniformCandidateSampler(
        true_classes=c([[1], [3]], tf.int64), num_true=1, num_sampled=4, unique=True, range_max=10, seed=5, seed2=6
    ),
    "AllCandidateSampler": lambda: R.AllCandidateSampler(
        true_classes=c([[1], [3]], tf.int64), num_true=1, num_sampled=4, unique=True, seed=5, seed2=6
    ),
    "FixedUnigramCandidateSampler": lambda: R.FixedUnigramCandidateSampler(
        true_classes=c([[1], [3]], tf.int64),
        num_true=1,
        num_sampled=3,
        unique=True,
        range_max=5,
        unigrams=[1.0, 2.0, 3.0, 4.0, 5.0],
        seed=5,
        seed2=6,
    ),
    "MutexV2": mutex_case,
    "ConsumeMutexLock": mutex_case,
    "DecodeBmp": lambda: R.DecodeBmp(contents=c(open(os.path.join(HERE, "image_sample.bmp"), "rb").read())),
    "DecodeGif": lambda: R.DecodeGif(contents=c(open(os.path.join(HERE, "image_sample.gif"), "rb").read())),
    "MaxPool3DGradGrad": lambda: R.MaxPool3DGradGrad(
        orig_input=fa(1, 4, 4, 4, 2),
        orig_output=R.MaxPool3D(
            input=fa(1, 4, 4, 4, 2), ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID"
        ),
        grad=fa(1, 4, 4, 4, 2),
        ksize=[1, 2, 2, 2, 1],
        strides=[1, 2, 2, 2, 1],
        padding="VALID",
    ),
    "SparseAddGrad": lambda: R.SparseAddGrad(
        backprop_val_grad=c([1.0, 2.0, 3.0]),
        a_indices=c([[0, 1], [1, 1]], tf.int64),
        b_indices=c([[0, 1], [1, 0]], tf.int64),
        sum_indices=c([[0, 1], [1, 0], [1, 1]], tf.int64),
    ),
    "SparseFillEmptyRowsGrad": lambda: R.SparseFillEmptyRowsGrad(
        reverse_index_map=c([0, 2], tf.int64), grad_values=c([1.0, 2.0, 3.0])
    ),
    "SparseSliceGrad": lambda: R.SparseSliceGrad(
        backprop_val_grad=c([5.0]),
        input_indices=c([[0, 1], [2, 0]], tf.int64),
        input_start=c([1, 0], tf.int64),
        output_indices=c([[1, 0]], tf.int64),
    ),
    "FusedBatchNormGradV3": lambda: R.FusedBatchNormGradV3(
        y_backprop=image(2, 3, 3, 2),
        x=image(2, 3, 3, 2),
        scale=c([1.0, 2.0]),
        reserve_space_1=c([0.5, 0.4]),
        reserve_space_2=c([1.0, 2.0]),
        reserve_space_3=c([]),
        is_training=False,
        name="bn_grad",
    )[:3],
    "CTCLoss": lambda: R.CTCLoss(
        inputs=fa(4, 2, 3),
        labels_indices=c([[0, 0], [1, 0], [1, 1]], tf.int64),
        labels_values=c([1, 0, 1]),
        sequence_length=c([4, 3]),
    ),
}
CASES.update(STATEFUL_CASES)

# Ops the fixture does not build, and why (the rest of the list gets a reason computed below).
NOT_BUILT = {
    "_Send": "runtime-only rendezvous op (inserted by graph partitioning)",
    "_Recv": "runtime-only rendezvous op (inserted by graph partitioning)",
    "_Bfloat16Pack": "tensorweave-internal op (no TF op of that name)",
    "_Bfloat16Unpack": "tensorweave-internal op (no TF op of that name)",
    **{
        op: "reads or writes files: its paths would be machine-specific"
        for op in (
            "ReadFile",
            "WriteFile",
            "MatchingFiles",
            "Save",
            "SaveSlices",
            "SaveV2",
            "Restore",
            "RestoreSlice",
            "RestoreV2",
            "MergeV2Checkpoints",
            "FixedLengthRecordReaderV2",
            "TFRecordReaderV2",
            "TextLineReaderV2",
            "WholeFileReaderV2",
        )
    },
    "ReaderSerializeStateV2": "its bytes are each reader's private state format",
    "ReaderRestoreStateV2": "restores each reader's private state format",
    **{
        op: "ref-typed control-flow primitive: TF 2.21's while_loop and cond never emit it"
        for op in ("RefEnter", "RefMerge", "RefSwitch")
    },
    "ComplexAbs": "needs complex inputs, which tensorweave does not support",
    "Placeholder": "needs a feed; covered by the model graphs in test_graph_interchange.py",
    "PyFunc": "calls back into the writing process's Python",
    "PyFuncStateless": "calls back into the writing process's Python",
}
STATEFUL_WORDS = (
    "Queue",
    "Reader",
    "Stack",
    "TensorArray",
    "Mutex",
    "Variable",
    "Apply",
    "Scatter",
    "Assign",
    "CountUpTo",
    "Save",
    "Restore",
    "MergeV2Checkpoints",
    "IsVariableInitialized",
    "Summary",
    "File",
    "Random",
    "CandidateSampler",
    "SampleDistortedBoundingBox",
)
CONTROL_FLOW = ("Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond", "RefEnter", "RefMerge", "RefSwitch")
GENERIC_DTYPES = (tf.float32, tf.int32, tf.bool, tf.string)


def generic(op_name):
    """Builds op_name from constants when its inputs all share one type attribute."""
    op_def = op_def_registry.get(op_name)
    if op_def is None or not op_def.input_arg or len(op_def.output_arg) == 0:
        return None
    type_attrs = {a.type_attr for a in op_def.input_arg}
    if any(a.number_attr or a.type_list_attr for a in op_def.input_arg):
        return None
    if type_attrs == {""}:  # fixed input types, e.g. LogicalAnd's bools
        fixed = {a.type for a in op_def.input_arg}
        if len(fixed) != 1:
            return None
        attr_name, allowed = None, {tf.as_dtype(fixed.pop())}
    elif len(type_attrs) == 1 and "" not in type_attrs:
        (attr_name,) = type_attrs
        attr = next(a for a in op_def.attr if a.name == attr_name)
        allowed = {tf.as_dtype(t) for t in attr.allowed_values.list.type} if attr.HasField("allowed_values") else None
    else:
        return None
    others = [a for a in op_def.attr if a.name != attr_name and not a.HasField("default_value")]
    if others:
        return None
    for dtype in GENERIC_DTYPES:
        if allowed is None or dtype in allowed:
            break
    else:
        return None
    return lambda: getattr(R, op_name)(**_generic_inputs(op_def, dtype))


def _generic_inputs(op_def, dtype):
    values = rng()
    kwargs = {}
    for arg in op_def.input_arg:
        if dtype == tf.float32:
            v = values.uniform(0.1, 0.9, size=(2, 3)).astype(F32)
        elif dtype == tf.int32:
            v = values.randint(1, 6, size=(2, 3)).astype(np.int32)
        elif dtype == tf.bool:
            v = values.randint(0, 2, size=(2, 3)).astype(bool)
        else:
            v = np.array([[b"ab", b"c", b""], [b"x", b"yz", b"q"]])
        kwargs[_py_name(arg.name)] = tf.constant(v, dtype)
    return kwargs


def _py_name(name):
    return name + "_" if name in ("lambda", "min", "max", "len", "pos") else name


def outputs_of(result):
    if isinstance(result, dict):
        return outputs_of(result["out"])
    if isinstance(result, tf.Operation):
        return list(result.outputs)
    if isinstance(result, tf.Tensor):
        return [result]
    flat = []
    for item in result:
        flat.extend(item if isinstance(item, (list, tuple)) else [item])
    return flat


def record(op_name, build, arrays):
    with tf.Graph().as_default() as graph:
        result = build()
        outputs = outputs_of(result)
        if not outputs or any(t.op.type != op_name for t in outputs if op_name != "Const"):
            if not any(n.type == op_name for n in graph.get_operations()):
                raise ValueError(f"graph has no {op_name} node")
        setup = result.get("setup", []) if isinstance(result, dict) else []
        targets = [t for t in outputs if isinstance(t, tf.Operation)]
        outputs = [t for t in outputs if isinstance(t, tf.Tensor) and t.dtype != tf.resource]
        with tf.Session(graph=graph) as sess:
            for op in setup:
                sess.run(op)
            values = sess.run(outputs + targets)[: len(outputs)]
        graph_def = graph.as_graph_def()
    arrays[f"{op_name}/graph"] = np.frombuffer(graph_def.SerializeToString(), np.uint8)
    for i, v in enumerate(values):
        v = np.asarray(v)
        if v.dtype == object:
            v = v.astype(bytes)
        arrays[f"{op_name}/{i}"] = v
    return {
        "outputs": [t.name for t in outputs],
        "setup": [op.name for op in setup],
        "targets": [op.name for op in targets],
    }


def main():
    with open(os.path.join(HERE, "tw_registered_ops.json")) as f:
        ops = json.load(f)
    arrays, cases, skipped = {}, {}, {}
    for op_name in ops:
        build = CASES.get(op_name)
        if op_name in NOT_BUILT:
            skipped[op_name] = NOT_BUILT[op_name]
            continue
        if build is None:
            if op_name in CONTROL_FLOW:
                skipped[op_name] = "control-flow primitive (covered by the LSTM while-loop graph)"
                continue
            if any(w in op_name for w in STATEFUL_WORDS):
                skipped[op_name] = "stateful op (resources, variables, queues, files or random state)"
                continue
            build = generic(op_name)
            if build is None:
                skipped[op_name] = (
                    "no case written for its inputs" if op_def_registry.get(op_name) else "not an op in TF 2.21"
                )
                continue
        try:
            cases[op_name] = record(op_name, build, arrays)
        except Exception as e:  # record why TF could not build or run it
            skipped[op_name] = f"TF could not build/run it: {type(e).__name__}: {str(e).splitlines()[0][:150]}"
    arrays["meta"] = np.frombuffer(json.dumps({"cases": cases, "skipped": skipped}, sort_keys=True).encode(), np.uint8)
    path = os.path.join(HERE, "tf_op_graphs.npz")
    np.savez_compressed(path, **arrays)
    print(len(cases), "ops recorded,", len(skipped), "skipped;", os.path.getsize(path), "bytes")
    for name, why in sorted(skipped.items()):
        print("  skip", name, "-", why)


if __name__ == "__main__":
    main()
