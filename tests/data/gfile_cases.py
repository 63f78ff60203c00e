"""tf.gfile / tf.io.gfile cases written once for both libraries: make_tf_gfile_fixtures.py runs them
under TensorFlow 2.21 to record what it does, tests/platform/test_gfile.py under tensorweave to
compare. Each case is `fn(tf, root)` on a fresh directory `root` holding the tree made by `setup`;
its outcome is its (JSON-able) value, or TF's error class and message with `root` written `<root>`.
"""
import os


def setup(root):
    os.makedirs(os.path.join(root, "d", "sub"))
    with open(os.path.join(root, "a.txt"), "wb") as f:
        f.write(b"line one\nline two\n\nlast")
    with open(os.path.join(root, "d", "b.bin"), "wb") as f:
        f.write(bytes(range(256)))
    with open(os.path.join(root, "d", "sub", "c.txt"), "wb") as f:
        f.write("été\n".encode("utf-8"))


def outcome(fn, root):
    try:
        value = fn()
    except Exception as err:  # noqa: BLE001  (recording whatever the library raises)
        message = getattr(err, "message", None) or str(err)
        return {"error": type(err).__name__, "message": message.replace(root, "<root>")}
    return {"value": _jsonable(value, root)}


def _jsonable(value, root):
    if isinstance(value, bytes):
        return {"bytes": list(value)}
    if isinstance(value, str):
        return value.replace(root, "<root>")
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v, root) for k, v in value.items()}
    return value


def p(root, *parts):
    return os.path.join(root, *parts)


def _read_all(tf, path, mode):
    with tf.gfile.GFile(path, mode) as f:
        return f.read()


def _pieces(tf, root):
    with tf.gfile.GFile(p(root, "a.txt"), "r") as f:
        first = f.read(4)
        pos = f.tell()
        line = f.readline()
        rest = f.readlines()
        f.seek(0)
        again = f.read(2)
        f.seek(3, 1)
        mid = f.read(3)
        f.seek(-4, 2)
        tail = f.read()
        return [first, pos, line, rest, again, mid, tail, f.size(), f.tell()]


def _binary_pieces(tf, root):
    with tf.io.gfile.GFile(p(root, "d", "b.bin"), "rb") as f:
        head = f.read(3)
        f.seek(250)
        return [head, f.tell(), f.read(), f.read(), f.size()]


def _iterate(tf, root, mode):
    with tf.gfile.GFile(p(root, "a.txt"), mode) as f:
        return [line for line in f]


def _write_then_read(tf, root, mode, data):
    path = p(root, "new.out")
    with tf.gfile.GFile(path, mode) as f:
        f.write(data)
        told = f.tell()
        f.flush()
    with open(path, "rb") as f:
        return [told, f.read()]


def _append(tf, root):
    path = p(root, "a.txt")
    with tf.gfile.GFile(path, "a") as f:
        f.write("++")
    return _read_all(tf, path, "rb")


def _write_in_read_mode(tf, root):
    with tf.gfile.GFile(p(root, "a.txt"), "r") as f:
        f.write("x")


def _read_in_write_mode(tf, root):
    with tf.gfile.GFile(p(root, "w.out"), "w") as f:
        return f.read()


def _lazy_writers(tf, root):
    """Writers open on their first write: an unwritten "w" GFile neither creates nor truncates."""
    created = p(root, "never.out")
    with tf.gfile.GFile(created, "w"):
        pass
    with tf.gfile.GFile(p(root, "a.txt"), "w"):
        pass
    f = tf.gfile.GFile(created, "w")
    before = os.path.exists(created)
    f.write("x")
    after = os.path.exists(created)
    f.close()
    return [before, after, _read_all(tf, p(root, "a.txt"), "rb")]


def _read_plus(tf, root):
    with tf.gfile.GFile(p(root, "a.txt"), "r+") as f:
        first = f.read(4)
        f.write("zz")
    return [first, _read_all(tf, p(root, "a.txt"), "rb")]


def _append_tell(tf, root):
    with tf.gfile.GFile(p(root, "a.txt"), "a") as f:
        start = f.tell()
        f.write(b"12345")
        return [start, f.tell()]


def _stat(tf, root, name):
    st = tf.gfile.Stat(p(root, name))
    return [st.length, st.is_directory, abs(st.mtime_nsec / 1e9 - os.stat(p(root, name)).st_mtime) < 2.0]


def _walk(tf, root, top, in_order):
    return [[d.replace(root, "<root>"), sorted(ds), sorted(fs)] for d, ds, fs in tf.gfile.Walk(top, in_order)]


def _mutation(tf, root, fn, *check):
    fn()
    return [os.path.exists(p(root, c)) for c in check]


def _listdir(tf, root, name):
    return sorted(tf.gfile.ListDirectory(p(root, name)))


CASES = {
    # reading
    "read_text": lambda tf, root: _read_all(tf, p(root, "a.txt"), "r"),
    "read_binary": lambda tf, root: _read_all(tf, p(root, "a.txt"), "rb"),
    "read_utf8_text": lambda tf, root: _read_all(tf, p(root, "d", "sub", "c.txt"), "r"),
    "read_pieces": _pieces,
    "read_binary_pieces": _binary_pieces,
    "iterate_text": lambda tf, root: _iterate(tf, root, "r"),
    "iterate_binary": lambda tf, root: _iterate(tf, root, "rb"),
    "read_missing": lambda tf, root: _read_all(tf, p(root, "nope.txt"), "r"),
    "read_directory": lambda tf, root: _read_all(tf, p(root, "d"), "r"),
    "open_missing_no_read": lambda tf, root: tf.gfile.GFile(p(root, "nope.txt"), "r").name,
    "size_missing": lambda tf, root: tf.gfile.GFile(p(root, "nope.txt"), "r").size(),
    "fast_gfile": lambda tf, root: tf.gfile.FastGFile(p(root, "a.txt"), "rb").read(),
    "open_alias": lambda tf, root: tf.gfile.Open(p(root, "a.txt"), "r").readline(),
    "file_url_read": lambda tf, root: _read_all(tf, "file://" + p(root, "a.txt"), "rb"),
    "io_gfile_read": lambda tf, root: tf.io.gfile.GFile(p(root, "a.txt")).read(),
    "bad_mode": lambda tf, root: tf.gfile.GFile(p(root, "a.txt"), "rw").read(),
    "write_in_read_mode": _write_in_read_mode,
    "read_in_write_mode": _read_in_write_mode,
    # writing
    "write_text": lambda tf, root: _write_then_read(tf, root, "w", "héllo\nworld"),
    "write_bytes_in_binary": lambda tf, root: _write_then_read(tf, root, "wb", b"\x00\x01\xff"),
    "write_bytes_in_text": lambda tf, root: _write_then_read(tf, root, "w", b"raw bytes"),
    "write_text_in_binary": lambda tf, root: _write_then_read(tf, root, "wb", "text"),
    "append": _append,
    "lazy_writers": _lazy_writers,
    "read_plus_then_write": _read_plus,
    "append_tell": _append_tell,
    "write_into_missing_dir": lambda tf, root: _write_then_read(tf, os.path.join(root, "no", "dir"), "w", "x"),
    # queries
    "exists_file": lambda tf, root: tf.gfile.Exists(p(root, "a.txt")),
    "exists_dir": lambda tf, root: tf.gfile.Exists(p(root, "d")),
    "exists_missing": lambda tf, root: tf.gfile.Exists(p(root, "nope")),
    "exists_file_url": lambda tf, root: tf.gfile.Exists("file://" + p(root, "a.txt")),
    "isdir_dir": lambda tf, root: tf.gfile.IsDirectory(p(root, "d")),
    "isdir_file": lambda tf, root: tf.gfile.IsDirectory(p(root, "a.txt")),
    "isdir_missing": lambda tf, root: tf.gfile.IsDirectory(p(root, "nope")),
    "listdir": lambda tf, root: _listdir(tf, root, "d"),
    "listdir_root": lambda tf, root: _listdir(tf, root, ""),
    "listdir_missing": lambda tf, root: _listdir(tf, root, "nope"),
    "listdir_file": lambda tf, root: _listdir(tf, root, "a.txt"),
    "io_listdir": lambda tf, root: sorted(tf.io.gfile.listdir(p(root, "d"))),
    "glob_star": lambda tf, root: sorted(tf.gfile.Glob(p(root, "*"))),
    "glob_nested": lambda tf, root: sorted(tf.gfile.Glob(p(root, "d", "*", "*.txt"))),
    "glob_none": lambda tf, root: tf.gfile.Glob(p(root, "*.nothing")),
    "glob_question": lambda tf, root: sorted(tf.io.gfile.glob(p(root, "?.txt"))),
    "glob_list": lambda tf, root: sorted(tf.gfile.Glob([p(root, "a.*"), p(root, "d")])),
    "stat_file": lambda tf, root: _stat(tf, root, "a.txt"),
    "stat_dir": lambda tf, root: _stat(tf, root, "d")[1:],
    "stat_missing": lambda tf, root: _stat(tf, root, "nope"),
    "io_stat_length": lambda tf, root: tf.io.gfile.stat(p(root, "d", "b.bin")).length,
    "walk_in_order": lambda tf, root: _walk(tf, root, root, True),
    "walk_post_order": lambda tf, root: _walk(tf, root, root, False),
    "walk_missing": lambda tf, root: _walk(tf, root, p(root, "nope"), True),
    "walk_file": lambda tf, root: _walk(tf, root, p(root, "a.txt"), True),
    "io_walk": lambda tf, root: [[d.replace(root, "<root>"), sorted(ds), sorted(fs)]
                                 for d, ds, fs in tf.io.gfile.walk(p(root, "d"), topdown=False)],
    # changing the tree
    "mkdir": lambda tf, root: _mutation(tf, root, lambda: tf.gfile.MkDir(p(root, "m")), "m"),
    "mkdir_existing": lambda tf, root: tf.gfile.MkDir(p(root, "d")),
    "mkdir_existing_file": lambda tf, root: tf.gfile.MkDir(p(root, "a.txt")),
    "mkdir_missing_parent": lambda tf, root: tf.gfile.MkDir(p(root, "x", "y")),
    "makedirs": lambda tf, root: _mutation(tf, root, lambda: tf.gfile.MakeDirs(p(root, "x", "y", "z")),
                                           "x", "x/y", "x/y/z"),
    "makedirs_existing": lambda tf, root: tf.gfile.MakeDirs(p(root, "d", "sub")),
    "makedirs_over_file": lambda tf, root: tf.gfile.MakeDirs(p(root, "a.txt", "z")),
    "io_makedirs": lambda tf, root: _mutation(tf, root, lambda: tf.io.gfile.makedirs(p(root, "q", "r")), "q", "q/r"),
    "io_mkdir": lambda tf, root: _mutation(tf, root, lambda: tf.io.gfile.mkdir(p(root, "q")), "q"),
    "remove": lambda tf, root: _mutation(tf, root, lambda: tf.gfile.Remove(p(root, "a.txt")), "a.txt"),
    "remove_missing": lambda tf, root: tf.gfile.Remove(p(root, "nope")),
    "remove_dir": lambda tf, root: tf.gfile.Remove(p(root, "d")),
    "io_remove": lambda tf, root: _mutation(tf, root, lambda: tf.io.gfile.remove(p(root, "a.txt")), "a.txt"),
    "delete_recursively": lambda tf, root: _mutation(
        tf, root, lambda: tf.gfile.DeleteRecursively(p(root, "d")), "d"),
    "delete_recursively_file": lambda tf, root: _mutation(
        tf, root, lambda: tf.gfile.DeleteRecursively(p(root, "a.txt")), "a.txt"),
    "delete_recursively_missing": lambda tf, root: tf.gfile.DeleteRecursively(p(root, "nope")),
    "io_rmtree": lambda tf, root: _mutation(tf, root, lambda: tf.io.gfile.rmtree(p(root, "d")), "d"),
    "rename": lambda tf, root: _mutation(
        tf, root, lambda: tf.gfile.Rename(p(root, "a.txt"), p(root, "z.txt")), "a.txt", "z.txt"),
    "rename_onto_existing": lambda tf, root: tf.gfile.Rename(p(root, "a.txt"), p(root, "d", "b.bin")),
    "rename_overwrite": lambda tf, root: [
        tf.gfile.Rename(p(root, "a.txt"), p(root, "d", "b.bin"), overwrite=True),
        _read_all(tf, p(root, "d", "b.bin"), "rb")],
    "rename_missing": lambda tf, root: tf.gfile.Rename(p(root, "nope"), p(root, "z")),
    "rename_dir": lambda tf, root: _mutation(
        tf, root, lambda: tf.gfile.Rename(p(root, "d"), p(root, "e")), "d", "e", "e/sub/c.txt"),
    "io_rename": lambda tf, root: _mutation(
        tf, root, lambda: tf.io.gfile.rename(p(root, "a.txt"), p(root, "z.txt")), "a.txt", "z.txt"),
    "copy": lambda tf, root: [tf.gfile.Copy(p(root, "a.txt"), p(root, "z.txt")),
                              _read_all(tf, p(root, "z.txt"), "rb")],
    "copy_onto_existing": lambda tf, root: tf.gfile.Copy(p(root, "a.txt"), p(root, "d", "b.bin")),
    "copy_overwrite": lambda tf, root: [
        tf.gfile.Copy(p(root, "a.txt"), p(root, "d", "b.bin"), overwrite=True),
        _read_all(tf, p(root, "d", "b.bin"), "rb")],
    "copy_missing": lambda tf, root: tf.gfile.Copy(p(root, "nope"), p(root, "z")),
    "copy_dir": lambda tf, root: tf.gfile.Copy(p(root, "d"), p(root, "e")),
    "io_copy": lambda tf, root: [tf.io.gfile.copy(p(root, "a.txt"), p(root, "z.txt")),
                                 _read_all(tf, p(root, "z.txt"), "rb")],
    "io_exists_isdir": lambda tf, root: [tf.io.gfile.exists(p(root, "d")), tf.io.gfile.isdir(p(root, "d"))],
}


def run_all(tf, make_root):
    """{case name: outcome}, each case on a fresh tree from `make_root()`."""
    out = {}
    for name, fn in CASES.items():
        root = make_root()
        setup(root)
        out[name] = outcome(lambda: fn(tf, root), root)
    return out
