"""ONNX test directories: written, read back with onnx's loaders, replayed on ONNX Runtime."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_layouts import DataType, ModelError, ReportError
from ort_layouts.models.testdata import (
    export_test_dir,
    read_test_dir,
    sanitize,
    write_test_dir,
)
from ort_layouts.operators.case import Case

TRANSFORMER = Path(__file__).parents[1] / "data" / "transformer_block.onnx"


def _replay(directory: Path) -> None:
    """What onnx_test_runner does, bit for bit: run model.onnx on input_*.pb, compare output_*.pb."""
    data = directory / "test_data_set_0"
    inputs = {}
    for f in sorted(data.glob("input_*.pb")):
        t = onnx.load_tensor(str(f))
        inputs[t.name] = numpy_helper.to_array(t)
    expected = [onnx.load_tensor(str(f)) for f in sorted(data.glob("output_*.pb"))]
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(directory / "model.onnx"), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    got = sess.run(None, inputs)
    assert names == [t.name for t in expected]
    for tensor, actual in zip(expected, got, strict=True):
        want = numpy_helper.to_array(tensor)
        assert want.dtype == actual.dtype and want.shape == actual.shape
        assert np.ascontiguousarray(want).tobytes() == np.ascontiguousarray(actual).tobytes(), tensor.name


def _transpose_model(elem: int, shape, perm) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Transpose", ["data"], ["result"], perm=list(perm))], "t",
                              [helper.make_tensor_value_info("data", elem, shape)],
                              [helper.make_tensor_value_info("result", elem, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_write_read_round_trip_with_nan_payloads(tmp_path):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    raw = x.view(np.uint32)
    raw[0, 0, 1] = 0x7FC01234  # quiet NaN with a payload
    raw[1, 2, 3] = 0x80000000  # -0.0
    y = np.transpose(x, (2, 0, 1))
    model = _transpose_model(TensorProto.FLOAT, (2, 3, 4), (2, 0, 1))
    d = write_test_dir(model, [x], [y], tmp_path / "t")
    assert sorted(p.name for p in (d / "test_data_set_0").iterdir()) == ["input_0.pb", "output_0.pb"]
    t_in = onnx.load_tensor(str(d / "test_data_set_0" / "input_0.pb"))
    assert t_in.name == "data"
    assert numpy_helper.to_array(t_in).tobytes() == x.tobytes()
    back = read_test_dir(d)
    assert list(back.inputs) == ["data"] and list(back.outputs) == ["result"]
    assert back.outputs["result"].tobytes() == np.ascontiguousarray(y).tobytes()
    _replay(d)


def test_write_by_name_and_errors(tmp_path):
    model = _transpose_model(TensorProto.INT8, (2, 3), (1, 0))
    x = np.arange(6, dtype=np.int8).reshape(2, 3)
    write_test_dir(model, {"data": x}, {"result": x.T}, tmp_path / "named")
    _replay(tmp_path / "named")
    with pytest.raises(ModelError, match="missing"):
        write_test_dir(model, {"other": x}, [x.T], tmp_path / "bad")
    with pytest.raises(ModelError, match="2 input arrays"):
        write_test_dir(model, [x, x], [x.T], tmp_path / "bad")
    with pytest.raises(ModelError, match="not an ONNX test directory"):
        read_test_dir(tmp_path)


def test_sanitize():
    name = "Pad-float32-3x4-constant-padsm1.0-v0000c07f"
    assert sanitize(name) == name
    assert sanitize("a/b\\c:d e") == "a_b_c_d_e"
    assert sanitize("..") == "case"


# ---- cases through the graph builder and the oracle -------------------------------------------
CASES = [
    Case("Transpose", DataType.FLOAT32, (2, 3, 4), perm=(2, 0, 1), values="special"),
    Case("Transpose", DataType.FLOAT16, (1, 3, 2, 2), perm=(0, 2, 3, 1), values="special"),
    Case("Transpose", DataType.INT64, (3, 5), values="special"),
    Case("Expand", DataType.UINT8, (3, 1), target_shape=(2, 3, 4)),
    Case("Pad", DataType.FLOAT32, (3, 4), pads=(1, 2, 2, 3), mode="reflect"),
    Case("Pad", DataType.INT32, (2, 3), pads=(0, 1, 1, 0), pad_value_hex="07000000"),
]


def _numpy_reference(case: Case, x: np.ndarray) -> np.ndarray:
    """An independent expectation: numpy's own transpose / broadcast / pad."""
    if case.op == "Transpose":
        return np.transpose(x, case.perm)
    if case.op == "Expand":
        return np.broadcast_to(x, np.broadcast_shapes(x.shape, case.target_shape))
    r = x.ndim
    widths = list(zip(case.pads[:r], case.pads[r:], strict=True))
    mode = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "wrap"}[case.mode]
    kwargs = {}
    if case.mode == "constant" and case.pad_value_hex:
        kwargs["constant_values"] = np.frombuffer(bytes.fromhex(case.pad_value_hex), dtype=x.dtype)[0]
    return np.pad(x, widths, mode=mode, **kwargs)


def test_export_cases_replay_bit_exact(tmp_path):
    dirs = export_test_dir(CASES, tmp_path)
    assert [d.name for d in dirs] == [sanitize(c.id) for c in CASES]
    manifest = json.loads((tmp_path / "cases.json").read_text())
    assert [m["cases"][0]["id"] for m in manifest] == [c.id for c in CASES]
    for case, d in zip(CASES, dirs, strict=True):
        data = read_test_dir(d)
        (x,) = data.inputs.values()
        (y,) = data.outputs.values()
        assert x.shape == case.shape and x.dtype == case.data_type.to_numpy()
        assert list(data.inputs) == ["x0"] and list(data.outputs) == ["y0"]
        model = onnx.load(str(d / "model.onnx"))
        assert (model.opset_import[0].version, model.ir_version) == (19, 9)  # what the DML EP serves
        expected = np.ascontiguousarray(_numpy_reference(case, x))
        assert expected.tobytes() == np.ascontiguousarray(y).tobytes(), case.id
        _replay(d)


def test_export_batched(tmp_path):
    old_pad = Case("Pad", DataType.FLOAT32, (2, 2), pads=(1, 0, 0, 1), mode="edge", opset=10)
    first, second = export_test_dir([*CASES[:4], old_pad], tmp_path, batched=True)
    assert (first.name, second.name) == ("batched", "batched_opset10")
    data = read_test_dir(first)
    assert list(data.inputs) == ["x0", "x1", "x2", "x3"]
    assert onnx.load(str(second / "model.onnx")).opset_import[0].version == 10
    _replay(first)
    _replay(second)


def test_export_model_cases_and_cli(tmp_path, capsys):
    from ort_layouts.frontends.cli import main

    assert main(["export", "--out", str(tmp_path), "--model", str(TRANSFORMER), "--dim", "batch=2"]) == 0
    assert "onnx_test_runner -e dml" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "cases.json").read_text())
    kinds = [m["cases"][0]["op"] for m in manifest]
    assert [kinds.count(k) for k in ("Transpose", "Expand", "Reshape")] == [3, 1, 2]  # 2 distinct Reshapes
    assert all(m["cases"][0]["origin"].startswith(f"model:{TRANSFORMER}#") for m in manifest)
    for m in manifest:
        _replay(tmp_path / m["directory"])


def test_ort_layouts_export_command(tmp_path, capsys):
    from ort_layouts.frontends.cli import main

    assert main(["export", "--out", str(tmp_path), "--ops", "Pad", "--dtypes", "int8", "--ranks", "1"]) == 0
    manifest = json.loads((tmp_path / "cases.json").read_text())
    assert len(manifest) > 3
    for m in manifest:
        (case,) = m["cases"]
        assert case["op"] == "Pad" and case["data_type"] == "INT8" and len(case["shape"]) == 1
    for m in manifest[:5]:
        _replay(tmp_path / m["directory"])


def test_an_export_into_a_directory_another_export_is_writing_is_refused(tmp_path):
    """Two exports into one new directory used to both write it: it held the directories of both
    and the cases.json of one. The second is now refused while the first holds it, and a later
    one finds the first's export there."""
    import multiprocessing

    from ort_layouts.reports.lock import DirectoryLock

    out = tmp_path / "cases"
    out.mkdir()
    holding = DirectoryLock(out, command="ort-layouts export --out cases", what="export directory")
    try:
        in_use = rf"^export directory '.*cases' is in use by another run: pid {os.getpid()} "
        with pytest.raises(ReportError, match=in_use + r".*ort-layouts export --out cases; wait for it"):
            export_test_dir(CASES[:2], out)
    finally:
        holding.release()
    (out / ".lock").unlink()
    assert list(out.iterdir()) == []
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        outcomes = pool.starmap(_export_or_error, [(CASES[:3], out), (CASES[3:5], out)])
    written = [o for o in outcomes if isinstance(o, list)]
    assert len(written) >= 1 and all(isinstance(o, (list, str)) for o in outcomes), outcomes
    refused = [o for o in outcomes if isinstance(o, str)]
    assert all("is in use by another run" in o or "already holds an earlier export" in o for o in refused)
    listed = json.loads((out / "cases.json").read_text())
    assert sorted(p.name for p in out.iterdir()) == sorted([*(m["directory"] for m in listed), "cases.json"])
    assert len(written) == 1 and sorted(written[0]) == sorted(m["directory"] for m in listed)


def _export_or_error(cases: list[Case], out: Path) -> list[str] | str:
    try:
        return [p.name for p in export_test_dir(cases, out)]
    except ReportError as e:
        return str(e)


def test_export_refuses_a_directory_that_is_not_empty_and_replaces_an_export(tmp_path):
    out = tmp_path / "cases"
    first = export_test_dir(CASES[:3], out)
    with pytest.raises(ReportError, match=r"already holds an earlier export \(cases.json\); a replay of it "
                                          r"would run those too"):
        export_test_dir(CASES[3:5], out)
    assert sorted(p.name for p in out.iterdir()) == sorted([*(d.name for d in first), "cases.json"])
    (out / "notes.txt").write_text("the user's own file\n")
    second = export_test_dir(CASES[3:5], out, replace=True)
    # the earlier export is gone, the user's file stays
    kept = sorted([*(d.name for d in second), "cases.json", "notes.txt"])
    assert sorted(p.name for p in out.iterdir()) == kept
    manifest = json.loads((out / "cases.json").read_text())
    assert [m["cases"][0]["id"] for m in manifest] == [c.id for c in CASES[3:5]]
    other = tmp_path / "other"
    other.mkdir()
    (other / "a").write_text("x")
    with pytest.raises(ReportError, match="already holds files"):
        export_test_dir(CASES[:1], other)
    with pytest.raises(ReportError, match="holds no earlier export to replace"):
        export_test_dir(CASES[:1], other, replace=True)
    assert [p.name for p in other.iterdir()] == ["a"]


def test_export_force_over_a_manifest_nested_too_deeply_is_one_line(tmp_path, capsys):
    """A cases.json of arrays nested deeper than Python's JSON reader goes raised RecursionError
    (a traceback) instead of saying that the directory holds no earlier export."""
    from ort_layouts.frontends.cli import main

    (tmp_path / "cases.json").write_text("[" * 100_000)
    assert main(["export", "--out", str(tmp_path), "--ops", "Identity", "--dtypes", "int8", "--ranks", "1",
                 "--force"]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "holds no earlier export to replace (cases.json: maximum recursion" in lines[0]
    assert "Traceback" not in err and out == ""
    assert [p.name for p in tmp_path.iterdir()] == ["cases.json"]


def test_export_command_force(tmp_path, capsys):
    from ort_layouts.frontends.cli import main

    args = ["export", "--out", str(tmp_path), "--ops", "Identity", "--dtypes", "int8"]
    assert main([*args, "--ranks", "1"]) == 0
    capsys.readouterr()
    assert main([*args, "--ranks", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "already holds an earlier export" in err[0] and "--force" in err[0]
    assert main([*args, "--ranks", "2", "--force"]) == 0
    manifest = json.loads((tmp_path / "cases.json").read_text())
    assert all(len(m["cases"][0]["shape"]) == 2 for m in manifest)
    written = sorted([*(m["directory"] for m in manifest), "cases.json"])
    assert sorted(p.name for p in tmp_path.iterdir()) == written


def _tree(root: Path) -> list[tuple[str, bytes]]:
    return sorted((str(p.relative_to(root)), p.read_bytes() if p.is_file() else b"")
                  for p in root.rglob("*"))


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt], ids=["failure", "interrupt"])
def test_an_export_that_stops_midway_leaves_the_earlier_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            error: type[BaseException]) -> None:
    import ort_layouts.models.testdata as testdata

    out = tmp_path / "cases"
    export_test_dir(CASES[:3], out)
    (out / "notes.txt").write_text("the user's own file\n")
    before = _tree(out)
    real, made = testdata.expected_outputs, []

    def stops_at_the_third(case: Case, x: np.ndarray) -> list[np.ndarray]:
        made.append(case)
        if len(made) == 3:
            raise error("stopped")
        return real(case, x)

    monkeypatch.setattr(testdata, "expected_outputs", stops_at_the_third)
    with pytest.raises(error, match="stopped"):
        export_test_dir(CASES[3:8], out, replace=True)
    assert len(made) == 3
    assert _tree(out) == before  # the earlier export whole, nothing of the new one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases"]  # no staging folder left
    with pytest.raises(error, match="stopped"):  # into a new directory: none made
        made.clear()
        export_test_dir(CASES[3:8], tmp_path / "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases"]
    monkeypatch.setattr(testdata, "expected_outputs", real)
    second = export_test_dir(CASES[3:8], out, replace=True)  # --force after it still replaces
    assert sorted(p.name for p in out.iterdir()) == sorted([*(d.name for d in second), "cases.json",
                                                            "notes.txt"])
    for d in second:
        _replay(d)


def test_export_command_force_that_fails_keeps_the_export(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import ort_layouts.models.testdata as testdata
    from ort_layouts.frontends.cli import main

    out = tmp_path / "keep"
    args = ["export", "--out", str(out), "--ops", "Identity", "--dtypes", "int8"]
    assert main([*args, "--ranks", "1"]) == 0
    before = _tree(out)

    def fails(case: Case, x: np.ndarray) -> list[np.ndarray]:
        raise ModelError(f"no expected output for {case.id}")

    monkeypatch.setattr(testdata, "expected_outputs", fails)
    capsys.readouterr()
    assert main([*args, "--ranks", "2", "--force"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no expected output for Identity-int8" in err[0]
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep"]


def test_export_command_on_a_full_disk_names_the_export_directory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    import ort_layouts.models.testdata as testdata
    from ort_layouts.frontends.cli import main

    def full(*args: object, **kwargs: object) -> None:  # as a write() on a full disk: no filename
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(testdata, "write_test_dir", full)
    out = tmp_path / "cases"
    assert main(["export", "--out", str(out), "--ops", "Identity", "--dtypes", "int8", "--ranks", "1"]) == 2
    assert capsys.readouterr().err == f"ort-layouts: error: No space left on device: {str(out)!r}\n"
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_export_refuses_a_name_the_earlier_export_does_not_list(tmp_path: Path) -> None:
    out = tmp_path / "cases"
    export_test_dir(CASES[:1], out)
    (out / sanitize(CASES[1].id)).mkdir()  # the user's, of a name the new export writes
    with pytest.raises(ReportError, match=r"holds \['" + sanitize(CASES[1].id)):
        export_test_dir(CASES[:2], out, replace=True)
    assert (out / sanitize(CASES[0].id) / "model.onnx").is_file()


# ---- the final moves: a failure there puts --out back as it was ----------------------------
def _failing_move(monkeypatch: pytest.MonkeyPatch, fails: Callable[[Path, Path], bool]) -> list[Path]:
    """Make os.replace raise the first time ``fails(source, target)`` holds; the rest (the moves
    back included) go through. Returns the targets of the moves that went through."""
    real, done, failed = os.replace, [], []

    def replace(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        if not failed and fails(Path(source), Path(target)):
            failed.append(target)
            raise OSError(28, "No space left on device", str(target))
        real(source, target)
        done.append(Path(target))

    monkeypatch.setattr(os, "replace", replace)
    return done


# which move fails, for an earlier export of CASES[:3] replaced by CASES[3:5]
_MOVES = {
    "first earlier directory moved aside": lambda s, t: t.parent.name == ".replaced",
    "earlier cases.json moved aside": lambda s, t: t.parent.name == ".replaced" and t.name == "cases.json",
    "first new directory moved in": lambda s, t: s.parent.suffix == ".partial" and t.name != "cases.json",
    "new cases.json moved in": lambda s, t: s.parent.suffix == ".partial" and t.name == "cases.json",
}


@pytest.mark.parametrize("fails", list(_MOVES.values()), ids=list(_MOVES))
def test_a_move_that_fails_puts_the_earlier_export_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        fails: Callable[[Path, Path], bool]) -> None:
    out = tmp_path / "cases"
    export_test_dir(CASES[:3], out)
    (out / "notes.txt").write_text("the user's own file\n")
    before = _tree(out)
    assert len([p for p in out.iterdir() if p.is_dir()]) == 3
    done = _failing_move(monkeypatch, fails)
    with pytest.raises(OSError, match="No space left on device"):
        export_test_dir(CASES[3:5], out, replace=True)
    assert _tree(out) == before  # every file of the earlier export, byte for byte; nothing of the new one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases"]  # no hidden staging folder left
    if fails is _MOVES["new cases.json moved in"]:  # the last move: every other one was made and undone
        assert len([t for t in done if t.parent == out]) == 2 + 3 + 1  # 2 new in, 3 dirs + cases.json back


def test_a_move_that_fails_into_a_new_directory_leaves_none(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _failing_move(monkeypatch, lambda s, t: t.name == "cases.json")
    with pytest.raises(OSError, match="No space left on device"):
        export_test_dir(CASES[:2], tmp_path / "new")
    assert list(tmp_path.iterdir()) == []  # neither the directory nor a staging folder
    empty = tmp_path / "empty"
    empty.mkdir()
    _failing_move(monkeypatch, lambda s, t: t.name == "cases.json")
    with pytest.raises(OSError, match="No space left on device"):
        export_test_dir(CASES[:2], empty)
    assert [p.name for p in tmp_path.iterdir()] == ["empty"] and list(empty.iterdir()) == []


def test_export_command_force_whose_move_fails_keeps_the_export(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.frontends.cli import main

    out = tmp_path / "keep"
    args = ["export", "--out", str(out), "--ops", "Identity", "--dtypes", "int8"]
    assert main([*args, "--ranks", "1"]) == 0
    before = _tree(out)
    _failing_move(monkeypatch, _MOVES["first new directory moved in"])
    capsys.readouterr()
    assert main([*args, "--ranks", "2", "--force"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ort-layouts: error: No space left on device: ")
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep"]


@pytest.mark.parametrize(("content", "named"), [
    (b"\xff\xff\xff", "cannot load ONNX model"), (b"", "is empty (0 bytes), not an ONNX model")])
def test_a_test_directory_whose_model_is_no_onnx_model_is_refused(tmp_path: Path, content: bytes,
                                                                   named: str) -> None:
    (tmp_path / "test_data_set_0").mkdir()
    (tmp_path / "model.onnx").write_bytes(content)
    with pytest.raises(ModelError, match=re.escape(named)):
        read_test_dir(tmp_path)


def test_a_rank_0_case_is_written_as_rank_0_tensors(tmp_path: Path) -> None:
    """A scalar case's input_0.pb and output_0.pb hold 0-d tensors (dims []), as its model
    declares: they were written with dims [1], which ONNX Runtime's test runner reads as another
    shape than the model's."""
    case = Case("Identity", "float32", ())
    (directory,) = export_test_dir([case], tmp_path)
    for name in ("input_0.pb", "output_0.pb"):
        tensor = onnx.load_tensor(str(directory / "test_data_set_0" / name))
        assert list(tensor.dims) == [] and numpy_helper.to_array(tensor).shape == ()
    model = onnx.load(str(directory / "model.onnx"))
    assert len(model.graph.input[0].type.tensor_type.shape.dim) == 0


def test_an_export_of_a_case_larger_than_the_memory_names_it_before_any_is_made(tmp_path, monkeypatch):
    """It failed with a MemoryError, which the command line could only call "the input is too
    large for this machine's memory"."""
    from ort_layouts import ShapeError
    from ort_layouts.engine import environment

    # the runner's check (engine.environment.short_of_memory), not one of the export's own
    monkeypatch.setattr(environment, "available_memory_bytes", lambda: 300 << 20)
    big = Case("Transpose", DataType.FLOAT32, (1 << 13, 1 << 13), perm=(1, 0))  # 256 MiB in, 256 out
    out = tmp_path / "out"
    with pytest.raises(ShapeError, match=rf"^case {re.escape(big.id)} \(input \[8192, 8192\], suite\) "
                                         r"needs 512 MiB for its input and expected outputs, and this "
                                         r"machine has 300 MiB available; valid: smaller shapes"):
        export_test_dir([CASES[0], big], out)
    assert not out.exists() and list(tmp_path.iterdir()) == []
