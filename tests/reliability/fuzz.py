"""Seeded fuzzing of the public readers (issue 10): damaged copies of files written by real
TensorFlow (tests/data) and by tensorweave go through the reader a user would call, and every
case must end in one of the errors TensorFlow's own API raises there, or in a correct result.

A target is a seed file and a reader (TFRecords, checkpoints, GraphDefs, meta graphs, event
files). A case is one mutation of the seed: bytes flipped or
overwritten, the file cut short, or (where the format has framing) a structural damage with
valid checksums (a record length or an index entry field set to a hostile value), so the
reader's own sanity checks are exercised, not only its CRCs. Each case runs on a worker thread
under a watchdog: a case that outlives its deadline is a hang, and the process reports and exits
at once (its thread cannot be stopped). A crash of the interpreter itself is seen by the parent
(tests/reliability/test_fuzz_readers.py, bench/fuzz_readers.py), which runs each target in a
subprocess: `python -m tests.reliability.fuzz TARGET SEED CASES [TIMEOUT [START]]` prints one JSON
line.

Outcomes: "error" (an allowed error class), "correct" (a result equal to what the undamaged file
gives, or, for TFRecords, a prefix of its records), "accepted" (a different result from a file
that is still well-formed, e.g. a graph whose constant changed), "wrong" (a different result
where the format's checksums should have caught the damage), "other" (any other exception:
a defect), "hang".
"""
from __future__ import annotations

import json
import os
import random
import struct
import sys
import tempfile
import threading
import traceback
from typing import Any, Callable

import numpy as np
from google.protobuf import message

import tensorweave as tf
from tensorweave.lib import checkpoint_protos, sstable, tf_record

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
TF_CHECKPOINT = os.path.join(DATA, "tf_checkpoint", "model.ckpt-7")

# The errors each API raises in TensorFlow for bad input. OpError: TF's status errors.
# import_graph_def and Session.run raise ValueError/TypeError for malformed graphs and feeds;
# import_meta_graph raises IOError (OSError) for a file it cannot parse, KeyError from
# Graph.as_graph_element for a collection naming a missing node, and the protobuf's DecodeError
# for a collection entry that does not parse (TF 2.21 does the same: it calls ParseFromString on
# each bytes_list value); GraphDef.FromString raises DecodeError (the same protobuf class in TF).
# UnicodeDecodeError counts as the ValueError it is, but is listed apart in the figures: TF
# accepts string attrs that are not UTF-8.
DECODE = (message.DecodeError,)
OP = (tf.errors.OpError,)
GRAPH_ERRORS = (tf.errors.OpError, ValueError, TypeError)
META_ERRORS = (tf.errors.OpError, ValueError, TypeError, KeyError, OSError) + DECODE
HUGE = [(1 << 64) - 1, 1 << 63, 1 << 40, 1 << 31, (1 << 32) - 1, 1 << 20]


class Outcome(Exception):
    """Raised by a case to report a non-error outcome ("correct", "accepted", "wrong")."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(kind)
        self.kind, self.detail = kind, detail


# ---------------------------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------------------------
def flip(rng: random.Random, data: bytes) -> bytes:
    """One to four bytes overwritten, bit-flipped or set to an extreme (0x00, 0x7F, 0x80, 0xFF)."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(out))
        how = rng.randrange(3)
        if how == 0:
            out[pos] ^= 1 << rng.randrange(8)
        elif how == 1:
            out[pos] = rng.randrange(256)
        else:
            out[pos] = rng.choice((0x00, 0x7F, 0x80, 0xFF))
    return bytes(out)


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:rng.randrange(len(data))]


def mutate(rng: random.Random, data: bytes) -> bytes:
    return flip(rng, data) if rng.random() < 0.7 else truncate(rng, data)


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


# ---------------------------------------------------------------------------------------------
# TFRecord files
# ---------------------------------------------------------------------------------------------
def _records_of(path: str, compression: Any) -> list[bytes]:
    return list(tf.python_io.tf_record_iterator(path, compression))


def _hostile_length(rng: random.Random, plain: bytes) -> bytes:
    """A record's length field replaced by a hostile value whose header CRC is valid."""
    offsets, pos = [], 0
    while pos + 12 <= len(plain):
        offsets.append(pos)
        pos += 16 + struct.unpack_from("<Q", plain, pos)[0]
    at = rng.choice(offsets)
    length = rng.choice(HUGE + [rng.randrange(1 << 64), struct.unpack_from("<Q", plain, at)[0] + rng.randint(-8, 8)])
    header = struct.pack("<Q", max(0, length))
    return plain[:at] + header + struct.pack("<I", tf_record.masked_crc32c(header)) + plain[at + 12:]


def _compress(data: bytes, compression: str) -> bytes:
    if not compression:
        return data
    compressor = tf_record.TFRecordOptions(compression)._compressor()
    return compressor.compress(data) + compressor.flush()


class RecordTarget:
    """tf.python_io.tf_record_iterator, or the TFRecordReader op in a session (`in_session`),
    over TF's fixture files, plain, ZLIB and GZIP."""

    FILES = {"": "tf_written.tfrecord", "ZLIB": "tf_written.tfrecord.zlib", "GZIP": "tf_written.tfrecord.gz"}

    def __init__(self, workdir: str, in_session: bool) -> None:
        self.workdir, self.in_session = workdir, in_session
        self.seeds = {}
        for compression, name in self.FILES.items():
            path = os.path.join(DATA, name)
            with open(path, "rb") as f:
                self.seeds[compression] = f.read()
        self.plain = self.seeds[""]
        self.expected = _records_of(os.path.join(DATA, self.FILES[""]), None)

    def case(self, rng: random.Random) -> Callable[[], None]:
        compression = rng.choice(["", "ZLIB", "GZIP"])
        if rng.random() < 0.25:
            data = _compress(_hostile_length(rng, self.plain), compression)
        elif compression and rng.random() < 0.5:  # damage under the compression
            data = _compress(mutate(rng, self.plain), compression)
        else:
            data = mutate(rng, self.seeds[compression])
        path = os.path.join(self.workdir, "case.tfrecord")
        _write(path, data)
        return lambda: self._check(path, compression)

    def _check(self, path: str, compression: str) -> None:
        got = self._read_session(path, compression) if self.in_session else _records_of(path, compression)
        if got == self.expected[:len(got)]:
            raise Outcome("correct")
        raise Outcome("wrong", f"records {got[:3]!r}... differ from the file's")

    @staticmethod
    def _read_session(path: str, compression: str) -> list[bytes]:
        with tf.Graph().as_default():
            queue = tf.FIFOQueue(1, tf.string)
            reader = tf.TFRecordReader(options=tf.python_io.TFRecordOptions(compression or None))
            _, values = reader.read_up_to(queue, 1000)
            with tf.Session() as sess:
                sess.run(queue.enqueue(path))
                sess.run(queue.close())
                out: list[bytes] = []
                try:
                    while True:
                        out.extend(sess.run(values).tolist())
                except tf.errors.OutOfRangeError:
                    return out


# ---------------------------------------------------------------------------------------------
# Checkpoints
# ---------------------------------------------------------------------------------------------
_ENTRY_FIELDS = ["dtype", "shard_id", "offset", "size", "crc32c", "dim", "dim_count", "slice", "num_shards"]


def hostile_index(rng: random.Random, index: bytes) -> bytes:
    """The index table rebuilt (valid block CRCs) with one field of one entry set hostile."""
    items = sstable.parse_table(index)
    i = rng.randrange(len(items))
    key, value = items[i]
    field = rng.choice(_ENTRY_FIELDS)
    huge = rng.choice(HUGE + [-1, -(1 << 62), rng.randrange(1 << 64)])
    huge = huge - (1 << 64) if huge >= 1 << 63 else huge  # int64 fields: 2^64-1 is -1 on the wire
    if i == 0 or field == "num_shards":
        header = checkpoint_protos.BundleHeaderProto.FromString(items[0][1])
        header.num_shards = rng.choice([0, -1, 2, 99999, (1 << 31) - 1, -(1 << 31)])
        items[0] = (b"", header.SerializeToString())
        return sstable.build_table(items)
    entry = checkpoint_protos.BundleEntryProto.FromString(value)
    if field == "dtype":
        entry.dtype = rng.choice([0, 20, 21, 99, 1000, 101, 7, 14])
    elif field == "shard_id":
        entry.shard_id = rng.choice([-1, 1, 5, (1 << 31) - 1])
    elif field in ("offset", "size"):
        setattr(entry, field, huge)
    elif field == "crc32c":
        entry.crc32c = rng.randrange(1 << 32)
    elif field == "dim" and entry.shape.dim:
        rng.choice(entry.shape.dim).size = huge
    elif field == "dim_count":
        entry.shape.dim.add(size=rng.choice([0, 1, 2, huge]))
    elif field == "slice":
        extent = entry.slices.add().extent.add() if not entry.slices or rng.random() < 0.3 \
            else rng.choice(entry.slices).extent.add()
        extent.start = rng.choice([-5, 0, 3, 1 << 40])
        extent.length = rng.choice([-2, 0, 1, 1 << 40])
    items[i] = (key, entry.SerializeToString())
    return sstable.build_table(items)


class CheckpointTarget:
    """TF's fixture checkpoint (all dtypes, a partitioned variable), index or data damaged, read
    with tf.train.Saver.restore (values compared with the undamaged ones), or with
    tf.train.NewCheckpointReader / list_variables."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self.index = open(TF_CHECKPOINT + ".index", "rb").read()
        self.data = open(TF_CHECKPOINT + ".data-00000-of-00001", "rb").read()
        reader = tf.train.NewCheckpointReader(TF_CHECKPOINT)
        self.names = sorted(reader.get_variable_to_shape_map())
        self.expected = {name: reader.get_tensor(name) for name in self.names}
        self.shapes = reader.get_variable_to_shape_map()
        self.graph = tf.Graph()
        with self.graph.as_default():
            variables = [tf.Variable(np.zeros_like(self.expected[n]), name=n) for n in self.names]
            self.saver = tf.train.Saver(variables)
            self.fetch = variables
        self.sess = tf.Session(graph=self.graph)

    def case(self, rng: random.Random) -> Callable[[], None]:
        prefix = os.path.join(self.workdir, "model.ckpt")
        index, data = self.index, self.data
        which = rng.random()
        if which < 0.3:
            index = hostile_index(rng, index)
        elif which < 0.6:
            index = mutate(rng, index)
        else:
            data = mutate(rng, data)
        _write(prefix + ".index", index)
        _write(prefix + ".data-00000-of-00001", data)
        api = rng.choice(["restore", "restore", "reader", "list"])
        return lambda: getattr(self, "_" + api)(prefix)

    def _restore(self, prefix: str) -> None:
        self.saver.restore(self.sess, prefix)
        got = self.sess.run(self.fetch)
        for name, value in zip(self.names, got):
            want = self.expected[name]
            same = (value.shape == want.shape and value.tolist() == want.tolist()) if want.dtype == object \
                else np.array_equal(value, want)
            if not same:
                raise Outcome("wrong", f"restored {name} = {value!r}, saved {want!r}")
        raise Outcome("correct")

    def _reader(self, prefix: str) -> None:
        reader = tf.train.NewCheckpointReader(prefix)
        shapes = reader.get_variable_to_shape_map()
        reader.get_variable_to_dtype_map()
        reader.debug_string()
        for name in shapes:
            reader.get_tensor(name)
        raise Outcome("correct" if shapes == self.shapes else "accepted")

    def _list(self, prefix: str) -> None:
        listed = tf.train.list_variables(prefix)
        raise Outcome("correct" if listed == sorted(self.shapes.items()) else "accepted")


# ---------------------------------------------------------------------------------------------
# GraphDefs and meta graphs
# ---------------------------------------------------------------------------------------------
class GraphDefTarget:
    """TF's fixture GraphDef (constants in every encoding, cond, while loop), damaged, parsed
    with GraphDef.FromString and imported with tf.import_graph_def; an accepted graph is run."""

    def __init__(self, workdir: str) -> None:
        self.seed = open(os.path.join(DATA, "tf_written_graph.pb"), "rb").read()
        self.feed_x = np.load(os.path.join(DATA, "tf_written_graph_expected.npz"))["feed_x"]

    def case(self, rng: random.Random) -> Callable[[], None]:
        data = mutate(rng, self.seed)
        return lambda: self._check(data)

    def _check(self, data: bytes) -> None:
        try:
            graph_def = tf.GraphDef.FromString(data)
        except DECODE:
            raise Outcome("error", "DecodeError") from None
        with tf.Graph().as_default() as graph:
            tf.import_graph_def(graph_def, name="")
            names = [n for n in ("y", "c/Merge", "loop/Exit_1") if _has_tensor(graph, n + ":0")]
            feeds = {t: v for t, v in (("x:0", self.feed_x), ("k:0", 4)) if _has_tensor(graph, t)}
            with tf.Session() as sess:
                # A damaged loop bound may make a loop that never ends, as it would in TF: the
                # deadline ends it (DeadlineExceededError) where the runtime honours it.
                sess.run([n + ":0" for n in names], feeds, options=tf.RunOptions(timeout_in_ms=5000))
        raise Outcome("accepted")


_HOSTILE_INTS = [-1, -(1 << 40), 1 << 31, 1 << 40, (1 << 63) - 1]


def _mutate_attr(rng: random.Random, value: Any) -> None:
    """One field of an AttrValue set hostile, keeping its kind."""
    kind = value.WhichOneof("value")
    if kind == "i":
        value.i = rng.choice(_HOSTILE_INTS)
    elif kind == "type":
        value.type = rng.choice([0, 7, 14, 20, 21, 99, 101, 1000])
    elif kind == "shape":
        value.shape.dim.add(size=rng.choice([-2, -1, 0, 1 << 40]))
    elif kind == "s":
        value.s = bytes(rng.randrange(256) for _ in range(rng.randint(0, 12)))
    elif kind == "f":
        value.f = rng.choice([float("nan"), float("inf"), -1e308])
    elif kind == "b":
        value.i = 3  # a bool attr holding an int
    elif kind == "list":
        value.list.i.append(rng.choice(_HOSTILE_INTS))
    elif kind == "tensor":
        tensor = value.tensor
        how = rng.randrange(5)
        if how == 0:
            tensor.dtype = rng.choice([0, 1, 3, 7, 9, 10, 20, 99])
        elif how == 1:
            tensor.tensor_shape.dim.add(size=rng.choice([-5, 0, 3, 1 << 40]))
        elif how == 2:
            tensor.tensor_content = tensor.tensor_content[:rng.randrange(len(tensor.tensor_content) + 1)] \
                + b"\x00" * rng.randint(0, 5)
        elif how == 3:
            tensor.string_val.append(b"not a number")
        else:
            tensor.float_val.extend([1.0] * rng.randint(1, 4))


def mutate_graph_def(rng: random.Random, graph_def: Any) -> None:
    """One node of `graph_def` damaged at the field level: an attr made hostile or removed, an
    input renamed or given a missing output index, the op swapped for another one."""
    node = rng.choice(graph_def.node)
    how = rng.randrange(4)
    if how == 0 and node.attr:
        _mutate_attr(rng, node.attr[rng.choice(sorted(node.attr))])
    elif how == 1 and node.attr:
        del node.attr[rng.choice(sorted(node.attr))]
    elif how == 2 and node.input:
        i = rng.randrange(len(node.input))
        node.input[i] = rng.choice([node.input[i] + ":7", "missing", "^" + node.input[i].lstrip("^"), ""])
    else:
        node.op = rng.choice(graph_def.node).op


class GraphDefFieldTarget(GraphDefTarget):
    """The same GraphDef, damaged at the field level (mutate_graph_def): the importer's own
    validation, since the protobuf layer no longer stands in front of it."""

    def case(self, rng: random.Random) -> Callable[[], None]:
        graph_def = tf.GraphDef.FromString(self.seed)
        for _ in range(rng.randint(1, 2)):
            mutate_graph_def(rng, graph_def)
        data = graph_def.SerializeToString()
        return lambda: self._check(data)


def _has_tensor(graph: Any, name: str) -> bool:
    try:
        graph.as_graph_element(name)
        return True
    except (KeyError, ValueError):
        return False


class MetaGraphTarget:
    """A meta graph with a Saver written by tensorweave (and TF's control-flow meta graph),
    damaged, imported with tf.train.import_meta_graph; the returned Saver restores the
    undamaged checkpoint and the values are compared."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self.prefix = os.path.join(workdir, "seed", "model.ckpt")
        with tf.Graph().as_default():
            w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
            b = tf.Variable(np.int64(7), name="b")
            x = tf.placeholder(tf.float32, [None, 2], name="x")
            tf.add_to_collection("outputs", tf.matmul(x, w, name="y"))
            tf.add_to_collection("numbers", 3)
            saver = tf.train.Saver([w, b])
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                saver.save(sess, self.prefix)
            self.expected = {"w:0": np.arange(6, dtype=np.float32).reshape(2, 3), "b:0": np.int64(7)}
        self.seeds = [open(path, "rb").read()
                      for path in (self.prefix + ".meta", os.path.join(DATA, "tf_control_flow.meta"))]

    def case(self, rng: random.Random) -> Callable[[], None]:
        seed = 0 if rng.random() < 0.8 else 1
        path = os.path.join(self.workdir, "case.meta")
        _write(path, mutate(rng, self.seeds[seed]))
        return lambda: self._check(path, seed)

    def _check(self, path: str, seed: int) -> None:
        with tf.Graph().as_default() as graph:
            saver = tf.train.import_meta_graph(path)
            if seed == 1 or saver is None:
                raise Outcome("accepted")
            with tf.Session() as sess:
                saver.restore(sess, self.prefix)
                names = [n for n in self.expected if _has_tensor(graph, n)]
                got = sess.run(names)
            same = len(names) == 2 and all(np.array_equal(g, self.expected[n]) for n, g in zip(names, got))
        raise Outcome("correct" if same else "accepted")


# ---------------------------------------------------------------------------------------------
# Event files
# ---------------------------------------------------------------------------------------------
class EventFileTarget:
    """tf.train.summary_iterator over TF's fixture event file (graph, scalars, histogram, image,
    text, session log): bytes damaged or cut, or a record length made hostile with a valid CRC."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        with open(os.path.join(DATA, "tf_events", "events.out.tfevents.tf"), "rb") as f:
            self.seed = f.read()
        self.expected = [e.SerializeToString() for e in tf.train.summary_iterator(
            os.path.join(DATA, "tf_events", "events.out.tfevents.tf"))]

    def case(self, rng: random.Random) -> Callable[[], None]:
        data = _hostile_length(rng, self.seed) if rng.random() < 0.25 else mutate(rng, self.seed)
        path = os.path.join(self.workdir, "events.out.tfevents.case")
        _write(path, data)
        return lambda: self._check(path)

    def _check(self, path: str) -> None:
        got = [e.SerializeToString() for e in tf.train.summary_iterator(path)]
        if got == self.expected[:len(got)]:
            raise Outcome("correct")
        raise Outcome("wrong", f"{len(got)} events differ from the file's")


TARGETS: dict[str, tuple[Callable[[str], Any], tuple]] = {
    "tfrecord": (lambda d: RecordTarget(d, in_session=False), OP),
    "tfrecord_reader_op": (lambda d: RecordTarget(d, in_session=True), OP),
    "checkpoint": (CheckpointTarget, OP),
    "graph_def": (GraphDefTarget, GRAPH_ERRORS),
    "graph_def_fields": (GraphDefFieldTarget, GRAPH_ERRORS),
    "meta_graph": (MetaGraphTarget, META_ERRORS),
    "event_file": (EventFileTarget, OP + DECODE),
}


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------
def run_one(fn: Callable[[], None], allowed: tuple, timeout: float) -> tuple[str, str]:
    """(outcome, detail) of one case run on a worker thread under a watchdog."""
    result: list[tuple[str, str]] = []

    def work() -> None:
        try:
            fn()
            result.append(("accepted", ""))
        except Outcome as out:
            result.append((out.kind, out.detail))
        except allowed as err:
            result.append(("error", type(err).__name__))
        except BaseException:  # noqa: BLE001  (what the fuzzing looks for)
            result.append(("other", traceback.format_exc(limit=-4)))

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return "hang", f"still running after {timeout} s"
    return result[0]


def run_target(name: str, seed: int, cases: int, timeout: float = 20.0, start: int = 0) -> dict[str, Any]:
    """Runs cases `start`..`cases`-1 of target `name`, case i seeded with (name, seed, i); the
    counts by outcome and the first failing cases (with their case numbers, to replay). Stops
    after a hang (its thread cannot be stopped): "next" says where to go on in a new process."""
    make, allowed = TARGETS[name]
    counts = {k: 0 for k in ("error", "correct", "accepted", "wrong", "other", "hang")}
    classes: dict[str, int] = {}
    failures: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{name}-") as workdir:
        target = make(workdir)
        i = start - 1
        for i in range(start, cases):
            rng = random.Random(f"{name}/{seed}/{i}")
            kind, detail = run_one(target.case(rng), allowed, timeout)
            counts[kind] += 1
            if kind == "error":
                classes[detail] = classes.get(detail, 0) + 1
            if kind in ("wrong", "other", "hang") and len(failures) < 20:
                failures.append({"case": i, "outcome": kind, "detail": detail[-1500:]})
            if kind == "hang":
                break  # its thread cannot be stopped: report now
    return {"target": name, "seed": seed, "cases": sum(counts.values()), **counts, "error_classes": classes,
            "failures": failures, "next": i + 1}


def main(argv: list[str]) -> None:
    name, seed, cases = argv[0], int(argv[1]), int(argv[2])
    timeout = float(argv[3]) if len(argv) > 3 else 20.0
    start = int(argv[4]) if len(argv) > 4 else 0
    print(json.dumps(run_target(name, seed, cases, timeout, start)), flush=True)
    sys.stdout.flush()
    os._exit(0)  # a hung case's thread must not keep the process alive


if __name__ == "__main__":
    main(sys.argv[1:])
