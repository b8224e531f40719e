"""The fields of a DirectML operator desc (``IdentityOp``, ``PaddingOp``, ...): one check each
for a tensor, a list of tensors and an integer given to a constructor, and one reader of the
dict ``to_dict`` writes, so that ``from_dict`` of every operator refuses what is no such dict
(None, a list, a missing or ill-typed field, a key it does not know) with a DescriptorError
that names the value and what is valid, never a bare KeyError or TypeError.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Collection, Mapping
from typing import Any, TypeVar

from ort_layouts._errors import DataTypeError, DescriptorError, a_type
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.sequences import int_tuple, is_integer, is_ordered_sequence

__all__ = ["check_count", "check_integer", "check_tensor", "check_tensors", "read_desc_dict", "read_enum",
           "read_ints", "read_integer", "read_tensor", "read_tensors"]

_E = TypeVar("_E", bound=enum.Enum)

_VALID_TENSOR = "a BufferTensorDesc (e.g. BufferTensorDesc('float32', (2, 3)); from_dict reads a dict)"


def check_tensor(value: Any, what: str) -> BufferTensorDesc:
    """``value`` when it is a BufferTensorDesc; else a DescriptorError ("tensor") naming it."""
    if isinstance(value, BufferTensorDesc):
        return value
    raise DescriptorError("tensor", value, f"{what} {value!r:.80} is {a_type(value)}; valid: {_VALID_TENSOR}")


def check_tensors(value: Any, what: str) -> tuple[BufferTensorDesc, ...]:
    """``value`` (an ordered sequence of BufferTensorDesc) as a tuple; else a DescriptorError
    ("tensor") naming it or its first bad item."""
    if type(value) is tuple and all(type(v) is BufferTensorDesc for v in value):
        return value
    if not is_ordered_sequence(value):
        raise DescriptorError("tensor", value, f"{what} {value!r:.80} is {a_type(value)}; valid: a list or "
                                               f"tuple of BufferTensorDesc")
    return tuple(check_tensor(v, f"{what}[{k}]") for k, v in enumerate(value))


def check_integer(value: Any, what: str) -> int:
    """``value`` (a Python or numpy integer, not a bool) as an int; else a DescriptorError."""
    if type(value) is int:
        return value
    if not is_integer(value):
        raise DescriptorError("integer", value, f"{what} {value!r:.80} is {a_type(value)}; valid: an integer")
    return int(value)


def read_desc_dict(data: Any, operator: str, *, required: Collection[str],
                   optional: Collection[str] = ()) -> Mapping[str, Any]:
    """``data`` checked as the dict ``to_dict`` of ``operator`` writes: a mapping whose
    ``"operator"`` field, where it has one, is ``operator``, that holds every key of
    ``required`` and no key but those, ``optional`` and ``"operator"``.

    Raises:
        DescriptorError: ``data`` is no mapping ("dict-keys"), names another operator
            ("operator"), lacks a required key or holds an unknown one ("dict-keys").
    """
    if not isinstance(data, Mapping):
        raise DescriptorError("dict-keys", data,
                              f"a {operator} dict is needed, got {a_type(data)} {data!r:.80}")
    name = data.get("operator", operator)
    if name != operator:
        raise DescriptorError("operator", name, f"the dict describes operator {name!r:.80}, not {operator}; "
                                                f"valid: {operator!r} (or no operator field)")
    known = {"operator", *required, *optional}
    keys = sorted(data, key=str)
    missing = [k for k in required if k not in data]
    unknown = [k for k in keys if k not in known]
    if missing or unknown:
        problem = f"lacks {missing}" if missing else f"holds unknown keys {unknown}"
        raise DescriptorError("dict-keys", missing or unknown,
                              f"the {operator} dict {problem}; valid keys: {sorted(known)} (required: "
                              f"{sorted(required)})")
    return data


def _read_desc(value: Any, what: str) -> BufferTensorDesc:
    """``BufferTensorDesc.from_dict(value)``, its errors again with their message prefixed with
    ``what``, the field (and item) the dict came from."""
    try:
        return BufferTensorDesc.from_dict(value)
    except DescriptorError as e:
        raise DescriptorError(e.rule, e.value, f"{what}: {e}") from e
    except DataTypeError as e:
        raise DataTypeError(f"{what}: {e}") from e


def read_tensor(data: Mapping[str, Any], key: str, operator: str) -> BufferTensorDesc:
    """``BufferTensorDesc.from_dict(data[key])``, its errors naming the field."""
    return _read_desc(data[key], f"{operator} {key}")


def read_tensors(data: Mapping[str, Any], key: str, operator: str) -> tuple[BufferTensorDesc, ...]:
    """Each dict of the list ``data[key]`` as a BufferTensorDesc, errors naming the field and item."""
    items = data[key]
    if not is_ordered_sequence(items):
        raise DescriptorError("dict-field", items, f"{operator} {key} {items!r:.80} is {a_type(items)}; "
                                                   "valid: a list of descriptor dicts")
    return tuple(_read_desc(item, f"{operator} {key}[{k}]") for k, item in enumerate(items))


def read_ints(data: Mapping[str, Any], key: str, operator: str) -> tuple[int, ...]:
    """``data[key]`` as a tuple of ints; else a DescriptorError ("dict-field") naming it."""
    value = data[key]
    return int_tuple(value, f"{operator} {key}", functools.partial(DescriptorError, "dict-field", value))


def read_integer(data: Mapping[str, Any], key: str, operator: str) -> int:
    """``data[key]`` as an int; else a DescriptorError ("dict-field") naming it."""
    value = data[key]
    if not is_integer(value):
        raise DescriptorError("dict-field", value,
                              f"{operator} {key} {value!r:.80} is {a_type(value)}; valid: an integer")
    return int(value)


def check_count(data: Mapping[str, Any], key: str, operator: str, counted: str, count: int, *,
                rule: str = "dict-field") -> None:
    """Refuse a count field ``data[key]`` (InputCount, repeats_count, ...), where given, that is
    not ``count``, the number of what it counts (``counted``, e.g. "InputTensors").

    Raises:
        DescriptorError: the field is no integer ("dict-field"), or another number (``rule``).
    """
    if key in data and read_integer(data, key, operator) != count:
        raise DescriptorError(rule, data[key],
                              f"{operator} {key} {data[key]} differs from the {count} {counted}")


def read_enum(data: Mapping[str, Any], key: str, operator: str, enum_type: type[_E]) -> _E:
    """The member of ``enum_type`` named ``data[key]``; else a DescriptorError naming the names."""
    value = data[key]
    member = enum_type.__members__.get(value) if isinstance(value, str) else None
    if member is None:
        raise DescriptorError("dict-field", value,
                              f"{operator} {key} {value!r:.80} is no {enum_type.__name__} name; valid: "
                              f"{list(enum_type.__members__)}")
    return member
