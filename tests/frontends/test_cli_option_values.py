"""Values that start with "-": a negative number, list or infinity after its option is its
value (argparse alone takes "-inf" for an option and asks for one argument), and after ``--``,
the end of the options, every argument is as written (a file named ``-1.onnx``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ort_layouts.frontends.cli import main, parse_command_line


@pytest.mark.parametrize("text", ["-inf", "-Infinity", "-nan", "-2", "-1.5", "-.5"])
def test_a_negative_value_after_its_option_is_its_value(text: str) -> None:
    args = parse_command_line(["describe", "--shape", "3,4", "--pad", "1,1,1,1", "--value", text])
    assert args.value == text


def test_describe_pads_with_minus_infinity(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "--shape", "2", "--pad", "1,1", "--value", "-inf", "--json"]) == 0
    described = json.loads(capsys.readouterr().out)
    constant = np.frombuffer(bytes.fromhex(described["operator"]["padding_value_hex"]), np.float32)[0]
    assert constant.tobytes() == np.float32(-np.inf).tobytes()


def test_after_the_end_of_options_a_file_named_like_a_number_is_the_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    graph = helper.make_graph([helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              tmp_path / "m.onnx")
    shutil.copy(tmp_path / "m.onnx", tmp_path / "-1.onnx")
    monkeypatch.chdir(tmp_path)
    assert parse_command_line(["extract", "--", "-1.onnx"]).model == "-1.onnx"
    assert main(["extract", "--", "-1.onnx"]) == 0
    assert "Transpose" in capsys.readouterr().out
    assert parse_command_line(["extract", "--", "--pad"]).model == "--pad"  # nothing after -- is an option
