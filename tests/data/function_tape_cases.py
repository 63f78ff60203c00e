"""GradientTape with tf.function scenarios shared by make_tf_function_tape_fixtures.py (TF 2.21,
eager) and tests/eager/test_function_tape.py (tensorweave in eager mode): each takes the `tf`
module and returns a dict of plain numbers (None where TF gives no gradient)."""


def _value(t):
    return None if t is None else float(t.numpy() if hasattr(t, "numpy") else t)


def stop_recording_in_function(tf):
    """stop_recording inside a traced body: ops run there are not recorded."""
    @tf.function
    def f(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            with tape.stop_recording():
                z = x * 5.0
                unrecorded = tf.sin(x)
            out = y + z * x
        return out, tape.gradient(out, x), tape.gradient(unrecorded, x) is None, tape.gradient(z, x) is None

    out, grad, none_unrecorded, none_z = f(tf.constant(2.0))
    return {"out": _value(out), "grad": _value(grad), "unrecorded_is_none": bool(none_unrecorded),
            "z_is_none": bool(none_z)}


def stop_recording_outer_tape(tf):
    """An outer (eager) tape differentiating a function whose body pauses its own tape."""
    @tf.function
    def f(x):
        with tf.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * 3.0
            out = y * x
        return out, inner.gradient(out, x)

    x = tf.constant(1.5)
    with tf.GradientTape() as outer:
        outer.watch(x)
        out, inner_grad = f(x)
    return {"out": _value(out), "inner_grad": _value(inner_grad), "outer_grad": _value(outer.gradient(out, x))}


def assign_then_read(tf):
    """v.assign_add(x), then a read of v: the gradient flows through the read (assignments
    have no gradient), and the backward pass does not assign again."""
    v = tf.Variable(1.0)
    w = tf.Variable(3.0)

    @tf.function
    def g(x):
        v.assign_add(x)
        return v.read_value() * w * x

    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        r = g(x)
    dx, dw, dv = tape.gradient(r, [x, w, v])
    return {"r": _value(r), "dx": _value(dx), "dw": _value(dw), "dv": _value(dv), "v_after": _value(v.read_value())}


def read_then_assign(tf):
    """A read before the assignment sees the old value, in the forward and the backward pass."""
    v = tf.Variable([1.0, -2.0])

    @tf.function
    def g(x):
        y = v * x
        v.assign(y + 1.0)
        return tf.reduce_sum(y * y)

    x = tf.constant([0.5, 3.0])
    values = {}
    for call in range(2):
        with tf.GradientTape() as tape:
            tape.watch(x)
            r = g(x)
        dx, dv = tape.gradient(r, [x, v])
        values[f"r{call}"] = _value(r)
        values[f"dx{call}"] = [float(d) for d in dx.numpy()]
        values[f"dv{call}"] = [float(d) for d in dv.numpy()]
    values["v_after"] = [float(d) for d in v.numpy()]
    return values


def assign_in_loop_step(tf):
    """A training-step-like body: a counter incremented, a loss of trainable variables."""
    step = tf.Variable(0, trainable=False)
    w = tf.Variable([[0.5], [-1.0]])
    b = tf.Variable([0.25])

    @tf.function
    def loss_fn(x, y):
        step.assign_add(1)
        pred = tf.matmul(x, w) + b
        return tf.reduce_mean(tf.square(pred - y))

    x = tf.constant([[1.0, 2.0], [3.0, -1.0]])
    y = tf.constant([[1.0], [0.0]])
    with tf.GradientTape() as tape:
        loss = loss_fn(x, y)
    dw, db = tape.gradient(loss, [w, b])
    return {"loss": _value(loss), "dw": [float(d) for d in dw.numpy().ravel()], "db": [float(d) for d in db.numpy()],
            "step": int(step.numpy())}


SCENARIOS = [stop_recording_in_function, stop_recording_outer_tape, assign_then_read, read_then_assign,
             assign_in_loop_step]
