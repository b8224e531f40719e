"""What the command line prints from a model (node names, the reasons a node makes no case)
reaches the terminal as text: an escape sequence or a bidirectional override in a name is shown
as its escape, never passed on for the terminal to act on."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from ort_layouts.frontends.cli import main, terminal_safe

Cap = pytest.CaptureFixture[str]

# a name that would retitle the window (OSC 0 ... BEL), colour the screen and reverse the text
HOSTILE = "t\x1b]0;owned\x07\x1b[31m\u202eevil\x01"
SHOWN = "t\\x1b]0;owned\\x07\\x1b[31m\\u202eevil\\x01"
# what a terminal acts on: every C0 control but tab and newline, DEL, the C1 controls, bidi overrides
ACTED_ON = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))] + [
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]


def _model(path: Path, *, dynamic: bool = False) -> None:
    """X -> Transpose(perm 1,0) named HOSTILE -> Y; with ``dynamic`` a dimension is a name, so
    the node makes no case and validate --model says so."""
    first: int | str = "n" if dynamic else 2
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [first, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, first])
    node = helper.make_node("Transpose", ["X"], ["Y"], perm=[1, 0], name=HOSTILE)
    graph = helper.make_graph([node], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))


def _acted_on(text: str) -> list[str]:
    return sorted({c for c in text if c in ACTED_ON})


def test_terminal_safe_escapes_what_a_terminal_acts_on() -> None:
    assert terminal_safe(HOSTILE) == SHOWN
    for c in ACTED_ON:
        shown = terminal_safe(f"a{c}b")
        assert shown == "a" + ascii(c)[1:-1] + "b" and not _acted_on(shown), repr(c)
    plain = "tab\there, newline\nthere, ümlaut, 漢字, \u00a0"  # kept as they are
    assert terminal_safe(plain) == plain


def test_extract_prints_a_hostile_node_name_as_its_escapes(tmp_path: Path, capsys: Cap) -> None:
    path = tmp_path / "m.onnx"
    _model(path)
    assert main(["extract", str(path)]) == 0
    out = capsys.readouterr().out
    assert SHOWN in out
    assert _acted_on(out) == []


def test_validate_model_coverage_line_escapes_the_node_name(tmp_path: Path, capsys: Cap) -> None:
    path = tmp_path / "m.onnx"
    _model(path, dynamic=True)
    code = main(["validate", "--model", str(path), "--provider", "cpu", "--report", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code != 0  # no node of the model makes a case
    assert SHOWN in err and "makes no case" in err
    assert _acted_on(err) == []


def test_merge_prints_a_hostile_device_name_as_its_escapes(tmp_path: Path, capsys: Cap) -> None:
    import json

    report = tmp_path / "r"
    assert main(["validate", "--provider", "cpu", "--ops", "Identity", "--ranks", "1", "--progress", "none",
                 "--report", str(report)]) == 0
    meta = json.loads((report / "meta.json").read_text())
    meta["device"] = HOSTILE  # what a driver or a hand-edited report could name its device
    (report / "meta.json").write_text(json.dumps(meta))
    capsys.readouterr()
    assert main(["merge", str(report)]) == 0
    out = capsys.readouterr().out
    assert SHOWN in out
    assert _acted_on(out) == []
