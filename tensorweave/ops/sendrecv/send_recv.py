"""Send and Receive (white paper 3.2.2, 5.3) and the 16-bit transfer conversions (5.5).

The partitioner (runtime/partition.py) replaces each cross-device edge with a `_Send` in the
source partition and a `_Recv` in the destination partition, with TensorFlow's attrs. The pair
meets in the step's rendezvous under a key naming the two devices, the tensor, and the frame
and iteration the nodes run in, so loops partitioned over devices exchange one value per
iteration. Both run even when their input is dead: a dead value crosses as dead, and the
Receive's output is then dead too (the executor treats them as transfer nodes). `_Recv` is an
asynchronous kernel: it waits in the rendezvous holding no thread.

Kernels see the step (`needs_step`): `step.rendezvous` and `step.DEAD`, the value an untaken
branch carries.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.tensor_shape import unknown_shape
from tensorweave.ops import _util

_TRANSFER_ATTRS = ["tensor_name: string", "send_device: string", "send_device_incarnation: int",
                   "recv_device: string", "client_terminated: bool = false"]

Send = define_op("_Send", inputs=["tensor: T"], attrs=["T: type"] + _TRANSFER_ATTRS,
                 shape_fn=_util.no_outputs, is_stateful=True, needs_step=True)
Recv = define_op("_Recv", outputs=["tensor: tensor_type"], attrs=["tensor_type: type"] + _TRANSFER_ATTRS,
                 shape_fn=lambda op: [unknown_shape()], is_stateful=True, is_async=True)


def _key_maker(attrs: dict[str, Any]) -> Callable[[Any], Any]:
    """step -> rendezvous key; the root frame's key is built once per rendezvous type."""
    parts = (attrs["send_device"], attrs["send_device_incarnation"], attrs["recv_device"],
             attrs["tensor_name"])
    cache: dict[type, Any] = {}

    def key(step: Any) -> Any:
        rendezvous = step.rendezvous
        if step.frame_id == "" and step.iteration == 0:
            found = cache.get(type(rendezvous))
            if found is None:
                found = cache[type(rendezvous)] = rendezvous.create_key(*parts, "", 0)
            return found
        return rendezvous.create_key(*parts, step.frame_id, step.iteration)

    return key


@Send.kernel()
def _send_kernel(ctx: KernelContext) -> Any:
    key = _key_maker(ctx.attrs)

    def send(step: Any, value: Any) -> None:
        is_dead = value is step.DEAD
        step.rendezvous.send(key(step), None if is_dead else value, is_dead)

    return send


@Recv.kernel()
def _recv_kernel(ctx: KernelContext) -> Any:
    key = _key_maker(ctx.attrs)

    def recv(step: Any, done: Callable[[Any], None]) -> None:
        dead = step.DEAD

        def received(error: Any, value: Any, is_dead: bool) -> None:
            if error is not None:
                done(error)
            else:
                done(dead if is_dead else value)

        step.rendezvous.recv_async(key(step), received)

    return recv


Send.not_differentiable()
Recv.not_differentiable()

# -- lossy 16-bit transfers (white paper 5.5) ---------------------------------------------------
# A float32 crosses as the upper 16 bits of its bit pattern (sign, exponent, 7 mantissa bits:
# the bfloat16 layout) and is restored by zero-filling the low mantissa bits. The sender rounds
# to nearest-even before dropping the bits, as TF's bfloat16 conversion does, which bounds the
# relative error of normal numbers by 2^-8 (plain truncation would allow 2^-7).
Bfloat16Pack = define_op("_Bfloat16Pack", inputs=["input: float"], outputs=["output: uint16"],
                         shape_fn=_util.unchanged)
Bfloat16Unpack = define_op("_Bfloat16Unpack", inputs=["input: uint16"], outputs=["output: float"],
                           shape_fn=_util.unchanged)


def pack_bfloat16(value: Any) -> np.ndarray:
    value = np.asarray(value, dtype=np.float32)
    bits = value.view(np.uint32)
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    upper = ((bits + rounding) >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(value)
    if nan.any():  # rounding must not turn a NaN's payload into infinity
        upper[nan] = ((bits[nan] >> np.uint32(16)) | np.uint32(0x40)).astype(np.uint16)
    return upper


def unpack_bfloat16(packed: Any) -> np.ndarray:
    return (np.asarray(packed, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


@Bfloat16Pack.kernel()
def _pack_kernel(ctx: KernelContext) -> Any:
    return pack_bfloat16


@Bfloat16Unpack.kernel()
def _unpack_kernel(ctx: KernelContext) -> Any:
    return unpack_bfloat16


Bfloat16Pack.not_differentiable()
Bfloat16Unpack.not_differentiable()
