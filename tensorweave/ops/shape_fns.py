"""Shape functions shared by many ops (run at graph construction, DESIGN.md)."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.tensor_shape import Dimension, TensorShape, unknown_shape


def unchanged(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape]


def scalar(op: Any) -> list[TensorShape]:
    return [TensorShape([])] * len(op.outputs)


def unknown(op: Any) -> list[TensorShape]:
    return [unknown_shape()] * len(op.outputs)


def no_outputs(op: Any) -> list[TensorShape]:
    return []


def broadcast_shapes(a: TensorShape, b: TensorShape, op_name: str = "") -> TensorShape:
    """NumPy broadcasting on static shapes; ValueError when known dims can't broadcast."""
    if a.ndims is None or b.ndims is None:
        return unknown_shape()
    da, db = a.as_list(), b.as_list()
    n = max(len(da), len(db))
    da = [1] * (n - len(da)) + da
    db = [1] * (n - len(db)) + db
    out: list[Any] = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y if y is not None and y != 1 else None)
        elif y is None:
            out.append(x)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(f"Dimensions must be equal, but are {x} and {y} for '{op_name}' with "
                             f"input shapes: {a}, {b}.")
    return TensorShape(out)


def broadcast_binary(op: Any) -> list[TensorShape]:
    return [broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape, f"{op.name}") ] * len(op.outputs)


def merge_all_inputs(op: Any) -> list[TensorShape]:
    shape = unknown_shape()
    for t in op.inputs:
        try:
            shape = shape.merge_with(t.shape)
        except ValueError:
            raise ValueError(f"Shapes must be equal for '{op.name}' ({op.type}): "
                             f"{[str(x.shape) for x in op.inputs]}") from None
    return [shape]


def dim(value: Any) -> Dimension:
    return value if isinstance(value, Dimension) else Dimension(value)
