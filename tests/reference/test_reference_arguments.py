"""The reference executor's public functions refuse arguments they cannot take with the
library's typed errors, before any work: a list of buffers that is no list, a ``threads`` that
is no count, a descriptor that is no BufferTensorDesc, an array of Python objects for bytes.

Values accepted by signature that are not plain arrays: a strided memoryview (its bytes no one
run), a ragged nested list, elements of another width, a missing actual output: each refused
with a typed error naming it, or compared as ``compare`` compares it (numpy's answers, and
``compare``'s own)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ort_layouts import (
    ArgumentError,
    BufferTensorDesc,
    DescriptorError,
    IdentityOp,
    JoinOp,
    ShapeError,
    compare,
    execute,
    execute_all,
    pack,
    unpack,
    verify,
    verify_all,
)
from ort_layouts.reference.compare import bits_equal
from ort_layouts.reference.execute import pending_output

F32 = BufferTensorDesc("float32", (2, 3))
OP = IdentityOp(F32.transpose((1, 0)).with_strides((1, 3)), BufferTensorDesc("float32", (3, 2)))
JOIN = JoinOp.from_onnx("float32", [(2, 3), (2, 2)], 1)
VALUES = np.arange(6, dtype=np.float32).reshape(2, 3)
BUFFER = VALUES.view(np.uint8).reshape(-1)
JOIN_BUFFERS = [np.zeros(24, np.uint8), np.zeros(16, np.uint8)]
STRIDED = memoryview(np.arange(12, dtype=np.float32))[::2]  # 6 floats, 8 bytes apart
RAGGED = [[1.0, 2.0], [3.0]]


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: execute_all(JOIN, None), DescriptorError,
     "input_buffers None is a NoneType; valid: a list with one per tensor of the operator"),
    (lambda: execute_all(OP, BUFFER), DescriptorError, "is an ndarray; valid: a list with one per tensor"),
    (lambda: execute_all(JOIN, JOIN_BUFFERS, outs=5), DescriptorError, "outs 5 is an int; valid: a list"),
    (lambda: verify_all(JOIN, JOIN_BUFFERS, None), DescriptorError,
     "actuals None is a NoneType; valid: a list"),
    (lambda: verify_all(OP, 1.5, [VALUES.T]), DescriptorError, "input_buffers 1.5 is a float; valid: a list"),
    (lambda: execute(OP, BUFFER, threads="4"), ArgumentError,
     "threads '4' is not valid; valid: an integer >= 1, or None for one per CPU (at most 8)"),
    (lambda: execute(OP, BUFFER, threads=0), ArgumentError, "threads 0 is not valid"),
    (lambda: verify(OP, BUFFER, VALUES.T, threads=[2]), ArgumentError, "threads [2] is not valid"),
    (lambda: execute_all(JOIN, JOIN_BUFFERS, threads=-3), ArgumentError, "threads -3 is not valid"),
    (lambda: verify_all(OP, [BUFFER], [VALUES.T], threads=2.0), ArgumentError, "threads 2.0 is not valid"),
    (lambda: execute(OP, np.array([None] * 24)), DescriptorError,
     "buffer array of dtype object holds Python objects; pass bytes, bytearray, memoryview or a numpy array"),
    (lambda: execute(OP, BUFFER, out=np.array([None] * 24)), DescriptorError,
     "out must be a writeable C-contiguous numpy array of numbers"),
    (lambda: unpack(F32, np.array([None] * 24)), DescriptorError, "holds Python objects"),
    (lambda: pack(None, VALUES), DescriptorError,  # type: ignore[arg-type]
     "desc None is a NoneType; valid: a BufferTensorDesc (e.g. BufferTensorDesc('float32', (2, 3)))"),
    (lambda: unpack("float32", BUFFER), DescriptorError,
     "desc 'float32' is a str; valid: a BufferTensorDesc"),
], ids=["execute-all-none", "execute-all-one-array", "execute-all-outs-int", "verify-all-actuals-none",
        "verify-all-buffers-float", "execute-threads-text", "execute-threads-zero", "verify-threads-list",
        "execute-all-threads-negative", "verify-all-threads-float", "execute-object-buffer",
        "execute-object-out", "unpack-object-buffer", "pack-desc-none", "unpack-desc-text"])
def test_bad_arguments_are_refused(call: Callable[[], Any], error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_valid_arguments_give_the_transpose_as_before() -> None:
    # the input read through strides (1, 3) is VALUES transposed: [[0, 3], [1, 4], [2, 5]]
    expected = [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    for threads in (None, 1, np.int64(2)):
        out = execute(OP, BUFFER, threads=threads)
        assert unpack(OP.output, out).tolist() == expected
        (again,) = execute_all(OP, (BUFFER,), threads=threads)
        assert unpack(OP.output, again).tolist() == expected
        assert verify(OP, BUFFER, np.array(expected, np.float32), threads=threads)
        assert all(verify_all(OP, [BUFFER], (np.array(expected, np.float32),), threads=threads))


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
    (result,) = verify_all(JOIN, [BUFFER, JOIN_BUFFERS[1]], [RAGGED])
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
