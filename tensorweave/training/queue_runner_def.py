"""QueueRunnerDef, the protocol buffer a MetaGraphDef stores its queue runners in (TF's
tensorflow/core/protobuf/queue_runner.proto; no installed package ships it, so its descriptor is
declared here). Field numbers and types follow TF's message, so the bytes are interchangeable:
an enum list (`error.Code`) and a packed int32 list encode the same.

    message QueueRunnerDef {
      string queue_name = 1;
      repeated string enqueue_op_name = 2;
      string close_op_name = 3;
      string cancel_op_name = 4;
      repeated error.Code queue_closed_exception_types = 5;
    }
"""
from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def _message_class() -> Any:
    proto = descriptor_pb2.FileDescriptorProto(name="tensorweave/queue_runner.proto",
                                               package="tensorflow", syntax="proto3")
    message = proto.message_type.add(name="QueueRunnerDef")
    field = descriptor_pb2.FieldDescriptorProto
    for number, name, kind, label in (
            (1, "queue_name", field.TYPE_STRING, field.LABEL_OPTIONAL),
            (2, "enqueue_op_name", field.TYPE_STRING, field.LABEL_REPEATED),
            (3, "close_op_name", field.TYPE_STRING, field.LABEL_OPTIONAL),
            (4, "cancel_op_name", field.TYPE_STRING, field.LABEL_OPTIONAL),
            (5, "queue_closed_exception_types", field.TYPE_INT32, field.LABEL_REPEATED)):
        message.field.add(name=name, number=number, type=kind, label=label)
    pool = descriptor_pool.DescriptorPool()  # private: never clashes with a TF install's message
    pool.Add(proto)
    descriptor = pool.FindMessageTypeByName("tensorflow.QueueRunnerDef")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # protobuf < 4.22


QueueRunnerDef = _message_class()
