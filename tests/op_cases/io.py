"""Op cases for file and checkpoint ops: writing, reading and matching files, V1 and V2
checkpoints (save, restore, slices, merging shards) and sharded file names. Each build starts
from an empty directory of its own name, so graph mode and eager mode see the same paths."""
import os
import shutil
import tempfile

import numpy as np

import tensorweave as tf
from tensorweave.ops.io import save_restore
from tests.op_cases import OpCase

_ROOT = os.path.join(tempfile.gettempdir(), f"tw_op_cases_{os.getpid()}")


def _fresh(name):
    path = os.path.join(_ROOT, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def _then(before, make):
    with tf.control_dependencies(before if isinstance(before, list) else [before]):
        return make()


def _files(x):
    root = _fresh("files")
    name = os.path.join(root, "a.bin")
    written = tf.write_file(name, tf.as_string(x[0]))
    also = tf.write_file(os.path.join(root, "b.bin"), tf.constant("bee"))
    content = _then([written, also], lambda: tf.read_file(name))
    found = _then([written, also], lambda: tf.io.matching_files(os.path.join(root, "*.bin")))
    return [content, tf.strings.regex_replace(found, ".*/", "")]


def _checkpoints(x):
    root = _fresh("checkpoints")
    v2 = os.path.join(root, "v2")
    saved = save_restore.save_v2(v2, ["x", "y"], ["", ""], [x, x * 2.0])
    restored = _then(saved, lambda: save_restore.restore_v2(v2, ["y", "x"], ["", "3 2 1,2:-"],
                                                            [tf.float32, tf.float32]))
    shard = os.path.join(root, "shard")
    saved_shard = save_restore.save_v2(shard, ["z"], [""], [x + 1.0])
    merged_prefix = os.path.join(root, "merged")
    # merging moves the shards' files: after the restore that reads one of them
    merged = _then([saved_shard] + list(restored), lambda: save_restore.merge_v2_checkpoints(
        [v2, shard], merged_prefix, delete_old_dirs=False))
    from_merged = _then(merged, lambda: save_restore.restore_v2(merged_prefix, ["z"], [""], [tf.float32]))
    v1 = os.path.join(root, "v1")
    saved_v1 = save_restore.save(v1, ["a", "b"], [x, tf.constant([1, 2, 3])])
    v1_a = _then(saved_v1, lambda: save_restore.restore(v1, "a", tf.float32))
    sliced = os.path.join(root, "sliced")
    saved_slices = save_restore.save_slices(sliced, ["s"], ["6 2 0,3:-"], [x])
    v1_slice = _then(saved_slices, lambda: save_restore.restore_slice(sliced, "s", "6 2 1,2:-", tf.float32))
    names = [save_restore.sharded_filename("model", 1, 4), save_restore.sharded_filespec("model", 4)]
    return list(restored) + list(from_merged) + [v1_a, v1_slice] + names


CASES = [
    OpCase("io:files", _files, lambda rng: [rng.randn(2).astype(np.float32)],
           ("WriteFile", "ReadFile", "MatchingFiles")),
    OpCase("io:checkpoints", _checkpoints, lambda rng: [rng.randn(3, 2).astype(np.float32)],
           ("SaveV2", "RestoreV2", "MergeV2Checkpoints", "Save", "Restore", "SaveSlices", "RestoreSlice",
            "ShardedFilename", "ShardedFilespec")),
]
