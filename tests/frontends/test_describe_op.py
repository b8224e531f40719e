"""``describe --op``: any data-movement op as the DML EP builds it, from the command line."""

from __future__ import annotations

import json
from pathlib import Path

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
    assert cpp.count("DML_BUFFER_TENSOR_DESC input") == 2 and cpp.count("DML_BUFFER_TENSOR_DESC output") == 1
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
