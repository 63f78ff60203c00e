"""Random ops (white paper Table 1): RandomUniform, RandomUniformInt, RandomStandardNormal,
TruncatedNormal, Multinomial, RandomShuffle, and the wrappers `tf.multinomial` and
`tf.random_shuffle` (`tf.random_uniform`, `tf.random_normal` and `tf.truncated_normal` scale the
draws with math ops: random/draws.py).

They give TensorFlow's numbers. The wrappers build the ops TF's wrappers build and derive the
`seed`/`seed2` attrs with `random_seed.get_seed` (TF's graph and op seeds), and each kernel owns a
Philox4x32-10 stream keyed by (seed, seed2), created when the kernel is built (once per session
and node), as TF's GuardedPhiloxRandom: so a seeded op gives TF's sequence in every session,
successive runs draw new values (each run reserves 256 blocks per output, as TF does), and
seed == seed2 == 0 means a fresh random key. The words become numbers as TF's CPU kernels make
them (random_distributions.py); none of this depends on how the work is split over threads,
except for Multinomial, whose TF kernel seeds each of its row shards differently: we shard the
rows as TF's thread pool would (`_multinomial_shards`).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework import random_seed
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.kernels import random_distributions as _dist
from tensorweave.ops.kernels.intra_op import available_cores
from tensorweave.ops._util import format_dims, with_rank
from tensorweave.ops.kernels.philox import philox_words, PhiloxGenerator
from tensorweave.ops._util import invalid

__all__ = ["multinomial", "random_shuffle"]

_SEED_ATTRS = ["seed: int = 0", "seed2: int = 0"]
_FLOAT_TYPES = "{float16, float32, float64}"


def _philox(ctx: KernelContext) -> PhiloxGenerator:
    """The kernel's Philox stream, keyed by its (seed, seed2) attrs as in TF."""
    return PhiloxGenerator(ctx.attr("seed"), ctx.attr("seed2"))


# -- the shape input -------------------------------------------------------------------------------
def _shape_from_input(op: Operation, index: int = 0) -> TensorShape:
    """Output shape given by a 1-D shape tensor, as precisely as its static value allows."""
    with_rank(op, op.inputs[index].shape, 1)
    return tensor_util.constant_value_as_shape(op.inputs[index])


def _check_shape_value(value: Any) -> tuple[int, ...]:
    value = np.asarray(value)
    if value.ndim != 1:
        raise invalid(f"shape must be a vector of {{int32,int64}}, got shape {format_dims(value.shape)}")
    dims = tuple(int(d) for d in value)
    for d in dims:
        if d < 0:
            raise invalid(f"Dimension {d} must be >= 0")
    return dims


def _shape_reader(ctx: KernelContext, index: int = 0) -> Callable[[Any], tuple[int, ...]]:
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


def _float_kernel(sample: Callable[..., np.ndarray]) -> Callable[[Any], Callable[..., Any]]:
    """A builder for RandomUniform / RandomStandardNormal / TruncatedNormal: `sample(key,
    counter, size, dtype)` fills a flat array from the run's reservation."""

    def build(ctx: KernelContext) -> Callable[..., Any]:
        gen, read_shape, asarray = _philox(ctx), _shape_reader(ctx), ctx.xp.asarray
        np_dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)

        def compute(shape: Any) -> Any:
            dims = read_shape(shape)
            size = math.prod(dims)
            counter = gen.reserve_outputs(size)
            return asarray(sample(gen.key, counter, size, np_dtype).reshape(dims))

        return compute

    return build


RandomUniform.kernel()(_float_kernel(_dist.uniform))
RandomStandardNormal.kernel()(_float_kernel(_dist.normal))
TruncatedNormal.kernel()(_float_kernel(_dist.truncated_normal))


# -- RandomUniformInt ------------------------------------------------------------------------------
def _random_uniform_int_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[1].shape, 0)
    with_rank(op, op.inputs[2].shape, 0)
    return [_shape_from_input(op)]


RandomUniformInt = define_op(
    "RandomUniformInt", inputs=["shape: T", "minval: Tout", "maxval: Tout"], outputs=["output: Tout"],
    attrs=_SEED_ATTRS + ["Tout: {int32, int64}", "T: {int32, int64}"],
    shape_fn=_random_uniform_int_shape, is_stateful=True)


@RandomUniformInt.kernel()
def _random_uniform_int_kernel(ctx: KernelContext) -> Callable[..., Any]:
    gen, read_shape, asarray = _philox(ctx), _shape_reader(ctx), ctx.xp.asarray
    np_dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)

    def compute(shape: Any, minval: Any, maxval: Any) -> Any:
        for name, v in (("minval", minval), ("maxval", maxval)):
            if np.ndim(v) != 0:
                raise invalid(f"{name} must be 0-D, got shape {format_dims(np.shape(v))}")
        dims = read_shape(shape)
        size = math.prod(dims)
        if size == 0:  # TF returns before checking minval < maxval, and draws nothing
            return asarray(np.zeros(dims, dtype=np_dtype))
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            raise invalid(f"Need minval < maxval, got {lo} >= {hi}")
        counter = gen.reserve_outputs(size)
        return asarray(_dist.uniform_int(gen.key, counter, size, np_dtype, lo, hi).reshape(dims))

    return compute


# -- Multinomial ---------------------------------------------------------------------------------
def _multinomial_shape(op: Operation) -> list[TensorShape]:
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
        raise invalid(f"logits should be a matrix, got shape {format_dims(logits.shape)}")
    if np.ndim(num_samples) != 0:
        raise invalid(f"num_samples should be a scalar, got shape {format_dims(np.shape(num_samples))}")
    n = int(num_samples)
    if n < 0:
        raise invalid(f"num_samples should be non-negative, got {n}")
    if logits.shape[1] == 0:
        raise invalid("num_classes should be positive, got 0")
    return n


def _intra_op_threads(ctx: KernelContext) -> int:
    """The threads of TF's intra-op pool for this session: ConfigProto's
    intra_op_parallelism_threads, or one per core."""
    intra = getattr(ctx.session_state, "intra_op_parallelism_threads", 0) or 0
    return intra if intra > 0 else available_cores()


def _multinomial_shards(batch: int, num_samples: int, num_classes: int, threads: int) -> list[int]:
    """Where TF's CPU Multinomial kernel starts its row shards: its ParallelFor blocks (Eigen's
    cost model, block size and parallel-efficiency search). TF seeds each shard by its first
    row, so its samples depend on this split, which we therefore reproduce."""
    cost = int(50 * (num_samples * math.log(num_classes) / math.log(2) + num_classes))
    wanted = int((batch * float(cost) - 100000) / 100000 + 0.9)  # Eigen's CostModel::numThreads
    if threads <= 1 or batch <= 1 or min(threads, max(1, wanted)) == 1:
        return [0]
    size = min(batch, max(-(-batch // (4 * threads)), int(1.0 / (cost / 40000.0))))
    largest = min(batch, 2 * size)
    count = -(-batch // size)
    efficiency = count / (-(-count // threads) * threads)
    previous = count
    while efficiency < 1.0 and previous > 1:  # coarser blocks while no less efficient
        coarser = -(-batch // (previous - 1))
        if coarser > largest:
            break
        previous = -(-batch // coarser)
        coarser_efficiency = previous / (-(-previous // threads) * threads)
        if coarser_efficiency + 0.01 >= efficiency:
            size, efficiency = coarser, max(efficiency, coarser_efficiency)
    return list(range(0, batch, size))


def _multinomial_cdfs(logits: np.ndarray) -> np.ndarray:
    """Unnormalized CDFs per row, as TF sums them: exp(logit - max finite logit) in double,
    non-finite logits adding nothing (np.cumsum adds left to right, as TF's loop)."""
    finite = np.isfinite(logits)
    lowest = np.finfo(logits.dtype).min if logits.dtype.kind == "f" else np.iinfo(logits.dtype).min
    row_max = np.where(finite, logits, lowest).max(axis=1).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        terms = np.exp(logits.astype(np.float64) - row_max[:, None])
    return np.cumsum(np.where(finite, terms, 0.0), axis=1)


def _multinomial_sample(gen: PhiloxGenerator, logits: np.ndarray, num_samples: int,
                        threads: int) -> np.ndarray:
    """TF's CPU sampler: per row, uniform doubles (2 words each) times the CDF's total, then
    the first CDF entry above (upper_bound). A shard starting at row s draws its rows' words
    one after another from block s * (num_samples + 3) // 4 of the run's reservation."""
    batch, classes = logits.shape
    counter = gen.reserve_outputs(batch * ((num_samples + 3) // 4 * 4) * 2)
    cdf = _multinomial_cdfs(logits)
    starts = _multinomial_shards(batch, num_samples, classes, threads) + [batch]
    uniforms = np.empty((batch, num_samples))
    for first, stop in zip(starts, starts[1:]):
        words = 2 * num_samples * (stop - first)
        stream = philox_words(gen.key, counter + first * (num_samples + 3) // 4, -(-words // 4))
        uniforms[first:stop] = _dist.uniform_doubles(stream[:words]).reshape(stop - first, num_samples)
    targets = uniforms * cdf[:, -1:]
    if batch * num_samples * classes <= 1 << 22:  # upper_bound: how many entries are <= target
        return np.count_nonzero(cdf[:, None, :] <= targets[:, :, None], axis=2)
    return np.stack([np.searchsorted(cdf[row], targets[row], side="right") for row in range(batch)])


@Multinomial.kernel()
def _multinomial_kernel(ctx: KernelContext) -> Callable[..., Any]:
    gen, asarray, threads = _philox(ctx), ctx.xp.asarray, _intra_op_threads(ctx)
    out_dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)

    def compute(logits: Any, num_samples: Any) -> Any:
        n = _check_multinomial_inputs(logits, num_samples)
        batch = logits.shape[0]
        if batch == 0 or n == 0:  # TF draws nothing for an empty output
            return asarray(np.zeros((batch, n), dtype=out_dtype))
        return asarray(_multinomial_sample(gen, np.asarray(logits), n, threads).astype(out_dtype))

    return compute


# -- RandomShuffle -------------------------------------------------------------------------------
RandomShuffle = define_op("RandomShuffle", inputs=["value: T"], outputs=["output: T"],
                          attrs=_SEED_ATTRS + ["T: type"],
                          shape_fn=lambda op: [op.inputs[0].shape], is_stateful=True)


def _shuffle_permutation(gen: PhiloxGenerator, size: int) -> list[int]:
    """TF's in-place Fisher-Yates over range(size): element i swaps with i + (word_i mod
    (size - i)), one word each for i < size - 1. The swaps run in Python (each depends on the
    last), about 0.1 us each; the words are drawn at once."""
    counter = gen.reserve_words(size - 1)
    words = philox_words(gen.key, counter, -(-(size - 1) // 4))[:size - 1]
    spans = np.arange(size, 1, -1, dtype=np.int64).astype(np.uint32)  # size - i, as TF's uint32
    offsets = (words % spans).tolist()
    perm = list(range(size))
    for i, offset in enumerate(offsets):
        j = i + offset
        perm[i], perm[j] = perm[j], perm[i]
    return perm


@RandomShuffle.kernel()
def _random_shuffle_kernel(ctx: KernelContext) -> Callable[..., Any]:
    gen = _philox(ctx)

    def compute(value: Any) -> Any:
        if value.size <= 1 or value.ndim == 0 or value.shape[0] <= 1:
            return value.copy()  # TF draws nothing here
        return value[_shuffle_permutation(gen, value.shape[0])]  # fancy indexing copies

    return compute


# Random draws carry no gradient (TF marks them NotDifferentiable); the gradient of a scaled
# draw such as random_normal(mean=m, stddev=s) flows to m and s through the Mul and Add.
for _op in (RandomUniform, RandomStandardNormal, TruncatedNormal, RandomUniformInt, Multinomial,
            RandomShuffle):
    _op.not_differentiable()


# -- TF1 wrappers --------------------------------------------------------------------------------
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
