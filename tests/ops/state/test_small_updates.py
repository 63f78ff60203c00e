"""Small dense optimizer updates (ops/state/small_updates.py): the same numbers, bit for bit, as
the general path's rules on 0-d hyperparameters, for every dense rule and float dtype; the
cases it does not cover go the general way; values read before the update keep their snapshot."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.state import small_updates, training_ops
from tensorweave.ops.state.variable_ops import VariableCell

_DENSE = list(training_ops._SPECS)
_SIZE = training_ops._IN_PLACE_SIZE


def _case(spec, dtype, shape, seed=0):
    name, slots, args, rule, extra, _ = spec
    rng = np.random.RandomState(seed)
    cells = [VariableCell(f"c{i}", shape) for i in range(1 + len(slots))]
    for i, cell in enumerate(cells):  # slots small: CenteredRMSProp's ms - mg**2 stays positive
        cell.value = (rng.rand(*shape) + 0.5).astype(dtype) if i == 0 else (rng.rand(*shape) * 0.1 + 0.05).astype(dtype)
    values = []
    for a in args:
        if a == "grad":
            values.append((rng.rand(*shape) - 0.5).astype(dtype))
        elif a == "lr_power":
            values.append(np.asarray(-0.5, dtype))
        else:
            values.append(np.asarray(rng.rand() * 0.5 + 0.1, dtype))
    return cells, values, args.index("grad"), rule


@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 64), (7,)], ids=["64x64", "7"])
@pytest.mark.parametrize("spec", _DENSE, ids=[s[0] for s in _DENSE])
def test_same_numbers_as_the_general_rule(spec, shape, dtype, nesterov):
    attrs = {"use_locking": False, "use_nesterov": nesterov, "update_slots": True}
    cells, args, grad_pos, rule = _case(spec, dtype, shape)
    reference = [VariableCell("r", shape) for _ in cells]
    for ref, cell in zip(reference, cells):
        ref.value = cell.value.copy()
    old = [cell.value for cell in cells]
    written = training_ops._WRITTEN_OUT.get(rule)
    assert small_updates.small_update(rule, written, cells, args, grad_pos, attrs, _SIZE)
    training_ops._whole_update(rule, reference, [r.value for r in reference], args, attrs)
    for cell, ref, before in zip(cells, reference, old):
        assert cell.value.dtype == dtype and cell.value.shape == shape
        np.testing.assert_array_equal(cell.value, ref.value)
        assert cell.value is not before  # new arrays: an earlier read keeps its snapshot


def test_cases_it_does_not_cover_go_the_general_way():
    spec = next(s for s in _DENSE if s[0] == "Adam")
    attrs = {"use_locking": False, "use_nesterov": False}
    cells, args, grad_pos, rule = _case(spec, np.float32, (4, 4))
    written = small_updates.adam
    big_cells, big_args, _, _ = _case(spec, np.float32, (_SIZE,))
    assert not small_updates.small_update(rule, written, big_cells, big_args, grad_pos, attrs, _SIZE)
    vector_lr = list(args)
    vector_lr[2] = np.full(4, 0.1, np.float32)  # not a scalar: TF rejects it, the general path says so
    assert not small_updates.small_update(rule, written, cells, vector_lr, grad_pos, attrs, _SIZE)
    wrong_grad = list(args)
    wrong_grad[grad_pos] = np.ones((2, 2), np.float32)
    assert not small_updates.small_update(rule, written, cells, wrong_grad, grad_pos, attrs, _SIZE)
    float64_lr = list(args)
    float64_lr[2] = np.asarray(0.1)
    assert not small_updates.small_update(rule, written, cells, float64_lr, grad_pos, attrs, _SIZE)
    unset = [VariableCell("u", (4, 4))] + cells[1:]
    assert not small_updates.small_update(rule, written, unset, args, grad_pos, attrs, _SIZE)
    scalar_var = [VariableCell(f"s{i}", ()) for i in range(3)]
    for cell in scalar_var:
        cell.value = np.asarray(1.0, np.float32)
    scalar_args = list(args)
    scalar_args[grad_pos] = np.asarray(0.5, np.float32)
    assert not small_updates.small_update(rule, written, scalar_var, scalar_args, grad_pos, attrs, _SIZE)


def test_adam_step_on_small_variables_keeps_reads_and_errors():
    with tf.Graph().as_default():
        w = tf.Variable(np.ones((3, 2), np.float32))
        before = tf.identity(w.read_value())
        loss = tf.reduce_sum(tf.square(w))
        with tf.control_dependencies([before]):
            train = tf.train.AdamOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            seen, _ = sess.run([before, train])
            np.testing.assert_array_equal(seen, np.ones((3, 2), np.float32))  # the snapshot read first
            assert not np.array_equal(sess.run(w), seen)
        v, m, s = (tf.Variable(np.full(3, value, np.float32)) for value in (1.0, 0.0, 0.0))
        grad = tf.placeholder(tf.float32, None)
        scalars = [tf.constant(x, tf.float32) for x in (0.9, 0.999, 0.1, 0.9, 0.999, 1e-8)]
        update = apply_op(training_ops.OPS["ApplyAdam"], var=v._variable, m=m._variable, v=s._variable,
                          beta1_power=scalars[0], beta2_power=scalars[1], lr=scalars[2], beta1=scalars[3],
                          beta2=scalars[4], epsilon=scalars[5], grad=grad)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                with pytest.raises(tf.errors.InvalidArgumentError, match="same shape"):
                    sess.run(update, {grad: np.ones(4, np.float32)})
            sess.run(update, {grad: np.ones(3, np.float32)})
            assert sess.run(v)[0] < 1.0
