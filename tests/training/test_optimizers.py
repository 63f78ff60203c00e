"""Optimizers against NumPy implementations of TensorFlow's update rules (the formulas of TF's
training_ops kernels, computed in float32 as TF does) over 50 steps, fed with the same
gradients, dense and sparse (so the update rules are tested apart from tf.gradients)."""
import numpy as np
import pytest

import tensorweave as tf

STEPS = 50
F32 = np.float32


def numpy_rule(name, params):
    """Initial slot values and step(v, g, slots, t) implementing TF's kernel for one variable
    (or for the looked-up rows of one), all in float32."""
    p = {k: F32(v) for k, v in params.items()}
    one = F32(1)
    if name == "sgd":
        return {}, lambda v, g, s, t: v - p["lr"] * g
    if name in ("momentum", "nesterov"):
        def step(v, g, s, t):
            s["accum"] = s["accum"] * p["momentum"] + g
            if name == "nesterov":
                return v - (g * p["lr"] + s["accum"] * p["momentum"] * p["lr"])
            return v - p["lr"] * s["accum"]
        return {"accum": 0.0}, step
    if name == "adagrad":
        def step(v, g, s, t):
            s["accum"] = s["accum"] + g * g
            return v - p["lr"] * g / np.sqrt(s["accum"])
        return {"accum": 0.1}, step
    if name == "adadelta":
        def step(v, g, s, t):
            rho, eps = p["rho"], p["epsilon"]
            s["accum"] = s["accum"] * rho + g * g * (one - rho)
            update = np.sqrt(s["accum_update"] + eps) / np.sqrt(s["accum"] + eps) * g
            s["accum_update"] = s["accum_update"] * rho + update * update * (one - rho)
            return v - p["lr"] * update
        return {"accum": 0.0, "accum_update": 0.0}, step
    if name in ("rmsprop", "centered_rmsprop"):
        def step(v, g, s, t):
            rho, mom, eps = p["decay"], p["momentum"], p["epsilon"]
            s["ms"] = s["ms"] + (g * g - s["ms"]) * (one - rho)
            denom = s["ms"]
            if name == "centered_rmsprop":
                s["mg"] = s["mg"] + (g - s["mg"]) * (one - rho)
                denom = s["ms"] - s["mg"] * s["mg"]
            s["mom"] = s["mom"] * mom + p["lr"] * g / np.sqrt(denom + eps)
            return v - s["mom"]
        return {"ms": 1.0, "mom": 0.0, "mg": 0.0}, step
    if name == "adam":
        def step(v, g, s, t):
            b1, b2, eps = p["beta1"], p["beta2"], p["epsilon"]
            lr_t = p["lr"] * np.sqrt(one - b2 ** F32(t)) / (one - b1 ** F32(t))
            s["m"] = s["m"] + (g - s["m"]) * (one - b1)
            s["v"] = s["v"] + (g * g - s["v"]) * (one - b2)
            return v - lr_t * s["m"] / (np.sqrt(s["v"]) + eps)
        return {"m": 0.0, "v": 0.0}, step
    if name == "ftrl":
        def step(v, g, s, t):
            lr, l1, l2, power = p["lr"], p["l1"], p["l2"], p["lr_power"]
            new_accum = s["accum"] + g * g
            sigma = (new_accum ** -power - s["accum"] ** -power) / lr
            s["linear"] = s["linear"] + g - sigma * v
            quadratic = new_accum ** -power / lr + F32(2) * l2
            s["accum"] = new_accum
            return np.where(np.abs(s["linear"]) > l1, (np.sign(s["linear"]) * l1 - s["linear"]) / quadratic,
                            F32(0)).astype(F32)
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
    "ftrl_power": (lambda: tf.train.FtrlOptimizer(0.1, learning_rate_power=-0.3, l1_regularization_strength=0.0,
                                                  l2_regularization_strength=0.05),
                   {"lr": 0.1, "l1": 0.0, "l2": 0.05, "lr_power": -0.3}),
}
RULES = {"ftrl_power": "ftrl"}
# Float32 rounding: TF's kernels use rsqrt and fused forms, NumPy plain operations, so the two
# may differ by a few ulps per step; 50 steps stay within 1e-5 relative (measured against
# TensorFlow 2.21 itself: at most 12 ulps apart).
RTOL, ATOL = 1e-5, 1e-6


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_update_rule_matches_numpy_over_50_steps(name):
    make, params = CONFIGS[name]
    rng = np.random.RandomState(0)
    init = rng.uniform(-1, 1, (3, 4)).astype(F32)
    grads = rng.uniform(-1, 1, (STEPS, 3, 4)).astype(F32)
    var = tf.Variable(init)
    g = tf.placeholder(tf.float32, [3, 4])
    train = make().apply_gradients([(g, var)])
    state, step = numpy_rule(RULES.get(name, name), params)
    state = {k: np.full((3, 4), v, F32) for k, v in state.items()}
    expected = init.copy()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for t in range(1, STEPS + 1):
            sess.run(train, {g: grads[t - 1]})
            expected = step(expected, grads[t - 1], state, t).astype(F32)
        got = sess.run(var)
    assert got.dtype == F32
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_sparse_updates_match_numpy_and_leave_untouched_rows_bit_identical(name):
    """IndexedSlices gradients (with repeated indices, summed first as TF does) update only the
    rows they name; rows never named keep exactly their initial bits. TF1's sparse Adam decays
    its moments everywhere, so rows touched earlier keep moving: the NumPy rule does the same."""
    make, params = CONFIGS[name]
    rng = np.random.RandomState(1)
    init = rng.uniform(-1, 1, (7, 3)).astype(F32)
    var = tf.Variable(init)
    values = tf.placeholder(tf.float32, [None, 3])
    indices = tf.placeholder(tf.int32, [None])
    train = make().apply_gradients([(tf.IndexedSlices(values, indices, tf.constant([7, 3])), var)])
    state, step = numpy_rule(RULES.get(name, name), params)
    state = {k: np.full((7, 3), v, F32) for k, v in state.items()}
    expected = init.copy()
    touched_ever = np.zeros(7, bool)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for t in range(1, STEPS + 1):
            idx = rng.choice([0, 2, 3, 5], size=rng.randint(1, 6)).astype(np.int32)
            vals = rng.uniform(-1, 1, (idx.size, 3)).astype(F32)
            sess.run(train, {values: vals, indices: idx})
            rows = np.unique(idx) if name != "adam" else np.arange(7)
            dense = np.zeros((7, 3), F32)
            np.add.at(dense, idx, vals)
            sub_state = {k: s[rows] for k, s in state.items()}
            expected[rows] = step(expected[rows], dense[rows], sub_state, t)
            for k in state:
                state[k][rows] = sub_state[k]
            touched_ever[idx] = True
        got = sess.run(var)
    untouched = ~touched_ever
    assert untouched.sum() == 3
    assert got[untouched].tobytes() == init[untouched].tobytes()
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


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


# Slot names as TensorFlow names them (verified with TF 2.21's tf.compat.v1.train).
SLOT_NAMES = {
    "sgd": [], "momentum": ["momentum"], "nesterov": ["momentum"], "adagrad": ["accumulator"],
    "adadelta": ["accum", "accum_update"], "rmsprop": ["momentum", "rms"],
    "centered_rmsprop": ["mg", "momentum", "rms"], "adam": ["m", "v"], "ftrl": ["accum", "linear"],
    "ftrl_power": ["accum", "linear"],
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_slot_names_and_slots_follow_their_variable(name):
    var = tf.Variable(tf.ones([2, 3]), name="w")
    opt = CONFIGS[name][0]()
    opt.minimize(tf.reduce_sum(var * var))
    assert opt.get_slot_names() == SLOT_NAMES[name]
    for slot_name in opt.get_slot_names():
        slot = opt.get_slot(var, slot_name)
        assert slot.shape.as_list() == [2, 3] and slot.dtype.base_dtype == tf.float32
        assert slot.op.name.startswith("w/") and slot not in tf.trainable_variables()
    assert opt.get_slot(var, "no_such_slot") is None


def test_learning_rate_may_be_a_tensor_variable_or_callable():
    rates = {"tensor": tf.constant(0.5), "callable": lambda: tf.constant(0.5),
             "variable": tf.Variable(0.5, trainable=False), "float64 tensor": tf.constant(0.5, tf.float64)}
    updates = {}
    for key, lr in rates.items():
        var = tf.Variable([1.0, 2.0])
        updates[key] = (var, tf.train.GradientDescentOptimizer(lr).apply_gradients([(tf.constant([1.0, 4.0]), var)]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for key, (var, op) in updates.items():
            sess.run(op)
            np.testing.assert_array_equal(sess.run(var), [0.5, 0.0], err_msg=key)


def test_apply_gradients_accepts_numpy_gradients_and_compute_gradients_pairs():
    w = tf.Variable([1.0, 2.0])
    u = tf.Variable(3.0)            # not on the loss's path: its gradient is None
    opt = tf.train.GradientDescentOptimizer(0.25)
    pairs = opt.compute_gradients(tf.reduce_sum(w * w), var_list=[w, u])
    assert [v for _, v in pairs] == [w, u] and pairs[1][0] is None
    step = opt.apply_gradients(pairs)
    fixed = opt.apply_gradients([(np.float32([4.0, 4.0]), w)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        np.testing.assert_array_equal(sess.run(w), [0.5, 1.0])   # w -= 0.25 * 2w
        sess.run(fixed)
        np.testing.assert_array_equal(sess.run(w), [-0.5, 0.0])
        assert sess.run(u) == 3.0
    with pytest.raises(TypeError):
        opt.apply_gradients([(object(), w)])
    with pytest.raises(ValueError):
        opt.minimize(tf.constant(1.0), var_list=[w])              # no gradient for any variable
    with pytest.raises(ValueError):
        opt.compute_gradients(tf.constant(1), var_list=[w])       # integer loss


def test_get_or_create_global_step_returns_the_same_variable():
    assert tf.train.get_global_step() is None
    step = tf.train.get_or_create_global_step()
    assert tf.train.get_or_create_global_step() is step and tf.train.get_global_step() is step
    assert step.op.name == "global_step" and step.dtype.base_dtype == tf.int64
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [step] and step not in tf.trainable_variables()
    with pytest.raises(ValueError, match="already exists"):
        tf.train.create_global_step()
    with tf.Session() as sess:
        sess.run(step.initializer)
        assert tf.train.global_step(sess, step) == 0
    with tf.Graph().as_default():
        tf.constant(1.5, name="global_step")   # found by name, but not an integer
        with pytest.raises(TypeError, match="integer"):
            tf.train.get_global_step()
    with pytest.raises(TypeError):
        tf.train.assert_global_step(tf.constant([1, 2]))


def test_clipping_matches_tensorflow_values():
    # Reference values computed with TensorFlow 2.21 (tf.compat.v1).
    a = tf.constant([3.0, 4.0])
    b = tf.constant([[1.0, 2.0], [2.0, 0.0]])
    clipped, norm = tf.clip_by_global_norm([a, b, None], 2.0)
    by_rows = tf.clip_by_norm(b, 1.0, axes=[1])
    with tf.Session() as sess:
        got = sess.run([clipped[0], clipped[1], norm, tf.global_norm([a, b]), by_rows,
                        tf.clip_by_norm(tf.zeros([2]), 1.0)])
    total = np.sqrt(25.0 + 9.0)
    np.testing.assert_allclose(got[0], [3.0 * 2 / total, 4.0 * 2 / total], rtol=1e-6)
    np.testing.assert_allclose(got[1], np.float32([[1, 2], [2, 0]]) * 2 / total, rtol=1e-6)
    assert np.isclose(got[2], total) and np.isclose(got[3], total)
    np.testing.assert_allclose(got[4], [[1 / np.sqrt(5), 2 / np.sqrt(5)], [1.0, 0.0]], rtol=1e-6)
    np.testing.assert_array_equal(got[5], [0.0, 0.0])      # a zero norm divides nothing by zero


def test_clip_by_global_norm_of_infinite_norm_is_nan_and_keeps_indexed_slices():
    inf_clipped, inf_norm = tf.clip_by_global_norm([tf.constant([np.inf, 1.0]), tf.constant([2.0])], 1.0)
    table = tf.Variable(np.ones((4, 2), np.float32))
    grad = tf.gradients(tf.reduce_sum(tf.gather(table, [1, 1])) * 10.0, table)[0]
    assert isinstance(grad, tf.IndexedSlices)
    (sparse_clipped,), norm = tf.clip_by_global_norm([grad], 1.0)
    assert isinstance(sparse_clipped, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(table.initializer)
        got = sess.run([inf_clipped, inf_norm, tf.convert_to_tensor(sparse_clipped), norm])
    assert np.all(np.isnan(got[0][0])) and np.all(np.isnan(got[0][1])) and np.isinf(got[1])
    # the two looked-up copies of row 1 are separate slices: the norm counts both (as TF)
    assert np.isclose(got[3], 20.0)
    np.testing.assert_allclose(got[2], [[0, 0], [1, 1], [0, 0], [0, 0]], rtol=1e-6)


def test_learning_rate_schedules_match_tensorflow():
    step = tf.placeholder(tf.int64, [])
    schedules = [tf.train.exponential_decay(0.1, step, 10, 0.5),
                 tf.train.exponential_decay(0.1, step, 10, 0.5, staircase=True),
                 tf.train.piecewise_constant(step, [5, 15], [1.0, 0.5, 0.1]),
                 tf.train.inverse_time_decay(0.1, step, 10, 0.5),
                 tf.train.natural_exp_decay(0.1, step, 10, 0.5, staircase=True),
                 tf.train.polynomial_decay(0.1, step, 20, 0.01, power=2.0),
                 tf.train.polynomial_decay(0.1, step, 10, 0.01, cycle=True)]
    with tf.Session() as sess:
        for s in (0, 7, 13, 21, 28):
            got = sess.run(schedules, {step: s})
            want = [0.1 * 0.5 ** (s / 10), 0.1 * 0.5 ** (s // 10),
                    1.0 if s <= 5 else 0.5 if s <= 15 else 0.1,
                    0.1 / (1 + 0.5 * s / 10), 0.1 * np.exp(-0.5 * (s // 10)),
                    (0.1 - 0.01) * (1 - min(s, 20) / 20) ** 2 + 0.01,
                    (0.1 - 0.01) * (1 - s / (10 * max(1, np.ceil(s / 10)))) + 0.01]
            np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"step {s}")


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_static_shapes_of_the_apply_ops_match_their_outputs(sparse):
    from tensorweave.testing.op_test import assert_static_shape_matches
    var_by_name, apply_outputs = {}, []
    for name, (make, _) in sorted(CONFIGS.items()):
        var = tf.Variable(np.ones((4, 3), np.float32), name=name)
        grad = (tf.IndexedSlices(tf.ones([2, 3]), tf.constant([0, 2]), tf.constant([4, 3])) if sparse
                else tf.ones([4, 3]))
        make().apply_gradients([(grad, var)])
        var_by_name[name] = var
    for op in tf.get_default_graph().get_operations():
        if op.type.startswith("Apply") or op.type.startswith("SparseApply") or op.type.startswith("Scatter"):
            apply_outputs.append(op.outputs[0])
    kinds = {t.op.type for t in apply_outputs}
    assert len(kinds) >= (5 if sparse else 8), kinds
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for out in apply_outputs:
            value = sess.run(out)
            assert_static_shape_matches(out, value)
            assert out.shape.as_list() == [4, 3] and value.shape == (4, 3)


def test_slot_and_non_slot_variable_names_follow_tensorflows_scopes():
    """Slots go in the current variable scope (TF's slot_creator), non-slot variables in the current
    name scope (variable_scope.variable): TF 2.21's names."""
    def names(build):
        with tf.Graph().as_default():
            build()
            return sorted(v.op.name for v in tf.global_variables())

    def base():
        w = tf.get_variable("w", initializer=1.0)
        return w * 2.0

    def in_variable_scope():
        loss = base()
        with tf.variable_scope("OptimizeLoss"):
            tf.train.AdamOptimizer(0.1).minimize(loss)

    def in_name_scope():
        loss = base()
        with tf.name_scope("train"):
            tf.train.AdamOptimizer(0.1).minimize(loss)

    def nested():
        with tf.variable_scope("model"):
            loss = base()
        with tf.variable_scope("opt"), tf.name_scope("inner"):
            tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)

    assert names(in_variable_scope) == ["OptimizeLoss/beta1_power", "OptimizeLoss/beta2_power",
                                        "OptimizeLoss/w/Adam", "OptimizeLoss/w/Adam_1", "w"]
    assert names(in_name_scope) == ["train/beta1_power", "train/beta2_power", "w", "w/Adam", "w/Adam_1"]
    assert names(nested) == ["model/w", "opt/model/w/Momentum"]
