"""The wire format of the distributed runtime (tensorweave/distributed/wire.py): every dtype
round-trips bit-exactly, unary and streamed; and decoding trusts nothing: random bytes,
truncated streams, huge declared sizes and malformed headers give InvalidArgumentError (or
ResourceExhaustedError over a limit), never another exception or a huge allocation."""
import json
import random
import resource
import struct

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed import wire

NUMERIC = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
           np.uint32, np.uint64, np.bool_, np.complex64, np.complex128]
SHAPES = [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 1, 1, 5)]


def _value(dtype, shape, rng):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5 if shape else np.bool_(rng.random() < 0.5)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        return np.asarray(rng.standard_normal(shape) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def _message(header, payload=b""):
    text = json.dumps(header).encode("utf-8")
    return struct.pack("<4sI", b"TWM1", len(text)) + text + payload


def _round_trips(header, tensors):
    """The message decoded whole, and streamed in chunks of a few sizes."""
    parts = wire.encode(header, tensors)
    yield wire.decode(wire.join(parts))
    for chunk in (1, 7, 4096):
        yield wire.decode_stream(wire.chunks(parts, chunk))


def _same(a, b):
    assert isinstance(b, np.ndarray)
    assert a.shape == b.shape and a.dtype.newbyteorder("=") == b.dtype.newbyteorder("=")
    if a.dtype == object:
        assert a.tolist() == b.tolist()
    else:
        assert a.astype(a.dtype.newbyteorder("=")).tobytes() == b.astype(b.dtype.newbyteorder("=")).tobytes()


@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: np.dtype(d).name)
def test_every_numeric_dtype_round_trips_bit_exactly(dtype):
    rng = np.random.default_rng(1)
    tensors = [(f"t{i}", np.asarray(_value(dtype, shape, rng))) for i, shape in enumerate(SHAPES)]
    for message in _round_trips({"step": 3}, tensors):
        assert message.header["step"] == 3
        assert list(message.tensors) == [name for name, _ in tensors]
        for name, value in tensors:
            _same(value, message.tensors[name])


def test_special_float_values_keep_their_bits():
    value = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(np.float32).tiny / 2], np.float32)
    got = wire.decode(wire.join(wire.encode({}, [("x", value)]))).tensors["x"]
    assert got.tobytes() == value.tobytes()


def test_received_arrays_are_writable_copies():
    """Kernels may update a received array in place (e.g. an assign into a fed buffer)."""
    value = np.arange(6, dtype=np.float32)
    for message in _round_trips({}, [("x", value)]):
        got = message.tensors["x"]
        assert got.flags.writeable
        got[0] = 99.0
        assert value[0] == 0.0


def test_string_tensors_round_trip():
    strings = np.array([b"", b"a", b"\x00\xff binary", "unicode \u00e9".encode("utf-8") * 50], dtype=object)
    cases = [strings, strings.reshape(2, 2), np.array(b"scalar", dtype=object), np.empty((0, 3), dtype=object),
             np.array([b"bytes", b"array"]),  # numpy bytes dtype (S)
             ]
    for message in _round_trips({}, [(f"s{i}", v) for i, v in enumerate(cases)]):
        for i, value in enumerate(cases):
            got = message.tensors[f"s{i}"]
            assert got.dtype == object and got.shape == value.shape
            assert [bytes(x) for x in got.reshape(-1)] == [bytes(x) for x in value.reshape(-1)]
    unicode = np.array(["caf\u00e9", "x"])  # numpy str dtype (U): sent UTF-8 encoded, as TF does
    got = wire.decode(wire.join(wire.encode({}, [("u", unicode)]))).tensors["u"]
    assert got.tolist() == ["caf\u00e9".encode("utf-8"), b"x"]


def test_non_contiguous_and_big_endian_inputs():
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    cases = {"transposed": base.T, "strided": base[::2, 1::3], "reversed": base[::-1],
             "big_endian": np.arange(12, dtype=">i4").reshape(3, 4), "big_endian_f": np.linspace(0, 1, 7).astype(">f8"),
             "big_endian_scalar": np.array(7, dtype=">i2")}
    for message in _round_trips({}, list(cases.items())):
        for name, value in cases.items():
            got = message.tensors[name]
            assert got.shape == value.shape
            assert got.dtype.byteorder in "=<|"
            np.testing.assert_array_equal(got, value)


def test_dead_values_and_mixed_messages():
    tensors = [("a", np.float32(1.5)), ("dead", wire.DEAD), ("s", np.array([b"x"], dtype=object)),
               ("dead2", wire.DEAD), ("b", np.ones((2, 2), np.int64))]
    for message in _round_trips({"k": [1, "two"]}, tensors):
        assert message.tensors["dead"] is wire.DEAD and message.tensors["dead2"] is wire.DEAD
        assert message.tensors["a"] == np.float32(1.5) and message.tensors["a"].shape == ()
        assert message.tensors["s"].tolist() == [b"x"]
        np.testing.assert_array_equal(message.tensors["b"], np.ones((2, 2), np.int64))
        assert message.header["k"] == [1, "two"]


def test_large_messages_stream_in_chunks():
    value = np.random.default_rng(0).standard_normal(3 << 20).astype(np.float32)  # 12 MiB
    parts = wire.encode({}, [("big", value), ("small", np.int32(4))])
    assert wire.size(parts) > wire.STREAM_THRESHOLD
    pieces = list(wire.chunks(parts))
    assert max(len(p) for p in pieces) <= wire.CHUNK and len(pieces) > 10
    message = wire.decode_stream(iter(pieces))
    np.testing.assert_array_equal(message.tensors["big"], value)
    assert message.tensors["small"] == 4


def test_headers_beyond_the_limit_are_refused_when_sending():
    names = [f"tower_{i}/some/long/op/name:0" for i in range(wire.MAX_HEADER // 30 + 1)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="exceeds the limit"):
        wire.encode({"fetches": names})
    parts = wire.encode({"fetches": names[:1000]})
    assert len(parts[0]) <= wire.MAX_PIECE


def test_unsupported_dtype_is_refused_when_sending():
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype"):
        wire.encode({}, [("x", np.array([1], dtype="datetime64[s]"))])


def test_error_replies_carry_the_tensorflow_error():
    header = wire.decode(wire.join(wire.encode(wire.error_header(tf.errors.NotFoundError(None, None, "gone"))))).header
    with pytest.raises(tf.errors.NotFoundError, match="gone"):
        wire.raise_if_error(header)
    header = wire.error_header(KeyError("k"))
    with pytest.raises(tf.errors.InternalError, match="KeyError"):
        wire.raise_if_error(header)
    wire.raise_if_error({"step": 1})  # no error: nothing raised
    for bad in ([0, "ok is no error"], [99, "x"], "text", 5, {}, [None], ["3", None, 1]):
        with pytest.raises(tf.errors.InternalError, match="Malformed error reply"):
            wire.raise_if_error({"error": bad})


# ---------------------------------------------------------------------------------------------
# Malformed and hostile input
# ---------------------------------------------------------------------------------------------
def _decoding_fails(data, stream_chunks=None):
    """Both decoders refuse `data` with a TF error (InvalidArgument or ResourceExhausted)."""
    with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.ResourceExhaustedError)) as info:
        wire.decode(data)
    pieces = [data] if stream_chunks is None else stream_chunks
    with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.ResourceExhaustedError)):
        wire.decode_stream(iter(pieces))
    return info.value


def test_random_bytes_are_refused():
    rng = random.Random(5)
    for _ in range(300):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(64)))
        if rng.random() < 0.5:  # past the magic number, into the header length and the header
            data = b"TWM1" + data
        _decoding_fails(data)
    _decoding_fails(b"")
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty stream"):
        wire.decode_stream(iter([]))


def test_truncated_messages_and_streams_are_refused():
    parts = wire.encode({"h": 1}, [("x", np.arange(1000, dtype=np.int32)), ("s", np.array([b"abc"] * 9, object))])
    data = wire.join(parts)
    rng = random.Random(2)
    for cut in sorted({rng.randrange(len(data)) for _ in range(200)} | {0, 4, 7, 8, len(data) - 1}):
        _decoding_fails(data[:cut])
    pieces = list(wire.chunks(parts, 100))
    for keep in range(1, len(pieces)):
        with pytest.raises(tf.errors.InvalidArgumentError, match="stream ended"):
            wire.decode_stream(iter(pieces[:keep]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="more bytes"):
        wire.decode_stream(iter(pieces + [b"extra"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="4104 arrived"):
        wire.decode(data + b"extra")


def test_header_split_across_stream_chunks_is_refused():
    data = wire.join(wire.encode({"long": "x" * 100}))
    with pytest.raises(tf.errors.InvalidArgumentError, match="header size"):
        wire.decode_stream(iter([data[:20], data[20:]]))


def _max_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_huge_declared_sizes_allocate_nothing():
    """Declared sizes of terabytes: refused, or (streamed) the buffer only grows with bytes that
    really arrive, so memory stays flat."""
    before = _max_rss_mib()
    huge = [1 << 40, 1 << 47, (1 << 62) + 8, (1 << 64) - 1, 1 << 100]
    for n in huge:
        elements = n // 4
        shape = [elements] if elements < 1 << 48 else [1 << 47, 1 << 47]
        header = {"tensors": [["x", "<f4", shape, n, False]]}
        _decoding_fails(_message(header, b"\0" * 64), [_message(header), b"\0" * 4096, b"\0" * 4096])
        header = {"tensors": [["s", "string", [1], n, False]]}
        length = struct.pack("<Q", (n - 8) % (1 << 64))
        _decoding_fails(_message(header, length), [_message(header), length])
    # A header length beyond the message, or beyond the limit on headers.
    for declared in (1 << 31, (1 << 32) - 1, wire.MAX_HEADER + 1, 100):
        _decoding_fails(struct.pack("<4sI", b"TWM1", declared) + b"{}")
    # Shapes whose element count (or, with a zero dimension, whose other dimensions) overflow.
    for shape in ([1 << 47] * 3, [0] + [1 << 47] * 63, [0, 1 << 47, 1 << 47], [2] * 65, [-1], [1.5], ["3"]):
        for dtype in ("<f4", "string"):
            _decoding_fails(_message({"tensors": [["x", dtype, shape, 0, False]]}))
    with pytest.raises(tf.errors.ResourceExhaustedError, match="limit"):
        wire.decode_stream(iter([_message({"tensors": [["x", "|u1", [100], 100, False]]})]), limit=99)
    assert _max_rss_mib() - before < 200


def test_string_lengths_that_wrap_around_are_refused():
    """Two u64 lengths of 2**63 sum to 0 in uint64 arithmetic: still refused."""
    payload = np.array([1 << 63, 1 << 63], "<u8").tobytes()
    _decoding_fails(_message({"tensors": [["s", "string", [2], 16, False]]}, payload))
    payload = np.array([(1 << 64) - 1, 2], "<u8").tobytes() + b"a"
    _decoding_fails(_message({"tensors": [["s", "string", [2], 17, False]]}, payload))
    # Lengths that add up to less or more than the bytes present.
    payload = np.array([1, 1], "<u8").tobytes() + b"abc"
    _decoding_fails(_message({"tensors": [["s", "string", [2], 19, False]]}, payload))


@pytest.mark.parametrize("entries", [
    "not a list", [["x"]], [["x", "<f4", [1], 4]], [[1, "<f4", [1], 4, False]], [["x", 4, [1], 4, False]],
    [["x", "<f4", 1, 4, False]], [["x", "<f4", [1], "4", False]], [["x", "<f4", [1], 4, "no"]],
    [["x", "<f4", [1], -4, False]], [["x", "<f4", [1], 4.0, False]], [["x", "<f4", [1], 3, False]],
    [["x", "<f4", [2], 4, False]], [["x", ">f4", [1], 4, False]], [["x", "float32", [1], 4, False]],
    [["x", "O", [1], 8, False]], [["x", "string", [2], 8, False]], [["x", "<f4", [None], 4, False]],
    [["x", "<f4", [1], 4, False], ["y", "<f4", [1], 4, False]], {"x": 1}, [None], [[]],
])
def test_bad_tensor_entries_are_refused(entries):
    _decoding_fails(_message({"tensors": entries}, b"\0\0\0\0"))


@pytest.mark.parametrize("text", [b"not json", b"[1, 2]", b'"string"', b"null", b"\xff\xfe{}", b'{"a": }',
                                  b"[" * 100000 + b"]" * 100000, b'{"a":' * 50000 + b"1" + b"}" * 50000,
                                  b'{"n": 1' + b"0" * 5000 + b"}"])
def test_bad_json_headers_are_refused(text):
    _decoding_fails(struct.pack("<4sI", b"TWM1", len(text)) + text)


def test_random_mutations_of_valid_messages_decode_or_fail_cleanly():
    """Flipped bytes anywhere in a valid message: a TF error, or a message whose tensors all
    have the declared shapes (the damage hit a value's bytes, which no checksum covers)."""
    tensors = [("f", np.arange(12, dtype=np.float32).reshape(3, 4)), ("s", np.array([b"ab", b"cde"], object)),
               ("d", wire.DEAD), ("i", np.int64(5))]
    data = wire.join(wire.encode({"step": 1, "names": ["a", "b"]}, tensors))
    rng = random.Random(7)
    outcomes = {"error": 0, "decoded": 0}
    for _ in range(500):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        if rng.random() < 0.2:
            damaged = damaged[:rng.randrange(len(damaged))]
        try:
            message = wire.decode(bytes(damaged))
        except (tf.errors.InvalidArgumentError, tf.errors.ResourceExhaustedError):
            outcomes["error"] += 1
            continue
        outcomes["decoded"] += 1
        for value in message.tensors.values():
            assert value is wire.DEAD or isinstance(value, np.ndarray)
    assert outcomes["error"] > 100 and outcomes["decoded"] > 50
