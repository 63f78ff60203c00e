"""What TF's slot_creator adds to a slot variable (an optimizer's accumulator, a moving
average's shadow) beyond creating it: a slot of a shard of a partitioned variable is itself a
slice, of the full slot `<full name>/<slot name>`, so checkpoints hold one full tensor per slot
and restore across shard counts as the primary does."""
from __future__ import annotations

from typing import Any

from tensorweave.ops.state.variables import SaveSliceInfo

__all__ = ["copy_save_slice_info"]


def copy_save_slice_info(primary: Any, slot: Any) -> None:
    """Gives `slot` the slice of `<primary's full name>/<slot name>` that `primary` has of its
    full variable (nothing when `primary` is not a slice; a scalar slot stays whole)."""
    info = getattr(primary, "_save_slice_info", None)
    if info is None:
        return
    # the slot's name past its primary's op name, as TF takes it: "emb/part_0/Adagrad:0" -> "Adagrad"
    slot_name = slot.name[len(primary.op.name + "/"):-2]
    rank = slot.get_shape().ndims
    if rank is not None and rank == 0:
        return
    slot._set_save_slice_info(SaveSliceInfo(f"{info.full_name}/{slot_name}", info.full_shape[:rank],
                                            info.var_offset[:rank], info.var_shape[:rank]))
