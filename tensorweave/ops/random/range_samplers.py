"""The other candidate samplers of TF1's candidate_sampling_ops (the log-uniform one and
ComputeAccidentalHits are in candidate_sampling.py): UniformCandidateSampler,
FixedUnigramCandidateSampler (its `unigrams` attr; no vocabulary file) and AllCandidateSampler,
with their wrappers.

Each draws `num_sampled` classes in [0, range_max) (all distinct with `unique`) and returns TF's
expected counts: p * num_sampled without `unique`, else 1 - (1 - p) ** num_tries, with num_tries
the draws it took (TF's RangeSampler, in float32). The uniform sampler draws TF's own numbers:
each run reserves 2048 * num_sampled words of the kernel's Philox stream (keyed by seed, seed2)
and each draw is Rand64 (two words, the first the low half) % range_max, without TF's rejection
of the lowest (2**64 - 1) % range_max + 1 values (a chance of range_max / 2**64). The
fixed-unigram sampler draws from a NumPy generator keyed by the same seeds (TF uses an alias
table): its distribution and expected counts are TF's, its sequence is not.
"""
from __future__ import annotations

import secrets
import threading
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import random_seed
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.framework import dtypes as _dtypes
from tensorweave.ops._util import format_dims, invalid
from tensorweave.ops.kernels.philox import PhiloxGenerator, philox_words

__all__ = ["uniform_candidate_sampler", "fixed_unigram_candidate_sampler", "all_candidate_sampler"]


def _sampler_shape(op: Operation) -> list[TensorShape]:
    true = op.inputs[0].shape.with_rank(2)
    num_true, num_sampled = op._get_attr("num_true"), op._get_attr("num_sampled")
    true.dims[1].merge_with(num_true)
    return [TensorShape([num_sampled]), TensorShape([true.dims[0], num_true]), TensorShape([num_sampled])]


_COMMON = ["num_true: int >= 1", "num_sampled: int >= 1", "unique: bool", "range_max: int >= 1",
           "seed: int = 0", "seed2: int = 0"]
_OUTPUTS = ["sampled_candidates: int64", "true_expected_count: float", "sampled_expected_count: float"]
UniformCandidateSampler = define_op("UniformCandidateSampler", inputs=["true_classes: int64"], outputs=_OUTPUTS,
                                    attrs=_COMMON, shape_fn=_sampler_shape, is_stateful=True)
FixedUnigramCandidateSampler = define_op(
    "FixedUnigramCandidateSampler", inputs=["true_classes: int64"], outputs=_OUTPUTS,
    attrs=_COMMON + ["vocab_file: string = ''", "distortion: float = 1.0", "num_reserved_ids: int = 0",
                     "num_shards: int >= 1 = 1", "shard: int >= 0 = 0", "unigrams: list(float) = []"],
    shape_fn=_sampler_shape, is_stateful=True)
AllCandidateSampler = define_op(
    "AllCandidateSampler", inputs=["true_classes: int64"], outputs=_OUTPUTS,
    attrs=["num_true: int >= 1", "num_sampled: int >= 1", "unique: bool", "seed: int = 0", "seed2: int = 0"],
    shape_fn=_sampler_shape, is_stateful=True)
for _op in (UniformCandidateSampler, FixedUnigramCandidateSampler, AllCandidateSampler):
    _op.not_differentiable()


class _Stream:
    """A kernel's random stream: keyed by (seed, seed2), or fresh when both are 0; a lock
    because concurrent steps share the kernel."""

    def __init__(self, seed: int, seed2: int) -> None:
        if seed == 0 and seed2 == 0:
            seed, seed2 = secrets.randbits(63), secrets.randbits(63)
        self.rng = np.random.Generator(np.random.PCG64([seed & (2**63 - 1), seed2 & (2**63 - 1)]))
        self.lock = threading.Lock()


def _expected(p: np.ndarray, num_sampled: int, num_tries: int) -> np.ndarray:
    """TF's ExpectedCountHelper, in float32 as TF computes it."""
    p = p.astype(np.float32)
    if num_tries == num_sampled:  # always so without `unique`
        return p * np.float32(num_sampled)
    return -np.expm1(np.float32(num_tries) * np.log1p(-p))


def _unique_prefix(draws: np.ndarray, num: int) -> tuple[Optional[np.ndarray], int]:
    """The first `num` distinct draws in order and how many draws that took (None if fewer)."""
    _, first = np.unique(draws, return_index=True)
    if first.size < num:
        return None, 0
    positions = np.sort(first)[:num]
    return draws[positions], int(positions[-1]) + 1


class _PhiloxDraws:
    """TF's draws for the uniform sampler from the kernel's Philox stream."""

    def __init__(self, seed: int, seed2: int, range_max: int) -> None:
        self.gen = PhiloxGenerator(seed, seed2)
        self.range_max = range_max

    def values(self, words: np.ndarray) -> np.ndarray:
        low, high = words[0::2].astype(np.uint64), words[1::2].astype(np.uint64)
        return ((high << np.uint64(32)) | low) % np.uint64(self.range_max)  # Uniform64: Rand64() % range

    def draw(self, num: int, unique: bool) -> tuple[np.ndarray, int]:
        counter = self.gen.reserve_words(2048 * num)
        draws = 2 * num if unique else num
        while True:
            blocks = (2 * draws + 3) // 4
            values = self.values(philox_words(self.gen.key, counter, blocks)[:2 * draws]).astype(np.int64)
            if not unique:
                return values, num
            picked, tries = _unique_prefix(values, num)
            if picked is not None:
                return picked, tries
            draws *= 2


def _draw(rng: np.random.Generator, probs: np.ndarray, num: int, unique: bool) -> tuple[np.ndarray, int]:
    """`num` classes drawn by `probs` (distinct with `unique`) and the number of draws made."""
    if not unique:
        return rng.choice(probs.size, size=num, p=probs).astype(np.int64), num
    picked: list[int] = []
    seen: set[int] = set()
    tries = 0
    while len(picked) < num:
        batch = rng.choice(probs.size, size=max(2 * (num - len(picked)), 16), p=probs)
        for value in batch.tolist():
            tries += 1
            if value not in seen:
                seen.add(value)
                picked.append(value)
                if len(picked) == num:
                    break
    return np.array(picked, np.int64), tries


def _sampler_kernel(probabilities: Callable[[KernelContext], np.ndarray], philox: bool = False) -> Callable:
    def build(ctx: KernelContext) -> Callable:
        num_true, num_sampled, unique = ctx.attr("num_true"), ctx.attr("num_sampled"), ctx.attr("unique")
        range_max = ctx.attr("range_max")
        if unique and num_sampled > range_max:
            raise invalid("Sampler's range is too small.")
        probs = probabilities(ctx)
        stream = _Stream(ctx.attr("seed"), ctx.attr("seed2"))
        tf_draws = _PhiloxDraws(ctx.attr("seed"), ctx.attr("seed2"), range_max) if philox else None

        def compute(true_classes: Any) -> Any:
            if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
                raise invalid(f"true_classes must be a matrix with num_true={num_true} columns, got shape "
                              f"{format_dims(true_classes.shape)}")
            bad = np.flatnonzero((true_classes < 0) | (true_classes >= range_max))
            if bad.size:
                raise invalid(f"`true_candidate` out of range [0, {range_max}), received "
                              f"{int(true_classes.reshape(-1)[bad[0]])}")
            if tf_draws is not None:
                sampled, tries = tf_draws.draw(num_sampled, unique)
            else:
                with stream.lock:
                    sampled, tries = _draw(stream.rng, probs, num_sampled, unique)
            p_true = probs[true_classes]
            return sampled, _expected(p_true, num_sampled, tries), _expected(probs[sampled], num_sampled, tries)
        return compute
    return build


def _uniform_probs(ctx: KernelContext) -> np.ndarray:
    n = ctx.attr("range_max")
    return np.full(n, np.float32(1.0 / n))


def _unigram_probs(ctx: KernelContext) -> np.ndarray:
    n, unigrams = ctx.attr("range_max"), list(ctx.attr("unigrams"))
    if ctx.attr("vocab_file"):
        raise invalid("FixedUnigramCandidateSampler: vocab_file is not supported here; pass unigrams")
    reserved = ctx.attr("num_reserved_ids")
    weights = np.array([0.0] * reserved + unigrams, np.float64) ** ctx.attr("distortion")
    if weights.size != n:
        raise invalid(f"Range max ({n}) does not equal the number of weights ({weights.size})")
    return weights / weights.sum()


UniformCandidateSampler.kernel()(_sampler_kernel(_uniform_probs, philox=True))
FixedUnigramCandidateSampler.kernel()(_sampler_kernel(_unigram_probs))


def _sample(op: Any, true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int,
            seed: Optional[int], name: Optional[str], **extra: Any) -> Any:
    seed1, seed2 = random_seed.get_seed(seed)
    true_classes = convert_to_tensor(true_classes, dtype=_dtypes.int64, name="true_classes")
    return tuple(apply_op(op, name=name, true_classes=true_classes, num_true=num_true, num_sampled=num_sampled,
                          unique=unique, range_max=range_max, seed=seed1, seed2=seed2, **extra))


def uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int,
                              seed: Optional[int] = None, name: Optional[str] = None) -> Any:
    """(sampled_candidates, true_expected_count, sampled_expected_count), classes drawn
    uniformly from [0, range_max)."""
    return _sample(UniformCandidateSampler, true_classes, num_true, num_sampled, unique, range_max, seed, name)


def fixed_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                                    range_max: int, vocab_file: str = "", distortion: float = 1.0,
                                    num_reserved_ids: int = 0, num_shards: int = 1, shard: int = 0,
                                    unigrams: Any = (), seed: Optional[int] = None,
                                    name: Optional[str] = None) -> Any:
    """Classes drawn by the given `unigrams` weights raised to `distortion`."""
    return _sample(FixedUnigramCandidateSampler, true_classes, num_true, num_sampled, unique, range_max, seed,
                   name, vocab_file=vocab_file, distortion=distortion, num_reserved_ids=num_reserved_ids,
                   num_shards=num_shards, shard=shard, unigrams=list(unigrams))


@AllCandidateSampler.kernel()
def _all_sampler_kernel(ctx: KernelContext) -> Callable:
    num_true, num_sampled = ctx.attr("num_true"), ctx.attr("num_sampled")

    def compute(true_classes: Any) -> Any:
        if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
            raise invalid(f"true_classes must be a matrix with num_true={num_true} columns, got shape "
                          f"{format_dims(true_classes.shape)}")
        # every class in [0, num_sampled), each certain to be drawn
        return (np.arange(num_sampled, dtype=np.int64), np.ones(true_classes.shape, np.float32),
                np.ones(num_sampled, np.float32))
    return compute


def all_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                          seed: Optional[int] = None, name: Optional[str] = None) -> Any:
    """Every class in [0, num_sampled) as the sample, with expected counts 1 (for testing a
    sampled loss against the full one)."""
    seed1, seed2 = random_seed.get_seed(seed)
    true_classes = convert_to_tensor(true_classes, dtype=_dtypes.int64, name="true_classes")
    return tuple(apply_op(AllCandidateSampler, name=name, true_classes=true_classes, num_true=num_true,
                          num_sampled=num_sampled, unique=unique, seed=seed1, seed2=seed2))
