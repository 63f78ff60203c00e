"""The cluster protocol buffers: `ClusterDef` and `JobDef` (TF's cluster.proto, shipped by
tensorboard, so they are TensorFlow's own schema), and `ServerDef` with the device-filter messages
(TF's tensorflow_server.proto and device_filters.proto), which no installed package ships and are
declared here. Field numbers and types follow TF's, so the bytes are interchangeable with TF's:

    message ServerDef {
      ClusterDef cluster = 1;  string job_name = 2;  int32 replica = 8;  int32 task_index = 3;
      ConfigProto default_session_config = 4;  string protocol = 5;  int32 port = 6;
      ClusterDeviceFilters cluster_device_filters = 7;
    }
    message TaskDeviceFilters { repeated string device_filters = 1; }
    message JobDeviceFilters { string name = 1; map<int32, TaskDeviceFilters> tasks = 2; }
    message ClusterDeviceFilters { repeated JobDeviceFilters jobs = 1; }

The declared messages live in their own package ("tensorweave"), so they never clash with a
TensorFlow imported into the same process."""
from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tensorboard.compat.proto import cluster_pb2, config_pb2

ClusterDef = cluster_pb2.ClusterDef
JobDef = cluster_pb2.JobDef

_F = descriptor_pb2.FieldDescriptorProto
_FILE = "tensorweave/tensorflow_server.proto"
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED


def _field(message: descriptor_pb2.DescriptorProto, name: str, number: int, kind: int,
           label: int = _OPTIONAL, type_name: str = "") -> None:
    field = message.field.add(name=name, number=number, type=kind, label=label)
    if type_name:  # set only for message fields: an empty type_name still counts as set
        field.type_name = type_name


def _file_proto() -> descriptor_pb2.FileDescriptorProto:
    file_proto = descriptor_pb2.FileDescriptorProto(
        name=_FILE, package="tensorweave", syntax="proto3",
        dependency=[cluster_pb2.DESCRIPTOR.name, config_pb2.DESCRIPTOR.name])
    task = file_proto.message_type.add(name="TaskDeviceFilters")
    _field(task, "device_filters", 1, _F.TYPE_STRING, _REPEATED)

    job = file_proto.message_type.add(name="JobDeviceFilters")
    _field(job, "name", 1, _F.TYPE_STRING)
    _field(job, "tasks", 2, _F.TYPE_MESSAGE, _REPEATED, ".tensorweave.JobDeviceFilters.TasksEntry")
    entry = job.nested_type.add(name="TasksEntry")  # a proto3 map<int32, TaskDeviceFilters>
    entry.options.map_entry = True
    _field(entry, "key", 1, _F.TYPE_INT32)
    _field(entry, "value", 2, _F.TYPE_MESSAGE, type_name=".tensorweave.TaskDeviceFilters")

    cluster = file_proto.message_type.add(name="ClusterDeviceFilters")
    _field(cluster, "jobs", 1, _F.TYPE_MESSAGE, _REPEATED, ".tensorweave.JobDeviceFilters")

    server = file_proto.message_type.add(name="ServerDef")
    _field(server, "cluster", 1, _F.TYPE_MESSAGE, type_name=f".{ClusterDef.DESCRIPTOR.full_name}")
    _field(server, "job_name", 2, _F.TYPE_STRING)
    _field(server, "replica", 8, _F.TYPE_INT32)
    _field(server, "task_index", 3, _F.TYPE_INT32)
    _field(server, "default_session_config", 4, _F.TYPE_MESSAGE,
           type_name=f".{config_pb2.ConfigProto.DESCRIPTOR.full_name}")
    _field(server, "protocol", 5, _F.TYPE_STRING)
    _field(server, "port", 6, _F.TYPE_INT32)
    _field(server, "cluster_device_filters", 7, _F.TYPE_MESSAGE, type_name=".tensorweave.ClusterDeviceFilters")
    return file_proto


def _message_class(pool: descriptor_pool.DescriptorPool, name: str) -> type:
    descriptor = pool.FindMessageTypeByName(f"tensorweave.{name}")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # protobuf < 4.22


def _declare() -> tuple[type, type, type, type]:
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(_FILE)
    except KeyError:
        pool.Add(_file_proto())
    return (_message_class(pool, "ServerDef"), _message_class(pool, "ClusterDeviceFilters"),
            _message_class(pool, "JobDeviceFilters"), _message_class(pool, "TaskDeviceFilters"))


ServerDef, ClusterDeviceFilters, JobDeviceFilters, TaskDeviceFilters = _declare()
