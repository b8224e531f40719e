"""Case: one layout operation to validate (op, data type, shape, parameters, input values)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from operator import attrgetter
from typing import Any

from ort_layouts._errors import ShapeError
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import INT64_MAX, INT64_MIN, int_tuple, is_integer

__all__ = ["VALUE_KINDS", "Case", "check_seed", "check_value_kind"]

VALUE_KINDS: tuple[str, ...] = ("random", "special", "iota")
# the fields that hold a tuple of integers (or None)
_INT_TUPLES = ("perm", "target_shape", "pads", "axes", "starts", "ends", "steps", "parts", "repeats")
# an op's parameters (Operator.case_fields names those each op takes)
_PARAMETERS = ("perm", "target_shape", "pads", "mode", "pad_value_hex", "axes", "starts", "ends", "steps",
               "axis", "parts", "num_outputs", "repeats", "blocksize")


def check_value_kind(values: object) -> str:
    """A case's ``values``: one of :data:`VALUE_KINDS`.

    Raises:
        ShapeError: anything else (another str, None, a list), naming it and the valid kinds.
    """
    if not isinstance(values, str) or values not in VALUE_KINDS:
        raise ShapeError(f"values {values!r} is not valid; valid: {list(VALUE_KINDS)}")
    return values


def check_seed(seed: object) -> int:
    """A case's ``seed`` as a Python int.

    Raises:
        ShapeError: not an integer >= 0 (None, a bool, a float, a str, a negative one).
    """
    checked = int(seed) if is_integer(seed) else -1  # type: ignore[call-overload]
    if checked < 0:
        raise ShapeError(f"seed {seed!r} is not valid; valid: an integer >= 0")
    return checked


def _int(value: Any, name: str, low: int | None = None) -> int | None:
    """An integer field as a Python int (None stays None), at least ``low`` where given, an
    int64 (a model holds it as one: an attribute, the opset).

    Raises:
        ShapeError: not an integer (a bool, a float, a string), below ``low`` or outside int64.
    """
    if value is None:
        return None
    if not is_integer(value):
        raise ShapeError(f"{name} {value!r} is not an integer")
    if low is not None and value < low:
        raise ShapeError(f"{name} {value!r} is not valid; valid: an integer >= {low}")
    if not INT64_MIN <= value <= INT64_MAX:
        raise ShapeError(f"{name} {value!r} does not fit int64 (a model holds it as an int64); valid: an "
                         f"integer in [{INT64_MIN if low is None else low}, {INT64_MAX}]")
    return int(value)


def _int64_tuple(case: Case, value: Any, name: str, *, low: int | None = None) -> tuple[int, ...]:
    """A case's shape or integer parameters (:func:`int_tuple`), each an int64, as a model holds
    them (the node's attributes and int64 inputs).

    Raises:
        ShapeError: not integers, below ``low``, or one outside int64 (named, with the range).
    """
    values = int_tuple(value, name, low=low)
    if values and (max(values) > INT64_MAX or min(values) < INT64_MIN):
        bad = next(v for v in values if not INT64_MIN <= v <= INT64_MAX)
        raise ShapeError(f"{case.op} {name} {list(values)} holds {bad}, which does not fit int64 (a model "
                         f"holds it as an int64); valid: integers in [{INT64_MIN}, {INT64_MAX}]")
    return values


class _IdSlot:
    """The slots a :class:`Case` keeps its id and its tensor shapes in once computed
    (:meth:`~ort_layouts.operators.base.Operator.tensor_shapes`): not dataclass fields, so they
    take no part in equality, hashing, ``dataclasses.fields`` or ``to_dict`` (a replaced case
    computes them again on first use; an unpickled one its shapes, and its id where the pickled
    one had not computed it)."""

    __slots__ = ("_id", "_shapes")
    _id: str
    _shapes: tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]


@dataclasses.dataclass(frozen=True, slots=True)
class Case(_IdSlot):
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
        mode: Pad's mode ("constant", "edge", "reflect", "wrap"), DepthToSpace's ("DCR",
            "CRD"); "" means the operator's default (``Operator.default_mode``).
        pad_value_hex: Pad's constant_value as little-endian bytes in hex; "" means no input (0).
        axes: Pad's axes input (opset >= 18), Slice's axes, Squeeze's and Unsqueeze's axes;
            None means the operator's default (all axes, or no input).
        starts: Slice's starts.
        ends: Slice's ends.
        steps: Slice's steps (opset >= 10); None means no steps input (all 1).
        axis: the axis of Concat, Split and Flatten; None means the operator's default.
        parts: the sizes along ``axis`` of Concat's inputs or Split's outputs (Split's ``split``);
            ``shape`` is then the whole tensor (Concat's output, Split's input).
        num_outputs: Split's ``num_outputs`` attribute (opset >= 18) or, without ``parts``, its
            number of outputs.
        repeats: Tile's repeats.
        blocksize: DepthToSpace's and SpaceToDepth's blocksize.
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
    mode: str = ""
    pad_value_hex: str = ""
    axes: tuple[int, ...] | None = None
    starts: tuple[int, ...] | None = None
    ends: tuple[int, ...] | None = None
    steps: tuple[int, ...] | None = None
    axis: int | None = None
    parts: tuple[int, ...] | None = None
    num_outputs: int | None = None
    repeats: tuple[int, ...] | None = None
    blocksize: int | None = None
    opset: int | None = None
    values: str = "random"
    seed: int = 0
    origin: str = "suite"

    def __post_init__(self) -> None:
        from ort_layouts.operators.registry import case_opsets, check_op_type, operator_for_type

        check_op_type(self.op, cases=True)
        check_value_kind(self.values)
        operator = operator_for_type(self.op)
        object.__setattr__(self, "data_type", DataType.coerce(self.data_type))
        object.__setattr__(self, "shape", _int64_tuple(self, self.shape, "shape", low=0))
        for name in _INT_TUPLES:  # None stays None
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _int64_tuple(self, value, name))
        for name in ("axis", "num_outputs", "blocksize"):
            object.__setattr__(self, name, _int(getattr(self, name), name))
        object.__setattr__(self, "opset", _int(self.opset, "opset", 1))
        # below the start of its opsets (a later one than the installed onnx defines is refused
        # where a model is made of the case: build_model, an export)
        if self.opset is not None and self.opset < (first := case_opsets(self.op).start):
            raise ShapeError(f"{self.op} at opset {self.opset}: {self.op} cases start at opset {first} "
                             f"(Operator.min_opset); valid: opset >= {first}, or None (the run's)")
        object.__setattr__(self, "seed", check_seed(self.seed))
        if not self.mode:
            object.__setattr__(self, "mode", operator.default_mode)
        own = operator.case_fields[self.op]  # another field would change the case but not its id
        stray = [f for f in _PARAMETERS if f not in own and getattr(self, f) not in (None, "")]
        if stray:
            raise ShapeError(f"a {self.op} case takes {list(own) or 'no parameters'}, not {stray}")
        operator.check_case(self)
        problem = "" if self.opset is None else operator.opset_problem(self, self.opset)
        if problem:
            raise ShapeError(problem)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def id(self) -> str:
        """A readable, unique id, e.g. ``Transpose-float32-2x3x4-perm2.0.1-random-s0``; computed
        once per case (a report asks for it many times)."""
        try:
            return self._id
        except AttributeError:
            pass
        from ort_layouts.operators.registry import operator_for_type

        parts = [self.op, self.data_type.name.lower(), "x".join(map(str, self.shape)) or "scalar",
                 *operator_for_type(self.op).id_parts(self)]
        if self.opset is not None:
            parts.append(f"op{self.opset}")
        parts.append(self.values)
        parts.append(f"s{self.seed}")
        text = "-".join(parts)
        object.__setattr__(self, "_id", text)  # the fields are frozen; the id only mirrors them
        return text

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its fields' values and its id when computed, read by one C call: a run
        sends every case to its worker processes, and the dataclass's own state (a Python call
        of ``dataclasses.fields`` per case) made the sending process the slowest part of a
        many-worker run. Unpickled as the dataclass's own state is, field by field, unchecked:
        they are a case's, checked when it was made."""
        try:
            made_id: str | None = self._id
        except AttributeError:
            made_id = None
        return _unpickled_case, (_FIELD_VALUES(self), made_id)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["data_type"] = self.data_type.name
        for k in ("shape", *_INT_TUPLES):
            if d[k] is not None:
                d[k] = list(d[k])
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Case:
        """A case from :meth:`to_dict`'s data (a dict, or any other mapping).

        Raises:
            TypeError: ``data`` is not a mapping, or holds a field a case has not.
            KeyError: ``data`` lacks a field a case has no default for (the key is its name).
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"a case is a JSON object, not {type(data).__name__} {data!r:.60}")
        for name in _REQUIRED_FIELDS:
            if name not in data:
                raise KeyError(name)
        d = dict(data)
        d["data_type"] = DataType.from_name(d["data_type"])
        return cls(**d)


_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(Case))
_FIELD_VALUES = attrgetter(*_FIELD_NAMES)


def _unpickled_case(values: tuple[Any, ...], made_id: str | None) -> Case:
    """A case of :meth:`Case.__reduce__`'s values."""
    case = object.__new__(Case)
    for name, value in zip(_FIELD_NAMES, values, strict=True):
        object.__setattr__(case, name, value)
    if made_id is not None:
        object.__setattr__(case, "_id", made_id)
    return case


# the fields a case has no default for: a mapping that lacks one is no case
_REQUIRED_FIELDS = tuple(f.name for f in dataclasses.fields(Case)
                         if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
