"""convert_layout refuses one str given for ``names`` (it would be read letter by letter) and
names that are no iterable, with a ModelError naming the value and a list to give."""

from __future__ import annotations

from pathlib import Path

import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ort_layouts as ol
from ort_layouts import ModelError


def _relu(path: Path, x: str = "x", y: str = "y") -> Path:
    """y = Relu(x), both [1, 3, 4, 4]: a rank-4 input and output that convert_layout converts."""
    graph = helper.make_graph([helper.make_node("Relu", [x], [y])], "relu",
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 3, 4, 4])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


@pytest.mark.parametrize("names", ["xy", "x_in"])
def test_convert_layout_refuses_one_str_for_names(tmp_path: Path, names: str) -> None:
    """'xy' named both tensors of a model whose tensors are 'x' and 'y' letter by letter; 'x_in'
    named '_', 'i' and 'n' as missing."""
    model = _relu(tmp_path / "m.onnx", *(("x", "y") if names == "xy" else ("x_in", "y")))
    with pytest.raises(ModelError) as info:
        ol.convert_layout(model, names=names)  # type: ignore[arg-type]
    assert str(info.value) == (f"names {names!r} is one str, not a list of input and output names; valid: a "
                               f"list or other iterable of input and output names, e.g. [{names!r}]")
    converted = ol.convert_layout(model, names=["y"])  # the list form converts just that tensor
    assert [n.name for n in converted.graph.node if n.op_type == "Transpose"] == ["ort_layouts.convert/y"]


def test_convert_layout_refuses_names_that_are_no_iterable(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"^names 5 is not a list of input and output names; valid: "):
        ol.convert_layout(_relu(tmp_path / "m.onnx"), names=5)  # type: ignore[arg-type]


def test_a_new_name_is_new_to_an_unused_sparse_initializer_too(tmp_path: Path) -> None:
    """The inner tensor took the name 'x__nchw' of a sparse initializer no node reads: the model
    written failed onnx's checker (not in SSA form) and ONNX Runtime (duplicate definition)."""
    sparse = helper.make_sparse_tensor(helper.make_tensor("x__nchw", TensorProto.FLOAT, [1], [5.0]),
                                       helper.make_tensor("i", TensorProto.INT64, [1], [0]), [1])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 4])])
    graph.sparse_initializer.append(sparse)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    converted = ol.convert_layout(model)
    onnx.checker.check_model(converted, full_check=True)
    ort.InferenceSession(converted.SerializeToString(), providers=["CPUExecutionProvider"])  # loads
    assert "x__nchw" not in {name for node in converted.graph.node for name in node.output}
