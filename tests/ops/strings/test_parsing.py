"""StringToNumber, DecodeCSV and DecodeRaw: values against Python/NumPy references and
TensorFlow's behaviour (checked with tensorflow-cpu), errors, static shapes."""
import csv
import io

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_static_shape_matches, check_op


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _error(fetch, cls=tf.errors.InvalidArgumentError, match=None):
    with pytest.raises(cls, match=match):
        _run(fetch)


# -- string_to_number ------------------------------------------------------------------------------
def test_string_to_number_floats():
    texts = ["1.5", " 2", "1e3", "inf", "-nan", "0x10", ".5", "5.", "-0x1.8p1", "Infinity", "1.5\t",
             "nan(1)", "1e-400", "INF"]
    want = [1.5, 2.0, 1e3, np.inf, np.nan, 16.0, 0.5, 5.0, -3.0, np.inf, 1.5, np.nan, 0.0, np.inf]
    check_op(tf.string_to_number(texts), np.array(want, np.float32))
    check_op(tf.string_to_number(texts, out_type=tf.float64), np.array(want, np.float64))
    check_op(tf.string_to_number(["1e40"]), np.array([np.inf], np.float32))  # overflows as strtof
    check_op(tf.strings.to_number([["1"], ["2.25"]], tf.float64), np.array([[1.0], [2.25]]))


def test_string_to_number_integers():
    texts = ["12", "-3", "+4", " 12\t", "007", "-0", "2147483647", "-2147483648"]
    check_op(tf.string_to_number(texts, out_type=tf.int32), np.array([int(t) for t in texts], np.int32))
    check_op(tf.string_to_number(["3000000000", "-9223372036854775808"], out_type=tf.int64),
             np.array([3000000000, -2**63], np.int64))


@pytest.mark.parametrize("text,out_type", [
    ("abc", tf.float32), ("", tf.float32), ("  ", tf.float64), ("1 2", tf.float64), ("1e", tf.float64),
    ("1_0", tf.float64), ("1d", tf.float32), ("\u0661", tf.float32),
    ("12.5", tf.int32), ("1e2", tf.int32), ("0x10", tf.int32), ("2147483648", tf.int32),
    ("1_0", tf.int32), ("\u0663", tf.int64), ("", tf.int64),
])
def test_string_to_number_rejects(text, out_type):
    _error(tf.string_to_number([text], out_type=out_type),
           match="StringToNumberOp could not correctly convert string: ")


def test_string_to_number_rejects_other_types():
    with pytest.raises(TypeError):
        tf.string_to_number(["1"], out_type=tf.int8)


# -- decode_csv ------------------------------------------------------------------------------------
def _csv_reference(lines, types, defaults):
    """Python's csv module (RFC 4180 quoting) plus TF's default rule for empty fields."""
    columns = [[] for _ in types]
    for row in csv.reader(io.StringIO("\n".join(lines))):
        for i, (field, kind, default) in enumerate(zip(row, types, defaults)):
            columns[i].append(kind(field) if field != "" else default)
    return columns


def test_decode_csv_types_defaults_and_quotes():
    lines = ["1,2.5,a,7,0.25", "3,,b,,1e3", '5,-1,"x,""y""",9,2', ",4,,10,"]
    defaults = [[0], [1.0], ["z"], [np.int64(-1)], [np.float64(0.5)]]
    records = tf.constant(lines)
    outputs = tf.decode_csv(records, [tf.constant(d[0], dtype=t) for d, t in
                                      zip(defaults, [tf.int32, tf.float32, tf.string, tf.int64, tf.float64])])
    values = _run(outputs)
    ref = _csv_reference(lines, [int, float, str, int, float], [d[0] for d in defaults])
    np.testing.assert_array_equal(values[0], np.array(ref[0], np.int32))
    np.testing.assert_array_equal(values[1], np.array(ref[1], np.float32))
    assert values[2].tolist() == [s.encode() if isinstance(s, str) else s for s in ref[2]]
    np.testing.assert_array_equal(values[3], np.array(ref[3], np.int64))
    np.testing.assert_array_equal(values[4], np.array(ref[4], np.float64))
    for t, v in zip(outputs, values):
        assert_static_shape_matches(t, v)
        assert v.dtype == np.dtype(t.dtype.as_numpy_dtype)


def test_decode_csv_record_shapes():
    a, b = tf.decode_csv("1,2", record_defaults=[[0], [0]])
    assert a.shape.ndims == 0
    check_op(a, np.array(1, np.int32))
    grid = tf.decode_csv([["1,2"], ["3,4"]], record_defaults=[[0], [0]])
    check_op(grid[0], np.array([[1], [3]], np.int32))
    check_op(grid[1], np.array([[2], [4]], np.int32))
    fed = tf.placeholder(tf.string, [None])
    col = tf.decode_csv(fed, record_defaults=[[0]])
    assert isinstance(col, list) and len(col) == 1
    np.testing.assert_array_equal(_run(col[0], {fed: ["5", "6", "7"]}), [5, 6, 7])
    empty = _run(tf.decode_csv(tf.constant([], tf.string), record_defaults=[[0], [1]]))
    assert [e.shape for e in empty] == [(0,), (0,)]


def test_decode_csv_options():
    check_op(tf.decode_csv(["1|2"], [[0], [0]], field_delim="|")[1], np.array([2], np.int32))
    check_op(tf.decode_csv(["1\t2"], [[0], [0]], field_delim="\t")[1], np.array([2], np.int32))
    check_op(tf.decode_csv(["NA,2"], [[0], [0]], na_value="NA")[0], np.array([0], np.int32))
    check_op(tf.decode_csv(["1,NA"], [[0], [""]], na_value="NA")[1], np.array([b""], dtype=object))
    selected = tf.decode_csv(["1,2,3,4,x"], [[0], [0]], select_cols=[1, 3])
    np.testing.assert_array_equal(_run(selected), [[2], [4]])
    unquoted = tf.decode_csv(['a"b,1'], [[""], [5]], use_quote_delim=False)
    assert _run(unquoted[0]).tolist() == [b'a"b']
    kept = tf.decode_csv(["a, b", "\n1,2"], [[""], [""]])
    assert _run(kept[1]).tolist() == [b" b", b"2"]  # spaces are data; a leading newline is skipped
    trailing = tf.decode_csv(['1,"2",'], [[0], [0], [9]])
    np.testing.assert_array_equal(_run(trailing), [[1], [2], [9]])


@pytest.mark.parametrize("records,defaults,kwargs,message", [
    (["1,2.5"], [[0], [1.0], ["z"]], {}, "Expect 3 fields but have 2 in record 0"),
    (["1,2", "1,2,3,4"], [[0], [1.0], ["z"]], {}, "Expect 3 fields but have 2 in record 0"),
    (["1,2,3", "1,2,3,4"], [[0], [1.0], ["z"]], {}, "Expect 3 fields but have 4 in record 1"),
    ([",2"], [[], [1.0]], {}, "Field 0 is required but missing in record 0!"),
    (["x,2"], [[0], [1.0]], {}, "Field 0 in record 0 is not a valid int32: x"),
    (["1.5,2"], [[0], [1.0]], {}, "Field 0 in record 0 is not a valid int32: 1.5"),
    (["1,2x"], [[0], [1.0]], {}, "Field 1 in record 0 is not a valid float: 2x"),
    (["3000000000"], [[0]], {}, "is not a valid int32: 3000000000"),
    (['"a"b,1'], [[""], [0]], {}, "Quote inside a string has to be escaped by another quote"),
    (['"ab,1'], [[""], [0]], {}, "Quoted field has to end with quote followed by delim or end"),
    (['a"b,1'], [[""], [0]], {}, "Unquoted fields cannot have quotes/CRLFs inside"),
    (["1\n,2"], [[0], [0]], {}, "Unquoted fields cannot have quotes/CRLFs inside"),
    ([""], [[7]], {}, "Expect 1 fields but have 0 in record 0"),
    (["1,2,3"], [[0]], {"select_cols": [5]}, "Expect 1 fields but have 0 in record 0"),
    (["1||2"], [[0], [0]], {"field_delim": "||"}, "field_delim should be only 1 char"),
])
def test_decode_csv_errors(records, defaults, kwargs, message):
    _error(tf.decode_csv(records, defaults, **kwargs), match=message.replace("|", r"\|"))


def test_decode_csv_build_time_errors():
    with pytest.raises(ValueError, match="strictly increasing"):
        tf.decode_csv(["1,2,3"], [[0], [0]], select_cols=[2, 1])
    with pytest.raises(ValueError, match="negative"):
        tf.decode_csv(["1,2"], [[0]], select_cols=[-1])
    with pytest.raises(ValueError, match="do not match"):
        tf.decode_csv(["1,2"], [[0], [0]], select_cols=[1])
    with pytest.raises(ValueError, match="at most rank 1"):
        tf.decode_csv(["1,2"], [[0], [[0]]])
    with pytest.raises(ValueError, match="length-0 or length-1"):
        tf.decode_csv(["1,2"], [[0], [1, 2]])
    with pytest.raises(TypeError, match="record_defaults"):
        tf.decode_csv(["1,2"], [[0], [True]])
    with pytest.raises(ValueError):
        tf.decode_csv(["1,2"], [])


# -- decode_raw ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.int64,
                                   np.float16, np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("little_endian", [True, False])
def test_decode_raw_matches_numpy(dtype, little_endian):
    rng = np.random.RandomState(3)
    data = (rng.uniform(-100, 100, size=(2, 3, 4)) * (1 + 1j if np.dtype(dtype).kind == "c" else 1)).astype(dtype)
    order = "<" if little_endian else ">"
    encoded = np.empty((2, 3), dtype=object)
    for i in range(2):
        for j in range(3):
            encoded[i, j] = data[i, j].astype(np.dtype(dtype).newbyteorder(order)).tobytes()
    out = check_op(tf.decode_raw(encoded, tf.as_dtype(dtype), little_endian=little_endian), data)
    assert out.dtype.isnative and out.flags.writeable


def test_decode_raw_shapes_and_errors():
    t = tf.decode_raw(["abcd", "efgh"], tf.uint8)
    assert t.shape.as_list() == [2, None]
    check_op(t, np.frombuffer(b"abcdefgh", np.uint8).reshape(2, 4))
    check_op(tf.decode_raw("abcdefgh", tf.float32), np.frombuffer(b"abcdefgh", "<f4"))
    check_op(tf.decode_raw(["", ""], tf.int32), np.zeros((2, 0), np.int32))
    check_op(tf.decode_raw(bytes=["\x01\x00"], out_type=tf.bool), np.array([[True, False]]))
    _error(tf.decode_raw(["abcd", "efg"], tf.int16),
           match="DecodeRaw requires input strings to all be the same size, but element 1 has size 4 != 3")
    _error(tf.decode_raw(["abc", "efg"], tf.int16),
           match="Input to DecodeRaw has length 3 that is not a multiple of 2, the size of int16")
    with pytest.raises(TypeError):
        tf.decode_raw(["ab"], tf.string)
