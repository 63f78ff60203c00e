"""The checkpoint protobuf messages that `tensorboard.compat.proto` does not ship, declared with
TensorFlow's field numbers so the files are wire- and text-compatible with TF's:

- `BundleHeaderProto`, `BundleEntryProto`, `TensorSliceProto` (tensor_bundle.proto,
  tensor_slice.proto): the values of a checkpoint's index table;
- `CheckpointState` (checkpoint_state.proto): the text `checkpoint` file next to checkpoints.

They are added to the default descriptor pool under TF's package name `tensorflow`, reusing
tensorboard's TensorShapeProto, DataType and VersionDef.
"""
from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tensorboard.compat.proto import tensor_shape_pb2, types_pb2, versions_pb2

_F = descriptor_pb2.FieldDescriptorProto
_FILE = "tensorweave/lib/checkpoint_protos.proto"


def _field(msg: descriptor_pb2.DescriptorProto, name: str, number: int, kind: int,
           repeated: bool = False, type_name: str = "", oneof: int = -1) -> None:
    field = msg.field.add(name=name, number=number, type=kind,
                          label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
    if type_name:
        field.type_name = type_name
    if oneof >= 0:
        field.oneof_index = oneof


def _file_proto() -> descriptor_pb2.FileDescriptorProto:
    fdp = descriptor_pb2.FileDescriptorProto(
        name=_FILE, package="tensorflow", syntax="proto3",
        dependency=[tensor_shape_pb2.DESCRIPTOR.name, types_pb2.DESCRIPTOR.name,
                    versions_pb2.DESCRIPTOR.name])
    shape, dtype, version = (f".{tensor_shape_pb2.TensorShapeProto.DESCRIPTOR.full_name}",
                             f".{types_pb2.DESCRIPTOR.enum_types_by_name['DataType'].full_name}",
                             f".{versions_pb2.VersionDef.DESCRIPTOR.full_name}")

    slice_msg = fdp.message_type.add(name="TensorSliceProto")
    extent = slice_msg.nested_type.add(name="Extent")
    extent.oneof_decl.add(name="has_length")
    _field(extent, "start", 1, _F.TYPE_INT64)
    _field(extent, "length", 2, _F.TYPE_INT64, oneof=0)
    _field(slice_msg, "extent", 1, _F.TYPE_MESSAGE, True, ".tensorflow.TensorSliceProto.Extent")

    header = fdp.message_type.add(name="BundleHeaderProto")
    endian = header.enum_type.add(name="Endianness")
    endian.value.add(name="LITTLE", number=0)
    endian.value.add(name="BIG", number=1)
    _field(header, "num_shards", 1, _F.TYPE_INT32)
    _field(header, "endianness", 2, _F.TYPE_ENUM, type_name=".tensorflow.BundleHeaderProto.Endianness")
    _field(header, "version", 3, _F.TYPE_MESSAGE, type_name=version)

    entry = fdp.message_type.add(name="BundleEntryProto")
    _field(entry, "dtype", 1, _F.TYPE_ENUM, type_name=dtype)
    _field(entry, "shape", 2, _F.TYPE_MESSAGE, type_name=shape)
    _field(entry, "shard_id", 3, _F.TYPE_INT32)
    _field(entry, "offset", 4, _F.TYPE_INT64)
    _field(entry, "size", 5, _F.TYPE_INT64)
    _field(entry, "crc32c", 6, _F.TYPE_FIXED32)
    _field(entry, "slices", 7, _F.TYPE_MESSAGE, True, ".tensorflow.TensorSliceProto")

    state = fdp.message_type.add(name="CheckpointState")
    _field(state, "model_checkpoint_path", 1, _F.TYPE_STRING)
    _field(state, "all_model_checkpoint_paths", 2, _F.TYPE_STRING, True)
    _field(state, "all_model_checkpoint_timestamps", 3, _F.TYPE_DOUBLE, True)
    _field(state, "last_preserved_timestamp", 4, _F.TYPE_DOUBLE)
    return fdp


def _register() -> dict[str, type]:
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(_FILE)
    except KeyError:
        pool.AddSerializedFile(_file_proto().SerializeToString())
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"tensorflow.{name}"))
            for name in ("TensorSliceProto", "BundleHeaderProto", "BundleEntryProto", "CheckpointState")}


_CLASSES = _register()
TensorSliceProto = _CLASSES["TensorSliceProto"]
BundleHeaderProto = _CLASSES["BundleHeaderProto"]
BundleEntryProto = _CLASSES["BundleEntryProto"]
CheckpointState = _CLASSES["CheckpointState"]
