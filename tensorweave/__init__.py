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
from tensorweave.framework import errors  # noqa: F401
from tensorweave.framework.errors import OpError  # noqa: F401
from tensorweave.framework.op_def_library import apply_op as _apply_op  # noqa: F401

from tensorweave.ops.array import *  # noqa: F401,F403
from tensorweave.ops.math import *  # noqa: F401,F403
from tensorweave.ops.linalg import *  # noqa: F401,F403
from tensorweave.ops.random import (  # noqa: F401
    multinomial, random_normal, random_shuffle, random_uniform, truncated_normal)
from tensorweave.ops.control_flow import group, no_op, tuple  # noqa: F401
from tensorweave.ops.control_flow.cond import case, cond  # noqa: F401
from tensorweave.ops.control_flow.while_loop import while_loop  # noqa: F401
from tensorweave.ops.control_flow.tensor_array import TensorArray  # noqa: F401
from tensorweave.ops.control_flow.functional_ops import foldl, foldr, map_fn, scan  # noqa: F401
from tensorweave.ops.debugging import *  # noqa: F401,F403
from tensorweave.ops.state import *  # noqa: F401,F403
from tensorweave.ops.script import *  # noqa: F401,F403
from tensorweave.ops.math.segment import *  # noqa: F401,F403
from tensorweave.ops.linalg.linalg_impl import *  # noqa: F401,F403
from tensorweave.ops.linalg.einsum import *  # noqa: F401,F403
from tensorweave.ops.math.sort import *  # noqa: F401,F403

from tensorweave.runtime.config import (  # noqa: F401
    ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunMetadata, RunOptions)
from tensorweave.runtime.session import InteractiveSession, Session  # noqa: F401

from tensorweave.framework.indexed_slices import IndexedSlices, IndexedSlicesValue  # noqa: F401
from tensorweave.gradients import (  # noqa: F401
    AggregationMethod, NoGradient, NotDifferentiable, RegisterGradient, UnconnectedGradients, gradients,
    hessians)
from tensorweave.ops.math.clip import *  # noqa: F401,F403
from tensorweave.ops.queues import *  # noqa: F401,F403,E402
from tensorweave.framework.dtypes import resource, variant  # noqa: F401,E402
from tensorweave.ops.readers import *  # noqa: F401,F403,E402
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
from tensorweave.ops.sparse import *  # noqa: F401,F403,E402
from tensorweave.ops.strings import *  # noqa: F401,F403,E402
from tensorweave.ops.io import *  # noqa: F401,F403,E402
from tensorweave import python_io  # noqa: F401,E402
from tensorweave import strings  # noqa: F401,E402
from tensorweave import io  # noqa: F401,E402
from tensorweave.framework.graph_def import AttrValue, GraphDef, NodeDef  # noqa: F401,E402
from tensorweave.framework.importer import import_graph_def  # noqa: F401,E402
from tensorweave.framework.meta_graph import MetaGraphDef  # noqa: F401,E402
from tensorweave.framework.tensor_proto import make_ndarray, make_tensor_proto  # noqa: F401,E402
