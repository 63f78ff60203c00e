"""Image codecs: DecodePng, DecodeJpeg, DecodeAndCropJpeg, ExtractJpegShape, DecodeBmp, DecodeGif,
DecodeImage, EncodePng, EncodeJpeg, EncodeJpegVariableQuality and their TF1 wrappers
(tf.image.decode_png, ..., encode_jpeg; decode_image is in image_impl.py).

Pillow (which comes with tensorboard) parses JPEG, GIF, BMP and 8-bit PNG; 16-bit PNG is
decoded, and every PNG encoded, by ops/kernels/png.py, since Pillow narrows 16-bit colour.
Channel conversions are libpng's as TF configures it: RGB to gray with the weights 0.299 and
0.587 in 15-bit fixed point (truncated), gray to RGB by repetition, opaque alpha added or alpha
dropped; 16-bit samples become 8-bit by keeping the high byte, 8-bit become 16-bit times 257.
Pillow decodes JPEG with libjpeg's accurate integer DCT where TF uses the fast one, so JPEG
pixels may differ from TF's by a few levels (tests/ops/image/test_codecs.py bounds it).
"""
from __future__ import annotations

import io
from typing import Any, Callable, Optional

import numpy as np
from PIL import Image, ImageSequence, UnidentifiedImageError

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import format_dims, invalid, with_rank
from tensorweave.ops.kernels import png as _png

__all__ = ["decode_png", "decode_jpeg", "decode_and_crop_jpeg", "extract_jpeg_shape", "decode_bmp", "decode_gif",
           "encode_png", "encode_jpeg"]


# ---------------------------------------------------------------------------------------------
# Op declarations
# ---------------------------------------------------------------------------------------------
def _decoded_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 0)
    channels = op._get_attr("channels") if "channels" in op.op_def.attrs else 3
    if op.type == "DecodeGif":
        return [TensorShape([None, None, None, 3])]
    if op.type == "DecodeImage" and op._get_attr("expand_animations"):
        return [unknown_shape()]
    return [TensorShape([None, None, channels or None])]


def _encoded_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 3)
    return [TensorShape([])]


_JPEG_DECODE_ATTRS = ["channels: int = 0", "ratio: int = 1", "fancy_upscaling: bool = true",
                      "try_recover_truncated: bool = false", "acceptable_fraction: float = 1.0",
                      "dct_method: string = ''"]
DecodePng = define_op("DecodePng", inputs=["contents: string"], outputs=["image: dtype"],
                      attrs=["channels: int = 0", "dtype: {uint8, uint16} = uint8"], shape_fn=_decoded_shape)
DecodeJpeg = define_op("DecodeJpeg", inputs=["contents: string"], outputs=["image: uint8"],
                       attrs=_JPEG_DECODE_ATTRS, shape_fn=_decoded_shape)
DecodeBmp = define_op("DecodeBmp", inputs=["contents: string"], outputs=["image: uint8"],
                      attrs=["channels: int = 0"], shape_fn=_decoded_shape)
DecodeGif = define_op("DecodeGif", inputs=["contents: string"], outputs=["image: uint8"], shape_fn=_decoded_shape)
DecodeImage = define_op("DecodeImage", inputs=["contents: string"], outputs=["image: dtype"],
                        attrs=["channels: int = 0", "dtype: {uint8, uint16, float32} = uint8",
                               "expand_animations: bool = true"], shape_fn=_decoded_shape)
EncodePng = define_op("EncodePng", inputs=["image: T"], outputs=["contents: string"],
                      attrs=["compression: int = -1", "T: {uint8, uint16} = uint8"], shape_fn=_encoded_shape)
EncodeJpeg = define_op("EncodeJpeg", inputs=["image: uint8"], outputs=["contents: string"],
                       attrs=["format: {'', 'grayscale', 'rgb'} = ''", "quality: int = 95",
                              "progressive: bool = false", "optimize_size: bool = false",
                              "chroma_downsampling: bool = true", "density_unit: {'in', 'cm'} = 'in'",
                              "x_density: int = 300", "y_density: int = 300", "xmp_metadata: string = ''"],
                      shape_fn=_encoded_shape)


def _jpeg_shape_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 0)
    return [TensorShape([3])]


def _crop_window_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[1].shape, 1)
    return _decoded_shape(op)


ExtractJpegShape = define_op("ExtractJpegShape", inputs=["contents: string"], outputs=["image_shape: output_type"],
                             attrs=["output_type: {int32, int64} = int32"], shape_fn=_jpeg_shape_shape)
DecodeAndCropJpeg = define_op("DecodeAndCropJpeg", inputs=["contents: string", "crop_window: int32"],
                              outputs=["image: uint8"], attrs=_JPEG_DECODE_ATTRS, shape_fn=_crop_window_shape)
EncodeJpegVariableQuality = define_op("EncodeJpegVariableQuality", inputs=["images: uint8", "quality: int32"],
                                      outputs=["contents: string"], shape_fn=_encoded_shape)
for _op in (DecodePng, DecodeJpeg, DecodeBmp, DecodeGif, DecodeImage, EncodePng, EncodeJpeg, ExtractJpegShape,
            DecodeAndCropJpeg, EncodeJpegVariableQuality):
    _op.not_differentiable()


# ---------------------------------------------------------------------------------------------
# Channel and depth conversions
# ---------------------------------------------------------------------------------------------
def _to_gray(rgb: np.ndarray) -> np.ndarray:
    """libpng's rgb_to_gray with TF's weights (0.299, 0.587): 15-bit fixed point, truncated."""
    wide = rgb.astype(np.int64)
    gray = (9798 * wide[..., 0] + 19235 * wide[..., 1] + 3735 * wide[..., 2]) >> 15
    return gray.astype(rgb.dtype)[..., None]


def convert_channels(image: np.ndarray, channels: int, opaque: int) -> np.ndarray:
    """[h, w, n] to [h, w, channels] (0: unchanged)."""
    have = image.shape[-1]
    if channels == 0 or channels == have:
        return image
    color = image[..., :3] if have >= 3 else np.repeat(image[..., :1], 3, axis=-1)
    alpha = image[..., -1:] if have in (2, 4) else np.full(image.shape[:-1] + (1,), opaque, image.dtype)
    if channels == 1:
        return image[..., :1] if have <= 2 else _to_gray(color)
    if channels == 2:
        return np.concatenate([image[..., :1] if have <= 2 else _to_gray(color), alpha], axis=-1)
    if channels == 3:
        return color
    return np.concatenate([color, alpha], axis=-1)


def convert_depth(image: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if image.dtype == dtype:
        return image
    if dtype == np.uint8:
        return (image >> 8).astype(np.uint8)
    if dtype == np.uint16:
        return image.astype(np.uint16) * np.uint16(257)
    return image.astype(np.float32) / np.float32(255 if image.dtype == np.uint8 else 65535)


def _check_channels(op_type: str, channels: int, allowed: tuple[int, ...]) -> None:
    if channels not in allowed:
        raise invalid(f"{op_type}: channels must be one of {', '.join(map(str, allowed))}, got {channels}")


def _pil_array(image: Image.Image) -> np.ndarray:
    """The pixels of a Pillow image as [h, w, channels] uint8 (palettes expanded)."""
    if image.mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    elif image.mode in ("1", "I;16", "I", "F"):
        image = image.convert("L")
    elif image.mode in ("CMYK", "YCbCr", "LAB", "HSV"):
        image = image.convert("RGB")
    elif image.mode == "PA":
        image = image.convert("RGBA")
    array = np.asarray(image)
    return array[..., None] if array.ndim == 2 else array


def _bytes(contents: Any) -> bytes:
    if np.ndim(contents) != 0:
        raise invalid(f"contents must be scalar, got shape {format_dims(np.shape(contents))}")
    value = contents.item() if isinstance(contents, np.ndarray) else contents
    return value.encode() if isinstance(value, str) else bytes(value)


# ---------------------------------------------------------------------------------------------
# Decoders: bytes -> [h, w, c] (GIF: [frames, h, w, 3])
# ---------------------------------------------------------------------------------------------
def _open(data: bytes, fmt: str) -> Image.Image:
    try:
        image = Image.open(io.BytesIO(data), formats=[fmt])
        image.load()
        return image
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as e:
        raise invalid(f"Invalid {fmt} data, size {len(data)}: {e}") from None


def _open_header(data: bytes, fmt: str) -> Image.Image:
    try:
        return Image.open(io.BytesIO(data), formats=[fmt])
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as e:
        raise invalid(f"Invalid {fmt} data, size {len(data)}: {e}") from None


def decode_png_bytes(data: bytes, channels: int, dtype: np.dtype) -> np.ndarray:
    _check_channels("DecodePng", channels, (0, 1, 2, 3, 4))
    try:
        header = _png.PngHeader(data)
        pixels = _png.decode(data) if header.depth == 16 else None
    except ValueError as e:
        raise invalid(f"Invalid PNG data, size {len(data)}: {e}") from None
    if pixels is None:
        pixels = _pil_array(_open(data, "PNG"))
    opaque = 65535 if pixels.dtype == np.uint16 else 255
    return convert_depth(convert_channels(pixels, channels, opaque), dtype)


def decode_jpeg_bytes(data: bytes, channels: int, ratio: int = 1) -> np.ndarray:
    _check_channels("DecodeJpeg", channels, (0, 1, 3))
    if ratio not in (1, 2, 4, 8):
        raise invalid(f"DecodeJpeg: ratio must be 1, 2, 4, or 8, got {ratio}")
    image = _open(data, "JPEG")
    if channels == 1 and image.mode != "L":
        # As libjpeg asked for grayscale: the luma plane itself, not a weighted RGB sum.
        image = Image.open(io.BytesIO(data), formats=["JPEG"])
        image.draft("L", image.size)
        image.load()
    if ratio != 1:
        image = Image.open(io.BytesIO(data), formats=["JPEG"])
        image.draft(image.mode if channels != 1 else "L", (-(-image.size[0] // ratio), -(-image.size[1] // ratio)))
        image.load()
    return convert_channels(_pil_array(image), channels, 255)


def decode_bmp_bytes(data: bytes, channels: int) -> np.ndarray:
    _check_channels("DecodeBmp", channels, (0, 1, 3, 4))
    return convert_channels(_pil_array(_open(data, "BMP")), channels, 255)


def decode_gif_bytes(data: bytes) -> np.ndarray:
    image = _open(data, "GIF")
    frames = [np.asarray(frame.convert("RGB")) for frame in ImageSequence.Iterator(image)]
    return np.stack(frames)


def sniff(data: bytes) -> str:
    if data.startswith(_png.SIGNATURE):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith(b"GIF8"):
        return "gif"
    if data.startswith(b"BM"):
        return "bmp"
    raise invalid("Unknown image file format. One of JPEG, PNG, GIF, BMP required.")


def decode_any(data: bytes, channels: int, dtype: np.dtype, expand_animations: bool) -> np.ndarray:
    _check_channels("DecodeImage", channels, (0, 1, 3, 4))
    kind = sniff(data)
    if kind == "png":
        image = decode_png_bytes(data, channels, np.dtype(np.uint16) if dtype == np.uint16 else np.dtype(np.uint8))
    elif kind == "jpeg":
        if channels == 4:
            raise invalid("Got 4 channels for JPEG; channels must be 0, 1 or 3")
        image = decode_jpeg_bytes(data, channels)
    elif kind == "bmp":
        image = decode_bmp_bytes(data, channels)
    else:
        if channels not in (0, 3):
            raise invalid(f"channels must be 0 or 3 for GIF, got {channels}")
        image = decode_gif_bytes(data)
        if not expand_animations:
            image = image[0]
    return convert_depth(image, dtype)


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------
def _string(value: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = value
    return out


@DecodePng.kernel()
def _decode_png_kernel(ctx: KernelContext) -> Callable[..., Any]:
    channels, dtype = ctx.attr("channels"), np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
    return lambda contents: decode_png_bytes(_bytes(contents), channels, dtype)


@DecodeJpeg.kernel()
def _decode_jpeg_kernel(ctx: KernelContext) -> Callable[..., Any]:
    channels, ratio = ctx.attr("channels"), ctx.attr("ratio")
    return lambda contents: decode_jpeg_bytes(_bytes(contents), channels, ratio)


@ExtractJpegShape.kernel()
def _extract_jpeg_shape_kernel(ctx: KernelContext) -> Callable[..., Any]:
    dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)

    def kernel(contents: Any) -> np.ndarray:
        image = _open_header(_bytes(contents), "JPEG")   # reads the header, decodes nothing
        channels = {"L": 1, "CMYK": 4}.get(image.mode, 3)
        return np.array([image.size[1], image.size[0], channels], dtype)

    return kernel


@DecodeAndCropJpeg.kernel()
def _decode_and_crop_jpeg_kernel(ctx: KernelContext) -> Callable[..., Any]:
    channels, ratio = ctx.attr("channels"), ctx.attr("ratio")

    def kernel(contents: Any, window: Any) -> np.ndarray:
        window = np.asarray(window)
        if window.shape != (4,):
            raise invalid(f"crop_window must be shape [4], got {format_dims(window.shape)}")
        image = decode_jpeg_bytes(_bytes(contents), channels, ratio)
        y, x, h, w = (int(v) for v in window)
        if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > image.shape[0] or x + w > image.shape[1]:
            raise invalid(f"Invalid JPEG data or crop window, data size {len(_bytes(contents))}: crop window "
                          f"{window.tolist()} does not fit in the {image.shape[0]}x{image.shape[1]} image")
        return image[y:y + h, x:x + w]

    return kernel


@DecodeBmp.kernel()
def _decode_bmp_kernel(ctx: KernelContext) -> Callable[..., Any]:
    channels = ctx.attr("channels")
    return lambda contents: decode_bmp_bytes(_bytes(contents), channels)


@DecodeGif.kernel()
def _decode_gif_kernel(ctx: KernelContext) -> Callable[..., Any]:
    return lambda contents: decode_gif_bytes(_bytes(contents))


@DecodeImage.kernel()
def _decode_image_kernel(ctx: KernelContext) -> Callable[..., Any]:
    channels, expand = ctx.attr("channels"), bool(ctx.attr("expand_animations"))
    dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
    return lambda contents: decode_any(_bytes(contents), channels, dtype, expand)


def _check_image(op_type: str, image: np.ndarray, allowed: tuple[int, ...]) -> None:
    if image.ndim != 3:
        raise invalid(f"{op_type}: image must be 3-dimensional, got {format_dims(image.shape)}")
    if image.shape[-1] not in allowed:
        raise invalid(f"{op_type}: image must have {' or '.join(map(str, allowed))} channels, got "
                      f"{format_dims(image.shape)}")


@EncodePng.kernel()
def _encode_png_kernel(ctx: KernelContext) -> Callable[..., Any]:
    compression = ctx.attr("compression")
    if not -1 <= compression <= 9:
        raise invalid(f"EncodePng: compression should be in [-1,9], got {compression}")

    def kernel(image: np.ndarray) -> np.ndarray:
        _check_image("EncodePng", image, (1, 2, 3, 4))
        return _string(_png.encode(np.ascontiguousarray(image), compression))

    return kernel


def jpeg_bytes(image: np.ndarray, fmt: str = "", **options: Any) -> np.ndarray:
    _check_image("EncodeJpeg", image, (1, 3))
    want = {"grayscale": 1, "rgb": 3}.get(fmt, image.shape[-1])
    if want != image.shape[-1]:
        raise invalid(f"EncodeJpeg: format '{fmt}' needs {want} channels, got {image.shape[-1]}")
    pil = Image.fromarray(image[..., 0] if want == 1 else image, "L" if want == 1 else "RGB")
    out = io.BytesIO()
    pil.save(out, "JPEG", **options)
    return _string(out.getvalue())


@EncodeJpegVariableQuality.kernel()
def _encode_jpeg_variable_quality_kernel(ctx: KernelContext) -> Callable[..., Any]:
    def kernel(image: np.ndarray, quality: Any) -> np.ndarray:
        if np.ndim(quality) != 0:
            raise invalid(f"quality must be a scalar, got shape {format_dims(np.shape(quality))}")
        if not 0 <= int(quality) <= 100:
            raise invalid(f"quality must be in [0,100], got {int(quality)}")
        return jpeg_bytes(image, quality=int(quality), dpi=(300, 300), subsampling=2)
    return kernel


@EncodeJpeg.kernel()
def _encode_jpeg_kernel(ctx: KernelContext) -> Callable[..., Any]:
    fmt, quality = ctx.attr("format"), ctx.attr("quality")
    if not 0 <= quality <= 100:
        raise invalid(f"EncodeJpeg: quality must be in [0,100], got {quality}")
    density = (ctx.attr("x_density"), ctx.attr("y_density"))
    if ctx.attr("density_unit") == "cm":
        density = (density[0] * 2.54, density[1] * 2.54)
    options = {"quality": quality, "progressive": bool(ctx.attr("progressive")),
               "optimize": bool(ctx.attr("optimize_size")), "dpi": density,
               "subsampling": 2 if ctx.attr("chroma_downsampling") else 0}

    return lambda image: jpeg_bytes(image, fmt, **options)


# ---------------------------------------------------------------------------------------------
# TF1 wrappers
# ---------------------------------------------------------------------------------------------
def decode_png(contents: Any, channels: int = 0, dtype: Any = _dtypes.uint8, name: Optional[str] = None) -> Any:
    """Decodes a PNG-encoded scalar string to a [height, width, channels] uint8/uint16 tensor."""
    return apply_op(DecodePng, name=name, contents=contents, channels=channels, dtype=_dtypes.as_dtype(dtype))


def decode_jpeg(contents: Any, channels: int = 0, ratio: int = 1, fancy_upscaling: bool = True,
                try_recover_truncated: bool = False, acceptable_fraction: float = 1.0, dct_method: str = "",
                name: Optional[str] = None) -> Any:
    """Decodes a JPEG-encoded scalar string to a [height, width, channels] uint8 tensor."""
    return apply_op(DecodeJpeg, name=name, contents=contents, channels=channels, ratio=ratio,
                    fancy_upscaling=fancy_upscaling, try_recover_truncated=try_recover_truncated,
                    acceptable_fraction=acceptable_fraction, dct_method=dct_method)


def extract_jpeg_shape(contents: Any, output_type: Any = _dtypes.int32, name: Optional[str] = None) -> Any:
    """[height, width, channels] of a JPEG-encoded image, from its header."""
    return apply_op(ExtractJpegShape, name=name, contents=contents, output_type=_dtypes.as_dtype(output_type))


def decode_and_crop_jpeg(contents: Any, crop_window: Any, channels: int = 0, ratio: int = 1,
                         fancy_upscaling: bool = True, try_recover_truncated: bool = False,
                         acceptable_fraction: float = 1.0, dct_method: str = "", name: Optional[str] = None) -> Any:
    """Decodes the crop_window [y, x, height, width] of a JPEG-encoded image."""
    return apply_op(DecodeAndCropJpeg, name=name, contents=contents, crop_window=crop_window, channels=channels,
                    ratio=ratio, fancy_upscaling=fancy_upscaling, try_recover_truncated=try_recover_truncated,
                    acceptable_fraction=acceptable_fraction, dct_method=dct_method)


def encode_jpeg_variable_quality(images: Any, quality: Any, name: Optional[str] = None) -> Any:
    return apply_op(EncodeJpegVariableQuality, name=name, images=images, quality=quality)


def decode_bmp(contents: Any, channels: int = 0, name: Optional[str] = None) -> Any:
    """Decodes a BMP-encoded scalar string to a [height, width, channels] uint8 tensor."""
    return apply_op(DecodeBmp, name=name, contents=contents, channels=channels)


def decode_gif(contents: Any, name: Optional[str] = None) -> Any:
    """Decodes a GIF-encoded scalar string to a [num_frames, height, width, 3] uint8 tensor."""
    return apply_op(DecodeGif, name=name, contents=contents)


def decode_image_op(contents: Any, channels: int, dtype: Any, expand_animations: bool,
                    name: Optional[str] = None) -> Any:
    return apply_op(DecodeImage, name=name, contents=contents, channels=channels, dtype=_dtypes.as_dtype(dtype),
                    expand_animations=expand_animations)


def encode_png(image: Any, compression: int = -1, name: Optional[str] = None) -> Any:
    """PNG-encodes a [height, width, channels] uint8 or uint16 image (1 to 4 channels)."""
    return apply_op(EncodePng, name=name, image=image, compression=compression)


def encode_jpeg(image: Any, format: str = "", quality: int = 95, progressive: bool = False,  # noqa: A002
                optimize_size: bool = False, chroma_downsampling: bool = True, density_unit: str = "in",
                x_density: int = 300, y_density: int = 300, xmp_metadata: str = "",
                name: Optional[str] = None) -> Any:
    """JPEG-encodes a [height, width, channels] uint8 image (1 or 3 channels)."""
    return apply_op(EncodeJpeg, name=name, image=image, format=format, quality=quality, progressive=progressive,
                    optimize_size=optimize_size, chroma_downsampling=chroma_downsampling,
                    density_unit=density_unit, x_density=x_density, y_density=y_density, xmp_metadata=xmp_metadata)
