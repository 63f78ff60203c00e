"""JIT clusters with gradients, in tf.function(jit_compile=True), without numba, and across
processes through the disk cache."""
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.eager import context
from tensorweave.ops.jit import xla_run
from tensorweave.ops.kernels.jit import compiler
from tests.jit.helpers import fused, gelu, gelu_numpy, jit_config, run_traced, x4

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
X = np.linspace(-6, 6, 257).astype(np.float32)
# numba is the optional extra tensorweave[jit] (CI installs it); the no-numba test runs anyway
needs_numba = pytest.mark.skipif(not compiler.numba_available(), reason="numba (tensorweave[jit]) not installed")


def _count_compiles(monkeypatch):
    calls = []
    real = compiler.compile_program

    def spy(program):
        calls.append(program)
        return real(program)

    monkeypatch.setattr(compiler, "compile_program", spy)
    return calls


@needs_numba
def test_gradients_of_a_clustered_graph_equal_the_unfused_ones():
    def build(scoped, level):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [None])
            w = tf.Variable(np.linspace(0.5, 1.5, X.size).astype(np.float32))
            if scoped:
                with tf.xla.experimental.jit_scope(separate_compiled_gradients=True):
                    loss = tf.reduce_sum(gelu(x) * w)
            else:
                loss = tf.reduce_sum(gelu(x) * w)
            grads = tf.gradients(loss, [x, w])
        return g, x, w, loss, grads

    results = []
    for scoped, level in ((False, None), (True, None), (False, tf.OptimizerOptions.ON_1)):
        g, x, w, loss, grads = build(scoped, level)
        with tf.Session(graph=g, config=jit_config(level)) as sess:
            sess.run(w.initializer)
            md = tf.RunMetadata()
            values = sess.run([loss] + grads, {x: X}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                              run_metadata=md)
        labels = [n.timeline_label for d in md.step_stats.dev_stats for n in d.node_stats]
        results.append((values, fused(labels)))
        if scoped:  # the gradient ops were built in the scope of their own (separate_compiled_gradients)
            grad_ops = [op for op in g.get_operations() if op.name.startswith("gradients/")
                        and op.type in ("Mul", "AddV2")]
            assert grad_ops and all(op.get_attr("_XlaCompile") for op in grad_ops)
            assert all(op.get_attr("_XlaScope").startswith(b"jit_scope_0_grad_") for op in grad_ops)
    (plain, none), (scoped, scoped_fused), (auto, _) = results
    # the gradients read most forward values, so clusters are small there: Tanh with its
    # input's Mul, and the loss's Mul with its Sum
    assert not none and len(scoped_fused) >= 2
    for values in (scoped, auto):
        for got, want in zip(values, plain):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(plain[0], (gelu_numpy(X) * np.linspace(0.5, 1.5, X.size)).sum(), rtol=1e-5)


@needs_numba
def test_tf_function_jit_compile_runs_its_body_fused_eagerly(monkeypatch):
    calls = _count_compiles(monkeypatch)
    with context.eager_mode():
        @tf.function(jit_compile=True)
        def f(x):
            return x4(x)

        @tf.function(experimental_compile=True)
        def g(x):
            return gelu(x)

        y = f(tf.constant(X)).numpy()
        z = g(tf.constant(X)).numpy()
        concrete = f.get_concrete_function(tf.constant(X))
        assert concrete.function_def.attr["_XlaMustCompile"].b
        assert all(op.get_attr("_XlaCompile") for op in concrete.graph.get_operations() if op.type == "Mul")
    # (Grappler's arithmetic pass made x*x a Square first)
    assert [len(p["nodes"]) for p in calls] == [3, 9] and "Tanh" in [n["op"] for n in calls[1]["nodes"]]
    np.testing.assert_allclose(y, X.astype(np.float64) ** 4, rtol=1e-6)
    np.testing.assert_allclose(z, gelu_numpy(X), rtol=1e-5, atol=1e-6)


@needs_numba
def test_tf_function_jit_compile_in_a_session_graph_is_not_inlined(monkeypatch):
    calls = _count_compiles(monkeypatch)

    @tf.function(jit_compile=True)
    def f(x):
        return x4(x) + 1.0

    @tf.function
    def plain(x):
        return x4(x) + 1.0

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        (y, z), labels = run_traced([f(x), plain(x)], {x: X})
    assert len(calls) == 1 and [n["op"] for n in calls[0]["nodes"]][1:] == ["Mul", "Mul", "AddV2"]
    assert not fused(labels)  # the fused kernel runs inside the call's own plan
    np.testing.assert_allclose(y, z, rtol=1e-6)


def test_without_numba_clusters_run_unfused_with_one_note(monkeypatch, caplog):
    def missing():
        raise ImportError("No module named 'numba'")

    monkeypatch.setattr(compiler, "load_numba", missing)
    monkeypatch.setattr(compiler, "_noted", False)
    with tf.Graph().as_default(), caplog.at_level(logging.INFO, logger="tensorweave.jit"):
        x = tf.placeholder(tf.float32, [None])
        with tf.xla.experimental.jit_scope():
            y = gelu(x)
            z = x4(x)
        (yv, zv), labels = run_traced([y, z], {x: X})
        run_traced([y, z], {x: X}, jit_config(tf.OptimizerOptions.ON_2))
    assert not fused(labels)
    notes = [r.getMessage() for r in caplog.records if "numba not installed" in r.getMessage()]
    assert notes == ["numba not installed: jit clusters run unfused (pip install tensorweave[jit])"]
    np.testing.assert_allclose(yv, gelu_numpy(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(zv, X.astype(np.float64) ** 4, rtol=1e-6)


_PROBE = """
import numba.core.compiler
import numpy as np
import tensorweave as tf
from tests.jit.helpers import gelu
if {refuse}:
    def refuse(*args, **kwargs):
        raise RuntimeError("compiled again instead of loading the disk cache")
    numba.core.compiler.compile_extra = refuse
x = tf.placeholder(tf.float32, [None])
with tf.xla.experimental.jit_scope():
    y = gelu(x) * 3.0
with tf.Session() as sess:
    print(float(sess.run(y, {{x: np.float32([1.5])}})[0]))
"""


@needs_numba
def test_a_second_process_loads_the_compiled_kernel_from_the_disk_cache(tmp_path):
    env = dict(os.environ, TW_JIT_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    env.pop("NUMBA_CACHE_DIR", None)  # numba would keep its index there instead of beside the source

    def run(refuse):
        out = subprocess.run([sys.executable, "-c", _PROBE.format(refuse=refuse)], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        return float(out.stdout.split()[-1])

    first = run(False)
    sources = [f for f in os.listdir(tmp_path) if f.startswith("tw_jit_") and f.endswith(".py")]
    cached = sorted(os.listdir(tmp_path / "__pycache__"))
    assert len(sources) == 1 and any(f.endswith(".nbi") for f in cached) and any(f.endswith(".nbc") for f in cached)
    stamps = {f: os.stat(tmp_path / "__pycache__" / f).st_mtime_ns for f in cached}
    second = run(True)  # numba's compiler refuses: the kernel must come from the cache
    assert second == first == np.float32(gelu_numpy(np.float32([1.5]))[0] * 3)
    assert {f: os.stat(tmp_path / "__pycache__" / f).st_mtime_ns for f in cached} == stamps


@needs_numba
def test_xla_run_static_shape_matches_its_output():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [2, 1, 3])
        b = tf.placeholder(tf.float32, [4, 1])
        with tf.xla.experimental.jit_scope():
            s = tf.reduce_mean(a * b + 1.0, axis=[0, 2], keepdims=True)
            t = (a - b) * 2.0
        av, bv = np.ones((2, 1, 3), np.float32), np.arange(4, dtype=np.float32).reshape(4, 1)
        (sv, tv), labels = run_traced([s, t], {a: av, b: bv})
        assert len(fused(labels)) == 2
        for fetched, value in ((s, sv), (t, tv)):
            static = xla_run._xla_run_shape(_fused_op(fetched))
            assert static[0].as_list() == list(value.shape)
    np.testing.assert_allclose(sv, (av * bv + 1).mean(axis=(0, 2), keepdims=True), rtol=1e-6)


def _fused_op(t):
    """The plan's _XlaRun copy of the node producing `t` (rebuilt from the pass directly)."""
    from tensorweave.grappler import jit
    from tensorweave.runtime import pruning
    ops = pruning.prune([t], [], set())
    with tf.Session() as sess:
        devices = sess._device_mgr.devices
    new_ops, _ = jit.optimize(ops, [t], [], [], tf.ConfigProto(), devices)
    return next(op for op in new_ops if op.name == t.op.name and op.type == "_XlaRun")
