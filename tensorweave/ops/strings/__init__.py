"""String ops (string_ops) and parsing ops (parsing: decode_csv, decode_raw, string_to_number).

The family's public names (TF's string_ops and parsing_ops namespaces) are re-exported here."""
from tensorweave.ops.strings.parsing import decode_csv, decode_raw, string_to_number
from tensorweave.ops.strings.string_ops import (  # noqa: F401 (string_format, ...: under tf.strings only)
    as_string, regex_replace, string_format, string_join, string_length, string_split, string_strip,
    strings_split, substr)

__all__ = ["string_split", "substr", "string_join", "as_string", "string_strip", "regex_replace",
           "string_to_number", "decode_csv", "decode_raw"]
