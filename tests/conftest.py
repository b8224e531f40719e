"""Test isolation: DirectML through the worker is seen only by the tests that ask for it.

When ``ort-layouts setup dml`` has run on a machine, the DirectML EP becomes the default
provider there. Tests outside ``tests/engine/dml`` assert what a machine without it does, so
they see an empty DirectML home; the DirectML tests see the real one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

DML_TESTS = Path(__file__).parent / "engine" / "dml"


@pytest.fixture(autouse=True)
def _dml_only_where_asked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    if DML_TESTS in Path(str(request.node.fspath)).parents:
        return
    monkeypatch.setenv("ORT_LAYOUTS_DML_HOME", str(tmp_path_factory.getbasetemp() / "no-dml-home"))


@pytest.fixture
def two_cpu_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU EP as the one provider there is, listing two devices, whatever this ONNX Runtime
    lists: a build that lists no CPU device has no device id to refuse."""
    from ort_layouts.engine import providers

    devices = tuple(providers.DeviceInfo("Example", f"cpu-{i}", type="CPU", ep=providers.CPU)
                    for i in range(2))
    listed = [providers.ProviderInfo(providers.CPU, "cpu", True, devices)]
    monkeypatch.setattr(providers, "list_providers", lambda: list(listed))


@pytest.fixture
def dml_stack() -> Any:
    """The DirectML stack the worker runs (``DmlStack.default()``); the test is skipped where it
    is not set up, and fails there when ``ORT_LAYOUTS_REQUIRE_DML`` is set."""
    import os

    from ort_layouts.engine.dml.stack import DmlStack
    from ort_layouts.engine.providers import dml_through_worker

    stack = DmlStack.default()
    missing = stack.missing()
    if missing or not dml_through_worker():
        reason = "the DirectML stack is not set up (ort-layouts setup dml): " + "; ".join(missing)
        if os.environ.get("ORT_LAYOUTS_REQUIRE_DML"):
            pytest.fail(reason + " (and ORT_LAYOUTS_REQUIRE_DML is set)")
        pytest.skip(reason)
    return stack


@pytest.fixture
def cases_built(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every Case constructed (``dataclasses.replace`` included) from here on, in order."""
    from ort_layouts.operators.case import Case

    built: list[Case] = []
    post_init = Case.__post_init__

    def counted(self: Case) -> None:
        built.append(self)
        post_init(self)

    monkeypatch.setattr(Case, "__post_init__", counted)
    return built
