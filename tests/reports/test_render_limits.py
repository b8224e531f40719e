"""max_elements has an upper bound, MAX_DRAWN_ELEMENTS (a 256 x 256 picture): a larger one is
refused before any work, so that no picture makes arrays the size of a whole large tensor
(``describe --shape 60000,60000 --max-elements 99999999999`` used to try 26.8 GiB)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ort_layouts import BufferTensorDesc, PaddingOp, ShapeError, render_svg, render_text
from ort_layouts.reports.render import MAX_DRAWN_ELEMENTS

LARGE = BufferTensorDesc("float32", (60000, 60000))  # 3.6e9 elements: 26.8 GiB of int64 offsets


def test_the_bound_is_a_256_by_256_picture() -> None:
    assert MAX_DRAWN_ELEMENTS == 256 * 256


@pytest.mark.parametrize("draw", [render_text, render_svg], ids=["text", "svg"])
@pytest.mark.parametrize("max_elements", [MAX_DRAWN_ELEMENTS + 1, 99999999999, 0],
                         ids=["one-over", "huge", "zero"])
def test_a_max_elements_out_of_range_is_refused_before_any_work(draw: Callable[..., str],
                                                                 max_elements: int) -> None:
    message = (f"max_elements {max_elements} is not valid; valid: an integer in 1..{MAX_DRAWN_ELEMENTS} "
               "(MAX_DRAWN_ELEMENTS, the most a picture draws)")
    for item in (BufferTensorDesc("float32", (3, 4)), PaddingOp.from_onnx(BufferTensorDesc("int8", (2, 2)),
                                                                          (1, 1, 1, 1))):
        with pytest.raises(ShapeError) as raised:
            draw(item, max_elements=max_elements)
        assert str(raised.value) == message


def test_a_large_descriptor_with_the_bound_is_refused_by_its_size() -> None:
    """Past the most a picture draws, no larger max_elements would draw it: the refusal says so,
    not to pass one (--max-elements N past the bound is itself refused)."""
    over = (f"has 3600000000 elements, more than a picture draws (MAX_DRAWN_ELEMENTS, {MAX_DRAWN_ELEMENTS}); "
            "draw a smaller descriptor")
    for max_elements in (MAX_DRAWN_ELEMENTS, 10):
        with pytest.raises(ShapeError) as raised:
            render_text(LARGE, max_elements=max_elements)
        assert str(raised.value).endswith(over)
    small = BufferTensorDesc("float32", (30, 30))
    with pytest.raises(ShapeError) as raised:
        render_text(small, max_elements=100)
    assert str(raised.value).endswith(
        f"has 900 elements, more than max_elements=100; pass a larger max_elements "
        f"(up to {MAX_DRAWN_ELEMENTS}) to draw it anyway, or draw a smaller descriptor")


def test_a_picture_of_exactly_the_bound_is_drawn() -> None:
    desc = BufferTensorDesc("uint8", (256, 256)).transpose((1, 0))
    text = render_text(desc, max_elements=MAX_DRAWN_ELEMENTS)
    lines = text.splitlines()
    assert lines[0] == "UINT8 sizes [256, 256] strides [1, 256], 65536 bytes, layout WH"
    assert lines[1] == "Logical view:"
    assert lines[2].split()[:3] == ["A", "B", "C"] and len(lines[2].split()) == 256  # 256 cells a row
