"""Feed and fetch cases written once for both libraries: make_tf_feed_fixtures.py runs them under
TensorFlow 2.21 to record what it does, tests/runtime/test_feeds.py under tensorweave to compare.
`tf` is either module.

FEEDS: (name, placeholder dtype, placeholder shape, value). Each case runs
`sess.run(tf.identity(p), {p: value})`: through a kernel, since TF hands back a fed value that is
fetched directly without converting it to a tensor.
"""
import numpy as np

_INT_RANGES = {
    "int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1),
    "int64": (-2**63, 2**63 - 1), "uint8": (0, 2**8 - 1), "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1),
}


def _python_int_cases():
    cases = []
    for dtype, (low, high) in _INT_RANGES.items():
        for label, value in (("min", low), ("max", high), ("below_min", low - 1), ("above_max", high + 1)):
            cases.append((f"pyint_{label}_{dtype}", dtype, None, value))
    return cases + [
        ("pyint_2_40_int32", "int32", None, 2**40),
        ("pyint_list_2_40_int32", "int32", None, [1, 2**40]),
        ("pyint_nested_list_int8", "int8", None, [[1, 300], [-200, 5]]),
        ("pybool_int32", "int32", None, True),
        ("pyint_1_bool", "bool", None, 1),
        ("pyint_2_bool", "bool", None, 2),
        ("pyint_string", "string", None, 1),
        ("pybool_string", "string", None, True),
        ("pyint_2_40_float32", "float32", None, 2**40),
        ("pyint_2_64_float64", "float64", None, 2**64),
        ("pyint_2_2000_float64", "float64", None, 2**2000),
        ("pyint_2_16_float16", "float16", None, 2**16),
        ("pyint_2_40_complex64", "complex64", None, 2**40),
    ]


def _numpy_int_cases():
    return [
        ("np_int64_scalar_2_40_int32", "int32", None, np.int64(2**40)),
        ("np_int64_array_int32", "int32", [1], np.array([2**40 + 5], np.int64)),
        ("np_uint32_array_int32", "int32", [1], np.array([2**32 - 1], np.uint32)),
        ("np_int32_array_uint8", "uint8", [1], np.array([-1], np.int32)),
        ("np_int64_array_int8", "int8", [2], np.array([-129, 128], np.int64)),
        ("np_uint64_array_int64", "int64", [1], np.array([2**64 - 1], np.uint64)),
        ("np_int64_array_uint16", "uint16", None, np.array([[70000, -3]], np.int64)),
        ("np_bool_array_int32", "int32", None, np.array([True, False])),
        ("np_int_array_bool", "bool", None, np.array([0, 2, -1])),
    ]


def _float_into_int_cases():
    return [
        ("float_whole_int32", "int32", None, 1.0),
        ("float_fraction_int32", "int32", None, 1.5),
        ("float_negative_fraction_int32", "int32", None, -1.5),
        ("float_list_int32", "int32", [2], [1.0, 2.5]),
        ("np_float32_scalar_int32", "int32", None, np.float32(1.5)),
        ("np_float64_array_int32", "int32", None, np.array([1.5, -2.7, 3.0])),
        ("float_negative_uint8", "uint8", None, -1.5),
        ("float_1e20_int32", "int32", None, 1e20),
        ("float_nan_int32", "int32", None, float("nan")),
        ("float_inf_int64", "int64", None, float("inf")),
        ("float_whole_int64", "int64", None, 2.0**40),
        ("float_fraction_bool", "bool", None, 1.5),
        ("complex_int32", "int32", None, 1 + 2j),
        ("float_1e40_float32", "float32", None, 1e40),
    ]


def _none_and_string_cases():
    return [
        ("none_unshaped_float32", "float32", None, None),
        ("none_scalar_float32", "float32", [], None),
        ("none_shaped_float32", "float32", [2], None),
        ("none_float64", "float64", None, None),
        ("none_in_list_float32", "float32", None, [None, 1.0]),
        ("none_int32", "int32", None, None),
        ("none_bool", "bool", None, None),
        ("none_string", "string", None, None),
        ("str_letters_float32", "float32", None, "a"),
        ("str_number_float32", "float32", None, "1.5"),
        ("bytes_number_float32", "float32", None, b"1"),
        ("bytes_letters_float32", "float32", None, b"x"),
        ("str_list_float32", "float32", None, ["1", "b"]),
        ("str_number_int32", "int32", None, "7"),
        ("str_letters_int32", "int32", None, "seven"),
        ("str_bool", "bool", None, "a"),
        ("dict_float32", "float32", None, {}),
        ("ragged_float32", "float32", None, [[1.0], [1.0, 2.0]]),
        ("float_string", "string", None, 1.5),
        ("np_float64_scalar_string", "string", None, np.float64(1.5)),
        ("mixed_list_string", "string", None, [b"a", 1.5]),
        ("np_int_array_string", "string", None, np.array([1, 2])),
        ("np_float_array_string", "string", None, np.array([1.5])),
        ("unicode_string", "string", None, "\u00e9t\u00e9"),
        ("str_list_string", "string", None, ["a", "bc"]),
        ("np_unicode_array_string", "string", None, np.array(["a", "bc"])),
        ("np_bytes_array_string", "string", None, np.array([b"a", b"bc"])),
    ]


FEEDS = _python_int_cases() + _numpy_int_cases() + _float_into_int_cases() + _none_and_string_cases()


def build_graph(tf):
    """The graph of the feed/fetch scenarios (v1 control flow); returns its named tensors."""
    t = {"x": tf.placeholder(tf.int32, [], name="x"), "p": tf.placeholder(tf.bool, [], name="p")}
    x = t["x"]

    def body(i):
        t["body"] = i * 2
        return t["body"] + 1

    t["r"] = tf.while_loop(lambda i: i < 10, body, [x])

    def true_fn():
        t["taken"] = x + 100
        return t["taken"]

    def false_fn():
        t["untaken"] = x - 100
        return t["untaken"]

    t["c"] = tf.cond(t["p"], true_fn, false_fn)

    def outer_body(i):
        def inner_body(j):
            t["inner_body"] = j + 1
            return t["inner_body"]

        t["inner_cond"] = tf.cond(i > 3, lambda: i * 3, lambda: i - 1, name="in_cond")
        return tf.while_loop(lambda j: j < i + 2, inner_body, [t["inner_cond"]], name="inner") + 1

    t["nested"] = tf.while_loop(lambda i: i < 20, outer_body, [x], name="outer")
    t["y"] = tf.placeholder(tf.float32, [], name="y")
    t["z"] = tf.add(t["y"], 1.0, name="z")
    t["y"].graph.prevent_feeding(t["y"])
    t["y"].graph.prevent_fetching(t["z"].op)
    return t


def _by_name(name):
    return lambda g, t: g.get_tensor_by_name(name)


# name -> (fetches(g, t), feeds(g, t) as a list of (key, value) pairs)
SCENARIOS = {
    "run_loop": (lambda g, t: t["r"], lambda g, t: [(t["x"], 1)]),
    "feed_loop_body": (lambda g, t: t["r"], lambda g, t: [(t["x"], 1), (t["body"], 3)]),
    "feed_loop_body_by_name": (lambda g, t: t["r"], lambda g, t: [(t["x"], 1), ("while/mul:0", 3)]),
    "feed_loop_body_constant": (lambda g, t: t["r"], lambda g, t: [(t["x"], 1), ("while/mul/y:0", 5)]),
    "feed_loop_enter": (lambda g, t: t["r"], lambda g, t: [(t["x"], 1), ("while/Enter:0", 3)]),
    "feed_loop_exit": (lambda g, t: t["r"] * 2, lambda g, t: [(t["x"], 1), (t["r"], 5)]),
    "feed_inner_loop_body": (lambda g, t: t["nested"], lambda g, t: [(t["x"], 1), (t["inner_body"], 3)]),
    "fetch_loop_body": (lambda g, t: t["body"], lambda g, t: [(t["x"], 1)]),
    "fetch_loop_body_by_name": (lambda g, t: "while/mul:0", lambda g, t: [(t["x"], 1)]),
    "fetch_loop_body_op": (lambda g, t: t["body"].op, lambda g, t: [(t["x"], 1)]),
    "fetch_loop_body_in_list": (lambda g, t: [t["r"], {"b": t["body"]}], lambda g, t: [(t["x"], 1)]),
    "fetch_loop_body_constant": (lambda g, t: "while/mul/y:0", lambda g, t: [(t["x"], 1)]),
    "fetch_loop_enter": (lambda g, t: "while/Enter:0", lambda g, t: [(t["x"], 1)]),
    "fetch_loop_merge": (lambda g, t: "while/Merge:0", lambda g, t: [(t["x"], 1)]),
    "fetch_loop_exit": (lambda g, t: "while/Exit:0", lambda g, t: [(t["x"], 1)]),
    "fetch_inner_loop_body": (lambda g, t: t["inner_body"], lambda g, t: [(t["x"], 1)]),
    "fetch_cond_in_loop": (lambda g, t: t["inner_cond"], lambda g, t: [(t["x"], 1)]),
    "run_nested": (lambda g, t: t["nested"], lambda g, t: [(t["x"], 1)]),
    "fetch_cond_taken_branch": (lambda g, t: t["taken"], lambda g, t: [(t["x"], 1), (t["p"], True)]),
    "fetch_cond_untaken_branch": (lambda g, t: t["untaken"], lambda g, t: [(t["x"], 1), (t["p"], True)]),
    "fetch_cond_switch_t": (lambda g, t: "cond/switch_t:0", lambda g, t: [(t["x"], 1), (t["p"], True)]),
    "fetch_cond_pred_id": (lambda g, t: "cond/pred_id:0", lambda g, t: [(t["x"], 1), (t["p"], True)]),
    "fetch_cond_result": (lambda g, t: t["c"], lambda g, t: [(t["x"], 1), (t["p"], True)]),
    "feed_cond_branch": (lambda g, t: t["c"], lambda g, t: [(t["x"], 1), (t["p"], False), (t["untaken"], 7)]),
    "feed_prevented": (lambda g, t: t["y"] * 2.0, lambda g, t: [(t["y"], 1.0)]),
    "feed_prevented_bad_shape": (lambda g, t: t["y"] * 2.0, lambda g, t: [(t["y"], [1.0])]),
    "fetch_prevented_tensor": (lambda g, t: t["z"], lambda g, t: []),
    "fetch_prevented_op": (lambda g, t: t["z"].op, lambda g, t: []),
    "fetch_prevented_by_name": (lambda g, t: "z:0", lambda g, t: []),
    "fetch_none": (lambda g, t: None, lambda g, t: []),
    "fetch_none_in_list": (lambda g, t: [t["x"], None], lambda g, t: [(t["x"], 1)]),
    "fetch_none_in_dict": (lambda g, t: {"a": t["x"], "b": None}, lambda g, t: [(t["x"], 1)]),
}


def feedable_flags(g, t):
    """graph.is_feedable / is_fetchable on the scenario graph's tensors and ops."""
    return {
        "is_feedable_y": g.is_feedable(t["y"]), "is_feedable_z": g.is_feedable(t["z"]),
        "is_fetchable_z": g.is_fetchable(t["z"]), "is_fetchable_z_op": g.is_fetchable(t["z"].op),
        "is_fetchable_y": g.is_fetchable(t["y"]), "is_feedable_body": g.is_feedable(t["body"]),
        "is_fetchable_body": g.is_fetchable(t["body"]), "is_feedable_taken": g.is_feedable(t["taken"]),
        "is_fetchable_taken": g.is_fetchable(t["taken"]), "is_feedable_r": g.is_feedable(t["r"]),
        "is_fetchable_r": g.is_fetchable(t["r"]),
    }


def encode_value(value):
    """A fetched value as JSON: dtype, shape and exact bytes (hex; strings item by item)."""
    if isinstance(value, bytes):
        return {"dtype": "string", "shape": [], "items": [value.hex()]}
    array = np.asarray(value)
    if array.dtype == object:
        return {"dtype": "string", "shape": list(array.shape), "items": [b.hex() for b in array.reshape(-1)]}
    return {"dtype": array.dtype.name, "shape": list(array.shape), "hex": array.tobytes().hex()}


def outcome(fn):
    """What fn() did: its encoded value, or the class and message of what it raised."""
    try:
        value = fn()
    except Exception as err:  # noqa: BLE001  (recording every outcome is the point)
        return {"error": type(err).__name__, "message": str(err)}
    if isinstance(value, list):
        return {"values": [None if v is None else encode_value(v) for v in value]}
    if isinstance(value, dict):
        return {"values": {k: None if v is None else encode_value(v) for k, v in value.items()}}
    return {"value": None if value is None else encode_value(value)}
