"""Philox4x32-10, TensorFlow's counter-based random generator, vectorized with NumPy.

Philox (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) maps a 128-bit
counter and a 64-bit key to 128 random bits in ten rounds of two 32x32->64 multiplications
and XORs, the key raised by Weyl constants between rounds. TensorFlow's CPU random kernels draw
from it as follows, and so do ours, so that a seeded program gets TensorFlow's numbers:

* a kernel with attrs (seed, seed2) starts with key = seed (low word first) and counter
  [0, 0, low(seed2), high(seed2)], i.e. the 128-bit integer seed2 << 64;
* each Philox call returns 4 uint32 words and advances the counter by one ("block");
* every run of a kernel reserves a stretch of blocks (TF's GuardedPhiloxRandom: it hands out
  the current counter and skips it forward), so successive runs give new numbers.

Block i of a stretch starting at counter c is Philox(key, c + i): any range of blocks can be
computed on its own, which is what makes the numbers independent of how the work is split.

Speed: one block costs about 90 NumPy operations on uint64 arrays (10 rounds of 2 multiplies,
2 shifts, 2 masks and 4 XORs, the first two rounds cheaper because three counter words are the
same for all blocks), about 20 ns per block on one core in cache-sized chunks (16384 blocks:
smaller chunks pay NumPy's call overhead, larger ones fall out of L2). TensorFlow's C++ does a
block in about 2 ns; NumPy's floor is about 0.2 ns per element and operation.
"""
from __future__ import annotations

import functools
import secrets
import sys
import threading
from typing import Any, Callable, Optional

import numpy as np

__all__ = ["PhiloxGenerator", "philox_pairs", "philox_pairs_at", "pairs_to_words", "philox_words",
           "for_each_chunk", "CHUNK_BLOCKS"]

_M0, _M1 = 0xD2511F53, 0xCD9E8D57          # round multipliers (Salmon et al., Philox4x32)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85          # key increments (golden ratio, sqrt(3) - 1)
_MASK32 = 0xFFFFFFFF
_MASK64 = (1 << 64) - 1
_MASK128 = (1 << 128) - 1
_U64 = np.uint64
_LO = _U64(_MASK32)
_SHIFT = _U64(32)
_M0_U64, _M1_U64 = _U64(_M0), _U64(_M1)
CHUNK_BLOCKS = 16384
_LITTLE_ENDIAN = sys.byteorder == "little"


@functools.lru_cache(maxsize=256)
def _round_keys(key0: int, key1: int) -> tuple[tuple[int, int], ...]:
    """The key of each of the ten rounds (raised by the Weyl constants after each round)."""
    return tuple(((key0 + r * _W0) & _MASK32, (key1 + r * _W1) & _MASK32) for r in range(10))


class _Scratch(threading.local):
    """Per-thread work arrays of one chunk: allocating them per call costs more than the math
    (arrays of 128 KiB and more come from fresh mmap'd, page-faulting memory)."""

    def __init__(self) -> None:
        self.bufs = [np.empty(CHUNK_BLOCKS, _U64) for _ in range(7)]
        self.words = np.empty((CHUNK_BLOCKS, 2), _U64)


_SCRATCH = _Scratch()
_ARANGE = np.arange(CHUNK_BLOCKS, dtype=_U64)


def _first_rounds(keys: tuple, lo: Any, base: int, hi: int, bufs: list) -> tuple:
    """Rounds 0 and 1, where counter words 2 and 3 (and often word 1) are the same for every
    block, so their products are Python scalars. `lo` is the low 64 counter bits per block
    (uint64), or a (uint64) tuple (offsets,) of blocks base + offsets[i] that all share word 1
    (None: offsets 0, 1, 2, ...). Returns the state after round 1: (c0, c1, c2, c3) arrays,
    except c3 a scalar when word 1 was one."""
    a_buf, c_buf, d_buf, e, f = bufs[:5]
    c2, c3 = hi & _MASK32, hi >> 32
    k0, k1 = keys[0]
    p1 = _M1 * c2                                        # round 0: a scalar product
    shared_c1 = lo is None or isinstance(lo, tuple)
    if shared_c1:                                        # c0 = low(base) + offset, no carry out
        np.add(_ARANGE[:e.size] if lo is None else lo[0], _U64(base & _MASK32), out=e)
        a = ((p1 >> 32) ^ (base >> 32) ^ k0) & _MASK32   # new c0: a scalar
    else:
        a = np.right_shift(lo, _SHIFT, out=a_buf)
        np.bitwise_xor(a, _U64(((p1 >> 32) ^ k0) & _MASK32), out=a)
        np.bitwise_and(lo, _LO, out=e)
    np.multiply(e, _M0_U64, out=e)
    b = p1 & _MASK32                                     # new c1: a scalar
    c = np.right_shift(e, _SHIFT, out=c_buf)
    np.bitwise_xor(c, _U64(c3 ^ k1), out=c)
    np.bitwise_and(e, _LO, out=e)                        # new c3 = lo(p0)
    k0, k1 = keys[1]                                     # round 1
    np.multiply(c, _M1_U64, out=f)
    if shared_c1:
        p0 = _M0 * a                                     # scalar c0: a scalar product
        np.right_shift(f, _SHIFT, out=c)
        np.bitwise_xor(c, _U64((b ^ k0) & _MASK32), out=c)           # c holds the new c0
        np.bitwise_xor(e, _U64(((p0 >> 32) ^ k1) & _MASK32), out=e)  # e holds the new c2
        np.bitwise_and(f, _LO, out=f)
        return c, f, e, p0 & _MASK32
    p0 = np.multiply(a, _M0_U64, out=d_buf)
    np.right_shift(f, _SHIFT, out=a)
    np.bitwise_xor(a, _U64(b ^ k0), out=a)
    np.bitwise_and(f, _LO, out=f)
    np.right_shift(p0, _SHIFT, out=c)
    np.bitwise_xor(c, e, out=c)
    np.bitwise_xor(c, _U64(k1), out=c)
    np.bitwise_and(p0, _LO, out=p0)
    return a, f, c, p0


def _free(bufs: list, *used: Any) -> list:
    return [b for b in bufs if not any(b is u for u in used)]


def _philox_pairs(keys: tuple, lo: Any, base: int, hi: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Philox of n counters (hi << 64) + low[i], low[i] = lo[i] or base + i (no carry out of the
    low 64 bits), as two uint64 arrays holding words (1 << 32 | 0) and (3 << 32 | 2) of each
    block: a little-endian uint32 view of the two interleaved is the word stream. The arrays
    are this thread's scratch, valid until its next call."""
    bufs = [b[:n] for b in _SCRATCH.bufs[:6]]
    a, b, c, d = _first_rounds(keys, lo, base, hi, bufs)
    first = 2
    if np.ndim(d) == 0:  # round 2 with c3 a scalar
        e, f, spare = _free(bufs, a, b, c)
        k0, k1 = keys[2]
        np.multiply(a, _M0_U64, out=e)
        np.multiply(c, _M1_U64, out=f)
        np.right_shift(f, _SHIFT, out=a)
        np.bitwise_xor(a, b, out=a)
        np.bitwise_xor(a, _U64(k0), out=a)
        np.bitwise_and(f, _LO, out=b)
        np.right_shift(e, _SHIFT, out=c)
        np.bitwise_xor(c, _U64(d ^ k1), out=c)
        np.bitwise_and(e, _LO, out=e)
        d, first = e, 3
    e, f = _free(bufs, a, b, c, d)[:2]
    for r in range(first, 10):
        k0, k1 = keys[r]
        np.multiply(a, _M0_U64, out=e)
        np.multiply(c, _M1_U64, out=f)
        np.right_shift(f, _SHIFT, out=a)
        np.bitwise_xor(a, b, out=a)
        np.bitwise_xor(a, _U64(k0), out=a)
        np.right_shift(e, _SHIFT, out=c)
        np.bitwise_xor(c, d, out=c)
        np.bitwise_xor(c, _U64(k1), out=c)
        if r < 9:
            np.bitwise_and(f, _LO, out=b)
            np.bitwise_and(e, _LO, out=d)
    # Last round: word 1 is lo(f) and word 3 lo(e); shifting them up drops the high halves.
    np.left_shift(f, _SHIFT, out=f)
    np.bitwise_or(f, a, out=f)
    np.left_shift(e, _SHIFT, out=e)
    np.bitwise_or(e, c, out=e)
    return f, e


def philox_pairs(key: tuple[int, int], counter: int, first: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """Blocks counter + first ... counter + stop - 1 (at most CHUNK_BLOCKS of them) as the two
    pair arrays of `_philox_pairs` (this thread's scratch, valid until its next call)."""
    n = stop - first
    counter = (counter + first) & _MASK128
    hi, base = counter >> 64, counter & _MASK64
    keys = _round_keys(*key)
    if (base & _MASK32) + n <= 1 << 32:  # word 1 and up the same for all: the fast rounds
        return _philox_pairs(keys, None, base, hi, n)
    lo = _SCRATCH.bufs[6][:n]
    np.add(_ARANGE[:n], _U64(base), out=lo)  # wraps modulo 2**64, as the counter does
    wrap = (1 << 64) - base
    if wrap >= n:
        return _philox_pairs(keys, lo, 0, hi, n)
    ab, cd = (np.concatenate(parts) for parts in zip(  # past the wrap, the high half is one more
        [x.copy() for x in _philox_pairs(keys, lo[:wrap], 0, hi, wrap)],
        _philox_pairs(keys, lo[wrap:], 0, (hi + 1) & _MASK64, n - wrap)))
    return ab, cd


def philox_pairs_at(key: tuple[int, int], counter: int, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Blocks counter + offsets[i] (a non-decreasing uint64 array, at most CHUNK_BLOCKS long)
    as pair arrays (this thread's scratch, valid until its next call)."""
    n = offsets.size
    counter &= _MASK128
    hi, base = counter >> 64, counter & _MASK64
    keys = _round_keys(*key)
    if n == 0 or (base & _MASK32) + int(offsets[-1]) < 1 << 32:  # all share word 1
        return _philox_pairs(keys, (offsets,), base, hi, n)
    lo = _SCRATCH.bufs[6][:n]
    np.add(offsets, _U64(base), out=lo)  # wraps modulo 2**64, as the counter does
    wrapped = np.less(lo, _U64(base)) if base else None
    if wrapped is None or not wrapped.any():
        return _philox_pairs(keys, lo, 0, hi, n)
    out = [np.empty(n, _U64), np.empty(n, _U64)]  # past a wrap the high half is one more
    for mask, high in ((~wrapped, hi), (wrapped, (hi + 1) & _MASK64)):
        part = lo[mask]
        for dst, src in zip(out, _philox_pairs(keys, part, 0, high, part.size)):
            dst[mask] = src
    return out[0], out[1]


def pairs_to_words(ab: np.ndarray, cd: np.ndarray) -> np.ndarray:
    """The flat uint32 word stream of a chunk's pairs (this thread's scratch)."""
    out = _SCRATCH.words[:ab.size]
    out[:, 0] = ab
    out[:, 1] = cd
    words = out.view(np.uint32).reshape(-1)
    if not _LITTLE_ENDIAN:  # the uint32 halves of a uint64 come high first
        words = words.reshape(-1, 2)[:, ::-1].reshape(-1)
    return words


def philox_words(key: tuple[int, int], counter: int, blocks: int) -> np.ndarray:
    """The words of `blocks` consecutive blocks from `counter`: a new flat uint32 array."""
    out = np.empty(4 * blocks, np.uint32)

    def chunk(first: int, stop: int) -> None:
        out[4 * first:4 * stop] = pairs_to_words(*philox_pairs(key, counter, first, stop))

    for_each_chunk(blocks, chunk)
    return out


def for_each_chunk(blocks: int, fn: Callable[[int, int], None], chunk: int = CHUNK_BLOCKS) -> None:
    """Calls fn(first, stop) over [0, blocks) in cache-sized chunks. One thread: splitting the
    chunks over two threads measured no faster on the 2-core machine (each NumPy call on a
    chunk is a few microseconds, and the threads then mostly wait for the GIL)."""
    for first in range(0, blocks, chunk):
        fn(first, min(blocks, first + chunk))


class PhiloxGenerator:
    """One stateful kernel's stream, as TF's GuardedPhiloxRandom: key and counter from the
    (seed, seed2) attrs, fresh random ones when both are 0; `reserve(n)` hands out the counter
    of n blocks and skips past them, under a lock (concurrent steps share the kernel)."""

    __slots__ = ("key", "_counter", "_lock")

    def __init__(self, seed: int, seed2: int, counter: Optional[int] = None,
                 key: Optional[tuple[int, int]] = None) -> None:
        if key is not None and counter is not None:  # a stateless op's (key, counter)
            self.key, self._counter = key, counter & _MASK128
        else:
            if seed == 0 and seed2 == 0:
                seed, seed2 = secrets.randbits(64), secrets.randbits(64)
            seed, seed2 = seed & _MASK64, seed2 & _MASK64  # int64 attrs, read as uint64
            self.key = (seed & _MASK32, seed >> 32)
            self._counter = seed2 << 64
        self._lock = threading.Lock()

    def reserve(self, blocks: int) -> int:
        """The counter of the next `blocks` blocks; later calls start after them."""
        with self._lock:
            counter = self._counter
            self._counter = (counter + blocks) & _MASK128
        return counter

    def reserve_outputs(self, outputs: int, multiplier: int = 256) -> int:
        """TF's ReserveRandomOutputs: room for `multiplier` blocks per output, enough for any
        rejection sampler, so the next run never overlaps this one."""
        return self.reserve(outputs * multiplier)

    def reserve_words(self, words: int) -> int:
        """TF's ReserveSamples32: blocks for `words` single words."""
        return self.reserve((words + 3) // 4)


class SingleSampleStream:
    """TF's SingleSampleAdapter over PhiloxRandom(seed, seed2): one uint32 word at a time, in
    block order, as RandomShuffleQueue draws the index of each element it hands out
    (`word % size`). Fresh random seeds when both are 0, as TF's. Words are computed a few
    blocks ahead; the caller serialises the draws (the queue's lock)."""

    __slots__ = ("_generator", "_words", "_next")

    _BLOCKS = 64

    def __init__(self, seed: int, seed2: int) -> None:
        self._generator = PhiloxGenerator(seed, seed2)
        self._words: list[int] = []
        self._next = 0

    def next_word(self) -> int:
        if self._next == len(self._words):
            counter = self._generator.reserve(self._BLOCKS)
            self._words = philox_words(self._generator.key, counter, self._BLOCKS).tolist()
            self._next = 0
        word = self._words[self._next]
        self._next += 1
        return word

    def randrange(self, n: int) -> int:
        """An index below n the way TF picks one: the next word modulo n (not exactly uniform,
        as in TF)."""
        return self.next_word() % n
