"""tf.strings.format (StringFormat) and tf.print (PrintV2). Every expected string below is the
output TensorFlow 2.21 (tensorflow.compat.v1, graph mode) gave for the same program."""
import logging
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.debugging.logging_ops import PrintV2
from tensorweave.testing.op_test import check_op


def _strings(values):
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


# (template, inputs, kwargs, TF 2.21's output)
FORMAT_CASES = [
    ("x={} y={}", lambda: [tf.constant([[1, 2], [3, 4]]), tf.constant(2.5)], {}, b"x=[[1 2]\n [3 4]] y=2.5"),
    ("{}", lambda: [tf.constant([2.5, 1e-7, 1 / 3, 1e20, -0.0, np.inf])], {"summarize": -1},
     b"[2.5 1e-07 0.333333343 1e+20 -0 inf]"),
    ("{}", lambda: [tf.constant([2.5, 1e-7, 1 / 3, 1e20], tf.float64)], {}, b"[2.5 1e-07 0.33333333333333331 1e+20]"),
    ("{}", lambda: [tf.constant(np.float32([123456789.0, 1e6, 12345678.0, 1e-5, 1e16]))], {"summarize": -1},
     b"[123456792 1e+06 12345678 1e-05 1e+16]"),
    ("{}", lambda: [tf.constant([1e6, 123456789.0], tf.float64)], {}, b"[1000000 123456789]"),
    ("{}", lambda: [tf.constant(np.array([0.1, 1 / 3], np.float16))], {}, b"[0.0999755859 0.333251953]"),
    ("{}", lambda: [tf.constant(np.array([np.nan, -np.nan, -np.inf]))], {}, b"[nan -nan -inf]"),
    ("{}", lambda: [tf.constant([True, False])], {}, b"[1 0]"),
    ("{}", lambda: [tf.constant(np.array([-5, 65, 7], np.int8))], {}, b"[-5 65 7]"),
    ("{}", lambda: [tf.constant(np.array([2 ** 63 - 1, -2 ** 63], np.int64))], {},
     b"[9223372036854775807 -9223372036854775808]"),
    ("{}", lambda: [tf.constant(np.array([2 ** 64 - 1], np.uint64))], {}, b"[18446744073709551615]"),
    ("{}", lambda: [tf.constant(1 + 2j)], {}, b"?"),
    ("{}", lambda: [tf.constant(["ab", "c d", 'q"x'])], {}, b'["ab" "c d" "q\\"x"]'),
    ("{}", lambda: [tf.constant("hello")], {}, b'"hello"'),
    ("{}", lambda: [tf.constant(_strings([b"a\nb", b"t\tb", b"back\\s", b"\xc3\xa9", b"\x01\x7f\xff", b"'",
                                          b"\r\x00\x1f ~"]))], {"summarize": -1},
     b'["a\\nb" "t\\tb" "back\\\\s" "\xc3\xa9" "\\001\\177\xff" "\\\'" "\\r\\000\\037 ~"]'),
    ("{}", lambda: [tf.constant(np.arange(100))], {}, b"[0 1 2 ... 97 98 99]"),
    ("{}", lambda: [tf.constant(np.arange(100).reshape(10, 10))], {},
     b"[[0 1 2 ... 7 8 9]\n [10 11 12 ... 17 18 19]\n [20 21 22 ... 27 28 29]\n ...\n"
     b" [70 71 72 ... 77 78 79]\n [80 81 82 ... 87 88 89]\n [90 91 92 ... 97 98 99]]"),
    ("{}", lambda: [tf.constant(np.arange(24).reshape(2, 3, 4))], {},
     b"[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]]"),
    ("{}", lambda: [tf.constant(np.arange(28).reshape(7, 2, 2))], {"summarize": 1},
     b"[[[0 1]\n  [2 3]]\n\n ...\n\n [[24 25]\n  [26 27]]]"),
    ("{}", lambda: [tf.constant(np.arange(120).reshape(2, 3, 4, 5)[:, :1, :2])], {"summarize": 2},
     b"[[[[0 1 ... 3 4]\n   [5 6 ... 8 9]]]\n\n\n [[[60 61 ... 63 64]\n   [65 66 ... 68 69]]]]"),
    ("{}", lambda: [tf.constant(np.arange(100).reshape(10, 10))], {"summarize": 0}, b"[\n ...]"),
    ("{}", lambda: [tf.constant(np.arange(10))], {"summarize": 0}, b"[ ...]"),
    ("{}", lambda: [tf.constant(5)], {"summarize": 0}, b"..."),
    ("{}", lambda: [tf.constant(np.arange(14).reshape(7, 2))], {"summarize": -1},
     b"[[0 1]\n [2 3]\n [4 5]\n [6 7]\n [8 9]\n [10 11]\n [12 13]]"),
    ("{}", lambda: [tf.constant(np.arange(6))], {}, b"[0 1 2 3 4 5]"),
    ("{}", lambda: [tf.constant(np.arange(7))], {}, b"[0 1 2 ... 4 5 6]"),
    ("{}", lambda: [tf.constant(np.arange(5).reshape(5, 1))], {"summarize": 1}, b"[[0]\n ...\n [4]]"),
    ("{}", lambda: [tf.constant(np.zeros((0, 3)))], {}, b"[]"),
    ("{}", lambda: [tf.constant(np.zeros((3, 0)))], {}, b"[\n ...]"),
    ("{}", lambda: [tf.constant(np.zeros((2, 2, 0)))], {}, b"[\n\n ...]"),
    ("a%sb", lambda: [tf.constant(1)], {"placeholder": "%s"}, b"a1b"),
    ("{x}{x}", lambda: [tf.constant(1), tf.constant(2)], {"placeholder": "{x}"}, b"12"),
    ("{}}", lambda: [tf.constant(1)], {}, b"1}"),
    ("no", lambda: [], {}, b"no"),
    ("{}", lambda: tf.constant(7), {}, b"7"),
    ("{}", lambda: [[1, 2]], {}, b"[1 2]"),
]


@pytest.mark.parametrize("template,inputs,kwargs,expected", FORMAT_CASES)
def test_string_format_matches_tf(template, inputs, kwargs, expected):
    out = tf.strings.format(template, inputs(), **kwargs)
    assert out.dtype == tf.string and out.shape.ndims == 0
    check_op(out, expected)  # the value, and the static shape () against it


def test_string_format_fed_tensor_and_graph_attrs():
    x = tf.placeholder(tf.float32, [None])
    out = tf.strings.format("v: {}", x, summarize=1, name="fmt")
    assert out.op.type == "StringFormat" and out.op.name == "fmt"
    assert out.op.get_attr("T") == [tf.float32] and out.op.get_attr("placeholder") == b"{}"
    check_op(out, b"v: [1e-07 ... 3.25e+10]", {x: np.float32([1e-7, 2, 3.25e10])})


def test_string_format_placeholder_count_mismatch():
    with pytest.raises(ValueError, match="The template expects 2 tensors, but the inputs only has 1"):
        tf.strings.format("{} {}", [tf.constant(1)])
    with pytest.raises(ValueError, match="The template expects 1 tensors, but the inputs only has 2"):
        tf.strings.format("{}", [tf.constant(1), tf.constant(2)])
    with pytest.raises(ValueError, match="The template expects 3 tensors"):
        tf.strings.format("{}", [tf.constant(1)], placeholder="")
    # the op itself (default placeholder '%s') checks in its shape function
    from tensorweave.ops.strings.string_ops import StringFormat
    with pytest.raises(ValueError, match="num placeholders in template and num inputs must match: 0 vs. 1"):
        apply_op(StringFormat, inputs=[tf.constant(1)], template="{} {}")


def _run(op):
    with tf.Session() as sess:
        assert sess.run(op) is None


def test_print_structures_to_stdout(capfd):
    t, t2 = tf.constant([1.5, 2.0]), tf.constant([[1, 2], [3, 4]])
    _run(tf.print("loss:", t, {"a": t2}, output_stream=sys.stdout))
    _run(tf.print("a", 1, 2.5, [1, t, "x"], (t,), {"b": 1, "a": t2}, None, True, output_stream=sys.stdout))
    _run(tf.print("x{}y", t, sep="|", end="END\n", output_stream=sys.stdout))
    _run(tf.print(output_stream=sys.stdout))
    _run(tf.print(tf.range(10), summarize=2, output_stream=sys.stdout))
    _run(tf.print("it's", "a\nb", 'q"', output_stream=sys.stdout))
    _run(tf.print({"k": "it's"}, output_stream=sys.stdout))
    out, err = capfd.readouterr()
    assert err == ""
    assert out == ("loss: [1.5 2] {'a': [[1 2]\n [3 4]]}\n"
                   "a 1 2.5 [1, [1.5 2], 'x'] ([1.5 2],) {'a': [[1 2]\n [3 4]], 'b': 1} None True\n"
                   "x{}y|[1.5 2]END\n"
                   "\n"
                   "[0 1 ... 8 9]\n"
                   "it's a\nb q\"\n"
                   "{'k': \"it's\"}\n")


def test_print_strings_sparse_ordered_dict_and_long_structures(capfd):
    import collections
    t = tf.constant([1.5, 2.0])
    _run(tf.print(tf.constant("scalar str")))  # stderr by default
    _run(tf.print(tf.constant("scalar str"), 1, output_stream=sys.stdout))
    _run(tf.print(tf.constant(["v", "w"]), output_stream=sys.stdout))
    _run(tf.print(collections.OrderedDict([("z", t), ("a", 1)]), output_stream=sys.stdout))
    _run(tf.print(tf.SparseTensor([[0, 1]], [5], [2, 3]), output_stream=sys.stdout))
    _run(tf.print({"alpha_long_key_name": tf.constant([1, 2]), "beta_long_key_name": [1, 2, 3],
                   "gamma_long_key_name": "some text here"}, output_stream=sys.stdout))
    out, err = capfd.readouterr()
    assert err == "scalar str\n"
    assert out == ('"scalar str" 1\n'
                   '["v" "w"]\n'
                   "OrderedDict([('z', [1.5 2]), ('a', 1)])\n"
                   "'SparseTensor(indices=[[0 1]], values=[5], shape=[2 3])'\n"
                   "{'alpha_long_key_name': [1 2],\n 'beta_long_key_name': [1, 2, 3],\n"
                   " 'gamma_long_key_name': 'some text here'}\n")


def test_print_graph_structure_and_control_dependency(capfd):
    t = tf.constant([1, 2])
    op = tf.print("n", t, name="myprint")
    assert op.type == "PrintV2" and op.name == "myprint" and op.outputs == []
    assert op.inputs[0].op.name == "myprint_format" and op.inputs[0].op.type == "StringFormat"
    assert op.get_attr("output_stream") == b"stderr" and op.get_attr("end") == b"\n"
    # the placeholder avoids text already in the template: '{}' grows seeded digits
    assert tf.print("x{}y", t).inputs[0].op.get_attr("placeholder") != "{}"
    x = tf.placeholder(tf.float32, [None, 3])
    with tf.control_dependencies([tf.print("x:", x, output_stream=sys.stdout)]):
        y = tf.identity(x * 2)
    with tf.Session() as sess:
        sess.run(y, {x: np.arange(30, dtype=np.float32).reshape(10, 3) / 3})
    out, _ = capfd.readouterr()
    assert out == ("x: [[0 0.333333343 0.666666687]\n [1 1.33333337 1.66666663]\n [2 2.33333325 2.66666675]\n"
                   " ...\n [7 7.33333349 7.66666651]\n [8 8.33333302 8.66666698]\n [9 9.33333302 9.66666698]]\n")


def test_print_to_file_and_log(tmp_path, capfd):
    path = tmp_path / "printed.txt"
    op = tf.print("hi", tf.constant([1.5, 2.0]), output_stream=f"file://{path}", end="!")
    assert op.get_attr("output_stream") == f"file://{path}".encode()
    with tf.Session() as sess:
        sess.run(op)
        sess.run(op)  # TF appends
    assert path.read_text() == "hi [1.5 2]!hi [1.5 2]!"
    assert tf.print("x", output_stream=logging.INFO).get_attr("output_stream") == b"log(info)"
    assert tf.print("x", output_stream=logging.WARN).get_attr("output_stream") == b"log(warning)"
    _run(tf.print("w", tf.constant(3), output_stream=logging.ERROR))
    _, err = capfd.readouterr()
    assert err.startswith("E") and err.endswith("] w 3\n\n")  # glog line: message + end + newline


@pytest.mark.parametrize("stream", ["stdout", "file:/x", 3, logging.info])
def test_print_rejects_unsupported_stream(stream):
    with pytest.raises(ValueError, match="Unsupported output stream, logging level, or file"):
        tf.print("hi", output_stream=stream)


def test_print_rejects_bad_kwargs_and_inputs():
    with pytest.raises(ValueError, match="Unrecognized keyword arguments for tf.print"):
        tf.print("x", foo=1)
    with pytest.raises(ValueError, match="input must be a scalar, but has rank: 1"):
        apply_op(PrintV2, input=tf.constant(["a"]))
    op = apply_op(PrintV2, input=tf.constant("a"), output_stream="bogus")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown output stream: bogus"):
        _run(op)
