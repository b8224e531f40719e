"""CaseResult: what one validation case gave, with the figures that point at a layout bug."""

from __future__ import annotations

import dataclasses
import enum
import math
import numbers
from collections.abc import Callable, Mapping
from typing import Any

from ort_layouts._errors import ArgumentError, a_type
from ort_layouts.descriptors.sequences import is_integer
from ort_layouts.operators.case import Case

__all__ = ["CaseResult", "Status", "field_defaults", "operator_dict"]


# fields of reports written before their names carried the unit
_RENAMED = {"input_offset": "input_offset_in_elements", "output_offset": "output_offset_in_elements"}


def operator_dict(descriptors: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The DirectML operator's dict in a result's descriptors: the descriptors themselves (the
    operator's ``to_dict``, whose ``"operator"`` field names it), or a dict under ``"operator"``
    that names it; None where no operator is named (no descriptors, or a report from elsewhere).

    >>> operator_dict({"operator": "DML_OPERATOR_TILE", "repeats": [2]})["repeats"]
    [2]
    >>> operator_dict({"operator": {"operator": "DML_OPERATOR_JOIN", "axis": 1}})["axis"]
    1
    >>> operator_dict({"input": {"sizes": [3]}}) is None
    True
    """
    d = descriptors or {}
    operator = d.get("operator")
    if isinstance(operator, str):
        return d
    if isinstance(operator, Mapping) and isinstance(operator.get("operator"), str):
        return operator
    return None


def field_defaults(cls: type) -> dict[str, Any]:
    """The default of each field of a dataclass that has one (``default_factory``'s value)."""
    found: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            found[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            found[f.name] = f.default_factory()
    return found


def _is_default(defaults: dict[str, Any], name: str, value: Any) -> bool:
    """Whether a field's value (as ``to_dict`` holds it) equals the field's default; False for
    a field without one."""
    if name not in defaults:
        return False
    default = defaults[name]
    if default is None:
        return value is None
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # a value that does not compare to a bool (an array): kept
        return False


_CASE_DEFAULTS = field_defaults(Case)


class Status(enum.StrEnum):
    PASS = "pass"
    MISMATCH = "mismatch"
    UNSUPPORTED = "unsupported"  # the EP could not build or place the node (CPU fallback is off)
    ERROR = "error"  # the EP failed while running, or the harness did


_STATUS_BY_VALUE = {s.value: s for s in Status}


def _checked_int(name: str, value: Any, *, none: bool) -> int:
    """A result's integer field as an int (a numpy integer's value), or an ArgumentError."""
    if not is_integer(value) or value < 0:
        also = ", or None" if none else ""
        raise ArgumentError(f"{name} {value!r:.60} is not valid; valid: an integer >= 0{also}")
    return int(value)


@dataclasses.dataclass(frozen=True, slots=True)
class CaseResult:
    """The outcome of one case; truthy when it passed.

    Attributes:
        case: the case.
        status: pass, mismatch, unsupported or error.
        provider: the execution provider asked for (e.g. "CPUExecutionProvider").
        device: the device it ran on, in words ("" when unknown).
        node_provider: the EP that actually ran the node ("" when unknown).
        element_count: logical elements compared.
        mismatch_count: elements whose bits differ.
        first_mismatch_index: logical index of the first mismatch (output coordinates).
        input_offset_in_elements: buffer offset (elements) of the input element that index reads, if any.
        output_offset_in_elements: buffer offset (elements) of that index in the output.
        expected_hex / actual_hex: the raw bits of the first mismatching element.
        diagnosis: what the EP did, in layout terms, when an alternative descriptor explains it.
        recovered: for a mismatch, what the recovery inferred the hardware applied, next to
            what was expected, in DirectML terms (``Recovery.to_dict()`` of
            :mod:`ort_layouts.engine.recover`: kind, operator, applied, expected, names, text);
            {} when nothing was recovered.
        known_issue: for a mismatch that a known EP deviation explains (its diagnosis proves the
            signature), that deviation's description; "" otherwise.
        message: the error or unsupported reason.
        descriptors: {"operator": ..., "input": desc dict, "output": desc dict, ...}.
        seconds: wall time attributed to the case.

    ``recovered`` and ``descriptors`` are JSON-ready dicts that the reports encode as they are;
    they are data to read, not to change (a result compares equal by them), and take no part
    in the hash: a result hashes by its other fields.
    """

    case: Case
    status: Status
    provider: str
    device: str = ""
    node_provider: str = ""
    element_count: int = 0
    mismatch_count: int = 0
    first_mismatch_index: tuple[int, ...] | None = None
    input_offset_in_elements: int | None = None
    output_offset_in_elements: int | None = None
    expected_hex: str = ""
    actual_hex: str = ""
    diagnosis: str = ""
    known_issue: str = ""
    recovered: dict[str, Any] = dataclasses.field(default_factory=dict, hash=False)
    message: str = ""
    descriptors: dict[str, Any] = dataclasses.field(default_factory=dict, hash=False)
    seconds: float = 0.0

    def __post_init__(self) -> None:
        """Check the fields whose type the result's methods and the reports rely on: a case, a
        status (its value, e.g. "pass", is taken as the Status), integer counts and offsets (a
        numpy integer is taken as its int, which JSON holds), a float of seconds. A result the
        engine makes passes on type checks alone."""
        if not isinstance(self.case, Case):
            raise ArgumentError(f"case {self.case!r:.60} is {a_type(self.case)}; valid: a Case")
        if type(self.status) is not Status:
            if not isinstance(self.status, str) or self.status not in _STATUS_BY_VALUE:
                raise ArgumentError(f"status {self.status!r:.60} is not a status; valid: "
                                    f"{[s.value for s in Status]} (Status members or their values)")
            object.__setattr__(self, "status", _STATUS_BY_VALUE[self.status])
        for name in ("element_count", "mismatch_count"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                object.__setattr__(self, name, _checked_int(name, value, none=False))
        for name in ("input_offset_in_elements", "output_offset_in_elements"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 0):
                object.__setattr__(self, name, _checked_int(name, value, none=True))
        index = self.first_mismatch_index
        if index is not None and (type(index) is not tuple
                                  or any(type(i) is not int or i < 0 for i in index)):
            if isinstance(index, (str, bytes)) or not isinstance(index, (tuple, list)):
                raise ArgumentError(f"first_mismatch_index {index!r:.60} is {a_type(index)}; valid: a tuple "
                                    "of integers >= 0, or None")
            object.__setattr__(self, "first_mismatch_index", tuple(
                _checked_int("first_mismatch_index", i, none=False) for i in index))
        seconds = self.seconds
        if type(seconds) is not float or seconds - seconds != 0.0:  # (NaN and the infinities too)
            if not _is_seconds(seconds):
                raise ArgumentError(f"seconds {seconds!r:.60} is {a_type(seconds)}; valid: a finite "
                                    "number of seconds")
            object.__setattr__(self, "seconds", float(seconds))

    def __bool__(self) -> bool:
        return self.status is Status.PASS

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS

    @property
    def failed(self) -> bool:
        """A mismatch or error that no known issue explains."""
        return self.status is Status.ERROR or (self.status is Status.MISMATCH and not self.known_issue)

    def to_dict(self, *, defaults: bool = True) -> dict[str, Any]:
        """The result as JSON-ready data: its fields, its case's (``Case.to_dict``) under
        ``"case"``, the status by value and the case's ``id``.

        Args:
            defaults: keep the fields equal to their defaults; False leaves them out, of the
                result and of its case (but ``op``, ``data_type`` and ``shape``), as
                ``results.jsonl`` and ``report.json`` hold a result. :meth:`from_dict` reads
                both back to an equal result.
        """
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["case"] = self.case.to_dict()
        d["id"] = self.case.id
        d["status"] = self.status.value
        if self.first_mismatch_index is not None:
            d["first_mismatch_index"] = list(self.first_mismatch_index)
        if not defaults:
            d = {k: v for k, v in d.items() if not _is_default(_RESULT_DEFAULTS, k, v)}
            d["case"] = {k: v for k, v in d["case"].items() if not _is_default(_CASE_DEFAULTS, k, v)}
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseResult:
        """A result from :meth:`to_dict`'s data, with or without the fields equal to their
        defaults (a field left out takes its default).

        Raises:
            TypeError: ``data`` (or its case) is not a mapping, or holds a field a result has not.
            KeyError, ValueError: a field missing (the key names it: ``"provider"``, or
                ``"case.shape"`` for one of the case's), or a value that is not one of its kind
                (a string, an integer, a JSON object... as the field is; a damaged line of
                ``results.jsonl``).
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"a result is a JSON object, not {type(data).__name__} {data!r:.60}")
        d = {_RENAMED.get(k, k): v for k, v in data.items() if k != "id"}
        for name in _REQUIRED_FIELDS:
            if name not in d:
                raise KeyError(name)
        for name, value in d.items():
            kind = _FIELD_KINDS.get(name)
            if kind is not None and type(value) is not kind[0] and not kind[1](value):
                raise ValueError(f"{name} is {type(value).__name__} {value!r:.60}, not {kind[2]}")
        try:
            d["case"] = Case.from_dict(d["case"])
        except KeyError as e:  # named as the result's field
            if isinstance(data["case"], Mapping) and e.args and e.args[0] not in data["case"]:
                raise KeyError(f"case.{e.args[0]}") from e
            raise
        d["status"] = Status(d["status"])
        if d.get("first_mismatch_index") is not None:
            d["first_mismatch_index"] = tuple(d["first_mismatch_index"])
        return cls(**d)


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_object(value: Any) -> bool:
    return isinstance(value, Mapping)


def _is_offset(value: Any) -> bool:
    return value is None or is_integer(value)


def _is_index(value: Any) -> bool:
    return value is None or (isinstance(value, list | tuple) and all(map(is_integer, value)))


def _is_seconds(value: Any) -> bool:
    """A finite number (JSON's NaN and Infinity are no time, and a report of them no JSON)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int over a float's range
        return False


class _NoType:
    """The type no value of a field is taken at once for: each is checked (seconds)."""


# what each field of a result (but its case and status) must be where from_dict reads it: the
# type JSON gives it most often (taken at once), what takes any value of its kind, and how a
# message names that kind. A damaged line is refused there, not where a report uses the field.
_TEXT = (str, _is_text, "a string")
_COUNT = (int, is_integer, "an integer")
_OFFSET = (int, _is_offset, "an integer or null")
_OBJECT = (dict, _is_object, "a JSON object")
_FIELD_KINDS: dict[str, tuple[type, Callable[[Any], bool], str]] = {
    "provider": _TEXT, "device": _TEXT, "node_provider": _TEXT,
    "element_count": _COUNT, "mismatch_count": _COUNT,
    "first_mismatch_index": (type(None), _is_index, "a list of integers or null"),  # a list: each item
    "input_offset_in_elements": _OFFSET, "output_offset_in_elements": _OFFSET,
    "expected_hex": _TEXT, "actual_hex": _TEXT, "diagnosis": _TEXT, "known_issue": _TEXT,
    "recovered": _OBJECT, "message": _TEXT, "descriptors": _OBJECT,
    "seconds": (_NoType, _is_seconds, "a finite number"),
}
if set(_FIELD_KINDS) != {f.name for f in dataclasses.fields(CaseResult)} - {"case", "status"}:
    raise ImportError("CaseResult.from_dict's field checks do not match CaseResult's fields")

_RESULT_DEFAULTS = field_defaults(CaseResult)
# the fields a result has no default for: a line that lacks one is no result
_REQUIRED_FIELDS = tuple(f.name for f in dataclasses.fields(CaseResult)
                         if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
