"""write_test_dir: every argument and array is checked before anything is written, and a failure
while writing leaves the directory as it was."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_layouts import ArgumentError, DataTypeError, ReportError, ShapeError
from ort_layouts.models.testdata import read_test_dir, write_test_dir


def _identity(elem: int, shape: list[int] | None = None) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Identity", ["data"], ["result"])], "g",
                              [helper.make_tensor_value_info("data", elem, shape or [2, 3])],
                              [helper.make_tensor_value_info("result", elem, shape or [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _tree(root: Path) -> list[tuple[str, bytes]]:
    return sorted((str(p.relative_to(root)), p.read_bytes() if p.is_file() else b"") for p in root.rglob("*"))


F16 = _identity(TensorProto.FLOAT16)
X16 = np.arange(6, dtype=np.float16).reshape(2, 3)


# ---- data_set -------------------------------------------------------------------------------
@pytest.mark.parametrize(("data_set", "refusal"), [
    (True, "data_set True is a bool, not an integer"),
    ("../../escape", "data_set '../../escape' is a str, not an integer"),
    (1.0, "data_set 1.0 is a float, not an integer"),
    (-1, "data_set -1 is negative"),
])
def test_a_data_set_that_is_no_integer_from_0_is_refused(tmp_path: Path, data_set: object,
                                                          refusal: str) -> None:
    """True made test_data_set_True/, -1 test_data_set_-1/, and '../../escape' wrote the .pb
    files outside any test_data_set_* folder, where no test runner finds them."""
    out = tmp_path / "a" / "b"
    with pytest.raises(ArgumentError, match=rf"^{re.escape(refusal)}; valid: an integer >= 0, the N of "
                                            r"test_data_set_N$"):
        write_test_dir(F16, [X16], [X16], out, data_set=data_set)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "t" / "test_data_set_0").mkdir(parents=True)
    (tmp_path / "t" / "model.onnx").write_bytes(F16.SerializeToString())
    with pytest.raises(ArgumentError, match=re.escape(refusal)):
        read_test_dir(tmp_path / "t", data_set=data_set)  # type: ignore[arg-type]


def test_data_sets_are_numbered_and_one_written_again_is_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "t"
    write_test_dir(F16, [X16], [X16], out)
    write_test_dir(F16, [X16 + 1], [X16 + 1], out, data_set=np.int64(1))  # type: ignore[arg-type]
    (out / "notes.txt").write_text("the user's own file\n")
    (out / "test_data_set_0" / "input_1.pb").write_bytes(b"")  # not of the data set written next
    write_test_dir(F16, [X16 + 2], [X16 + 2], out, data_set=0)
    assert sorted(p.name for p in out.iterdir()) == ["model.onnx", "notes.txt", "test_data_set_0",
                                                     "test_data_set_1"]
    assert sorted(p.name for p in (out / "test_data_set_0").iterdir()) == ["input_0.pb", "output_0.pb"]
    for number, added in ((0, 2), (1, 1)):
        data = read_test_dir(out, data_set=number)
        assert data.inputs["data"].tobytes() == (X16 + added).tobytes()
    assert [p.name for p in tmp_path.iterdir()] == ["t"]  # no staging folder left


# ---- arrays of the graph's types ------------------------------------------------------------
def test_an_input_of_another_type_than_the_graphs_is_refused(tmp_path: Path) -> None:
    """float64 arrays for a float16 graph were written as DOUBLE tensors: ONNX Runtime refuses
    to run the model on them, so the test could never pass."""
    x64 = X16.astype(np.float64)
    session = ort.InferenceSession(F16.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match=r"(?i)type"):  # what a replay of such a file meets
        session.run(None, {"data": x64})
    with pytest.raises(DataTypeError, match=r"^input 'data' is float64 \(DOUBLE\), and the graph's input "
                                            r"'data' is FLOAT16 \(float16\); valid: an array of the graph's "
                                            r"type \(an array is never cast\)$"):
        write_test_dir(F16, [x64], [X16], tmp_path / "t")
    with pytest.raises(DataTypeError, match=r"^output 'result' is int32 \(INT32\), and the graph's output "
                                            r"'result' is FLOAT16"):
        write_test_dir(F16, {"data": X16}, {"result": X16.astype(np.int32)}, tmp_path / "t")
    assert list(tmp_path.iterdir()) == []


def test_an_object_array_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """It raised a bare NotImplementedError after model.onnx and an empty test_data_set_0/ were
    written."""
    objects = np.array([[1, 2, 3], [4, 5, 6]], dtype=object)
    with pytest.raises(DataTypeError, match=r"^input 'data' is object \(STRING\), and the graph's input "
                                            r"'data' is FLOAT16"):
        write_test_dir(F16, [objects], [X16], tmp_path / "t")
    strings = _identity(TensorProto.STRING)
    with pytest.raises(DataTypeError, match=r"^input 'data' is an object array holding 1, an int; valid: "
                                            r"an object array of strs or bytes"):
        write_test_dir(strings, [objects], [objects], tmp_path / "t")
    untyped = _identity(TensorProto.STRING)
    untyped.graph.input[0].type.tensor_type.elem_type = TensorProto.UNDEFINED  # any type goes
    with pytest.raises(DataTypeError, match=r"^input 'data' is an object array holding 1, an int"):
        write_test_dir(untyped, [objects], [objects], tmp_path / "t")
    assert list(tmp_path.iterdir()) == []
    words = np.array([["a", "b", "c"], ["d", "e", "f"]], dtype=object)
    write_test_dir(strings, [words], [words.astype(str)], tmp_path / "t")
    tensor = onnx.load_tensor(str(tmp_path / "t" / "test_data_set_0" / "input_0.pb"))
    assert tensor.data_type == TensorProto.STRING and list(tensor.string_data) == [b"a", b"b", b"c", b"d",
                                                                                   b"e", b"f"]


def test_an_array_of_the_other_byte_order_is_written_with_its_values(tmp_path: Path) -> None:
    """onnx's from_array takes native byte order alone: a big-endian float32 array raised a bare
    ValueError after model.onnx was written."""
    model = _identity(TensorProto.FLOAT)
    x = np.array([[1.5, -0.0, np.inf], [3.25, 7.0, -2.0]], dtype=">f4")
    write_test_dir(model, [x], [x], tmp_path / "t")
    data = read_test_dir(tmp_path / "t")
    assert data.inputs["data"].dtype == np.float32
    assert data.inputs["data"].tobytes() == x.astype("<f4").tobytes()


# ---- arrays of the graph's shapes -----------------------------------------------------------
@pytest.mark.parametrize(("inputs", "outputs", "refusal"), [
    ([X16.T], [X16], "input 'data' has shape [3, 2], and the graph's input 'data' has shape [2, 3]"),
    ([X16], [X16.reshape(6)],
     "output 'result' has shape [6], and the graph's output 'result' has shape [2, 3]"),
    ([X16.reshape(1, 2, 3)], [X16],
     "input 'data' has shape [1, 2, 3], and the graph's input 'data' has shape [2, 3]"),
    ({"data": X16}, {"result": X16[:1]},
     "output 'result' has shape [1, 3], and the graph's output 'result' has shape [2, 3]"),
], ids=["transposed-input", "flat-output", "other-rank", "mapping"])
def test_an_array_of_another_shape_than_the_graphs_is_refused_before_anything_is_written(
        tmp_path: Path, inputs: object, outputs: object, refusal: str) -> None:
    """A 3x2 array for a 2x3 graph input was written as is: ONNX Runtime refuses to run the
    model on it ("Got invalid dimensions"), so the test could never pass."""
    session = ort.InferenceSession(F16.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match=r"(?i)dimensions"):  # what a replay of such a file meets
        session.run(None, {"data": X16.T.copy()})
    with pytest.raises(ShapeError, match=rf"^{re.escape(refusal)}; valid: an array of the graph's shape "
                                         r"\(a symbolic dimension takes any size\)$"):
        write_test_dir(F16, inputs, outputs, tmp_path / "t")  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
    write_test_dir(F16, [X16], [X16], tmp_path / "kept")
    before = _tree(tmp_path / "kept")
    with pytest.raises(ShapeError):
        write_test_dir(F16, inputs, outputs, tmp_path / "kept")  # type: ignore[arg-type]
    assert _tree(tmp_path / "kept") == before


def test_a_symbolic_or_unset_dimension_takes_any_size_and_its_name_is_shown(tmp_path: Path) -> None:
    model = _identity(TensorProto.FLOAT16, ["N", 3])  # type: ignore[list-item]
    model.graph.output[0].type.tensor_type.shape.dim[0].Clear()  # neither a size nor a name
    for rows in (1, 2, 5):
        x = np.zeros((rows, 3), np.float16)
        write_test_dir(model, [x], [x], tmp_path / f"n{rows}")
        assert read_test_dir(tmp_path / f"n{rows}").outputs["result"].shape == (rows, 3)
    with pytest.raises(ShapeError, match=r"^input 'data' has shape \[2, 4\], and the graph's input 'data' "
                                         r"has shape \['N', 3\]; "):
        write_test_dir(model, [np.zeros((2, 4), np.float16)], [X16], tmp_path / "t")
    with pytest.raises(ShapeError, match=r"^output 'result' has shape \[2\], and the graph's output 'result' "
                                         r"has shape \['\?', 3\]; "):
        write_test_dir(model, [X16], [np.zeros(2, np.float16)], tmp_path / "t")
    unshaped = _identity(TensorProto.FLOAT16)
    unshaped.graph.input[0].type.tensor_type.ClearField("shape")  # no shape declared: any goes
    write_test_dir(unshaped, [X16.reshape(6)], [X16], tmp_path / "u")
    assert not (tmp_path / "t").exists()


# ---- the other arguments ----------------------------------------------------------------------
@pytest.mark.parametrize(("kwargs", "error", "refusal"), [
    ({"model": None}, ArgumentError, "model None is a NoneType, not an onnx.ModelProto"),
    ({"inputs": None}, ArgumentError, "inputs None is a NoneType; valid: a list of arrays"),
    ({"outputs": X16}, ArgumentError, "outputs array(["),
    ({"directory": None}, ArgumentError, "directory None is a NoneType, not a path"),
    ({"directory": ""}, ReportError, "directory '' is an empty path; valid: the path of a directory"),
])
def test_arguments_of_the_wrong_kind_are_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         kwargs: dict[str, object], error: type[Exception],
                                                         refusal: str) -> None:
    monkeypatch.chdir(tmp_path)
    arguments: dict[str, object] = {"model": F16, "inputs": [X16], "outputs": [X16], "directory": "t"}
    with pytest.raises(error, match="^" + re.escape(refusal)):
        write_test_dir(**(arguments | kwargs))  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


# ---- a failure while writing ------------------------------------------------------------------
@pytest.mark.parametrize("error", [OSError, KeyboardInterrupt], ids=["failure", "interrupt"])
def test_a_failure_while_writing_leaves_the_directory_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]) -> None:
    import ort_layouts.models.testdata as testdata

    out = tmp_path / "t"
    write_test_dir(F16, [X16], [X16], out)
    before = _tree(out)
    real = numpy_helper.from_array

    def fails_at_the_output(array: np.ndarray, name: str | None = None) -> TensorProto:
        if name == "result":
            raise error("stopped")
        return real(array, name)

    monkeypatch.setattr(testdata.numpy_helper, "from_array", fails_at_the_output)
    with pytest.raises(error, match="stopped"):
        write_test_dir(F16, [X16 + 1], [X16 + 1], out)
    assert _tree(out) == before
    with pytest.raises(error, match="stopped"):
        write_test_dir(F16, [X16 + 1], [X16 + 1], tmp_path / "new" / "t")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "t"]  # no staging folder left
    assert list((tmp_path / "new").iterdir()) == []


def test_a_directory_that_is_a_file_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    from ort_layouts.models.testdata import export_test_dir
    from ort_layouts.operators.case import Case

    afile = tmp_path / "afile"
    afile.write_text("the user's own file\n")
    with pytest.raises(ReportError, match=rf"^test directory {re.escape(repr(str(afile)))} is a file; valid: "
                                          r"a directory, or a path where none is yet$"):
        write_test_dir(F16, [X16], [X16], afile)
    with pytest.raises(ReportError, match=rf"^export directory {re.escape(repr(str(afile)))} is a file; "
                                          r"valid: a new or empty directory$"):
        export_test_dir(Case("Transpose", "float32", (2, 3), perm=(1, 0)), afile)
    assert [p.name for p in tmp_path.iterdir()] == ["afile"]  # no staging folder either
    assert afile.read_text() == "the user's own file\n"


def test_string_bytes_that_are_not_utf_8_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    """ONNX holds strings as UTF-8: such bytes were written, and neither read_test_dir nor
    numpy_helper.to_array could read them back (a bare UnicodeDecodeError)."""
    strings = _identity(TensorProto.STRING, [2])
    bad = np.array([b"\xff\x00", b"x"], dtype=object)
    refusal = r"^input 'data' holds the bytes b'\\xff\\x00', which are not UTF-8"
    with pytest.raises(DataTypeError, match=refusal):
        write_test_dir(strings, [bad], [bad], tmp_path / "t")
    assert list(tmp_path.iterdir()) == []
    good = np.array(["\u00e9t\u00e9".encode(), b"x"], dtype=object)  # UTF-8 bytes are taken
    write_test_dir(strings, [good], [good], tmp_path / "t")
    (read,) = read_test_dir(tmp_path / "t").inputs.values()
    assert list(read.reshape(-1)) == ["\u00e9t\u00e9", "x"]
