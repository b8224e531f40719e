"""convert_layout refuses one str given for ``names`` (it would be read letter by letter) and
names that are no iterable, with a ModelError naming the value and a list to give."""

from __future__ import annotations

from pathlib import Path

import onnx
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
