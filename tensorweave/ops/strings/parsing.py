"""Parsing ops: StringToNumber, DecodeCSV and DecodeRaw (TF1's parsing_ops), none
differentiable.

Numbers parse as TF's `safe_strto*` functions do: surrounding ASCII whitespace is allowed;
integers are plain decimal and must fit the type; floats follow C's strtod (decimal, hex,
inf/infinity, nan) and overflow to inf. Python's own `int`/`float` accept more (underscores,
and in str form non-ASCII digits), so those are ruled out before using them.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import _util
from tensorweave.ops._util import shape_error
from tensorweave.ops.strings.string_ops import to_object_array
from tensorweave.ops._util import invalid

__all__ = ["string_to_number", "decode_csv", "decode_raw"]


# ---------------------------------------------------------------------------------------------
# Number parsing shared by StringToNumber and DecodeCSV
# ---------------------------------------------------------------------------------------------
# strtod forms Python's float() rejects: hex floats and nan(chars).
_C_ONLY_FLOAT = re.compile(
    rb"\s*([+-]?)(?:(0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?)"
    rb"|[nN][aA][nN]\([0-9A-Za-z_]*\))\s*\Z")
_INT_LIMITS = {name: (int(np.iinfo(name).min), int(np.iinfo(name).max)) for name in ("int32", "int64")}


def parse_float(text: bytes) -> Optional[float]:
    """C strtod on the whole of `text` (surrounding whitespace allowed); None if invalid."""
    if b"_" not in text:
        try:
            return float(text)
        except ValueError:
            pass
    m = _C_ONLY_FLOAT.match(text)
    if m is None:
        return None
    sign, hex_part = m.groups()
    if hex_part is None:
        return float("nan")
    value = float.fromhex(hex_part.decode("ascii"))
    return -value if sign == b"-" else value


def parse_int(text: bytes, lo: int, hi: int) -> Optional[int]:
    """A decimal integer in [lo, hi] (surrounding whitespace allowed); None if invalid."""
    if b"_" in text:
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if lo <= value <= hi else None


def number_parser(dtype: _dtypes.DType) -> Callable[[bytes], Any]:
    """bytes -> Python number or None, for float32/float64/int32/int64."""
    if dtype.is_floating:
        return parse_float
    lo, hi = _INT_LIMITS[dtype.name]
    return lambda text: parse_int(text, lo, hi)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def numbers_to_array(values: list, dtype: _dtypes.DType) -> np.ndarray:
    """Parsed Python numbers as an array of `dtype` (ints were range-checked by the parser)."""
    np_type = dtype.as_numpy_dtype
    if np_type is np.float32 and values and max(map(abs, values)) > _FLOAT32_MAX:
        with np.errstate(over="ignore"):  # 1e40 as float32 is inf, as strtof gives
            return np.array(values, dtype=np.float64).astype(np.float32)
    return np.array(values, dtype=np_type)


# ---------------------------------------------------------------------------------------------
# StringToNumber
# ---------------------------------------------------------------------------------------------
StringToNumber = define_op("StringToNumber", inputs=["string_tensor: string"], outputs=["output: out_type"],
                           attrs=["out_type: {float32, float64, int32, int64} = float32"],
                           shape_fn=_util.unchanged)
StringToNumber.not_differentiable()


@StringToNumber.kernel()
def _string_to_number_kernel(ctx: KernelContext) -> Callable:
    out_type = ctx.attr("out_type")
    parse = number_parser(out_type)

    def compute(strings: Any) -> Any:
        flat = strings.ravel().tolist()
        values = [parse(s) for s in flat]
        if None in values:
            bad = flat[values.index(None)]
            raise invalid(f"StringToNumberOp could not correctly convert string: "
                           f"{bad.decode('utf-8', 'backslashreplace')}")
        return numbers_to_array(values, out_type).reshape(strings.shape)

    return compute


def string_to_number(string_tensor: Any, out_type: Any = _dtypes.float32, name: Optional[str] = None) -> Any:
    """Converts each string to a number of `out_type` (float32, float64, int32 or int64); a
    string that is not a number raises InvalidArgumentError when run."""
    return apply_op(StringToNumber, name=name, string_tensor=string_tensor,
                    out_type=_dtypes.as_dtype(out_type))


# ---------------------------------------------------------------------------------------------
# DecodeRaw
# ---------------------------------------------------------------------------------------------
def _decode_raw_shape(op: Operation) -> list[TensorShape]:
    shape = op.inputs[0].shape
    return [TensorShape(None) if shape.ndims is None else shape.concatenate([None])]


DecodeRaw = define_op("DecodeRaw", inputs=["bytes: string"], outputs=["output: out_type"],
                      attrs=["out_type: {float16, float32, float64, int32, uint16, uint8, int16, int8, "
                             "int64, complex64, complex128, bool}",
                             "little_endian: bool = true"],
                      shape_fn=_decode_raw_shape)
DecodeRaw.not_differentiable()


@DecodeRaw.kernel()
def _decode_raw_kernel(ctx: KernelContext) -> Callable:
    out_type = ctx.attr("out_type")
    native = np.dtype(out_type.as_numpy_dtype)
    wire = native.newbyteorder("<" if ctx.attr("little_endian") else ">")
    size = native.itemsize

    def compute(data: Any) -> Any:
        flat = data.ravel().tolist()
        length = len(flat[0]) if flat else 0
        for i, s in enumerate(flat):
            if len(s) != length:
                raise invalid(f"DecodeRaw requires input strings to all be the same size, but "
                               f"element {i} has size {length} != {len(s)}")
        if length % size:
            raise invalid(f"Input to DecodeRaw has length {length} that is not a multiple of "
                           f"{size}, the size of {out_type.name}")
        raw = np.frombuffer(b"".join(flat), dtype=np.uint8 if out_type.is_bool else wire)
        out = (raw != 0) if out_type.is_bool else raw.astype(native)  # native order, writable
        return out.reshape(data.shape + (length // size,))

    return compute


def decode_raw(input_bytes: Any = None, out_type: Any = None, little_endian: bool = True,
               name: Optional[str] = None, bytes: Any = None) -> Any:  # noqa: A002
    """Reinterprets the bytes of each string as a vector of `out_type` numbers (all strings
    must have the same length): the result has the input's shape plus one dimension."""
    value = input_bytes if input_bytes is not None else bytes
    if value is None or out_type is None:
        raise TypeError("decode_raw() requires the bytes to decode and an out_type")
    return apply_op(DecodeRaw, name=name, bytes=value, out_type=_dtypes.as_dtype(out_type),
                    little_endian=little_endian)


# ---------------------------------------------------------------------------------------------
# DecodeCSV
# ---------------------------------------------------------------------------------------------
_CSV_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64, _dtypes.string)
_TYPE_WORDS = {"float32": "float", "float64": "double", "int32": "int32", "int64": "int64"}


def _decode_csv_shape(op: Operation) -> list[TensorShape]:
    for t in op.inputs[1:]:
        shape = t.shape
        if shape.ndims is not None and shape.ndims > 1:
            raise shape_error(op, f"Shape must be at most rank 1 but is rank {shape.ndims}")
        if shape.ndims == 1 and shape[0].value is not None and shape[0].value > 1:
            raise shape_error(op, "Shape of a default must be a length-0 or length-1 vector, or a scalar.")
    return [op.inputs[0].shape] * (len(op.inputs) - 1)


DecodeCSV = define_op(
    "DecodeCSV", inputs=["records: string", "record_defaults: OUT_TYPE"], outputs=["output: OUT_TYPE"],
    attrs=["OUT_TYPE: list(type)", "field_delim: string = ','", "use_quote_delim: bool = true",
           "na_value: string = ''", "select_cols: list(int) = []"],
    shape_fn=_decode_csv_shape)
DecodeCSV.not_differentiable()


class _CsvSplitter:
    """Splits one record into its (selected) fields as TF's DecodeCSV does: RFC 4180 quoting
    (a quoted field may hold the delimiter and "" for a quote), newlines skipped between fields."""

    def __init__(self, delim: bytes, use_quote: bool, select_cols: Sequence[int]) -> None:
        self.delim = delim
        self.use_quote = use_quote
        self.select = list(select_cols)
        self.select_set = set(self.select)
        self.quote = b'"' if use_quote else b"\n"  # a byte that sends a record to the scanner

    def __call__(self, record: bytes) -> list[bytes]:
        if not record:
            return []
        # Records without quotes or line breaks (nearly all) split with bytes.split.
        if self.quote not in record and b"\n" not in record and b"\r" not in record:
            fields = record.split(self.delim)
            if not self.select:
                return fields
            return [fields[c] for c in self.select if c < len(fields)]
        return self._scan(record)

    def _scan(self, record: bytes) -> list[bytes]:
        fields: list[bytes] = []
        pos, column, end = 0, 0, len(record)
        while pos < end:
            if record[pos] in b"\r\n":
                pos += 1
                continue
            field, pos = self._field(record, pos)
            if not self.select or column in self.select_set:
                fields.append(field)
                if self.select and len(fields) == len(self.select):
                    return fields
            column += 1
        if record.endswith(self.delim) and (not self.select or column in self.select_set):
            fields.append(b"")  # "a," ends with an empty field
        return fields

    def _field(self, record: bytes, pos: int) -> tuple[bytes, int]:
        """One field starting at `pos`; returns it and where the next one starts."""
        delim = self.delim
        if not (self.use_quote and record[pos:pos + 1] == b'"'):
            stop = record.find(delim, pos)
            stop = len(record) if stop < 0 else stop
            body = record[pos:stop]
            if (self.use_quote and b'"' in body) or b"\n" in body or b"\r" in body:
                raise invalid("Unquoted fields cannot have quotes/CRLFs inside")
            return body, stop + 1
        out = bytearray()
        pos += 1
        last = len(record) - 1
        while pos < last and not (record[pos:pos + 1] == b'"' and record[pos + 1:pos + 2] == delim):
            if record[pos:pos + 1] != b'"':
                out += record[pos:pos + 1]
                pos += 1
            elif record[pos + 1:pos + 2] == b'"':
                out += b'"'
                pos += 2
            else:
                raise invalid("Quote inside a string has to be escaped by another quote")
        if not (pos <= last and record[pos:pos + 1] == b'"'):
            raise invalid("Quoted field has to end with quote followed by delim or end")
        return bytes(out), pos + 2


class _CsvColumn:
    """How one column's fields become values (its default, an input, is read each step), and
    the column's values an output array."""

    def __init__(self, dtype: _dtypes.DType, column: int, na_value: bytes) -> None:
        self.dtype = dtype
        self.column = column
        self.na_value = na_value
        self.parse = None if dtype is _dtypes.string else number_parser(dtype)
        self.word = _TYPE_WORDS.get(dtype.name)

    def value(self, field: bytes, default: Any, record: int) -> Any:
        if not field or field == self.na_value:
            if default is None:
                raise invalid(f"Field {self.column} is required but missing in record {record}!")
            return default
        if self.parse is None:
            return field
        value = self.parse(field)
        if value is None:
            raise invalid(f"Field {self.column} in record {record} is not a valid {self.word}: "
                           f"{field.decode('utf-8', 'backslashreplace')}")
        return value

    def array(self, values: list, shape: tuple) -> np.ndarray:
        if self.parse is None:
            return to_object_array(values, shape)
        return numbers_to_array(values, self.dtype).reshape(shape)


def _default_of(default: Any, column: int) -> Any:
    """A column's default as a Python value, or None when the column is required."""
    if default.size > 1:
        raise invalid(f"There should only be 1 default per field but field {column} has {default.size}")
    return default.item(0) if default.size else None


@DecodeCSV.kernel()
def _decode_csv_kernel(ctx: KernelContext) -> Callable:
    delim = ctx.attr("field_delim").encode("utf-8")
    if len(delim) != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "field_delim should be only 1 char")
    split = _CsvSplitter(delim, ctx.attr("use_quote_delim"), ctx.attr("select_cols"))
    na_value = ctx.attr("na_value").encode("utf-8")
    columns = [_CsvColumn(t, i, na_value) for i, t in enumerate(ctx.attr("OUT_TYPE"))]
    n = len(columns)

    def compute(records: Any, *defaults: Any) -> Any:
        # One record (what a reader yields) is the common case: no per-record bookkeeping.
        rows = [split(r) for r in records.ravel().tolist()] if records.ndim else [split(records.item())]
        for r, fields in enumerate(rows):
            if len(fields) != n:
                raise invalid(f"Expect {n} fields but have {len(fields)} in record {r}")
        shape = records.shape
        outputs = []
        for i, (column, default) in enumerate(zip(columns, defaults)):
            fallback = _default_of(default, i)
            value = column.value
            outputs.append(column.array([value(fields[i], fallback, r) for r, fields in enumerate(rows)],
                                        shape))
        return tuple(outputs) if n > 1 else outputs[0]  # a one-output node returns the value itself

    return compute


def decode_csv(records: Any, record_defaults: Sequence[Any], field_delim: str = ",",
               use_quote_delim: bool = True, name: Optional[str] = None, na_value: str = "",
               select_cols: Optional[Sequence[int]] = None) -> list:
    """Parses CSV records (a string tensor of any shape) into one tensor per column, each
    of the records' shape. `record_defaults[i]` gives column i's type (float32, float64,
    int32, int64 or string) and its default for empty or `na_value` fields; an empty default
    makes the column required. `select_cols` picks (increasing) columns to parse."""
    if select_cols is not None:
        select_cols = list(select_cols)
        if any(select_cols[i] >= select_cols[i + 1] for i in range(len(select_cols) - 1)):
            raise ValueError("select_cols is not strictly increasing.")
        if select_cols and select_cols[0] < 0:
            raise ValueError("select_cols contains negative values.")
        if len(select_cols) != len(record_defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    if not record_defaults:
        raise ValueError("Attr 'OUT_TYPE' of 'DecodeCSV' Op passed list of length 0 less than minimum 1.")
    defaults = [convert_to_tensor(d, name="record_defaults") for d in record_defaults]
    for d in defaults:
        if d.dtype.base_dtype not in _CSV_TYPES:
            raise TypeError(f"Value passed to parameter 'record_defaults' has DataType {d.dtype.name} "
                            f"not in list of allowed values: {', '.join(t.name for t in _CSV_TYPES)}")
    return apply_op(DecodeCSV, name=name, records=records, record_defaults=defaults,
                    field_delim=field_delim, use_quote_delim=use_quote_delim, na_value=na_value,
                    select_cols=select_cols or [])
