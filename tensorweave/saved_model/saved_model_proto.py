"""The SavedModel protocol buffer (TF's tensorflow/core/protobuf/saved_model.proto), which no
installed package ships; its MetaGraphDefs are tensorboard's, so they are the same Python class
the rest of tensorweave uses. Field numbers and types follow TF's, so the bytes (and the text
format) are interchangeable with TF's saved_model.pb / saved_model.pbtxt.

    message SavedModel {
      int64 saved_model_schema_version = 1;
      repeated MetaGraphDef meta_graphs = 2;
    }

The message is declared in its own package ("tensorweave"), so it never clashes with a
TensorFlow imported into the same process."""
from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tensorboard.compat.proto import meta_graph_pb2

_F = descriptor_pb2.FieldDescriptorProto
_META_GRAPH_FILE = meta_graph_pb2.DESCRIPTOR.name


def _declare() -> type:
    pool = descriptor_pool.Default()
    try:
        descriptor = pool.FindMessageTypeByName("tensorweave.SavedModel")
    except KeyError:
        file_proto = descriptor_pb2.FileDescriptorProto(
            name="tensorweave/saved_model.proto", package="tensorweave", syntax="proto3",
            dependency=[_META_GRAPH_FILE])
        message = file_proto.message_type.add(name="SavedModel")
        message.field.add(name="saved_model_schema_version", number=1, type=_F.TYPE_INT64,
                          label=_F.LABEL_OPTIONAL)
        message.field.add(name="meta_graphs", number=2, type=_F.TYPE_MESSAGE, label=_F.LABEL_REPEATED,
                          type_name=f".{meta_graph_pb2.MetaGraphDef.DESCRIPTOR.full_name}")
        pool.Add(file_proto)
        descriptor = pool.FindMessageTypeByName("tensorweave.SavedModel")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # protobuf < 4.22


SavedModel = _declare()
