"""The reference executor's public functions refuse arguments they cannot take with the
library's typed errors, before any work: a list of buffers that is no list, a ``threads`` that
is no count, a descriptor that is no BufferTensorDesc, an array of Python objects for bytes."""

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
    execute,
    execute_all,
    pack,
    unpack,
    verify,
    verify_all,
)

F32 = BufferTensorDesc("float32", (2, 3))
OP = IdentityOp(F32.transpose((1, 0)).with_strides((1, 3)), BufferTensorDesc("float32", (3, 2)))
JOIN = JoinOp.from_onnx("float32", [(2, 3), (2, 2)], 1)
VALUES = np.arange(6, dtype=np.float32).reshape(2, 3)
BUFFER = VALUES.view(np.uint8).reshape(-1)
JOIN_BUFFERS = [np.zeros(24, np.uint8), np.zeros(16, np.uint8)]


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
