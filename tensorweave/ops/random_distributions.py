"""TensorFlow's random distributions over Philox words (tensorflow/core/lib/random/
random_distributions.h), vectorized: the same words to the same numbers, bit for bit.

* Uniform floats put random mantissa bits under the exponent of 1 and subtract 1: float32
  takes the low 23 bits of a word, float16 the low 10, float64 20 bits of one word and all 32
  of the next.
* Uniform integers in [lo, hi): one word (int32) or two (int64, the first low) modulo hi - lo.
* Normals: Box-Muller over pairs of words, in float for float16/32 (through the C library's
  logf and sincosf, see libm_float32.py) and in double for float64 (four words per pair).
* Truncated normals: normals outside (-2, 2) are dropped; group g of outputs (4 for float, 2
  for double) draws from its own stretch of 256 (128) blocks, word after word, so no group's
  draws depend on another's.

The fixed-count samplers map block i of a kernel's reservation to outputs i*k ... i*k + k - 1
(k outputs per block); a shape not a multiple of k uses the first outputs of its last block.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from tensorweave.ops import philox
from tensorweave.ops.libm_float32 import logf, sincosf

__all__ = ["uniform", "uniform_int", "normal", "truncated_normal", "uniform_doubles"]

_U64 = np.uint64
_LO32 = _U64(0xFFFFFFFF)
_SHIFT = _U64(32)
_TWO_PI_2M23 = 2.0 * math.pi * 2.0 ** -23  # 2*pi (a double, as TF's M_PI) times the float's 2**-23
_F32_EPSILON = np.float32(1.0e-7)           # Box-Muller's floor under u1, as TF's float epsilon
_TRUNCATE = 2.0                             # truncated normals keep |x| < 2
_BLOCKS_PER_GROUP = 256                     # TF's kReservedSamplesPerOutput * group / 4
# Conversions run on at most this many blocks at a time: their float64 temporaries then stay
# at 64 KiB, in cache and off the mmap path that allocations of 128 KiB and more take (measured:
# logf on 8192 values 5.7 ns each, on 32768 values 18 ns each, mostly page faults).
_SUB_BLOCKS = 4096


# -- words to numbers ---------------------------------------------------------------------------
def _float32_bits(pairs: np.ndarray) -> np.ndarray:
    """Two words per uint64 -> float32 in [1, 2) per word (mantissa under exponent 0)."""
    np.bitwise_and(pairs, _U64(0x007FFFFF007FFFFF), out=pairs)
    np.bitwise_or(pairs, _U64(0x3F8000003F800000), out=pairs)
    return pairs


def _uniform_f32_into(out: np.ndarray, ab: np.ndarray, cd: np.ndarray) -> None:
    """Four float32 per block written straight into `out` (4 * len(ab) float32)."""
    out64 = out.view(_U64).reshape(-1, 2)
    out64[:, 0] = _float32_bits(ab)
    out64[:, 1] = _float32_bits(cd)
    np.subtract(out, np.float32(1.0), out=out)


def _uniform_f16(ab: np.ndarray, cd: np.ndarray) -> np.ndarray:
    words = philox.pairs_to_words(ab, cd)
    bits = (words & np.uint32(0x3FF)).astype(np.uint16)
    bits |= np.uint16(15 << 10)  # exponent 0: [1, 2), exact after subtracting 1
    return bits.view(np.float16) - np.float16(1.0)


def _uniform_f64_from(pairs: np.ndarray) -> np.ndarray:
    """Words (w0, w1) as w1 << 32 | w0 -> a double from w0's low 20 bits and all of w1."""
    bits = np.left_shift(pairs, _SHIFT)
    bits &= _U64(0x000FFFFF00000000)
    bits |= np.right_shift(pairs, _SHIFT)
    bits |= _U64(0x3FF0000000000000)
    return bits.view(np.float64) - 1.0


def _uniform_f64(ab: np.ndarray, cd: np.ndarray) -> np.ndarray:
    out = np.empty((ab.size, 2), np.float64)
    out[:, 0] = _uniform_f64_from(ab)
    out[:, 1] = _uniform_f64_from(cd)
    return out.reshape(-1)


def _int_sampler(np_dtype: Any, lo: int, hi: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """lo + (word(s) mod (hi - lo)): TF's UniformDistribution for int32 (1 word) / int64
    (2 words, the first low); the sum wraps as TF's unsigned arithmetic does."""
    if np.dtype(np_dtype) == np.int32:
        span, low = np.uint32((hi - lo) & 0xFFFFFFFF), np.uint32(lo & 0xFFFFFFFF)

        def ints32(ab: np.ndarray, cd: np.ndarray) -> np.ndarray:
            words = philox.pairs_to_words(ab, cd) % span
            words += low
            return words.view(np.int32)
        return ints32
    span64, low64 = _U64((hi - lo) & (2**64 - 1)), _U64(lo & (2**64 - 1))

    def ints64(ab: np.ndarray, cd: np.ndarray) -> np.ndarray:
        out = np.empty((ab.size, 2), _U64)
        np.remainder(ab, span64, out=out[:, 0])
        np.remainder(cd, span64, out=out[:, 1])
        out += low64
        return out.reshape(-1).view(np.int64)
    return ints64


# -- Box-Muller ---------------------------------------------------------------------------------
def box_muller_f32(u_words: np.ndarray, v_words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TF's BoxMullerFloat: (sin, cos)(2*pi*v) * sqrt(-2 log u) per pair of words, in float32,
    u floored at 1e-7 (2*pi*v is taken in double, as TF multiplies by the double M_PI)."""
    u1 = (u_words & np.uint32(0x7FFFFF)).astype(np.float32)
    u1 *= np.float32(2.0 ** -23)
    np.maximum(u1, _F32_EPSILON, out=u1)
    radius = logf(u1)
    radius *= np.float32(-2.0)
    np.sqrt(radius, out=radius)
    angle = (v_words & np.uint32(0x7FFFFF)).astype(np.float64)
    angle *= _TWO_PI_2M23
    sin, cos = sincosf(angle.astype(np.float32))
    sin *= radius
    cos *= radius
    return sin, cos


def box_muller_f64(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TF's BoxMullerDouble on uniform doubles u, v. Runs through Python's math module, i.e.
    the C library's log, sin and cos, which TF calls: NumPy's float64 versions differ from
    them in the last bit now and then, and a double keeps that bit."""
    u = np.maximum(u, 1.0e-7).tolist()
    angles = (v * (2.0 * math.pi)).tolist()
    log, sqrt, sin, cos = math.log, math.sqrt, math.sin, math.cos
    radius = np.array([sqrt(-2.0 * log(x)) for x in u])
    return np.array([sin(a) for a in angles]) * radius, np.array([cos(a) for a in angles]) * radius


def _pairs_f32(words: np.ndarray) -> np.ndarray:
    """Normals from consecutive word pairs, in word order (2 per pair)."""
    pairs = words.reshape(-1, 2)
    sin, cos = box_muller_f32(pairs[:, 0], pairs[:, 1])
    out = np.empty((sin.size, 2), np.float32)
    out[:, 0] = sin
    out[:, 1] = cos
    return out.reshape(-1)


def _normal_f32(ab: np.ndarray, cd: np.ndarray) -> np.ndarray:
    return _pairs_f32(philox.pairs_to_words(ab, cd))


def _normal_f64(ab: np.ndarray, cd: np.ndarray) -> np.ndarray:
    sin, cos = box_muller_f64(_uniform_f64_from(ab), _uniform_f64_from(cd))
    out = np.empty((ab.size, 2), np.float64)
    out[:, 0] = sin
    out[:, 1] = cos
    return out.reshape(-1)


# -- filling outputs ----------------------------------------------------------------------------
def _fill(key: tuple, counter: int, size: int, np_dtype: Any, per_block: int,
          convert: Callable[[np.ndarray, np.ndarray], np.ndarray], runner: Any) -> np.ndarray:
    """`size` outputs, block i of the reservation giving outputs i*per_block onwards."""
    out = np.empty(size, np_dtype)

    def chunk(first: int, stop: int) -> None:
        ab, cd = philox.philox_pairs(key, counter, first, stop)
        for sub in range(first, stop, _SUB_BLOCKS):
            end = min(stop, sub + _SUB_BLOCKS)
            lo, hi = sub * per_block, min(size, end * per_block)
            out[lo:hi] = convert(ab[sub - first:end - first], cd[sub - first:end - first])[:hi - lo]

    philox.for_each_chunk(-(-size // per_block), chunk, runner)
    return out


def _fill_uniform_f32(key: tuple, counter: int, size: int, runner: Any) -> np.ndarray:
    out = np.empty(size, np.float32)

    def chunk(first: int, stop: int) -> None:
        ab, cd = philox.philox_pairs(key, counter, first, stop)
        if 4 * stop <= size:
            _uniform_f32_into(out[4 * first:4 * stop], ab, cd)
        else:  # the last, partial block
            tail = np.empty(4 * (stop - first), np.float32)
            _uniform_f32_into(tail, ab, cd)
            out[4 * first:] = tail[:size - 4 * first]

    philox.for_each_chunk(-(-size // 4), chunk, runner)
    return out


def uniform(key: tuple, counter: int, size: int, np_dtype: Any, runner: Any = None) -> np.ndarray:
    """RandomUniform: `size` floats in [0, 1) from the blocks at `counter`."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype == np.float32:
        return _fill_uniform_f32(key, counter, size, runner)
    if np_dtype == np.float64:
        return _fill(key, counter, size, np_dtype, 2, _uniform_f64, runner)
    return _fill(key, counter, size, np_dtype, 4, _uniform_f16, runner)


def uniform_doubles(words: np.ndarray) -> np.ndarray:
    """Doubles in [0, 1) from consecutive word pairs (TF's SimplePhilox::RandDouble)."""
    pairs = words.reshape(-1, 2).astype(_U64)
    return _uniform_f64_from(pairs[:, 0] | (pairs[:, 1] << _SHIFT))


def uniform_int(key: tuple, counter: int, size: int, np_dtype: Any, lo: int, hi: int,
                runner: Any = None) -> np.ndarray:
    """RandomUniformInt: `size` integers in [lo, hi) (lo < hi)."""
    per_block = 4 if np.dtype(np_dtype) == np.int32 else 2
    return _fill(key, counter, size, np_dtype, per_block, _int_sampler(np_dtype, lo, hi), runner)


def normal(key: tuple, counter: int, size: int, np_dtype: Any, runner: Any = None) -> np.ndarray:
    """RandomStandardNormal: float16/32 four per block, float64 two per block."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype == np.float64:
        return _fill(key, counter, size, np_dtype, 2, _normal_f64, runner)
    return _fill(key, counter, size, np_dtype, 4, _normal_f32, runner)


# -- truncated normal ---------------------------------------------------------------------------
def _candidates(np_dtype: Any) -> tuple[int, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    """(outputs per group, block pairs -> (blocks, candidates per block) normals in draw order)."""
    if np.dtype(np_dtype) == np.float64:
        return 2, lambda ab, cd: _normal_f64(ab, cd).reshape(-1, 2)
    return 4, lambda ab, cd: _normal_f32(ab, cd).reshape(-1, 4)


def _finish_groups(key: tuple, counter: int, groups: np.ndarray, cand: np.ndarray,
                   candidates: Callable, stride: int, out: np.ndarray) -> None:
    """Groups whose first block gave fewer than a group's worth of normals in (-2, 2): out[i]
    for groups[i] gets, in order, the first ones of the group's block 0 (`cand`), 1, 2, ..."""
    group_size = out.shape[1]
    filled = np.zeros(groups.size, np.int64)
    pending = np.arange(groups.size)
    block = 0
    while pending.size:  # each pass looks at one more block of the groups still short
        if block:
            offsets = groups[pending] * _U64(stride) + _U64(block)
            cand = candidates(*philox.philox_pairs_at(key, counter, offsets))
        keep = np.abs(cand) < _TRUNCATE
        slot = np.cumsum(keep, axis=1) + (filled[pending] - 1)[:, None]
        keep &= slot < group_size
        rows, cols = np.nonzero(keep)
        out[pending[rows], slot[rows, cols]] = cand[rows, cols]
        filled[pending] += keep.sum(axis=1)
        pending = pending[filled[pending] < group_size]
        block += 1


def _truncated_chunk(key: tuple, counter: int, first: int, stop: int, candidates: Callable,
                     out: np.ndarray) -> None:
    """Groups first ... stop - 1 into out[first:stop]. A block gives as many normals as a
    group needs, all in (-2, 2) for 83% (float) or 91% (double) of groups: those are done,
    the others are finished together, one block at a time."""
    stride = out.shape[1] * _BLOCKS_PER_GROUP // 4
    offsets = np.arange(0, (stop - first) * stride, stride, dtype=_U64)
    ab, cd = philox.philox_pairs_at(key, (counter + first * stride) % (1 << 128), offsets)
    short, short_cand = [], []
    for sub in range(first, stop, _SUB_BLOCKS):
        end = min(stop, sub + _SUB_BLOCKS)
        cand = candidates(ab[sub - first:end - first], cd[sub - first:end - first])
        out[sub:end] = cand  # the short groups' rows are replaced below
        rows = np.flatnonzero(~(np.abs(cand) < _TRUNCATE).all(axis=1))
        short.append(rows + sub)
        short_cand.append(cand[rows])
    groups = np.concatenate(short)
    if groups.size:
        part = np.empty((groups.size, out.shape[1]), out.dtype)
        _finish_groups(key, counter, groups.astype(_U64), np.concatenate(short_cand), candidates,
                       stride, part)
        out[groups] = part


def truncated_normal(key: tuple, counter: int, size: int, np_dtype: Any, runner: Any = None) -> np.ndarray:
    """TruncatedNormal: standard normals re-drawn until inside (-2, 2), TF's way."""
    group_size, candidates = _candidates(np_dtype)
    groups = -(-size // group_size)
    out = np.empty((groups, group_size), np.float64 if group_size == 2 else np.float32)
    philox.for_each_chunk(groups, lambda first, stop: _truncated_chunk(
        key, counter, first, stop, candidates, out), runner)
    return out.reshape(-1)[:size].astype(np_dtype, copy=False)
