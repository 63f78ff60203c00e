"""Protocol-buffer messages declared in code, for TF messages that no installed package ships
(tensorboard's compat protos cover graphs, checkpoints and summaries, not queue runners or
control-flow contexts). A module lists the fields with TF's numbers and types, so what it
writes and reads is byte-compatible with TF's files; the messages live in a private descriptor
pool, so they never clash with a TensorFlow installed next to us."""
from __future__ import annotations

from typing import Any, Sequence

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
STRING, INT32, BOOL, MESSAGE = _F.TYPE_STRING, _F.TYPE_INT32, _F.TYPE_BOOL, _F.TYPE_MESSAGE
ONE, MANY = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
PACKAGE = "tensorflow"


def new_file(name: str) -> Any:
    """An empty proto3 file in TF's package, to add message types to."""
    return descriptor_pb2.FileDescriptorProto(name=name, package=PACKAGE, syntax="proto3")


def add_fields(message: Any, fields: Sequence[tuple]) -> None:
    """Fields as (number, name, type, label) or (number, name, MESSAGE, label, message name)."""
    for number, name, kind, label, *type_name in fields:
        field = message.field.add(name=name, number=number, type=kind, label=label)
        if type_name and type_name[0]:
            field.type_name = f".{PACKAGE}.{type_name[0]}"


def message_classes(file_proto: Any, names: Sequence[str]) -> list[Any]:
    """The Python classes of the messages `names` declared in `file_proto`."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    classes = []
    for name in names:
        descriptor = pool.FindMessageTypeByName(f"{PACKAGE}.{name}")
        if hasattr(message_factory, "GetMessageClass"):
            classes.append(message_factory.GetMessageClass(descriptor))
        else:  # protobuf < 4.22
            classes.append(message_factory.MessageFactory(pool).GetPrototype(descriptor))
    return classes
