"""Random ops (white paper Table 1): RandomUniform, RandomUniformInt, RandomStandardNormal,
TruncatedNormal, Multinomial, RandomShuffle, and their TF1 wrappers.

Seeding follows TF1: the wrappers derive the `seed`/`seed2` attrs with
`random_seed.get_seed`, and each kernel owns a generator created when the kernel is built
(once per session and node) from (seed, seed2). So a seeded op gives the same sequence in
every session, successive runs draw new values, and seed == seed2 == 0 means a fresh
nondeterministic stream. The numbers are NumPy's PCG64, not TF's Philox.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework import random_seed
from tensorweave.framework import tensor_util
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, dimension_value
from tensorweave.ops.linalg_ops import format_dims, shape_error, with_rank

__all__ = ["random_uniform", "random_normal", "truncated_normal", "multinomial", "random_shuffle"]

_SEED_ATTRS = ["seed: int = 0", "seed2: int = 0"]
_FLOAT_TYPES = "{float16, float32, float64}"
_TRUNCATE_AT = 2.0  # TruncatedNormal re-draws values at least this many stddevs from the mean


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _make_generator(ctx: Any) -> np.random.Generator:
    """The kernel's own stream: deterministic in (seed, seed2) unless both are 0."""
    seed, seed2 = ctx.attr("seed"), ctx.attr("seed2")
    if seed == 0 and seed2 == 0:
        return np.random.default_rng()
    mask = (1 << 64) - 1  # SeedSequence wants non-negative entropy
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed & mask, seed2 & mask])))


# -- the shape input -------------------------------------------------------------------------------
def _shape_from_input(op: Any, index: int = 0) -> TensorShape:
    """Output shape given by a 1-D shape tensor, as precisely as its static value allows."""
    with_rank(op, op.inputs[index].shape, 1)
    return tensor_util.constant_value_as_shape(op.inputs[index])


def _check_shape_value(value: Any) -> tuple[int, ...]:
    value = np.asarray(value)
    if value.ndim != 1:
        raise _invalid(f"shape must be a vector of {{int32,int64}}, got shape {format_dims(value.shape)}")
    dims = tuple(int(d) for d in value)
    for d in dims:
        if d < 0:
            raise _invalid(f"Dimension {d} must be >= 0")
    return dims


def _shape_reader(ctx: Any, index: int = 0) -> Callable[[Any], tuple[int, ...]]:
    """shape value -> validated tuple. A Const shape input is validated once, here: its kernel
    hands over this very array each run, so anything else (a feed) is checked when it comes."""
    static = tensor_util.constant_value(ctx.op.inputs[index])
    if static is None:
        return _check_shape_value
    try:
        dims = _check_shape_value(static)
    except errors.InvalidArgumentError:
        return _check_shape_value  # report the error when the node runs, as TF does
    return lambda value: dims if value is static else _check_shape_value(value)


def _random_op(name: str) -> Any:
    return define_op(name, inputs=["shape: T"], outputs=["output: dtype"],
                     attrs=_SEED_ATTRS + [f"dtype: {_FLOAT_TYPES}", "T: {int32, int64}"],
                     shape_fn=lambda op: [_shape_from_input(op)], is_stateful=True)


RandomUniform = _random_op("RandomUniform")
RandomStandardNormal = _random_op("RandomStandardNormal")
TruncatedNormal = _random_op("TruncatedNormal")


@RandomUniform.kernel()
def _random_uniform_kernel(ctx: Any) -> Callable[..., Any]:
    rng, read_shape, asarray = _make_generator(ctx), _shape_reader(ctx), ctx.xp.asarray
    np_dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
    if np_dtype == np.float16:
        # k * 2**-10 is exact in float16 and stays below 1; rounding a float32 draw could give 1.0.
        step = np.float16(2.0 ** -10)
        return lambda shape: asarray(rng.integers(0, 1 << 10, read_shape(shape), dtype=np.int16)
                                     .astype(np.float16) * step)
    return lambda shape: asarray(rng.random(read_shape(shape), dtype=np_dtype))


def _standard_normal(rng: np.random.Generator, np_dtype: Any) -> Callable[[Any], np.ndarray]:
    if np_dtype == np.float16:  # NumPy draws float32/float64 only
        return lambda size: rng.standard_normal(size, dtype=np.float32).astype(np.float16)
    return lambda size: rng.standard_normal(size, dtype=np_dtype)


@RandomStandardNormal.kernel()
def _random_standard_normal_kernel(ctx: Any) -> Callable[..., Any]:
    read_shape, asarray = _shape_reader(ctx), ctx.xp.asarray
    draw = _standard_normal(_make_generator(ctx), np.dtype(ctx.output_dtypes[0].as_numpy_dtype))
    return lambda shape: asarray(draw(read_shape(shape)))


@TruncatedNormal.kernel()
def _truncated_normal_kernel(ctx: Any) -> Callable[..., Any]:
    read_shape, asarray = _shape_reader(ctx), ctx.xp.asarray
    np_dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
    work = np.float32 if np_dtype == np.float16 else np_dtype
    draw = _standard_normal(_make_generator(ctx), work)

    def compute(shape: Any) -> Any:
        dims = read_shape(shape)
        flat = draw(int(np.prod(dims)))
        bad = np.flatnonzero(np.abs(flat) >= _TRUNCATE_AT)
        while bad.size:  # ~4.6% re-drawn per round, so a few rounds at most
            flat[bad] = draw(bad.size)
            bad = bad[np.abs(flat[bad]) >= _TRUNCATE_AT]
        return asarray(flat.reshape(dims).astype(np_dtype, copy=False))

    return compute


# -- RandomUniformInt ------------------------------------------------------------------------------
def _random_uniform_int_shape(op: Any) -> list[TensorShape]:
    with_rank(op, op.inputs[1].shape, 0)
    with_rank(op, op.inputs[2].shape, 0)
    return [_shape_from_input(op)]


RandomUniformInt = define_op(
    "RandomUniformInt", inputs=["shape: T", "minval: Tout", "maxval: Tout"], outputs=["output: Tout"],
    attrs=_SEED_ATTRS + ["Tout: {int32, int64}", "T: {int32, int64}"],
    shape_fn=_random_uniform_int_shape, is_stateful=True)


@RandomUniformInt.kernel()
def _random_uniform_int_kernel(ctx: Any) -> Callable[..., Any]:
    rng, read_shape, asarray = _make_generator(ctx), _shape_reader(ctx), ctx.xp.asarray
    np_dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)

    def compute(shape: Any, minval: Any, maxval: Any) -> Any:
        dims = read_shape(shape)
        for name, v in (("minval", minval), ("maxval", maxval)):
            if np.ndim(v) != 0:
                raise _invalid(f"{name} must be 0-D, got shape {format_dims(np.shape(v))}")
        if 0 in dims:  # TF checks minval < maxval only for non-empty outputs
            return asarray(np.zeros(dims, dtype=np_dtype))
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            raise _invalid(f"Need minval < maxval, got {lo} >= {hi}")
        return asarray(rng.integers(lo, hi, dims, dtype=np_dtype))

    return compute


# -- Multinomial ---------------------------------------------------------------------------------
def _multinomial_shape(op: Any) -> list[TensorShape]:
    logits = with_rank(op, op.inputs[0].shape, 2)
    with_rank(op, op.inputs[1].shape, 0)
    num_samples = tensor_util.constant_value(op.inputs[1])
    return [TensorShape([logits[0], None if num_samples is None else int(num_samples)])]


Multinomial = define_op(
    "Multinomial", inputs=["logits: T", "num_samples: int32"], outputs=["output: output_dtype"],
    attrs=_SEED_ATTRS + ["T: realnumbertype", "output_dtype: {int32, int64} = int64"],
    shape_fn=_multinomial_shape, is_stateful=True)


def _check_multinomial_inputs(logits: Any, num_samples: Any) -> int:
    if logits.ndim != 2:
        raise _invalid(f"logits should be a matrix, got shape {format_dims(logits.shape)}")
    if np.ndim(num_samples) != 0:
        raise _invalid(f"num_samples should be a scalar, got shape {format_dims(np.shape(num_samples))}")
    n = int(num_samples)
    if n < 0:
        raise _invalid(f"num_samples should be non-negative, got {n}")
    if logits.shape[1] == 0:
        raise _invalid("num_classes should be positive, got 0")
    return n


@Multinomial.kernel()
def _multinomial_kernel(ctx: Any) -> Callable[..., Any]:
    rng, asarray = _make_generator(ctx), ctx.xp.asarray
    out_dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)

    def compute(logits: Any, num_samples: Any) -> Any:
        n = _check_multinomial_inputs(logits, num_samples)
        batch, classes = logits.shape
        if batch == 0 or n == 0:
            return asarray(np.zeros((batch, n), dtype=out_dtype))
        z = np.asarray(logits, dtype=np.float64)
        cdf = np.cumsum(np.exp(z - z.max(axis=1, keepdims=True)), axis=1)
        cdf /= cdf[:, -1:]  # each row now ends at exactly 1.0
        # Inverse-CDF sampling for all rows in one searchsorted: row i's CDF and its uniforms are
        # shifted by i, so the concatenated CDFs stay sorted and each u lands in its own row.
        offsets = np.arange(batch, dtype=np.float64)[:, None]
        # Clamped below i + 1: rounding u + i up to i + 1 would step into the next row.
        u = np.minimum(rng.random((batch, n)) + offsets, np.nextafter(offsets + 1.0, 0.0))
        idx = np.searchsorted((cdf + offsets).reshape(-1), u.reshape(-1), side="right").reshape(batch, n)
        idx -= np.arange(batch)[:, None] * classes
        return asarray(np.clip(idx, 0, classes - 1).astype(out_dtype))

    return compute


# -- RandomShuffle -------------------------------------------------------------------------------
RandomShuffle = define_op("RandomShuffle", inputs=["value: T"], outputs=["output: T"],
                          attrs=_SEED_ATTRS + ["T: type"],
                          shape_fn=lambda op: [op.inputs[0].shape], is_stateful=True)


@RandomShuffle.kernel()
def _random_shuffle_kernel(ctx: Any) -> Callable[..., Any]:
    rng = _make_generator(ctx)

    def compute(value: Any) -> Any:
        if value.ndim == 0 or value.shape[0] <= 1:
            return value.copy()
        return value[rng.permutation(value.shape[0])]  # fancy indexing copies

    return compute


# Random draws carry no gradient (TF marks them NotDifferentiable); the gradient of a scaled
# draw such as random_normal(mean=m, stddev=s) flows to m and s through the Mul and Add.
for _op in (RandomUniform, RandomStandardNormal, TruncatedNormal, RandomUniformInt, Multinomial,
            RandomShuffle):
    _op.not_differentiable()


# -- TF1 wrappers --------------------------------------------------------------------------------
def _shape_tensor(shape: Any) -> Any:
    """TF's tensor_util.shape_tensor: a shape given as list/tuple/TensorShape/tensor -> int tensor."""
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
        shape = shape.as_list()
    if isinstance(shape, (tuple, list)):
        # An empty list would convert as float32; TF makes it an int32 shape.
        shape = [dimension_value(d) for d in shape] if shape else np.zeros([0], np.int32)
    return convert_to_tensor(shape, name="shape")


def _float_dtype(dtype: Any, allow_int: bool = False) -> _dtypes.DType:
    dtype = _dtypes.as_dtype(dtype).base_dtype
    allowed = (_dtypes.float16, _dtypes.float32, _dtypes.float64) + (
        (_dtypes.int32, _dtypes.int64) if allow_int else ())
    if dtype not in allowed:
        raise ValueError(f"Invalid dtype {dtype!r}")
    return dtype


def random_uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = _dtypes.float32,
                   seed: Optional[int] = None, name: Optional[str] = None) -> Any:
    """Uniform values in [minval, maxval): floats scale RandomUniform, ints use RandomUniformInt."""
    dtype = _float_dtype(dtype, allow_int=True)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with _graph.name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape = _shape_tensor(shape)
        minval = convert_to_tensor(minval, dtype=dtype, name="min")
        maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        seed1, seed2 = random_seed.get_seed(seed)
        if dtype.is_integer:
            return apply_op(RandomUniformInt, name=scope, shape=shape, minval=minval, maxval=maxval,
                            seed=seed1, seed2=seed2)
        from tensorweave.ops import math_ops  # lazily; also installs the Tensor operators used here
        rnd = apply_op(RandomUniform, shape=shape, dtype=dtype, seed=seed1, seed2=seed2)
        return math_ops.add(rnd * (maxval - minval), minval, name=scope)


def _scaled_normal(op_def: Any, default_name: str, shape: Any, mean: Any, stddev: Any, dtype: Any,
                   seed: Optional[int], name: Optional[str]) -> Any:
    """mean + stddev * op_def(shape), built as TF builds random_normal/truncated_normal."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with _graph.name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape = _shape_tensor(shape)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        seed1, seed2 = random_seed.get_seed(seed)
        from tensorweave.ops import math_ops  # lazily; also installs the Tensor operators used here
        rnd = apply_op(op_def, shape=shape, dtype=dtype, seed=seed1, seed2=seed2)
        return math_ops.add(rnd * stddev, mean, name=scope)


def random_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = _dtypes.float32,
                  seed: Optional[int] = None, name: Optional[str] = None) -> Any:
    """Normally distributed values: mean + stddev * RandomStandardNormal(shape)."""
    return _scaled_normal(RandomStandardNormal, "random_normal", shape, mean, stddev, dtype, seed, name)


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = _dtypes.float32,
                     seed: Optional[int] = None, name: Optional[str] = None) -> Any:
    """Normal values re-drawn when more than 2 standard deviations from the mean."""
    return _scaled_normal(TruncatedNormal, "truncated_normal", shape, mean, stddev, dtype, seed, name)


def multinomial(logits: Any, num_samples: Any, seed: Optional[int] = None, name: Optional[str] = None,
                output_dtype: Any = None) -> Any:
    """Draws `num_samples` class indices per row of `logits` from softmax(logits)."""
    with _graph.name_scope(name, "multinomial", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        seed1, seed2 = random_seed.get_seed(seed)
        return apply_op(Multinomial, logits=logits, num_samples=num_samples, seed=seed1, seed2=seed2,
                        output_dtype=output_dtype)


def random_shuffle(value: Any, seed: Optional[int] = None, name: Optional[str] = None) -> Any:
    """Shuffles `value` along its first dimension."""
    seed1, seed2 = random_seed.get_seed(seed)
    return apply_op(RandomShuffle, name=name, value=value, seed=seed1, seed2=seed2)
