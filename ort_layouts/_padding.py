"""The DirectML description of an ONNX Pad: DML_OPERATOR_PADDING1 after the EP's rank coercion."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._descriptor import BufferTensorDesc
from ._errors import NotExpressibleError, ShapeError

__all__ = ["PaddingMode", "PaddingOp"]


class PaddingMode(enum.IntEnum):
    """DML_PADDING_MODE, with DirectML's values."""

    CONSTANT = 0
    EDGE = 1
    REFLECTION = 2
    SYMMETRIC = 3  # DirectML only: no ONNX mode maps to it
    WRAP = 4  # DML_FEATURE_LEVEL_6_4

    @property
    def dml_name(self) -> str:
        return f"DML_PADDING_MODE_{self.name}"

    @property
    def onnx_name(self) -> str | None:
        return _TO_ONNX.get(self)

    @classmethod
    def from_onnx(cls, mode: str) -> PaddingMode:
        try:
            return _FROM_ONNX[mode]
        except KeyError:
            raise ShapeError(
                f"Pad mode {mode!r} is not an ONNX mode; valid: {sorted(_FROM_ONNX)}") from None


_FROM_ONNX = {"constant": PaddingMode.CONSTANT, "edge": PaddingMode.EDGE,
              "reflect": PaddingMode.REFLECTION, "wrap": PaddingMode.WRAP}
_TO_ONNX = {v: k for k, v in _FROM_ONNX.items()}


def split_onnx_pads(
    pads: Sequence[int], rank: int, axes: Sequence[int] | None = None
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """ONNX ``pads`` ([x1_begin, x2_begin, ..., x1_end, x2_end, ...], over ``axes`` when given,
    negative axes allowed) as full-rank (begins, ends)."""
    values = [int(p) for p in pads]
    axis_list = list(range(rank)) if axes is None else [int(a) for a in axes]
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
        mode: str = "constant",
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
        negative = [i for i, (b, e) in enumerate(zip(begins, ends, strict=True)) if b < 0 or e < 0]
        if negative:
            raise NotExpressibleError(
                f"pads {list(pads)} are negative at axis {negative[0]} (cropping); DirectML's "
                "PADDING1 takes unsigned start/end padding, so the DML EP cannot run this Pad")
        coerced = input.coerce_rank(min(max(min_dimension_count, input.dimension_count), 8))
        extra = coerced.dimension_count - input.dimension_count
        start = (0,) * extra + begins
        end = (0,) * extra + ends
        out_sizes = tuple(n + b + e for n, b, e in zip(coerced.sizes, start, end, strict=True))
        output = BufferTensorDesc(input.data_type, out_sizes)
        scalar = np.array(value).astype(input.data_type.to_numpy()) if not isinstance(value, bytes) \
            else np.frombuffer(value, dtype=input.data_type.to_numpy())
        return cls(coerced, output, start, end, pad_mode,
                   scalar.astype(scalar.dtype.newbyteorder("<")).tobytes()[: scalar.dtype.itemsize])

    @property
    def padding_value(self) -> np.generic:
        """The constant as a numpy scalar of the tensor's data type."""
        dtype = self.input.data_type.to_numpy()
        if not self.padding_value_bytes:
            return dtype.type(0)
        return np.frombuffer(self.padding_value_bytes, dtype=dtype.newbyteorder("<"))[0]

    @property
    def dimension_count(self) -> int:
        return self.input.dimension_count

    def to_dict(self) -> dict[str, Any]:
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
        return cls(BufferTensorDesc.from_dict(data["input"]), BufferTensorDesc.from_dict(data["output"]),
                   tuple(data["start_padding"]), tuple(data["end_padding"]),
                   PaddingMode[data["mode"]], bytes.fromhex(data.get("padding_value_hex", "")))
