"""check_conversion's random inputs: made in the model's element type (no float64 copy), and
refused before anything is made when they would take over CHECK_INPUT_LIMIT_IN_BYTES in all."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ort_layouts import ArgumentError, ModelError, ShapeError
from ort_layouts.frontends.cli import main
from ort_layouts.models.convert import CHECK_INPUT_LIMIT_IN_BYTES, check_conversion, convert_layout


def _model(elem_type: int = TensorProto.FLOAT, *, reduce: bool = False, extra: bool = False
           ) -> onnx.ModelProto:
    """y = Relu(x) with x [N, 3, 4, 4] (ReduceSum to one element with ``reduce``); with ``extra``
    a second input z [N, 3, 4, 4] added to x first."""
    inputs = [helper.make_tensor_value_info("x", elem_type, ["N", 3, 4, 4])]
    nodes = []
    x = "x"
    if extra:
        inputs.append(helper.make_tensor_value_info("z", elem_type, ["N", 3, 4, 4]))
        nodes.append(helper.make_node("Add", ["x", "z"], ["s"]))
        x = "s"
    if reduce:
        nodes.append(helper.make_node("ReduceSum", [x], ["y"], keepdims=0))
        out = helper.make_tensor_value_info("y", elem_type, [])
    else:
        nodes.append(helper.make_node("Relu", [x], ["y"]))
        out = helper.make_tensor_value_info("y", elem_type, ["N", 3, 4, 4])
    graph = helper.make_graph(nodes, "check", inputs, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_the_bound_is_one_gib() -> None:
    assert CHECK_INPUT_LIMIT_IN_BYTES == 1024 ** 3


def test_inputs_over_the_bound_are_refused_before_anything_is_made() -> None:
    """N = 100,000,000: [N, 4, 4, 3] float32 is 19.2e9 bytes, which the check tried to allocate
    (and twice over in float64)."""
    model = _model()
    tracemalloc.start()
    try:
        with pytest.raises(ModelError) as info:
            check_conversion(model, convert_layout(model), dims={"N": 100_000_000})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(info.value) == (
        "input 'x' of shape [100000000, 4, 4, 3] (float32) takes 19200000000 bytes of random data, over "
        "the check's bound of 1073741824 bytes (1 GiB) for its inputs in all; valid: dims that keep the "
        "inputs within it (a symbolic dimension is 1 unless given), or a larger bound (limit_bytes; convert "
        "--check-limit-mib on the command line)")
    assert peak < 10 << 20


def test_the_bound_is_of_all_inputs_together() -> None:
    """Two int8 inputs of 48 * N bytes each: N = 12,000,000 makes 576e6 bytes each, within the
    bound alone, over it together; the second is named, with the total."""
    model = _model(TensorProto.INT8, extra=True)
    with pytest.raises(ModelError, match=r"^input 'z' of shape \[12000000, 4, 4, 3\] \(int8\) takes "
                                         r"576000000 bytes of random data \(1152000000 with the inputs "
                                         r"before it\), over"):
        check_conversion(model, convert_layout(model, names=["x", "z"]), dims={"N": 12_000_000})


def test_a_dimension_too_large_for_numpy_is_refused_as_over_the_bound() -> None:
    """numpy's own ValueError ("Maximum allowed dimension exceeded") came out before."""
    model = _model()
    with pytest.raises(ModelError, match=r"^input 'x' of shape \[4611686018427387904, 4, 4, 3\]"):
        check_conversion(model, convert_layout(model), dims={"N": 2**62})


def test_a_dimension_beyond_int64_is_refused_as_no_onnx_dimension() -> None:
    model = _model()
    with pytest.raises(ShapeError, match=r"^dimension N=99999999999999999999 is not an integer >= 1 and <= "
                                         r"9223372036854775807"):
        check_conversion(model, convert_layout(model), dims={"N": 99999999999999999999})


def test_the_command_line_refuses_it_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    source = tmp_path / "dyn.onnx"
    onnx.save(_model(), source)
    assert main(["convert", str(source), str(tmp_path / "d2.onnx"), "--check", "--dim", "N=100000000"]) == 2
    assert "over the check's bound of 1073741824 bytes (1 GiB)" in capsys.readouterr().err
    assert not (tmp_path / "d2.onnx").exists()


def test_a_float32_input_is_drawn_in_float32() -> None:
    """4 MiB of float32 input, converted at the input only, the output one element: the check
    holds that input and its transposed copy for the original (8 MiB, about 2.3 times the input
    traced in all); a float64 draw cast to float32 held 12 MiB at once (about 3.1 times)."""
    model = _model(reduce=True)
    n = (1 << 20) // 48  # elements of x: 48 * n, 4 MiB in float32
    converted = convert_layout(model, names=["x"])
    tracemalloc.start()
    try:
        result = check_conversion(model, converted, dims={"N": n})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result
    input_bytes = 48 * n * 4
    assert peak < 2.75 * input_bytes, peak


@pytest.mark.parametrize("elem_type", [TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE,
                                       TensorProto.INT8, TensorProto.UINT8, TensorProto.INT32,
                                       TensorProto.INT64, TensorProto.BOOL],
                         ids=lambda t: TensorProto.DataType.Name(t).lower())
def test_each_type_checks_bit_identical(elem_type: int) -> None:
    """Identity instead of Relu (which bool and the unsigned types lack)."""
    x = helper.make_tensor_value_info("x", elem_type, ["N", 3, 4, 4])
    y = helper.make_tensor_value_info("y", elem_type, ["N", 3, 4, 4])
    model = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "id", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    result = check_conversion(model, convert_layout(model), dims={"N": 2}, seed=3)
    assert result and [(o.dtype, o.shape) for o in result.outputs] == [
        (str(np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))), (2, 4, 4, 3))]


def test_a_larger_bound_lets_the_check_run_and_a_smaller_one_refuses() -> None:
    """x [6000, 3, 4, 4] float32: 1,152,000 bytes, over 1 MiB, within 2 MiB."""
    model = _model()
    converted = convert_layout(model)
    with pytest.raises(ModelError, match=r"^input 'x' of shape \[6000, 4, 4, 3\] \(float32\) takes 1152000 "
                                         r"bytes of random data, over the check's bound of 1048576 bytes "
                                         r"\(1 MiB\)"):
        check_conversion(model, converted, dims={"N": 6000}, limit_bytes=1 << 20)
    assert check_conversion(model, converted, dims={"N": 6000}, limit_bytes=2 << 20)
    assert check_conversion(model, converted, dims={"N": 6000}, limit_bytes=1_152_000)  # up to it is in
    with pytest.raises(ModelError, match=r"bound of 1151999 bytes for"):
        check_conversion(model, converted, dims={"N": 6000}, limit_bytes=1_151_999)


@pytest.mark.parametrize("limit", [0, -1, True, 1.5, "1024", None], ids=repr)
def test_a_bound_that_is_no_positive_integer_is_refused_before_the_model_is_read(limit: object) -> None:
    with pytest.raises(ArgumentError, match=r"^limit_bytes .* is not a number of bytes; valid: an integer "
                                            r">= 1 \(default 1073741824, 1 GiB\)$"):
        check_conversion("no-such-model.onnx", "no-such-model.onnx", limit_bytes=limit)  # type: ignore[arg-type]


def test_the_command_line_raises_the_bound_with_check_limit_mib(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "dyn.onnx"
    onnx.save(_model(), source)
    out = tmp_path / "out.onnx"
    args = ["convert", str(source), str(out), "--check", "--dim", "N=6000"]
    assert main([*args, "--check-limit-mib", "1"]) == 2
    err = capsys.readouterr().err
    assert "over the check's bound of 1048576 bytes (1 MiB)" in err and "--check-limit-mib" in err
    assert not out.exists()
    assert main([*args, "--check-limit-mib", "2"]) == 0
    assert "conversion check: passed" in capsys.readouterr().out and out.exists()


@pytest.mark.parametrize("value, message", [
    ("0", "'0' is below 1 MiB"), ("-5", "'-5' is below 1 MiB"), ("1.5", "'1.5' is not a whole number of MiB"),
    ("lots", "'lots' is not a whole number of MiB"), ("", "'' is not a whole number of MiB")])
def test_the_command_line_refuses_a_bad_check_limit_before_any_work(
        value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.onnx"
    code = main(["convert", str(tmp_path / "missing.onnx"), str(out), "--check",
                 f"--check-limit-mib={value}"])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"argument --check-limit-mib: {message}; valid: an integer >= 1" in lines[0]
    assert "missing.onnx" not in err  # refused before the model is looked at


def test_the_command_line_takes_check_limit_mib_only_with_check(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "dyn.onnx"
    onnx.save(_model(), source)
    assert main(["convert", str(source), str(tmp_path / "o.onnx"), "--check-limit-mib", "4096"]) == 2
    assert "--check-limit-mib goes with --check" in capsys.readouterr().err
    assert not (tmp_path / "o.onnx").exists()
