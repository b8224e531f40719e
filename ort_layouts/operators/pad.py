"""The DirectML description of an ONNX Pad: DML_OPERATOR_PADDING1 after the EP's rank coercion."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from ort_layouts._errors import NotExpressibleError, ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc

__all__ = ["PaddingMode", "PaddingOp", "split_onnx_pads"]


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


def _ints(values: Any, what: str) -> list[int]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__") or any(
            isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in values):
        raise ShapeError(f"{what} {values!r} is not a sequence of integers")
    return [int(v) for v in values]


def _value_bytes(value: Any, dtype: np.dtype[Any]) -> bytes:
    """The Pad constant as little-endian bytes of ``dtype`` (exact for same-typed values)."""
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
    if dtype.kind in "iu":
        number = arr.reshape(()).item()
        info = np.iinfo(dtype)
        if not (np.isfinite(number) and info.min <= number <= info.max):
            raise ShapeError(
                f"Pad value {value!r} does not fit {dtype.name} ({info.min}..{info.max})")
    with np.errstate(over="ignore"):
        return arr.reshape(()).astype(little).tobytes()


def split_onnx_pads(
    pads: Sequence[int], rank: int, axes: Sequence[int] | None = None
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """ONNX ``pads`` ([x1_begin, x2_begin, ..., x1_end, x2_end, ...], over ``axes`` when given,
    negative axes allowed) as full-rank (begins, ends).

    >>> split_onnx_pads([1, 2, 3, 4], 3, axes=[-1, 0])
    ((2, 0, 1), (4, 0, 3))
    """
    values = _ints(pads, "pads")
    axis_list = list(range(rank)) if axes is None else _ints(axes, "Pad axes")
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


@dataclasses.dataclass(frozen=True, slots=True)
class PaddingOp:
    """DML_PADDING1_OPERATOR_DESC: input and output descriptors, per-axis padding, mode, value.

    ``padding_value_bytes`` holds the constant in the tensor's own data type (little-endian),
    so NaN payloads and -0.0 survive exactly.
    """

    input: BufferTensorDesc
    output: BufferTensorDesc
    start_padding: tuple[int, ...]
    end_padding: tuple[int, ...]
    mode: PaddingMode = PaddingMode.CONSTANT
    padding_value_bytes: bytes = b""

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", PaddingMode(self.mode))
        object.__setattr__(self, "start_padding", tuple(_ints(self.start_padding, "start_padding")))
        object.__setattr__(self, "end_padding", tuple(_ints(self.end_padding, "end_padding")))
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
        min_dimension_count: int = 4,
    ) -> PaddingOp:
        """What the DML EP builds for ONNX ``Pad(input, pads, value, axes, mode=mode)``.

        The input is coerced to ``min_dimension_count`` dimensions (leading 1s, stride 0) and the
        padding gets leading zeros. Negative pads (cropping) raise NotExpressibleError: DirectML's
        start/end padding is unsigned.

        >>> from ort_layouts import BufferTensorDesc
        >>> op = PaddingOp.from_onnx(BufferTensorDesc("float32", (3, 4)), [1, 2, 3, 4])
        >>> op.input.sizes, op.start_padding, op.end_padding, op.output.sizes
        ((1, 1, 3, 4), (0, 0, 1, 2), (0, 0, 3, 4), (1, 1, 7, 10))
        """
        pad_mode = PaddingMode.from_onnx(mode) if isinstance(mode, str) else PaddingMode(mode)
        begins, ends = split_onnx_pads(pads, input.dimension_count, axes)
        negative = [f"{side} of axis {i} is {v}" for side, values in (("begin", begins), ("end", ends))
                    for i, v in enumerate(values) if v < 0]
        if negative:
            raise NotExpressibleError(
                f"pads {list(pads)} crop ({', '.join(negative)}); DirectML's PADDING1 takes unsigned "
                "start/end padding, so the DML EP cannot run this Pad")
        coerced = input.coerce_rank(min(max(min_dimension_count, input.dimension_count), 8))
        extra = coerced.dimension_count - input.dimension_count
        start = (0,) * extra + begins
        end = (0,) * extra + ends
        out_sizes = tuple(n + b + e for n, b, e in zip(coerced.sizes, start, end, strict=True))
        output = BufferTensorDesc(input.data_type, out_sizes)
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

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (JSON-ready) that :meth:`from_dict` turns back into this operator."""
        return {
            "operator": "DML_OPERATOR_PADDING1",
            "input": self.input.to_dict(),
            "output": self.output.to_dict(),
            "start_padding": list(self.start_padding),
            "end_padding": list(self.end_padding),
            "mode": self.mode.name,
            "padding_value_hex": self.padding_value_bytes.hex(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PaddingOp:
        """Inverse of :meth:`to_dict`."""
        return cls(BufferTensorDesc.from_dict(data["input"]), BufferTensorDesc.from_dict(data["output"]),
                   tuple(data["start_padding"]), tuple(data["end_padding"]),
                   PaddingMode[data["mode"]], bytes.fromhex(data.get("padding_value_hex", "")))
