"""tanh and the logistic function rounded as TensorFlow's CPU kernels round them (issue 11).

TF's Tanh and Sigmoid kernels evaluate Eigen's approximations, not the C library's functions,
and run with denormals flushed to zero, so NumPy's np.tanh and 1 / (1 + exp(-x)) differ from TF
by a few ulp (and TF gives exactly +/-1 where np.tanh gives 0.99999994). These functions repeat
Eigen's evaluation step for step in the same precision (each multiply and add rounded on its
own: TF's x86 builds have no fused multiply-add in these kernels), which reproduces TF's bits:

- tanh, float32 and float64: an odd/even rational function of x, x clamped to where it reaches
  exactly 1;
- logistic, float32: exp(x/2) by a range reduction and a degree-5 polynomial, squared, then
  e / (1 + e), zero below -104. Eigen evaluates packets of 8 floats this way and the elements
  past the last full packet with the C library's expf: `logistic_float32` does the same with
  `packet=8`.
Every function writes into `out` (which may be `x`) and returns it.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.ops.kernels import buffer_forwarding
from tensorweave.ops.kernels.buffer_forwarding import forwardable
from tensorweave.ops.kernels.intra_op import ElementwiseSplitter

__all__ = ["tanh_float32", "tanh_float64", "logistic_float32", "flush_denormals", "logistic_float32_kernel"]

_F32 = np.float32
# NumPy's clip ufunc itself: one NaN-propagating pass, without np.clip's Python-level wrapper
# (on the small arrays of an RNN step: about 3 us against 8 for np.clip, 10 for minimum+maximum).
_clip: Any = getattr(getattr(getattr(np, "_core", None), "umath", None), "clip", None) or np.clip
# Eigen's float tanh coefficients (numerator odd, denominator even, highest degree first) and the
# smallest |x| at which the approximation is exactly 1 without FMA.
_TANH32_CLAMP = _F32(7.90738964080810547)
_TANH32_NUM = tuple(_F32(c) for c in (1.394553628e-8, 2.102733560e-5, 3.520756727e-3, 1.340216100e-1))
_TANH32_DEN = tuple(_F32(c) for c in (8.015776984e-7, 3.326951409e-4, 2.597254514e-2, 4.673548340e-1, 1.0))
_TANH64_CLAMP = 17.714196154005176
_TANH64_NUM = (2.6158007860482230e-23, 7.6534862268749319e-19, 3.1309488231386680e-15, 4.2303918148209176e-12,
               2.4618379131293676e-09, 6.8644367682497074e-07, 9.3839087674268880e-05, 5.9809711724441161e-03,
               1.5184719640284322e-01)
_TANH64_DEN = (6.463747022670968018e-21, 5.782506856739003571e-17, 1.293019623712687916e-13,
               1.123643448069621992e-10, 4.492975677839633985e-08, 8.785185266237658698e-06,
               8.295161192716231542e-04, 3.437448108450402717e-02, 4.851805297361760360e-01, 1.0)

# The logistic function's exp(x/2): Cephes' split of ln 2 and a degree-5 minimax polynomial.
_LOG2E, _HALF, _ONE = _F32(1.44269504088896341), _F32(0.5), _F32(1.0)
_LN2_HI, _LN2_LO = _F32(-0.693359375), _F32(2.12194440e-4)
_P2, _P3 = _F32(0.49999141693115234375), _F32(0.16666877269744873046875)
_P4, _P5 = _F32(4.1898667812347412109375e-2), _F32(8.33471305668354034423828125e-3)
_EXP_HI, _CLAMP_LO = _F32(16.6355324), _F32(-110.0)

_TINY32 = _F32(np.finfo(np.float32).tiny)
_TINY = {np.dtype(np.float32): _TINY32, np.dtype(np.float64): np.finfo(np.float64).tiny}


def flush_denormals(y: Any) -> Any:
    """Denormal results become signed zeros, as under TF's flush-to-zero mode."""
    magnitude = np.abs(y)
    if not magnitude.min(initial=np.inf) >= _TINY[y.dtype]:  # a cheap pass when none is (NaN: look)
        np.multiply(y, 0, out=y, where=magnitude < _TINY[y.dtype])
    return y


def _tanh(x: Any, out: Any, clamp: Any, num: tuple, den: tuple) -> Any:
    """Eigen's tanh: x + x^3 * p(x^2), over q(x^2), each product and sum rounded on its own
    (Horner's rule written out: on small arrays the NumPy calls are the cost)."""
    flat = x.reshape(-1)
    if not flat.size:
        return out
    xc = _clip(flat, -clamp, clamp)  # NaN stays NaN
    x2 = xc * xc
    # |x| below ~1e-19 (x^2 underflows) gives x itself, denormal for a denormal x: flush then
    tiny_input = not np.minimum.reduce(x2) >= _TINY[x2.dtype]
    p = x2 * num[0]
    for c in num[1:-1]:
        p += c
        p *= x2
    p += num[-1]
    q = x2 * den[0]
    for c in den[1:-1]:
        q += c
        q *= x2
    q += den[-1]
    x2 *= xc  # x^3
    p *= x2
    p += xc
    np.divide(p, q, out=out.reshape(-1))
    return flush_denormals(out) if tiny_input else out


def tanh_float32(x: Any, out: Any) -> Any:
    """`out` (C-contiguous, x's shape) = TF's float32 tanh of x."""
    return _tanh(np.asarray(x), out, _TANH32_CLAMP, _TANH32_NUM, _TANH32_DEN)


def tanh_float64(x: Any, out: Any) -> Any:
    """`out` (C-contiguous, x's shape) = TF's float64 tanh of x."""
    return _tanh(np.asarray(x), out, _TANH64_CLAMP, _TANH64_NUM, _TANH64_DEN)


def _logistic_packets(x: Any, out: Any) -> Any:
    """Eigen's packet logistic for float: exp(x/2) squared, then e / (1 + e), 0 below -104."""
    x = np.asarray(x).reshape(-1)
    if not x.size:
        return out
    out = out.reshape(-1)
    # Clamping below at -110 instead of Eigen's select of 0 below -104 gives the same 0: exp(x)
    # is denormal from -87.3 on and is flushed to zero (and -inf stays finite on the way).
    h = _clip(x, _CLAMP_LO, _EXP_HI)
    h *= _HALF
    m = h * _LOG2E
    m += _HALF
    np.floor(m, out=m)
    r = m * _LN2_HI
    r += h
    np.multiply(m, _LN2_LO, out=h)
    r += h
    r2 = r * r
    even = r2 * _P4
    even += _P2
    odd = r2 * _P5
    odd += _P3
    odd *= r
    odd += even  # r * odd + even
    odd *= r2
    r += _ONE
    odd += r  # r2 * p + (r + 1) = exp(r)
    # times 2^m through the exponent bits, as Eigen's pldexp_fast (a NaN x gives NaN whatever m is)
    scale = m.astype(np.int32)
    scale += 127
    scale <<= 23
    odd *= scale.view(np.float32)
    odd *= odd  # exp(x) = exp(x/2)^2, never negative
    if not np.minimum.reduce(odd) >= _TINY32:
        odd[odd < _TINY32] = 0
    np.add(odd, _ONE, out=even)
    return np.divide(odd, even, out=out)


def _logistic_scalar(x: Any) -> Any:
    """Eigen's scalar logistic for float (expf, which rounds a double-precision result)."""
    e = np.exp(np.minimum(x, _EXP_HI).astype(np.float64)).astype(np.float32)
    flush_denormals(e)
    return flush_denormals(e / (_ONE + e))


def _tail_inputs(x: Any, packet: int) -> Any:
    """A copy of the elements past the last full packet (C order), or None."""
    tail = x.size % packet
    return np.array(x.reshape(-1)[x.size - tail:]) if tail else None


def _finish_tail(out: Any, rest: Any) -> Any:
    if rest is not None:
        out.reshape(-1)[out.size - rest.size:] = _logistic_scalar(rest)
    return out


def logistic_float32(x: Any, out: Any, packet: int = 8) -> Any:
    """1 / (1 + exp(-x)) rounded as TF's float32 Sigmoid kernel: whole packets of `packet`
    elements (in C order) by Eigen's packet code, the rest by its scalar code. (NumPy's
    overflow and invalid-cast warnings here are expected: ops/_util.py filters them.)"""
    x = np.asarray(x)
    if not x.size % packet:
        _logistic_packets(x, out)
        return out
    rest = _tail_inputs(x, packet)
    _logistic_packets(x, out)
    return _finish_tail(out, rest)


def logistic_float32_kernel(ctx: KernelContext) -> Callable[[Any], Any]:
    """The float32 Sigmoid kernel: large values go into their input when it may be forwarded
    and run in blocks over the device's threads (as ops/kernels/elementwise.py's forwarding_unary),
    the blocks by the packet code and then the array's last elements by the scalar code."""
    def plain(x: Any) -> Any:
        return logistic_float32(x, np.empty(np.shape(x), np.float32))

    shape = ctx.op.outputs[0].shape
    if shape.is_fully_defined() and shape.num_elements() < buffer_forwarding.MIN_FORWARD_ELEMENTS:
        return plain
    split = ElementwiseSplitter.for_kernel(ctx)
    size, f32, least = np.size, np.dtype(np.float32), buffer_forwarding.MIN_FORWARD_ELEMENTS

    def compute(x: Any) -> Any:
        if size(x) < least:
            return plain(x)
        out = x if forwardable(x, x.shape, f32) else np.empty(x.shape, f32)  # before any view of x
        rest = _tail_inputs(x, 8)
        if split is not None and split.wants_split(x.size, x.shape):
            split.run(lambda o, a: _logistic_packets(a, o), x.shape, f32, x, out=out)
        else:
            _logistic_packets(x, out)
        return _finish_tail(out, rest)

    return compute
