"""Pictures of descriptors and PaddingOps, as text and SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ort_layouts import BufferTensorDesc, PaddingOp, ShapeError, render_svg, render_text

SVG = "{http://www.w3.org/2000/svg}"


def table(text: str, row: str) -> list[str]:
    cells: list[str] = []
    for line in text.splitlines():
        if line.startswith(row):
            cells += [c.strip() for c in line.split("|")[1:-1]]
    return cells


def svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def test_values_instead_of_letters() -> None:
    array = np.array([[1.5, -0.0, np.inf], [4, 5, 6]], dtype=np.float32)
    desc = BufferTensorDesc("float32", (2, 3)).transpose((1, 0))
    text = render_text(desc, array.tobytes())
    assert table(text, "Value:") == ["1.5", "-0", "inf", "4", "5", "6"]
    lines = text.splitlines()
    start = lines.index("Logical view:") + 1
    assert [line.split() for line in lines[start:start + 3]] == [["1.5", "4"], ["-0", "5"], ["inf", "6"]]


def test_broadcast_buffer_has_distinct_elements_only() -> None:
    desc = BufferTensorDesc("float32", (3,)).broadcast_to((4, 3))
    text = render_text(desc)
    assert text.count("A B C") == 4
    assert table(text, "Value:") == ["A", "B", "C"]
    assert table(text, "Offset:") == ["0", "1", "2"]


def test_rank4_blocks_are_labelled() -> None:
    text = render_text(BufferTensorDesc("uint8", (1, 2, 1, 2)))
    assert "[0, 0, :, :]" in text and "[0, 1, :, :]" in text


def test_large_descriptor_refused() -> None:
    with pytest.raises(ShapeError, match="max_elements=512"):
        render_text(BufferTensorDesc("float32", (32, 32)))
    with pytest.raises(ShapeError, match="max_elements=10"):
        render_svg(BufferTensorDesc("float32", (4, 4)), max_elements=10)
    assert "P" in render_text(BufferTensorDesc("float32", (4, 4)), max_elements=16)


def test_long_padding_truncated() -> None:
    desc = BufferTensorDesc("float32", (2,), total_tensor_size_in_bytes=4000)
    text = render_text(desc, max_elements=20)
    assert len(table(text, "Value:")) == 20
    assert "980 more buffer elements not shown" in text


def test_four_bit_letters() -> None:
    text = render_text(BufferTensorDesc("uint4", (3,)))
    assert table(text, "Value:") == ["A", "B", "C"] + ["x"] * 5  # 4 bytes = 8 nibbles


def test_svg_well_formed() -> None:
    desc = BufferTensorDesc("float32", (2, 3), (5, 1), total_tensor_size_in_bytes=40)
    texts = svg_texts(render_svg(desc))
    cells = [t for t in texts if len(t) == 1 and t.isalpha()]
    # logical A..F, then the buffer A B C x x D E F x x
    assert cells[:6] == list("ABCDEF")
    assert cells[6:] == list("ABCxxDEFxx")


def test_svg_escapes_values() -> None:
    desc = BufferTensorDesc("float32", (2,))
    svg = render_svg(desc, np.array([np.nan, -1.0], np.float32).tobytes())
    assert "nan" in svg_texts(svg)


def test_padding_op_text_and_svg() -> None:
    op = PaddingOp.from_onnx(BufferTensorDesc("float32", (2, 3)), [1, 0, 0, 1], mode="edge")
    text = render_text(op)
    assert "EDGE" in text
    out = text.splitlines()[text.splitlines().index("[0, 0, :, :]", 5) + 1:]
    # edge copies: row 0 repeats row A B C, column 3 repeats the last column
    assert [line.split() for line in out] == [["a", "b", "c", "c"], ["A", "B", "C", "c"],
                                               ["D", "E", "F", "f"]]
    constant = render_text(PaddingOp.from_onnx(BufferTensorDesc("float32", (2,)), [1, 1]))
    assert constant.splitlines()[-1].split() == [".", "A", "B", "."]
    ET.fromstring(render_svg(op))


def test_refuses_other_objects() -> None:
    with pytest.raises(ShapeError, match="int"):
        render_text(3)  # type: ignore[arg-type]
