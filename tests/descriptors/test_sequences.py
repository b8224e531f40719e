"""One rule for what an ordered sequence of integers is (sizes, strides, a perm, pads, starts,
repeats, a Case's shape): every caller refuses the same values, each with its own error type.

A set has no order, a mapping would give its keys, text its characters or bytes, a generator
can be read only once, and a float or bool item would silently become another integer."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import DescriptorError, LayoutError, ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.layout import calculate_strides
from ort_layouts.descriptors.sequences import as_int_tuple, is_integer, is_ordered_sequence
from ort_layouts.descriptors.size import calc_buffer_tensor_size
from ort_layouts.operators.case import Case
from ort_layouts.operators.padding import PaddingOp, split_onnx_pads
from ort_layouts.operators.slice import ep_slice_window
from ort_layouts.operators.tile import TileOp

F32_2x3 = BufferTensorDesc("float32", (2, 3))


def _generator() -> Iterator[int]:
    yield from (1, 0)


# each bad value is made afresh (a generator is read once)
BAD: dict[str, Callable[[], Any]] = {
    "set": lambda: {1, 0},
    "frozenset": lambda: frozenset({1, 0}),
    "dict": lambda: {1: 0, 0: 0},
    "mapping-proxy": lambda: types.MappingProxyType({1: 0, 0: 0}),
    "str": lambda: "10",
    "bytes": lambda: b"\x01\x00",
    "bytearray": lambda: bytearray(b"\x01\x00"),
    "generator": _generator,
    "iterator": lambda: iter([1, 0]),
    "scalar": lambda: 1,
    "0-d-array": lambda: np.array(1),
    "float-item": lambda: (1.0, 0),
    "bool-item": lambda: (True, 0),
    "none-item": lambda: (1, None),
}

# (caller, the call, its error type, a value it takes: the same two items in a list)
CALLERS: list[tuple[str, Callable[[Any], object], type[Exception], list[int]]] = [
    ("Case-shape", lambda v: Case("Transpose", "float32", v), ShapeError, [2, 3]),
    ("Case-perm", lambda v: Case("Transpose", "float32", (2, 3), perm=v), ShapeError, [1, 0]),
    ("descriptor-sizes", lambda v: BufferTensorDesc("float32", v), DescriptorError, [2, 3]),
    ("descriptor-strides", lambda v: BufferTensorDesc("float32", (2, 3), v), DescriptorError, [3, 1]),
    ("buffer-size", lambda v: calc_buffer_tensor_size("float32", v), DescriptorError, [2, 3]),
    ("offset_of", F32_2x3.offset_of, ShapeError, [1, 0]),
    ("transpose-perm", F32_2x3.transpose, ShapeError, [1, 0]),
    ("broadcast_to", F32_2x3.broadcast_to, ShapeError, [2, 3]),
    ("layout-axis-order", lambda v: calculate_strides(v, (2, 3)), LayoutError, [1, 0]),
    ("strides-sizes", lambda v: calculate_strides((0, 1), v), ShapeError, [2, 3]),
    ("Pad-pads", lambda v: split_onnx_pads(v, 1), ShapeError, [1, 2]),
    ("Pad-axes", lambda v: split_onnx_pads((1, 2, 3, 4), 2, v), ShapeError, [1, 0]),
    ("PADDING1-start", lambda v: PaddingOp(F32_2x3, F32_2x3, v, (0, 0)), ShapeError, [0, 0]),
    ("Slice-starts", lambda v: ep_slice_window((4, 4), v, (3, 3)), ShapeError, [0, 1]),
    ("Tile-repeats", lambda v: TileOp.from_onnx("float32", (2, 3), v), ShapeError, [1, 2]),
]


@pytest.mark.parametrize(("caller", "call", "error", "good"), CALLERS, ids=[c[0] for c in CALLERS])
def test_every_caller_takes_a_list_a_tuple_and_an_array_of_integers(
        caller: str, call: Callable[[Any], object], error: type[Exception], good: list[int]) -> None:
    for value in (good, tuple(good), np.array(good), [np.int64(v) for v in good]):
        call(value)


@pytest.mark.parametrize("bad", list(BAD), ids=list(BAD))
@pytest.mark.parametrize(("caller", "call", "error", "good"), CALLERS, ids=[c[0] for c in CALLERS])
def test_every_caller_refuses_what_is_no_ordered_sequence_of_integers(
        caller: str, call: Callable[[Any], object], error: type[Exception], good: list[int],
        bad: str) -> None:
    with pytest.raises(error) as raised:
        call(BAD[bad]())
    assert type(raised.value) is error
    # the refusal is the rule's (not a later check of the integers it would have made)
    # (a layout also takes a name: text is read as one, and refused as no ordering of letters)
    words = ("not an ordering",) if caller == "layout-axis-order" and bad == "str" else (
        "sequence of", "not an integer")
    assert any(w in str(raised.value) for w in words), str(raised.value)


def test_the_rule_itself() -> None:
    for name, make in BAD.items():
        assert as_int_tuple(make()) is None, name
    assert [is_ordered_sequence(make()) for make in BAD.values()] == [False] * 11 + [True] * 3
    assert as_int_tuple([np.int32(2), np.uint8(3), 4]) == (2, 3, 4)
    assert all(type(v) is int for v in as_int_tuple(np.array([2, 3])) or ())
    assert as_int_tuple(range(3)) == (0, 1, 2) and as_int_tuple([]) == ()
    assert [is_integer(v) for v in (3, np.int8(3), True, np.bool_(True), 3.0, "3")] == [
        True, True, False, False, False, False]
