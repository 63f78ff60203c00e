"""Matrix ops: MatMul, BatchMatMulV2, MatrixInverse, MatrixDeterminant, Cholesky, MatrixSolve,
Diag/DiagPart, MatrixDiag/MatrixDiagPart, trace, matrix_transpose."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_run_error
from tensorweave.testing.op_test import check_op, evaluate

RNG = np.random.RandomState(0)


def rand(*shape, dtype=np.float64):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (RNG.randn(*shape) + 1j * RNG.randn(*shape)).astype(dtype)
    if dtype.kind == "i":
        return RNG.randint(-5, 6, size=shape).astype(dtype)
    return RNG.randn(*shape).astype(dtype)


def spd(*batch, n=3, dtype=np.float64):
    """Well-conditioned symmetric (Hermitian) positive-definite matrices."""
    a = rand(*batch, n, n, dtype=dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


# -- matmul ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex64, np.float16])
def test_matmul_transpose_variants(ta, tb, dtype):
    a, b = rand(2, 3, dtype=dtype), rand(3, 4, dtype=dtype)
    a_in, b_in = (a.T.copy() if ta else a), (b.T.copy() if tb else b)
    out = tf.matmul(a_in, b_in, transpose_a=ta, transpose_b=tb)
    assert out.op.type == "MatMul" and out.op.name == "MatMul"
    assert out.op.get_attr("transpose_a") == ta and out.op.get_attr("transpose_b") == tb
    assert out.shape.as_list() == [2, 4]
    tol = 1e-2 if dtype == np.float16 else 1e-5
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    check_op(out, (a.astype(wide) @ b.astype(wide)).astype(dtype), rtol=tol, atol=tol)


def test_matmul_placeholders_partial_shapes_and_names():
    p = tf.placeholder(tf.float32, [None, 3])
    q = tf.placeholder(tf.float32, [3, None])
    out = tf.matmul(p, q, name="prod")
    assert out.op.name == "prod" and out.shape.as_list() == [None, None]
    a, b = rand(5, 3, dtype=np.float32), rand(3, 2, dtype=np.float32)
    check_op(out, a @ b, feed_dict={p: a, q: b}, rtol=1e-5)
    assert tf.matmul(p, q, transpose_a=True, transpose_b=True).shape.as_list() == [3, 3]
    # Python operands become Consts under the op's scope, b converted to a's dtype.
    c = tf.matmul(tf.constant([[1.0, 2.0]]), [[3], [4]])
    assert [t.op.name for t in c.op.inputs][1] == "MatMul_1/b"
    check_op(c, np.array([[11.0]], np.float32))


def test_matmul_real_adjoint_is_transpose_without_extra_ops():
    a, b = rand(3, 2), rand(4, 3)
    out = tf.matmul(a, b, adjoint_a=True, adjoint_b=True)
    assert out.op.type == "MatMul" and out.op.get_attr("transpose_a") and out.op.get_attr("transpose_b")
    assert [t.op.type for t in out.op.inputs] == ["Const", "Const"]
    check_op(out, a.T @ b.T)


def test_matmul_complex_adjoint_conjugates():
    a, b = rand(3, 2, dtype=np.complex128), rand(3, 4, dtype=np.complex128)
    out = tf.matmul(a, b, adjoint_a=True)
    assert out.op.type == "MatMul" and out.op.get_attr("transpose_a")
    assert out.op.inputs[0].op.type in ("Conj", "ConjugateTranspose")  # the conjugate of a
    check_op(out, np.conj(a).T @ b, rtol=1e-10)
    a3, b3 = rand(2, 3, 2, dtype=np.complex64), rand(2, 4, 3, dtype=np.complex64)
    out3 = tf.matmul(a3, b3, adjoint_a=True, transpose_b=True)
    assert out3.op.type == "BatchMatMulV2" and out3.op.get_attr("adj_x") and out3.op.get_attr("adj_y")
    expected = np.conj(np.swapaxes(a3, -1, -2)) @ np.swapaxes(b3, -1, -2)
    check_op(out3, expected, rtol=1e-5, atol=1e-5)


def test_batch_matmul_broadcasting_and_adjoints():
    a, b = rand(2, 1, 4, 3), rand(5, 3, 6)
    out = tf.matmul(a, b)
    assert out.op.type == "BatchMatMulV2" and out.op.name == "MatMul"
    assert out.shape.as_list() == [2, 5, 4, 6]
    check_op(out, np.matmul(a, b))
    # 3-D with 2-D, and transposes on real data become adjoints.
    c = rand(3, 4)
    out = tf.matmul(a, c, transpose_a=True, transpose_b=True)
    assert out.op.type == "BatchMatMulV2" and out.op.get_attr("adj_x") and out.op.get_attr("adj_y")
    check_op(out, np.matmul(np.swapaxes(a, -1, -2), c.T))


def test_batch_matmul_static_shapes_partial_and_unknown():
    p = tf.placeholder(tf.float32, [None, 2, 3])
    q = tf.placeholder(tf.float32, [4, 3, None])
    assert tf.matmul(p, q).shape.as_list() == [4, 2, None]
    assert tf.matmul(p, tf.placeholder(tf.float32)).shape.ndims is None
    u = tf.placeholder(tf.float32)
    out = tf.matmul(u, u)
    assert out.op.type == "BatchMatMulV2" and out.shape.ndims is None
    x = rand(3, 2, 2).astype(np.float32)
    check_op(out, x @ x, feed_dict={u: x}, rtol=1e-5)
    # A rank-2 feed through BatchMatMulV2 is a plain matrix product.
    y = rand(2, 3).astype(np.float32)
    np.testing.assert_allclose(evaluate(tf.matmul(u, tf.constant(y.T)), {u: y}), y @ y.T, rtol=1e-5)


def test_matmul_build_time_errors():
    with pytest.raises(ValueError) as info:
        tf.matmul(tf.constant(np.zeros((2, 3), np.float32)), tf.constant(np.zeros((4, 5), np.float32)))
    assert str(info.value) == ("Dimensions must be equal, but are 3 and 4 for 'MatMul' (op: 'MatMul') "
                               "with input shapes: [2,3], [4,5].")
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.matmul(np.zeros((2, 3)), np.zeros(3))
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 2 and 3 .*BatchMatMulV2"):
        tf.matmul(np.zeros((2, 2, 3)), np.zeros((3, 3, 5)))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tf.matmul(np.zeros((2, 2, 3)), np.zeros((2, 4, 5)))
    with pytest.raises(ValueError, match="Only one of transpose_a and adjoint_a"):
        tf.matmul(np.zeros((2, 2)), np.zeros((2, 2)), transpose_a=True, adjoint_a=True)
    with pytest.raises(TypeError):
        tf.matmul(tf.constant([[True]]), tf.constant([[True]]))
    with pytest.raises(TypeError):
        tf.matmul(tf.constant([[1.0]]), tf.constant([[1]]))


def test_matmul_run_time_errors():
    p = tf.placeholder(tf.float32, [None, None])
    q = tf.placeholder(tf.float32, [None, None])
    msg = str(assert_run_error(tf.matmul(p, q), {p: np.zeros((2, 3)), q: np.zeros((4, 5))}))
    assert "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]" in msg
    msg = str(assert_run_error(tf.matmul(p, q, transpose_b=True), {p: np.zeros((2, 3)), q: np.zeros((5, 4))}))
    assert "Matrix size-incompatible: In[0]: [2,3], In[1]: [5,4]" in msg
    u, v = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    out = tf.matmul(u, v)  # unknown ranks -> BatchMatMulV2
    assert "Matrix size-incompatible" in str(assert_run_error(out, {u: np.zeros((2, 2, 3)), v: np.zeros((2, 4, 5))}))
    assert "In[0] ndims must be >= 2: 1" in str(assert_run_error(out, {u: np.zeros(3), v: np.zeros((3, 5))}))
    assert "compatible batch dimensions: [2,2,3] vs. [3,3,5]" in str(assert_run_error(
        out, {u: np.zeros((2, 2, 3)), v: np.zeros((3, 3, 5))}))


def test_matmul_raw_op_rejects_non_matrix_at_run_time():
    from tensorweave.ops.linalg.matrix import MatMul
    u, v = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    out = tf._apply_op(MatMul, a=u, b=v)
    assert out.shape.as_list() == [None, None]
    assert "In[0] is not a matrix. Instead it has shape [2,3,3]" in str(assert_run_error(
        out, {u: np.zeros((2, 3, 3)), v: np.zeros((3, 5))}))
    np.testing.assert_allclose(evaluate(out, {u: np.ones((1, 2)), v: np.ones((2, 1))}), [[2.0]])


# -- inverse / determinant / cholesky / solve ----------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_matrix_inverse(dtype):
    x = spd(2, dtype=dtype)
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    check_op(tf.matrix_inverse(x), np.linalg.inv(x), rtol=tol, atol=tol)
    y = (x + np.triu(np.ones((3, 3)), 1)).astype(dtype)  # not Hermitian, so adjoint matters
    expected = np.linalg.inv(np.conj(np.swapaxes(y, -1, -2)))
    check_op(tf.matrix_inverse(y, adjoint=True), expected, rtol=tol, atol=tol)


def test_matrix_inverse_half_and_shapes():
    x = spd(4, dtype=np.float16)
    expected = np.linalg.inv(x.astype(np.float32)).astype(np.float16)
    check_op(tf.matrix_inverse(x), expected, rtol=1e-2, atol=1e-2)
    p = tf.placeholder(tf.float64, [None, None, 3])
    assert tf.matrix_inverse(p).shape.as_list() == [None, 3, 3]
    assert tf.matrix_inverse(tf.placeholder(tf.float32)).shape.ndims is None
    check_op(tf.matrix_inverse(np.zeros((2, 0, 0))), np.zeros((2, 0, 0)))


def test_matrix_inverse_errors():
    with pytest.raises(ValueError, match=r"are 2 and 3 .*\(op: 'MatrixInverse'\)"):
        tf.matrix_inverse(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
        tf.matrix_inverse(np.zeros(3))
    with pytest.raises(TypeError):
        tf.matrix_inverse(np.zeros((2, 2), np.int32))
    p = tf.placeholder(tf.float64)
    inv = tf.matrix_inverse(p)
    assert "Input is not invertible." in str(assert_run_error(inv, {p: np.ones((2, 2))}))
    assert "Input matrix must be square." in str(assert_run_error(inv, {p: np.ones((2, 3))}))
    assert "must have rank >= 2, got 1" in str(assert_run_error(inv, {p: np.ones(3)}))


def test_matrix_determinant():
    x = rand(4, 3, 3)
    out = tf.matrix_determinant(x)
    assert out.shape.as_list() == [4]
    check_op(out, np.linalg.det(x), rtol=1e-10)
    x32 = x[0].astype(np.float32)
    check_op(tf.matrix_determinant(x32), np.linalg.det(x[0]).astype(np.float32), rtol=1e-4)
    c = rand(3, 3, dtype=np.complex64)
    check_op(tf.matrix_determinant(c), np.linalg.det(c), rtol=1e-4)
    check_op(tf.matrix_determinant(np.zeros((2, 0, 0))), np.ones(2))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.matrix_determinant(np.zeros((2, 3)))
    p = tf.placeholder(tf.float32)
    assert tf.matrix_determinant(p).shape.ndims is None
    assert "Input matrix must be square." in str(assert_run_error(tf.matrix_determinant(p), {p: np.ones((2, 3))}))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_cholesky(dtype):
    x = spd(2, n=4, dtype=dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    check_op(tf.cholesky(x), np.linalg.cholesky(x), rtol=tol, atol=tol)


def test_cholesky_reads_lower_triangle_and_errors():
    check_op(tf.cholesky(np.array([[4.0, 100.0], [2.0, 5.0]])), [[2.0, 0.0], [1.0, 2.0]])
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 2 and 3 .*\(op: 'Cholesky'\)"):
        tf.cholesky(np.zeros((2, 3)))
    p = tf.placeholder(tf.float64, [None, None])
    msg = str(assert_run_error(tf.cholesky(p), {p: -np.eye(2)}))
    assert "Cholesky decomposition was not successful. The input might not be valid." in msg


def test_matrix_solve():
    a, b = spd(2, n=3), rand(2, 3, 4)
    out = tf.matrix_solve(a + np.triu(np.ones((3, 3)), 1), b)
    assert out.shape.as_list() == [2, 3, 4]
    check_op(out, np.linalg.solve(a + np.triu(np.ones((3, 3)), 1), b), rtol=1e-10)
    adj = tf.matrix_solve(a + np.triu(np.ones((3, 3)), 1), b, adjoint=True)
    check_op(adj, np.linalg.solve(np.swapaxes(a + np.triu(np.ones((3, 3)), 1), -1, -2), b), rtol=1e-10)
    c, d = spd(n=2, dtype=np.complex64) + 1j * np.triu(np.ones((2, 2)), 1), rand(2, 1, dtype=np.complex64)
    c = c.astype(np.complex64)
    check_op(tf.matrix_solve(c, d, adjoint=True), np.linalg.solve(np.conj(c.T), d), rtol=1e-4, atol=1e-5)
    p = tf.placeholder(tf.float32, [None, None, 3])
    assert tf.matrix_solve(np.zeros((5, 2, 2), np.float32), p).shape.as_list() == [5, 2, 3]


def test_matrix_solve_errors():
    with pytest.raises(ValueError, match=r"are 2 and 3 .*\(op: 'MatrixSolve'\)"):
        tf.matrix_solve(np.zeros((2, 2)), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are 2 and 3"):
        tf.matrix_solve(np.zeros((2, 2, 2)), np.zeros((3, 2, 1)))
    p, q = tf.placeholder(tf.float64), tf.placeholder(tf.float64)
    out = tf.matrix_solve(p, q)
    assert "Input matrix is not invertible." in str(assert_run_error(out, {p: np.zeros((2, 2)), q: np.zeros((2, 1))}))
    assert "Input matrix and rhs are incompatible." in str(assert_run_error(out, {p: np.eye(2), q: np.zeros((3, 1))}))
    assert "same outer dimensions" in str(assert_run_error(out, {p: np.ones((2, 2, 2)), q: np.zeros((3, 2, 1))}))
    assert "must be a square matrix" in str(assert_run_error(out, {p: np.ones((2, 3)), q: np.zeros((2, 1))}))


# -- diagonals --------------------------------------------------------------------------------------
def test_diag_and_diag_part():
    v = np.array([1, 2, 3], np.int32)
    check_op(tf.diag(v), np.diag(v))
    x = rand(2, 3)
    d = tf.diag(x)
    assert d.shape.as_list() == [2, 3, 2, 3] and d.op.type == "Diag"
    expected = np.zeros((2, 3, 2, 3))
    for i in range(2):
        for j in range(3):
            expected[i, j, i, j] = x[i, j]
    check_op(d, expected)
    check_op(tf.diag_part(expected), x)
    check_op(tf.diag_part(np.arange(9.0).reshape(3, 3)), [0.0, 4.0, 8.0])
    assert tf.diag_part(tf.placeholder(tf.float32, [None, 3])).shape.as_list() == [3]


def test_diag_errors():
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.diag(1.0)
    with pytest.raises(ValueError, match="Input must have even and non-zero rank, input rank is 3"):
        tf.diag_part(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 2 and 3 .*\(op: 'DiagPart'\)"):
        tf.diag_part(np.zeros((2, 3)))
    with pytest.raises(TypeError):
        tf.diag([True, False])
    p = tf.placeholder(tf.float32)
    assert "at least rank 1, got 0" in str(assert_run_error(tf.diag(p), {p: 1.0}))
    assert "should be even and positive" in str(assert_run_error(tf.diag_part(p), {p: np.ones((2, 3, 4))}))
    assert "dimensions 0 and 1 do not match" in str(assert_run_error(tf.diag_part(p), {p: np.ones((2, 3))}))


def test_matrix_diag_and_part_batched():
    x = rand(2, 3)
    out = tf.matrix_diag(x)
    assert out.op.type == "MatrixDiag" and out.shape.as_list() == [2, 3, 3]
    check_op(out, np.stack([np.diag(r) for r in x]))
    m = rand(4, 2, 3)
    part = tf.matrix_diag_part(m)
    assert part.op.type == "MatrixDiagPart" and part.shape.as_list() == [4, 2]
    check_op(part, np.diagonal(m, axis1=-2, axis2=-1))
    check_op(tf.matrix_diag(np.array([[True, True]])), [[[True, False], [False, True]]])
    strings = np.array([b"a", b"b"], dtype=object)
    check_op(tf.matrix_diag(strings), np.array([[b"a", b""], [b"", b"b"]], object))
    assert tf.matrix_diag_part(tf.placeholder(tf.float32, [None, 5, None])).shape.as_list() == [None, None]
    assert tf.matrix_diag_part(tf.placeholder(tf.float32, [3, 0, None])).shape.as_list() == [3, 0]


def test_matrix_diag_errors():
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.matrix_diag(1.0)
    with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
        tf.matrix_diag_part(np.zeros(4))
    p = tf.placeholder(tf.float32)
    assert "diagonal must be at least 1-dim, received shape: []" in str(assert_run_error(tf.matrix_diag(p), {p: 1.0}))
    assert "input must be at least 2-dim, received shape: [3]" in str(assert_run_error(
        tf.matrix_diag_part(p), {p: np.ones(3)}))


def test_trace_batched():
    x = np.arange(24.0).reshape(2, 3, 4)
    out = tf.trace(x)
    assert out.op.name == "Trace" and out.shape.as_list() == [2]
    check_op(out, [15.0, 51.0])
    check_op(tf.trace(np.eye(3, dtype=np.int32)), np.int32(3))


def test_matrix_transpose():
    x = rand(2, 3, 4)
    out = tf.matrix_transpose(x)
    assert out.shape.as_list() == [2, 4, 3] and out.op.name.startswith("matrix_transpose")
    check_op(out, np.swapaxes(x, -1, -2))
    c = rand(3, 2, dtype=np.complex64)
    check_op(tf.matrix_transpose(c, conjugate=True), np.conj(c.T))
    with pytest.raises(ValueError, match="should be a \\(batch\\) matrix"):
        tf.matrix_transpose(np.zeros(4))
    p = tf.placeholder(tf.float32)
    unknown = tf.matrix_transpose(p)  # perm computed in the graph from the rank
    x32 = x.astype(np.float32)
    np.testing.assert_array_equal(evaluate(unknown, {p: x32}), np.swapaxes(x32, -1, -2))


# -- gradients (float64 numeric checks: tests/gradient_cases/linalg.py) ------------------------
def test_every_linalg_op_has_a_gradient():
    from tensorweave.framework.op_def import OpDef
    from tensorweave.ops.linalg import matrix as linalg_ops
    ops = [v for v in vars(linalg_ops).values() if isinstance(v, OpDef)]
    assert len(ops) == 10
    for op in ops:
        assert callable(op.gradient_fn), op.name


def _complex_numeric_gradient(loss, a, value, h=1e-6):
    """dL/dRe(a) + i dL/dIm(a) by central differences: TF's gradient of a real loss."""
    with tf.Session() as sess:
        f = lambda v: sess.run(loss, {a: v})  # noqa: E731
        out = np.zeros(value.shape, complex)
        for idx in np.ndindex(*value.shape):
            e = np.zeros(value.shape)
            e[idx] = h
            out[idx] = (f(value + e) - f(value - e) + 1j * (f(value + 1j * e) - f(value - 1j * e))) / (2 * h)
        return out


@pytest.mark.parametrize("name", ["matmul", "batch_matmul_adjoint", "inverse_adjoint", "determinant",
                                  "solve", "cholesky"])
def test_complex_gradients_match_central_differences(name):
    value = rand(2, 2, dtype=np.complex128) + 3 * np.eye(2)
    w = tf.constant(rand(2, 2, dtype=np.complex128))
    a = tf.placeholder(tf.complex128, [2, 2])
    out = {
        "matmul": lambda: tf.matmul(a, a),
        "batch_matmul_adjoint": lambda: tf.matmul(a[None], a, adjoint_a=True)[0],
        "inverse_adjoint": lambda: tf.matrix_inverse(a, adjoint=True),
        "determinant": lambda: tf.matrix_determinant(a) * w,  # TF's own formula misses a conjugate
        "solve": lambda: tf.matrix_solve(a, w, adjoint=True),
        "cholesky": lambda: tf.cholesky(tf.matmul(a, a, adjoint_b=True) + 2 * np.eye(2)),
    }[name]()
    loss = tf.cast(tf.reduce_sum(out * w), tf.float64)  # the real part
    theoretical = evaluate(tf.gradients(loss, a)[0], {a: value})
    np.testing.assert_allclose(theoretical, _complex_numeric_gradient(loss, a, value), atol=1e-6)


def test_batch_matmul_gradient_sums_broadcast_batch_dims():
    x, y = tf.placeholder(tf.float64, [2, 1, 2, 3]), tf.placeholder(tf.float64, [3, 2])
    gx, gy = tf.gradients(tf.matmul(x, y), [x, y])
    assert gx.shape.as_list() == [2, 1, 2, 3] and gy.shape.as_list() == [3, 2]
    xv, yv = rand(2, 1, 2, 3), rand(3, 2)
    gxv, gyv = evaluate([gx, gy], {x: xv, y: yv})
    np.testing.assert_allclose(gxv, np.broadcast_to(yv.sum(1), (2, 1, 2, 3)))
    np.testing.assert_allclose(gyv, np.broadcast_to(xv.sum((0, 1, 2))[:, None], (3, 2)))


def test_matrix_diag_part_gradient_of_non_square_and_unknown_shapes():
    x = tf.placeholder(tf.float64, [2, 4])
    g = tf.gradients(tf.matrix_diag_part(x), x)[0]
    assert g.shape.as_list() == [2, 4]
    np.testing.assert_array_equal(evaluate(g, {x: np.zeros((2, 4))}), np.eye(2, 4))
    u = tf.placeholder(tf.float64)
    gu = tf.gradients(tf.matrix_diag_part(u), u)[0]
    np.testing.assert_array_equal(evaluate(gu, {u: np.zeros((2, 3, 2))}),
                                  np.broadcast_to(np.eye(3, 2), (2, 3, 2)))
