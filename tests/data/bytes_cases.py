"""Which Python type each public API returns for names, attrs and NodeDef fields (bytes or str,
DType, TensorShape, protos), probed once for both libraries: make_tf_bytes_fixtures.py runs
`probe(tf)` under TensorFlow 2.21 (compat.v1 graph mode) to record TF's answers in
tf_bytes_expected.json, tests/framework/test_api_return_types.py runs it under tensorweave.
`tf` is either module.
"""


def describe(value):
    """A type description comparable across the libraries: the type's name, lists element-wise."""
    if isinstance(value, (list, tuple)):
        kinds = sorted({describe(v) for v in value})
        return f"{type(value).__name__}[{'|'.join(kinds)}]"
    return type(value).__name__


def _attr_value(op, name):
    return op.get_attr(name)


def _build(tf):
    v = tf.Variable([[1.0, 2.0]], name="v")
    with tf.colocate_with(v):
        near = tf.identity(v, name="near")
    x = tf.placeholder(tf.float32, [None, 4, 4, 1], name="x")
    k = tf.constant(1.0, shape=[2, 2, 1, 1], name="k")
    conv = tf.nn.conv2d(x, k, strides=[1, 1, 1, 1], padding="SAME", data_format="NHWC", name="conv")
    pool = tf.nn.max_pool(conv, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID", name="pool")
    checked = tf.check_numerics(pool, message="pool is finite", name="checked")
    with tf.device("/cpu:0"):
        placed = tf.add(near, 1.0, name="placed")
    joined = tf.strings.join(["a", "b"], separator="-", name="joined")
    loop = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)], name="loop")
    s = tf.train.Saver([v])
    return dict(v=v, near=near, x=x, conv=conv, pool=pool, checked=checked, placed=placed, joined=joined,
                loop=loop, saver=s)


def probe(tf):
    """{api: type description} for a small graph built in a fresh default graph."""
    with tf.Graph().as_default() as g:
        t = _build(tf)
        near, conv, pool = t["near"].op, t["conv"].op, t["pool"].op
        enter = [op for op in g.get_operations() if op.type == "Enter"][0]
        var_op = g.get_operation_by_name("v")
        node_def = conv.node_def
        graph_def = g.as_graph_def()
        saver_def = t["saver"].saver_def
        probes = {
            "Operation.colocation_groups()": lambda: near.colocation_groups(),
            "Operation.colocation_groups()[0]": lambda: near.colocation_groups()[0],
            "Operation.colocation_groups() (no _class)": lambda: conv.colocation_groups(),
            "get_attr('_class')": lambda: near.get_attr("_class"),
            "get_attr string (padding)": lambda: conv.get_attr("padding"),
            "get_attr string (data_format)": lambda: conv.get_attr("data_format"),
            "get_attr string (message)": lambda: t["checked"].op.get_attr("message"),
            "get_attr string (frame_name)": lambda: enter.get_attr("frame_name"),
            "get_attr string (separator)": lambda: t["joined"].op.get_attr("separator"),
            "get_attr empty string (container)": lambda: var_op.get_attr("container"),
            "get_attr list(int) (strides)": lambda: conv.get_attr("strides"),
            "get_attr list(int) (ksize)": lambda: pool.get_attr("ksize"),
            "get_attr int (parallel_iterations)": lambda: enter.get_attr("parallel_iterations"),
            "get_attr bool (use_cudnn_on_gpu)": lambda: conv.get_attr("use_cudnn_on_gpu"),
            "get_attr bool (is_constant)": lambda: enter.get_attr("is_constant"),
            "get_attr type (T)": lambda: conv.get_attr("T"),
            "get_attr type (dtype)": lambda: var_op.get_attr("dtype"),
            "get_attr shape (Placeholder shape)": lambda: t["x"].op.get_attr("shape"),
            "get_attr tensor (Const value)": lambda: g.get_operation_by_name("k").get_attr("value"),
            "Operation.name": lambda: conv.name,
            "Operation.type": lambda: conv.type,
            "Operation.device": lambda: t["placed"].op.device,
            "Operation.device (unset)": lambda: conv.device,
            "Tensor.name": lambda: t["conv"].name,
            "Tensor.device": lambda: t["placed"].device,
            "Tensor.shape": lambda: t["conv"].shape,
            "Tensor.get_shape()": lambda: t["conv"].get_shape(),
            "TensorShape.as_list()": lambda: t["conv"].shape.as_list(),
            "Tensor.dtype": lambda: t["conv"].dtype,
            "DType.name": lambda: t["conv"].dtype.name,
            "Variable.name": lambda: t["v"].name,
            "Variable.op.name": lambda: t["v"].op.name,
            "Operation.node_def": lambda: node_def,
            "NodeDef.name": lambda: node_def.name,
            "NodeDef.op": lambda: node_def.op,
            "NodeDef.device": lambda: t["placed"].op.node_def.device,
            "NodeDef.input": lambda: list(node_def.input),
            "NodeDef.attr[padding].s": lambda: node_def.attr["padding"].s,
            "NodeDef.attr[_class].list.s": lambda: list(near.node_def.attr["_class"].list.s),
            "GraphDef.node[i].name": lambda: [n.name for n in graph_def.node],
            "GraphDef.node[i].op": lambda: [n.op for n in graph_def.node],
            "Graph.get_all_collection_keys()": lambda: g.get_all_collection_keys(),
            "Graph.get_operations()[i].name": lambda: [op.name for op in g.get_operations()],
            "SaverDef.filename_tensor_name": lambda: saver_def.filename_tensor_name,
            "SaverDef.save_tensor_name": lambda: saver_def.save_tensor_name,
            "SaverDef.restore_op_name": lambda: saver_def.restore_op_name,
        }
        return {name: describe(fn()) for name, fn in probes.items()}
