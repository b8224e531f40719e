"""merge_reports, merge_shards, find_shards and write_matrix refuse a path that is no str or
os.PathLike (None, an int) and one str given for the list of sources (it would be read letter by
letter) with a ReportError naming the value and what is valid, before reading anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ort_layouts as ol
from ort_layouts import ReportError
from ort_layouts.reports.merge import Matrix, find_shards, write_matrix


@pytest.mark.parametrize("bad, shown", [(None, "None is a NoneType"), (5, "5 is an int")],
                         ids=["None", "int"])
def test_merge_reports_refuses_a_source_that_is_no_path(bad: object, shown: str) -> None:
    with pytest.raises(ReportError) as info:
        ol.merge_reports([bad])  # type: ignore[list-item]
    assert str(info.value) == (f"sources[0] {shown}, not a path; valid: a report directory or report.json "
                               "file (a str or os.PathLike), or a Report")


@pytest.mark.parametrize("call, what", [
    (lambda s: ol.merge_reports(s), "report directories"),
    (lambda s: ol.merge_shards(s, "out"), "shard report directories"),
    (lambda s: find_shards(s), "shard report directories"),
], ids=["merge_reports", "merge_shards", "find_shards"])
def test_one_str_for_the_sources_is_refused(call: Any, what: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """'r1' was read as the reports 'r' and '1': the message named 'r' as missing."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r1").mkdir()
    with pytest.raises(ReportError) as info:
        call("r1")
    assert str(info.value) == (f"sources 'r1' is one str, not a list of {what}; valid: a list or other "
                               f"iterable of {what}, e.g. ['r1']")


def test_merge_shards_refuses_an_out_that_is_no_path(tmp_path: Path) -> None:
    """Checked before the shards are looked for: the missing shard is not what is named."""
    with pytest.raises(ReportError) as info:
        ol.merge_shards([tmp_path / "missing"], None)  # type: ignore[arg-type]
    assert str(info.value) == ("out None is a NoneType, not a path; valid: the merged report's directory "
                               "(a str or os.PathLike)")


def test_merge_shards_refuses_a_force_that_is_no_bool_before_reading_anything(tmp_path: Path) -> None:
    """force="no" is true: it replaced a report of another selection in out."""
    (tmp_path / "out").mkdir()
    with pytest.raises(ol.ArgumentError) as info:
        ol.merge_shards([tmp_path / "missing"], tmp_path / "out", force="no")  # type: ignore[arg-type]
    assert str(info.value) == "force 'no' is a str, not a bool; valid: True or False"
    assert list((tmp_path / "out").iterdir()) == []


def test_find_shards_refuses_an_item_that_is_no_path() -> None:
    with pytest.raises(ReportError, match=r"^sources\[1\] 5 is an int, not a path; valid: a shard's report"):
        find_shards(["a", 5])  # type: ignore[list-item]


def test_write_matrix_refuses_a_directory_that_is_no_path() -> None:
    with pytest.raises(ReportError) as info:
        write_matrix(Matrix((), (), {}), None)  # type: ignore[arg-type]
    assert str(info.value) == ("directory None is a NoneType, not a path; valid: the directory to write "
                               "into (a str or os.PathLike)")


def test_an_empty_path_is_refused_not_taken_for_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Path("")`` is ".": write_matrix("") wrote matrix.json into the current directory, and
    load_report("") read it as a report directory."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ReportError) as info:
        write_matrix(Matrix((), (), {}), "")
    assert str(info.value) == ("directory '' is an empty path; valid: the directory to write into (a str or "
                               "os.PathLike) ('.' for the current directory)")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ReportError, match=r"^path '' is an empty path; valid: a report directory"):
        ol.load_report("")
    with pytest.raises(ReportError, match=r"^sources\[0\] '' is an empty path"):
        find_shards([""])


@pytest.mark.parametrize(("matrix", "text", "message"), [
    (None, False, "matrix None is a NoneType, not a Matrix; valid: a Matrix, e.g. "
                  "merge_reports(['report-a', 'report-b'])"),
    ("m", False, "matrix 'm' is a str, not a Matrix; valid: a Matrix, e.g. "
                 "merge_reports(['report-a', 'report-b'])"),
    (Matrix((), (), {}), 1, "text 1 is an int, not a bool; valid: True (matrix.txt too) or False"),
    (Matrix((), (), {}), "yes", "text 'yes' is a str, not a bool; valid: True (matrix.txt too) or False"),
], ids=["matrix-none", "matrix-str", "text-int", "text-str"])
def test_write_matrix_refuses_what_is_no_matrix_before_making_the_directory(
        tmp_path: Path, matrix: Any, text: Any, message: str) -> None:
    """write_matrix(None, out) made ``out`` and then raised AttributeError."""
    with pytest.raises(ol.ArgumentError) as info:
        write_matrix(matrix, tmp_path / "out", text=text)
    assert str(info.value) == message
    assert list(tmp_path.iterdir()) == []


def test_a_matrix_that_cannot_be_made_makes_no_directory(tmp_path: Path) -> None:
    """Its files are made before the directory is: a matrix whose page fails leaves none."""
    class Broken(Matrix):
        def to_html(self) -> str:
            raise RuntimeError("no page")

    with pytest.raises(RuntimeError, match="no page"):
        write_matrix(Broken((), (), {}), tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_a_matrix_a_full_disk_fails_to_write_leaves_no_directory_it_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """merge --out on a full disk failed, as it should, but left its new directory behind
    (empty); a directory that was there before stays."""
    from ort_layouts.reports import merge

    def full_disk(files: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(merge, "atomic_write_texts", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_matrix(Matrix((), (), {}), tmp_path / "out")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "there").mkdir()
    with pytest.raises(OSError, match="No space left"):
        write_matrix(Matrix((), (), {}), tmp_path / "there")
    assert (tmp_path / "there").is_dir()


def test_a_report_a_full_disk_fails_to_write_leaves_no_directory_it_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """write_report into a new directory, on a full disk: the directory (with only its lock
    file) stayed."""
    from ort_layouts.reports import writer

    def full_disk(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer, "_write_files", full_disk)
    report = ol.Report({"provider": "CPUExecutionProvider"}, [])
    with pytest.raises(OSError, match="No space left"):
        ol.write_report(report, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []
