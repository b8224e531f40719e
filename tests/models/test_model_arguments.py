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


@pytest.mark.parametrize("call", [
    lambda: ol.model_cases("unused.onnx", values="nope"),
    lambda: ol.model_cases("unused.onnx", seed=-1),
], ids=["values", "seed"])
def test_model_cases_refuses_a_bad_value_kind_or_seed_before_reading(call: Any) -> None:
    """They gave [] (each node's case refused in turn and dropped) or a bare TypeError."""
    with pytest.raises(ol.ShapeError, match=r"^(values 'nope' is not valid; valid: \['random', 'special', "
                                            r"'iota'\]|seed -1 is not valid; valid: an integer >= 0)$"):
        call()


@pytest.mark.parametrize(("values", "seed", "message"), [
    ("nope", 0, "values 'nope' is not valid; valid: ['random', 'special', 'iota']"),
    (None, 0, "values None holds no value kind; valid: one of ['random', 'special', 'iota'], or several "
              "(e.g. ('random', 'iota'))"),
    ((), 0, "values () holds no value kind; valid: one of ['random', 'special', 'iota'], or several "
            "(e.g. ('random', 'iota'))"),
    (("random", "x"), 0, "unknown kind 'x'; valid: ['random', 'special', 'iota']"),
    ("random", -1, "seed -1 is not valid; valid: an integer >= 0"),
    ("random", None, "seed None is not valid; valid: an integer >= 0"),
    ("random", 1.5, "seed 1.5 is not valid; valid: an integer >= 0"),
])
def test_cases_of_refuses_a_bad_value_kind_or_seed(values: Any, seed: Any, message: str) -> None:
    from ort_layouts.models.extract import cases_of

    with pytest.raises(ol.ShapeError) as info:
        cases_of([], values=values, seed=seed)
    assert str(info.value) == message


@pytest.mark.parametrize(("layout", "message"), [
    (None, "layout None is a NoneType; valid: a list of LayoutOp values (e.g. extract(model))"),
    ("ab", "layout 'ab' is a str; valid: a list of LayoutOp values (e.g. extract(model))"),
    ([1, 2], "layout[0] 1 is an int, not a LayoutOp; valid: the values extract(model) gives"),
])
def test_coverage_and_cases_of_refuse_what_is_no_list_of_layout_ops(layout: Any, message: str) -> None:
    """coverage_of([1, 2]) raised a bare AttributeError, coverage_of(None) a bare TypeError."""
    from ort_layouts.models.extract import cases_of, coverage_of

    for call in (coverage_of, cases_of):
        with pytest.raises(ol.ArgumentError) as info:
            call(layout)
        assert str(info.value) == message


@pytest.mark.parametrize("call", [
    lambda m, d: ol.extract(m),
    lambda m, d: ol.convert_layout(m),
    lambda m, d: ol.model_cases(m),
    lambda m, d: ol.export_test_dir(m, d),
], ids=["extract", "convert_layout", "model_cases", "export_test_dir"])
def test_an_empty_model_proto_is_refused_as_a_path_to_one_is(call: Any, tmp_path: Any) -> None:
    """An empty onnx.ModelProto was taken (no layout ops, an empty converted model); the same
    proto read from a file was refused."""
    import onnx

    with pytest.raises(ModelError, match=r"^the ModelProto '<memory>' is not an ONNX model: it has no "
                                         r"ir_version, opset_import, graph$"):
        call(onnx.ModelProto(), tmp_path / "out")
