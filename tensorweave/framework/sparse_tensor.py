"""`tf.SparseTensor`: a sparse value as three dense tensors (TF1's sparse representation):
`indices` (int64 [N, rank], the coordinates of the non-default entries), `values` ([N], their
values) and `dense_shape` (int64 [rank]). Fetching one returns a `tf.SparseTensorValue`, and a
SparseTensorValue (or an (indices, values, dense_shape) triple) can be fed for one; the session
registers both through runtime/fetch_mapper.py."""
from __future__ import annotations

import collections
from typing import Any, Callable, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Graph, Operation, Tensor, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.framework import default_session

__all__ = ["SparseTensor", "SparseTensorValue"]

SparseTensorValue = collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])
SparseTensorValue.__doc__ = "The value of a fetched SparseTensor: NumPy indices, values and dense_shape."


class SparseTensor:
    """A sparse tensor: `values[i]` sits at coordinates `indices[i]` of a tensor of shape
    `dense_shape`; every other entry is zero (or a default). Indices should be in row-major
    order for ops that require it (`tf.sparse_tensor_to_dense` with validate_indices)."""

    @classmethod
    def from_value(cls, sparse_tensor_value: Any) -> "SparseTensor":
        if not is_sparse(sparse_tensor_value):
            raise TypeError(f"Neither a SparseTensor nor SparseTensorValue: {sparse_tensor_value}.")
        return cls(sparse_tensor_value.indices, sparse_tensor_value.values,
                   sparse_tensor_value.dense_shape)

    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None:
        with name_scope(None, "SparseTensor", _tensors_among((indices, values, dense_shape))):
            indices = convert_to_tensor(indices, dtype=_dtypes.int64, name="indices")
            values = convert_to_tensor(values, name="values")
            dense_shape = convert_to_tensor(dense_shape, dtype=_dtypes.int64, name="dense_shape")
        indices_shape = indices.shape.with_rank(2)
        values_shape = values.shape.with_rank(1)
        dense_shape_shape = dense_shape.shape.with_rank(1)
        # One value per index row; one coordinate per dimension.
        indices_shape[0].merge_with(values_shape[0])
        indices_shape[1].merge_with(dense_shape_shape[0])
        self._indices = indices
        self._values = values
        self._dense_shape = dense_shape

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        return self._dense_shape

    @property
    def dtype(self) -> _dtypes.DType:
        return self._values.dtype

    @property
    def op(self) -> Operation:
        return self._values.op

    @property
    def graph(self) -> Graph:
        return self._indices.graph

    @property
    def shape(self) -> TensorShape:
        """The static dense shape: known where `dense_shape` folds to constants."""
        return tensor_util.constant_value_as_shape(self._dense_shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    def consumers(self) -> list[Operation]:
        seen: list[Operation] = []
        for t in (self._indices, self._values, self._dense_shape):
            seen.extend(op for op in t.consumers() if op not in seen)
        return seen

    def eval(self, feed_dict: Any = None, session: Any = None) -> SparseTensorValue:
        """The value in `session` (default: the default session), as a SparseTensorValue."""
        return default_session.run_with_default(self, feed_dict, session)

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={self._indices}, values={self._values}, "
                f"dense_shape={self._dense_shape})")

    __str__ = __repr__


def _tensors_among(values: tuple) -> list[Any]:
    return [v for v in values if isinstance(v, Tensor)]


def is_sparse(x: Any) -> bool:
    """Whether `x` is a SparseTensor or a SparseTensorValue."""
    return isinstance(x, (SparseTensor, SparseTensorValue))


def convert_to_tensor_or_sparse_tensor(value: Any, dtype: Any = None, name: Optional[str] = None) -> Any:
    """A SparseTensorValue becomes a SparseTensor, a SparseTensor stays, anything else goes
    through `convert_to_tensor`."""
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and not _dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Sparse dtype: requested = {_dtypes.as_dtype(dtype).name}, "
                             f"actual = {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


# -- Session.run integration (registered by runtime/fetch_mapper.py) ------------------------------
def fetch_sparse_tensor(s: SparseTensor) -> tuple[list[Tensor], Callable[[list[Any]], Any]]:
    return [s.indices, s.values, s.dense_shape], lambda v: SparseTensorValue(v[0], v[1], v[2])


def feed_sparse_tensor(key: SparseTensor) -> tuple[list[Tensor], Callable[[Any], Any]]:
    """A SparseTensorValue or (indices, values, dense_shape) triple fed for a SparseTensor key
    feeds its three component tensors."""

    def split(value: Any) -> Any:
        if isinstance(value, SparseTensor):
            raise TypeError("The value of a feed cannot be a tf.SparseTensor object. Feed a "
                            "tf.SparseTensorValue or an (indices, values, dense_shape) tuple.")
        if not isinstance(value, (tuple, list)) or len(value) != 3:
            raise TypeError(f"Cannot feed {type(value).__name__} for SparseTensor {key}: expected a "
                            f"tf.SparseTensorValue or a tuple (indices, values, dense_shape).")
        return value

    return [key.indices, key.values, key.dense_shape], split
