"""The reference executor: DirectML's data-movement operators run on raw bytes from descriptors.

Expected outputs come from the descriptors and the input bytes alone, as DirectML defines the
operators, never from ONNX Runtime:

* ``DML_OPERATOR_ELEMENT_WISE_IDENTITY`` (:class:`IdentityOp`): read every element of the input
  buffer through the input descriptor, write it through the output descriptor. A Transpose is
  an identity over the permuted input descriptor, an Expand one over the broadcast descriptor.
* ``DML_OPERATOR_PADDING1`` (:class:`~ort_layouts.PaddingOp`): the interior is the input; the
  borders follow the mode. CONSTANT writes ``padding_value_bytes`` (the tensor's own type, so NaN
  payloads survive), EDGE repeats the edge, WRAP repeats the tensor, REFLECTION mirrors without
  repeating the edge, SYMMETRIC mirrors with it; padding wider than the tensor folds
  periodically, exactly as ``numpy.pad``'s "edge", "wrap", "reflect" and "symmetric".

Elements are moved as unsigned integers of their width, so every bit pattern is kept.
UINT4/INT4 are supported as packed nibbles, the low nibble first (element 2k in bits 0-3 of
byte k).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

from ort_layouts._errors import DataTypeError, DescriptorError, ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.case import Case
from ort_layouts.operators.pad import PaddingMode, PaddingOp
from ort_layouts.reference.compare import Comparison, compare, views_equal
from ort_layouts.reference.copy import strided_copy

__all__ = ["IdentityOp", "execute", "operator_for", "output_values", "pack", "unpack", "verify"]

_UINT: dict[int, type[np.unsignedinteger[Any]]] = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_MAX_PYTHON_RUNS = 64  # border runs copied one slice each; more than that use one gather


@dataclasses.dataclass(frozen=True, slots=True)
class IdentityOp:
    """DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC (no scale/bias): copy input to output.

    Attributes:
        input: the descriptor the input buffer is read through.
        output: the descriptor the output buffer is written through (same data type and sizes).
    """

    input: BufferTensorDesc
    output: BufferTensorDesc

    def __post_init__(self) -> None:
        if self.input.data_type != self.output.data_type:
            raise ShapeError(
                f"identity input data type {self.input.data_type.name} differs from output "
                f"{self.output.data_type.name}; ELEMENT_WISE_IDENTITY needs the same type")
        if self.input.sizes != self.output.sizes:
            raise ShapeError(
                f"identity input sizes {list(self.input.sizes)} differ from output sizes "
                f"{list(self.output.sizes)}; ELEMENT_WISE_IDENTITY needs the same sizes")

    @property
    def dimension_count(self) -> int:
        return self.input.dimension_count

    def to_dict(self) -> dict[str, Any]:
        return {
            "operator": "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
            "input": self.input.to_dict(),
            "output": self.output.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IdentityOp:
        return cls(BufferTensorDesc.from_dict(data["input"]), BufferTensorDesc.from_dict(data["output"]))


# ---- buffers ----------------------------------------------------------------------------
def _raw(buffer: Any) -> np.ndarray:
    """The bytes of ``buffer`` as a flat uint8 array (an array's bytes in C order)."""
    if isinstance(buffer, np.ndarray):
        arr = buffer if buffer.flags.c_contiguous else np.ascontiguousarray(buffer)
        return arr.reshape(-1).view(np.uint8)
    try:
        return np.frombuffer(buffer, dtype=np.uint8)
    except TypeError as e:
        raise DescriptorError(
            "buffer", type(buffer).__name__,
            f"buffer of type {type(buffer).__name__} is not bytes-like; pass bytes, bytearray, "
            "memoryview or a numpy array") from e


def _check_size(raw: np.ndarray, desc: BufferTensorDesc, what: str, *, addressed: bool = False) -> None:
    """Check the buffer holds TotalTensorSizeInBytes, or with ``addressed`` only the bytes up to
    the last element (an input array need not carry the rounding to 4 bytes)."""
    if addressed:
        needed = -(-(desc.last_element_index + 1) * desc.data_type.bitwidth // 8)
        label = f"the {needed} bytes its descriptor addresses"
    else:
        needed = desc.total_tensor_size_in_bytes
        label = f"its descriptor's TotalTensorSizeInBytes {needed}"
    if raw.nbytes < needed:
        raise DescriptorError(
            "buffer-size", raw.nbytes, f"{what} buffer of {raw.nbytes} bytes is smaller than {label}")


def _is_nibble(dtype: DataType) -> bool:
    return dtype.bitwidth == 4


def _elements(raw: np.ndarray, dtype: DataType) -> np.ndarray:
    """The buffer as a flat array of buffer elements, each an unsigned integer of its width
    (a view for whole-byte types; for 4-bit types a new uint8 array, one nibble each)."""
    if _is_nibble(dtype):
        nibbles = np.empty(raw.size * 2, dtype=np.uint8)
        np.bitwise_and(raw, 0x0F, out=nibbles[0::2])
        np.right_shift(raw, 4, out=nibbles[1::2])
        return nibbles
    item = dtype.bitwidth // 8
    usable = raw.size - raw.size % item
    return raw[:usable].view(_UINT[item])


def _store_nibbles(nibbles: np.ndarray, raw: np.ndarray) -> None:
    np.left_shift(nibbles[1::2], 4, out=raw)
    np.bitwise_or(raw, nibbles[0::2] & 0x0F, out=raw)


def _strided(elements: np.ndarray, desc: BufferTensorDesc, *, writeable: bool) -> np.ndarray:
    """``elements`` seen through ``desc``. The descriptor was validated against the buffer size,
    so the view stays inside it."""
    item = elements.itemsize
    # the ndarray constructor is ``as_strided`` without its per-call array-interface round trip
    # (and it refuses a view that would reach past ``elements``)
    view = np.ndarray(desc.sizes, elements.dtype, elements, 0,
                      tuple([s * item for s in desc.effective_strides]))
    if not writeable:
        view.flags.writeable = False
    return view


def _numpy_dtype(dtype: DataType) -> np.dtype[Any]:
    if _is_nibble(dtype):
        return np.dtype(np.int8 if dtype is DataType.INT4 else np.uint8)
    return dtype.to_numpy()


def pack(desc: BufferTensorDesc, array: np.ndarray) -> np.ndarray:
    """The buffer (uint8, ``desc.total_tensor_size_in_bytes``) that holds ``array`` laid out by
    ``desc``: the inverse of ``desc.view`` for a descriptor without overlapping elements.

    Bytes that belong to no element are 0. ``array`` has the descriptor's sizes, up to size-1
    axes (a [3, 4] array fills a [1, 1, 3, 4] descriptor). For UINT4/INT4 the low 4 bits of each
    value are stored, low nibble first.

    Raises:
        ShapeError: the shapes do not fit.
        DataTypeError: the array's dtype is not the descriptor's data type.
    """
    arr = np.asarray(array)
    _check_shape(desc, arr.shape)
    raw = np.zeros(desc.total_tensor_size_in_bytes, dtype=np.uint8)
    if _is_nibble(desc.data_type):
        if arr.dtype.kind not in "iub":
            raise DataTypeError(
                f"{desc.data_type.name} values must be integers, got dtype {arr.dtype.name}")
        nibbles = np.zeros(raw.size * 2, dtype=np.uint8)
        view = _strided(nibbles, desc, writeable=True)
        np.copyto(view, (arr.astype(np.int64) & 0x0F).astype(np.uint8).reshape(desc.sizes))
        _store_nibbles(nibbles, raw)
        return raw
    try:
        source_type = DataType.from_numpy(arr.dtype)
    except DataTypeError as e:
        raise DataTypeError(f"cannot pack dtype {arr.dtype} as {desc.data_type.name}: {e}") from e
    if source_type != desc.data_type:
        raise DataTypeError(
            f"array dtype {arr.dtype.name} is {source_type.name}, descriptor is "
            f"{desc.data_type.name}; cast the array first")
    item = desc.data_type.bitwidth // 8
    view = _strided(_elements(raw, desc.data_type), desc, writeable=True)
    strided_copy(view, arr.view(_UINT[item]).reshape(desc.sizes))
    return raw


def unpack(desc: BufferTensorDesc, buffer: Any) -> np.ndarray:
    """The logical values of ``buffer`` read through ``desc`` (a C-ordered copy of ``desc.view``).

    UINT4 gives uint8 values 0..15, INT4 sign-extended int8 values -8..7.
    """
    raw = _raw(buffer)
    _check_size(raw, desc, "the", addressed=True)
    dtype = desc.data_type
    if _is_nibble(dtype):
        values = np.ascontiguousarray(_strided(_elements(raw, dtype), desc, writeable=False))
        if dtype is DataType.INT4:
            return ((values.astype(np.int8) << 4) >> 4).astype(np.int8)
        return values
    out = np.empty(desc.sizes, dtype=dtype.to_numpy())
    strided_copy(out.view(_UINT[dtype.bitwidth // 8]), _strided(_elements(raw, dtype), desc, writeable=False))
    return out


def _check_shape(desc: BufferTensorDesc, shape: tuple[int, ...]) -> None:
    if tuple(n for n in shape if n != 1) != tuple(n for n in desc.sizes if n != 1):
        raise ShapeError(
            f"array shape {list(shape)} does not fit descriptor sizes {list(desc.sizes)} "
            "(they must agree up to size-1 axes)")


# ---- execution --------------------------------------------------------------------------
def execute(
    op: IdentityOp | PaddingOp,
    input_buffer: Any,
    *,
    out: np.ndarray | None = None,
    threads: int | None = None,
) -> np.ndarray:
    """Run a DirectML data-movement operator on raw bytes, from its descriptors alone.

    Args:
        op: the operator (ELEMENT_WISE_IDENTITY or PADDING1).
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
    if not isinstance(op, (IdentityOp, PaddingOp)):
        raise TypeError(f"op must be an IdentityOp or a PaddingOp, got {type(op).__name__}")
    op.output.validate(is_output=True)
    raw_in = _raw(input_buffer)
    _check_size(raw_in, op.input, "input", addressed=True)
    raw_in = raw_in[: op.input.total_tensor_size_in_bytes]
    total_out = op.output.total_tensor_size_in_bytes
    if out is None:
        raw_out = np.zeros(total_out, dtype=np.uint8)
    else:
        if not isinstance(out, np.ndarray) or not out.flags.c_contiguous or not out.flags.writeable:
            raise DescriptorError("out", type(out).__name__,
                                  "out must be a writeable C-contiguous numpy array")
        raw_out = out.reshape(-1).view(np.uint8)
        _check_size(raw_out, op.output, "output")
        raw_out = raw_out[:total_out]
    dtype = op.input.data_type
    src_elements = _elements(raw_in, dtype)
    dst_elements = _elements(raw_out, dtype)
    src = _strided(src_elements, op.input, writeable=False)
    dst = _strided(dst_elements, op.output, writeable=True)
    if isinstance(op, IdentityOp):
        strided_copy(dst, src, threads=threads)
    else:
        _padding(op, dst, src, _padding_value(op, dst_elements.dtype), threads)
    if _is_nibble(dtype):
        _store_nibbles(dst_elements, raw_out)
    return raw_out


def output_values(op: IdentityOp | PaddingOp, input_buffer: Any) -> np.ndarray:
    """``unpack(op.output, execute(op, input_buffer))``: the operator's logical output values.

    When the output descriptor is packed (whole-byte types), its buffer less the rounding to 4
    bytes is exactly the C-ordered values, so the operator writes straight into them: one
    allocation and one pass instead of a buffer and a copy out of it.
    """
    if not isinstance(op, (IdentityOp, PaddingOp)):
        raise TypeError(f"op must be an IdentityOp or a PaddingOp, got {type(op).__name__}")
    dtype = op.input.data_type
    if op.output.strides is not None or _is_nibble(dtype):
        return unpack(op.output, execute(op, input_buffer))
    raw_in = _raw(input_buffer)
    _check_size(raw_in, op.input, "input", addressed=True)
    values = np.zeros(op.output.sizes, dtype=dtype.to_numpy())
    dst = values.view(_UINT[dtype.bitwidth // 8])  # the packed output's elements, as unsigned bits
    src = _strided(_elements(raw_in[: op.input.total_tensor_size_in_bytes], dtype), op.input,
                   writeable=False)
    if isinstance(op, IdentityOp):
        strided_copy(dst, src)
    else:
        _padding(op, dst, src, _padding_value(op, dst.dtype), None)
    return values


def _padding_value(op: PaddingOp, dtype: np.dtype[Any]) -> np.generic:
    data = op.padding_value_bytes
    value: np.generic  # numpy types a scalar of a run-time dtype as Any
    if not data:
        value = dtype.type(0)
    elif _is_nibble(op.input.data_type):
        value = dtype.type(data[0] & 0x0F)
    elif len(data) != dtype.itemsize:
        raise DataTypeError(
            f"padding_value_bytes {data.hex()} has {len(data)} bytes; {op.input.data_type.name} "
            f"needs {dtype.itemsize}")
    else:
        value = np.frombuffer(data, dtype=dtype.newbyteorder("<"))[0].astype(dtype)
    return value


def source_index(mode: PaddingMode, i: int, n: int) -> int:
    """The input index an output position reads along one axis, ``i`` counted from the first
    input element (negative in the start padding, ``>= n`` in the end padding)."""
    if mode == PaddingMode.EDGE:
        return min(max(i, 0), n - 1)
    if mode == PaddingMode.WRAP:
        return i % n
    if mode == PaddingMode.REFLECTION:
        if n == 1:
            return 0
        m = i % (2 * (n - 1))
        return m if m < n else 2 * (n - 1) - m
    if mode == PaddingMode.SYMMETRIC:
        m = i % (2 * n)
        return m if m < n else 2 * n - 1 - m
    raise ShapeError(f"padding mode {mode!r} has no source index (CONSTANT writes the value)")


def _runs(positions: list[int], sources: list[int]) -> list[tuple[int, int, int, int]]:
    """Split a position -> source map into runs (first position, count, first source, step)
    with step -1, 0 or +1."""
    runs: list[tuple[int, int, int, int]] = []
    k = 0
    while k < len(positions):
        j = k + 1
        step = 0
        if j < len(positions) and positions[j] == positions[k] + 1 and abs(sources[j] - sources[k]) <= 1:
            step = sources[j] - sources[k]
            while (j < len(positions) and positions[j] == positions[j - 1] + 1
                   and sources[j] - sources[j - 1] == step):
                j += 1
        runs.append((positions[k], j - k, sources[k], step))
        k = j
    return runs


def _border_regions(op: PaddingOp, out: np.ndarray, interior: tuple[slice, ...]
                    ) -> Iterator[tuple[np.ndarray, int, int, int]]:
    """PADDING1's borders, axis by axis: for each padded axis, ``(region, s, n, e)`` where
    ``region`` is the output over the already padded extent of the axes before it and the
    interior of the ones after it, with that axis moved first; ``s``/``e`` its start/end padding
    and ``n`` the input size."""
    rank = out.ndim
    for axis in range(rank):
        s, e = op.start_padding[axis], op.end_padding[axis]
        if s == 0 and e == 0:
            continue
        region = out[tuple(slice(None) if i <= axis else interior[i] for i in range(rank))]
        n = interior[axis].stop - interior[axis].start
        yield np.moveaxis(region, axis, 0), s, n, e


def _border_runs(op: PaddingOp, moved: np.ndarray, s: int, n: int, e: int
                 ) -> list[tuple[int, int, int, int]]:
    """The copy runs ``(first, count, source, step)`` of one axis's borders (not CONSTANT)."""
    positions = [*range(s), *range(s + n, s + n + e)]
    sources = [s + source_index(op.mode, p - s, n) for p in positions]
    return _runs(positions, sources)


def _run_source(moved: np.ndarray, count: int, source: int, step: int) -> np.ndarray:
    """The view a border run copies: one position repeated (step 0), or ``count`` positions
    forwards (1) or backwards (-1) from ``source``."""
    if step == 0:
        return np.broadcast_to(moved[source:source + 1], (count, *moved.shape[1:]))
    if step == 1:
        return moved[source:source + count]
    stop = source - count
    return moved[source:stop if stop >= 0 else None:-1]


def _padding(op: PaddingOp, dst: np.ndarray, src: np.ndarray, value: np.generic,
             threads: int | None) -> None:
    """PADDING1: the interior in one strided copy, then the borders axis by axis."""
    interior = tuple(slice(s, s + n) for s, n in zip(op.start_padding, src.shape, strict=True))
    strided_copy(dst[interior], src, threads=threads)
    for moved, s, n, e in _border_regions(op, dst, interior):
        if op.mode == PaddingMode.CONSTANT:
            moved[:s] = value
            moved[s + n:] = value
            continue
        runs = _border_runs(op, moved, s, n, e)
        if len(runs) > _MAX_PYTHON_RUNS:
            positions = [p for first, count, _, _ in runs for p in range(first, first + count)]
            sources = [source + k * step for _, count, source, step in runs for k in range(count)]
            moved[positions] = moved[sources]
            continue
        for first, count, source, step in runs:
            np.copyto(moved[first:first + count], _run_source(moved, count, source, step))


# ---- fused verification -----------------------------------------------------------------
def verify(op: IdentityOp | PaddingOp, input_buffer: Any, actual: np.ndarray, *,
           threads: int | None = None) -> Comparison:
    """Compare ``actual`` with the operator's output, bit for bit, never materializing it.

    The result is exactly ``compare(expected, actual)`` where ``expected`` is
    ``unpack(op.output, execute(op, input_buffer))`` in ``actual``'s shape. When every element
    agrees, the expected values are gathered tile by tile into a small scratch buffer and
    compared with ``actual`` as they go, so no output-sized buffer is made and memory is read
    about once; on any difference (or a shape, type or 4-bit case) the full comparison runs to
    give the mismatch statistics.

    Args:
        op: the operator (ELEMENT_WISE_IDENTITY or PADDING1).
        input_buffer: its input buffer, as for :func:`execute`.
        actual: the logical output tensor (the output descriptor's element count, any shape
            holding it, e.g. the ONNX output shape).
        threads: threads for large tensors; None means one per CPU (at most 8).

    Raises:
        DescriptorError: as :func:`execute`.
    """
    if not isinstance(op, (IdentityOp, PaddingOp)):
        raise TypeError(f"op must be an IdentityOp or a PaddingOp, got {type(op).__name__}")
    op.output.validate(is_output=True)
    raw_in = _raw(input_buffer)
    _check_size(raw_in, op.input, "input", addressed=True)
    act = np.asarray(actual)
    dtype = op.input.data_type
    fast = (not _is_nibble(dtype) and act.size == op.output.element_count
            and act.dtype.byteorder != ">" and _same_type(act.dtype, dtype))
    if fast:
        item = dtype.bitwidth // 8
        src = _strided(_elements(raw_in[: op.input.total_tensor_size_in_bytes], dtype), op.input,
                       writeable=False)
        got = np.ascontiguousarray(act).reshape(op.output.sizes).view(_UINT[item])
        if isinstance(op, IdentityOp):
            equal = views_equal(src, got, threads=threads)
        else:
            equal = _padding_equal(op, src, got, threads)
        if equal:
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


def _padding_equal(op: PaddingOp, src: np.ndarray, got: np.ndarray, threads: int | None) -> bool:
    """Whether ``got`` is PADDING1's output: the interior against the input, then the borders
    axis by axis against the positions of ``got`` they copy. Those positions were checked
    before (the interior, or an earlier axis's borders), so each holds the expected value."""
    interior = tuple(slice(s, s + n) for s, n in zip(op.start_padding, src.shape, strict=True))
    if not views_equal(src, got[interior], threads=threads):
        return False
    value = _padding_value(op, got.dtype)
    for moved, s, n, e in _border_regions(op, got, interior):
        if op.mode == PaddingMode.CONSTANT:
            for border in (moved[:s], moved[s + n:]):
                if border.size and not views_equal(np.broadcast_to(value, border.shape), border,
                                                   threads=threads):
                    return False
            continue
        for first, count, source, step in _border_runs(op, moved, s, n, e):
            if not views_equal(_run_source(moved, count, source, step), moved[first:first + count],
                               threads=threads):
                return False
    return True


# ---- operators of a case ----------------------------------------------------------------
def operator_for(case: Case) -> IdentityOp | PaddingOp:
    """The DirectML operator the DML EP builds for a case (descriptors as the EP builds them);
    the package exports it as ``dml_operator``.

    Transpose: identity over ``BufferTensorDesc(shape).transpose(perm)``, packed output.
    Expand: identity over ``BufferTensorDesc(shape).broadcast_to(target_shape)``, packed output.
    Pad: ``PaddingOp.from_onnx`` (right-aligned coercion to 4D, the constant in the tensor's type).
    """
    dtype = case.data_type
    if case.op == "Transpose":
        if not case.shape:
            raise ShapeError("a rank-0 Transpose has no DirectML descriptor (rank 0 is rejected)")
        source = BufferTensorDesc(dtype, case.shape).transpose(case.perm)
        return IdentityOp(source, BufferTensorDesc(dtype, source.sizes))
    if case.op == "Expand":
        source = BufferTensorDesc(dtype, case.shape or (1,)).broadcast_to(case.target_shape or ())
        return IdentityOp(source, BufferTensorDesc(dtype, source.sizes))
    if case.op == "Pad":
        return padding_for(BufferTensorDesc(dtype, case.shape or (1,)), case.pads or (),
                           mode=case.mode, value_hex=case.pad_value_hex, axes=case.axes)
    raise ShapeError(f"op {case.op!r} has no DirectML operator here; valid: Transpose, Expand, Pad")


def padding_for(
    input: BufferTensorDesc, pads: Any, *, mode: str | PaddingMode = "constant", value_hex: str = "",
    axes: Any = None,
) -> PaddingOp:
    """``PaddingOp.from_onnx`` with the constant given as little-endian hex (any data type,
    4-bit ones included: their constant is the low nibble of the first byte)."""
    value = bytes.fromhex(value_hex) if value_hex else b""
    if not _is_nibble(input.data_type):
        return PaddingOp.from_onnx(input, pads, mode=mode, value=value if value else 0, axes=axes)
    proxy = PaddingOp.from_onnx(BufferTensorDesc(DataType.UINT8, input.sizes, input.strides), pads,
                                mode=mode, axes=axes)
    coerced = BufferTensorDesc(input.data_type, proxy.input.sizes, proxy.input.strides)
    output = BufferTensorDesc(input.data_type, proxy.output.sizes)
    return PaddingOp(coerced, output, proxy.start_padding, proxy.end_padding, proxy.mode,
                     bytes([value[0] & 0x0F]) if value else b"")
