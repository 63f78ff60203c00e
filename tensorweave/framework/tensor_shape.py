"""Static shapes with unknown dimensions and unknown rank (TF1's TensorShape and Dimension)."""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional


class Dimension:
    """One dimension of a static shape; `value` is None when unknown (TF1 semantics)."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        if value is None:
            self._value = None
        elif isinstance(value, Dimension):
            self._value = value._value
        else:
            try:
                self._value = int(value.__index__())
            except AttributeError:
                raise TypeError(
                    f"Dimension value must be integer or None or have an __index__ method, got {value!r}"
                ) from None
            if self._value < 0:
                raise ValueError(f"Dimension {self._value} must be >= 0")

    @property
    def value(self) -> Optional[int]:
        return self._value

    def __repr__(self) -> str:
        return f"Dimension({self._value!r})"

    def __str__(self) -> str:
        return "?" if self._value is None else str(self._value)

    def __int__(self) -> int:
        if self._value is None:
            raise TypeError("Cannot convert an unknown Dimension to an int")
        return self._value

    __index__ = __int__

    def __eq__(self, other: Any) -> Any:
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other._value is None:
            return None
        return self._value == other._value

    def __ne__(self, other: Any) -> Any:
        eq = self.__eq__(other)
        return eq if eq is None or eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return self._value is not None and self._value != 0

    def is_compatible_with(self, other: Any) -> bool:
        other = as_dimension(other)
        return self._value is None or other._value is None or self._value == other._value

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")

    def merge_with(self, other: Any) -> "Dimension":
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(self._value if self._value is not None else other._value)

    def _arith(self, other: Any, fn: Any) -> "Dimension":
        other = as_dimension(other)
        if self._value is None or other._value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other._value))

    def __add__(self, other: Any) -> "Dimension":
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other: Any) -> "Dimension":
        return self._arith(other, lambda a, b: a - b)

    def __rsub__(self, other: Any) -> "Dimension":
        return as_dimension(other).__sub__(self)

    def __mul__(self, other: Any) -> "Dimension":
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other: Any) -> "Dimension":
        return self._arith(other, lambda a, b: a // b)

    def __mod__(self, other: Any) -> "Dimension":
        return self._arith(other, lambda a, b: a % b)

    def __lt__(self, other: Any) -> Optional[bool]:
        other = as_dimension(other)
        return None if self._value is None or other._value is None else self._value < other._value

    def __le__(self, other: Any) -> Optional[bool]:
        other = as_dimension(other)
        return None if self._value is None or other._value is None else self._value <= other._value

    def __gt__(self, other: Any) -> Optional[bool]:
        other = as_dimension(other)
        return None if self._value is None or other._value is None else self._value > other._value

    def __ge__(self, other: Any) -> Optional[bool]:
        other = as_dimension(other)
        return None if self._value is None or other._value is None else self._value >= other._value


def as_dimension(value: Any) -> Dimension:
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dim: Any) -> Optional[int]:
    return dim.value if isinstance(dim, Dimension) else dim


def dimension_at_index(shape: "TensorShape", index: int) -> Dimension:
    """Dimension `index` of `shape`; an unknown Dimension when the rank is unknown."""
    if not isinstance(shape, TensorShape):
        raise TypeError(f"dimension_at_index expects a TensorShape, got {shape!r}")
    dims = shape.dims
    return Dimension(None) if dims is None else dims[index]


class TensorShape:
    """A possibly-partial static shape: unknown rank (`dims is None`) or a list of Dimensions."""

    __slots__ = ("_dims",)

    def __init__(self, dims: Any) -> None:
        if dims is None:
            self._dims: Optional[tuple[Dimension, ...]] = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, (list, tuple)):
            self._dims = tuple(as_dimension(d) for d in dims)
        elif hasattr(dims, "dim") and hasattr(dims, "unknown_rank"):  # TensorShapeProto
            self._dims = None if dims.unknown_rank else tuple(
                Dimension(None if d.size == -1 else d.size) for d in dims.dim)
        else:
            try:
                self._dims = tuple(as_dimension(d) for d in dims)
            except TypeError:
                self._dims = (as_dimension(dims),)

    # -- queries ----------------------------------------------------------------------------
    @property
    def dims(self) -> Optional[list[Dimension]]:
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self) -> Optional[int]:
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __iter__(self) -> Iterator[Dimension]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key: Any) -> Any:
        if self._dims is None:
            if isinstance(key, slice):
                return unknown_shape()
            return Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def num_elements(self) -> Optional[int]:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:  # type: ignore[union-attr]
            n *= d.value  # type: ignore[operator]
        return n

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d.value is not None for d in self._dims)

    def assert_is_fully_defined(self) -> None:
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def as_list(self) -> list[Optional[int]]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d.value for d in self._dims]

    def as_tuple_or_none(self) -> Optional[tuple[Optional[int], ...]]:
        """Dims as plain ints/None, or None for unknown rank (used by kernels' checks)."""
        return None if self._dims is None else tuple(d.value for d in self._dims)

    # -- compatibility ----------------------------------------------------------------------
    def is_compatible_with(self, other: Any) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def merge_with(self, other: Any) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if len(self._dims) != len(other._dims):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        try:
            return TensorShape([a.merge_with(b) for a, b in zip(self._dims, other._dims)])
        except ValueError:
            raise ValueError(f"Shapes {self} and {other} are not compatible") from None

    def most_specific_compatible_shape(self, other: Any) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return unknown_shape()
        return TensorShape([a if a.value == b.value else None for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other: Any) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other._dims)

    def with_rank(self, rank: int) -> "TensorShape":
        try:
            return self.merge_with(unknown_shape(rank))
        except ValueError:
            raise ValueError(f"Shape {self} must have rank {rank}") from None

    def with_rank_at_least(self, rank: int) -> "TensorShape":
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank: int) -> "TensorShape":
        if self._dims is not None and len(self._dims) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_has_rank(self, rank: int) -> None:
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def assert_same_rank(self, other: Any) -> None:
        other = as_shape(other)
        if self.ndims is not None and other.ndims is not None and self.ndims != other.ndims:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    # -- python protocol --------------------------------------------------------------------
    def __eq__(self, other: Any) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._dims is None or other._dims is None:
            return self._dims is None and other._dims is None
        return self.as_tuple_or_none() == other.as_tuple_or_none()

    def __ne__(self, other: Any) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(self.as_tuple_or_none())

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({[d.value for d in self._dims]!r})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"


def as_shape(shape: Any) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: Optional[int] = None, ndims: Optional[int] = None) -> TensorShape:
    rank = ndims if rank is None else rank
    return TensorShape(None) if rank is None else TensorShape([None] * rank)


def scalar() -> TensorShape:
    return TensorShape([])


def vector(length: Any) -> TensorShape:
    return TensorShape([length])


def matrix(rows: Any, cols: Any) -> TensorShape:
    return TensorShape([rows, cols])


def shapes_of(dims_iter: Iterable[Any]) -> list[TensorShape]:
    return [as_shape(d) for d in dims_iter]
