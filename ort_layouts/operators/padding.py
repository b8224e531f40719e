"""DML_OPERATOR_PADDING1: the DirectML operator behind ONNX Pad, and its reference execution.

The interior is the input; the borders follow the mode. CONSTANT writes ``padding_value_bytes``
(the tensor's own type, so NaN payloads survive), EDGE repeats the edge, WRAP repeats the
tensor, REFLECTION mirrors without repeating the edge, SYMMETRIC mirrors with it; padding wider
than the tensor folds periodically, exactly as ``numpy.pad``'s "edge", "wrap", "reflect" and
"symmetric".
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import numbers
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ort_layouts._errors import DataTypeError, DescriptorError, NotExpressibleError, ShapeError, a_type
from ort_layouts.descriptors.buffer_tensor import (
    MAX_DIMENSION_COUNT,
    BufferTensorDesc,
    check_cpp_name,
    cpp_struct,
    full_index,
)
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import int_tuple, is_int_tuple, is_integer
from ort_layouts.descriptors.size import packed_strides
from ort_layouts.operators.desc_fields import (
    check_tensor,
    read_desc_dict,
    read_enum,
    read_ints,
    read_tensor,
)
from ort_layouts.operators.ep_tensor import MIN_DIMENSION_COUNT
from ort_layouts.reference.buffers import check_views, is_nibble
from ort_layouts.reference.compare import views_equal
from ort_layouts.reference.copy import strided_copy

__all__ = ["PADDING1", "PaddingMode", "PaddingOp", "check_value", "empty_axes_reason", "ep_pads",
           "ep_value_union", "padding_for",
           "source_index", "split_onnx_pads"]

PADDING1 = "DML_OPERATOR_PADDING1"
_MAX_PYTHON_RUNS = 64  # border runs copied one slice each; more than that use one gather


class PaddingMode(enum.IntEnum):
    """DML_PADDING_MODE, with DirectML's values."""

    CONSTANT = 0
    EDGE = 1
    REFLECTION = 2
    SYMMETRIC = 3  # DirectML only: no ONNX mode maps to it
    WRAP = 4  # DML_FEATURE_LEVEL_6_4

    @classmethod
    def _missing_(cls, value: object) -> PaddingMode:
        raise ShapeError(
            f"{value!r} is not a DML_PADDING_MODE value; valid: { {m.name: m.value for m in cls} }")

    @property
    def dml_name(self) -> str:
        """The C++ enumerator, e.g. ``DML_PADDING_MODE_REFLECTION``."""
        return f"DML_PADDING_MODE_{self.name}"

    @property
    def onnx_name(self) -> str | None:
        """The ONNX Pad mode that maps to this one (None for SYMMETRIC)."""
        return _TO_ONNX.get(self)

    @classmethod
    def from_onnx(cls, mode: str | bytes) -> PaddingMode:
        """The DirectML mode for an ONNX Pad ``mode`` attribute.

        >>> PaddingMode.from_onnx("reflect")
        <PaddingMode.REFLECTION: 2>
        """
        key = mode.decode() if isinstance(mode, bytes) else mode
        try:
            return _FROM_ONNX[key]
        except (KeyError, TypeError):
            raise ShapeError(
                f"Pad mode {mode!r} is not an ONNX mode; valid: {sorted(_FROM_ONNX)}") from None


_FROM_ONNX = {"constant": PaddingMode.CONSTANT, "edge": PaddingMode.EDGE,
              "reflect": PaddingMode.REFLECTION, "wrap": PaddingMode.WRAP}
_TO_ONNX = {v: k for k, v in _FROM_ONNX.items()}


def check_value(value: float | int, data_type: DataType | str, *, what: str = "value",
                text: str | None = None) -> float | int:
    """``value`` as a constant of ``data_type`` (a Pad's constant), refused where that type cannot
    hold it: an integer type takes whole numbers within its range; a float type takes any
    number it does not turn into infinity or zero (a decimal is rounded to the nearest value
    of the type, as IEEE parsing does; NaN and infinities given as such are kept).

    Args:
        value: the number.
        data_type: the type that must hold it.
        what: names the value in messages ("Pad value").
        text: the value as the user wrote it, for messages (default: its repr); a nonzero
            decimal that ``value`` (its float) lost to 0 or -0 (``1e-400``) is refused.

    Returns:
        ``value``, an int for an integer type.

    Raises:
        ShapeError: a value the type cannot hold, naming the type's range; a ``text`` that
            writes a nonzero number for a ``value`` of 0 (an underflow before the call), naming
            the float type's smallest subnormal, or for an integer type its range.
        DataTypeError: an unknown data type.
    """
    dt = DataType.coerce(data_type)
    name = dt.name.lower()
    shown = repr(value) if text is None else text
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ShapeError(f"{what} {shown} is not a number")
    np_type = dt.to_numpy()
    if value == 0 and _writes_nonzero(text):  # a decimal that parsed to 0 (or -0)
        if np.issubdtype(np_type, np.integer):
            info = np.iinfo(np_type)
            raise ShapeError(f"{what} {shown} is not a whole number; {name} holds the integers "
                             f"{info.min}..{info.max}")
        raise ShapeError(f"{what} {shown} is too small for {name} (smallest nonzero "
                         f"{float(np.finfo(np_type).smallest_subnormal):g}); it would become 0")
    if np.issubdtype(np_type, np.integer):
        info = np.iinfo(np_type)
        if isinstance(value, numbers.Integral):
            whole = int(value)
        else:
            f = float(value)
            if not math.isfinite(f) or not f.is_integer():
                raise ShapeError(f"{what} {shown} is not a whole number; {name} holds the integers "
                                 f"{info.min}..{info.max}")
            whole = int(f)
        if not info.min <= whole <= info.max:
            raise ShapeError(f"{what} {shown} does not fit {name}; {name} holds {info.min}..{info.max}")
        return whole
    finfo = np.finfo(np_type)
    try:
        f = float(value)
    except OverflowError:  # an int too large for any float
        raise ShapeError(f"{what} {shown} is out of {name}'s range (largest finite "
                         f"{float(finfo.max):g}); it would become inf") from None
    if math.isnan(f) or math.isinf(f):
        return value
    with np.errstate(over="ignore", under="ignore"):
        cast = np_type.type(f)
    if not np.isfinite(cast):
        raise ShapeError(f"{what} {shown} is out of {name}'s range (largest finite {float(finfo.max):g}); "
                         "it would become inf")
    if f != 0 and cast == 0:
        raise ShapeError(f"{what} {shown} is too small for {name} (smallest nonzero "
                         f"{float(finfo.smallest_subnormal):g}); it would become 0")
    return value



# a decimal as float() reads one: its digits and point (the mantissa), then an exponent
_DECIMAL = re.compile(r"\s*[+-]?(\d*\.?\d*)(?:[eE][+-]?\d+)?\s*")


def _writes_nonzero(text: str | None) -> bool:
    """Whether ``text`` is a decimal whose mantissa has a nonzero digit, whatever its exponent
    (``1e-99999999999999999999`` too, beyond what ``decimal`` reads)."""
    if text is None:
        return False
    match = _DECIMAL.fullmatch(text)
    return match is not None and any(c in "123456789" for c in match.group(1))


def _value_bytes(value: Any, dtype: np.dtype[Any]) -> bytes:
    """The Pad constant as little-endian bytes of ``dtype`` (exact for same-typed values)."""
    if type(value) is int and value == 0 and dtype.kind in "biuf":  # the default: zero bits
        return bytes(dtype.itemsize)
    little = dtype.newbyteorder("<")
    if isinstance(value, (bytes, bytearray)):
        if len(value) != dtype.itemsize:
            raise ShapeError(
                f"Pad value {bytes(value).hex()} has {len(value)} bytes; {dtype.name} needs {dtype.itemsize}")
        return bytes(value)
    arr = np.asarray(value)
    if arr.size != 1:
        raise ShapeError(f"Pad value {value!r} is not a scalar")
    if arr.dtype == dtype:
        return arr.reshape(()).astype(little).tobytes()
    if arr.dtype.kind not in "biuf":
        raise ShapeError(f"Pad value {value!r} is not a number")
    if arr.dtype.kind == "b":  # a bool tensor's constant (True, np.bool_): its 0 or 1
        arr = arr.astype(np.uint8)
    number = check_value(arr.reshape(()).item(), DataType.from_numpy(dtype), what="Pad value")
    with np.errstate(over="ignore", under="ignore"):
        return np.asarray(number).astype(little).tobytes()


def _nibble_bytes(value: Any, data_type: DataType) -> bytes:
    """The constant of a 4-bit Pad as the one byte PADDING1 reads its low nibble from: a whole
    number in the type's range (UINT4 0..15, INT4 -8..7, two's complement), or one byte (none:
    b"", the zero constant)."""
    if isinstance(value, (bytes, bytearray)):
        if len(value) > 1:
            raise ShapeError(f"Pad value {bytes(value).hex()} has {len(value)} bytes; {data_type.name} "
                             "takes 1 (its low nibble is the constant), or none for 0")
        return bytes([value[0] & 0x0F]) if value else b""
    low, high = (-8, 7) if data_type == DataType.INT4 else (0, 15)
    whole = None
    if is_integer(value):
        whole = int(value)
    elif isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value).is_integer():
        whole = int(float(value))  # a whole float: 3.0
    if whole is None or not low <= whole <= high:
        raise ShapeError(f"Pad value {value!r:.80} does not fit {data_type.name.lower()}; valid: the "
                         f"integers {low}..{high}, or one byte (its low nibble)")
    return bytes([whole & 0x0F])


def split_onnx_pads(
    pads: Sequence[int], rank: int, axes: Sequence[int] | None = None
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """ONNX ``pads`` ([x1_begin, x2_begin, ..., x1_end, x2_end, ...], over ``axes`` when given,
    negative axes allowed) as full-rank (begins, ends).

    >>> split_onnx_pads([1, 2, 3, 4], 3, axes=[-1, 0])
    ((2, 0, 1), (4, 0, 3))
    """
    if is_int_tuple(pads) and type(rank) is int and (axes is None or is_int_tuple(axes)):  # a Case's
        return _cached_split(pads, rank, axes)
    return _split(pads, rank, axes)


def _split(pads: Sequence[int], rank: int,
           axes: Sequence[int] | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:func:`split_onnx_pads`, computed."""
    values = list(int_tuple(pads, "pads"))
    axis_list = list(range(rank)) if axes is None else list(int_tuple(axes, "Pad axes"))
    for a in axis_list:
        if not -rank <= a < rank:
            raise ShapeError(f"Pad axis {a} is out of range for rank {rank} (valid: {-rank}..{rank - 1})")
    norm = [a % rank for a in axis_list]
    if len(set(norm)) != len(norm):
        raise ShapeError(f"Pad axes {axis_list} repeat an axis")
    if len(values) != 2 * len(norm):
        raise ShapeError(
            f"pads {values} has {len(values)} entries; {2 * len(norm)} expected "
            f"(a begin and an end for each of {len(norm)} axes)")
    begins, ends = [0] * rank, [0] * rank
    for i, a in enumerate(norm):
        begins[a] = values[i]
        ends[a] = values[len(norm) + i]
    return tuple(begins), tuple(ends)


# outputs up to this many elements are written whole before their interior (a large one is
# written once: its borders, then its interior)
_SMALL_ELEMENTS = 1 << 16

# the split depends on the pads, rank and axes alone: cases of every data type share it
_cached_split = functools.lru_cache(maxsize=4096)(_split)


def empty_axes_reason(axes: Sequence[int] | None) -> str:
    """Why the DML EP cannot run a Pad of an empty ``axes`` input ("" where ``axes`` is not
    empty): ONNX pads no axis then, but the EP's ``PaddingHelper`` (opset 18 on) reads empty axes
    as every axis (``HandleEmptyAxes``) and then refuses the 0 pads for them."""
    if axes is None or len(axes) > 0:
        return ""
    return ("an empty axes input: the DML EP's PaddingHelper reads it as every axis (HandleEmptyAxes) and "
            "then refuses 0 pads for them (ML_CHECK_VALID_ARGUMENT(axes.size() * 2 == padding.size()) in "
            "OperatorHelper.cpp), so the DML EP cannot run this Pad; ONNX pads no axis")


@dataclasses.dataclass(frozen=True, slots=True)
class PaddingOp:
    """DML_PADDING1_OPERATOR_DESC: input and output descriptors, per-axis padding, mode, value.

    ``padding_value_bytes`` holds the constant in the tensor's own data type (little-endian),
    so NaN payloads and -0.0 survive exactly. ``padding_value_union`` holds PaddingValue's bytes
    where the DML EP writes other bytes than those (b"" elsewhere): for a float16 Pad before
    opset 11, whose constant is the float ``value`` attribute, ``CastToClampedScalarUnion<float>``
    writes the float into the union's ``Float32`` member, so these are its float32 bytes
    (:func:`ep_value_union`); the reference executor pads with the constant itself.
    """

    input: BufferTensorDesc
    output: BufferTensorDesc
    start_padding: tuple[int, ...]
    end_padding: tuple[int, ...]
    mode: PaddingMode = PaddingMode.CONSTANT
    padding_value_bytes: bytes = b""
    padding_value_union: bytes = b""

    def __post_init__(self) -> None:
        check_tensor(self.input, "PaddingOp input")
        check_tensor(self.output, "PaddingOp output")
        if not isinstance(self.padding_value_bytes, (bytes, bytearray)):
            raise DescriptorError("padding-value", self.padding_value_bytes,
                                  f"padding_value_bytes {self.padding_value_bytes!r:.80} is "
                                  f"{a_type(self.padding_value_bytes)}; valid: bytes (the constant's "
                                  "little-endian bytes, b'' for 0)")
        object.__setattr__(self, "padding_value_bytes", bytes(self.padding_value_bytes))
        union = self.padding_value_union
        if not isinstance(union, (bytes, bytearray)) or len(union) > 8:
            raise DescriptorError("padding-value", union,
                                  f"padding_value_union {union!r:.80} is not valid; valid: bytes, at "
                                  "most the 8 of DML_SCALAR_UNION (b'' when it holds the constant)")
        object.__setattr__(self, "padding_value_union", bytes(union))
        object.__setattr__(self, "mode", PaddingMode(self.mode))
        object.__setattr__(self, "start_padding", int_tuple(self.start_padding, "start_padding"))
        object.__setattr__(self, "end_padding", int_tuple(self.end_padding, "end_padding"))
        n = self.input.dimension_count
        if not (len(self.start_padding) == len(self.end_padding) == n == self.output.dimension_count):
            raise ShapeError(
                f"padding has {len(self.start_padding)}/{len(self.end_padding)} axes, input {n}, "
                f"output {self.output.dimension_count}: all must match")
        for i, (a, s, e, o) in enumerate(zip(self.input.sizes, self.start_padding, self.end_padding,
                                             self.output.sizes, strict=True)):
            if s < 0 or e < 0:
                raise NotExpressibleError(f"padding {s}/{e} at axis {i} is negative")
            if a + s + e != o:
                raise ShapeError(f"output size {o} at axis {i} is not {a} + {s} + {e}")
        if self.input.data_type != self.output.data_type:
            raise ShapeError("input and output data types differ")

    @classmethod
    def from_onnx(
        cls,
        input: BufferTensorDesc,
        pads: Sequence[int],
        *,
        mode: str | PaddingMode = "constant",
        value: Any = 0,
        axes: Sequence[int] | None = None,
        min_dimension_count: int = MIN_DIMENSION_COUNT,
    ) -> PaddingOp:
        """What the DML EP builds for ONNX ``Pad(input, pads, value, axes, mode=mode)``.

        The input is coerced to ``min_dimension_count`` dimensions (leading 1s, stride 0) and the
        padding gets leading zeros; a packed input has no strides, as the EP's has none. Negative
        pads (cropping) raise NotExpressibleError: DirectML's start/end padding is unsigned. A
        4-bit input (UINT4, INT4) takes a whole ``value`` in its range (0..15, -8..7) or one byte,
        whose low nibble is the constant.

        Raises:
            DescriptorError: ``input`` is no BufferTensorDesc, or ``min_dimension_count`` is not
                an integer 1..8 (DirectML's DimensionCount, DML_TENSOR_DIMENSION_COUNT_MAX1).
            NotExpressibleError: a negative pad, or an empty ``axes`` (:func:`empty_axes_reason`).
            ShapeError: pads, axes, mode or value that are not valid.

        >>> from ort_layouts import BufferTensorDesc
        >>> op = PaddingOp.from_onnx(BufferTensorDesc("float32", (3, 4)), [1, 2, 3, 4])
        >>> op.input.sizes, op.start_padding, op.end_padding, op.output.sizes
        ((1, 1, 3, 4), (0, 0, 1, 2), (0, 0, 3, 4), (1, 1, 7, 10))
        """
        check_tensor(input, "Pad input")
        pad_mode = PaddingMode.from_onnx(mode) if isinstance(mode, str) else PaddingMode(mode)
        begins, ends = split_onnx_pads(pads, input.dimension_count, axes)
        empty = empty_axes_reason(axes)
        if empty:
            raise NotExpressibleError(empty)
        negative = [f"{side} of axis {i} is {v}" for side, values in (("begin", begins), ("end", ends))
                    for i, v in enumerate(values) if v < 0]
        if negative:
            raise NotExpressibleError(
                f"pads {list(pads)} crop ({', '.join(negative)}); DirectML's PADDING1 takes unsigned "
                "start/end padding (the DML EP does not take such a Pad before opset 11, and from 11 "
                "passes the pads wrapped to uint32, which DirectML's documentation gives no meaning)")
        if not is_integer(min_dimension_count) or not 1 <= min_dimension_count <= MAX_DIMENSION_COUNT:
            raise DescriptorError("dimension-count", min_dimension_count,
                                  f"min_dimension_count {min_dimension_count!r:.80} is not valid; valid: an "
                                  f"integer 1..{MAX_DIMENSION_COUNT} (DirectML's largest DimensionCount)")
        coerced = input.coerce_rank(int(min_dimension_count))
        if coerced.strides is not None and input.effective_strides == packed_strides(input.sizes):
            # packed, as the EP's input always is: the TensorDesc DmlOperator::Initialize makes of
            # its shape has no strides (TensorDesc.cpp sets them only where it broadcasts)
            coerced = BufferTensorDesc(coerced.data_type, coerced.sizes, None,
                                       coerced.total_tensor_size_in_bytes,
                                       coerced.guaranteed_base_offset_alignment, coerced.flags)
        start, end = ep_pads(begins, ends, input.dimension_count, int(min_dimension_count))
        out_sizes = tuple(n + b + e for n, b, e in zip(coerced.sizes, start, end, strict=True))
        output = BufferTensorDesc(input.data_type, out_sizes)
        if is_nibble(input.data_type):
            value_bytes = _nibble_bytes(value, input.data_type)
        else:
            value_bytes = _value_bytes(value, input.data_type.to_numpy())
        return cls(coerced, output, start, end, pad_mode, value_bytes)

    @property
    def padding_value(self) -> np.generic:
        """The constant as a numpy scalar of the tensor's data type."""
        dtype = self.input.data_type.to_numpy()
        value: np.generic  # numpy types a scalar of a run-time dtype as Any
        if not self.padding_value_bytes:
            value = dtype.type(0)
        else:
            value = np.frombuffer(self.padding_value_bytes, dtype=dtype.newbyteorder("<"))[0]
        return value

    @property
    def dimension_count(self) -> int:
        """DimensionCount of the input and output."""
        return self.input.dimension_count

    def run(self, dst: np.ndarray, src: np.ndarray, *, threads: int | None = None) -> None:
        """PADDING1: the interior in one strided copy, then the borders axis by axis. A small
        output is made at once: CONSTANT writes the value everywhere, then the interior over
        it; another mode gathers the input through each axis's index map."""
        check_views(dst, src, self.output, self.input, threads, writeable=True)
        value = _padding_value(self, dst.dtype)
        interior = tuple(slice(s, s + n) for s, n in zip(self.start_padding, src.shape, strict=True))
        constant = self.mode == PaddingMode.CONSTANT
        if constant and dst.size <= _SMALL_ELEMENTS:  # two numpy calls instead of a few per axis
            dst[...] = value
            strided_copy(dst[interior], src, threads=threads)
            return
        if not constant and src.size and dst.size <= _SMALL_ELEMENTS:
            # one gather instead of a few copies per axis: each output position reads the input
            # at the index its axes' maps give (the borders below, axis by axis, copy the very
            # positions those maps name: what they read was written by an earlier axis or the
            # interior)
            maps = (_mode_map(self.mode, s, n, e)
                    for s, n, e in zip(self.start_padding, src.shape, self.end_padding, strict=True))
            dst[...] = src[np.ix_(*maps)]
            return
        strided_copy(dst[interior], src, threads=threads)
        for moved, s, n, e in _border_regions(self, dst, interior):
            if constant:
                moved[:s] = value
                moved[s + n:] = value
                continue
            runs = _border_runs(self, s, n, e)
            if len(runs) > _MAX_PYTHON_RUNS:
                positions = [p for first, count, _, _ in runs for p in range(first, first + count)]
                sources = [source + k * step for _, count, source, step in runs for k in range(count)]
                moved[positions] = moved[sources]
                continue
            for first, count, source, step in runs:
                np.copyto(moved[first:first + count], _run_source(moved, count, source, step))

    def matches(self, src: np.ndarray, got: np.ndarray, *, threads: int | None = None) -> bool:
        """Whether ``got`` is PADDING1's output: the interior against the input, then the borders
        axis by axis against the positions of ``got`` they copy. Those positions were checked
        before (the interior, or an earlier axis's borders), so each holds the expected value."""
        check_views(got, src, self.output, self.input, threads, writeable=False, names=("got", "src"))
        interior = tuple(slice(s, s + n) for s, n in zip(self.start_padding, src.shape, strict=True))
        if not views_equal(src, got[interior], threads=threads):
            return False
        value = _padding_value(self, got.dtype)
        for moved, s, n, e in _border_regions(self, got, interior):
            if self.mode == PaddingMode.CONSTANT:
                for border in (moved[:s], moved[s + n:]):
                    if border.size and not views_equal(np.broadcast_to(value, border.shape), border,
                                                       threads=threads):
                        return False
                continue
            for first, count, source, step in _border_runs(self, s, n, e):
                if not views_equal(_run_source(moved, count, source, step), moved[first:first + count],
                                   threads=threads):
                    return False
        return True

    def buffer_offsets_in_elements(self, index: Sequence[int]) -> tuple[int | None, int]:
        """(input buffer offset read for the output ``index`` of the ONNX rank, or None where
        a CONSTANT pad writes its value; output buffer offset), in elements. In the other
        modes a border element reads the input element its mode maps it to
        (:func:`source_index`). The index gets the coerced leading axes."""
        full = full_index(index, self.output.sizes, leading=True)
        src = [i - s for i, s in zip(full, self.start_padding, strict=True)]
        if self.mode != PaddingMode.CONSTANT:
            src = [source_index(self.mode, i, n) for i, n in zip(src, self.input.sizes, strict=True)]
        inside = all(0 <= s < n for s, n in zip(src, self.input.sizes, strict=True))
        return (self.input.offset_of(src) if inside else None), self.output.offset_of(full)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (JSON-ready) that :meth:`from_dict` turns back into this operator."""
        return {
            "operator": PADDING1,
            "input": self.input.to_dict(),
            "output": self.output.to_dict(),
            "start_padding": list(self.start_padding),
            "end_padding": list(self.end_padding),
            "mode": self.mode.name,
            "padding_value_hex": self.padding_value_bytes.hex(),
            **({"padding_value_union_hex": self.padding_value_union.hex()}
               if self.padding_value_union else {}),
        }

    def to_cpp(self, name: str = "padding") -> str:
        """C++ initializers of the descriptors and of DML_PADDING1_OPERATOR_DESC.

        PaddingValueDataType is the tensor's data type and PaddingValue (a DML_SCALAR_UNION)
        holds the constant in that type; the union is initialized through its first member,
        ``Bytes[8]``, so the value is exact (NaN payloads, -0.0, float16 bits), with the typed
        value in a comment.
        """
        check_cpp_name(name)
        n = self.dimension_count
        raw = (self.padding_value_union or self.padding_value_bytes
               or bytes(self.input.data_type.to_numpy().itemsize))
        union = ", ".join(f"0x{b:02x}" for b in raw.ljust(8, b"\0"))
        lines = [self.input.to_cpp(f"{name}Input"), self.output.to_cpp(f"{name}Output"),
                 f"UINT {name}StartPadding[{n}] = {{{', '.join(map(str, self.start_padding))}}};",
                 f"UINT {name}EndPadding[{n}] = {{{', '.join(map(str, self.end_padding))}}};",
                 f"DML_SCALAR_UNION {name}Value = {{{{{union}}}}};  // {_scalar_comment(self)}"]
        fields = [(f"&{name}InputTensor", "InputTensor"), (f"&{name}OutputTensor", "OutputTensor"),
                  (self.mode.dml_name, "PaddingMode"),
                  (self.input.data_type.dml_name, "PaddingValueDataType"),
                  (f"{name}Value", "PaddingValue"), (str(n), "DimensionCount"),
                  (f"{name}StartPadding", "StartPadding"), (f"{name}EndPadding", "EndPadding")]
        lines += cpp_struct("DML_PADDING1_OPERATOR_DESC", name, fields)
        lines.append(f"DML_OPERATOR_DESC {name}Op = {{{PADDING1}, &{name}}};")
        return "\n".join(lines)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PaddingOp:
        """Inverse of :meth:`to_dict`.

        Raises:
            DescriptorError: ``data`` is no PADDING1 dict, a field is missing or not what it
                holds (``mode`` a DML_PADDING_MODE name, ``padding_value_hex`` hexadecimal
                bytes), or the operator is not valid (as the constructor checks it).
        """
        fields = read_desc_dict(data, PADDING1, required=("input", "output", "start_padding", "end_padding",
                                                          "mode"),
                                optional=("padding_value_hex", "padding_value_union_hex"))
        value, union = (_hex_field(fields, name) for name in ("padding_value_hex", "padding_value_union_hex"))
        return cls(read_tensor(fields, "input", PADDING1), read_tensor(fields, "output", PADDING1),
                   read_ints(fields, "start_padding", PADDING1), read_ints(fields, "end_padding", PADDING1),
                   read_enum(fields, "mode", PADDING1, PaddingMode), value, union)


def ep_pads(begins: Sequence[int], ends: Sequence[int], rank: int,
            min_dimension_count: int = MIN_DIMENSION_COUNT) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The StartPadding and EndPadding the DML EP gives per-axis ``begins`` and ``ends`` of a
    rank-``rank`` tensor: leading zeros for the dimensions ``DmlOperator::Initialize`` adds (to
    at least ``min_dimension_count``), as ``DmlOperatorPadding`` inserts them.

    >>> ep_pads((1, 2), (3, 4), 2)
    ((0, 0, 1, 2), (0, 0, 3, 4))
    """
    lead = (0,) * max(min_dimension_count - rank, 0)
    return lead + tuple(begins), lead + tuple(ends)


def _hex_field(fields: Mapping[str, Any], name: str) -> bytes:
    """The bytes of a PADDING1 dict's hexadecimal field ``name`` (b"" when absent).

    Raises:
        DescriptorError: it is no hexadecimal bytes."""
    hex_text = fields.get(name, "")
    try:
        value = bytes.fromhex(hex_text) if isinstance(hex_text, str) else None
    except ValueError:
        value = None
    if value is None:
        raise DescriptorError("dict-field", hex_text,
                              f"{PADDING1} {name} {hex_text!r:.80} is no hexadecimal bytes; "
                              "valid: little-endian bytes in hex, e.g. '0000803f' (1.0)")
    return value


def ep_value_union(op: PaddingOp, opset: int | None) -> PaddingOp:
    """``op`` with the PaddingValue the DML EP writes for a Pad of ``opset`` (None: the
    newest): before opset 11 the constant is a float attribute, which
    ``CastToClampedScalarUnion<float>`` writes into ``Float32`` for a FLOAT16 tensor too
    (``DmlOperatorPadding.cpp``); from 11 ``ReadScalarTensorData`` copies the tensor's own bytes."""
    if (opset is None or opset >= 11 or op.input.data_type != DataType.FLOAT16
            or op.mode != PaddingMode.CONSTANT):
        return op
    value = np.frombuffer(op.padding_value_bytes or bytes(2), dtype="<f2").astype("<f4")
    return dataclasses.replace(op, padding_value_union=value.tobytes())


# DML_SCALAR_UNION's member for each data type; float16 has none (its bits go in the low bytes)
_UNION_MEMBERS: dict[DataType, str] = {
    DataType.FLOAT32: "Float32", DataType.FLOAT64: "Float64", DataType.INT8: "Int8",
    DataType.UINT8: "UInt8", DataType.INT16: "Int16", DataType.UINT16: "UInt16", DataType.INT32: "Int32",
    DataType.UINT32: "UInt32", DataType.INT64: "Int64", DataType.UINT64: "UInt64",
}


def _scalar_comment(op: PaddingOp) -> str:
    """The PaddingValue as its DML_SCALAR_UNION member reads it, e.g. ``Float32 = 3.0f``."""
    dtype = op.input.data_type
    value = op.padding_value
    if op.padding_value_union:
        written = np.frombuffer(op.padding_value_union[:4].ljust(4, b"\0"), dtype="<f4")[0]
        return (f"Float32 = {written}f, as the DML EP writes the float attribute for a {dtype.name} "
                f"tensor (CastToClampedScalarUnion<float>); the constant is {dtype.name.lower()} {value}")
    if dtype == DataType.FLOAT16:
        bits = int(np.asarray(value).view(np.uint16))
        return f"float16 {value} (UInt16 = 0x{bits:04x})"
    member = _UNION_MEMBERS.get(dtype, dtype.name)
    if dtype.is_float and not math.isfinite(float(value)):
        return f"{member} {value}"
    if dtype == DataType.FLOAT32:
        return f"{member} = {value}f"
    return f"{member} = {value}"


# ---- PADDING1 on buffers -------------------------------------------------------------------
def _padding_value(op: PaddingOp, dtype: np.dtype[Any]) -> np.generic:
    data = op.padding_value_bytes
    value: np.generic  # numpy types a scalar of a run-time dtype as Any
    if not data:
        value = dtype.type(0)
    elif is_nibble(op.input.data_type):
        value = dtype.type(data[0] & 0x0F)
    elif len(data) != dtype.itemsize:
        raise DataTypeError(
            f"padding_value_bytes {data.hex()} has {len(data)} bytes; {op.input.data_type.name} "
            f"needs {dtype.itemsize}")
    else:
        value = np.frombuffer(data, dtype=dtype.newbyteorder("<"))[0].astype(dtype)
    return value


def source_index(mode: PaddingMode, i: int, n: int) -> int:
    """The input index an output position reads along one axis, ``i`` counted from the first
    input element (negative in the start padding, ``>= n`` in the end padding)."""
    if mode == PaddingMode.EDGE:
        return min(max(i, 0), n - 1)
    if mode == PaddingMode.WRAP:
        return i % n
    if mode == PaddingMode.REFLECTION:
        if n == 1:
            return 0
        m = i % (2 * (n - 1))
        return m if m < n else 2 * (n - 1) - m
    if mode == PaddingMode.SYMMETRIC:
        m = i % (2 * n)
        return m if m < n else 2 * n - 1 - m
    raise ShapeError(f"padding mode {mode!r} has no source index (CONSTANT writes the value)")


def _runs(positions: list[int], sources: list[int]) -> list[tuple[int, int, int, int]]:
    """Split a position -> source map into runs (first position, count, first source, step)
    with step -1, 0 or +1."""
    runs: list[tuple[int, int, int, int]] = []
    k = 0
    while k < len(positions):
        j = k + 1
        step = 0
        if j < len(positions) and positions[j] == positions[k] + 1 and abs(sources[j] - sources[k]) <= 1:
            step = sources[j] - sources[k]
            while (j < len(positions) and positions[j] == positions[j - 1] + 1
                   and sources[j] - sources[j - 1] == step):
                j += 1
        runs.append((positions[k], j - k, sources[k], step))
        k = j
    return runs


def _border_regions(op: PaddingOp, out: np.ndarray, interior: tuple[slice, ...]
                    ) -> Iterator[tuple[np.ndarray, int, int, int]]:
    """PADDING1's borders, axis by axis: for each padded axis, ``(region, s, n, e)`` where
    ``region`` is the output over the already padded extent of the axes before it and the
    interior of the ones after it, with that axis moved first; ``s``/``e`` its start/end padding
    and ``n`` the input size."""
    rank = out.ndim
    for axis in range(rank):
        s, e = op.start_padding[axis], op.end_padding[axis]
        if s == 0 and e == 0:
            continue
        region = out[tuple(slice(None) if i <= axis else interior[i] for i in range(rank))]
        n = interior[axis].stop - interior[axis].start
        yield np.moveaxis(region, axis, 0), s, n, e


def _border_runs(op: PaddingOp, s: int, n: int, e: int) -> tuple[tuple[int, int, int, int], ...]:
    """The copy runs ``(first, count, source, step)`` of one axis's borders (not CONSTANT)."""
    return _mode_runs(op.mode, s, n, e)


@functools.lru_cache(maxsize=4096)  # the mode and the axis's sizes alone decide
def _mode_runs(mode: PaddingMode, s: int, n: int, e: int) -> tuple[tuple[int, int, int, int], ...]:
    positions = [*range(s), *range(s + n, s + n + e)]
    indexes = _mode_map(mode, s, n, e)
    sources = [s + int(indexes[p]) for p in positions]
    return tuple(_runs(positions, sources))


@functools.lru_cache(maxsize=4096)  # the mode and the axis's sizes alone decide
def _mode_map(mode: PaddingMode, s: int, n: int, e: int) -> np.ndarray:
    """The input index each output position along one axis reads (not CONSTANT), read-only."""
    indexes = np.array([source_index(mode, p - s, n) for p in range(s + n + e)], dtype=np.intp)
    indexes.flags.writeable = False
    return indexes


def _run_source(moved: np.ndarray, count: int, source: int, step: int) -> np.ndarray:
    """The view a border run copies: one position repeated (step 0), or ``count`` positions
    forwards (1) or backwards (-1) from ``source``."""
    if step == 0:
        return np.broadcast_to(moved[source:source + 1], (count, *moved.shape[1:]))
    if step == 1:
        return moved[source:source + count]
    stop = source - count
    return moved[source:stop if stop >= 0 else None:-1]


def padding_for(
    input: BufferTensorDesc, pads: Any, *, mode: str | PaddingMode = "constant", value_hex: str = "",
    axes: Any = None,
) -> PaddingOp:
    """``PaddingOp.from_onnx`` with the constant given as little-endian hex (any data type,
    4-bit ones included: their constant is the low nibble of the first byte)."""
    value = bytes.fromhex(value_hex) if value_hex else b""
    if is_nibble(input.data_type):
        return PaddingOp.from_onnx(input, pads, mode=mode, value=value[:1], axes=axes)  # its low nibble
    return PaddingOp.from_onnx(input, pads, mode=mode, value=value if value else 0, axes=axes)
