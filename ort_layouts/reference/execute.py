"""The reference executor: DirectML's data-movement operators run on raw bytes from descriptors.

Expected outputs come from the descriptors and the input bytes alone, as DirectML defines the
operators, never from ONNX Runtime. Each operator (``IdentityOp``, ``PaddingOp``, ... in
:mod:`ort_layouts.operators`) is a :class:`DmlOperator`: it knows how to fill its output view
from its input view (``run``) and how to check a finished output against its input
(``matches``); this module gives them buffers.

Operators with several input or output tensors (``JoinOp``, ``SplitOp``) are
:class:`DmlMultiOperator` operators, run from one buffer per tensor by :func:`execute_all`,
:func:`output_values_all` and :func:`verify_all`, which take single-tensor operators too (as
one-element lists).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Protocol, TypeAlias, TypeGuard, cast, runtime_checkable

import numpy as np

from ort_layouts._errors import ArgumentError, DataTypeError, DescriptorError, a_type
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.reference.buffers import (
    UINT_OF_SIZE,
    buffer_elements,
    check_buffer_size,
    check_threads,
    is_list,
    is_nibble,
    raw_bytes,
    store_nibbles,
    strided_view,
    unpack,
)
from ort_layouts.reference.compare import Comparison, as_tensor, compare

__all__ = [
    "LARGE_OUTPUT_BYTES",
    "AnyDmlOperator",
    "DmlMultiOperator",
    "DmlOperator",
    "PendingOutput",
    "compare_output",
    "execute",
    "execute_all",
    "input_descs",
    "is_multi_operator",
    "output_descs",
    "output_values",
    "output_values_all",
    "pending_output",
    "verify",
    "verify_all",
]


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


@runtime_checkable
class DmlMultiOperator(Protocol):
    """A DirectML operator with a list of input and a list of output tensors (JOIN, SPLIT), as
    the reference runs it."""

    @property
    def inputs(self) -> tuple[BufferTensorDesc, ...]: ...

    @property
    def outputs(self) -> tuple[BufferTensorDesc, ...]: ...

    def run_all(self, dsts: Sequence[np.ndarray], srcs: Sequence[np.ndarray], *,
                threads: int | None = None) -> None:
        """Write every output view in ``dsts`` (unsigned integers of the element width) from
        the input views ``srcs``, in the operator's tensor order."""

    def matches_all(self, srcs: Sequence[np.ndarray], gots: Sequence[np.ndarray], *,
                    threads: int | None = None) -> bool:
        """Whether every ``gots[k]`` (output k's values as unsigned integers, in its sizes) is
        what :meth:`run_all` writes for ``srcs``."""

    def to_dict(self) -> dict[str, Any]: ...


AnyDmlOperator: TypeAlias = DmlOperator | DmlMultiOperator


# each type seen to be an operator: True for a DmlMultiOperator, False for a DmlOperator (a check
# against a runtime-checkable protocol costs tens of microseconds, and a diagnosis runs hundreds
# of operators); a type seen to be neither is checked again each time
_KINDS: dict[type, bool] = {}


def _kind(op: object) -> bool | None:
    """Whether ``op`` is a :class:`DmlMultiOperator` (True) or a :class:`DmlOperator` (False);
    None for neither. A type that is both counts as the first."""
    known = _KINDS.get(type(op))
    if known is None:
        if isinstance(op, DmlMultiOperator):
            known = True
        elif isinstance(op, DmlOperator):
            known = False
        else:
            return None
        _KINDS[type(op)] = known
    return known


def is_multi_operator(op: object) -> TypeGuard[DmlMultiOperator]:
    """``isinstance(op, DmlMultiOperator)``, remembered for its type."""
    return _kind(op) is True


def _check_operator(op: Any, call: str) -> None:
    """Refuse what ``call`` (execute, verify, output_values) cannot run: an operator of several
    tensors (its ``*_all`` twin runs it) or no operator at all."""
    kind = _kind(op)
    if kind is True:
        name = type(op).__name__
        ins, outs = len(op.inputs), len(op.outputs)
        actuals = ", actuals" if call == "verify" else ""
        raise DescriptorError(
            "buffer-count", name,
            f"{name} has {ins} input{'s' * (ins != 1)} and {outs} output{'s' * (outs != 1)}; {call} runs "
            f"an operator of one input and one output: call {call}_all(op, buffers{actuals}), one buffer "
            "per input")
    if kind is None:
        raise _no_operator(op, "an operator of one input and one output (IdentityOp, PaddingOp, ...)")


def _no_operator(op: Any, valid: str) -> ArgumentError:
    """The error for an ``op`` that is no DirectML operator at all (None, a str)."""
    return ArgumentError(f"op {op!r:.80} is {a_type(op)}, not a DirectML operator; valid: {valid}, e.g. "
                         "dml_operator(case)")


def _check_list(items: Any, what: str) -> None:
    """Refuse ``items`` (buffers or arrays, one per tensor) that are no list or tuple of them."""
    if not is_list(items):
        raise DescriptorError("buffer-count", items,
                              f"{what} {items!r:.80} is {a_type(items)}; valid: a list with one per tensor "
                              "of the operator, in its order (e.g. [buffer] for one input)")


def _is_multi(op: Any) -> bool:
    """Whether ``op`` is a :class:`DmlMultiOperator` (an ArgumentError when it is no operator at
    all)."""
    kind = _kind(op)
    if kind is None:
        raise _no_operator(op, "IdentityOp, PaddingOp, JoinOp, SplitOp, ...")
    return kind


def input_descs(op: AnyDmlOperator) -> tuple[BufferTensorDesc, ...]:
    """The operator's input descriptors, in its input order (one for a single-tensor operator)."""
    return tuple(op.inputs) if _is_multi(op) else (op.input,)  # type: ignore[union-attr]


def output_descs(op: AnyDmlOperator) -> tuple[BufferTensorDesc, ...]:
    """The operator's output descriptors, in its output order (one for a single-tensor operator)."""
    return tuple(op.outputs) if _is_multi(op) else (op.output,)  # type: ignore[union-attr]


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
        DescriptorError: a buffer is too small, the output descriptor overlaps itself, or ``op``
            has several input or output tensors (JOIN, SPLIT: :func:`execute_all` runs them).
        ArgumentError: ``op`` is no DirectML operator (None, a Case), naming its type.

    Warning:
        Like ``numpy.lib.stride_tricks.as_strided`` this reads and writes through the
        descriptors; it checks each buffer holds its descriptor's TotalTensorSizeInBytes, which
        DirectML's validation guarantees covers every element.
    """
    _check_operator(op, "execute")
    check_threads(threads)
    op.output.validate(is_output=True)
    raw_in = raw_bytes(input_buffer)
    check_buffer_size(raw_in, op.input, "input", addressed=True)
    total_out = op.output.total_tensor_size_in_bytes
    if out is None:
        raw_out = np.zeros(total_out, dtype=np.uint8)
    else:
        if (not isinstance(out, np.ndarray) or not out.flags.c_contiguous or not out.flags.writeable
                or out.dtype.hasobject):
            raise DescriptorError("out", type(out).__name__,
                                  "out must be a writeable C-contiguous numpy array of numbers")
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
    _check_operator(op, "output_values")
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
        DescriptorError: as :func:`execute` (:func:`verify_all` checks JOIN and SPLIT).
        ArgumentError: ``op`` is no DirectML operator (None, a Case), naming its type.
    """
    _check_operator(op, "verify")
    check_threads(threads)
    op.output.validate(is_output=True)
    raw_in = raw_bytes(input_buffer)
    check_buffer_size(raw_in, op.input, "input", addressed=True)
    act = _actual_array(actual)
    if act is None:
        return _not_a_tensor(op.output.sizes, op.output.data_type, actual)
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


def _actual_array(actual: Any) -> np.ndarray | None:
    """An actual output as an array; None where there is none, or it is none (a ragged list):
    :func:`_not_a_tensor` then gives compare's result."""
    act = None if actual is None else as_tensor(actual)
    return None if isinstance(act, str) else act


def _not_a_tensor(shape: Sequence[int], data_type: DataType, actual: Any) -> Comparison:
    """``compare(expected, actual)`` for an ``actual`` that is None or no array, where the
    expected output has ``shape``: its message and counts need only that shape, so the values
    are not made (a view of one zero stands for them)."""
    return compare(np.broadcast_to(np.zeros((), dtype=data_type.to_numpy()), tuple(shape)), actual)


# outputs of at least this many bytes are checked from the descriptors, never held
LARGE_OUTPUT_BYTES = 16 << 20


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class PendingOutput:
    """The expected output of a large case, not computed: the operator and its input buffer,
    against which :meth:`compare` checks an actual output tile by tile (:func:`verify`), so a
    validation holds the input and the actual output and no output-sized expected array.

    Attributes:
        op: the operator.
        input_buffer: its input, holding exactly the bytes its descriptor addresses or more (up to
            TotalTensorSizeInBytes), as :func:`pending_output` checked.
        shape: the expected output's shape (the ONNX output shape).
    """

    op: DmlOperator
    input_buffer: np.ndarray
    shape: tuple[int, ...]

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.op.output.data_type.to_numpy()

    @property
    def size(self) -> int:
        """Elements of the expected output (as ``ndarray.size``)."""
        return self.op.output.element_count

    @property
    def nbytes(self) -> int:
        """Bytes the expected output would take (as ``ndarray.nbytes``)."""
        return self.size * self.dtype.itemsize

    def values(self) -> np.ndarray:
        """The expected output itself (materialized): ``output_values`` in ``shape``."""
        return output_values(self.op, self.input_buffer).reshape(self.shape)

    def compare(self, actual: np.ndarray) -> Comparison:
        """Exactly ``compare(self.values(), actual)``, without making the values when ``actual``
        has the expected shape."""
        act = _actual_array(actual)
        if act is None:
            return _not_a_tensor(self.shape, self.op.output.data_type, actual)
        if act.shape != self.shape:
            return compare(self.values(), act)
        return verify(self.op, self.input_buffer, act)


def pending_output(op: AnyDmlOperator | None, input_array: np.ndarray, shape: Sequence[int], *,
                   min_bytes: int | None = None) -> PendingOutput | None:
    """A :class:`PendingOutput` for a single-tensor operator whose output has at least
    ``min_bytes`` and whose input array is its input buffer as is (it holds every byte the input
    descriptor addresses and no more than TotalTensorSizeInBytes); None otherwise, when the
    expected output is made as usual.

    Args:
        op: the case's DirectML operator (None for a case DirectML cannot express).
        input_array: the case's input, C-ordered, of the operator's data type.
        shape: the ONNX output shape.
        min_bytes: the smallest output, in bytes, left pending (default
            :data:`LARGE_OUTPUT_BYTES`).
    """
    if op is None or _is_multi(op):
        return None
    single: DmlOperator = op  # type: ignore[assignment]
    if is_nibble(single.input.data_type):
        return None
    x = np.asarray(input_array)
    item = single.input.data_type.bitwidth // 8
    addressed = (single.input.last_element_index + 1) * item
    least = LARGE_OUTPUT_BYTES if min_bytes is None else min_bytes
    if (single.output.element_count * item < least or not x.flags.c_contiguous
            or not _same_type(x.dtype, single.input.data_type)
            or not addressed <= x.nbytes <= single.input.total_tensor_size_in_bytes):
        return None
    return PendingOutput(single, x, tuple(int(n) for n in shape))


def compare_output(expected: np.ndarray | PendingOutput, actual: np.ndarray) -> Comparison:
    """``compare(expected, actual)`` for an expected array, ``expected.compare(actual)`` for a
    :class:`PendingOutput`: the same result either way."""
    if isinstance(expected, PendingOutput):
        return expected.compare(actual)
    return compare(expected, actual)


def _same_type(numpy_dtype: np.dtype[Any], dtype: DataType) -> bool:
    try:
        return DataType.from_numpy(numpy_dtype) == dtype and numpy_dtype.itemsize * 8 == dtype.bitwidth
    except DataTypeError:
        return False


# ---- several tensors -----------------------------------------------------------------------
def input_views(descs: Sequence[BufferTensorDesc], buffers: Sequence[Any]) -> list[np.ndarray]:
    """Read-only strided views of each input buffer through its descriptor, after checking
    there is one buffer per descriptor and each holds every byte its descriptor addresses."""
    if len(buffers) != len(descs):
        raise DescriptorError(
            "buffer-count", len(buffers),
            f"{len(buffers)} input buffers given; the operator has {len(descs)} inputs")
    views = []
    for k, (desc, buffer) in enumerate(zip(descs, buffers, strict=True)):
        raw = raw_bytes(buffer)
        check_buffer_size(raw, desc, f"input {k}", addressed=True)
        elements = buffer_elements(raw[: desc.total_tensor_size_in_bytes], desc.data_type)
        views.append(strided_view(elements, desc, writeable=False))
    return views


def execute_all(
    op: AnyDmlOperator,
    input_buffers: Sequence[Any],
    *,
    outs: Sequence[np.ndarray] | None = None,
    threads: int | None = None,
) -> list[np.ndarray]:
    """Run a DirectML operator with any number of input and output tensors on raw bytes, from
    its descriptors alone: :func:`execute` for each tensor list.

    Args:
        op: the operator (JOIN, SPLIT, or a single-tensor one).
        input_buffers: one buffer per input descriptor, in the operator's input order, each
            holding every byte its descriptor addresses.
        outs: optional caller buffers, one per output (as ``out`` of :func:`execute`).
        threads: threads for large copies; None means one per CPU (at most 8).

    Returns:
        One uint8 buffer per output, each its descriptor's TotalTensorSizeInBytes long; bytes
        that belong to no element are 0 in a new buffer (DirectML leaves them undefined).

    Raises:
        DescriptorError: a buffer count or size does not fit the descriptors, or an output
            descriptor overlaps itself.
        ArgumentError: ``op`` is no DirectML operator (None, a Case), naming its type.
    """
    multiple = _is_multi(op)
    _check_list(input_buffers, "input_buffers")
    if outs is not None:
        _check_list(outs, "outs")
    check_threads(threads)
    if not multiple:
        if len(input_buffers) != 1 or (outs is not None and len(outs) != 1):
            raise DescriptorError(
                "buffer-count", len(input_buffers),
                f"{len(input_buffers)} input buffers given; a single-tensor operator has 1 input "
                "and 1 output")
        return [execute(op, input_buffers[0], out=None if outs is None else outs[0],  # type: ignore[arg-type]
                        threads=threads)]
    multi: DmlMultiOperator = op  # type: ignore[assignment]
    outputs = tuple(multi.outputs)
    for desc in outputs:
        desc.validate(is_output=True)
    srcs = input_views(tuple(multi.inputs), input_buffers)
    if outs is not None and len(outs) != len(outputs):
        raise DescriptorError("buffer-count", len(outs),
                              f"{len(outs)} output buffers given; the operator has {len(outputs)} outputs")
    raws: list[np.ndarray] = []
    for k, desc in enumerate(outputs):
        if outs is None:
            raws.append(np.zeros(desc.total_tensor_size_in_bytes, dtype=np.uint8))
            continue
        out = outs[k]
        if (not isinstance(out, np.ndarray) or not out.flags.c_contiguous or not out.flags.writeable
                or out.dtype.hasobject):
            raise DescriptorError("out", type(out).__name__,
                                  f"output {k} must be a writeable C-contiguous numpy array of numbers")
        raw = out.reshape(-1).view(np.uint8)
        check_buffer_size(raw, desc, f"output {k}")
        raws.append(raw[: desc.total_tensor_size_in_bytes])
    elements = [buffer_elements(raw, desc.data_type) for raw, desc in zip(raws, outputs, strict=True)]
    dsts = [strided_view(e, desc, writeable=True) for e, desc in zip(elements, outputs, strict=True)]
    multi.run_all(dsts, srcs, threads=threads)
    for e, raw, desc in zip(elements, raws, outputs, strict=True):
        if is_nibble(desc.data_type):
            store_nibbles(e, raw)
    return raws


def output_values_all(op: AnyDmlOperator, input_buffers: Sequence[Any]) -> list[np.ndarray]:
    """The logical values of every output: ``unpack(output, buffer)`` for each buffer of
    :func:`execute_all`, in the operator's output order."""
    if not _is_multi(op):
        if len(input_buffers) != 1:
            raise DescriptorError("buffer-count", len(input_buffers),
                                  f"{len(input_buffers)} input buffers given; the operator has 1 input")
        return [output_values(op, input_buffers[0])]  # type: ignore[arg-type]
    outputs = output_descs(op)
    return [unpack(desc, raw) for desc, raw in zip(outputs, execute_all(op, input_buffers), strict=True)]


def verify_all(op: AnyDmlOperator, input_buffers: Sequence[Any], actuals: Sequence[np.ndarray], *,
               threads: int | None = None) -> list[Comparison]:
    """Compare each of ``actuals`` with the operator's output of the same position, bit for
    bit: exactly ``[compare(expected_k, actuals[k])]`` with the expected outputs of
    :func:`output_values_all` in each actual's shape. When every output agrees the check runs
    without materializing them (:meth:`DmlMultiOperator.matches_all`).

    Raises:
        DescriptorError: as :func:`execute_all`, or a count of ``actuals`` that is not the
            operator's output count.
        ArgumentError: ``op`` is no DirectML operator (None, a Case), naming its type.
    """
    multiple = _is_multi(op)
    _check_list(input_buffers, "input_buffers")
    _check_list(actuals, "actuals")
    check_threads(threads)
    if not multiple:
        if len(input_buffers) != 1 or len(actuals) != 1:
            raise DescriptorError("buffer-count", len(actuals),
                                  "a single-tensor operator has 1 input and 1 output")
        return [verify(op, input_buffers[0], actuals[0], threads=threads)]  # type: ignore[arg-type]
    multi: DmlMultiOperator = op  # type: ignore[assignment]
    outputs = tuple(multi.outputs)
    if len(actuals) != len(outputs):
        raise DescriptorError("buffer-count", len(actuals),
                              f"{len(actuals)} actual outputs given; the operator has {len(outputs)}")
    for desc in outputs:
        desc.validate(is_output=True)
    srcs = input_views(tuple(multi.inputs), input_buffers)
    acts = [_actual_array(a) for a in actuals]  # None: no array (compare's message says why)
    fast = all(a is not None and not is_nibble(d.data_type) and a.size == d.element_count
               and a.dtype.byteorder != ">" and _same_type(a.dtype, d.data_type)
               for a, d in zip(acts, outputs, strict=True))
    if fast:
        gots = [np.ascontiguousarray(a).reshape(d.sizes).view(UINT_OF_SIZE[d.data_type.bitwidth // 8])
                for a, d in zip(acts, outputs, strict=True)]
        if multi.matches_all(srcs, gots, threads=threads):
            return [Comparison(True, int(a.size)) for a in cast(list[np.ndarray], acts)]  # fast: no None
    results = []
    for desc, raw, act, given in zip(outputs, execute_all(op, input_buffers, threads=threads), acts, actuals,
                                     strict=True):
        if act is None:
            results.append(_not_a_tensor(desc.sizes, desc.data_type, given))
            continue
        expected = unpack(desc, raw)
        if expected.size == act.size:
            expected = expected.reshape(act.shape)
        results.append(compare(expected, act))
    return results
