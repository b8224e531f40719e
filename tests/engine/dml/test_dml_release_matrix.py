"""``validate --provider dml --dml-version V1,V2,...``: one selection under several DirectML
releases, each release's report in ``--report DIR/dml-<V>/``, the release matrix (merge's columns
and bisect summary) in ``DIR``.

The argument checks need no stack. The runs need the DirectML stack with two releases or more
set up (``ort-layouts setup dml --dml-version 1.9.1 1.15.4``) and are skipped without it;
``ORT_LAYOUTS_REQUIRE_DML=1`` turns the skip into a failure.

Expected statuses come from outside the code under test: Pad mode ``wrap`` is
``DML_PADDING_MODE_WRAP``, which DirectML has from feature level 6_4 (DirectML 1.15.0 on, in
Microsoft's DirectML version history); before it ONNX Runtime 1.24.4 still places Pad-19 on the
DML EP and DirectML refuses the operator (E_INVALIDARG, 0x80070057). Every other case of the
selection passes bit for bit on every release.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ort_layouts.engine.dml.stack import DmlStack, available_directml_versions, dml_home
from ort_layouts.frontends.cli import main
from ort_layouts.reports.report import read_results

# a tiny selection: Pad uint8 rank 1 with special values: one case of each mode
SELECTION = ["--ops", "Pad", "--dtypes", "uint8", "--ranks", "1", "--values", "special", "--progress", "none"]


def _wrap_supported(version: str) -> bool:
    """DML_PADDING_MODE_WRAP: feature level 6_4, DirectML 1.15.0 and later."""
    return tuple(int(v) for v in version.split(".")) >= (1, 15, 0)


# ---- arguments, checked before any work (no stack needed) ---------------------------------------
def test_unknown_releases_are_all_named_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    code = main(["validate", "--provider", "dml", "--dml-version", "1.9.1,1.11.0", "--dml-version", "2.0",
                 "--report", str(out), *SELECTION])
    err = capsys.readouterr().err
    assert code == 2
    assert ("argument --dml-version: DirectML '1.11.0', '2.0' are not known releases; choices: 1.9.1, "
            "1.10.1, 1.12.0, 1.12.1, 1.13.1, 1.14.1, 1.15.1, 1.15.2, 1.15.4") in err
    assert err.count("\n") == 1 and not out.exists()


def test_a_release_list_needs_the_dml_provider(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    assert main(["validate", "--provider", "cpu", "--dml-version", "1.9.1,1.15.4", "--report", str(out),
                 *SELECTION]) == 2
    assert "--dml-version needs --provider dml" in capsys.readouterr().err
    assert not out.exists()


def test_an_empty_item_in_the_list_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--provider", "dml", "--dml-version", "1.9.1,,1.15.4", *SELECTION]) == 2
    assert "argument --dml-version: '1.9.1,,1.15.4' has an empty item (item 2)" in capsys.readouterr().err


# ---- on the real stack -----------------------------------------------------------------------------
def _releases_or_skip(count: int = 2) -> list[str]:
    stack = DmlStack.default(directml_version="")
    missing = stack.missing()
    releases = available_directml_versions()
    if missing or len(releases) < count:
        reason = (f"the DirectML stack is not set up with {count} releases or more (ort-layouts setup dml "
                  "--dml-version 1.9.1 1.15.4): " + ("; ".join(missing) or f"releases: {releases}"))
        if os.environ.get("ORT_LAYOUTS_REQUIRE_DML"):
            pytest.fail(reason + " (and ORT_LAYOUTS_REQUIRE_DML is set)")
        pytest.skip(reason)
    return releases


@pytest.fixture()
def _fresh_worker() -> Iterator[None]:
    """The process's DirectML worker is closed before and after: a test that points
    ORT_LAYOUTS_DML_HOME elsewhere gets a worker of that home."""
    from ort_layouts.engine.providers import close_dml_worker

    close_dml_worker()
    yield None
    close_dml_worker()


def _home_with(tmp_path: Path, releases: dict[str, str]) -> Path:
    """A DirectML home whose stack is the real one (its bin, Wine prefix and Mesa 25 lavapipe,
    linked) and whose releases are ``releases``: version -> "real" (the real release's folder,
    linked) or "not-a-dll" (a file that carries the version's FileVersion but is no PE image)."""
    real = dml_home()
    home = tmp_path / "home"
    (home / "directml").mkdir(parents=True)
    for part in ("bin", "prefix", "mesa25"):
        (home / part).symlink_to(real / part)
    for version, kind in releases.items():
        if kind == "real":
            (home / "directml" / version).symlink_to(real / "directml" / version)
            continue
        dll = home / "directml" / version / "DirectML.dll"
        dll.parent.mkdir()
        head = b"MZ" + b"\0" * 30 + "FileVersion".encode("utf-16-le") + b"\0\0"  # StringFileInfo's layout
        head += b"\0" * ((-len(head)) % 4)
        dll.write_bytes(head + f"{version}+not-a-dll".encode("utf-16-le") + b"\0\0")
    return home


@pytest.mark.usefixtures("_fresh_worker")
def test_missing_releases_are_named_with_one_setup_command_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    releases = _releases_or_skip(1)
    have = releases[-1]
    wanted = [v for v in ("1.9.1", "1.12.0", "1.15.4") if v != have][:2]
    monkeypatch.setenv("ORT_LAYOUTS_DML_HOME", str(_home_with(tmp_path, {have: "real"})))
    out = tmp_path / "r"
    code = main(["validate", "--provider", "dml", "--dml-version", ",".join([wanted[0], have, wanted[1]]),
                 "--report", str(out), *SELECTION])
    err = capsys.readouterr().err
    assert code == 2
    assert (f"argument --dml-version: DirectML {wanted[0]}, {wanted[1]} are not set up (available: {have}); "
            f"get them with: ort-layouts setup dml --dml-version {wanted[0]} {wanted[1]}") in err
    assert not out.exists()


def test_shards_go_with_one_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    releases = _releases_or_skip()
    out = tmp_path / "r"
    assert main(["validate", "--provider", "dml", "--dml-version", f"{releases[0]},{releases[-1]}",
                 "--shard", "1/2", "--report", str(out), *SELECTION]) == 2
    assert "--shard goes with one --dml-version" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("kind", ["file", "other selection"])
@pytest.mark.usefixtures("_fresh_worker")
def test_a_later_release_s_report_directory_is_refused_before_the_first_release_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    """The run of the first release wrote its report before the second's directory was checked:
    the directory was left with one release's new report beside another selection's."""
    from ort_layouts.reports.writer import ReportWriter

    releases = _releases_or_skip()
    first, last = releases[0], releases[-1]
    out = tmp_path / "r"
    later = out / f"dml-{last}"
    if kind == "file":
        out.mkdir()
        later.write_text("")
        message = f"argument --report: '{later}' is a file, not a directory"
    else:  # a report of another selection (ops Transpose) where this run's would go
        meta = {"provider": "DmlExecutionProvider", "selection": {"ops": ["Transpose"]}}
        with ReportWriter(later, meta=meta, planned=["a"]):
            pass
        message = f"argument --report: report directory '{later}' holds a report of another selection"
    before = sorted(p.name for p in out.iterdir())
    code = main(["validate", "--provider", "dml", "--dml-version", f"{first},{last}", "--report", str(out),
                 *SELECTION])
    captured = capsys.readouterr()
    assert code == 2
    assert message in captured.err and captured.err.count("\n") == 1, captured.err
    assert captured.out == ""  # no release ran
    assert sorted(p.name for p in out.iterdir()) == before  # nothing written beside it


@pytest.mark.usefixtures("_fresh_worker")
def test_a_report_directory_holding_one_run_s_report_is_refused_or_with_force_cleared(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The release matrix was written beside another selection's report in DIR, whose junit.xml
    and report.json a CI job then read as this run's: it is refused before any release runs,
    and --force removes that report before the first release runs."""
    releases = _releases_or_skip()
    first, last = releases[0], releases[-1]
    out = tmp_path / "r"
    assert main(["validate", "--provider", "cpu", "--ops", "Transpose", "--ranks", "1", "--report", str(out),
                 "--progress", "none"]) == 0
    capsys.readouterr()
    held = sorted(p.name for p in out.iterdir())
    assert {"junit.xml", "meta.json", "report.json", "results.jsonl"} <= set(held)
    argv = ["validate", "--provider", "dml", "--dml-version", f"{first},{last}", "--report", str(out),
            *SELECTION]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert f"argument --report: '{out}' holds the report of one run (results.jsonl, meta.json" in captured.err
    assert "use another directory, or --force to remove it" in captured.err and captured.out == ""
    assert sorted(p.name for p in out.iterdir()) == held  # nothing written, nothing removed

    assert main([*argv, "--force"]) in (0, 1)
    capsys.readouterr()
    assert sorted(p.name for p in out.iterdir() if p.name != ".lock") == sorted(
        [f"dml-{first}", f"dml-{last}", "matrix.html", "matrix.json", "matrix.txt"])


@pytest.mark.usefixtures("_fresh_worker")
def test_two_releases_run_into_their_own_reports_and_the_matrix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    releases = _releases_or_skip()
    old, new = releases[0], releases[-1]
    out = tmp_path / "r"
    code = main(["validate", "--provider", "dml", "--dml-version", old, "--dml-version", new,
                 "--report", str(out), *SELECTION])
    stdout = capsys.readouterr().out
    # the cases, read from the suite (not from the reports): one Pad of each mode
    from ort_layouts.engine.selection import resolve_dtypes, select_cases

    cases = select_cases(ops=("Pad",), dtypes=resolve_dtypes(("uint8",)), ranks=(1,), values=("special",))
    assert sorted(c.mode for c in cases) == ["constant", "edge", "reflect", "wrap"]
    wrap = {c.id for c in cases if c.mode == "wrap"}
    fails = {v: not _wrap_supported(v) for v in (old, new)}
    assert code == (1 if any(fails.values()) else 0)

    # one summary line per release, in the order given
    lines = [ln for ln in stdout.splitlines() if re.match(r"DirectML \d", ln)]
    assert [ln.split(":")[0] for ln in lines] == [f"DirectML {old}", f"DirectML {new}"]
    for line, v in zip(lines, (old, new), strict=True):
        passed = len(cases) - (1 if fails[v] else 0)
        assert f": {len(cases)} cases on DmlExecutionProvider (DirectML {v} via " in line
        assert f"{passed} passed, 0 mismatched, {len(cases) - passed} errors" in line

    # each release's report: the DLL the worker loaded is that release's, in its own folder
    for v in (old, new):
        meta = json.loads((out / f"dml-{v}" / "meta.json").read_text())
        stack = meta["stack"]
        assert stack["directml_version"] == v and stack["directml_file_version"].startswith(v + "+")
        assert stack["directml_path"].lower().endswith(f"\\directml\\{v}\\directml.dll")
        statuses = {r.case.id: r.status.value for r in read_results(out / f"dml-{v}" / "results.jsonl")}
        assert statuses == {c.id: "error" if c.id in wrap and fails[v] else "pass" for c in cases}

    # the matrix in DIR: the two releases as columns, the bisect summary
    matrix = json.loads((out / "matrix.json").read_text())
    assert [c["directml_version"] for c in matrix["columns"]] == [old, new]
    assert [c["source"] for c in matrix["columns"]] == [str(out / f"dml-{old}"), str(out / f"dml-{new}")]
    text = (out / "matrix.txt").read_text()
    assert (out / "matrix.html").is_file()
    if fails[old] != fails[new]:
        (change,) = matrix["bisect"]
        assert change["case_id"] in wrap
        assert (change["before_version"], change["before_status"], change["version"], change["status"]) == \
            (old, "ERROR", new, "ok")
        assert "80070057" in change["before_diagnosis"]
        assert f"bisect over DirectML releases: 1 change across {old}, {new}" in stdout
        assert f"Pad mode wrap (1 case; uint8): ERROR on DirectML {old}, ok from {new}" in text
    else:
        assert matrix["bisect"] == []
        assert "0 changes (no difference found)" in stdout
    assert f"the release matrix: {out / 'matrix.txt'}, matrix.json, matrix.html" in stdout


@pytest.mark.usefixtures("_fresh_worker")
def test_a_release_onnx_runtime_cannot_drive_gets_one_line_and_the_others_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A DirectML.dll that carries release 1.9.1's FileVersion but is no PE image: onnxruntime.dll
    delay-loads DirectML.dll (its delay-import table names it), so the worker dies with the
    delay-load helper's 0xC06D007E when the DML EP creates its device."""
    releases = _releases_or_skip(1)
    good = releases[-1]
    bad = "1.9.1" if good != "1.9.1" else "1.10.1"
    monkeypatch.setenv("ORT_LAYOUTS_DML_HOME", str(_home_with(tmp_path, {bad: "not-a-dll", good: "real"})))
    out = tmp_path / "r"
    code = main(["validate", "--provider", "dml", "--dml-version", f"{bad},{good}", "--report", str(out),
                 *SELECTION])
    captured = capsys.readouterr()
    assert code == 2  # a release that could not run
    lines = [ln for ln in captured.out.splitlines() if re.match(r"DirectML \d", ln)]
    assert len(lines) == 2
    assert lines[0].startswith(f"DirectML {bad}: not run: not usable with ONNX Runtime 1.24.4 here: ")
    assert "0xC06D007E" in lines[0]
    assert lines[1].startswith(f"DirectML {good}: 4 cases on DmlExecutionProvider (DirectML {good} via ")
    assert "4 passed, 0 mismatched, 0 errors" in lines[1]
    assert not (out / f"dml-{bad}").exists() and (out / f"dml-{good}" / "results.jsonl").is_file()
    matrix = json.loads((out / "matrix.json").read_text())
    assert [c["directml_version"] for c in matrix["columns"]] == [good]


def test_a_model_is_read_and_its_layout_ops_extracted_once_for_every_release(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """validate --model M --dml-version V1 --dml-version V2: the model's layout nodes are found
    once, and each release runs the same cases (the model's one Transpose)."""
    from ort_layouts.models import extract as extract_module

    releases = _releases_or_skip()
    calls: list[object] = []
    real = extract_module.extract

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args[0])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(extract_module, "extract", counted)
    from ort_layouts.engine import session as session_module

    hashed: list[object] = []
    real_hash = session_module.file_sha256

    def hashing(path: object) -> str:
        hashed.append(path)
        return real_hash(path)  # type: ignore[arg-type]

    monkeypatch.setattr(session_module, "file_sha256", hashing)
    model = Path(__file__).resolve().parents[3] / "models" / "transpose_float32.onnx"
    out = tmp_path / "r"
    code = main(["validate", "--provider", "dml", "--dml-version", releases[0], "--dml-version", releases[-1],
                 "--model", str(model), "--report", str(out), "--progress", "none"])
    capsys.readouterr()
    assert code == 0
    assert len(calls) == 1
    assert len(hashed) == 1  # the model's content hashed once, for every release's selection
    ran = [{r.case.id: r.status.value for r in read_results(out / f"dml-{v}" / "results.jsonl")}
           for v in (releases[0], releases[-1])]
    assert ran[0] == ran[1] and ran[0] and set(ran[0].values()) == {"pass"}
