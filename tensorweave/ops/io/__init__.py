"""File I/O ops: whole-file reads and writes, and the checkpoint ops SaveV2/RestoreV2."""
