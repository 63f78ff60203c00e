"""`tf.Variable` (TF1 reference variables) and the initialization helpers.

A Variable is three nodes: the VariableV2 holding state, its initializer (an Assign of the
initial value) and a `read` Identity giving its current value. The Variable converts to that
snapshot wherever a tensor is expected, and to the reference where an op mutates it.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from tensorboard.compat.proto import variable_pb2

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.default_session import get_default_session
from tensorweave.framework.graph import GraphKeys, Operation, Tensor
from tensorweave.framework.held_attributes import HeldNameDtypeShape
from tensorweave.framework.meta_graph import prepend_name_scope, register_proto_function, strip_name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from tensorweave.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.array.joining import concat, split, stack
from tensorweave.ops.array.shaping import identity
from tensorweave.ops.array.slicing import boolean_mask
from tensorweave.ops.control_flow.cond import cond
from tensorweave.ops.control_flow.grouping import group, no_op
from tensorweave.ops.math.elementwise import logical_not
from tensorweave.ops.math.operators import OVERLOADED_OPERATORS
from tensorweave.ops.state import variable_ops as state_ops

__all__ = ["Variable", "VariableV1", "PartitionedVariable", "SaveSliceInfo", "global_variables", "local_variables",
           "trainable_variables",
           "all_variables", "model_variables", "moving_average_variables", "global_variables_initializer",
           "local_variables_initializer", "variables_initializer", "initialize_all_variables",
           "initialize_local_variables", "initialize_variables", "report_uninitialized_variables",
           "assert_variables_initialized"]


class _PendingColocation:
    """Stands on the colocation stack for an op about to be created under `name` (TF's
    `_attr_scope({"_class": loc:@name})`): ops made inside join its group, with no device."""

    device = ""

    def __init__(self, name: str) -> None:
        self._groups = [f"loc:@{name}"]

    def _colocation_groups(self) -> list[str]:
        return self._groups


class SaveSliceInfo:
    """Where a variable sits inside a larger one it is a slice of (TF's Variable.SaveSliceInfo):
    the full variable's name and shape, and this slice's offset and shape in it. A Saver writes
    the slice under the full name with the `spec` string, so checkpoints hold the whole tensor."""

    def __init__(self, full_name: Optional[str] = None, full_shape: Optional[Sequence[int]] = None,
                 var_offset: Optional[Sequence[int]] = None, var_shape: Optional[Sequence[int]] = None,
                 save_slice_info_def: Any = None, import_scope: Optional[str] = None) -> None:
        if save_slice_info_def is not None:
            full_name = prepend_name_scope(save_slice_info_def.full_name, import_scope)
            full_shape = list(save_slice_info_def.full_shape)
            var_offset = list(save_slice_info_def.var_offset)
            var_shape = list(save_slice_info_def.var_shape)
        self.full_name = full_name
        self.full_shape = list(full_shape) if full_shape is not None else None
        self.var_offset = list(var_offset) if var_offset is not None else None
        self.var_shape = list(var_shape) if var_shape is not None else None

    @property
    def spec(self) -> str:
        """TF's shape-and-slice string: "<full dims> <offset,length>:<offset,length>..."."""
        dims = " ".join(str(d) for d in self.full_shape or [])
        extents = ":".join(f"{o},{n}" for o, n in zip(self.var_offset or [], self.var_shape or []))
        return f"{dims} {extents}"

    def to_proto(self, export_scope: Optional[str] = None) -> Any:
        if export_scope is not None and not (self.full_name or "").startswith(export_scope):
            return None
        return variable_pb2.SaveSliceInfoDef(full_name=strip_name_scope(self.full_name, export_scope),
                                             full_shape=self.full_shape, var_offset=self.var_offset,
                                             var_shape=self.var_shape)


class Variable:
    """A variable maintains state across `Session.run` calls (TF1 tf.Variable)."""

    SaveSliceInfo = SaveSliceInfo

    # As TF's Variable: rank above NumPy arrays so `ndarray * variable` defers to the variable's
    # reflected operator and builds the op instead of NumPy trying to convert the variable.
    __array_priority__ = 100

    def __new__(cls, *args: Any, **kwargs: Any) -> "Variable":
        # While executing eagerly, tf.Variable makes the eager context's variable class
        # (eager/variables.py registers it; ops/ does not import eager/).
        if cls is Variable and _EAGER_VARIABLE_CLASS and _graph.get_default_graph().executes_eagerly:
            return object.__new__(_EAGER_VARIABLE_CLASS[0])
        return object.__new__(cls)

    def __init__(self, initial_value: Any = None, trainable: bool = True,
                 collections: Optional[Sequence[str]] = None, validate_shape: bool = True,
                 caching_device: Any = None, name: Optional[str] = None, variable_def: Any = None,
                 dtype: Any = None, expected_shape: Any = None, import_scope: Any = None,
                 constraint: Optional[Callable] = None, use_resource: Any = None,
                 synchronization: Any = None, aggregation: Any = None, shape: Any = None) -> None:
        if variable_def is not None:
            self._init_from_graph(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        if not isinstance(collections, (list, tuple, set)):
            raise ValueError(f"collections argument to Variable constructor must be a list, tuple, or "
                             f"set. Got {collections} of type {type(collections)}")
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        init_from_fn = callable(initial_value)
        graph = _graph.get_default_graph()
        # Like TF's init_scope: a variable built inside cond/while lives outside the control flow.
        saved_context, graph._control_flow_context = graph._control_flow_context, None
        try:
            with graph.control_dependencies(None):
                self._build(graph, initial_value, init_from_fn, name, dtype, shape, validate_shape)
        finally:
            graph._control_flow_context = saved_context
        self._trainable = trainable
        self._constraint = constraint
        self._save_slice_info = None
        graph.add_to_collections(collections, self)

    def _build(self, graph: _graph.Graph, initial_value: Any, init_from_fn: bool, name: Optional[str],
               dtype: Any, shape: Any, validate_shape: bool) -> None:
        with graph.as_default(), _graph.name_scope(name, "Variable",
                                                   [] if init_from_fn else [initial_value]) as scope:
            if init_from_fn:
                # As TF: an initializer function runs outside the device scopes (a
                # replica_device_setter would otherwise pin it to the worker) but colocated
                # with the variable it initializes, which does not exist yet: its ops name the
                # variable's group, so a table on a PS task is drawn there, not shipped there.
                with graph.name_scope("Initializer"), graph.device(None), \
                        graph.colocate_with(_PendingColocation(scope.rstrip("/"))):
                    initial = convert_to_tensor(initial_value(), dtype=dtype, name="initial_value")
            else:
                initial = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
            if shape is not None:
                var_shape = as_shape(shape)
            elif validate_shape:
                var_shape = initial.shape
                if not var_shape.is_fully_defined():
                    raise ValueError(f"initial_value must have a shape specified: {initial}")
            else:
                var_shape = unknown_shape()
            self._variable = state_ops.variable_op_v2(var_shape, initial.dtype.base_dtype, name=scope)
            self._initial_value = initial
            with graph.colocate_with(self._variable.op):
                self._initializer_op = state_ops.assign(self._variable, initial, validate_shape=validate_shape,
                                                        name="Assign").op
                self._snapshot = identity(self._variable, name="read")

    def _init_from_graph(self, variable_def: Any, import_scope: Optional[str] = None) -> None:
        """Rebuilds the Variable object around existing nodes named by a VariableDef proto."""
        graph = _graph.get_default_graph()

        def element(name: str) -> Any:
            return graph.as_graph_element(prepend_name_scope(name, import_scope))

        self._variable = element(variable_def.variable_name)
        self._initializer_op = element(variable_def.initializer_name)
        self._snapshot = element(variable_def.snapshot_name)
        self._initial_value = element(variable_def.initial_value_name) if variable_def.initial_value_name else None
        self._trainable = variable_def.trainable
        self._constraint = None
        self._save_slice_info = None
        if variable_def.HasField("save_slice_info_def"):
            self._save_slice_info = SaveSliceInfo(save_slice_info_def=variable_def.save_slice_info_def,
                                                  import_scope=import_scope)

    def to_proto(self, export_scope: Optional[str] = None) -> Any:
        """This variable as a VariableDef protobuf, names relative to `export_scope` (None if the
        variable is outside it)."""
        if export_scope is not None and not self._variable.name.startswith(export_scope.rstrip("/") + "/"):
            return None
        proto = variable_pb2.VariableDef(
            variable_name=strip_name_scope(self._variable.name, export_scope),
            initializer_name=strip_name_scope(self._initializer_op.name, export_scope),
            snapshot_name=strip_name_scope(self._snapshot.name, export_scope), trainable=self._trainable)
        if self._initial_value is not None:
            proto.initial_value_name = strip_name_scope(self._initial_value.name, export_scope)
        if self._save_slice_info is not None:
            slice_def = self._save_slice_info.to_proto(export_scope)
            if slice_def is not None:
                proto.save_slice_info_def.MergeFrom(slice_def)
        return proto

    @staticmethod
    def from_proto(variable_def: Any, import_scope: Optional[str] = None) -> "Variable":
        """The Variable around the nodes a VariableDef names (in the default graph)."""
        return Variable(variable_def=variable_def, import_scope=import_scope)

    def _set_save_slice_info(self, save_slice_info: SaveSliceInfo) -> None:
        self._save_slice_info = save_slice_info

    def _get_save_slice_info(self) -> Optional[SaveSliceInfo]:
        return self._save_slice_info

    # -- graph elements -------------------------------------------------------------------------
    def _as_graph_element(self) -> Tensor:
        return self._variable

    def _ref(self) -> Tensor:
        return self._variable

    def value(self) -> Tensor:
        """The last snapshot of this variable (its `read` tensor)."""
        return self._snapshot

    def read_value(self) -> Tensor:
        """A new read of this variable's current value."""
        return identity(self._variable, name="read")

    def initialized_value(self) -> Tensor:
        """The variable's value if it is initialized, else its initial value: use it to
        initialize another variable from this one (TF1 Variable.initialized_value)."""
        graph = self.graph
        saved_context, graph._control_flow_context = graph._control_flow_context, None
        try:
            with graph.as_default(), graph.control_dependencies(None):
                return cond(state_ops.is_variable_initialized(self._variable), self.read_value,
                            lambda: self._initial_value)
        finally:
            graph._control_flow_context = saved_context

    @property
    def initializer(self) -> Operation:
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    @property
    def name(self) -> str:
        return self._variable.name

    @property
    def op(self) -> Operation:
        return self._variable.op

    @property
    def graph(self) -> _graph.Graph:
        return self._variable.graph

    @property
    def device(self) -> str:
        return self._variable.device

    @property
    def dtype(self) -> _dtypes.DType:
        return self._variable.dtype

    @property
    def shape(self) -> TensorShape:
        return self._variable.shape

    def get_shape(self) -> TensorShape:
        return self._variable.shape

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def constraint(self) -> Optional[Callable]:
        return self._constraint

    def eval(self, session: Any = None) -> Any:
        return self._variable.eval(session=session)

    def load(self, value: Any, session: Any = None) -> None:
        """Assigns `value` through the initializer's feed, without adding ops to the graph."""
        session = session or get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session should be established")
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    # -- updates ----------------------------------------------------------------------------------
    def assign(self, value: Any, use_locking: bool = False, name: Optional[str] = None,
               read_value: bool = True) -> Any:
        result = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return result if read_value else result.op

    def assign_add(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Any:
        result = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return result if read_value else result.op

    def assign_sub(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Any:
        result = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return result if read_value else result.op

    def scatter_sub(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
        return state_ops.scatter_sub(self._variable, sparse_delta.indices, sparse_delta.values,
                                     use_locking=use_locking, name=name)

    def scatter_add(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
        return state_ops.scatter_add(self._variable, sparse_delta.indices, sparse_delta.values,
                                     use_locking=use_locking, name=name)

    def scatter_update(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
        return state_ops.scatter_update(self._variable, sparse_delta.indices, sparse_delta.values,
                                        use_locking=use_locking, name=name)

    def set_shape(self, shape: Any) -> None:
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def __repr__(self) -> str:
        return (f"<tf.Variable '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name}>")

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __ne__(self, other: Any) -> bool:
        return self is not other

    def __bool__(self) -> bool:
        raise TypeError("Using a `tf.Variable` as a Python `bool` is not allowed.")

    def __iter__(self) -> Any:
        return iter(self._snapshot)

    def __array__(self, dtype: Any = None) -> Any:
        raise TypeError(f"Cannot convert {self!r} to a numpy array: evaluate it in a session first.")


VariableV1 = Variable
_EAGER_VARIABLE_CLASS: list[type] = []


def register_eager_variable_class(cls: type) -> None:
    """The Variable subclass tf.Variable makes while executing eagerly."""
    _EAGER_VARIABLE_CLASS[:] = [cls]


def _forward_operator(name: str) -> None:
    def forward(self: Variable, *args: Any) -> Any:
        value = self.value()
        # the value's own class: an EagerTensor's operators take the eager fast path
        return getattr(type(value) if isinstance(value, Tensor) else Tensor, name)(value, *args)

    forward.__name__ = name
    setattr(Variable, name, forward)


def _install_operators() -> None:
    for name in OVERLOADED_OPERATORS:
        _forward_operator(name)
    _forward_operator("__getitem__")


_install_operators()


def _to_tensor(v: Variable, dtype: Any = None, name: Optional[str] = None, as_ref: bool = False) -> Tensor:
    return v._ref() if as_ref else v.value()


register_tensor_conversion_function(Variable, _to_tensor)


class PartitionedVariable(HeldNameDtypeShape):
    """A variable stored as shards (TF1 PartitionedVariable, made by get_variable with a
    partitioner): each shard is its own Variable (`name/part_i`, its own VariableV2, so a
    replica_device_setter spreads them over PS tasks); used as a tensor it is their
    concatenation. Shards are ordered by their offset in the full variable."""

    def __init__(self, name: str, shape: Any, dtype: Any, variable_list: Sequence[Variable],
                 partitions: Sequence[int]) -> None:
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError(f"variable_list is not a list or tuple: {variable_list}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"partitions is not a list or tuple: {partitions}")
        if not all(p >= 1 for p in partitions):
            raise ValueError(f"partition values must be positive: {partitions}")
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        if any(v._get_save_slice_info() is None for v in variable_list):
            raise ValueError(f"All variables must have a save_slice_info available: {[v.name for v in variable_list]}")
        if len(shape) != len(partitions):
            raise ValueError(f"len(shape) != len(partitions): {shape} vs. {partitions}")
        full_shape = as_shape(shape).as_list()
        for v in variable_list:
            if v._get_save_slice_info().full_shape != full_shape:  # type: ignore[union-attr]
                raise ValueError(f"All variables' full shapes must match shape: {shape}; but full shapes were: "
                                 f"{[v._get_save_slice_info().full_shape]}")  # type: ignore[union-attr]
        self._variable_list = sorted(variable_list, key=lambda v: v._get_save_slice_info().var_offset)
        self._name = name
        self._shape = as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._partitions = list(partitions)

    def __iter__(self) -> Any:
        return iter(self._variable_list)

    def __len__(self) -> int:
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot get a length for {len(axes)} > 1 partition axes")
        return len(self._variable_list)

    def _partition_axes(self) -> list[int]:
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def _concat(self) -> Tensor:
        """The full value (a Concat of the shards' snapshots, named as the variable)."""
        if len(self._variable_list) == 1:
            with _graph.name_scope(None):
                return identity(self._variable_list[0], name=self._name)
        axis = self._partition_axes()
        if len(axis) > 1:
            raise ValueError(f"Cannot concatenate along more than one dimension: {axis}. "
                             "Multi-axis partition concat is not supported")
        with _graph.name_scope(self._name + "/ConcatPartitions/"):
            concatenated = concat(self._variable_list, axis[0])
        with _graph.name_scope(None):
            return identity(concatenated, name=self._name)

    def as_tensor(self) -> Tensor:
        """The concatenated value, free of the control dependencies of the caller's scope."""
        with _graph.get_default_graph().control_dependencies(None):
            return self._concat()

    @property
    def graph(self) -> _graph.Graph:
        return self._variable_list[0].graph

    def get_variable_list(self) -> list[Variable]:
        return self._variable_list

    def _get_variable_list(self) -> list[Variable]:
        return self._variable_list

    def get_partitions(self) -> list[int]:
        return self._partitions

    def _get_partitions(self) -> list[int]:
        return self._partitions

    def _apply_assign_fn(self, assign_fn: Callable[[Variable, Any], Any], value: Any) -> list:
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot do assign action along more than one dimension: {axes}. "
                             "Multi-axis partition assign action is not supported")
        if isinstance(value, list):
            if len(value) != len(self._variable_list):
                raise ValueError(f"Expected {len(self._variable_list)} values, one per shard, got {len(value)}")
            values = value
        elif isinstance(value, PartitionedVariable):
            values = list(value)
        else:
            sizes = [v.shape.dims[axes[0]].value for v in self._variable_list]
            values = split(value, sizes, axis=axes[0])
        return [assign_fn(v, values[i]) for i, v in enumerate(self._variable_list)]

    def assign(self, value: Any, use_locking: bool = False, name: Optional[str] = None,
               read_value: bool = True) -> list:
        return self._apply_assign_fn(lambda v, x: v.assign(x, use_locking, name, read_value), value)

    def assign_add(self, value: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> list:
        return self._apply_assign_fn(lambda v, x: v.assign_add(x, use_locking, name, read_value), value)

    def assign_sub(self, value: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> list:
        return self._apply_assign_fn(lambda v, x: v.assign_sub(x, use_locking, name, read_value), value)

    def __repr__(self) -> str:
        return f"<tf.PartitionedVariable '{self._name}' shape={self._shape} partitions={self._partitions}>"


def _partitioned_to_tensor(v: PartitionedVariable, dtype: Any = None, name: Optional[str] = None,
                           as_ref: bool = False) -> Tensor:
    if dtype is not None and not _dtypes.as_dtype(dtype).is_compatible_with(v.dtype):
        raise ValueError(f"Incompatible type conversion requested to type '{_dtypes.as_dtype(dtype).name}' for "
                         f"variable of type '{v.dtype.name}'")
    if as_ref:
        # shards live in separate VariableV2 nodes: no single reference tensor exists to mutate
        raise TypeError("PartitionedVariable doesn't support being used as a reference.")
    return v.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _partitioned_to_tensor)


def _register_variable_collections() -> None:
    """Variables serialize into MetaGraphDef collections as VariableDef protos."""
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.MOVING_AVERAGE_VARIABLES,
                GraphKeys.LOCAL_VARIABLES, GraphKeys.MODEL_VARIABLES, GraphKeys.GLOBAL_STEP,
                GraphKeys.METRIC_VARIABLES):
        register_proto_function(key, proto_type=variable_pb2.VariableDef,
                                to_proto=lambda v, export_scope=None: v.to_proto(export_scope),
                                from_proto=Variable.from_proto)


_register_variable_collections()


# -- collections and initializers -------------------------------------------------------------
def global_variables(scope: Optional[str] = None) -> list[Variable]:
    return _graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def all_variables() -> list[Variable]:
    return global_variables()


def local_variables(scope: Optional[str] = None) -> list[Variable]:
    return _graph.get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope: Optional[str] = None) -> list[Variable]:
    return _graph.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope: Optional[str] = None) -> list[Variable]:
    return _graph.get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope: Optional[str] = None) -> list[Variable]:
    return _graph.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list: Sequence[Variable], name: str = "init") -> Operation:
    """An op that runs the initializers of `var_list` (a no_op when empty)."""
    if var_list:
        return group(*[v.initializer for v in var_list], name=name)
    return no_op(name=name)


def initialize_variables(var_list: Sequence[Variable], name: str = "init") -> Operation:
    return variables_initializer(var_list, name)


def global_variables_initializer() -> Operation:
    return variables_initializer(global_variables())


def initialize_all_variables() -> Operation:
    return global_variables_initializer()


def local_variables_initializer() -> Operation:
    return variables_initializer(local_variables())


def initialize_local_variables() -> Operation:
    return local_variables_initializer()


def report_uninitialized_variables(var_list: Optional[Sequence[Variable]] = None,
                                   name: str = "report_uninitialized_variables") -> Tensor:
    """A 1-D string tensor with the names of the uninitialized variables in `var_list`."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    with _graph.name_scope(name) as scope:
        if not var_list:
            return constant([], dtype=_dtypes.string, name=scope)
        flags = stack([state_ops.is_variable_initialized(v) for v in var_list])
        names = constant([v.op.name for v in var_list])
        return boolean_mask(names, logical_not(flags), name=scope)


def assert_variables_initialized(var_list: Optional[Sequence[Variable]] = None) -> Any:
    """An op that raises FailedPreconditionError when any variable is uninitialized."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    if not var_list:
        return None
    return group(*[identity(v._ref()) for v in var_list], name="assert_variables_initialized")
