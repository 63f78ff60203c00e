"""Writes tests/data/tf_malformed_expected.json: what TensorFlow 2.21 does with huge and malformed
graph inputs (issue 10), for tests/framework/test_malformed_inputs.py.

Run with real TensorFlow, never imported by the tests:
`/opt/tfref/bin/python tests/data/make_tf_malformed_fixtures.py tests/data`.

Each case is a GraphDef in text format (imported with `tf.import_graph_def`, then its `fetch`
run) or a named Python program (PROGRAMS below, the same source run by the tests under
tensorweave). For each the fixture records the stage that failed ("import"/"build" or "run", or
"ok") and TensorFlow's error class, with the first line of its message.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402

tf.disable_eager_execution()

FLOAT, INT32, STRING = 1, 3, 7


def const(name, dtype, tensor, attr_dtype=None):
    return (f'node {{ name: "{name}" op: "Const" attr {{ key: "dtype" value {{ type: {attr_dtype or dtype} }} }} '
            f'attr {{ key: "value" value {{ tensor {{ dtype: {dtype} {tensor} }} }} }} }}')


def shape(*dims):
    return "tensor_shape { " + " ".join(f"dim {{ size: {d} }}" for d in dims) + " }"


def placeholder(name, attrs='attr { key: "dtype" value { type: DT_FLOAT } }'):
    return f'node {{ name: "{name}" op: "Placeholder" {attrs} }}'


_X = placeholder("x")
_F32_ATTR = 'attr { key: "T" value { type: DT_FLOAT } }'
# name -> (GraphDef text, node to fetch or None)
GRAPH_DEFS = {
    # -- item 1: huge Consts with one value or none ------------------------------------------------
    "const_huge_no_values": (const("c", FLOAT, shape(1 << 40)), "c"),
    "const_huge_one_value": (const("c", FLOAT, shape(1 << 40) + " float_val: 2.5"), "c"),
    "const_shape_overflow": (const("c", FLOAT, shape(1 << 40, 1 << 40)), "c"),
    "const_negative_dim": (const("c", FLOAT, shape(-3)), "c"),
    "const_fill_ok": (const("c", INT32, shape(2, 3) + " int_val: 1 int_val: 2"), "c"),
    # -- item 2: malformed tensors -----------------------------------------------------------------
    "content_short": (const("c", FLOAT, shape(4) + ' tensor_content: "\\000\\000\\000\\000"'), "c"),
    "content_long": (const("c", FLOAT, shape(1) + ' tensor_content: "' + "\\000" * 12 + '"'), "c"),
    "content_not_multiple": (const("c", FLOAT, shape(2) + ' tensor_content: "\\000\\000\\000"'), "c"),
    "too_many_values": (const("c", FLOAT, shape(2) + " float_val: 1 float_val: 2 float_val: 3"), "c"),
    "string_in_float_const": (const("c", FLOAT, shape(1) + ' string_val: "abc"'), "c"),
    "int_val_in_float_const": (const("c", FLOAT, shape(2) + " int_val: 7"), "c"),
    "const_dtype_mismatch": (const("c", INT32, shape(1) + " int_val: 1", attr_dtype=FLOAT), "c"),
    "const_invalid_dtype": (const("c", 0, shape(1), attr_dtype=0), "c"),
    "placeholder_dim_below_minus_one": (placeholder(
        "p", 'attr { key: "dtype" value { type: DT_FLOAT } } '
        'attr { key: "shape" value { shape { dim { size: -2 } } } }'), None),
    # -- item 2: every attr kind with a value of the wrong type -------------------------------------
    "type_attr_given_int": (placeholder("p", 'attr { key: "dtype" value { i: 1 } }'), None),
    "type_attr_invalid_enum": (placeholder("p", 'attr { key: "dtype" value { type: 999 } }'), None),
    "type_attr_not_allowed": (_X + ' node { name: "m" op: "MatMul" input: "x" input: "x" '
                              'attr { key: "T" value { type: DT_STRING } } }', None),
    "shape_attr_given_int": (placeholder(
        "p", 'attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { i: 3 } }'), None),
    "tensor_attr_given_float": ('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
                                'attr { key: "value" value { f: 1.0 } } }', None),
    "bool_attr_given_int": (_X + ' node { name: "m" op: "MatMul" input: "x" input: "x" ' + _F32_ATTR +
                            ' attr { key: "transpose_a" value { i: 1 } } }', None),
    "float_attr_given_string": (_X + ' node { name: "r" op: "LeakyRelu" input: "x" ' + _F32_ATTR +
                                ' attr { key: "alpha" value { s: "big" } } }', None),
    "int_attr_given_float": (_X + ' node { name: "u" op: "Unpack" input: "x" ' + _F32_ATTR +
                             ' attr { key: "num" value { f: 2.0 } } attr { key: "axis" value { i: 0 } } }', None),
    "string_attr_given_int": ('node { name: "v" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } } '
                              'attr { key: "shape" value { shape { } } } attr { key: "container" value { i: 4 } } '
                              'attr { key: "shared_name" value { s: "" } } }', None),
    "list_int_attr_given_string": (_X + ' node { name: "s" op: "Squeeze" input: "x" ' + _F32_ATTR +
                                   ' attr { key: "squeeze_dims" value { s: "0" } } }', None),
    "list_int_attr_given_list_string": (_X + ' node { name: "s" op: "Squeeze" input: "x" ' + _F32_ATTR +
                                        ' attr { key: "squeeze_dims" value { list { s: "0" } } } }', None),
    "list_type_attr_given_type": ('node { name: "q" op: "FIFOQueueV2" '
                                  'attr { key: "component_types" value { type: DT_FLOAT } } }', None),
    "int_attr_below_minimum": (_X + ' node { name: "u" op: "Unpack" input: "x" ' + _F32_ATTR +
                               ' attr { key: "num" value { i: -1 } } attr { key: "axis" value { i: 0 } } }', None),
    # -- item 2: unknown op, missing attr, bad inputs -------------------------------------------------
    "unknown_op": ('node { name: "q" op: "NoSuchOpAtAll" }', None),
    "missing_required_attr": ('node { name: "p" op: "Placeholder" }', None),
    "missing_input_node": ('node { name: "i" op: "Identity" input: "nowhere" ' + _F32_ATTR + ' }', None),
    "input_port_out_of_range": (_X + ' node { name: "i" op: "Identity" input: "x:3" ' + _F32_ATTR + ' }', None),
    "missing_control_input": (_X + ' node { name: "i" op: "Identity" input: "x" input: "^ghost" ' + _F32_ATTR +
                              ' }', None),
    "too_few_inputs": (_X + ' node { name: "a" op: "Add" input: "x" ' + _F32_ATTR + ' }', None),
    "too_many_inputs": (_X + ' node { name: "i" op: "Identity" input: "x" input: "x" ' + _F32_ATTR + ' }', None),
    "input_wrong_type": ('node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } } '
                         'node { name: "i" op: "Neg" input: "x" ' + _F32_ATTR + ' }', None),
    "control_input_before_data": (_X + ' node { name: "i" op: "Identity" input: "^x" input: "x" ' + _F32_ATTR +
                                  ' }', None),
    "self_loop": ('node { name: "i" op: "Identity" input: "i" ' + _F32_ATTR + ' }', None),
    "empty_node_name": ('node { name: "" op: "NoOp" }', None),
}

# name -> source of a program run under `tf` (TensorFlow here, tensorweave in the tests): it
# defines `fetch` (built in the default graph) and optionally `init`, run before `fetch`.
PROGRAMS = {
    "constant_huge": "fetch = tf.constant(0.0, shape=[1 << 40])",
    "constant_huge_size_graphdef": (
        "fetch = tf.constant(0.0, shape=[1 << 40]); fetch = tf.size(fetch, out_type=tf.int64)"),
    "constant_fill_values": "fetch = tf.constant([1, 2], shape=[2, 3])",
    "constant_static_value": "fetch = tf.constant(tf.get_static_value(tf.constant(3.0, shape=[4])))",
    "constant_huge_reduce_sum": "fetch = tf.reduce_sum(tf.constant(1.0, shape=[1 << 40]))",
    "fill_huge": "fetch = tf.fill([1 << 40], 0.0)",
    "fill_huge_2d": "fetch = tf.fill([1 << 20, 1 << 20], 0.0)",
    "fill_overflow": "fetch = tf.fill([1 << 40, 1 << 40], 0.0)",
    "fill_huge_consumed": "fetch = tf.reduce_sum(tf.fill([1 << 40], 1.0))",
    "fill_huge_fed_dims": "d = tf.placeholder_with_default([1 << 40], [1]); fetch = tf.reduce_sum(tf.fill(d, 1.0))",
    "zeros_huge": "fetch = tf.zeros([1 << 40])",
    "ones_huge": "fetch = tf.ones([1 << 40])",
    "zeros_huge_int32": "fetch = tf.zeros([1 << 40], dtype=tf.int32)",
    "variable_huge": "v = tf.Variable(tf.zeros([1 << 40])); init = v.initializer; fetch = v",
    "truncatediv_int32_zero": "fetch = tf.truncatediv(tf.constant([7], tf.int32), tf.constant([0], tf.int32))",
    "truncatediv_int64_zero": "fetch = tf.truncatediv(tf.constant([7], tf.int64), tf.constant([0], tf.int64))",
    "floordiv_int32_zero": "fetch = tf.constant([7], tf.int32) // tf.constant([0], tf.int32)",
    "floordiv_int64_zero": "fetch = tf.constant([7], tf.int64) // tf.constant([0], tf.int64)",
    "floormod_int32_zero": "fetch = tf.constant([7], tf.int32) % tf.constant([0], tf.int32)",
    "truncatemod_int32_zero": "fetch = tf.truncatemod(tf.constant([7], tf.int32), tf.constant([0], tf.int32))",
    "div_int32_zero": "fetch = tf.div(tf.constant([7], tf.int32), tf.constant([0], tf.int32))",
    "random_uniform_negative": "fetch = tf.random_uniform([-5])",
    "random_normal_negative": "fetch = tf.random_normal([-5])",
    "truncated_normal_negative": "fetch = tf.truncated_normal([2, -1])",
}


def _outcome(stage, err):
    if err is None:
        return {"stage": "ok"}
    return {"stage": stage, "error": type(err).__name__, "message": _message(err)}


def _message(err):
    """The line saying what went wrong: a run error's text follows its "Node: 'name'" line."""
    lines = str(getattr(err, "message", err)).split("\n")
    for i, line in enumerate(lines[:-1]):
        if line.startswith("Node: '"):
            return lines[i + 1][:300]
    return lines[0][:300]


def run_graph_def(text, fetch):
    graph_def = tf.GraphDef()
    text_format.Parse(text, graph_def)
    with tf.Graph().as_default() as g:
        try:
            tf.import_graph_def(graph_def, name="")
        except Exception as err:  # noqa: BLE001 (recording TF's class)
            return _outcome("import", err)
        if fetch is None:
            return _outcome("import", None)
        return _run(g, g.get_tensor_by_name(fetch + ":0"), None)


def _run(graph, fetch, init):
    with tf.Session(graph=graph) as sess:
        try:
            if init is not None:
                sess.run(init)
            value = sess.run(fetch)
        except Exception as err:  # noqa: BLE001
            return _outcome("run", err)
    out = _outcome("run", None)
    out["shape"] = list(value.shape)
    if value.size <= 16:
        out["value"] = value.tolist()
    return out


def run_program(source):
    with tf.Graph().as_default() as g:
        scope = {"tf": tf}
        try:
            exec(source, scope)
        except Exception as err:  # noqa: BLE001
            return _outcome("build", err)
        out = _run(g, scope["fetch"], scope.get("init"))
        out["graph_def_bytes"] = g.as_graph_def().ByteSize()
        return out


def main(out_dir):
    cases = {}
    for name, (text, fetch) in GRAPH_DEFS.items():
        cases[name] = {"graph_def": text, "fetch": fetch, **run_graph_def(text, fetch)}
    for name, source in PROGRAMS.items():
        cases[name] = {"program": source, **run_program(source)}
    path = os.path.join(out_dir, "tf_malformed_expected.json")
    with open(path, "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": cases}, f, indent=1, sort_keys=True)
        f.write("\n")
    for name, case in cases.items():
        print(f"{name:36s} {case['stage']:7s} {case.get('error', '')}: {case.get('message', '')[:110]}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
