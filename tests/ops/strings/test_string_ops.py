"""String ops against Python references (bytes.split, slicing, printf via %, re.sub) and
values checked with TensorFlow; static shapes against real outputs."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_static_shape_matches, check_op


def _strings(values):
    out = np.empty(len(values), dtype=object)
    out[:] = [v.encode() if isinstance(v, str) else v for v in values]
    return out


def _run_sparse(sp, feed=None):
    with tf.Session() as sess:
        value = sess.run(sp, feed)
    for part, got in zip((sp.indices, sp.values, sp.dense_shape), value):
        assert_static_shape_matches(part, got)
    assert value.indices.dtype == np.int64 and value.dense_shape.dtype == np.int64
    return value


def _rows_reference(rows):
    """(indices, values, dense_shape) of token lists, built independently of the kernel."""
    indices = [[r, c] for r, row in enumerate(rows) for c in range(len(row))]
    values = [t for row in rows for t in row]
    width = max((len(r) for r in rows), default=0)
    return indices, values, [len(rows), width]


def _assert_sparse(value, rows):
    indices, values, shape = _rows_reference(rows)
    assert value.indices.reshape(-1, 2).tolist() == indices
    assert value.values.tolist() == values
    assert value.dense_shape.tolist() == shape


# -- string_split / strings.split ------------------------------------------------------------------
@pytest.mark.parametrize("skip_empty", [True, False])
def test_string_split_default_delimiter(skip_empty):
    source = [b"a b  c", b"", b"de", b"x ", b" "]
    value = _run_sparse(tf.string_split(source, skip_empty=skip_empty))
    # an empty string has no tokens at all; otherwise bytes.split on the single delimiter
    rows = [[t for t in s.split(b" ") if t or not skip_empty] if s else [] for s in source]
    _assert_sparse(value, rows)


def test_string_split_delimiter_set_and_empty_delimiter():
    _assert_sparse(_run_sparse(tf.string_split(["a,b;c", "x"], delimiter=",;")),
                   [[b"a", b"b", b"c"], [b"x"]])
    _assert_sparse(_run_sparse(tf.string_split(["abc", "de"], delimiter="")),
                   [[b"a", b"b", b"c"], [b"d", b"e"]])
    _assert_sparse(_run_sparse(tf.string_split(["a\tb c"], sep="\t")), [[b"a", b"b c"]])


def test_string_split_fed_and_empty_batch():
    source = tf.placeholder(tf.string, [None])
    sp = tf.string_split(source)
    _assert_sparse(_run_sparse(sp, {source: ["one two", "three"]}), [[b"one", b"two"], [b"three"]])
    _assert_sparse(_run_sparse(sp, {source: np.array([], dtype=object)}), [])
    _assert_sparse(_run_sparse(tf.string_split([], skip_empty=False)), [])


def test_string_split_rejects_non_vector():
    with pytest.raises(ValueError, match="rank 1"):
        tf.string_split(tf.constant([["a"]]))
    with pytest.raises(ValueError):
        tf.string_split(["a"], result_type="RaggedTensor")


def test_strings_split_v2_semantics():
    source = [b"a  b", b" c ", b""]
    _assert_sparse(_run_sparse(tf.strings.split(source, sep=" ")), [s.split(b" ") for s in source])
    _assert_sparse(_run_sparse(tf.strings.split(source)), [s.split() for s in source])
    _assert_sparse(_run_sparse(tf.strings.split(["a<>b<>c"], sep="<>", maxsplit=1)), [[b"a", b"b<>c"]])
    _assert_sparse(_run_sparse(tf.strings.split(["a\tb\nc\x0bd\x0ce\rf"])),
                   [[b"a", b"b", b"c", b"d", b"e", b"f"]])


# -- substr ----------------------------------------------------------------------------------------
def test_substr_scalars_and_vectors():
    words = ["hello", "world"]
    check_op(tf.substr(words, 1, 3), _strings([w[1:4] for w in words]))
    check_op(tf.substr(words, [1, 2], [10, 1]), _strings(["ello", "r"]))
    check_op(tf.substr("hello", -3, 2), np.array(b"ll", dtype=object))
    check_op(tf.substr("hello", 5, 2), np.array(b"", dtype=object))
    check_op(tf.substr("hello", 1, -1), np.array(b"ello", dtype=object))   # negative len: the rest
    check_op(tf.substr("hello", -3, -1), np.array(b"llo", dtype=object))


def test_substr_broadcasts_and_int64():
    grid = np.array([[b"hello", b"ab"], [b"c", b"d"]], dtype=object)
    out = check_op(tf.substr(grid, [1, 0], [1, 1]), np.array([[b"e", b"a"], [b"", b"d"]], dtype=object))
    assert out.shape == (2, 2)
    check_op(tf.substr(["hello", "ab"], np.array([[1], [0]], np.int64), np.array([[1], [1]], np.int64)),
             np.array([[b"e", b"b"], [b"h", b"a"]], dtype=object))


def test_substr_utf8_unit():
    check_op(tf.substr(["h\u00e9llo"], 1, 2, unit="UTF8_CHAR"), _strings(["\u00e9l"]))


@pytest.mark.parametrize("pos", [6, -6])
def test_substr_position_out_of_range(pos):
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=f"pos {pos} out of range for string b'hello' at index 0"):
            sess.run(tf.substr("hello", pos, 2))


def test_substr_pos_and_len_must_match():
    with pytest.raises(ValueError):
        tf.substr([["hello", "ab"], ["c", "d"]], [1, 0], 1)


# -- string_join -----------------------------------------------------------------------------------
def test_string_join():
    check_op(tf.string_join(["a", ["b", "c"]], separator="-"), _strings(["a-b", "a-c"]))
    left, right = ["x", "yy"], ["1", "22"]
    check_op(tf.string_join([left, right, "!"]), _strings([a + b + "!" for a, b in zip(left, right)]))
    check_op(tf.string_join([]), np.array(b"", dtype=object))
    with pytest.raises(ValueError):
        tf.string_join([["a", "b"], ["b", "c", "d"]])


def test_string_join_runtime_shape_mismatch():
    a, b = tf.placeholder(tf.string, [None]), tf.placeholder(tf.string, [None])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(tf.string_join([a, b]), {a: ["x", "y"], b: ["z"]})


# -- as_string -------------------------------------------------------------------------------------
def _printf(fmt, values):
    return _strings([fmt % v for v in values])


@pytest.mark.parametrize("kwargs,fmt", [
    ({}, "%f"), ({"precision": 3}, "%.3f"), ({"scientific": True}, "%e"), ({"shortest": True}, "%g"),
    ({"width": 12, "fill": "0", "precision": 2}, "%012.2f"), ({"width": 10, "fill": "-"}, "%-10f"),
    ({"fill": "+"}, "%+f"), ({"fill": "#", "precision": 0}, "%#.0f"),
])
def test_as_string_floats_follow_printf(kwargs, fmt):
    values = [1.5, 2.0, 1e10, -3.25, 1e-7]
    for dtype in (np.float32, np.float64):
        x = np.array(values, dtype)
        check_op(tf.as_string(x, **kwargs), _printf(fmt, [float(v) for v in x]))


def test_as_string_integers_bools_complex_strings():
    check_op(tf.as_string([1, 22], width=5), _printf("%5d", [1, 22]))
    check_op(tf.as_string(np.array([-3], np.int64), fill="0", width=6), _strings(["-00003"]))
    check_op(tf.as_string(np.array([200], np.uint8)), _strings(["200"]))
    check_op(tf.as_string([True, False], width=6), _strings(["true", "false"]))
    check_op(tf.as_string(np.array([1.0 + 2.0j], np.complex64), precision=1, width=5),
             _strings(["(  1.0,  2.0)"]))
    check_op(tf.as_string(["ab"], width=4), _strings(["  ab"]))
    check_op(tf.as_string(["ab"], width=4, fill="-"), _strings(["ab  "]))


def test_as_string_non_finite_like_c():
    # C pads inf/nan with spaces even under the 0 flag, and prints the sign of nan.
    x = np.array([-np.nan, -np.inf, np.inf, np.nan], np.float32)
    check_op(tf.as_string(x, width=7, fill="0"), _strings(["   -nan", "   -inf", "    inf", "    nan"]))
    check_op(tf.as_string(np.array([np.nan], np.float32), width=7, fill="-"), _strings(["nan    "]))


@pytest.mark.parametrize("build,message", [
    (lambda: tf.as_string([1.5], fill="x"), 'Fill argument not supported: "x"'),
    (lambda: tf.as_string([3], fill="ab"), "Fill string must be one or fewer characters"),
    (lambda: tf.as_string([1.5], scientific=True, shortest=True), "Cannot select both"),
    (lambda: tf.as_string([1], precision=2), "precision not supported for datatype int32"),
    (lambda: tf.as_string([1], scientific=True), "scientific and shortest format not supported"),
])
def test_as_string_bad_attrs(build, message):
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(build())


# -- strip, length, regex --------------------------------------------------------------------------
def test_string_strip_and_length():
    values = ["  a b \t\n", "x", "\x0b\x0cy\r"]
    check_op(tf.string_strip(values), _strings([v.strip(" \t\n\r\x0b\x0c") for v in values]))
    words = ["abc", "", "\u00e9t\u00e9"]
    check_op(tf.strings.length(words), np.array([len(w.encode()) for w in words], np.int32))
    check_op(tf.strings.length(words, unit="UTF8_CHAR"), np.array([len(w) for w in words], np.int32))
    check_op(tf.strings.length([["ab"], ["c"]]), np.array([[2], [1]], np.int32))


def test_regex_replace_static_and_tensor_patterns():
    import re
    words = ["aab", "ba", "ccc"]
    expected_all = _strings([re.sub("a+", "X", w) for w in words])
    expected_first = _strings([re.sub("a", "X", w, count=1) for w in words])
    static = tf.regex_replace(words, "a+", "X")
    assert static.op.type == "StaticRegexReplace"
    check_op(static, expected_all)
    check_op(tf.regex_replace(words, "a", "X", replace_global=False), expected_first)
    dynamic = tf.regex_replace(words, tf.constant("a+"), tf.constant("X"))
    assert dynamic.op.type == "RegexReplace"
    check_op(dynamic, expected_all)
    check_op(tf.regex_replace(["ab-cd"], r"(\w+)-(\w+)", r"\2-\1"), _strings(["cd-ab"]))
    check_op(tf.regex_replace(["a.b"], r"\.", r"\\"), _strings(["a\\b"]))
    check_op(tf.strings.regex_replace(["abc"], "x*", "-"), _strings([re.sub("x*", "-", "abc")]))


def test_regex_replace_invalid_pattern():
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid pattern"):
            sess.run(tf.regex_replace(["ab"], "(", "X"))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid pattern"):
            sess.run(tf.regex_replace(["ab"], tf.constant("("), tf.constant("X")))


def test_string_ops_are_not_differentiable():
    x = tf.placeholder(tf.float32, [2])
    assert tf.gradients(tf.string_to_number(tf.as_string(x)), x) == [None]


def test_regex_full_match_static_and_tensor_patterns():
    words = [["s3://bucket/x", "/tmp/s3://x"], ["s3://", "a\nb"]]
    static = tf.strings.regex_full_match(words, "^s3://.*")
    assert static.op.type == "StaticRegexFullMatch"
    check_op(static, np.array([[True, False], [True, False]]))
    dynamic = tf.strings.regex_full_match(words, tf.constant("a.b|s3://"))
    assert dynamic.op.type == "RegexFullMatch"
    check_op(dynamic, np.array([[False, False], [True, False]]))  # "." stops at a newline, as RE2's
    check_op(tf.strings.regex_full_match("abc", "b"), np.array(False))  # the whole string must match
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid pattern"):
            sess.run(tf.strings.regex_full_match(["ab"], "("))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Pattern must be scalar"):
            sess.run(tf.strings.regex_full_match(["ab"], tf.constant(["a", "b"])))
