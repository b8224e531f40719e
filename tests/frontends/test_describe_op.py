"""``describe --op``: any data-movement op as the DML EP builds it, from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ort_layouts.frontends.cli import main


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    assert main(["describe", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_slice_is_the_slice1_window_of_directmls_documentation(capsys: pytest.CaptureFixture[str]) -> None:
    # DML_SLICE1_OPERATOR_DESC's example: a 4x4 input, offsets {.., 0, 1}, sizes {.., 4, 3},
    # strides {.., 2, 2} -> a 2x2 output; ONNX: starts [0,1] ends [4,4] steps [2,2]
    d = _json(["--op", "Slice", "--shape", "4,4", "--param", "starts=0,1", "--param", "ends=4,4",
               "--param", "axes=0,1", "--param", "steps=2,2"], capsys)
    op = d["operator"]
    assert op["operator"] == "DML_OPERATOR_SLICE1"
    assert (op["input_window_offsets"], op["input_window_sizes"], op["input_window_strides"]) == (
        [0, 1], [4, 3], [2, 2])
    assert op["output"]["sizes"] == [2, 2]


def test_concat_is_a_join_on_the_axis_shifted_by_the_4d_padding(capsys: pytest.CaptureFixture[str]) -> None:
    # the DML EP pads to 4D on the left: float [2,3] + [2,5] on axis 1 -> JOIN axis 1 + 4 - 2 = 3
    d = _json(["--op", "concat", "--shape", "2,8", "--param", "axis=1", "--param", "parts=3,5"], capsys)
    assert d["operation"] == "Concat" and d["operator"]["Axis"] == 3
    assert main(["describe", "--op", "Concat", "--shape", "2,8", "--param", "axis=1", "--param", "parts=3,5",
                 "--cpp"]) == 0
    cpp = capsys.readouterr().out
    assert cpp.count("DML_BUFFER_TENSOR_DESC joinInput") == 2
    assert cpp.count("DML_BUFFER_TENSOR_DESC joinOutput") == 1
    assert "{1, 1, 2, 3}" in cpp and "{1, 1, 2, 5}" in cpp and "{1, 1, 2, 8}" in cpp


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--op", "Conv", "--shape", "2"], "'Conv'"),
    (["--op", "Tile", "--shape", "2", "--param", "repeats=x"], "repeats='x'"),
    (["--op", "Tile", "--shape", "2", "--param", "colour=red"], "'colour'"),
    (["--shape", "2", "--param", "repeats=2"], "--param goes with --op"),
    (["--op", "Pad", "--shape", "3", "--param", "pads=-1,0"], "negative pads"),
])
def test_bad_op_lines_are_one_error_line(argv: list[str], fragment: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ort-layouts: error: ") and fragment in err[0]


def test_max_elements_draws_a_larger_picture(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from ort_layouts.frontends.cli import main

    assert main(["describe", "--shape", "30,40"]) == 0
    assert "(no picture: descriptor with sizes [30, 40] has 1200 elements" in capsys.readouterr().out
    assert main(["describe", "--shape", "30,40", "--max-elements", "1200"]) == 0
    out = capsys.readouterr().out
    assert "no picture" not in out and "Logical view:" in out
    svg = tmp_path / "p.svg"
    assert main(["describe", "--shape", "30,40", "--svg", str(svg)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ort-layouts: error: argument --max-elements: ")
    assert not svg.exists()
    assert main(["describe", "--shape", "30,40", "--svg", str(svg), "--max-elements", "1200"]) == 0
    assert svg.read_text().startswith("<svg") or "<svg" in svg.read_text()[:200]


@pytest.mark.parametrize("value, what", [("65537", "out of range"), ("99999999999", "out of range"),
                                         ("0", "out of range"), ("many", "not an integer")])
def test_max_elements_over_what_a_picture_draws_is_one_error_line(
        value: str, what: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--max-elements is at most MAX_DRAWN_ELEMENTS, as its help says; a larger one is refused
    before anything is drawn (60000 x 60000 used to allocate 26.8 GiB of offsets)."""
    from ort_layouts.reports.render import MAX_DRAWN_ELEMENTS

    assert main(["describe", "--help"]) == 0
    assert f"at most {MAX_DRAWN_ELEMENTS}, a 256 x 256 picture" in " ".join(capsys.readouterr().out.split())
    assert main(["describe", "--shape", "3,4", "--max-elements", value]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        f"ort-layouts: error: argument --max-elements: {value!r} is {what}; valid: an integer in "
        f"1..{MAX_DRAWN_ELEMENTS}, the most elements a picture draws (see ort-layouts describe --help)"]
    assert main(["describe", "--shape", "256,256", "--max-elements", str(MAX_DRAWN_ELEMENTS)]) == 0
    assert "Logical view:" in capsys.readouterr().out


# ---- describe --op Pad takes --mode, --value and --axes; --strides and --layout go with no --op ----
@pytest.mark.parametrize("extra, mode, value_hex", [
    (["--mode", "reflect"], "REFLECTION", "00000000"),
    (["--param", "mode=edge"], "EDGE", "00000000"),
    (["--value", "7"], "CONSTANT", np.float32(7).tobytes().hex()),
    (["--param", "value=7"], "CONSTANT", np.float32(7).tobytes().hex()),
    (["--value=-0.0"], "CONSTANT", np.float32(-0.0).tobytes().hex()),
    (["--mode", "reflect", "--value", "2.5"], "REFLECTION", np.float32(2.5).tobytes().hex()),
], ids=["mode", "param-mode", "value", "param-value", "negative-zero", "mode-and-value"])
def test_op_pad_takes_the_pad_options(extra: list[str], mode: str, value_hex: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """DML_PADDING_MODE of ONNX's reflect is REFLECTION, of edge EDGE (DML_PADDING1_OPERATOR_DESC);
    the constant is its little-endian float32 bytes (numpy's), where --op used to ignore both."""
    op = _json(["--op", "Pad", "--shape", "3,4", "--param", "pads=1,1,1,1", *extra], capsys)["operator"]
    assert (op["mode"], op["padding_value_hex"]) == (mode, value_hex)
    assert (op["start_padding"], op["end_padding"], op["output"]["sizes"]) == ([0, 0, 1, 1], [0, 0, 1, 1],
                                                                               [1, 1, 5, 6])


def test_op_pad_value_is_the_one_pad_gives_in_the_data_type(capsys: pytest.CaptureFixture[str]) -> None:
    via_op = _json(["--op", "Pad", "--shape", "3,4", "--dtype", "int8", "--param", "pads=1,1,1,1",
                    "--value=-3"], capsys)["operator"]
    via_pad = _json(["--shape", "3,4", "--dtype", "int8", "--pad", "1,1,1,1", "--value=-3"],
                    capsys)["operator"]
    assert via_op["padding_value_hex"] == via_pad["padding_value_hex"] == np.int8(-3).tobytes().hex() == "fd"


def test_op_pad_takes_axes(capsys: pytest.CaptureFixture[str]) -> None:
    """Pad-18's axes: pads [1, 1] on axis 1 only, as np.pad with ((0, 0), (1, 1)) does."""
    d = _json(["--op", "Pad", "--shape", "3,4", "--param", "pads=1,1", "--axes", "1", "--param", "opset=18"],
              capsys)
    assert d["case"]["axes"] == [1]
    assert d["operator"]["output"]["sizes"][-2:] == list(np.pad(np.zeros((3, 4)), ((0, 0), (1, 1))).shape)
    assert (d["operator"]["start_padding"], d["operator"]["end_padding"]) == ([0, 0, 0, 1], [0, 0, 0, 1])


@pytest.mark.parametrize("argv, line", [
    (["--op", "Transpose", "--shape", "3,4", "--param", "perm=1,0", "--strides", "1,3"],
     "--strides does not go with --op: the DML EP reads a node's input as a packed ONNX tensor (row-major); "
     "leave --strides out, or use it with --transpose, --broadcast-to, --pad or a descriptor"),
    (["--op", "Transpose", "--shape", "3,4", "--param", "perm=1,0", "--layout", "WH"],
     "--layout does not go with --op: the DML EP reads a node's input as a packed ONNX tensor (row-major); "
     "leave --layout out, or use it with --transpose, --broadcast-to, --pad or a descriptor"),
    (["--op", "Slice", "--shape", "3,4", "--param", "starts=0", "--param", "ends=2", "--axes", "0"],
     "--axes goes with --pad or --op Pad; with --op Slice use --param axes=..."),
    (["--op", "Transpose", "--shape", "3,4", "--axes", "0"], "--axes goes with --pad or --op Pad; Transpose "
                                                             "takes no axes"),
    (["--op", "DepthToSpace", "--shape", "1,4,2,2", "--param", "blocksize=2", "--mode", "reflect"],
     "--mode goes with --pad or --op Pad; with --op DepthToSpace use --param mode=..."),
    (["--op", "Transpose", "--shape", "3,4", "--value", "7"],
     "--value goes with --pad or --op Pad; Transpose takes no value"),
    (["--op", "Transpose", "--shape", "3,4", "--param", "value=1"],
     "argument --param: value='1' is Pad's constant; Transpose takes no value"),
    (["--op", "Pad", "--shape", "3,4", "--param", "pads=1,1,1,1", "--mode", "reflect", "--param",
      "mode=edge"],
     "argument --mode: the Pad mode is given twice (--mode reflect and --param mode='edge'); valid: one of "
     "the two"),
    (["--op", "Pad", "--shape", "3,4", "--param", "pads=1,1,1,1", "--value", "1", "--param", "value=2"],
     "argument --value: the Pad value is given twice (--value 1 and --param value='2'); valid: one of "
     "the two"),
    (["--op", "Pad", "--shape", "3,4", "--dtype", "int8", "--param", "pads=1,1,1,1", "--value", "300"],
     "argument --value: Pad value 300 does not fit int8; int8 holds -128..127"),
    (["--op", "Pad", "--shape", "3,4", "--dtype", "int8", "--param", "pads=1,1,1,1", "--param", "value=1.5"],
     "argument --param: Pad value 1.5 is not a whole number; int8 holds the integers -128..127"),
    (["--op", "Pad", "--shape", "3,4", "--param", "pads=1,1,1,1", "--param", "value=abc"],
     "argument --param: value='abc' is not a number"),
    (["--shape", "3,4", "--value", "0"], "--mode, --value and --axes go with --pad or --op Pad"),
], ids=["op-strides", "op-layout", "slice-axes", "transpose-axes", "depth-to-space-mode", "transpose-value",
        "transpose-param-value", "mode-twice", "value-twice", "value-too-large", "value-not-whole",
        "value-not-a-number", "value-without-pad"])
def test_an_option_describe_op_would_ignore_is_one_error_line(argv: list[str], line: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"ort-layouts: error: {line}"]


@pytest.mark.parametrize(("dtype", "text", "expected"), [
    ("float32", "-0", np.float32(-0.0).tobytes().hex()),
    ("float16", "-0", np.float16(-0.0).tobytes().hex()),
    ("float32", "0", np.float32(0.0).tobytes().hex()),
    ("int8", "-0", np.int8(0).tobytes().hex()),
])
def test_a_pad_value_of_minus_zero_keeps_its_sign_where_the_type_has_one(
        dtype: str, text: str, expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "--dtype", dtype, "--shape", "3,3", "--pad", "1,1,1,1", f"--value={text}",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["operator"]["padding_value_hex"] == expected


@pytest.mark.parametrize(("dtype", "smallest"), [("float32", "1.4013e-45"), ("float64", "4.94066e-324")])
@pytest.mark.parametrize("text", ["1e-400", "-1e-400"])
def test_a_pad_value_that_became_zero_in_its_parse_is_one_error_line(
        dtype: str, smallest: str, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A nonzero decimal that float() reads as 0.0 / -0.0 gave CONSTANT 0 / -0 and exit 0."""
    assert main(["describe", "--dtype", dtype, "--shape", "3,3", "--pad", "1,1,1,1", f"--value={text}"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"ort-layouts: error: argument --value: Pad value {text} is too small for "
                                f"{dtype} (smallest nonzero {smallest}); it would become 0"]
