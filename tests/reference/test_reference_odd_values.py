"""Values the reference functions accept by signature but that are not plain arrays: a strided
memoryview (its bytes no one run), a ragged nested list, elements of another width, a missing
actual output. Each is refused with a typed error naming it, or compared as ``compare``
compares it; expected answers are numpy's and ``compare``'s own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ort_layouts import (
    BufferTensorDesc,
    DescriptorError,
    IdentityOp,
    JoinOp,
    ShapeError,
    compare,
    execute,
    pack,
    unpack,
    verify,
    verify_all,
)
from ort_layouts.reference.compare import bits_equal
from ort_layouts.reference.execute import pending_output

F32 = BufferTensorDesc("float32", (2, 3))
OP = IdentityOp(F32.transpose((1, 0)).with_strides((1, 3)), BufferTensorDesc("float32", (3, 2)))
VALUES = np.arange(6, dtype=np.float32).reshape(2, 3)
STRIDED = memoryview(np.arange(12, dtype=np.float32))[::2]  # 6 floats, 8 bytes apart
RAGGED = [[1.0, 2.0], [3.0]]


def test_bits_of_other_widths_are_not_equal_either_way() -> None:
    a, b = np.full(8, 0x0101, np.uint16), np.full(8, 0x01, np.uint8)
    assert a.tobytes() != b.tobytes()
    assert not bits_equal(a, b) and not bits_equal(b, a)
    assert bits_equal(a, a.copy())


@pytest.mark.parametrize("call", [
    lambda: unpack(F32, STRIDED), lambda: execute(OP, STRIDED), lambda: verify(OP, STRIDED, VALUES.T),
    lambda: F32.view(STRIDED)])
def test_a_strided_memoryview_is_refused_as_a_buffer(call: Callable[[], Any]) -> None:
    with pytest.raises(BufferError):
        np.frombuffer(STRIDED, dtype=np.uint8)  # numpy's own refusal, which must not escape
    with pytest.raises(DescriptorError, match=r"memoryview of shape \[6\] and strides \[8\] is not "
                                              r"C-contiguous; valid: a C-contiguous memoryview"):
        call()
    assert F32.view(memoryview(VALUES.tobytes())).tobytes() == VALUES.tobytes()  # a contiguous one reads


def test_a_ragged_list_is_no_array_to_pack() -> None:
    with pytest.raises(ShapeError, match=r"array \[\[1.0, 2.0\], \[3.0\]\] is no array \(ValueError: .*\); "
                                         r"valid: a numpy array, or a nested list of one length"):
        pack(F32, RAGGED)


def test_a_ragged_actual_is_a_mismatch_of_every_element() -> None:
    expected = np.ascontiguousarray(VALUES.T)
    for result in (compare(expected, RAGGED), verify(OP, VALUES, RAGGED)):
        assert not result.passed and (result.element_count, result.mismatch_count) == (6, 6)
        assert result.message.startswith("the actual tensor [[1.0, 2.0], [3.0]] is no array")
    result = compare(RAGGED, expected)
    assert not result.passed
    assert result.message.startswith("the expected tensor [[1.0, 2.0], [3.0]] is no array")
    join = JoinOp.from_onnx("float32", [(2, 3), (2, 2)], 1)
    inputs = [VALUES.view(np.uint8).reshape(-1), np.zeros(16, np.uint8)]
    (result,) = verify_all(join, inputs, [RAGGED])
    assert not result.passed and result.message.startswith("the actual tensor")


def test_a_missing_actual_reads_as_compare_reads_it() -> None:
    expected = np.ascontiguousarray(VALUES.T)
    want = compare(expected, None)
    assert want.message == "no actual tensor was produced; the expected one has shape [3, 2] (6 elements)"
    assert verify(OP, VALUES, None) == want  # type: ignore[arg-type]
    pending = pending_output(OP, VALUES.reshape(-1), (3, 2), min_bytes=0)
    assert pending is not None
    assert pending.compare(None) == want  # type: ignore[arg-type]
    assert pending.compare(RAGGED).message == compare(expected, RAGGED).message
