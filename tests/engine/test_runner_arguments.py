"""run_cases refuses a bad argument before any work, with a typed error (an OrtLayoutsError; an
ArgumentError is a ValueError and a TypeError too, as the plain errors it replaced were) naming
the value and what is valid: explicit inputs of another element type or shape than their case
(never cast), and ``cases``, ``batch_size``, ``jobs`` and ``provider_options`` of the wrong
kind. Numpy integers are integers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import ArgumentError, DataTypeError, OrtLayoutsError, ShapeError
from ort_layouts.engine import runner as _runner
from ort_layouts.engine.providers import CPU, ProviderOptionError
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import resolve_jobs, run_cases
from ort_layouts.operators.case import Case

F16 = Case("Transpose", "float16", (2, 2), perm=(1, 0))
F32 = Case("Transpose", "float32", (2, 3), perm=(1, 0))


@pytest.mark.parametrize(("case", "given", "error", "message"), [
    # float16 bit patterns (a signalling NaN, -0.0) given as uint16: a cast would make them 31745.0, 32768.0
    (F16, np.array([[0x7C01, 0x8000], [0x7E55, 0x0001]], np.uint16), DataTypeError,
     "inputs['Transpose-float16-2x2-perm1.0-random-s0'] is uint16 of shape [2, 2]; valid: float16, the "
     "case's FLOAT16 values (an input is never cast)"),
    # float64 for float32: 1e300 would become inf
    (F32, np.full((2, 3), 1e300), DataTypeError, "is float64 of shape [2, 3]; valid: float32"),
    (F32, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], DataTypeError, "is float64 of shape [2, 3]; valid: float32"),
    (F32, np.zeros((3, 2), np.float32), ShapeError,
     "inputs['Transpose-float32-2x3-perm1.0-random-s0'] has shape [3, 2]; valid: the case's [2, 3]"),
    (F32, np.zeros(6, np.float32), ShapeError, "has shape [6]; valid: the case's [2, 3]"),
], ids=["uint16-bits-for-float16", "float64-for-float32", "list-of-floats", "transposed-shape", "flat"])
def test_an_input_the_case_cannot_take_as_it_is_is_refused(case: Case, given: Any, error: type[Exception],
                                                           message: str, no_work: None) -> None:
    with pytest.raises(error) as info:
        run_cases([Case("Identity", "int8", (2,)), case], provider="cpu", jobs=2, inputs={case.id: given})
    assert message in str(info.value)


def test_an_input_of_the_cases_type_in_the_other_byte_order_is_taken_bit_for_bit() -> None:
    bits = np.array([[0x7C01, 0x8000], [0x7E55, 0x0001]], np.uint16)  # sNaN, -0.0, a NaN payload, a denormal
    (r,) = run_cases([F16], provider="cpu", jobs=1, inputs={F16.id: bits.view(np.float16).astype(">f2")})
    assert r.status is Status.PASS


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"cases": F32}, ArgumentError, "cases is one Case, Transpose-float32-2x3-perm1.0-random-s0; valid: an "
                                    "iterable of Case values"),
    ({"cases": "Transpose"}, ArgumentError, "cases is 'Transpose', a str; valid: an iterable of Case values"),
    ({"cases": None}, ArgumentError, "cases is None, a NoneType; valid: an iterable of Case values"),
    ({"cases": 3}, ArgumentError, "cases is 3, an int; valid: an iterable of Case values"),
    ({"inputs": [np.zeros((2, 3), np.float32)]}, ArgumentError,
     "is a list; valid: a mapping of case ids to arrays, or None"),
    ({"jobs": 1.5}, ArgumentError, "jobs 1.5 is not valid; valid: an int >= 1, or None for the default"),
    ({"batch_size": 2.0}, ArgumentError, "batch_size 2.0 is not valid; valid: an int >= 1"),
    ({"encode": len}, ArgumentError, "encode and on_encoded go together"),
    ({"provider_options": [("a", "b")]}, ProviderOptionError,
     "provider_options [('a', 'b')] is a list; valid: a mapping of option names to values, or None"),
    ({"provider_options": {1: "a", "b": "c"}}, ProviderOptionError,
     "provider option name 1 is an int; valid: a str, the option's name"),
], ids=["one-case", "str", "none", "int", "inputs-list", "jobs", "batch-size", "encode-alone",
        "provider-options", "option-name"])
def test_a_bad_argument_is_a_typed_error(kwargs: dict[str, Any], error: type[Exception], message: str,
                                         no_work: None) -> None:
    given: dict[str, Any] = {"cases": [F32], **kwargs}
    with pytest.raises(error) as info:
        run_cases(given.pop("cases"), provider="cpu", **given)
    assert message in str(info.value)


# the devices the two_cpu_devices fixture lists, as check_device_id names them
OUT_OF_RANGE = ("device id 7 is out of range: CPUExecutionProvider lists 2 device(s) (0: CPU Example cpu-0; "
                "1: CPU Example cpu-1); valid: 0..1")


def test_a_device_the_provider_does_not_list_is_a_typed_error(two_cpu_devices: None, no_work: None) -> None:
    with pytest.raises(ProviderOptionError) as info:
        run_cases([F32], provider="cpu", device_id=7)
    assert str(info.value) == OUT_OF_RANGE
    seen: list[object] = []  # refused before any work: no result is given out
    with pytest.raises(ProviderOptionError) as info:
        run_cases([F32], provider="cpu", device_id=7, on_result=seen.append, jobs=1)
    assert str(info.value) == OUT_OF_RANGE
    assert seen == []


def test_an_argument_error_is_a_value_error_and_a_type_error() -> None:
    assert issubclass(ArgumentError, OrtLayoutsError)
    assert issubclass(ArgumentError, ValueError) and issubclass(ArgumentError, TypeError)


def test_numpy_integers_are_taken_for_jobs_and_batch_size() -> None:
    jobs = resolve_jobs(np.int64(2), CPU, 1)  # type: ignore[arg-type]
    assert jobs == 2 and type(jobs) is int
    cases = [Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=s) for s in range(3)]
    results = run_cases(cases, provider="cpu", jobs=np.int64(1), batch_size=np.int32(2))  # type: ignore[arg-type]
    assert [r.status for r in results] == [Status.PASS] * 3


def test_plan_batches_refuses_a_device_the_provider_does_not_list(two_cpu_devices: None) -> None:
    with pytest.raises(ProviderOptionError) as info:
        _runner.plan_batches([F32], provider="cpu", device_id=7)
    assert str(info.value) == OUT_OF_RANGE


def test_inputs_naming_no_case_of_the_run_are_refused_before_any_session(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A misspelt id left its case to the default input, silently."""
    case = Case("Transpose", "float32", (2, 3), perm=(1, 0))
    monkeypatch.setattr(_runner, "make_session", _no_session)
    given = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises(ArgumentError) as raised:
        run_cases([case], provider="cpu", jobs=1, inputs={case.id: given, case.id + "x": given})
    assert str(raised.value) == (f"inputs names 1 case ids that are no case's of the run: {[case.id + 'x']}; "
                                 f"valid: the ids of the cases given (e.g. {case.id!r})")


def _no_session(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("a session was made")
