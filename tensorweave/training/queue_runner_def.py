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

from tensorweave.lib.proto_schema import INT32, MANY, ONE, STRING, add_fields, message_classes, new_file

_FILE = new_file("tensorweave/queue_runner.proto")
add_fields(_FILE.message_type.add(name="QueueRunnerDef"), (
    (1, "queue_name", STRING, ONE), (2, "enqueue_op_name", STRING, MANY),
    (3, "close_op_name", STRING, ONE), (4, "cancel_op_name", STRING, ONE),
    (5, "queue_closed_exception_types", INT32, MANY)))
(QueueRunnerDef,) = message_classes(_FILE, ["QueueRunnerDef"])
