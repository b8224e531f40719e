"""export's lock on --out names the command that holds it, as validate's and merge's do: a
second export refused meanwhile is told which run to wait for (it was told "ort-layouts export"
whatever the command)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from ort_layouts.frontends.cli import main
from ort_layouts.models import testdata


def test_the_export_s_lock_names_its_command_and_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cases"
    held: list[dict[str, Any]] = []

    def export_locked(cases: Any, directory: Path, **kwargs: Any) -> list[str]:
        held.append(json.loads((directory / ".lock").read_text()))
        return []

    monkeypatch.setattr(testdata, "_export_locked", export_locked)
    argv = ["export", "--out", str(out), "--ops", "Identity", "--ranks", "1"]
    assert main(argv) == 0, capsys.readouterr().err
    (holder,) = held
    assert holder["command"] == f"ort-layouts export --out {out} --ops Identity --ranks 1"
    started = datetime.datetime.fromisoformat(holder["started"])
    assert abs((datetime.datetime.now(datetime.UTC) - started).total_seconds()) < 600
