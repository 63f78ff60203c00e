"""tf.train.Example and its parts (TF's tensorflow/core/example/feature.proto and
example.proto; tensorboard's compat protos do not ship them, so their descriptors are declared
here). Field numbers, types and packing follow TF's messages, so a serialized Example is
byte-for-byte what TensorFlow writes and reads:

    message BytesList { repeated bytes value = 1; }
    message FloatList { repeated float value = 1 [packed = true]; }
    message Int64List { repeated int64 value = 1 [packed = true]; }
    message Feature { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
                                   Int64List int64_list = 3; } }
    message Features { map<string, Feature> feature = 1; }
    message FeatureList { repeated Feature feature = 1; }
    message FeatureLists { map<string, FeatureList> feature_list = 1; }
    message Example { Features features = 1; }
    message SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }
"""
from __future__ import annotations

from google.protobuf import descriptor_pb2

from tensorweave.lib.proto_schema import MANY, MESSAGE, ONE, STRING, add_fields, message_classes, new_file

_F = descriptor_pb2.FieldDescriptorProto
_FILE = new_file("tensorweave/example.proto")


def _list_message(name: str, kind: int) -> None:
    message = _FILE.message_type.add(name=name)
    add_fields(message, ((1, "value", kind, MANY),))
    if kind != _F.TYPE_BYTES:  # proto3 packs repeated scalars by default; say so, as TF's file does
        message.field[0].options.packed = True


def _map_message(name: str, field: str, value_type: str) -> None:
    """A message whose field 1 is map<string, value_type> (a repeated nested entry message)."""
    message = _FILE.message_type.add(name=name)
    entry_name = "".join(part.capitalize() for part in field.split("_")) + "Entry"
    entry = message.nested_type.add(name=entry_name)
    entry.options.map_entry = True
    add_fields(entry, ((1, "key", STRING, ONE), (2, "value", MESSAGE, ONE, value_type)))
    add_fields(message, ((1, field, MESSAGE, MANY, f"{name}.{entry_name}"),))


_list_message("BytesList", _F.TYPE_BYTES)
_list_message("FloatList", _F.TYPE_FLOAT)
_list_message("Int64List", _F.TYPE_INT64)
_feature = _FILE.message_type.add(name="Feature")
_feature.oneof_decl.add(name="kind")
add_fields(_feature, ((1, "bytes_list", MESSAGE, ONE, "BytesList"), (2, "float_list", MESSAGE, ONE, "FloatList"),
                      (3, "int64_list", MESSAGE, ONE, "Int64List")))
for _field in _feature.field:
    _field.oneof_index = 0
_map_message("Features", "feature", "Feature")
add_fields(_FILE.message_type.add(name="FeatureList"), ((1, "feature", MESSAGE, MANY, "Feature"),))
_map_message("FeatureLists", "feature_list", "FeatureList")
add_fields(_FILE.message_type.add(name="Example"), ((1, "features", MESSAGE, ONE, "Features"),))
add_fields(_FILE.message_type.add(name="SequenceExample"), (
    (1, "context", MESSAGE, ONE, "Features"), (2, "feature_lists", MESSAGE, ONE, "FeatureLists")))

(BytesList, FloatList, Int64List, Feature, Features, FeatureList, FeatureLists, Example,
 SequenceExample) = message_classes(_FILE, [
     "BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList", "FeatureLists", "Example",
     "SequenceExample"])
