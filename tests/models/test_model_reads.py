"""Each model command reads its model file once (onnx.load counted): the argument check reads
it, and the command works on what it read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_layouts.frontends.cli import main
from ort_layouts.models.extract import read_model
from ort_layouts.models.testdata import export_test_dir

Cap = pytest.CaptureFixture[str]


def _save(path: Path, batch: int | str) -> Path:
    """y = Pad(Transpose(x, NCHW -> NHWC)), x [batch, 3, 4, 5]: two layout nodes, a rank-4 input
    and output for convert; with a symbolic batch, no case until it is pinned."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], name="to_nhwc", perm=[0, 2, 3, 1]),
             helper.make_node("Pad", ["t", "pads"], ["y"], name="pad")]
    graph = helper.make_graph(
        nodes, "reads", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4, 7, 3])],
        [numpy_helper.from_array(np.array([0, 0, 1, 0, 0, 0, 1, 0], np.int64), "pads")])
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                       ir_version=8).SerializeToString())
    return path


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files onnx.load (or its other name, onnx.load_model) reads from here on."""
    real, read = onnx.load, []

    def load(f: str | Path, *args: object, **kwargs: object) -> onnx.ModelProto:
        read.append(str(f))
        return real(f, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(onnx, "load", load)
    monkeypatch.setattr(onnx, "load_model", load)
    return read


@pytest.mark.parametrize("argv", [
    ["extract", "{model}"],
    ["extract", "{model}", "--json"],
    ["extract", "{model}", "--ops", "Pad"],
    ["convert", "{model}", "{dir}/nhwc.onnx"],
    ["convert", "{model}", "{dir}/nhwc.onnx", "--check"],
    ["export", "--out", "{dir}/cases", "--model", "{model}"],
    ["validate", "--model", "{model}", "--provider", "cpu"],
    ["validate", "--model", "{model}", "--provider", "cpu", "--values", "random,special,iota"],
    ["validate", "--model", "{model}", "--provider", "cpu", "--report", "{dir}/report"],
], ids=lambda argv: " ".join(a for a in argv if "{" not in a))
def test_a_model_command_reads_its_model_once(argv: list[str], tmp_path: Path, reads: list[str],
                                              capsys: Cap) -> None:
    model = _save(tmp_path / "m.onnx", 1)
    args = [a.format(model=model, dir=tmp_path) for a in argv]
    assert main(args) == 0, capsys.readouterr().err
    assert reads == [str(model)]


@pytest.mark.parametrize("argv", [
    ["validate", "--model", "{model}", "--provider", "cpu"],
    ["export", "--out", "{dir}/cases", "--model", "{model}"],
], ids=["validate", "export"])
def test_a_model_with_nothing_to_do_is_read_once_too(argv: list[str], tmp_path: Path, reads: list[str],
                                                     capsys: Cap) -> None:
    model = _save(tmp_path / "n.onnx", "N")  # N not pinned: no case, and the reasons printed
    assert main([a.format(model=model, dir=tmp_path) for a in argv]) == 3
    err = capsys.readouterr().err
    assert "dimension 'N' of 'x' is not pinned" in err and "nothing written" in err
    assert reads == [str(model)]


def test_the_command_reads_the_model_the_check_read(tmp_path: Path, reads: list[str], capsys: Cap) -> None:
    """What the command reports is the file's: the origins name the path as given."""
    model = _save(tmp_path / "m.onnx", 1)
    assert main(["extract", str(model), "--json"]) == 0
    ops = json.loads(capsys.readouterr().out)
    assert [(op["node"], op["origin"]) for op in ops] == [("to_nhwc", f"model:{model}#to_nhwc"),
                                                         ("pad", f"model:{model}#pad")]
    assert ops[1]["output_shape"] == [1, 4, 7, 3]
    assert reads == [str(model)]


def test_export_test_dir_of_a_path_reads_it_once(tmp_path: Path, reads: list[str]) -> None:
    model = _save(tmp_path / "m.onnx", 1)
    written = export_test_dir(model, tmp_path / "cases")
    assert len(written) == 2 and reads == [str(model)]
    reads.clear()
    assert len(export_test_dir(read_model(model), tmp_path / "again")) == 2 and reads == [str(model)]


# ---- the model's layout ops are extracted once a command (shape inference, the check of --dim) --
@pytest.fixture
def inferences(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The graphs ONNX shape inference runs on from here on (extract runs it once, and checks
    the --dim names against the dim_params it gives)."""
    real, graphs = onnx.shape_inference.infer_shapes, []

    def infer(model: onnx.ModelProto, *args: object, **kwargs: object) -> onnx.ModelProto:
        graphs.append(model.graph.name)
        return real(model, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", infer)
    return graphs


@pytest.mark.parametrize(("argv", "code"), [
    (["validate", "--model", "{model}", "--provider", "cpu", "--dim", "N=1"], 0),
    (["validate", "--model", "{model}", "--provider", "cpu", "--dim", "N=1", "--values", "random,iota"], 0),
    (["validate", "--model", "{model}", "--provider", "cpu"], 3),  # no case: the notes say why
    (["export", "--out", "{dir}/cases", "--model", "{model}", "--dim", "N=1"], 0),
    (["export", "--out", "{dir}/cases", "--model", "{model}"], 3),
], ids=["validate", "validate-values", "validate-nothing", "export", "export-nothing"])
def test_a_model_command_extracts_its_layout_ops_once(argv: list[str], code: int, tmp_path: Path,
                                                      inferences: list[str], capsys: Cap) -> None:
    model = _save(tmp_path / "n.onnx", "N")
    assert main([a.format(model=model, dir=tmp_path) for a in argv]) == code, capsys.readouterr().err
    assert inferences == ["reads"]


def test_a_dim_the_model_does_not_have_is_refused_after_one_extraction(tmp_path: Path, inferences: list[str],
                                                                       capsys: Cap) -> None:
    model = _save(tmp_path / "n.onnx", "N")
    assert main(["validate", "--model", str(model), "--provider", "cpu", "--dim", "Q=2"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "dimensions ['Q'] are not dim_params of the model; its dim_params: ['N']" in line
    assert inferences == ["reads"]


# ---- convert --check serializes the converted model once: ONNX Runtime runs the bytes it writes --
def test_convert_check_serializes_the_converted_model_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: Cap) -> None:
    from ort_layouts.models import convert

    real, serialized = convert.serialized_model, []

    def serialize(model: onnx.ModelProto, what: str) -> bytes:
        serialized.append(real(model, what))
        return serialized[-1]

    monkeypatch.setattr(convert, "serialized_model", serialize)
    model, out = _save(tmp_path / "m.onnx", 1), tmp_path / "nhwc.onnx"
    assert main(["convert", str(model), str(out), "--check"]) == 0, capsys.readouterr().err
    assert "conversion check: passed" in capsys.readouterr().out
    assert len(serialized) == 1 and out.read_bytes() == serialized[0]
