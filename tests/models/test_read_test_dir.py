"""read_test_dir: a data set's files are read as ONNX's and ONNX Runtime's test runners read them,
input_<N>.pb and output_<N>.pb numbered from 0; a file of another name is refused by name."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ort_layouts import ModelError
from ort_layouts.models.testdata import read_test_dir, write_test_dir

COUNT = 12  # input_10.pb sorts before input_2.pb as text


def _concat_dir(root: Path) -> tuple[Path, list[np.ndarray]]:
    names = [f"in{i}" for i in range(COUNT)]
    graph = helper.make_graph([helper.make_node("Concat", names, ["out"], axis=0)], "g",
                              [helper.make_tensor_value_info(n, TensorProto.INT32, [1]) for n in names],
                              [helper.make_tensor_value_info("out", TensorProto.INT32, [COUNT])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    xs = [np.array([i], dtype=np.int32) for i in range(COUNT)]
    return write_test_dir(model, xs, [np.arange(COUNT, dtype=np.int32)], root / "t"), xs


def test_the_inputs_are_read_in_their_numbers_order_and_other_files_are_not_test_data(tmp_path: Path) -> None:
    directory, xs = _concat_dir(tmp_path)
    data = directory / "test_data_set_0"
    (data / "notes.txt").write_text("not test data\n")
    (data / ".input_a.pb").write_bytes(b"")  # hidden: neither runner reads it
    back = read_test_dir(directory)
    assert list(back.inputs) == [f"in{i}" for i in range(COUNT)]
    assert [int(v[0]) for v in back.inputs.values()] == [int(x[0]) for x in xs]


@pytest.mark.parametrize(("make", "named"), [
    (lambda data: (data / "input_a.pb").write_bytes(b""), "input_a.pb"),
    (lambda data: shutil.move(data / "input_3.pb", data / "input_12.pb"), "input_12.pb"),
    (lambda data: shutil.move(data / "input_0.pb", data / "input_00.pb"), "input_00.pb"),
    (lambda data: (data / "output_x.pb").write_bytes(b""), "output_x.pb"),
], ids=["no number", "a gap", "a leading zero", "an output"])
def test_a_test_data_file_that_is_not_numbered_from_0_is_refused_by_name(tmp_path: Path, make: object,
                                                                         named: str) -> None:
    """A stray input_a.pb raised a bare ValueError from int(). ONNX's runner counts the
    input_*.pb files and reads input_0.pb up to input_<count - 1>.pb, so it would look for a
    file that is not there; ONNX Runtime's refuses the name: neither skips it."""
    directory, _ = _concat_dir(tmp_path)
    data = directory / "test_data_set_0"
    make(data)  # type: ignore[operator]
    prefix = named.split("_")[0]
    count = len(list(data.glob(f"{prefix}_*.pb")))
    missing = [i for i in range(count) if not (data / f"{prefix}_{i}.pb").is_file()]
    assert missing  # what ONNX's runner would look for and not find
    with pytest.raises(ModelError, match=rf"^test data file '{re.escape(str(data / named))}' is not named "
                                         rf"{prefix}_<N>\.pb with N one of 0\.\.{count - 1}; valid: "
                                         r"input_<N>\.pb and output_<N>\.pb numbered from 0 without a gap"):
        read_test_dir(directory)


def _unname(path: Path) -> None:
    tensor = onnx.load_tensor(str(path))
    tensor.name = ""
    path.write_bytes(tensor.SerializeToString())


def test_unnamed_tensors_are_the_graph_s_inputs_and_outputs_by_position(tmp_path: Path) -> None:
    """Both test runners match a data set's tensors to the model by position: two unnamed inputs
    were read as one, keyed '', the other lost."""
    directory, xs = _concat_dir(tmp_path)
    data = directory / "test_data_set_0"
    for f in [*data.glob("input_*.pb"), *data.glob("output_*.pb")]:
        _unname(f)
    back = read_test_dir(directory)
    assert list(back.inputs) == [f"in{i}" for i in range(COUNT)]
    assert [int(v[0]) for v in back.inputs.values()] == [int(x[0]) for x in xs]
    assert list(back.outputs) == ["out"] and back.outputs["out"].tolist() == list(range(COUNT))


def test_two_files_of_one_input_are_refused_naming_it(tmp_path: Path) -> None:
    directory, _ = _concat_dir(tmp_path)
    data = directory / "test_data_set_0"
    tensor = onnx.load_tensor(str(data / "input_0.pb"))  # in0, again as input_1.pb
    (data / "input_1.pb").write_bytes(tensor.SerializeToString())
    with pytest.raises(ModelError, match=r"input_1.pb' and another of .* both hold input 'in0'; valid: one "):
        read_test_dir(directory)


def test_an_unnamed_tensor_past_the_graph_s_inputs_is_refused(tmp_path: Path) -> None:
    directory, _ = _concat_dir(tmp_path)
    data = directory / "test_data_set_0"
    extra = onnx.load_tensor(str(data / "input_0.pb"))
    extra.name = ""
    (data / f"input_{COUNT}.pb").write_bytes(extra.SerializeToString())
    with pytest.raises(ModelError, match=rf"input_{COUNT}.pb' holds an unnamed tensor, and the model has "
                                         rf"{COUNT} inputs"):
        read_test_dir(directory)


def test_a_test_data_file_that_is_no_tensor_is_refused_by_name(tmp_path: Path) -> None:
    """It was protobuf's bare DecodeError ("Error parsing message with type 'onnx.TensorProto'")."""
    root, _ = _concat_dir(tmp_path)
    broken = root / "test_data_set_0" / "input_0.pb"
    broken.write_bytes(b"\xff\xff\xff")
    with pytest.raises(ModelError, match=r"test data file '.*input_0\.pb' is no ONNX TensorProto"):
        read_test_dir(root)
