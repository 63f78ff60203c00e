"""Optimizers against NumPy implementations of TensorFlow's update rules over 50 steps, fed
with the same gradients (so the update rules are tested apart from tf.gradients)."""
import numpy as np
import pytest

import tensorweave as tf

STEPS = 50


def numpy_rule(name, params):
    """State and step function implementing TF's update for one variable."""
    if name == "sgd":
        return {}, lambda v, g, s, t: v - params["lr"] * g
    if name in ("momentum", "nesterov"):
        def step(v, g, s, t):
            s["accum"] = s["accum"] * params["momentum"] + g
            if name == "nesterov":
                return v - (g * params["lr"] + s["accum"] * params["momentum"] * params["lr"])
            return v - params["lr"] * s["accum"]
        return {"accum": 0.0}, step
    if name == "adagrad":
        def step(v, g, s, t):
            s["accum"] = s["accum"] + g * g
            return v - params["lr"] * g / np.sqrt(s["accum"])
        return {"accum": 0.1}, step
    if name == "adadelta":
        def step(v, g, s, t):
            rho, eps = params["rho"], params["epsilon"]
            s["accum"] = s["accum"] * rho + g * g * (1 - rho)
            update = np.sqrt(s["accum_update"] + eps) / np.sqrt(s["accum"] + eps) * g
            s["accum_update"] = s["accum_update"] * rho + update * update * (1 - rho)
            return v - params["lr"] * update
        return {"accum": 0.0, "accum_update": 0.0}, step
    if name in ("rmsprop", "centered_rmsprop"):
        def step(v, g, s, t):
            rho, mom, eps = params["decay"], params["momentum"], params["epsilon"]
            s["ms"] = s["ms"] + (g * g - s["ms"]) * (1 - rho)
            denom = s["ms"]
            if name == "centered_rmsprop":
                s["mg"] = s["mg"] + (g - s["mg"]) * (1 - rho)
                denom = s["ms"] - s["mg"] ** 2
            s["mom"] = s["mom"] * mom + params["lr"] * g / np.sqrt(denom + eps)
            return v - s["mom"]
        return {"ms": 1.0, "mom": 0.0, "mg": 0.0}, step
    if name == "adam":
        def step(v, g, s, t):
            b1, b2, eps = params["beta1"], params["beta2"], params["epsilon"]
            lr_t = params["lr"] * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            s["m"] = s["m"] + (g - s["m"]) * (1 - b1)
            s["v"] = s["v"] + (g * g - s["v"]) * (1 - b2)
            return v - lr_t * s["m"] / (np.sqrt(s["v"]) + eps)
        return {"m": 0.0, "v": 0.0}, step
    if name == "ftrl":
        def step(v, g, s, t):
            lr, l1, l2, p = params["lr"], params["l1"], params["l2"], params["lr_power"]
            new_accum = s["accum"] + g * g
            sigma = (new_accum ** -p - s["accum"] ** -p) / lr
            s["linear"] = s["linear"] + g - sigma * v
            quadratic = new_accum ** -p / lr + 2 * l2
            s["accum"] = new_accum
            return np.where(np.abs(s["linear"]) > l1, (np.sign(s["linear"]) * l1 - s["linear"]) / quadratic, 0.0)
        return {"accum": 0.1, "linear": 0.0}, step
    raise ValueError(name)


CONFIGS = {
    "sgd": (lambda: tf.train.GradientDescentOptimizer(0.1), {"lr": 0.1}),
    "momentum": (lambda: tf.train.MomentumOptimizer(0.05, 0.9), {"lr": 0.05, "momentum": 0.9}),
    "nesterov": (lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True), {"lr": 0.05, "momentum": 0.9}),
    "adagrad": (lambda: tf.train.AdagradOptimizer(0.1), {"lr": 0.1}),
    "adadelta": (lambda: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
                 {"lr": 1.0, "rho": 0.9, "epsilon": 1e-6}),
    "rmsprop": (lambda: tf.train.RMSPropOptimizer(0.01, decay=0.9, momentum=0.5, epsilon=1e-10),
                {"lr": 0.01, "decay": 0.9, "momentum": 0.5, "epsilon": 1e-10}),
    "centered_rmsprop": (lambda: tf.train.RMSPropOptimizer(0.01, decay=0.9, momentum=0.5, epsilon=1e-3,
                                                           centered=True),
                         {"lr": 0.01, "decay": 0.9, "momentum": 0.5, "epsilon": 1e-3}),
    "adam": (lambda: tf.train.AdamOptimizer(0.01), {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}),
    "ftrl": (lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.1),
             {"lr": 0.1, "l1": 0.01, "l2": 0.1, "lr_power": -0.5}),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_update_rule_matches_numpy_over_50_steps(name):
    make, params = CONFIGS[name]
    rng = np.random.RandomState(0)
    init = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    grads = rng.uniform(-1, 1, (STEPS, 3, 4)).astype(np.float32)
    var = tf.Variable(init)
    g = tf.placeholder(tf.float32, [3, 4])
    train = make().apply_gradients([(g, var)])
    state, step = numpy_rule(name, params)
    state = {k: np.full((3, 4), v, np.float64) for k, v in state.items()}
    expected = init.astype(np.float64)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for t in range(1, STEPS + 1):
            sess.run(train, {g: grads[t - 1]})
            expected = step(expected, grads[t - 1].astype(np.float64), state, t)
        got = sess.run(var)
    np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-5)


def test_slots_names_and_global_step():
    var = tf.Variable(tf.ones([2]), name="w")
    g = tf.placeholder(tf.float32, [2])
    step = tf.train.get_or_create_global_step()
    opt = tf.train.AdamOptimizer(0.1)
    train = opt.apply_gradients([(g, var)], global_step=step)
    assert opt.get_slot_names() == ["m", "v"]
    assert opt.get_slot(var, "m").name == "w/Adam:0" and opt.get_slot(var, "v").name == "w/Adam_1:0"
    assert opt.get_slot(var, "m") not in tf.trainable_variables()
    assert {v.op.name for v in opt.variables()} == {"w/Adam", "w/Adam_1", "beta1_power", "beta2_power"}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train, {g: [1.0, -1.0]})
        assert sess.run(step) == 3
        assert step.dtype.base_dtype == tf.int64


def test_apply_gradients_errors():
    var = tf.Variable(1.0)
    with pytest.raises(ValueError):
        tf.train.GradientDescentOptimizer(0.1).apply_gradients([(None, var)])
    with pytest.raises(ValueError):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError):
        tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)


def test_use_locking_updates_are_atomic():
    import threading
    var = tf.Variable(0.0)
    g = tf.constant(-1.0)
    train = tf.train.GradientDescentOptimizer(1.0, use_locking=True).apply_gradients([(g, var)])
    with tf.Session() as sess:
        sess.run(var.initializer)
        threads = [threading.Thread(target=lambda: [sess.run(train) for _ in range(250)]) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sess.run(var) == 1000.0


def test_learning_rate_schedules():
    step = tf.placeholder(tf.int64, [])
    lr = tf.train.exponential_decay(0.1, step, 10, 0.5)
    stair = tf.train.exponential_decay(0.1, step, 10, 0.5, staircase=True)
    pw = tf.train.piecewise_constant(step, [5, 10], [1.0, 0.5, 0.1])
    with tf.Session() as sess:
        assert np.isclose(sess.run(lr, {step: 5}), 0.1 * 0.5 ** 0.5)
        assert np.isclose(sess.run(stair, {step: 15}), 0.05)
        got = [sess.run(pw, {step: s}) for s in (0, 5, 6, 10, 11)]
        np.testing.assert_array_equal(got, np.float32([1.0, 1.0, 0.5, 0.5, 0.1]))


def test_clipping():
    a = tf.constant([3.0, 4.0])
    b = tf.constant([[12.0]])
    clipped, norm = tf.clip_by_global_norm([a, None, b], 6.5)
    by_norm = tf.clip_by_norm(a, 1.0)
    with tf.Session() as sess:
        c, n, bn = sess.run([[clipped[0], clipped[2]], norm, by_norm])
    assert np.isclose(n, 13.0)
    np.testing.assert_allclose(c[0], [1.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(c[1], [[6.0]], rtol=1e-6)
    assert clipped[1] is None
    np.testing.assert_allclose(bn, [0.6, 0.8], rtol=1e-6)
