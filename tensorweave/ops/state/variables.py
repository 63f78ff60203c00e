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
from tensorweave.framework.meta_graph import prepend_name_scope, register_proto_function, strip_name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from tensorweave.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.array.joining import stack
from tensorweave.ops.array.shaping import identity
from tensorweave.ops.array.slicing import boolean_mask
from tensorweave.ops.control_flow.cond import cond
from tensorweave.ops.control_flow.grouping import group, no_op
from tensorweave.ops.math.elementwise import logical_not
from tensorweave.ops.math.operators import OVERLOADED_OPERATORS
from tensorweave.ops.state import variable_ops as state_ops

__all__ = ["Variable", "VariableV1", "global_variables", "local_variables", "trainable_variables",
           "all_variables", "model_variables", "moving_average_variables", "global_variables_initializer",
           "local_variables_initializer", "variables_initializer", "initialize_all_variables",
           "initialize_local_variables", "initialize_variables", "report_uninitialized_variables",
           "assert_variables_initialized"]


class Variable:
    """A variable maintains state across `Session.run` calls (TF1 tf.Variable)."""

    # As TF's Variable: rank above NumPy arrays so `ndarray * variable` defers to the variable's
    # reflected operator and builds the op instead of NumPy trying to convert the variable.
    __array_priority__ = 100

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
                # replica_device_setter would otherwise pin it to the worker).
                with graph.name_scope("Initializer"), graph.device(None):
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
        return proto

    @staticmethod
    def from_proto(variable_def: Any, import_scope: Optional[str] = None) -> "Variable":
        """The Variable around the nodes a VariableDef names (in the default graph)."""
        return Variable(variable_def=variable_def, import_scope=import_scope)

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


def _forward_operator(name: str) -> None:
    def forward(self: Variable, *args: Any) -> Any:
        return getattr(Tensor, name)(self.value(), *args)

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
