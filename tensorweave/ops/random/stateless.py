"""Stateless random ops (`tf.random.stateless_*`): the same numbers for the same seed, every run.

TensorFlow 2.x builds them in two steps, and so do we: StatelessRandomGetKeyCounter scrambles
the [2] seed into a Philox key and counter (one Philox block of the seed under a fixed key),
then the V2 sampling ops (StatelessRandomUniformV2, ...NormalV2, StatelessTruncatedNormalV2,
...UniformIntV2, ...UniformFullIntV2) draw from that key and counter exactly as the stateful
kernels draw from a run's reservation (random_distributions.py), so the values are TF's.
StatelessMultinomial (tf.random.stateless_categorical / stateless_multinomial) takes the seed
itself and samples as Multinomial does. `alg` may be "auto_select" or "philox" (both Philox
on CPU, as in TF); TF's ThreeFry is not provided. The wrappers that scale the draws
(stateless_random_uniform, ...) are in random/draws.py.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.kernels import random_distributions as _dist
from tensorweave.ops.random import random_ops
from tensorweave.ops._util import format_dims, with_rank
from tensorweave.ops.kernels.philox import philox_words, PhiloxGenerator
from tensorweave.ops._util import invalid

__all__ = ["stateless_multinomial", "stateless_categorical"]

_SCRAMBLE_KEY = (0x3EC8F720, 0x02461E29)  # TF's fixed key for turning a seed into key/counter
_ALGORITHMS = {"philox": 1, "auto_select": 3}  # TF's Algorithm enum (2, ThreeFry: not on CPU)
_MASK64 = (1 << 64) - 1


def _check_seed(seed: Any) -> tuple[int, int]:
    seed = np.asarray(seed)
    if seed.shape != (2,):
        raise invalid(f"seed must have shape [2], not {format_dims(seed.shape)}")
    return int(seed[0]) & _MASK64, int(seed[1]) & _MASK64  # int32 seeds sign-extend, as in TF


def key_and_counter(seed: Any) -> tuple[tuple[int, int], int]:
    """TF's GenerateKey: the Philox block of counter (seed1 << 64 | seed0) under a fixed key
    gives the key (words 0, 1) and the high half of the counter (words 2, 3)."""
    seed0, seed1 = _check_seed(seed)
    mix = philox_words(_SCRAMBLE_KEY, seed1 << 64 | seed0, 1).tolist()
    return (mix[0], mix[1]), (mix[2] | mix[3] << 32) << 64


# -- StatelessRandomGetKeyCounter ----------------------------------------------------------------
def _key_counter_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 1)
    return [TensorShape([1]), TensorShape([2])]  # Philox: one uint64 of key, two of counter


StatelessRandomGetKeyCounter = define_op(
    "StatelessRandomGetKeyCounter", inputs=["seed: Tseed"], outputs=["key: uint64", "counter: uint64"],
    attrs=["Tseed: {int32, int64} = int64"], shape_fn=_key_counter_shape)


@StatelessRandomGetKeyCounter.kernel()
def _get_key_counter_kernel(ctx: KernelContext) -> Callable[..., Any]:
    asarray = ctx.xp.asarray

    def compute(seed: Any) -> Any:
        (k0, k1), counter = key_and_counter(seed)
        return (asarray(np.array([k0 | k1 << 32], np.uint64)),
                asarray(np.array([counter & _MASK64, counter >> 64], np.uint64)))

    return compute


# -- the V2 samplers ----------------------------------------------------------------------------
def _read_key_counter(key: Any, counter: Any, alg: Any) -> tuple[tuple[int, int], int]:
    if int(alg) not in _ALGORITHMS.values():
        raise invalid(f"Unsupported algorithm id: {int(alg)}")
    key, counter = np.asarray(key, np.uint64).reshape(-1), np.asarray(counter, np.uint64).reshape(-1)
    if key.shape != (1,):
        raise invalid(f"key must have shape [1], not {format_dims(key.shape)}")
    if counter.size < 2:
        raise invalid(f"counter must have at least 2 elements, got {counter.size}")
    return (int(key[0]) & 0xFFFFFFFF, int(key[0]) >> 32), int(counter[0]) | int(counter[1]) << 64


def _v2_op(name: str, types: str, default: str, extra: tuple = ()) -> Any:
    return define_op(
        name, inputs=["shape: Tshape", "key: uint64", "counter: uint64", "alg: int32"] + list(extra),
        outputs=["output: dtype"], attrs=[f"dtype: {types} = {default}", "Tshape: {int32, int64} = int32"],
        shape_fn=lambda op: [random_ops._shape_from_input(op)])


_FLOATS = "{float16, float32, float64}"
StatelessRandomUniformV2 = _v2_op("StatelessRandomUniformV2", _FLOATS, "float32")
StatelessRandomNormalV2 = _v2_op("StatelessRandomNormalV2", _FLOATS, "float32")
StatelessTruncatedNormalV2 = _v2_op("StatelessTruncatedNormalV2", _FLOATS, "float32")
StatelessRandomUniformFullIntV2 = _v2_op("StatelessRandomUniformFullIntV2", "{int32, int64, uint32, uint64}",
                                         "uint64")
StatelessRandomUniformIntV2 = _v2_op("StatelessRandomUniformIntV2", "{int32, int64, uint32, uint64}", "int32",
                                     ("minval: dtype", "maxval: dtype"))


def _v2_kernel(sample: Callable[..., np.ndarray]) -> Callable[[Any], Callable[..., Any]]:
    """`sample(key, counter, size, dtype, *bounds)` from the key and counter inputs."""

    def build(ctx: KernelContext) -> Callable[..., Any]:
        read_shape, asarray = random_ops._shape_reader(ctx), ctx.xp.asarray
        np_dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)

        def compute(shape: Any, key: Any, counter: Any, alg: Any, *bounds: Any) -> Any:
            dims = read_shape(shape)
            key, counter = _read_key_counter(key, counter, alg)
            size = math.prod(dims)
            if size == 0:
                return asarray(np.zeros(dims, np_dtype))
            return asarray(sample(key, counter, size, np_dtype, *bounds).reshape(dims))

        return compute

    return build


def _uniform_int(key: tuple, counter: int, size: int, np_dtype: Any, minval: Any, maxval: Any) -> np.ndarray:
    for name, v in (("minval", minval), ("maxval", maxval)):
        if np.ndim(v) != 0:
            raise invalid(f"{name} must be 0-D, got shape {format_dims(np.shape(v))}")
    lo, hi = int(minval), int(maxval)
    if lo >= hi:
        raise invalid(f"Need minval < maxval, got {lo} >= {hi}")
    return _dist.uniform_int(key, counter, size, np_dtype, lo, hi)


StatelessRandomUniformV2.kernel()(_v2_kernel(_dist.uniform))
StatelessRandomNormalV2.kernel()(_v2_kernel(_dist.normal))
StatelessTruncatedNormalV2.kernel()(_v2_kernel(_dist.truncated_normal))
StatelessRandomUniformFullIntV2.kernel()(_v2_kernel(_dist.uniform_full_int))
StatelessRandomUniformIntV2.kernel()(_v2_kernel(_uniform_int))


# -- StatelessMultinomial -----------------------------------------------------------------------
StatelessMultinomial = define_op(
    "StatelessMultinomial", inputs=["logits: T", "num_samples: int32", "seed: Tseed"],
    outputs=["output: output_dtype"],
    attrs=["T: realnumbertype", "Tseed: {int32, int64} = int64", "output_dtype: {int32, int64} = int64"],
    shape_fn=lambda op: random_ops._multinomial_shape(op))


@StatelessMultinomial.kernel()
def _stateless_multinomial_kernel(ctx: KernelContext) -> Callable[..., Any]:
    asarray, threads = ctx.xp.asarray, random_ops._intra_op_threads(ctx)
    out_dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)

    def compute(logits: Any, num_samples: Any, seed: Any) -> Any:
        key, counter = key_and_counter(seed)
        n = random_ops._check_multinomial_inputs(logits, num_samples)
        if logits.shape[0] == 0 or n == 0:
            return asarray(np.zeros((logits.shape[0], n), dtype=out_dtype))
        gen = PhiloxGenerator(0, 0, counter=counter, key=key)
        return asarray(random_ops._multinomial_sample(gen, np.asarray(logits), n, threads).astype(out_dtype))

    return compute


for _op in (StatelessRandomGetKeyCounter, StatelessRandomUniformV2, StatelessRandomNormalV2,
            StatelessTruncatedNormalV2, StatelessRandomUniformFullIntV2, StatelessRandomUniformIntV2,
            StatelessMultinomial):
    _op.not_differentiable()


# -- wrappers -------------------------------------------------------------------------------------
def key_counter_alg(seed: Any, alg: Any) -> tuple[Any, Any, Any]:
    """(key, counter, alg) tensors for a V2 stateless op: the [2] `seed` scrambled by
    StatelessRandomGetKeyCounter, and TF's algorithm id for `alg`."""
    alg = "auto_select" if alg is None else alg
    alg_id = _ALGORITHMS.get(alg.lower()) if isinstance(alg, str) else int(alg)
    if alg_id not in _ALGORITHMS.values():
        raise ValueError(f"Argument `alg` got unsupported value {alg}. Supported: "
                         f"{sorted(_ALGORITHMS)} (ThreeFry is not available on CPU).")
    key, counter = apply_op(StatelessRandomGetKeyCounter, seed=seed)
    return key, counter, convert_to_tensor(np.int32(alg_id))


def stateless_multinomial(logits: Any, num_samples: Any, seed: Any, output_dtype: Any = _dtypes.int64,
                          name: Optional[str] = None) -> Any:
    """tf.random.stateless_multinomial: class indices per row of `logits`, fixed by `seed`."""
    with _graph.name_scope(name, "stateless_multinomial", [logits, seed]):
        return _stateless_multinomial(logits, num_samples, output_dtype, seed)


def stateless_categorical(logits: Any, num_samples: Any, seed: Any, dtype: Any = _dtypes.int64,
                          name: Optional[str] = None) -> Any:
    """tf.random.stateless_categorical: as stateless_multinomial."""
    with _graph.name_scope(name, "stateless_categorical", [logits, seed]):
        return _stateless_multinomial(logits, num_samples, dtype, seed)


def _stateless_multinomial(logits: Any, num_samples: Any, dtype: Any, seed: Any) -> Any:
    logits = convert_to_tensor(logits, name="logits")
    dtype = _dtypes.as_dtype(dtype) if dtype else _dtypes.int64
    if dtype not in (_dtypes.int32, _dtypes.int64):
        raise ValueError(f"Argument `dtype` got invalid value {dtype}. Accepted dtypes are (int32, int64).")
    return apply_op(StatelessMultinomial, logits=logits, num_samples=num_samples, seed=seed,
                    output_dtype=dtype)
