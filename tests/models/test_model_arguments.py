"""The model functions refuse a model argument that is no path, ModelFile or ModelProto (None,
an int, bytes) with a ModelError naming the value, its type and what is valid."""

from __future__ import annotations

from typing import Any

import pytest

import ort_layouts as ol
from ort_layouts import ModelError


@pytest.mark.parametrize("model, shown", [(None, "None is a NoneType"), (5, "5 is an int"),
                                          (b"m.onnx", "b'm.onnx' is a bytes")], ids=["None", "int", "bytes"])
@pytest.mark.parametrize("call", [
    lambda m: ol.extract(m),
    lambda m: ol.convert_layout(m),
    lambda m: ol.check_conversion(m, m),
    lambda m: ol.model_cases(m),
    lambda m: ol.model_coverage(m),
], ids=["extract", "convert_layout", "check_conversion", "model_cases", "model_coverage"])
def test_a_model_that_is_no_path_is_a_model_error(call: Any, model: object, shown: str) -> None:
    with pytest.raises(ModelError) as info:
        call(model)
    assert str(info.value) == (f"model {shown}, not a path; valid: the path of an .onnx file (a str or "
                               "os.PathLike), a ModelFile (read_model) or an onnx.ModelProto")
