"""Fixtures of the engine's tests."""

from __future__ import annotations

import pytest

from ort_layouts.engine import runner as _runner


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that starts its workers, or runs its cases in this process or on workers, fails the
    test: for what ``run_cases`` must refuse before any work."""
    monkeypatch.setattr(_runner, "start_workers", lambda n: pytest.fail("workers started"))
    monkeypatch.setattr(_runner, "_run_here", lambda *a, **k: pytest.fail("the run started"))
    monkeypatch.setattr(_runner, "_run_parallel", lambda *a, **k: pytest.fail("the run started"))
