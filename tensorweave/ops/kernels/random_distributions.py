"""TensorFlow's random distributions over Philox words (tensorflow/core/lib/random/
random_distributions.h), vectorized: the same words to the same numbers (bit for bit, but
for the last bit of some float normals, see below).

* Uniform floats put random mantissa bits under the exponent of 1 and subtract 1: float32
  takes the low 23 bits of a word, float16 the low 10, float64 20 bits of one word and all 32
  of the next.
* Uniform integers in [lo, hi): one word (int32) or two (int64, the first low) modulo hi - lo.
* Normals: Box-Muller over pairs of words, in float for float16/32 and in double for float64
  (four words per pair). TF's float path calls the C library's logf and sincosf, which are not
  correctly rounded; here their float results are the float64 values rounded to float32, so a
  float32 normal can differ from TF's in its last bit (in about 2% of draws); every other
  sampler gives TF's bits.
* Truncated normals: normals outside (-2, 2) are dropped; group g of outputs (4 for float, 2
  for double) draws from its own stretch of 256 (128) blocks, word after word, so no group's
  draws depend on another's.

The fixed-count samplers map block i of a kernel's reservation to outputs i*k ... i*k + k - 1
(k outputs per block); a shape not a multiple of k uses the first outputs of its last block.
"""
from __future__ import annotations

import math
import sys
import threading
from typing import Any, Callable

import numpy as np

from tensorweave.ops.kernels import philox

__all__ = ["uniform", "uniform_int", "uniform_full_int", "normal", "truncated_normal", "uniform_doubles"]

_U64 = np.uint64
_SHIFT = _U64(32)
_TWO_PI_2M23 = 2.0 * math.pi * 2.0 ** -23  # 2*pi (a double, as TF's M_PI) times the float's 2**-23
_F32_EPSILON = np.float32(1.0e-7)           # Box-Muller's floor under u1, as TF's float epsilon
_TRUNCATE = 2.0                             # truncated normals keep |x| < 2
_BLOCKS_PER_GROUP = 256                     # TF's kReservedSamplesPerOutput * group / 4
# Conversions run on at most this many blocks at a time: their float64 temporaries then stay
# at 64 KiB, in cache and off the mmap path that allocations of 128 KiB and more take (measured:
# logf on 8192 values 5.7 ns each, on 32768 values 18 ns each, mostly page faults).
_SUB_BLOCKS = 4096
_LITTLE_ENDIAN = sys.byteorder == "little"


# -- words to numbers: each converter writes a sub-chunk's outputs into `dest` -------------------
class _Work(threading.local):
    """Per-thread temporaries of one sub-chunk, reused through `out=`: allocating them per
    call costs more than the arithmetic."""

    def __init__(self) -> None:
        pairs = 2 * _SUB_BLOCKS
        self.u32 = np.empty(pairs, np.uint32)
        self.u1, self.angle32, self.sin, self.cos = (np.empty(pairs, np.float32) for _ in range(4))
        self.angle = np.empty(pairs, np.float64)
        self.f64 = np.empty(pairs, np.float64)
        self.u64 = [np.empty(_SUB_BLOCKS, _U64) for _ in range(2)]
        self.cand = np.empty(4 * _SUB_BLOCKS, np.float64)


_WORK = _Work()


def _uniform_f32(ab: np.ndarray, cd: np.ndarray, dest: np.ndarray) -> None:
    """Mantissa bits under exponent 0 give [1, 2); minus 1 (exact). Two words per uint64."""
    dest64 = dest.view(_U64).reshape(-1, 2)
    for pairs, column in ((ab, 0), (cd, 1)):
        np.bitwise_and(pairs, _U64(0x007FFFFF007FFFFF), out=pairs)
        np.bitwise_or(pairs, _U64(0x3F8000003F800000), out=dest64[:, column])
    np.subtract(dest, np.float32(1.0), out=dest)


def _uniform_f16(ab: np.ndarray, cd: np.ndarray, dest: np.ndarray) -> None:
    bits = dest.view(np.uint16)
    np.bitwise_and(philox.pairs_to_words(ab, cd), np.uint32(0x3FF), out=bits, casting="unsafe")
    bits |= np.uint16(15 << 10)
    np.subtract(dest, np.float16(1.0), out=dest)


def _f64_bits(pairs: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Words (w0, w1) as w1 << 32 | w0 -> the bits of a double in [1, 2) with w0's low 20
    bits over all of w1 as mantissa."""
    low = _WORK.u64[0][:pairs.size] if pairs.size <= _SUB_BLOCKS else np.empty(pairs.size, _U64)
    np.left_shift(pairs, _SHIFT, out=out)
    out &= _U64(0x000FFFFF00000000)
    out |= np.right_shift(pairs, _SHIFT, out=low)
    out |= _U64(0x3FF0000000000000)
    return out


def _uniform_f64(ab: np.ndarray, cd: np.ndarray, dest: np.ndarray) -> None:
    dest64 = dest.view(_U64).reshape(-1, 2)
    _f64_bits(ab, dest64[:, 0])
    _f64_bits(cd, dest64[:, 1])
    np.subtract(dest, 1.0, out=dest)


def _doubles(pairs: np.ndarray) -> np.ndarray:
    """Uniform doubles in [0, 1) (a new array) from word pairs as w1 << 32 | w0."""
    return _f64_bits(pairs, np.empty(pairs.size, _U64)).view(np.float64) - 1.0


def _int_sampler(np_dtype: Any, lo: int, hi: int) -> Callable[..., None]:
    """lo + (word(s) mod (hi - lo)): TF's UniformDistribution for int32 (1 word) / int64
    (2 words, the first low); the sum wraps as TF's unsigned arithmetic does."""
    if np.dtype(np_dtype).itemsize == 4:
        span, low = np.uint32((hi - lo) & 0xFFFFFFFF), np.uint32(lo & 0xFFFFFFFF)

        def ints32(ab: np.ndarray, cd: np.ndarray, dest: np.ndarray) -> None:
            bits = dest.view(np.uint32)
            np.remainder(philox.pairs_to_words(ab, cd), span, out=bits)
            bits += low
        return ints32
    span64, low64 = _U64((hi - lo) & (2**64 - 1)), _U64(lo & (2**64 - 1))

    def ints64(ab: np.ndarray, cd: np.ndarray, dest: np.ndarray) -> None:
        bits = dest.view(_U64).reshape(-1, 2)
        np.remainder(ab, span64, out=bits[:, 0])
        np.remainder(cd, span64, out=bits[:, 1])
        np.add(dest.view(_U64), low64, out=dest.view(_U64))
    return ints64


# -- Box-Muller ---------------------------------------------------------------------------------
def box_muller_f32(u_words: np.ndarray, v_words: np.ndarray, dest: np.ndarray) -> None:
    """TF's BoxMullerFloat over word pairs into dest[(pairs, 2)]: (sin, cos)(2*pi*v) times
    sqrt(-2 log u), in float32, u floored at 1e-7 (2*pi*v in double: TF's M_PI is a double).
    At most 2 * _SUB_BLOCKS pairs."""
    n, w = u_words.size, _WORK
    bits, u1, angle, angle32 = w.u32[:n], w.u1[:n], w.angle[:n], w.angle32[:n]
    np.bitwise_and(u_words, np.uint32(0x7FFFFF), out=bits)
    u1[...] = bits
    u1 *= np.float32(2.0 ** -23)
    np.maximum(u1, _F32_EPSILON, out=u1)
    wide = w.f64[:n]
    np.log(u1, out=wide, dtype=np.float64)
    u1[...] = wide                      # logf(u), rounded to float once
    radius = u1
    radius *= np.float32(-2.0)
    np.sqrt(radius, out=radius)
    np.bitwise_and(v_words, np.uint32(0x7FFFFF), out=bits)
    angle[...] = bits
    angle *= _TWO_PI_2M23
    angle32[...] = angle
    sin, cos = w.sin[:n], w.cos[:n]
    np.sin(angle32, out=wide, dtype=np.float64)
    sin[...] = wide
    np.cos(angle32, out=wide, dtype=np.float64)
    cos[...] = wide
    np.multiply(sin, radius, out=dest[:, 0], casting="same_kind")
    np.multiply(cos, radius, out=dest[:, 1], casting="same_kind")


def box_muller_f64(u: np.ndarray, v: np.ndarray, dest: np.ndarray) -> None:
    """TF's BoxMullerDouble on uniform doubles u, v into dest[(pairs, 2)]. Runs through
    Python's math module, i.e. the C library's log, sin and cos, which TF calls: NumPy's
    float64 versions differ from them in the last bit now and then, and a double keeps it."""
    u = np.maximum(u, 1.0e-7).tolist()
    angles = (v * (2.0 * math.pi)).tolist()
    log, sqrt, sin, cos = math.log, math.sqrt, math.sin, math.cos
    radius = np.array([sqrt(-2.0 * log(x)) for x in u])
    np.multiply(np.array([sin(a) for a in angles]), radius, out=dest[:, 0])
    np.multiply(np.array([cos(a) for a in angles]), radius, out=dest[:, 1])


def _normal_f32(ab: np.ndarray, cd: np.ndarray, dest: np.ndarray) -> None:
    """Four normals per block: words (0, 1) and (2, 3) each give (sin, cos)."""
    pairs = philox.pairs_to_words(ab, cd).reshape(-1, 2)
    box_muller_f32(pairs[:, 0], pairs[:, 1], dest.reshape(-1, 2))


def _normal_f64(ab: np.ndarray, cd: np.ndarray, dest: np.ndarray) -> None:
    """Two normals per block: doubles from words (0, 1) and (2, 3) give (sin, cos)."""
    box_muller_f64(_doubles(ab), _doubles(cd), dest.reshape(-1, 2))


# -- filling outputs ----------------------------------------------------------------------------
def _fill(key: tuple, counter: int, size: int, np_dtype: Any, per_block: int,
          convert: Callable[..., None]) -> np.ndarray:
    """`size` outputs, block i of the reservation giving outputs i*per_block onwards; the
    conversions run on sub-chunks, writing into the output (a partial last block: a copy)."""
    out = np.empty(size, np_dtype)

    def chunk(first: int, stop: int) -> None:
        ab, cd = philox.philox_pairs(key, counter, first, stop)
        for sub in range(first, stop, _SUB_BLOCKS):
            end = min(stop, sub + _SUB_BLOCKS)
            lo, hi = sub * per_block, end * per_block
            pieces = ab[sub - first:end - first], cd[sub - first:end - first]
            if hi <= size:
                convert(*pieces, out[lo:hi])
            else:
                tail = np.empty(hi - lo, np_dtype)
                convert(*pieces, tail)
                out[lo:] = tail[:size - lo]

    philox.for_each_chunk(-(-size // per_block), chunk)
    return out


def uniform(key: tuple, counter: int, size: int, np_dtype: Any) -> np.ndarray:
    """RandomUniform: `size` floats in [0, 1) from the blocks at `counter`."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype == np.float64:
        return _fill(key, counter, size, np_dtype, 2, _uniform_f64)
    return _fill(key, counter, size, np_dtype, 4, _uniform_f32 if np_dtype == np.float32 else _uniform_f16)


def uniform_doubles(words: np.ndarray) -> np.ndarray:
    """Doubles in [0, 1) from consecutive word pairs (TF's SimplePhilox::RandDouble)."""
    return _doubles(np.ascontiguousarray(words).view(_U64) if _LITTLE_ENDIAN else
                    words[0::2].astype(_U64) | (words[1::2].astype(_U64) << _SHIFT))


def uniform_int(key: tuple, counter: int, size: int, np_dtype: Any, lo: int, hi: int) -> np.ndarray:
    """RandomUniformInt: `size` integers in [lo, hi) (lo < hi)."""
    per_block = 4 if np.dtype(np_dtype).itemsize == 4 else 2
    return _fill(key, counter, size, np_dtype, per_block, _int_sampler(np_dtype, lo, hi))


def _full_ints(ab: np.ndarray, cd: np.ndarray, dest: np.ndarray) -> None:
    """Words as they come: one per 32-bit integer, two (the first low) per 64-bit one."""
    if dest.dtype.itemsize == 4:
        dest.view(np.uint32)[...] = philox.pairs_to_words(ab, cd)
        return
    bits = dest.view(_U64).reshape(-1, 2)
    bits[:, 0] = ab
    bits[:, 1] = cd


def uniform_full_int(key: tuple, counter: int, size: int, np_dtype: Any) -> np.ndarray:
    """TF's UniformFullIntDistribution: integers over the whole range of the dtype."""
    return _fill(key, counter, size, np_dtype, 4 if np.dtype(np_dtype).itemsize == 4 else 2, _full_ints)


def normal(key: tuple, counter: int, size: int, np_dtype: Any) -> np.ndarray:
    """RandomStandardNormal: float16/32 four per block, float64 two per block."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype == np.float64:
        return _fill(key, counter, size, np_dtype, 2, _normal_f64)
    return _fill(key, counter, size, np_dtype, 4, _normal_f32)


# -- truncated normal ---------------------------------------------------------------------------
def _candidates(np_dtype: Any) -> tuple[int, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    """(outputs per group, block pairs -> (blocks, candidates per block) normals in draw
    order; up to _SUB_BLOCKS blocks in this thread's scratch, more in a new array)."""
    per_block, normals = (2, _normal_f64) if np.dtype(np_dtype) == np.float64 else (4, _normal_f32)
    work = np.float64 if per_block == 2 else np.float32

    def candidates(ab: np.ndarray, cd: np.ndarray) -> np.ndarray:
        if ab.size <= _SUB_BLOCKS:
            cand = _WORK.cand.view(work)[:per_block * ab.size]
            normals(ab, cd, cand)
            return cand.reshape(-1, per_block)
        cand = np.empty(per_block * ab.size, work)
        for sub in range(0, ab.size, _SUB_BLOCKS):
            end = min(ab.size, sub + _SUB_BLOCKS)
            normals(ab[sub:end], cd[sub:end], cand[per_block * sub:per_block * end])
        return cand.reshape(-1, per_block)
    return per_block, candidates


def _all_inside(cand: np.ndarray) -> np.ndarray:
    """Per row of (rows, 2 or 4) normals: all in (-2, 2)? (The row's bools read as one
    integer: a reduction along a short axis is slow in NumPy.)"""
    inside = np.less(np.abs(cand), _TRUNCATE)
    if cand.shape[1] == 4:
        return inside.view(np.uint32).reshape(-1) == np.uint32(0x01010101)
    return inside.view(np.uint16).reshape(-1) == np.uint16(0x0101)


def _candidates_at(key: tuple, counter: int, offsets: np.ndarray, candidates: Callable) -> np.ndarray:
    """Normals of blocks counter + offsets[i] (any number of them), as a new array."""
    chunk = philox.CHUNK_BLOCKS
    pieces = [candidates(*philox.philox_pairs_at(key, counter, offsets[i:i + chunk])).copy()
              for i in range(0, offsets.size, chunk)]
    return np.concatenate(pieces)


def _first_set_bits(count: int) -> np.ndarray:
    """Per byte value, the positions of its first `count` set bits (lowest first; 0-padded)."""
    table = np.zeros((256, count), np.intp)
    for byte in range(256):
        ones = [bit for bit in range(8) if byte >> bit & 1][:count]
        table[byte, :len(ones)] = ones
    return table


_FIRST_SET = {2: _first_set_bits(2), 4: _first_set_bits(4)}
_SET_BITS = np.array([bin(byte).count("1") for byte in range(256)])


def _finish_groups(key: tuple, counter: int, groups: np.ndarray, cand: np.ndarray,
                   candidates: Callable, stride: int, out: np.ndarray) -> None:
    """Groups whose first block gave fewer than a group's worth of normals in (-2, 2): out[i]
    for groups[i] gets, in order, the first ones of the group's blocks 0 (`cand`), 1, 2, ...
    Two blocks (8 floats, or 4 doubles) nearly always suffice: their kept ones are picked
    through a byte of flags and a table; the rare rest (about 1 group in 10**5) one by one."""
    group_size = out.shape[1]
    second = _candidates_at(key, counter, groups * _U64(stride) + _U64(1), candidates)
    both = np.concatenate([cand, second], axis=1)
    flags = np.packbits(np.abs(both) < _TRUNCATE, axis=1, bitorder="little")[:, 0]
    done = _SET_BITS[flags] >= group_size
    out[done] = np.take_along_axis(both[done], _FIRST_SET[group_size][flags[done]], axis=1)
    for i in np.flatnonzero(~done):
        kept = [v for v in both[i] if abs(v) < _TRUNCATE]
        block = 2
        while len(kept) < group_size:
            offset = groups[i:i + 1] * _U64(stride) + _U64(block)
            kept += [v for v in candidates(*philox.philox_pairs_at(key, counter, offset))[0]
                     if abs(v) < _TRUNCATE]
            block += 1
        out[i] = kept[:group_size]


def _first_blocks(key: tuple, counter: int, first: int, stop: int, candidates: Callable,
                  out: np.ndarray, short: list) -> None:
    """Groups first ... stop - 1 from their first block into out[first:stop]. It gives as many
    normals as a group needs, all in (-2, 2) for 83% (float) or 91% (double) of groups; the
    others go to `short` as (group numbers, their block-0 normals)."""
    stride = out.shape[1] * _BLOCKS_PER_GROUP // 4
    offsets = np.arange(0, (stop - first) * stride, stride, dtype=_U64)
    ab, cd = philox.philox_pairs_at(key, (counter + first * stride) % (1 << 128), offsets)
    for sub in range(first, stop, _SUB_BLOCKS):
        end = min(stop, sub + _SUB_BLOCKS)
        cand = candidates(ab[sub - first:end - first], cd[sub - first:end - first])
        out[sub:end] = cand  # the short groups' rows are replaced later
        rows = np.flatnonzero(~_all_inside(cand))
        short.append((rows + sub, cand[rows]))


def truncated_normal(key: tuple, counter: int, size: int, np_dtype: Any) -> np.ndarray:
    """TruncatedNormal: standard normals re-drawn until inside (-2, 2), TF's way. The groups
    left short by their first block are finished all together (fewer, larger NumPy calls)."""
    group_size, candidates = _candidates(np_dtype)
    groups = -(-size // group_size)
    out = np.empty((groups, group_size), np.float64 if group_size == 2 else np.float32)
    short: list = []
    philox.for_each_chunk(groups, lambda first, stop: _first_blocks(
        key, counter, first, stop, candidates, out, short))
    rows = np.concatenate([r for r, _ in short]) if short else np.zeros(0, np.intp)
    if rows.size:
        part = np.empty((rows.size, group_size), out.dtype)
        _finish_groups(key, counter, rows.astype(_U64), np.concatenate([c for _, c in short]), candidates,
                       group_size * _BLOCKS_PER_GROUP // 4, part)
        out[rows] = part
    return out.reshape(-1)[:size].astype(np_dtype, copy=False)
