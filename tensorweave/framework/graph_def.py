"""Graph -> GraphDef protobuf, wire-compatible with TensorFlow's (DESIGN.md "The graph"), so real
TensorBoard draws our graphs and real TensorFlow imports them; `tf.train.write_graph`.

A NodeDef per operation, in creation order: name, op type, inputs ("name" for output 0,
"name:port" otherwise, "^name" for control inputs), the requested device and the attrs as
AttrValue protos. Attr values convert both ways by the attr's declared kind in the op
definition ('type', 'shape', 'list(int)', ...); private attrs (`_class`, ...) by their value.
The reverse direction (`tf.import_graph_def`) is in importer.py.
"""
from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np
from google.protobuf import text_format
from tensorboard.compat.proto import attr_value_pb2, graph_pb2, node_def_pb2, tensor_pb2, tensor_shape_pb2

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_proto import DeferredTensor, make_ndarray, ndarray_to_proto, tensor_value
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.lib.atomic_write import atomic_write

__all__ = ["GraphDef", "NodeDef", "AttrValue", "graph_to_graph_def", "write_graph",
           "attr_to_proto", "attr_from_proto", "attr_value_to_python", "GRAPH_DEF_VERSION"]

GraphDef = graph_pb2.GraphDef
NodeDef = node_def_pb2.NodeDef
AttrValue = attr_value_pb2.AttrValue

# The GraphDef version TF 1.15 writes; consumers only check that it is at least their minimum.
GRAPH_DEF_VERSION = 134
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0


# ---------------------------------------------------------------------------------------------
# Attr values
# ---------------------------------------------------------------------------------------------
def shape_to_proto(shape: Any) -> Any:
    """The TensorShapeProto of a shape (unknown dims are -1, unknown rank `unknown_rank`)."""
    shape = as_shape(shape)
    proto = tensor_shape_pb2.TensorShapeProto()
    if shape.ndims is None:
        proto.unknown_rank = True
        return proto
    for d in shape.as_list():
        proto.dim.add(size=-1 if d is None else d)
    return proto


def shape_from_proto(proto: Any) -> TensorShape:
    if proto.unknown_rank:
        return TensorShape(None)
    if any(d.size < -1 for d in proto.dim):
        dims = ",".join(str(d.size) for d in proto.dim)
        raise ValueError(f"Shape [{dims}] has dimensions with values below -1 (where -1 means unknown)")
    return TensorShape([None if d.size < 0 else d.size for d in proto.dim])


def _guess_kind(value: Any) -> str:
    """The attr kind of a Python value (for private attrs that no op definition declares)."""
    if isinstance(value, (list, tuple)):
        inner = _guess_kind(value[0]) if value else "string"
        return f"list({inner})"
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, (str, bytes)):
        return "string"
    if isinstance(value, _dtypes.DType):
        return "type"
    if isinstance(value, TensorShape):
        return "shape"
    if isinstance(value, np.ndarray):
        return "tensor"
    if isinstance(value, attr_value_pb2.NameAttrList):
        return "func"
    raise TypeError(f"Cannot serialize attr value {value!r} of type {type(value).__name__}")


def attr_to_proto(value: Any, kind: Optional[str] = None, proto: Any = None) -> Any:
    """The AttrValue for Python attr `value` of attr kind `kind` (guessed when None), filled
    into `proto` when given (saves copying large constants)."""
    kind = kind or _guess_kind(value)
    proto = attr_value_pb2.AttrValue() if proto is None else proto
    if kind.startswith("list("):
        inner = kind[5:-1]
        proto.list.SetInParent()
        target = proto.list
        for item in value:
            _append_list_item(target, inner, item)
        return proto
    if kind == "type":
        proto.type = _dtypes.as_dtype(value).as_datatype_enum
    elif kind == "int":
        proto.i = int(value)
    elif kind == "float":
        proto.f = float(value)
    elif kind == "bool":
        proto.b = bool(value)
    elif kind == "string":
        proto.s = value if isinstance(value, bytes) else str(value).encode("utf-8")
    elif kind == "shape":
        proto.shape.CopyFrom(shape_to_proto(as_shape(value)))
    elif kind == "tensor":
        if isinstance(value, tensor_pb2.TensorProto):
            proto.tensor.CopyFrom(value)
        elif isinstance(value, DeferredTensor):
            proto.tensor.CopyFrom(value.proto)
        else:
            ndarray_to_proto(np.asarray(value), proto.tensor)
    elif kind == "func":
        proto.func.CopyFrom(value if isinstance(value, attr_value_pb2.NameAttrList)
                            else attr_value_pb2.NameAttrList(name=str(value)))
    else:
        raise TypeError(f"Cannot serialize attr of kind {kind!r}: {value!r}")
    return proto


def _append_list_item(target: Any, inner: str, item: Any) -> None:
    if inner == "type":
        target.type.append(_dtypes.as_dtype(item).as_datatype_enum)
    elif inner == "int":
        target.i.append(int(item))
    elif inner == "float":
        target.f.append(float(item))
    elif inner == "bool":
        target.b.append(bool(item))
    elif inner == "string":
        target.s.append(item if isinstance(item, bytes) else str(item).encode("utf-8"))
    elif inner == "shape":
        target.shape.add().CopyFrom(shape_to_proto(as_shape(item)))
    elif inner == "tensor":
        target.tensor.add().CopyFrom(ndarray_to_proto(np.asarray(item)))
    elif inner == "func":
        target.func.add().CopyFrom(item if isinstance(item, attr_value_pb2.NameAttrList)
                                   else attr_value_pb2.NameAttrList(name=str(item)))
    else:
        raise TypeError(f"Cannot serialize list attr of kind {inner!r}")


_LIST_FIELDS = (("s", "string"), ("i", "int"), ("f", "float"), ("b", "bool"), ("type", "type"),
                ("shape", "shape"), ("tensor", "tensor"), ("func", "func"))


def attr_from_proto(proto: Any, kind: Optional[str] = None) -> Any:
    """The Python value of AttrValue `proto`, read as attr kind `kind` (or as whatever field
    it sets). Strings become str, types DType, shapes TensorShape, tensors NumPy arrays."""
    field = proto.WhichOneof("value")
    if kind is not None:
        if kind.startswith("list("):
            return _list_from_proto(proto.list, kind[5:-1]) if field == "list" else []
    if field is None:
        return None
    if field == "list":
        for name, inner in _LIST_FIELDS:
            if len(getattr(proto.list, name)):
                return _list_from_proto(proto.list, inner)
        return []
    return _scalar_from_proto(proto, field)


def _scalar_from_proto(proto: Any, field: str) -> Any:
    if field == "s":
        try:
            return proto.s.decode("utf-8")
        except UnicodeDecodeError:
            return proto.s
    if field == "type":
        return _dtypes.as_dtype(proto.type)
    if field == "shape":
        return shape_from_proto(proto.shape)
    if field == "tensor":
        return tensor_value(proto.tensor)
    if field == "func":
        return proto.func
    if field == "placeholder":
        raise ValueError(f"Attr placeholder ${proto.placeholder} outside a function definition")
    return getattr(proto, field)


def attr_value_to_python(proto: Any) -> Any:
    """AttrValue `proto` as TF's Operation.get_attr returns it: the field's own protobuf value
    (bytes for strings, TensorShapeProto, TensorProto, NameAttrList), types as DType, lists as
    Python lists of those."""
    field = proto.WhichOneof("value")
    if field == "list":
        for name, _ in _LIST_FIELDS:
            items = getattr(proto.list, name)
            if len(items):
                return [_dtypes.as_dtype(t) for t in items] if name == "type" else list(items)
        return []
    if field == "type":
        return _dtypes.as_dtype(proto.type)
    return None if field is None else getattr(proto, field)


def _list_from_proto(values: Any, inner: str) -> list[Any]:
    if inner == "string":
        return [_decode(s) for s in values.s]
    if inner == "int":
        return list(values.i)
    if inner == "float":
        return list(values.f)
    if inner == "bool":
        return list(values.b)
    if inner == "type":
        return [_dtypes.as_dtype(t) for t in values.type]
    if inner == "shape":
        return [shape_from_proto(s) for s in values.shape]
    if inner == "tensor":
        return [make_ndarray(t) for t in values.tensor]
    if inner == "func":
        return list(values.func)
    raise TypeError(f"Unknown attr kind list({inner})")


def _decode(raw: bytes) -> Any:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


# ---------------------------------------------------------------------------------------------
# Graph -> GraphDef
# ---------------------------------------------------------------------------------------------
def tensor_input_name(tensor: Any) -> str:
    """How a NodeDef names an input tensor: "op" for output 0, "op:port" otherwise."""
    return tensor.op.name if tensor.value_index == 0 else f"{tensor.op.name}:{tensor.value_index}"


def node_def(op: Any, add_shapes: bool = False, node: Any = None) -> Any:
    """The NodeDef of Operation `op` (filled into `node` when given)."""
    node = node_def_pb2.NodeDef() if node is None else node
    node.name, node.op, node.device = op.name, op.type, op.device
    node.input.extend(tensor_input_name(t) for t in op.inputs)
    node.input.extend(f"^{c.name}" for c in op.control_inputs)
    declared = op.op_def.attrs
    for name, value in op.node_attrs.items():
        if value is None:
            continue
        attr = declared.get(name)
        if attr is not None:
            attr_to_proto(value, attr.kind, node.attr[name])
            continue
        try:
            attr_to_proto(value, None, node.attr[name])
        except TypeError:
            del node.attr[name]  # a private runtime helper with no AttrValue form: not part of the graph
    if add_shapes:
        attr_to_proto([t.shape for t in op.outputs], "list(shape)", node.attr["_output_shapes"])
    return node


def graph_to_graph_def(graph: Any, from_version: Optional[int] = None, add_shapes: bool = False,
                       graph_def: Any = None) -> Any:
    """Graph.as_graph_def: the GraphDef of `graph` (only ops created after version
    `from_version` when it is given), with `_output_shapes` attrs if `add_shapes`; built in
    `graph_def` when given (e.g. the one inside a MetaGraphDef)."""
    graph_def = graph_pb2.GraphDef() if graph_def is None else graph_def
    graph_def.versions.producer = GRAPH_DEF_VERSION
    graph_def.versions.min_consumer = GRAPH_DEF_VERSION_MIN_CONSUMER
    for op in graph.get_operations():
        if from_version is None or op._id >= from_version:
            node_def(op, add_shapes, graph_def.node.add())
    write_library(graph, graph_def.library)
    return graph_def


def write_library(graph: Any, library: Any) -> None:
    """Fills a FunctionDefLibrary with `graph`'s functions (framework/function.py's
    DefinedFunctions) and the gradient functions registered for them."""
    for fn in graph._functions.values():
        library.function.add().CopyFrom(fn.definition)
        if fn.grad_func_name:
            library.gradient.add(function_name=fn.name, gradient_func=fn.grad_func_name)


def write_graph(graph_or_graph_def: Any, logdir: str, name: str, as_text: bool = True) -> str:
    """Writes a graph (or GraphDef, or any protobuf such as a MetaGraphDef) to `logdir/name`, as
    text or binary protobuf, replacing the file atomically; returns the path (TF1's
    tf.train.write_graph / tf.io.write_graph)."""
    from google.protobuf.message import Message
    proto = graph_or_graph_def
    if hasattr(graph_or_graph_def, "as_graph_def"):
        proto = graph_or_graph_def.as_graph_def()
    if not isinstance(proto, Message):
        raise TypeError(f"graph_or_graph_def must be a tf.Graph or a GraphDef, got "
                        f"{type(graph_or_graph_def).__name__}")
    logdir = os.fspath(logdir)
    if logdir:
        os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    data = (text_format.MessageToString(proto).encode("utf-8") if as_text
            else proto.SerializeToString(deterministic=True))
    atomic_write(path, data)
    return path
