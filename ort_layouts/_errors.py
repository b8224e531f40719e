"""The exception hierarchy.

Every error ort_layouts raises derives from :class:`OrtLayoutsError`; each leaf also derives
from the built-in exception a caller would expect (``ValueError`` for bad values and unknown
names, ``ValueError`` and ``TypeError`` for a bad argument: ``ArgumentError``, ``RuntimeError``
for an environment that cannot do what was asked: ``ProviderError``), so code that does not
know this package still catches them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = [
    "ArgumentError",
    "DataTypeError",
    "DescriptorError",
    "LayoutError",
    "ModelError",
    "NotExpressibleError",
    "OrtLayoutsError",
    "ProviderError",
    "ProviderUnavailableError",
    "ReportError",
    "ShapeError",
    "a_type",
    "path_argument",
]


def path_argument(value: object, name: str, valid: str, error: type[OrtLayoutsError]) -> Path:
    """``value`` (a str or os.PathLike) as a Path.

    Raises:
        error: ``value`` is anything else (None, an int), or empty (``Path("")`` would be the
            current directory), naming it, its type and ``valid``.
    """
    if not isinstance(value, (str, os.PathLike)):
        raise error(f"{name} {value!r:.80} is {a_type(value)}, not a path; valid: {valid}")
    if os.fspath(value) in ("", b""):
        raise error(f"{name} '' is an empty path; valid: {valid} ('.' for the current directory)")
    return Path(value)


# names that start with a "u" said "you": numpy's unsigned types, UserDict, UnicodeError, uuid
_SAID_WITH_YOU = ("uint", "ulong", "ufunc", "uuid", "user", "uni")


def a_type(value: object) -> str:
    """The type of ``value`` with its article, as the name is said: "a str", "an int", "a
    NoneType", "a uint32" ("you-int"), "an ndarray" ("en-dee")."""
    name = type(value).__name__
    lower = name.lower()
    said_with_a_vowel = lower.startswith("nd") or (
        lower[:1] in "aeiou" and not lower.startswith(_SAID_WITH_YOU))
    return f"{'an' if said_with_a_vowel else 'a'} {name}"


class OrtLayoutsError(Exception):
    """Base class of every error raised by ort_layouts."""


class ArgumentError(OrtLayoutsError, ValueError, TypeError):
    """An argument of a function that is of the wrong kind (an item of ``cases`` that is not a
    Case, a callback that cannot be called) or value (a ``batch_size`` or ``jobs`` below 1).
    Both a ValueError and a TypeError, as numpy's ``AxisError`` is both a ValueError and an
    IndexError: code that caught either before still catches it."""


class DataTypeError(OrtLayoutsError, ValueError):
    """A data type that does not exist, or has no DirectML / numpy / ONNX equivalent."""


class LayoutError(OrtLayoutsError, ValueError):
    """A layout name or axis order that is not valid for the given sizes."""


class ShapeError(OrtLayoutsError, ValueError):
    """Shapes or permutations that do not fit together (a bad perm, incompatible broadcast)."""


class DescriptorError(OrtLayoutsError, ValueError):
    """A buffer tensor descriptor breaks one of DirectML's rules.

    Attributes:
        rule: short name of the broken rule, e.g. ``"dimension-count"``.
        value: the offending value.
    """

    def __init__(self, rule: str, value: Any, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.value = value


class NotExpressibleError(OrtLayoutsError, ValueError):
    """A valid ONNX operation that DirectML cannot express as given (negative pads, ...)."""


class ProviderError(OrtLayoutsError, RuntimeError):
    """An execution provider that is unknown, unavailable here, or badly configured."""


class ProviderUnavailableError(ProviderError):
    """An execution provider this project knows that is not available here (DirectML off
    Windows without the worker's stack, CUDA without a CUDA build): a run on it cannot happen
    on this machine, though the name is right."""


class ModelError(OrtLayoutsError, ValueError):
    """An ONNX model that cannot be loaded, inferred or converted."""


class ReportError(OrtLayoutsError, ValueError):
    """A report (or export) directory or file that cannot be read, written, resumed or merged."""
