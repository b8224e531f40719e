"""``setup dml``'s own choices, with its steps stood in for (no download, no Wine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ort_layouts.engine.dml import install
from ort_layouts.engine.dml.stack import DmlStack


def _steps_recorded(monkeypatch: pytest.MonkeyPatch, *, usable: bool = True) -> list[tuple[str, DmlStack]]:
    """Stand in for every step of setup_dml; record which stack each step was given."""
    seen: list[tuple[str, DmlStack]] = []

    def step(name: str, result: Any = None) -> Any:
        def record(stack: DmlStack, *args: Any, **kwargs: Any) -> Any:
            seen.append((name, stack))
            return result
        return record

    for name in ("_mesa", "_dlls", "_worker", "_prefix", "_check", "setup_directml"):
        monkeypatch.setattr(install, name, step(name))
    monkeypatch.setattr(install, "_check_directml", step("_check_directml", usable))
    monkeypatch.setattr(DmlStack, "missing", lambda self: [])
    return seen


def test_setup_works_on_the_private_stack_whatever_the_run_time_variables_say(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """ORT_LAYOUTS_DML_DIRECTML_VERSION pointed the base DLLs and the worker into a release's
    folder (DirectML 1.12.0's DLL was overwritten with 1.15.4's), and ORT_LAYOUTS_DML_VK_ICD made
    the Mesa 25 check run on another driver: setup ignores both."""
    monkeypatch.setenv("ORT_LAYOUTS_DML_DIRECTML_VERSION", "1.12.0")
    monkeypatch.setenv("ORT_LAYOUTS_DML_VK_ICD", str(tmp_path / "other_icd.json"))
    seen = _steps_recorded(monkeypatch)
    stack = install.setup_dml(home=tmp_path, apt=False, log=lambda line: None)
    assert [name for name, _ in seen] == ["_mesa", "_dlls", "_worker", "_prefix", "_check"]
    for _, given in [*seen, ("returned", stack)]:
        assert given.directml_version == "" and given.vk_icd is None and given.home == tmp_path
        assert given.bin_dir == tmp_path / "bin"


def test_setup_fails_when_no_release_asked_for_passes_the_check(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    _steps_recorded(monkeypatch, usable=False)
    with pytest.raises(install.DmlSetupError, match=r"none of the DirectML versions asked for \(1.9.1\)"):
        install.setup_dml(home=tmp_path, apt=False, log=lambda line: None, directml_versions=["1.9.1"])
