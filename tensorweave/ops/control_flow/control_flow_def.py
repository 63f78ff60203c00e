"""The protocol buffers a MetaGraphDef stores control-flow contexts in (TF's
tensorflow/core/protobuf/control_flow.proto; no installed package ships it, so its descriptors
are declared here). Field numbers and types follow TF's messages, so the bytes are
interchangeable with TF's files.

    message ValuesDef {
      repeated string values = 1;                  // tensors (and ops) of the context
      map<string, string> external_values = 2;     // outside tensor -> its version inside
    }
    message ControlFlowContextDef {
      oneof ctxt { CondContextDef cond_ctxt = 1; WhileContextDef while_ctxt = 2; }
    }
    message CondContextDef {
      string context_name = 1; string pred_name = 2; string pivot_name = 3; int32 branch = 4;
      ValuesDef values_def = 5; repeated ControlFlowContextDef nested_contexts = 6;
    }
    message WhileContextDef {
      string context_name = 1; int32 parallel_iterations = 2; bool back_prop = 3;
      bool swap_memory = 4; string pivot_name = 5; string pivot_for_pred_name = 6;
      string pivot_for_body_name = 7; repeated string loop_exit_names = 8;
      ValuesDef values_def = 9; repeated string loop_enter_names = 10;
      string maximum_iterations_name = 11; repeated ControlFlowContextDef nested_contexts = 12;
    }
"""
from __future__ import annotations

from tensorweave.lib.proto_schema import (
    BOOL,
    INT32,
    MANY,
    MESSAGE,
    ONE,
    STRING,
    add_fields,
    message_classes,
    new_file,
)

_FILE = new_file("tensorweave/control_flow.proto")
_values = _FILE.message_type.add(name="ValuesDef")
_entry = _values.nested_type.add(name="ExternalValuesEntry")  # map<string, string>
_entry.options.map_entry = True
add_fields(_entry, ((1, "key", STRING, ONE), (2, "value", STRING, ONE)))
add_fields(_values, ((1, "values", STRING, MANY),
                     (2, "external_values", MESSAGE, MANY, "ValuesDef.ExternalValuesEntry")))
_context = _FILE.message_type.add(name="ControlFlowContextDef")
_context.oneof_decl.add(name="ctxt")
add_fields(_context, ((1, "cond_ctxt", MESSAGE, ONE, "CondContextDef"),
                      (2, "while_ctxt", MESSAGE, ONE, "WhileContextDef")))
for _field in _context.field:
    _field.oneof_index = 0
add_fields(_FILE.message_type.add(name="CondContextDef"), (
    (1, "context_name", STRING, ONE), (2, "pred_name", STRING, ONE),
    (3, "pivot_name", STRING, ONE), (4, "branch", INT32, ONE),
    (5, "values_def", MESSAGE, ONE, "ValuesDef"),
    (6, "nested_contexts", MESSAGE, MANY, "ControlFlowContextDef")))
add_fields(_FILE.message_type.add(name="WhileContextDef"), (
    (1, "context_name", STRING, ONE), (2, "parallel_iterations", INT32, ONE),
    (3, "back_prop", BOOL, ONE), (4, "swap_memory", BOOL, ONE),
    (5, "pivot_name", STRING, ONE), (6, "pivot_for_pred_name", STRING, ONE),
    (7, "pivot_for_body_name", STRING, ONE), (8, "loop_exit_names", STRING, MANY),
    (9, "values_def", MESSAGE, ONE, "ValuesDef"), (10, "loop_enter_names", STRING, MANY),
    (11, "maximum_iterations_name", STRING, ONE),
    (12, "nested_contexts", MESSAGE, MANY, "ControlFlowContextDef")))

ValuesDef, ControlFlowContextDef, CondContextDef, WhileContextDef = message_classes(
    _FILE, ["ValuesDef", "ControlFlowContextDef", "CondContextDef", "WhileContextDef"])
