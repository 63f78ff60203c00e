"""String ops: splitting (StringSplit, StringSplitV2 -> SparseTensor), Substr, StringJoin,
AsString, StringStrip, StringLength, regex replacement (RegexReplace, StaticRegexReplace) and
StringFormat (tensors rendered into a template, as tf.print shows them).

A string tensor's value is a NumPy object array of `bytes`; the kernels loop in Python over
the flattened elements (there is no vectorised bytes arithmetic worth the conversions). None
of these ops is differentiable.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.graph import name_scope, Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor, is_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops import _util
from tensorweave.ops._util import shape_error

__all__ = ["string_split", "substr", "string_join", "as_string", "string_strip", "regex_replace"]


def _invalid(message: str, op: Optional[Operation] = None) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, op, message)


def to_object_array(items: list, shape: Any) -> np.ndarray:
    """A list of bytes as an object array of `shape` (np.array would make an 'S' array)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def _rank_check(op: Operation, index: int, rank: int) -> TensorShape:
    shape = op.inputs[index].shape
    if shape.ndims is not None and shape.ndims != rank:
        raise shape_error(op, f"Shape must be rank {rank} but is rank {shape.ndims}")
    return shape if shape.ndims is not None else unknown_shape(rank)


# ---------------------------------------------------------------------------------------------
# StringSplit, StringSplitV2: a vector of strings -> SparseTensor of tokens
# ---------------------------------------------------------------------------------------------
def _split_shape(op: Operation) -> list[TensorShape]:
    _rank_check(op, 0, 1)
    _rank_check(op, 1, 0)
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


StringSplit = define_op("StringSplit", inputs=["input: string", "delimiter: string"],
                        outputs=["indices: int64", "values: string", "shape: int64"],
                        attrs=["skip_empty: bool = true"], shape_fn=_split_shape)
StringSplitV2 = define_op("StringSplitV2", inputs=["input: string", "sep: string"],
                          outputs=["indices: int64", "values: string", "shape: int64"],
                          attrs=["maxsplit: int = -1"], shape_fn=_split_shape)
StringSplit.not_differentiable()
StringSplitV2.not_differentiable()


def _sparse_from_rows(rows: list[list[bytes]]) -> tuple[Any, Any, Any]:
    """(indices, values, dense_shape) of a 2-D SparseTensor holding row i's tokens in row i."""
    counts = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    indices = np.empty((total, 2), dtype=np.int64)
    indices[:, 0] = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
    indices[:, 1] = np.arange(total, dtype=np.int64) - starts
    values = to_object_array([t for r in rows for t in r], (total,))
    shape = np.array([len(rows), int(counts.max()) if total else 0], dtype=np.int64)
    return indices, values, shape


def _splitter(delimiter: bytes) -> Callable[[bytes], list[bytes]]:
    """StringSplit's rule: every byte of `delimiter` separates tokens; an empty delimiter
    splits into single bytes."""
    if not delimiter:
        return lambda s: [s[i:i + 1] for i in range(len(s))]
    if len(delimiter) == 1:
        return lambda s: s.split(delimiter)
    return re.compile(b"[" + re.escape(delimiter) + b"]").split


def _vector_input(value: Any) -> list:
    if value.ndim != 1:
        raise _invalid(f"input must be a vector, got shape: {list(value.shape)}")
    return value.tolist()


@StringSplit.kernel()
def _string_split_kernel(ctx: KernelContext) -> Callable:
    skip_empty = ctx.attr("skip_empty")
    cache: dict[bytes, Callable] = {}

    def compute(source: Any, delimiter: Any) -> Any:
        if delimiter.ndim != 0:
            raise _invalid(f"delimiter must be a scalar, got shape: {list(delimiter.shape)}")
        delim = delimiter.item()
        split = cache.get(delim) or cache.setdefault(delim, _splitter(delim))
        rows = []
        for s in _vector_input(source):
            tokens = split(s) if s else []  # an empty string has no tokens, even empty ones
            rows.append([t for t in tokens if t] if skip_empty else tokens)
        return _sparse_from_rows(rows)

    return compute


@StringSplitV2.kernel()
def _string_split_v2_kernel(ctx: KernelContext) -> Callable:
    maxsplit = ctx.attr("maxsplit")

    def compute(source: Any, sep: Any) -> Any:
        if sep.ndim != 0:
            raise _invalid(f"sep must be a scalar, got shape: {list(sep.shape)}")
        separator = sep.item() or None  # empty: runs of ASCII whitespace, as Python's split
        return _sparse_from_rows([s.split(separator, maxsplit) for s in _vector_input(source)])

    return compute


def _sparse_result(parts: list) -> SparseTensor:
    indices, values, shape = parts
    return SparseTensor(indices, values, shape)


def string_split(source: Any, delimiter: Any = " ", skip_empty: bool = True, sep: Any = None,
                 result_type: str = "SparseTensor", name: Optional[str] = None) -> SparseTensor:
    """Splits each string of the vector `source` at any byte of `delimiter` (`sep` is its
    newer name; an empty delimiter splits into bytes) and returns the tokens as a 2-D
    SparseTensor: row i holds the tokens of source[i]. `skip_empty` drops empty tokens."""
    if result_type != "SparseTensor":
        raise ValueError(f"result_type must be 'SparseTensor' (ragged tensors are not supported), "
                         f"got {result_type!r}")
    delimiter = sep if sep is not None else delimiter
    with name_scope(name, "StringSplit", [source]):
        source = convert_to_tensor(source, dtype=_dtypes.string)
        delimiter = convert_to_tensor(delimiter, dtype=_dtypes.string)
        return _sparse_result(apply_op(StringSplit, input=source, delimiter=delimiter,
                                       skip_empty=skip_empty))


def strings_split(input: Any = None, sep: Any = None, maxsplit: int = -1,  # noqa: A002
                  result_type: str = "SparseTensor", source: Any = None,
                  name: Optional[str] = None) -> SparseTensor:
    """`tf.strings.split`: Python's `str.split(sep, maxsplit)` on each string of a vector; with
    no `sep`, runs of whitespace separate and leading/trailing whitespace is dropped."""
    if result_type != "SparseTensor":
        raise ValueError(f"result_type must be 'SparseTensor' (ragged tensors are not supported), "
                         f"got {result_type!r}")
    input = source if input is None else input  # noqa: A001
    with name_scope(name, "StringSplit", [input]):
        return _sparse_result(apply_op(StringSplitV2, input=convert_to_tensor(input, dtype=_dtypes.string),
                                       sep=sep if sep is not None else "", maxsplit=maxsplit))


# ---------------------------------------------------------------------------------------------
# Substr
# ---------------------------------------------------------------------------------------------
def _substr_shape(op: Operation) -> list[TensorShape]:
    pos, length = op.inputs[1].shape, op.inputs[2].shape
    if pos.ndims is not None and length.ndims is not None and pos.ndims != length.ndims:
        raise shape_error(op, f"Shape must be rank {pos.ndims} but is rank {length.ndims}")
    try:
        pos.merge_with(length)
    except ValueError:
        raise shape_error(op, "pos and len shapes must match") from None
    return [_util.broadcast_shapes(op.inputs[0].shape, pos, op.name)]


Substr = define_op("Substr", inputs=["input: string", "pos: T", "len: T"], outputs=["output: string"],
                   attrs=["T: {int32, int64}", "unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"],
                   shape_fn=_substr_shape)
Substr.not_differentiable()


def _substring(s: bytes, pos: int, length: int, index: int, utf8: bool) -> bytes:
    """TF's rule: |pos| <= size (pos == size gives ""), a negative pos counts from the end,
    a negative or overlong len takes the rest."""
    text: Any = s.decode("utf-8", "surrogateescape") if utf8 else s
    size = len(text)
    if (pos > size) if pos >= 0 else (-pos > size):
        kind = "unicode string" if utf8 else "string"
        raise _invalid(f"pos {pos} out of range for {kind} b'{s.decode('latin-1')}' at index {index}")
    start = pos if pos >= 0 else size + pos
    piece = text[start:] if length < 0 else text[start:start + length]
    return piece.encode("utf-8", "surrogateescape") if utf8 else piece


@Substr.kernel()
def _substr_kernel(ctx: KernelContext) -> Callable:
    utf8 = ctx.attr("unit") == "UTF8_CHAR"

    def compute(source: Any, pos: Any, length: Any) -> Any:
        if pos.shape != length.shape:
            raise _invalid(f"pos and len should have the same shape, got: {list(pos.shape)} vs. "
                           f"{list(length.shape)}")
        try:
            source_b, pos_b, len_b = np.broadcast_arrays(source, pos, length)
        except ValueError:
            raise _invalid(f"Incompatible shapes: {list(source.shape)} vs. {list(pos.shape)}") from None
        out = [_substring(s, p, n, i, utf8) for i, (s, p, n) in
               enumerate(zip(source_b.ravel().tolist(), pos_b.ravel().tolist(), len_b.ravel().tolist()))]
        return to_object_array(out, source_b.shape)

    return compute


def substr(input: Any, pos: Any, len: Any, name: Optional[str] = None, unit: str = "BYTE") -> Any:  # noqa: A002
    """The substrings `input[pos:pos + len]` of each string (bytes, or UTF-8 characters with
    unit="UTF8_CHAR"); a negative `pos` counts from the end. `pos` and `len` share a shape
    that broadcasts against `input`; a `pos` past the end is an InvalidArgumentError."""
    return apply_op(Substr, name=name, input=input, pos=pos, len=len, unit=unit)


# ---------------------------------------------------------------------------------------------
# StringJoin
# ---------------------------------------------------------------------------------------------
def _join_shape(op: Operation) -> list[TensorShape]:
    out = TensorShape([])
    seen_non_scalar = False
    for t in op.inputs:
        shape = t.shape
        if shape.ndims == 0:
            continue
        try:
            out = shape if not seen_non_scalar else out.merge_with(shape)
        except ValueError:
            raise shape_error(op, f"Shapes {out} and {shape} must be equal") from None
        seen_non_scalar = True
    return [out]


StringJoin = define_op("StringJoin", inputs=["inputs: N * string"], outputs=["output: string"],
                       attrs=["N: int >= 0", "separator: string = ''"], shape_fn=_join_shape)
StringJoin.not_differentiable()


@StringJoin.kernel()
def _string_join_kernel(ctx: KernelContext) -> Callable:
    separator = ctx.attr("separator").encode("utf-8")

    def compute(*parts: Any) -> Any:
        shape: tuple = ()
        for p in parts:
            if p.ndim:
                if shape and p.shape != shape:
                    raise _invalid(f"Input shapes do not match: {list(shape)} vs. {list(p.shape)}")
                shape = p.shape
        size = int(np.prod(shape))
        columns = [p.ravel().tolist() if p.ndim else [p.item()] * size for p in parts]
        return to_object_array([separator.join(row) for row in zip(*columns)] if columns
                               else [b""] * size, shape)

    return compute


def string_join(inputs: Any, separator: str = "", name: Optional[str] = None) -> Any:
    """Joins the string tensors of the list `inputs` element-wise with `separator`; scalars
    broadcast against the others, which must all have one shape."""
    return apply_op(StringJoin, name=name, inputs=list(inputs), separator=separator)


# ---------------------------------------------------------------------------------------------
# StringStrip, StringLength
# ---------------------------------------------------------------------------------------------
StringStrip = define_op("StringStrip", inputs=["input: string"], outputs=["output: string"],
                        shape_fn=_util.unchanged)
StringStrip.not_differentiable()


@StringStrip.kernel()
def _string_strip_kernel(ctx: KernelContext) -> Callable:
    # bytes.strip() drops exactly C's isspace set: space, \t, \n, \v, \f, \r.
    return lambda x: to_object_array([s.strip() for s in x.ravel().tolist()], x.shape)


def string_strip(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Removes leading and trailing whitespace from each string."""
    return apply_op(StringStrip, name=name, input=input)


StringLength = define_op("StringLength", inputs=["input: string"], outputs=["output: int32"],
                         attrs=["unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"], shape_fn=_util.unchanged)
StringLength.not_differentiable()


def _utf8_length(s: bytes) -> int:
    # Code points = bytes that are not UTF-8 continuation bytes (0b10xxxxxx), as TF counts.
    return len(s) if s.isascii() else sum(1 for b in s if b & 0xC0 != 0x80)


@StringLength.kernel()
def _string_length_kernel(ctx: KernelContext) -> Callable:
    measure = _utf8_length if ctx.attr("unit") == "UTF8_CHAR" else len
    return lambda x: np.fromiter(map(measure, x.ravel().tolist()), dtype=np.int32,
                                 count=x.size).reshape(x.shape)


def string_length(input: Any, name: Optional[str] = None, unit: str = "BYTE") -> Any:  # noqa: A002
    """The length of each string in bytes, or in UTF-8 characters with unit="UTF8_CHAR"."""
    return apply_op(StringLength, name=name, input=input, unit=unit)


# ---------------------------------------------------------------------------------------------
# AsString
# ---------------------------------------------------------------------------------------------
AsString = define_op(
    "AsString", inputs=["input: T"], outputs=["output: string"],
    attrs=["T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64, "
           "complex64, complex128, bool, string}",
           "precision: int = -1", "scientific: bool = false", "shortest: bool = false",
           "width: int = -1", "fill: string = ''"],
    shape_fn=_util.unchanged)
AsString.not_differentiable()


def _printf_spec(ctx: KernelContext) -> tuple[str, str]:
    """(flags and width and precision, conversion letter) of the printf format TF builds from
    the attrs, validated as TF's kernel does."""
    dtype = ctx.input_dtypes[0].base_dtype
    precision, width, fill = ctx.attr("precision"), ctx.attr("width"), ctx.attr("fill")
    scientific, shortest = ctx.attr("scientific"), ctx.attr("shortest")
    if scientific and shortest:
        raise _invalid("Cannot select both scientific and shortest notation", ctx.op)
    if len(fill) > 1:
        raise _invalid("Fill string must be one or fewer characters", ctx.op)
    if fill and fill not in " +-0#":
        raise _invalid(f'Fill argument not supported: "{fill}"', ctx.op)
    if dtype.is_floating or dtype.is_complex:
        conversion = "g" if shortest else "e" if scientific else "f"
    else:
        if (scientific or shortest) and dtype.is_integer:
            raise _invalid(f"scientific and shortest format not supported for datatype {dtype.name}", ctx.op)
        if precision > -1:
            raise _invalid(f"precision not supported for datatype {dtype.name}", ctx.op)
        conversion = "s" if dtype.name == "string" else "d"
    spec = fill + (str(width) if width > -1 else "") + (f".{precision}" if precision > -1 else "")
    return spec, conversion


def _c_float_formatter(spec: str, conversion: str) -> Callable[[float], str]:
    """printf for one float. Python's % matches C's except for inf/nan, which C pads with
    spaces even under the 0 flag and prints with their sign (-nan)."""
    fmt = "%" + spec + conversion
    width = int("".join(c for c in spec.split(".")[0] if c.isdigit()) or 0)
    left = "-" in spec
    plus = "+" if "+" in spec else " " if " " in spec else ""

    def special(v: float) -> str:
        text = ("-" if np.signbit(v) else plus) + ("nan" if v != v else "inf")
        return text.ljust(width) if left else text.rjust(width)

    def format_one(v: float) -> str:
        return fmt % v if v - v == 0.0 else special(v)  # v - v is nan exactly for inf and nan

    return format_one


@AsString.kernel()
def _as_string_kernel(ctx: KernelContext) -> Callable:
    spec, conversion = _printf_spec(ctx)
    dtype = ctx.input_dtypes[0].base_dtype
    if dtype.is_bool:
        one: Callable[[Any], Any] = lambda v: b"true" if v else b"false"  # noqa: E731
    elif dtype.name == "string":
        fmt = "%" + spec + "s"
        one = lambda v: (fmt % v.decode("latin-1")).encode("latin-1")  # noqa: E731
    elif dtype.is_complex:
        part = _c_float_formatter(spec, conversion)
        one = lambda v: f"({part(v.real)},{part(v.imag)})".encode("ascii")  # noqa: E731
    elif dtype.is_floating:
        fmt_float = _c_float_formatter(spec, conversion)
        one = lambda v: fmt_float(v).encode("ascii")  # noqa: E731
    else:
        fmt = "%" + spec + "d"
        one = lambda v: (fmt % v).encode("ascii")  # noqa: E731
    return lambda x: to_object_array([one(v) for v in x.ravel().tolist()], x.shape)


def as_string(input: Any, precision: int = -1, scientific: bool = False, shortest: bool = False,  # noqa: A002
              width: int = -1, fill: str = "", name: Optional[str] = None) -> Any:
    """Each element as a string, formatted as C's printf would with the given precision,
    notation (fixed, `scientific` or `shortest`), `width` and `fill` (one of ' +-0#')."""
    return apply_op(AsString, name=name, input=input, precision=precision, scientific=scientific,
                    shortest=shortest, width=width, fill=fill)


# ---------------------------------------------------------------------------------------------
# RegexReplace, StaticRegexReplace
# ---------------------------------------------------------------------------------------------
RegexReplace = define_op("RegexReplace", inputs=["input: string", "pattern: string", "rewrite: string"],
                         outputs=["output: string"], attrs=["replace_global: bool = true"],
                         shape_fn=_util.unchanged)
StaticRegexReplace = define_op("StaticRegexReplace", inputs=["input: string"], outputs=["output: string"],
                               attrs=["pattern: string", "rewrite: string", "replace_global: bool = true"],
                               shape_fn=_util.unchanged)
RegexReplace.not_differentiable()
StaticRegexReplace.not_differentiable()

_REWRITE_TOKEN = re.compile(rb"\\(.)|([^\\]+)|(\\)$", re.DOTALL)


def _compile_replacer(pattern: bytes, rewrite: bytes, replace_global: bool, op: Optional[Operation] = None) -> Callable:
    """bytes -> bytes replacing the first (or every) match of the RE2-style `pattern` with
    `rewrite`, where \\0..\\9 insert groups and \\\\ a backslash, as RE2::Replace does."""
    try:
        regex = re.compile(pattern)
    except re.error as err:
        raise _invalid(f"Invalid pattern: {pattern.decode('utf-8', 'replace')}, error: {err}", op) from None
    pieces: list[Any] = []  # literal bytes, or a group number
    for escaped, literal, trailing in _REWRITE_TOKEN.findall(rewrite):
        if literal:
            pieces.append(literal)
        elif escaped == b"\\":
            pieces.append(b"\\")
        elif escaped.isdigit() and int(escaped) <= regex.groups:
            pieces.append(int(escaped))
        else:
            raise _invalid(f"Invalid rewrite pattern: {rewrite.decode('utf-8', 'replace')}", op)
    if all(isinstance(p, bytes) for p in pieces):
        replacement: Any = b"".join(pieces)
        replacement_fn: Any = lambda m: replacement  # noqa: E731  (no re template parsing)
    else:
        replacement_fn = lambda m: b"".join(  # noqa: E731
            p if isinstance(p, bytes) else (m.group(p) or b"") for p in pieces)
    count = 0 if replace_global else 1
    return lambda s: regex.sub(replacement_fn, s, count=count)


def _apply_replacer(replace: Callable, x: Any) -> Any:
    return to_object_array([replace(s) for s in x.ravel().tolist()], x.shape)


@RegexReplace.kernel()
def _regex_replace_kernel(ctx: KernelContext) -> Callable:
    replace_global = ctx.attr("replace_global")
    cache: dict[tuple[bytes, bytes], Callable] = {}

    def compute(x: Any, pattern: Any, rewrite: Any) -> Any:
        if pattern.ndim != 0 or rewrite.ndim != 0:
            raise _invalid("Pattern and rewrite must be scalars.")
        key = (pattern.item(), rewrite.item())
        replace = cache.get(key)
        if replace is None:
            replace = cache[key] = _compile_replacer(key[0], key[1], replace_global)
        return _apply_replacer(replace, x)

    return compute


@StaticRegexReplace.kernel()
def _static_regex_replace_kernel(ctx: KernelContext) -> Callable:
    replace = _compile_replacer(ctx.attr("pattern").encode("utf-8"), ctx.attr("rewrite").encode("utf-8"),
                                ctx.attr("replace_global"), ctx.op)
    return lambda x: _apply_replacer(replace, x)


def regex_replace(input: Any, pattern: Any, rewrite: Any, replace_global: bool = True,  # noqa: A002
                  name: Optional[str] = None) -> Any:
    """Replaces the first (or, with `replace_global`, every) match of the regular expression
    `pattern` in each string with `rewrite` (\\1..\\9 refer to groups). Python strings for
    `pattern` and `rewrite` compile once (StaticRegexReplace); tensors are read each step."""
    if isinstance(pattern, (str, bytes)) and isinstance(rewrite, (str, bytes)):
        as_text = lambda v: v.decode("utf-8") if isinstance(v, bytes) else v  # noqa: E731
        return apply_op(StaticRegexReplace, name=name, input=input, pattern=as_text(pattern),
                        rewrite=as_text(rewrite), replace_global=replace_global)
    return apply_op(RegexReplace, name=name, input=input, pattern=pattern, rewrite=rewrite,
                    replace_global=replace_global)


# ---------------------------------------------------------------------------------------------
# RegexFullMatch, StaticRegexFullMatch (TF's Saver builds one to pick a shard's temp suffix, so
# every TF-written SavedModel and sharded meta graph holds it)
# ---------------------------------------------------------------------------------------------
RegexFullMatch = define_op("RegexFullMatch", inputs=["input: string", "pattern: string"], outputs=["output: bool"],
                           shape_fn=_util.unchanged)
StaticRegexFullMatch = define_op("StaticRegexFullMatch", inputs=["input: string"], outputs=["output: bool"],
                                 attrs=["pattern: string"], shape_fn=_util.unchanged)
RegexFullMatch.not_differentiable()
StaticRegexFullMatch.not_differentiable()


def _compile_matcher(pattern: bytes, op: Optional[Operation] = None) -> Callable:
    try:
        regex = re.compile(pattern)  # RE2 semantics: "." does not match a newline
    except re.error as err:
        raise _invalid(f"Invalid pattern: {pattern.decode('utf-8', 'replace')}, error: {err}", op) from None
    return lambda x: np.array([regex.fullmatch(v) is not None for v in x.ravel().tolist()],
                              dtype=bool).reshape(x.shape)


@RegexFullMatch.kernel()
def _regex_full_match_kernel(ctx: KernelContext) -> Callable:
    cache: dict[bytes, Callable] = {}

    def compute(x: Any, pattern: Any) -> Any:
        if pattern.ndim != 0:
            raise _invalid("Pattern must be scalar, but received " + str(list(pattern.shape)))
        key = pattern.item()
        match = cache.get(key)
        if match is None:
            match = cache[key] = _compile_matcher(key)
        return match(x)

    return compute


@StaticRegexFullMatch.kernel()
def _static_regex_full_match_kernel(ctx: KernelContext) -> Callable:
    return _compile_matcher(ctx.attr("pattern").encode("utf-8"), ctx.op)


def regex_full_match(input: Any, pattern: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Whether each string matches the regular expression `pattern` as a whole. A Python string
    pattern compiles once (StaticRegexFullMatch); a tensor is read each step."""
    if isinstance(pattern, (str, bytes)):
        text = pattern.decode("utf-8") if isinstance(pattern, bytes) else pattern
        return apply_op(StaticRegexFullMatch, name=name, input=input, pattern=text)
    return apply_op(RegexFullMatch, name=name, input=input, pattern=pattern)


# ---------------------------------------------------------------------------------------------
# StringFormat: tensors rendered into a template, in TF's numpy-like layout
# ---------------------------------------------------------------------------------------------
def _format_shape(op: Operation) -> list[TensorShape]:
    template, placeholder = op._get_attr("template"), op._get_attr("placeholder")
    expected = template.count(placeholder)
    if expected != len(op.inputs):
        raise shape_error(op, f"num placeholders in template and num inputs must match: "
                              f"{expected} vs. {len(op.inputs)}")
    return [TensorShape([])]


StringFormat = define_op("StringFormat", inputs=["inputs: T"], outputs=["output: string"],
                         attrs=["T: list(type) >= 0", "template: string = '%s'",
                                "placeholder: string = '%s'", "summarize: int = 3"],
                         shape_fn=_format_shape)
StringFormat.not_differentiable()

_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"', ord("'"): "\\'",
            ord("\\"): "\\\\"}


def _quoted(value: bytes) -> str:
    """A string element as TF prints it: in double quotes, C escapes for quotes, backslash and
    control bytes (\\ooo), bytes >= 0x80 left as they are (decoded latin-1 to survive the str)."""
    out = []
    for b in value:
        if b in _ESCAPES:
            out.append(_ESCAPES[b])
        elif b < 0x20 or b == 0x7F:
            out.append(f"\\{b:03o}")
        else:
            out.append(chr(b))
    return '"' + "".join(out) + '"'


def _shortest_float(v: Any, digits: tuple[int, int], as_type: Callable) -> str:
    """printf %g with the fewer digits when that reads back to the same value, else the more
    (float32 and float16: 6 or 9 digits; float64: 15 or 17), as TF prints floats."""
    f = float(v)
    if f != f:
        return "-nan" if np.signbit(v) else "nan"
    short = "%.*g" % (digits[0], f)
    return short if f in (float("inf"), float("-inf")) or as_type(float(short)) == as_type(f) \
        else "%.*g" % (digits[1], f)


def _element_formatter(dtype: np.dtype) -> Callable[[Any], str]:
    kind = dtype.kind
    if kind in "OS":
        return lambda v: _quoted(v if isinstance(v, bytes) else str(v).encode("utf-8"))
    if kind == "b":
        return lambda v: "1" if v else "0"
    if kind in "iu":
        return lambda v: str(int(v))
    if kind == "f" and dtype.itemsize == 8:
        return lambda v: _shortest_float(v, (15, 17), float)
    if kind == "f":
        return lambda v: _shortest_float(v, (6, 9), np.float32)
    return lambda v: "?"  # complex and other types print as '?' in TF


def format_tensor(value: Any, summarize: int) -> str:
    """A tensor in TF's StringFormat/tf.print layout: nested brackets, rows on their own lines
    (blank lines between higher-rank blocks), and per dimension only the first and last
    `summarize` entries around '...' when it has more than 2 * summarize (-1: show all)."""
    arr = np.asarray(value) if not isinstance(value, bytes) else to_object_array([value], ())
    limit = arr.size if summarize < 0 else min(summarize, arr.size)
    element = _element_formatter(arr.dtype)
    if arr.ndim == 0:
        return element(arr.item() if arr.dtype.kind != "S" else arr.tobytes()) if limit else "..."

    def render(sub: np.ndarray, depth: int) -> str:
        n = sub.shape[0]
        sep = " " if sub.ndim == 1 else "\n" * (sub.ndim - 1) + " " * (depth + 1)
        shown: list[Optional[int]] = list(range(n))
        if n > 2 * limit:
            shown = list(range(limit)) + [None] + list(range(n - limit, n))
        parts = []
        for k, i in enumerate(shown):
            if k or i is None:
                parts.append(sep)
            if i is None:
                parts.append("...")
            else:
                parts.append(render(sub[i], depth + 1) if sub.ndim > 1 else element(sub[i]))
        return "[" + "".join(parts) + "]"

    return render(arr, 0)


@StringFormat.kernel()
def _string_format_kernel(ctx: KernelContext) -> Callable:
    template, placeholder, summarize = ctx.attr("template"), ctx.attr("placeholder"), ctx.attr("summarize")
    # an empty placeholder sits before, between and after all characters, as str.count sees it
    parts = template.split(placeholder) if placeholder else ["", *template, ""]
    pieces = [p.encode("utf-8") for p in parts]

    def compute(*inputs: Any) -> Any:
        out = [pieces[0]]
        for piece, value in zip(pieces[1:], inputs):
            out += [format_tensor(value, summarize).encode("latin-1"), piece]
        return to_object_array([b"".join(out)], ())

    return compute


def string_format(template: str, inputs: Any, placeholder: str = "{}", summarize: int = 3,
                  name: Optional[str] = None) -> Any:
    """A scalar string: `template` with each `placeholder` replaced by the next tensor of
    `inputs` (one tensor need not be in a list), showing the first and last `summarize`
    entries of each dimension (-1: all of them)."""
    if is_tensor(inputs):
        inputs = [inputs]
    expected = template.count(placeholder)
    if expected != len(inputs):
        raise ValueError(f"The template expects {expected} tensors, but the inputs only has {len(inputs)}. "
                         "Please ensure the number of placeholders in template matches inputs length.")
    return apply_op(StringFormat, name=name, inputs=list(inputs), template=template,
                    placeholder=placeholder, summarize=summarize)
