"""glibc's single-precision logf and sincosf, vectorized with NumPy, bit for bit.

TensorFlow's Box-Muller transform (random normals) calls logf and sincosf from the C library.
glibc's (since 2.28, from Arm's optimized-routines) are not correctly rounded: on the 2**23
inputs a random normal can feed them, logf's float result differs from the correctly rounded
one for 60931 inputs and sinf/cosf for about 108000 each. NumPy's own float32 log/sin/cos differ
on millions. So to give TensorFlow's numbers we evaluate glibc's algorithms themselves: the same
table, polynomials and range reduction, in float64, rounded to float32 once at the end.

glibc evaluates them in double precision too (with fused multiply-adds where the CPU has
them, NumPy without); the final rounding to float absorbs that difference. The test suite
checks every input the normal samplers can produce against stored C library results.
Only +-0 < x < 120 is handled (sincosf) and positive normal floats (logf): the samplers' inputs.

Constants: Arm optimized-routines math/logf_data.c and math/sincosf_data.c (MIT licence),
as shipped in glibc's sysdeps/ieee754/flt-32.
"""
from __future__ import annotations

import threading
from typing import Optional

import numpy as np

__all__ = ["logf", "sincosf"]

_h = float.fromhex

# logf: x = 2**k * z, z in [0x3f330000, 2 * 0x3f330000) split in 16 intervals, each with
# 1/c near its centre and log(c); then log(x) = log1p(z/c - 1) + log(c) + k*ln2.
_LOGF_INVC = np.array([_h(s) for s in (
    "0x1.661ec79f8f3bep+0", "0x1.571ed4aaf883dp+0", "0x1.49539f0f010bp+0", "0x1.3c995b0b80385p+0",
    "0x1.30d190c8864a5p+0", "0x1.25e227b0b8eap+0", "0x1.1bb4a4a1a343fp+0", "0x1.12358f08ae5bap+0",
    "0x1.0953f419900a7p+0", "0x1p+0", "0x1.e608cfd9a47acp-1", "0x1.ca4b31f026aap-1",
    "0x1.b2036576afce6p-1", "0x1.9c2d163a1aa2dp-1", "0x1.886e6037841edp-1", "0x1.767dcf5534862p-1")])
_LOGF_LOGC = np.array([_h(s) for s in (
    "-0x1.57bf7808caadep-2", "-0x1.2bef0a7c06ddbp-2", "-0x1.01eae7f513a67p-2", "-0x1.b31d8a68224e9p-3",
    "-0x1.6574f0ac07758p-3", "-0x1.1aa2bc79c81p-3", "-0x1.a4e76ce8c0e5ep-4", "-0x1.1973c5a611cccp-4",
    "-0x1.252f438e10c1ep-5", "0x0p+0", "0x1.aa5aa5df25984p-5", "0x1.c5e53aa362eb4p-4",
    "0x1.526e57720db08p-3", "0x1.bc2860d22477p-3", "0x1.1058bc8a07ee1p-2", "0x1.4043057b6ee09p-2")])
_LN2 = _h("0x1.62e42fefa39efp-1")
_A0, _A1, _A2 = _h("-0x1.00ea348b88334p-2"), _h("0x1.5575b0be00b6ap-2"), _h("-0x1.ffffef20a4123p-2")
_OFF = np.uint32(0x3f330000)

# sincosf: x - n*pi/2 with n the nearest quadrant (one multiply-subtract, exact enough below
# 120), then odd/even polynomials for sin and cos of the remainder.
_HPI_INV = _h("0x1.45F306DC9C883p+23")  # 2/pi * 2**24: the quadrant lands in bits 24 and up
_HPI = _h("0x1.921FB54442D18p0")
_C0, _C1, _C2, _C3, _C4 = (_h(s) for s in ("0x1p0", "-0x1.ffffffd0c621cp-2", "0x1.55553e1068f19p-5",
                                          "-0x1.6c087e89a359dp-10", "0x1.99343027bf8c3p-16"))
_S1, _S2, _S3 = (_h(s) for s in ("-0x1.555545995a603p-3", "0x1.1107605230bc4p-7", "-0x1.994eb3774cf24p-13"))


class _Work(threading.local):
    """Per-thread temporaries, reused through `out=`: allocating them per call costs more
    than the arithmetic (64 KiB NumPy temporaries freed in a burst make glibc trim the heap,
    and the next call page-faults it back: measured 6 us against 1.5 us per operation)."""

    def __init__(self) -> None:
        self.size = 0

    def arrays(self, n: int) -> "_Work":
        if n > self.size:
            self.size = max(n, 8192)
            self.f64 = [np.empty(self.size, np.float64) for _ in range(7)]
            self.u32 = [np.empty(self.size, np.uint32) for _ in range(3)]
            self.f32 = [np.empty(self.size, np.float32) for _ in range(2)]
        return self


_WORK = _Work()


def logf(x: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
    """glibc's logf of positive normal float32 values (other inputs: undefined)."""
    n = x.size
    w = _WORK.arrays(n)
    ix = np.ascontiguousarray(x, np.float32).view(np.uint32)
    tmp, i, iz = (a[:n] for a in w.u32)
    z, r, y0, y, r2 = (a[:n] for a in w.f64[:5])
    np.subtract(ix, _OFF, out=tmp)
    np.right_shift(tmp, np.uint32(19), out=i)
    np.bitwise_and(i, np.uint32(15), out=i)
    np.bitwise_and(tmp, np.uint32(0xff800000), out=iz)
    np.subtract(ix, iz, out=iz)
    z[...] = iz.view(np.float32)                                   # x = 2**k * z
    k = np.right_shift(tmp.view(np.int32), np.int32(23), out=tmp.view(np.int32))  # arithmetic
    np.multiply(z, _LOGF_INVC.take(i, out=r), out=r)
    r -= 1.0                                                       # z/c - 1
    np.multiply(k, _LN2, out=y0)
    y0 += _LOGF_LOGC.take(i, out=y)
    y0 += r                                                        # log(c) + k*ln2 + r
    np.multiply(r, r, out=r2)
    np.multiply(r, _A1, out=y)  # pipelined evaluation: y = (A0*r2 + A1*r + A2) * r2 + (y0 + r)
    y += _A2
    np.multiply(r2, _A0, out=z)
    y += z
    y *= r2
    y += y0
    if out is None:
        return y.astype(np.float32)
    np.copyto(out, y, casting="same_kind")
    return out


def sincosf(y: np.ndarray, sin: Optional[np.ndarray] = None,
            cos: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
    """glibc's sincosf of float32 values in [0, 120): (sin, cos) as float32 arrays.

    glibc takes three paths: |y| < 2**-12 returns (y, 1); |y| < 0.75 the polynomials
    directly; up to 120 after the reduction by the nearest multiple of pi/2. Below 0.75 that
    multiple is 0 and the reduction exact, and below 2**-12 the polynomials round to (y, 1):
    one path gives all three (the tests check every input the samplers produce)."""
    size = y.size
    w = _WORK.arrays(size)
    x, r, x2, x3, x4, s, c = (a[:size] for a in w.f64)
    quadrant = w.u32[0][:size].view(np.int32)
    x[...] = y
    np.multiply(x, _HPI_INV, out=r)
    quadrant[...] = r                                # truncation, as glibc's (int) cast
    quadrant += 0x800000
    quadrant >>= 24
    np.multiply(quadrant, _HPI, out=r)
    np.subtract(x, r, out=r)                         # the remainder, in [-pi/4, pi/4]
    np.multiply(r, r, out=x2)
    np.multiply(x2, r, out=x3)
    np.multiply(x2, x2, out=x4)
    np.multiply(x3, _S1, out=s)
    s += r
    np.multiply(x2, _S3, out=r)
    r += _S2
    r *= np.multiply(x3, x2, out=x3)
    s += r                                           # sin: r + r^3*S1 + r^5*(S2 + r^2*S3)
    np.multiply(x2, _C1, out=c)
    c += _C0
    np.multiply(x4, _C2, out=x)
    c += x
    np.multiply(x2, _C4, out=r)
    r += _C3
    r *= np.multiply(x4, x2, out=x4)
    c += r                                           # cos: C0 + r^2*C1 + r^4*C2 + r^6*(C3 + r^2*C4)
    return _quadrant(quadrant, s, c, sin, cos)


def _quadrant(n: np.ndarray, s: np.ndarray, c: np.ndarray, sin: Optional[np.ndarray],
              cos: Optional[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Float sin and cos of r + n*pi/2 from the double ones of r. glibc negates the polynomial
    inputs and coefficients instead; rounding is symmetric, so negating the rounded results is
    the same. Swaps and sign flips work on the float bits (exact, and far cheaper than
    np.where or masked copies)."""
    sin = np.empty(n.size, np.float32) if sin is None else sin
    cos = np.empty(n.size, np.float32) if cos is None else cos
    np.copyto(sin, s, casting="same_kind")
    np.copyto(cos, c, casting="same_kind")
    sin_bits, cos_bits = sin.view(np.int32), cos.view(np.int32)
    mask, diff = (a[:n.size].view(np.int32) for a in _WORK.u32[1:3])
    np.bitwise_and(n, 1, out=mask)
    np.negative(mask, out=mask)                      # all ones in odd quadrants: swap
    np.bitwise_xor(sin_bits, cos_bits, out=diff)
    diff &= mask
    sin_bits ^= diff
    cos_bits ^= diff
    np.bitwise_and(n, 2, out=mask)
    mask <<= 30
    sin_bits ^= mask                                 # quadrants 2, 3: sin < 0
    np.add(n, 1, out=mask)
    mask &= 2
    mask <<= 30
    cos_bits ^= mask                                 # quadrants 1, 2: cos < 0
    return sin, cos
