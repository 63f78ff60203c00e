"""MetaGraphDef: a graph plus what a program needs to use it again from the files alone
(OSDI 3.3 "Fault tolerance": a restarted job rebuilds its model from the saved meta graph and
restores its variables from the checkpoint).

A MetaGraphDef holds meta_info_def (versions, tags and the op signatures the graph uses),
graph_def, saver_def (which tensors save and restore), and collection_def: each collection as
a node list (names of operations / tensors), a bytes, int64 or float list, or, for collections
whose items have a registered proto function (variables: VariableDef, savers: SaverDef, queue
runners: QueueRunnerDef), the serialized protos. Importing rebuilds the graph through
tf.import_graph_def and refills the collections, so `tf.get_collection('train_op')`,
`tf.trainable_variables()` and `tf.train.start_queue_runners` work again.
"""
from __future__ import annotations

import logging
import os
from typing import Any, Callable, Optional, Sequence

from google.protobuf import any_pb2, message, text_format
from tensorboard.compat.proto import meta_graph_pb2, op_def_pb2

from tensorweave.framework import graph as _graph
from tensorweave.framework.graph_def import attr_to_proto, graph_to_graph_def
from tensorweave.framework.op_def import OpDef, get_op_def
from tensorweave.framework.graph_def import write_graph
from tensorweave.framework.importer import import_graph_def

__all__ = ["MetaGraphDef", "register_proto_function", "create_meta_graph_def", "export_scoped_meta_graph",
           "import_scoped_meta_graph", "import_scoped_meta_graph_with_return_elements",
           "read_meta_graph_file", "stripped_op_list_for_graph", "strip_name_scope", "prepend_name_scope"]

MetaGraphDef = meta_graph_pb2.MetaGraphDef
_log = logging.getLogger("tensorweave")
_UNBOUND_PREFIX = "$unbound_inputs_"
TF_API_VERSION = "1.15.5"

# collection name -> (proto type, to_proto(item, export_scope), from_proto(proto, import_scope))
_PROTO_FUNCTIONS: dict[str, tuple[Any, Optional[Callable[..., Any]], Optional[Callable[..., Any]]]] = {}


def register_proto_function(collection_name: str, proto_type: Any = None, to_proto: Optional[Callable] = None,
                            from_proto: Optional[Callable] = None) -> None:
    """Declares how the items of collection `collection_name` serialize into a MetaGraphDef
    (TF's ops.register_proto_function)."""
    _PROTO_FUNCTIONS[collection_name] = (proto_type, to_proto, from_proto)


def get_collection_proto_type(name: str) -> Any:
    return _PROTO_FUNCTIONS.get(name, (None, None, None))[0]


def get_to_proto_function(name: str) -> Optional[Callable]:
    return _PROTO_FUNCTIONS.get(name, (None, None, None))[1]


def get_from_proto_function(name: str) -> Optional[Callable]:
    return _PROTO_FUNCTIONS.get(name, (None, None, None))[2]


# ---------------------------------------------------------------------------------------------
# Name scopes
# ---------------------------------------------------------------------------------------------
def _split_marker(name: str) -> tuple[str, str]:
    for marker in ("^", "loc:@"):
        if name.startswith(marker):
            return marker, name[len(marker):]
    return "", name


def strip_name_scope(name: str, export_scope: Optional[str]) -> str:
    """`name` without the leading `export_scope/` (also inside "^name" and "loc:@name")."""
    if not export_scope:
        return name
    marker, rest = _split_marker(name)
    scope = export_scope.rstrip("/") + "/"
    return marker + rest[len(scope):] if rest.startswith(scope) else name


def prepend_name_scope(name: str, import_scope: Optional[str]) -> str:
    """`name` under `import_scope/` (also inside "^name" and "loc:@name")."""
    if not import_scope:
        return name
    marker, rest = _split_marker(name)
    return f"{marker}{import_scope.rstrip('/')}/{rest}"


# ---------------------------------------------------------------------------------------------
# Op signatures (meta_info_def.stripped_op_list)
# ---------------------------------------------------------------------------------------------
def op_def_to_proto(definition: OpDef) -> Any:
    """The OpDef protobuf of a registered op (its signature, attrs, defaults, allowed values)."""
    proto = op_def_pb2.OpDef(name=definition.name, is_stateful=definition.is_stateful)
    for args, target in ((definition.inputs, proto.input_arg), (definition.outputs, proto.output_arg)):
        for arg in args:
            arg_proto = target.add(name=arg.name, is_ref=arg.is_ref)
            if arg.fixed_dtype is not None:
                arg_proto.type = arg.fixed_dtype.as_datatype_enum
            arg_proto.type_attr = arg.type_attr or ""
            arg_proto.number_attr = arg.number_attr or ""
            arg_proto.type_list_attr = arg.type_list_attr or ""
    for attr in definition.attrs.values():
        kind = attr.kind.split()[0].rstrip(">=") if not attr.kind.startswith("list(") else attr.kind
        attr_proto = proto.attr.add(name=attr.name, type=kind)
        if attr.has_default and attr.default is not None:
            attr_proto.default_value.CopyFrom(attr_to_proto(attr.default, kind))
        if attr.allowed:
            attr_proto.allowed_values.CopyFrom(attr_to_proto(list(attr.allowed), f"list({kind})"))
        if attr.minimum is not None:
            attr_proto.has_minimum = True
            attr_proto.minimum = attr.minimum
    return proto


def stripped_op_list_for_graph(graph_def: Any) -> Any:
    """OpList of the signatures of the op types `graph_def` uses, sorted by name."""
    op_list = op_def_pb2.OpList()
    for name in sorted({node.op for node in graph_def.node}):
        try:
            op_list.op.append(op_def_to_proto(get_op_def(name)))
        except ValueError:
            continue  # an op type unknown here: leave it to the consumer's registry
    return op_list


def _strip_default_attrs(graph_def: Any) -> None:
    for node in graph_def.node:
        try:
            definition = get_op_def(node.op)
        except ValueError:
            continue
        for name, attr in definition.attrs.items():
            if attr.has_default and attr.default is not None and name in node.attr and \
                    node.attr[name] == attr_to_proto(attr.default, attr.kind):
                del node.attr[name]


# ---------------------------------------------------------------------------------------------
# Collections
# ---------------------------------------------------------------------------------------------
def _kind_of(item: Any) -> str:
    if isinstance(item, (str, bytes)):
        return "bytes_list"
    if isinstance(item, int) and not isinstance(item, bool):
        return "int64_list"
    if isinstance(item, float):
        return "float_list"
    if isinstance(item, (_graph.Tensor, _graph.Operation)):
        return "node_list"
    if isinstance(item, any_pb2.Any):  # e.g. SavedModel's packed AssetFileDefs
        return "any_list"
    raise TypeError(f"no proto function is registered for items of type {type(item).__name__}")


def _add_collection_def(meta_graph_def: Any, key: str, graph: _graph.Graph, export_scope: Optional[str]) -> None:
    """Adds collection `key` to `meta_graph_def`; items that cannot be serialized are skipped
    with a warning, as TF does (e.g. Python objects with no registered proto function)."""
    items = graph.get_collection(key)
    if not items:
        return
    col_def = meta_graph_def.collection_def[key]
    try:
        proto_type, to_proto, _ = _PROTO_FUNCTIONS.get(key, (None, None, None))
        if proto_type is not None and to_proto is not None:
            for item in items:
                proto = to_proto(item, export_scope=export_scope)
                if proto is not None:
                    col_def.bytes_list.value.append(proto.SerializeToString())
            if not col_def.bytes_list.value:  # no item in the export scope: no empty entry
                del meta_graph_def.collection_def[key]
            return
        kind = _kind_of(items[0])
        if kind == "node_list":
            names = [strip_name_scope(x.name, export_scope) for x in items
                     if export_scope is None or x.name.startswith(export_scope.rstrip("/") + "/")]
            col_def.node_list.value.extend(names)
        elif kind == "bytes_list":
            col_def.bytes_list.value.extend(x if isinstance(x, bytes) else x.encode("utf-8") for x in items)
        else:
            getattr(col_def, kind).value.extend(items)
    except (AttributeError, TypeError, ValueError) as err:
        _log.warning("Issue encountered when serializing %s: %s. Type is unsupported, or the types "
                     "of the items don't match field type in CollectionDef.", key, err)
        del meta_graph_def.collection_def[key]


def _restore_collection(graph: _graph.Graph, key: str, col_def: Any, import_scope: Optional[str]) -> None:
    kind = col_def.WhichOneof("kind")
    if kind is None:
        _log.error("Cannot identify data type for collection %s. Skipping.", key)
        return
    proto_type, _, from_proto = _PROTO_FUNCTIONS.get(key, (None, None, None))
    if from_proto is not None and proto_type is not None and kind == "bytes_list":
        for value in col_def.bytes_list.value:
            graph.add_to_collection(key, from_proto(proto_type.FromString(value), import_scope=import_scope))
        return
    values = getattr(col_def, kind).value
    if kind == "node_list":
        for value in values:
            graph.add_to_collection(key, graph.as_graph_element(prepend_name_scope(value, import_scope)))
    elif kind == "int64_list":
        for value in values:
            graph.add_to_collection(key, int(value))
    elif kind == "float_list":
        for value in values:
            graph.add_to_collection(key, float(value))
    elif kind == "bytes_list":
        for value in values:
            graph.add_to_collection(key, value)
    else:
        for value in values:
            graph.add_to_collection(key, value)


# ---------------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------------
def _scoped_graph_def(graph: _graph.Graph, export_scope: Optional[str], graph_def: Any) -> list[str]:
    """Builds in `graph_def` the nodes under `export_scope`, names stripped of it; inputs from
    outside the scope become `$unbound_inputs_<name>` (to be mapped when importing). Returns
    those outside names."""
    graph_to_graph_def(graph, add_shapes=True, graph_def=graph_def)
    if not export_scope:
        return []
    scope = export_scope.rstrip("/") + "/"
    kept = [n for n in graph_def.node if n.name.startswith(scope)]
    unbound: list[str] = []
    del graph_def.node[:]
    for node in kept:
        node.name = node.name[len(scope):]
        for i, inp in enumerate(node.input):
            marker, rest = _split_marker(inp)
            if rest.startswith(scope):
                node.input[i] = marker + rest[len(scope):]
            else:
                node.input[i] = f"{marker}{_UNBOUND_PREFIX}{rest}"
                unbound.append(rest)
        if "_class" in node.attr:
            node.attr["_class"].list.s[:] = [strip_name_scope(s.decode(), export_scope).encode()
                                             for s in node.attr["_class"].list.s]
        graph_def.node.append(node)
    return sorted(set(unbound))


def create_meta_graph_def(meta_info_def: Any = None, graph_def: Any = None, saver_def: Any = None,
                          collection_list: Optional[Sequence[str]] = None, graph: Optional[_graph.Graph] = None,
                          export_scope: Optional[str] = None, clear_devices: bool = False,
                          strip_default_attrs: bool = False,
                          unbound_inputs_col_name: str = "unbound_inputs") -> Any:
    """Builds the MetaGraphDef of `graph` (the default graph when None)."""
    graph = graph or _graph.get_default_graph()
    meta_graph_def = meta_graph_pb2.MetaGraphDef()
    if meta_info_def is not None:
        meta_graph_def.meta_info_def.CopyFrom(meta_info_def)
    unbound: list[str] = []
    if graph_def is None:
        unbound = _scoped_graph_def(graph, export_scope, meta_graph_def.graph_def)
    else:
        meta_graph_def.graph_def.CopyFrom(graph_def)
    graph_def = meta_graph_def.graph_def
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    if strip_default_attrs:
        _strip_default_attrs(graph_def)
        meta_graph_def.meta_info_def.stripped_default_attrs = True
    info = meta_graph_def.meta_info_def
    info.stripped_op_list.CopyFrom(stripped_op_list_for_graph(graph_def))
    if not info.tensorflow_version:
        # TF parses this as a version number (and checks >= 1.9); ours is the TF1 API we follow.
        info.tensorflow_version = TF_API_VERSION
        info.tensorflow_git_version = _package_version()
    if saver_def is not None:
        meta_graph_def.saver_def.CopyFrom(saver_def)
    keys = graph.get_all_collection_keys() if collection_list is None else list(collection_list)
    for key in keys:
        _add_collection_def(meta_graph_def, key, graph, export_scope)
    if unbound:
        meta_graph_def.collection_def[unbound_inputs_col_name].bytes_list.value.extend(
            u.encode("utf-8") for u in unbound)
    return meta_graph_def


def _package_version() -> str:
    try:
        from importlib.metadata import version
        return f"tensorweave {version('tensorweave')}"
    except Exception:  # noqa: BLE001  (not installed as a distribution)
        return "tensorweave"


def export_scoped_meta_graph(filename: Optional[str] = None, graph_def: Any = None,
                             graph: Optional[_graph.Graph] = None, export_scope: Optional[str] = None,
                             as_text: bool = False, unbound_inputs_col_name: str = "unbound_inputs",
                             clear_devices: bool = False, saver_def: Any = None,
                             clear_extraneous_savers: bool = False, strip_default_attrs: bool = False,
                             meta_info_def: Any = None, collection_list: Optional[Sequence[str]] = None,
                             **kwargs: Any) -> tuple[Any, dict[str, Any]]:
    """Exports the graph (or its `export_scope` part) as a MetaGraphDef, written to `filename`
    when given (atomically); returns it and the exported variables by stripped name."""
    graph = graph or _graph.get_default_graph()
    meta_graph_def = create_meta_graph_def(meta_info_def, graph_def, saver_def, collection_list, graph,
                                           export_scope, clear_devices, strip_default_attrs,
                                           unbound_inputs_col_name)
    if clear_extraneous_savers and saver_def is not None:
        meta_graph_def.collection_def.pop("savers", None)
    if filename:
        write_graph(meta_graph_def, os.path.dirname(filename), os.path.basename(filename), as_text)
    var_list = {}
    for v in graph.get_collection(_graph.GraphKeys.GLOBAL_VARIABLES):
        if export_scope is None or v.name.startswith(export_scope.rstrip("/") + "/"):
            var_list[strip_name_scope(v.name, export_scope)] = v
    return meta_graph_def, var_list


# ---------------------------------------------------------------------------------------------
# Import
# ---------------------------------------------------------------------------------------------
def read_meta_graph_file(filename: str) -> Any:
    """A MetaGraphDef from a binary or text protobuf file (IOError if it does not exist)."""
    meta_graph_def = meta_graph_pb2.MetaGraphDef()
    if not os.path.exists(filename):
        raise IOError(f"File {filename} does not exist.")
    with open(filename, "rb") as f:
        data = f.read()
    try:
        meta_graph_def.ParseFromString(data)
        return meta_graph_def
    except message.DecodeError:
        pass
    try:
        text_format.Merge(data.decode("utf-8"), meta_graph_def)
    except (text_format.ParseError, UnicodeDecodeError) as err:
        raise IOError(f"Cannot parse file {filename}: {err}.") from None
    return meta_graph_def


def import_scoped_meta_graph_with_return_elements(
        meta_graph_or_file: Any, clear_devices: bool = False, graph: Optional[_graph.Graph] = None,
        import_scope: Optional[str] = None, input_map: Optional[dict[str, Any]] = None,
        unbound_inputs_col_name: str = "unbound_inputs", restore_collections_predicate: Callable = lambda k: True,
        return_elements: Optional[Sequence[str]] = None) -> tuple[dict[str, Any], Any]:
    """Recreates the graph and collections of a MetaGraphDef (or file) in `graph`, under
    `import_scope`; returns (imported variables by name, requested return elements)."""
    meta_graph_def = (meta_graph_or_file if isinstance(meta_graph_or_file, meta_graph_pb2.MetaGraphDef)
                      else read_meta_graph_file(meta_graph_or_file))
    graph = graph or _graph.get_default_graph()
    input_map = {(k if k.startswith(_UNBOUND_PREFIX) or k.startswith("^") else f"{_UNBOUND_PREFIX}{k}"
                  if _is_unbound(meta_graph_def, k, unbound_inputs_col_name) else k): v
                 for k, v in (input_map or {}).items()}
    _check_unbound(meta_graph_def, input_map, unbound_inputs_col_name)
    graph_def = meta_graph_def.graph_def
    if clear_devices:
        graph_def = type(graph_def)()
        graph_def.CopyFrom(meta_graph_def.graph_def)
        for node in graph_def.node:
            node.device = ""
    with graph.as_default():
        # The scope the importer will use (uniquified like any name scope); collections follow it.
        import_scope = graph.unique_name(import_scope.rstrip("/"), mark_as_used=False) if import_scope else None
        returned = import_graph_def(graph_def, input_map=input_map or None, return_elements=return_elements,
                                    name=import_scope or "",
                                    producer_op_list=meta_graph_def.meta_info_def.stripped_op_list or None)
        for key in sorted(meta_graph_def.collection_def):
            if key == unbound_inputs_col_name or not restore_collections_predicate(key):
                continue
            _restore_collection(graph, key, meta_graph_def.collection_def[key], import_scope)
    var_list = {}
    for v in graph.get_collection(_graph.GraphKeys.GLOBAL_VARIABLES, scope=import_scope):
        var_list[strip_name_scope(v.name, import_scope)] = v
    return var_list, returned


def _is_unbound(meta_graph_def: Any, key: str, col_name: str) -> bool:
    col = meta_graph_def.collection_def.get(col_name)
    if col is None:
        return False
    name = key.split(":")[0]
    return any(v.decode("utf-8") == name for v in col.bytes_list.value)


def _check_unbound(meta_graph_def: Any, input_map: dict[str, Any], col_name: str) -> None:
    col = meta_graph_def.collection_def.get(col_name)
    if col is None:
        return
    missing = [v.decode("utf-8") for v in col.bytes_list.value
               if not any(k.split(":")[0] == f"{_UNBOUND_PREFIX}{v.decode('utf-8')}" for k in input_map)]
    if missing:
        raise ValueError(f"Graph contains unbound inputs: {missing}. Must provide these inputs through "
                         "input_map.")


def import_scoped_meta_graph(meta_graph_or_file: Any, clear_devices: bool = False,
                             graph: Optional[_graph.Graph] = None, import_scope: Optional[str] = None,
                             input_map: Optional[dict[str, Any]] = None,
                             unbound_inputs_col_name: str = "unbound_inputs",
                             restore_collections_predicate: Callable = lambda k: True) -> dict[str, Any]:
    """Like import_scoped_meta_graph_with_return_elements, returning only the variables."""
    return import_scoped_meta_graph_with_return_elements(
        meta_graph_or_file, clear_devices, graph, import_scope, input_map, unbound_inputs_col_name,
        restore_collections_predicate)[0]
