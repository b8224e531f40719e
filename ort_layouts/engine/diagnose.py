"""Diagnosis: name what an execution provider did, in layout terms, when its output mismatches.

The actual output is tested against the outputs of alternative descriptors and operators (the
input read packed, another permutation, a broadcast stride left non-zero, padding swapped or on
the wrong axes, another padding mode, ...), each computed with the reference executor; the first
alternative that reproduces the output bit for bit is named.

Alternatives that read past the end of the input buffer (a broadcast stride not zeroed) are
compared only on the elements they read inside it; the message says so.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import as_strided

from ort_layouts._errors import OrtLayoutsError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc, normalize_perm
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.size import packed_strides
from ort_layouts.operators.case import Case
from ort_layouts.operators.pad import PaddingMode, PaddingOp, split_onnx_pads
from ort_layouts.reference.compare import _bits, bits_equal
from ort_layouts.reference.execute import (
    IdentityOp,
    _elements,
    _is_nibble,
    execute,
    operator_for,
    pack,
    padding_for,
    unpack,
)

__all__ = ["diagnose"]

_MASKED_LIMIT = 1 << 22  # elements: reads past the buffer are simulated only below this
_ALL_PERMS_MAX_RANK = 6  # every permutation is tried up to this rank, transpositions beyond

# a candidate yields either the flat output bits, or (bits, mask of the elements read inside
# the input buffer), or None when it does not apply
_Result = np.ndarray | tuple[np.ndarray, np.ndarray] | None
_Candidate = tuple[str, Callable[[], _Result]]


def _fmt(values: Any) -> str:
    return str([int(v) for v in values])


class _Context:
    """What every candidate needs: the case, its operator, the input buffer and elements."""

    def __init__(self, case: Case, input_array: np.ndarray) -> None:
        self.case = case
        self.dtype: DataType = case.data_type
        self.op = operator_for(case)
        self.source = BufferTensorDesc(self.dtype, case.shape or (1,))
        self.buffer = pack(self.source, np.asarray(input_array))
        # only the tensor's own elements are real data; anything past them is unknown
        self.elements = _elements(self.buffer, self.dtype)[: self.source.element_count]

    def canonical(self, bits: np.ndarray) -> np.ndarray:
        return bits & np.uint8(0x0F) if _is_nibble(self.dtype) else bits

    def run(self, op: IdentityOp | PaddingOp) -> np.ndarray:
        return self.canonical(_bits(unpack(op.output, execute(op, self.buffer))))

    def read(self, desc: BufferTensorDesc) -> _Result:
        """The values an identity with input ``desc`` writes (packed, logical order)."""
        sizes = desc.sizes
        strides = desc.effective_strides
        if desc.last_element_index < self.elements.size:
            item = self.elements.itemsize
            view = as_strided(self.elements, sizes, [s * item for s in strides], writeable=False)
            return self.canonical(np.ascontiguousarray(view).reshape(-1))
        if desc.element_count > _MASKED_LIMIT:
            return None
        offsets: npt.NDArray[np.int64] = np.zeros((), dtype=np.int64)
        for n, s in zip(sizes, strides, strict=True):
            offsets = offsets[..., None] + np.arange(n, dtype=np.int64) * s
        offsets = offsets.reshape(-1)
        inside = offsets < self.elements.size
        values = np.zeros(offsets.size, dtype=self.elements.dtype)
        values[inside] = self.elements[offsets[inside]]
        return self.canonical(values), inside


def diagnose(case: Case, input_array: np.ndarray, actual: np.ndarray) -> str:
    """Explain a mismatching output in layout terms.

    Args:
        case: the case that ran.
        input_array: the input it was given (logical values).
        actual: the output the execution provider returned.

    Returns:
        "" when the output is right or nothing explains it; else one line naming the
        alternative that reproduces it, e.g. "output matches the input read packed (strides
        ignored: a plain copy)".
    """
    try:
        ctx = _Context(case, input_array)
        act = np.asarray(actual)
        if act.dtype.itemsize * 8 != max(8, ctx.dtype.bitwidth):
            return ""
        act_bits = ctx.canonical(_bits(act))
        expected = ctx.run(ctx.op)
    except OrtLayoutsError:
        return ""
    if expected.size == act_bits.size and bits_equal(expected, act_bits):
        return ""
    if expected.size == act_bits.size and ctx.dtype.is_float:
        nan_story = _nan_rewrite(ctx.dtype, expected, act_bits)
        if nan_story:
            return nan_story
    for name, make in _candidates(ctx, expected):
        try:
            result = make()
        except OrtLayoutsError:
            continue
        verdict = _matches(result, act_bits, expected)
        if verdict is not None:
            return f"output matches {name}{verdict}"
    return ""


_QUIET_BIT = {DataType.FLOAT16: 1 << 9, DataType.FLOAT32: 1 << 22, DataType.FLOAT64: 1 << 51}
_EXPONENT = {DataType.FLOAT16: 0x7C00, DataType.FLOAT32: 0x7F800000, DataType.FLOAT64: 0x7FF << 52}
_MANTISSA = {DataType.FLOAT16: 0x03FF, DataType.FLOAT32: 0x007FFFFF, DataType.FLOAT64: (1 << 52) - 1}


def _nan_rewrite(dtype: DataType, expected: np.ndarray, actual: np.ndarray) -> str:
    """Name a mismatch where only NaN elements differ: quieted or replaced payloads."""
    differ = expected != actual
    exp, act = expected[differ], actual[differ]
    exponent = exp.dtype.type(_EXPONENT[dtype])
    mantissa = exp.dtype.type(_MANTISSA[dtype])

    def is_nan(bits: np.ndarray) -> np.ndarray:
        nan: np.ndarray = ((bits & exponent) == exponent) & ((bits & mantissa) != 0)
        return nan

    if not (is_nan(exp).all() and is_nan(act).all()):
        return ""
    quiet = exp.dtype.type(_QUIET_BIT[dtype])
    count = int(differ.sum())
    if ((exp | quiet) == act).all():
        return (f"output matches the input with signalling NaNs quieted ({count} element(s) gained the "
                f"quiet bit 0x{int(quiet):x}): the values went through a float conversion, not a bit copy")
    return (f"output matches the input with NaN payloads replaced ({count} NaN element(s) changed their "
            "payload bits): the values went through a float conversion, not a bit copy")


def _matches(result: _Result, actual: np.ndarray, expected: np.ndarray) -> str | None:
    if result is None:
        return None
    if isinstance(result, tuple):
        values, inside = result
        if values.size != actual.size or not inside.any():
            return None
        if (values[inside] != actual[inside]).any():
            return None
        if expected.size == actual.size and not (actual[inside] != expected[inside]).any():
            return None  # explains nothing that differs
        if inside.all():
            return ""
        return (f" on the {int(inside.sum())} of {inside.size} elements it reads inside the input "
                "buffer (the rest lie past its end)")
    if result.size != actual.size or not bits_equal(result, actual):
        return None
    if result.size == expected.size and bits_equal(result, expected):
        return None
    return ""


def _candidates(ctx: _Context, expected: np.ndarray) -> Iterator[_Candidate]:
    if ctx.dtype.is_64bit_integer:
        yield from _int64_candidates(ctx, expected)
    if ctx.case.op == "Transpose":
        yield from _transpose_candidates(ctx)
    elif ctx.case.op == "Expand":
        yield from _expand_candidates(ctx)
    elif isinstance(ctx.op, PaddingOp):
        yield from _pad_candidates(ctx, ctx.op)
    yield ("all zeros (nothing was written)", lambda: np.zeros_like(expected))


def _int64_candidates(ctx: _Context, expected: np.ndarray) -> Iterator[_Candidate]:
    low = expected & np.uint64(0xFFFFFFFF)
    yield ("the 64-bit integers moved as UINT32 low words (high words zero: the 32-bit emulation)",
           lambda: low)
    yield ("the 64-bit integers truncated to 32 bits and sign-extended",
           lambda: low.view(np.uint32)[0::2].view(np.int32).astype(np.int64).view(np.uint64))


def _transpose_candidates(ctx: _Context) -> Iterator[_Candidate]:
    rank = ctx.source.dimension_count
    perm = tuple(range(rank - 1, -1, -1)) if ctx.case.perm is None else normalize_perm(ctx.case.perm, rank)
    right = ctx.source.transpose(perm)
    seen = {perm}

    def transposed(q: tuple[int, ...]) -> Callable[[], _Result]:
        return lambda: ctx.read(ctx.source.transpose(q))

    def strides_note(q: tuple[int, ...]) -> str:
        return (f" (input sizes {_fmt(ctx.source.transpose(q).sizes)} strides "
                f"{_fmt(ctx.source.transpose(q).effective_strides)} instead of sizes {_fmt(right.sizes)} "
                f"strides {_fmt(right.effective_strides)})")

    identity = tuple(range(rank))
    seen.add(identity)
    yield ("the input read packed (strides ignored: a plain copy of the input buffer)",
           lambda: ctx.read(BufferTensorDesc(ctx.dtype, right.sizes)))
    inverse = tuple(int(i) for i in np.argsort(perm))
    twice = tuple(perm[perm[i]] for i in range(rank))
    if inverse not in seen:
        seen.add(inverse)
        also = f", also perm {_fmt(perm)} applied twice" if twice == inverse else ""
        yield (f"perm {_fmt(inverse)}, the inverse of perm {_fmt(perm)}{also}{strides_note(inverse)}",
               transposed(inverse))
    if twice not in seen:
        seen.add(twice)
        yield (f"perm {_fmt(perm)} applied twice (perm {_fmt(twice)}){strides_note(twice)}",
               transposed(twice))
    for i, j in itertools.combinations(range(rank), 2):
        q = list(perm)
        q[i], q[j] = q[j], q[i]
        swapped = tuple(q)
        if swapped not in seen:
            seen.add(swapped)
            yield (f"perm {_fmt(swapped)}: entries {i} and {j} of perm {_fmt(perm)} swapped"
                   f"{strides_note(swapped)}", transposed(swapped))
    if rank <= _ALL_PERMS_MAX_RANK:
        for other in itertools.permutations(range(rank)):
            if other not in seen:
                seen.add(other)
                yield (f"perm {_fmt(other)} instead of {_fmt(perm)}{strides_note(other)}", transposed(other))


def _expand_candidates(ctx: _Context) -> Iterator[_Candidate]:
    right = ctx.op.input
    sizes = right.sizes
    rank = len(sizes)
    shape = ctx.case.shape or (1,)
    aligned = (1,) * (rank - len(shape)) + tuple(shape)
    source_strides = packed_strides(aligned)
    broadcast = right.broadcast_axes
    yield (f"the input read with the packed strides {_fmt(packed_strides(sizes))} of the output shape "
           f"{_fmt(sizes)} (broadcast strides not zeroed)",
           lambda: ctx.read(BufferTensorDesc(ctx.dtype, sizes)))
    for axis in broadcast:
        strides = list(right.effective_strides)
        strides[axis] = source_strides[axis]
        alt = BufferTensorDesc(ctx.dtype, sizes, tuple(strides))
        yield (f"broadcast axis {axis} not zeroed (stride {source_strides[axis]} instead of 0: "
               f"input strides {_fmt(strides)} instead of {_fmt(right.effective_strides)})",
               functools.partial(ctx.read, alt))
    if len(broadcast) > 1:
        strides = [source_strides[a] if a in broadcast else s for a, s in enumerate(right.effective_strides)]
        alt_all = BufferTensorDesc(ctx.dtype, sizes, tuple(strides))
        yield (f"no broadcast stride zeroed (input strides {_fmt(strides)} instead of "
               f"{_fmt(right.effective_strides)})", lambda: ctx.read(alt_all))
    if len(shape) < rank:
        left = tuple(shape) + (1,) * (rank - len(shape))
        try:
            alt_left = BufferTensorDesc(ctx.dtype, left).broadcast_to(sizes)
        except OrtLayoutsError:
            return
        if alt_left.sizes == sizes:
            yield (f"the input shape aligned left {_fmt(left)} instead of right {_fmt(aligned)} before "
                   f"broadcasting (input strides {_fmt(alt_left.effective_strides)} instead of "
                   f"{_fmt(right.effective_strides)})", lambda: ctx.read(alt_left))


def _pad_candidates(ctx: _Context, op: PaddingOp) -> Iterator[_Candidate]:
    case = ctx.case
    value_hex = op.padding_value_bytes.hex()
    zero_value = not any(op.padding_value_bytes)

    def variant(start: tuple[int, ...], end: tuple[int, ...], mode: PaddingMode,
                value: bytes) -> Callable[[], _Result]:
        def run() -> _Result:
            sizes = tuple(n + s + e for n, s, e in zip(op.input.sizes, start, end, strict=True))
            alt = PaddingOp(op.input, BufferTensorDesc(ctx.dtype, sizes), start, end, mode, value)
            return ctx.run(alt)
        return run

    start, end, mode = op.start_padding, op.end_padding, op.mode
    if mode == PaddingMode.CONSTANT and not zero_value:
        yield (f"the constant value lost (padding with 0 instead of 0x{value_hex})",
               variant(start, end, mode, b""))
    if start != end:
        yield (f"start and end padding swapped (start {_fmt(end)} end {_fmt(start)} instead of start "
               f"{_fmt(start)} end {_fmt(end)})", variant(end, start, mode, op.padding_value_bytes))
    for other in PaddingMode:
        if other != mode:
            label = f"mode {other.name}" + (f" ({other.onnx_name})" if other.onnx_name else "")
            value = op.padding_value_bytes if other == PaddingMode.CONSTANT else b""
            current = mode.name + (f" ({mode.onnx_name})" if mode.onnx_name else "")
            yield (f"{label} instead of {current}", variant(start, end, other, value))
            if other == PaddingMode.CONSTANT and not zero_value:
                yield (f"mode CONSTANT with value 0 instead of {mode.name}", variant(start, end, other, b""))
    pads = list(case.pads or ())
    half = len(pads) // 2
    interleaved = [*pads[0::2], *pads[1::2]]
    if interleaved != pads:
        yield (f"pads {_fmt(pads)} read interleaved as [x1_begin, x1_end, x2_begin, x2_end, ...]",
               lambda: ctx.run(padding_for(ctx.source, interleaved, mode=mode, value_hex=value_hex,
                                           axes=case.axes)))
    rank = ctx.source.dimension_count
    extra = op.dimension_count - rank
    begins, ends = split_onnx_pads(pads, rank, case.axes) if half else ((0,) * rank, (0,) * rank)
    if extra:
        left_start = tuple(begins) + (0,) * extra
        left_end = tuple(ends) + (0,) * extra
        yield (f"the pads applied left-aligned (start {_fmt(left_start)} end {_fmt(left_end)} instead of "
               f"start {_fmt(start)} end {_fmt(end)}: rank coercion on the wrong side)",
               variant(left_start, left_end, mode, op.padding_value_bytes))
    if rank <= 5:
        for sigma in itertools.permutations(range(rank)):
            if sigma == tuple(range(rank)):
                continue
            moved_b, moved_e = [0] * rank, [0] * rank
            for i, target in enumerate(sigma):
                moved_b[target], moved_e[target] = begins[i], ends[i]
            if (moved_b, moved_e) == (list(begins), list(ends)):
                continue
            alt_start = (0,) * extra + tuple(moved_b)
            alt_end = (0,) * extra + tuple(moved_e)
            moves = ", ".join(f"{i}->{t}" for i, t in enumerate(sigma) if i != t)
            yield (f"the pads applied to the wrong axes (ONNX axis {moves}: start {_fmt(alt_start)} end "
                   f"{_fmt(alt_end)} instead of start {_fmt(start)} end {_fmt(end)})",
                   variant(alt_start, alt_end, mode, op.padding_value_bytes))
