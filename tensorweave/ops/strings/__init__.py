"""String ops and parsing ops (decode_csv, decode_raw, string_to_number)."""
