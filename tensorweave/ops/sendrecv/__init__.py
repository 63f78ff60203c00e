"""Send and Recv (white paper 3.2.2, 5.3): the ops the partitioner puts on cross-device edges, and
the bfloat16 packing of float32 tensors on the wire (send_recv)."""
from tensorweave.ops.sendrecv.send_recv import pack_bfloat16, unpack_bfloat16  # noqa: F401 (no TF public API)

__all__: list[str] = []
