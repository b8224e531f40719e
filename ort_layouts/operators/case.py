"""Case: one layout operation to validate (op, data type, shape, parameters, input values)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ort_layouts._errors import ShapeError
from ort_layouts.descriptors.dtypes import DataType

__all__ = ["VALUE_KINDS", "Case"]

VALUE_KINDS: tuple[str, ...] = ("random", "special", "iota")


def _dims(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(int(v) for v in value)


@dataclasses.dataclass(frozen=True, slots=True)
class Case:
    """One validation case: an ONNX layout node with its input's type, shape and parameters.

    Attributes:
        op: the ONNX op type (one of ``registry.CASE_OPS``).
        data_type: the DirectML data type of the data tensor (BOOL data is UINT8). A name
            ("float32") or a numpy dtype is accepted too and converted with
            :meth:`DataType.coerce`; the attribute is always a :class:`DataType`.
        shape: the ONNX shape of the data input.
        perm: Transpose's perm; None means ONNX's default (reversed axes).
        target_shape: Expand's shape input.
        pads: Pad's pads input, ONNX order [x1_begin, ..., x1_end, ...] over ``axes``.
        mode: Pad's mode ("constant", "edge", "reflect", "wrap").
        pad_value_hex: Pad's constant_value as little-endian bytes in hex; "" means no input (0).
        axes: Pad's axes input (opset >= 18); None means all axes.
        opset: the ONNX opset to build with; None means the builder's default.
        values: how input data is made: "random", "special" (NaN payloads, -0.0, denormals,
            integer extremes) or "iota" (0, 1, 2, ...).
        seed: seed of the ``numpy.random.Generator`` that makes the input data.
        origin: where the case comes from ("suite", "onnx-node-test:NAME", "model:PATH#NODE").
    """

    op: str
    data_type: DataType
    shape: tuple[int, ...]
    perm: tuple[int, ...] | None = None
    target_shape: tuple[int, ...] | None = None
    pads: tuple[int, ...] | None = None
    mode: str = "constant"
    pad_value_hex: str = ""
    axes: tuple[int, ...] | None = None
    opset: int | None = None
    values: str = "random"
    seed: int = 0
    origin: str = "suite"

    def __post_init__(self) -> None:
        from ort_layouts.operators.registry import CASE_OPS, operator_for_type

        if self.op not in CASE_OPS:
            raise ShapeError(f"op {self.op!r} is not supported; valid: {list(CASE_OPS)}")
        if self.values not in VALUE_KINDS:
            raise ShapeError(f"values {self.values!r} is not valid; valid: {list(VALUE_KINDS)}")
        object.__setattr__(self, "data_type", DataType.coerce(self.data_type))
        object.__setattr__(self, "shape", _dims(self.shape))
        for name in ("perm", "target_shape", "pads", "axes"):
            object.__setattr__(self, name, _dims(getattr(self, name)))
        operator_for_type(self.op).check_case(self)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def id(self) -> str:
        """A readable, unique id, e.g. ``Transpose-float32-2x3x4-perm2.0.1-random-s0``."""
        from ort_layouts.operators.registry import operator_for_type

        parts = [self.op, self.data_type.name.lower(), "x".join(map(str, self.shape)) or "scalar",
                 *operator_for_type(self.op).id_parts(self)]
        if self.opset is not None:
            parts.append(f"op{self.opset}")
        parts.append(self.values)
        parts.append(f"s{self.seed}")
        return "-".join(parts)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["data_type"] = self.data_type.name
        for k in ("shape", "perm", "target_shape", "pads", "axes"):
            if d[k] is not None:
                d[k] = list(d[k])
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Case:
        d = dict(data)
        d["data_type"] = DataType.from_name(d["data_type"])
        return cls(**d)
