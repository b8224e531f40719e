"""short_of_memory: the one check of a case's memory that an export makes (and a run can make)
before a case is made: below MEMORY_CHECK_BYTES the machine is not asked; above, the bytes
available are given back where they are fewer than those needed, None otherwise or where the
machine cannot tell."""

from __future__ import annotations

import pytest

from ort_layouts.engine import environment
from ort_layouts.engine.environment import MEMORY_CHECK_BYTES, short_of_memory

MIB = 1 << 20


def test_the_threshold_is_256_mib() -> None:
    assert MEMORY_CHECK_BYTES == 256 * MIB == 268_435_456


@pytest.mark.parametrize(("needed", "available", "short"), [
    (256 * MIB, 256 * MIB - 1, 256 * MIB - 1),  # one byte short
    (256 * MIB, 256 * MIB, None),  # exactly enough
    (512 * MIB, 300 * MIB, 300 * MIB),
    (512 * MIB, 0, 0),  # none available at all
    (512 * MIB, None, None),  # the machine cannot tell: not held back
], ids=["one-byte-short", "exactly", "short", "none-available", "unknown"])
def test_a_case_of_the_threshold_or_more_is_held_to_the_available_memory(
        monkeypatch: pytest.MonkeyPatch, needed: int, available: int | None, short: int | None) -> None:
    monkeypatch.setattr(environment, "available_memory_bytes", lambda: available)
    assert short_of_memory(needed) == short


def test_a_smaller_case_never_asks_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    def asked() -> int:
        raise AssertionError("the machine was asked for a case below the threshold")

    monkeypatch.setattr(environment, "available_memory_bytes", asked)
    assert short_of_memory(256 * MIB - 1) is None and short_of_memory(0) is None
