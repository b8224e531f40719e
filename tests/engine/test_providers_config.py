"""ProviderConfig refuses a field of the wrong type, named with what is valid, before any session:
a str device id is not device 0, "yes" is not True. Numpy integers are integers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ort_layouts.engine import providers as P
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.case import Case

F32 = Case("Transpose", "float32", (2, 3), perm=(1, 0))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"device_id": "0"}, "device_id '0' is a str; valid: a non-negative int (a Python or numpy integer, "
                         "not a bool)"),
    ({"device_id": True}, "device_id True is a bool; valid: a non-negative int"),
    ({"device_id": 1.0}, "device_id 1.0 is a float; valid: a non-negative int"),
    ({"device_id": None}, "device_id None is not valid; valid: a non-negative int"),
    ({"device_id": -1}, "device_id -1 is negative; valid: a non-negative int"),
    ({"device_id": np.int64(-2)}, "device_id -2 is negative; valid: a non-negative int"),
    ({"optimize": "yes"}, "optimize 'yes' is a str; valid: True or False"),
    ({"optimize": 1}, "optimize 1 is an int; valid: True or False"),
    ({"optimize": None}, "optimize None is not valid; valid: True or False"),
    ({"per_node": "false"}, "per_node 'false' is a str; valid: True or False"),
    ({"record_assignment": 0}, "record_assignment 0 is an int; valid: True or False"),
    ({"disable_cpu_fallback": "no"}, "disable_cpu_fallback 'no' is a str; valid: True or False, or None "
                                     "(on for every EP but the CPU EP)"),
    ({"options": None}, "options None is not valid; valid: a mapping of option names to values, or a "
                        "tuple of (name, value) pairs"),
    ({"options": "device_filter=gpu"}, "options 'device_filter=gpu' is a str; valid: a mapping"),
    ({"options": (("device_filter", "gpu", "npu"),)}, "is a tuple; valid: a mapping of option names"),
], ids=["device-id-str", "device-id-bool", "device-id-float", "device-id-none", "device-id-negative",
        "device-id-numpy-negative", "optimize-str", "optimize-int", "optimize-none", "per-node-str",
        "record-assignment-int", "fallback-str", "options-none", "options-str", "options-triple"])
@pytest.mark.parametrize("name", [P.DML, P.CPU, P.CUDA])
def test_a_field_of_the_wrong_type_is_refused_naming_it_and_the_valid_values(
        name: str, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(P.ProviderOptionError) as caught:
        P.ProviderConfig(name, **kwargs)
    assert message in str(caught.value)


@pytest.mark.parametrize(("name", "message"), [
    (None, "name None is not valid; valid: an execution provider's full name, e.g. ['DmlExecutionProvider', "
           "'WebGpuExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider'] (resolve_provider "
           "gives it for a short name)"),
    (3, "name 3 is an int; valid: an execution provider's full name"),
    ("", "name '' is blank; valid: an execution provider's full name"),
    ("  ", "name '  ' is blank; valid"),
])
def test_a_name_that_is_no_provider_name_is_refused(name: Any, message: str) -> None:
    with pytest.raises(P.ProviderOptionError) as caught:
        P.ProviderConfig(name)
    assert message in str(caught.value)


@pytest.mark.parametrize("given", [np.int64(1), np.int32(1), np.uint8(1), 1])
def test_a_numpy_integer_device_id_is_taken_as_its_int(given: Any) -> None:
    config = P.ProviderConfig(P.DML, device_id=given)
    assert config.device_id == 1 and type(config.device_id) is int
    assert config == P.ProviderConfig(P.DML, device_id=1)
    assert config.provider_options() == {"device_id": 1}
    assert type(config.provider_options()["device_id"]) is int


def test_the_valid_values_are_kept() -> None:
    config = P.ProviderConfig(P.CUDA, device_id=0, options=[("arena_extend_strategy", "kSameAsRequested")],
                              optimize=True, disable_cpu_fallback=False, per_node=False,
                              record_assignment=False)
    assert (config.device_id, config.optimize) == (0, True)
    assert (config.per_node, config.record_assignment) == (False, False)
    assert config.disable_cpu_fallback is False and not config.fallback_disabled
    assert config.options == (("arena_extend_strategy", "kSameAsRequested"),)
    assert P.ProviderConfig(P.CPU, disable_cpu_fallback=None).fallback_disabled is False
    assert P.ProviderConfig(P.DML, disable_cpu_fallback=None).fallback_disabled is True


def test_run_cases_refuses_a_str_device_id_before_any_work(monkeypatch: pytest.MonkeyPatch,
                                                           no_work: None) -> None:
    monkeypatch.setattr(P, "make_session", lambda *a, **k: pytest.fail("a session was made"))
    with pytest.raises(P.ProviderOptionError, match=r"device_id '0' is a str; valid: a non-negative int"):
        run_cases([F32], provider="cpu", device_id="0")  # type: ignore[arg-type]
    with pytest.raises(P.ProviderOptionError, match=r"optimize 'yes' is a str; valid: True or False"):
        run_cases([F32], provider="cpu", optimize="yes")  # type: ignore[arg-type]


def test_dml_options_as_the_command_line_passes_them_are_valid() -> None:
    """What the command line passes for DirectML (an int device id, options as str pairs) is
    valid; the command line itself: tests/frontends/test_cli.py."""
    from ort_layouts.engine.session import check_provider_options

    assert check_provider_options(P.DML, 0, [("performance_preference", "high_performance")]) == {
        "performance_preference": "high_performance"}
