"""File I/O ops: whole-file reads and writes and file matching (file_io), and the checkpoint ops
SaveV2/RestoreV2 and their TF1 predecessors (save_restore).

The family's public names (TF's io_ops namespace) are re-exported here."""
from tensorweave.ops.io.file_io import matching_files, read_file, write_file
from tensorweave.ops.io.save_restore import (  # noqa: F401 (the Saver's ops, not TF public API)
    merge_v2_checkpoints, restore, restore_slice, restore_v2, save, save_slices, save_v2,
    sharded_filename, sharded_filespec)

__all__ = ["read_file", "write_file", "matching_files"]
