"""tensorweave: `import tensorweave as tf` runs TensorFlow 1.x graph-mode programs.

This module only re-exports; the machinery lives in framework/, ops/, runtime/, training/.
"""
from tensorweave.framework.dtypes import (  # noqa: F401
    DType, as_dtype, bool, complex64, complex128, double, float16,
    float32, float64, half, int8, int16, int32, int64, string, uint8, uint16, uint32, uint64)
from tensorweave.framework.tensor_shape import Dimension, TensorShape, dimension_value  # noqa: F401
from tensorweave.framework.device_spec import DeviceSpec  # noqa: F401
from tensorweave.framework.graph import (  # noqa: F401
    Graph, GraphKeys, Operation, Tensor, add_to_collection, add_to_collections, colocate_with,
    container, control_dependencies, device, get_collection, get_collection_ref, get_default_graph,
    name_scope, reset_default_graph)
from tensorweave.framework.random_seed import get_seed, set_random_seed  # noqa: F401
from tensorweave.framework.tensor_conversion import (  # noqa: F401
    convert_to_tensor, convert_to_tensor_or_indexed_slices, is_tensor, register_tensor_conversion_function)
from tensorweave.framework.default_session import get_default_session  # noqa: F401
from tensorweave import errors  # noqa: F401
from tensorweave.framework.errors import OpError  # noqa: F401
from tensorweave.framework.op_def_library import apply_op as _apply_op  # noqa: F401

from tensorweave.ops.array import (  # noqa: F401
    boolean_mask, broadcast_to, concat, constant, dynamic_partition, dynamic_stitch, expand_dims, fill, gather,
    gather_nd, identity, invert_permutation, lin_space, linspace, meshgrid, newaxis, one_hot, ones, ones_like,
    pad, placeholder, placeholder_with_default, range, rank, reshape, reverse, reverse_sequence, reverse_v2,
    scatter_nd, sequence_mask, shape, shape_n, size, slice, split, squeeze, stack, stop_gradient,
    strided_slice, tile, transpose, unique, unstack, zeros, zeros_like)
from tensorweave.ops.math import (  # noqa: F401
    abs, acos, acosh, add, add_n, arg_max, arg_min, argmax, argmin, argsort, asin, asinh, atan, atan2, atanh,
    cast, ceil, clip_by_average_norm, clip_by_global_norm, clip_by_norm, clip_by_value, cos, cosh,
    count_nonzero, cumprod, cumsum, div, div_no_nan, divide, equal, exp, expm1, floor, floor_div, floordiv,
    floormod, global_norm, greater, greater_equal, is_finite, is_inf, is_nan, less, less_equal, log, log1p,
    logical_and, logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply, negative, not_equal,
    pow, realdiv, reciprocal, reduce_all, reduce_any, reduce_logsumexp, reduce_max, reduce_mean, reduce_min,
    reduce_prod, reduce_sum, rint, round, rsqrt, saturate_cast, scalar_mul, segment_max, segment_mean,
    segment_min, segment_prod, segment_sum, sigmoid, sign, sin, sinh, sort, sqrt, square, squared_difference,
    subtract, tan, tanh, to_double, to_float, to_int32, to_int64, truediv, truncatediv, truncatemod,
    unique_with_counts, unsorted_segment_max, unsorted_segment_min, unsorted_segment_prod,
    unsorted_segment_sum, where, where_v2)
from tensorweave.ops.linalg import (  # noqa: F401
    cholesky, diag, diag_part, einsum, eye, matmul, matrix_determinant, matrix_diag, matrix_diag_part,
    matrix_inverse, matrix_solve, matrix_transpose, norm, tensordot, trace)
from tensorweave.ops.random import (  # noqa: F401
    multinomial, random_normal, random_shuffle, random_uniform, truncated_normal)
from tensorweave.ops.control_flow import group, no_op, tuple  # noqa: F401
from tensorweave.ops.control_flow.cond import case, cond  # noqa: F401
from tensorweave.ops.control_flow.while_loop import while_loop  # noqa: F401
from tensorweave.ops.control_flow.tensor_array import TensorArray  # noqa: F401
from tensorweave.ops.control_flow.functional_ops import foldl, foldr, map_fn, scan  # noqa: F401
from tensorweave.ops.debugging import (  # noqa: F401
    Assert, assert_equal, assert_greater, assert_greater_equal, assert_less, assert_less_equal,
    assert_negative, assert_non_negative, assert_non_positive, assert_none_equal, assert_positive, assert_rank,
    assert_type, check_numerics, Print, print, verify_tensor_all_finite)
from tensorweave.ops.state import (  # noqa: F401
    all_variables, assert_variables_initialized, assign, assign_add, assign_sub, AUTO_REUSE,
    constant_initializer, count_up_to, CriticalSection, get_local_variable, get_variable, get_variable_scope,
    global_variables, global_variables_initializer, glorot_normal_initializer, glorot_uniform_initializer,
    initialize_all_variables, initialize_local_variables, initialize_variables, Initializer,
    is_variable_initialized, local_variables, local_variables_initializer, make_template, model_variables,
    moving_average_variables, no_regularizer, ones_initializer, random_normal_initializer,
    random_uniform_initializer, report_uninitialized_variables, scatter_add, scatter_div, scatter_mul,
    scatter_sub, scatter_update, trainable_variables, truncated_normal_initializer,
    uniform_unit_scaling_initializer, Variable, variable_scope, variables_initializer, VariableScope,
    VariableV1, variance_scaling_initializer, zeros_initializer)
from tensorweave.ops.state import (  # noqa: F401
    create_partitioned_variables, fixed_size_partitioner, min_max_variable_partitioner,
    variable_axis_size_partitioner)
from tensorweave.ops.script import (  # noqa: F401
    py_func)

from tensorweave.runtime.config import (  # noqa: F401
    ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunMetadata, RunOptions)
from tensorweave.runtime.session import InteractiveSession, Session  # noqa: F401

from tensorweave.framework.indexed_slices import IndexedSlices, IndexedSlicesValue  # noqa: F401
from tensorweave.gradients import (  # noqa: F401
    AggregationMethod, NoGradient, NotDifferentiable, RegisterGradient, UnconnectedGradients, gradients,
    hessians)
from tensorweave.ops.queues import (  # noqa: F401
    FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue)
from tensorweave.framework.dtypes import resource, variant  # noqa: F401,E402
from tensorweave.ops.readers import (  # noqa: F401
    FixedLengthRecordReader, IdentityReader, ReaderBase, TextLineReader, TFRecordReader, WholeFileReader)
from tensorweave import queue  # noqa: F401,E402
from tensorweave import nn  # noqa: F401,E402
from tensorweave import losses  # noqa: F401,E402
from tensorweave import train  # noqa: F401,E402
from tensorweave import test  # noqa: F401,E402
from tensorweave import math  # noqa: F401,E402
from tensorweave import linalg  # noqa: F401,E402
from tensorweave import random  # noqa: F401,E402
from tensorweave import dtypes  # noqa: F401,E402
from tensorweave import debugging  # noqa: F401,E402
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue  # noqa: F401,E402
from tensorweave.ops.sparse import (  # noqa: F401
    sparse_placeholder, sparse_tensor_to_dense, sparse_to_dense)
from tensorweave.ops.strings import (  # noqa: F401
    as_string, decode_csv, decode_raw, regex_replace, string_join, string_split, string_strip,
    string_to_number, substr)
from tensorweave.ops.io import (  # noqa: F401
    matching_files, read_file, write_file)
from tensorweave import python_io  # noqa: F401,E402
from tensorweave import strings  # noqa: F401,E402
from tensorweave import io  # noqa: F401,E402
from tensorweave.framework.graph_def import AttrValue, GraphDef, NodeDef  # noqa: F401,E402
from tensorweave.framework.importer import import_graph_def  # noqa: F401,E402
from tensorweave.framework.meta_graph import MetaGraphDef  # noqa: F401,E402
from tensorweave.framework.tensor_proto import make_ndarray, make_tensor_proto  # noqa: F401,E402
from tensorweave.framework.tensor_util import get_static_value  # noqa: F401,E402
from tensorweave import contrib  # noqa: F401,E402
from tensorweave import metrics  # noqa: F401,E402
from tensorweave.ops.math.confusion_matrix import confusion_matrix  # noqa: F401,E402
from tensorweave import summary  # noqa: F401,E402
from tensorweave.summary import Event, SessionLog, Summary  # noqa: F401,E402
from tensorboard.compat.proto.summary_pb2 import HistogramProto, SummaryMetadata  # noqa: F401,E402
from tensorweave import image  # noqa: F401,E402
from tensorweave.ops.image import random_crop  # noqa: F401,E402
from tensorweave import compat  # noqa: F401,E402
from tensorweave import app  # noqa: F401,E402
from tensorweave.platform import flags  # noqa: F401,E402
from tensorweave import logging  # noqa: F401,E402
from tensorweave import gfile  # noqa: F401,E402
from tensorweave import version  # noqa: F401,E402
from tensorweave.platform.tf_logging import get_logger  # noqa: F401,E402
from tensorweave.platform.versions import (  # noqa: F401,E402
    COMPILER_VERSION, GIT_VERSION, GRAPH_DEF_VERSION, GRAPH_DEF_VERSION_MIN_CONSUMER, GRAPH_DEF_VERSION_MIN_PRODUCER,
    VERSION)
from tensorweave.platform.versions import VERSION as __version__  # noqa: F401,E402
from tensorweave.platform.versions import TENSORWEAVE_VERSION as __tensorweave_version__  # noqa: F401,E402
from tensorweave.ops.math import conj  # noqa: F401,E402
from tensorweave.framework.sparse_tensor import convert_to_tensor_or_sparse_tensor  # noqa: F401,E402
from tensorweave.gradients import NotDifferentiable as no_gradient  # noqa: F401,E402
from tensorweave import initializers  # noqa: F401,E402
from tensorweave import manip  # noqa: F401,E402
from tensorweave import graph_util  # noqa: F401,E402
from tensorweave.framework.tensor_shape import dimension_at_index  # noqa: F401,E402
from tensorweave.platform.behavior import (  # noqa: F401,E402
    control_flow_v2_enabled, disable_control_flow_v2, disable_eager_execution, disable_resource_variables,
    disable_tensor_equality, disable_v2_behavior, disable_v2_tensorshape, executing_eagerly,
    executing_eagerly_outside_functions, resource_variables_enabled)
from tensorweave import saved_model  # noqa: F401,E402
from tensorweave.ops.debugging import add_check_numerics_ops  # noqa: F401,E402
from tensorweave import layers  # noqa: F401,E402
from tensorweave.framework.op_stats import RegisterStatistics  # noqa: F401,E402
from tensorweave import profiler  # noqa: F401,E402
from tensorweave import sparse  # noqa: F401,E402
from tensorweave.ops.sparse.sparse_impl import (  # noqa: F401,E402
    sparse_add, sparse_concat, sparse_fill_empty_rows, sparse_mask, sparse_matmul, sparse_maximum, sparse_minimum,
    sparse_reduce_max, sparse_reduce_max_sparse, sparse_reduce_sum, sparse_reduce_sum_sparse, sparse_reorder,
    sparse_reset_shape, sparse_reshape, sparse_retain, sparse_segment_mean, sparse_segment_sqrt_n,
    sparse_segment_sum, sparse_slice, sparse_softmax, sparse_split, sparse_tensor_dense_matmul,
    sparse_to_indicator, sparse_transpose)
from tensorweave.ops.sparse.sparse_impl import sparse_merge  # noqa: F401,E402
from tensorweave import distribute  # noqa: F401,E402
from tensorweave.ops.strings.example_parsing import (  # noqa: F401,E402
    FixedLenFeature, FixedLenSequenceFeature, SparseFeature, VarLenFeature, parse_example,
    parse_single_example, parse_single_sequence_example)
from tensorweave import data  # noqa: F401,E402
from tensorweave import estimator  # noqa: F401,E402
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
from tensorweave.ops.queues import (  # noqa: F401,E402
    ConditionalAccumulator, ConditionalAccumulatorBase, SparseConditionalAccumulator)
from tensorweave.ops.sparse.sparse_serialize import (  # noqa: F401,E402
    deserialize_many_sparse, serialize_many_sparse, serialize_sparse)
from tensorweave.ops.strings.hashing import (  # noqa: F401,E402
    string_to_hash_bucket, string_to_hash_bucket_fast, string_to_hash_bucket_strong)
from tensorweave import lookup  # noqa: F401,E402
from tensorweave.ops.lookup import initialize_all_tables, tables_initializer  # noqa: F401,E402
from tensorweave import feature_column  # noqa: F401,E402
from tensorweave.eager.context import (  # noqa: F401,E402
    enable_eager_execution, enable_v2_behavior, init_scope)
from tensorweave.eager.backprop import GradientTape  # noqa: F401,E402
from tensorweave.eager.def_function import function  # noqa: F401,E402
from tensorweave.framework.tensor_spec import TensorSpec  # noqa: F401,E402
from tensorweave import autograph  # noqa: F401,E402
__getattr__ = _module_getattr("", __name__)
from tensorweave import xla  # noqa: F401,E402  (tf.xla.experimental.jit_scope, issue 17)
