"""A case that needs more memory than the machine has available is an error before anything of
it is made; the others of its batch still run. The memory figure is the operating system's own."""

from __future__ import annotations

import os
import sys

import pytest

from ort_layouts.engine import environment, runner
from ort_layouts.engine.environment import available_memory_bytes
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.case import Case

MIB = 1 << 20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc/meminfo")
def test_available_memory_is_positive_and_within_the_physical_memory() -> None:
    available = available_memory_bytes()
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert available is not None and 0 < available <= total


def test_a_case_over_the_available_memory_is_an_error_and_is_not_made(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a float32 Transpose of 64 x 64 x 64: a 1 MiB input, a 1 MiB output from ONNX Runtime and a
    # 1 MiB expected output (by hand: 64^3 * 4 bytes = 1,048,576) -> 3 MiB held at once
    big = Case("Transpose", "float32", (64, 64, 64), perm=(2, 0, 1))
    small = Case("Transpose", "float32", (2, 3), perm=(1, 0))
    made: list[Case] = []
    real = runner.make_inputs

    def recording(cases, states=None):  # type: ignore[no-untyped-def]
        made.extend(cases)
        return real(cases, states)

    monkeypatch.setattr(runner, "make_inputs", recording)
    monkeypatch.setattr(environment, "MEMORY_CHECK_BYTES", 1)
    monkeypatch.setattr(environment, "available_memory_bytes", lambda: 3 * MIB - 1)
    over, fine = run_cases([big, small], provider="cpu", jobs=1)
    assert over.status is Status.ERROR and fine.status is Status.PASS
    assert "needs 3 MiB of memory" in over.message and "has 2 MiB available" in over.message
    assert "it was not run" in over.message
    assert made == [small]  # nothing of the large case was made
    monkeypatch.setattr(environment, "available_memory_bytes", lambda: 3 * MIB)
    assert [r.status for r in run_cases([big, small], provider="cpu", jobs=1)] == [Status.PASS] * 2
    monkeypatch.setattr(environment, "available_memory_bytes", lambda: None)  # unknown: not held back
    assert [r.status for r in run_cases([big], provider="cpu", jobs=1)] == [Status.PASS]


def test_a_large_output_is_counted_once_as_its_expected_values_are_never_held(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An output of LARGE_OUTPUT_BYTES or more with a DirectML operator is checked from the
    descriptors: the case holds its input and the output ONNX Runtime returns, no expected copy."""
    from ort_layouts.reference.execute import LARGE_OUTPUT_BYTES

    big = Case("Transpose", "float32", (1, 64, 256, 257), perm=(0, 2, 3, 1))
    size = 4 * 64 * 256 * 257  # by hand: the input's bytes, and the output's
    assert size >= LARGE_OUTPUT_BYTES
    monkeypatch.setattr(environment, "MEMORY_CHECK_BYTES", 1)
    monkeypatch.setattr(environment, "available_memory_bytes", lambda: 2 * size - 1)
    (over,) = run_cases([big], provider="cpu", jobs=1)
    assert over.status is Status.ERROR and "it was not run" in over.message
    monkeypatch.setattr(environment, "available_memory_bytes", lambda: 2 * size)
    (fits,) = run_cases([big], provider="cpu", jobs=1)
    assert fits.status is Status.PASS
