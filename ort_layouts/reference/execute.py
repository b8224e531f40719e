"""The reference executor: DirectML's data-movement operators run on raw bytes from descriptors.

Expected outputs come from the descriptors and the input bytes alone, as DirectML defines the
operators, never from ONNX Runtime. Each operator (``IdentityOp``, ``PaddingOp``, ... in
:mod:`ort_layouts.operators`) is a :class:`DmlOperator`: it knows how to fill its output view
from its input view (``run``) and how to check a finished output against its input
(``matches``); this module gives them buffers.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from ort_layouts._errors import DataTypeError, DescriptorError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.reference.buffers import (
    UINT_OF_SIZE,
    buffer_elements,
    check_buffer_size,
    is_nibble,
    raw_bytes,
    store_nibbles,
    strided_view,
    unpack,
)
from ort_layouts.reference.compare import Comparison, compare

__all__ = ["DmlOperator", "execute", "output_values", "verify"]


@runtime_checkable
class DmlOperator(Protocol):
    """A DirectML operator with one input and one output tensor, as the reference runs it."""

    @property
    def input(self) -> BufferTensorDesc: ...

    @property
    def output(self) -> BufferTensorDesc: ...

    def run(self, dst: np.ndarray, src: np.ndarray, *, threads: int | None = None) -> None:
        """Write the output elements into ``dst`` (the output view, as unsigned integers of the
        element width) from ``src`` (the input view)."""

    def matches(self, src: np.ndarray, got: np.ndarray, *, threads: int | None = None) -> bool:
        """Whether ``got`` (the output values as unsigned integers, in the output's sizes) is
        what :meth:`run` writes for ``src``."""

    def to_dict(self) -> dict[str, Any]: ...


def _check_operator(op: Any) -> None:
    if not isinstance(op, DmlOperator):
        raise TypeError(f"op must be a DirectML operator (IdentityOp, PaddingOp, ...), "
                        f"got {type(op).__name__}")


def _input_view(op: DmlOperator, raw_in: np.ndarray) -> np.ndarray:
    elements = buffer_elements(raw_in[: op.input.total_tensor_size_in_bytes], op.input.data_type)
    return strided_view(elements, op.input, writeable=False)


def execute(
    op: DmlOperator,
    input_buffer: Any,
    *,
    out: np.ndarray | None = None,
    threads: int | None = None,
) -> np.ndarray:
    """Run a DirectML data-movement operator on raw bytes, from its descriptors alone.

    Args:
        op: the operator (ELEMENT_WISE_IDENTITY, PADDING1, ...).
        input_buffer: the input buffer (bytes-like, or a numpy array taken as its C-order bytes);
            it must hold every byte the input descriptor addresses (DirectML's own buffer is
            TotalTensorSizeInBytes; the rounding to 4 bytes past the last element may be left out).
        out: optional caller buffer (C-contiguous, writeable, at least the output's
            TotalTensorSizeInBytes) to write into; bytes belonging to no element are left as
            they are.
        threads: threads for large copies; None means one per CPU (at most 8).

    Returns:
        The output buffer as uint8, ``op.output.total_tensor_size_in_bytes`` long (a view of
        ``out`` when given). Bytes that belong to no output element are 0 in a new buffer;
        DirectML leaves them undefined, so never compare them.

    Raises:
        DescriptorError: a buffer is too small, or the output descriptor overlaps itself.

    Warning:
        Like ``numpy.lib.stride_tricks.as_strided`` this reads and writes through the
        descriptors; it checks each buffer holds its descriptor's TotalTensorSizeInBytes, which
        DirectML's validation guarantees covers every element.
    """
    _check_operator(op)
    op.output.validate(is_output=True)
    raw_in = raw_bytes(input_buffer)
    check_buffer_size(raw_in, op.input, "input", addressed=True)
    total_out = op.output.total_tensor_size_in_bytes
    if out is None:
        raw_out = np.zeros(total_out, dtype=np.uint8)
    else:
        if not isinstance(out, np.ndarray) or not out.flags.c_contiguous or not out.flags.writeable:
            raise DescriptorError("out", type(out).__name__,
                                  "out must be a writeable C-contiguous numpy array")
        raw_out = out.reshape(-1).view(np.uint8)
        check_buffer_size(raw_out, op.output, "output")
        raw_out = raw_out[:total_out]
    dtype = op.input.data_type
    dst_elements = buffer_elements(raw_out, dtype)
    op.run(strided_view(dst_elements, op.output, writeable=True), _input_view(op, raw_in), threads=threads)
    if is_nibble(dtype):
        store_nibbles(dst_elements, raw_out)
    return raw_out


def output_values(op: DmlOperator, input_buffer: Any) -> np.ndarray:
    """``unpack(op.output, execute(op, input_buffer))``: the operator's logical output values.

    When the output descriptor is packed (whole-byte types), its buffer less the rounding to 4
    bytes is exactly the C-ordered values, so the operator writes straight into them: one
    allocation and one pass instead of a buffer and a copy out of it.
    """
    _check_operator(op)
    dtype = op.input.data_type
    if op.output.strides is not None or is_nibble(dtype):
        return unpack(op.output, execute(op, input_buffer))
    raw_in = raw_bytes(input_buffer)
    check_buffer_size(raw_in, op.input, "input", addressed=True)
    values = np.zeros(op.output.sizes, dtype=dtype.to_numpy())
    dst = values.view(UINT_OF_SIZE[dtype.bitwidth // 8])  # the packed output's elements, as unsigned bits
    op.run(dst, _input_view(op, raw_in), threads=None)
    return values


def verify(op: DmlOperator, input_buffer: Any, actual: np.ndarray, *,
           threads: int | None = None) -> Comparison:
    """Compare ``actual`` with the operator's output, bit for bit, never materializing it.

    The result is exactly ``compare(expected, actual)`` where ``expected`` is
    ``unpack(op.output, execute(op, input_buffer))`` in ``actual``'s shape. When every element
    agrees, the expected values are gathered tile by tile into a small scratch buffer and
    compared with ``actual`` as they go, so no output-sized buffer is made and memory is read
    about once; on any difference (or a shape, type or 4-bit case) the full comparison runs to
    give the mismatch statistics.

    Args:
        op: the operator.
        input_buffer: its input buffer, as for :func:`execute`.
        actual: the logical output tensor (the output descriptor's element count, any shape
            holding it, e.g. the ONNX output shape).
        threads: threads for large tensors; None means one per CPU (at most 8).

    Raises:
        DescriptorError: as :func:`execute`.
    """
    _check_operator(op)
    op.output.validate(is_output=True)
    raw_in = raw_bytes(input_buffer)
    check_buffer_size(raw_in, op.input, "input", addressed=True)
    act = np.asarray(actual)
    dtype = op.input.data_type
    fast = (not is_nibble(dtype) and act.size == op.output.element_count
            and act.dtype.byteorder != ">" and _same_type(act.dtype, dtype))
    if fast:
        item = dtype.bitwidth // 8
        got = np.ascontiguousarray(act).reshape(op.output.sizes).view(UINT_OF_SIZE[item])
        if op.matches(_input_view(op, raw_in), got, threads=threads):
            return Comparison(True, int(act.size))
    expected = unpack(op.output, execute(op, raw_in, threads=threads))
    if expected.size == act.size:
        expected = expected.reshape(act.shape)
    return compare(expected, act)


def _same_type(numpy_dtype: np.dtype[Any], dtype: DataType) -> bool:
    try:
        return DataType.from_numpy(numpy_dtype) == dtype and numpy_dtype.itemsize * 8 == dtype.bitwidth
    except DataTypeError:
        return False
