"""ONNX Slice: DML_OPERATOR_SLICE1 over the input window the DML EP computes.

As ONNX Runtime's DML EP builds it (``DmlOperatorSlice`` in
``onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/DmlOperatorSlice.cpp``, with
``SliceHelper::Initialize`` in ``onnxruntime/core/providers/dml/OperatorAuthorHelper/OperatorHelper.cpp``;
kernels for Slice-1 (registered as "7"), -10, -11 and -13):

- starts, ends, axes and steps come from the attributes (Slice-1) or from constant CPU inputs
  (Slice-10 on), every value clamped to int32 (``ReadCpuLocalTensorIntoInt32``,
  ``GetOptionalAttributeVectorInt32``); negative axes get the rank added;
- per sliced axis, in 32-bit ``int``: a negative start or end gets the dimension added (the end
  only when ``starts[i] > INT_MIN``: the test at OperatorHelper.cpp line 1070, v1.24.1, reads
  ``starts`` for the end); a negative step swaps start and end and adds 1 to both, so the window is
  ``[end + 1, start + 1)``; the window is clamped to ``[0, dim]`` and
  ``output = ceil(size / |step|)``;
- ``DmlOperator::Initialize`` with input 0 only and a minimum of 1 dimension: the input and the
  EP-inferred output are packed descriptors of the ONNX rank (not padded to 4D);
- ``DML_SLICE1_OPERATOR_DESC``: ``InputWindowOffsets`` and ``InputWindowSizes`` (in input
  elements: the window, not the output) and signed ``InputWindowStrides`` (the ONNX step).

DirectML (``DML_SLICE1_OPERATOR_DESC``, feature level 2.1; 1 to 8 dimensions from 3.0): a
negative stride starts at the window's end, ``CopyStart = offset + size - 1``, and
``Output[o] = Input[CopyStart + stride * o]`` per dimension. The window must lie inside the
input and not be empty, strides must not be 0, and ``1 <= OutputSizes[d] <= 1 + (size - 1) /
|stride|``.

Where the EP's window differs from ONNX's result (a positive step whose start is at or below
INT32_MIN with a negative end; a negative step whose start lies before the axis; a 32-bit
overflow of ``end - start`` when ONNX's result is empty) the EP infers another output shape than
ONNX, and ONNX Runtime's check of the kernel's output shapes (``InferAndVerifyOutputSizes`` in
``MLOperatorAuthorImpl.cpp``) fails the session with E_INVALIDARG (seen with ONNX Runtime
1.24.4's DML EP). A steps input without axes fails the EP's own check. An empty output gets no
DirectML operator at all. Such cases are compared with ONNX's result on other EPs and are not
run on DirectML; ``extract`` flags them.

ONNX's result is the specification's (start clamped to ``[0, dim - 1]`` for a negative step): it
keeps element 0 where numpy's slicing, and so ``onnx.reference``, gives nothing (a negative step
whose start lies before the axis). ONNX Runtime's CPU EP reads a negative step's end of exactly
INT32_MAX or INT64_MAX as "to the beginning" (``SliceOp::PrepareForCompute`` in
``slice_helper.h``: the end becomes -1), which the specification does not (it clamps the end to
``dim - 1``); ONNX's output is then empty along that axis where the CPU EP's holds ``start + 1``
elements. Such cases are not in the standard suite, and a model's node with
such parameters is flagged "cpu-divergence" and makes no case (:func:`_cpu_reading`). SLICE1's
documentation lists 8-, 16- and 32-bit types; the suite's 64-bit cases run bit-exact on
DirectML 1.15.4.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import onnx
from onnx import helper

from ort_layouts._errors import DescriptorError, ModelError, NotExpressibleError, ShapeError
from ort_layouts.descriptors.buffer_tensor import (
    MAX_DIMENSION_COUNT,
    BufferTensorDesc,
    check_cpp_name,
    cpp_struct,
)
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import INT64_MAX, INT64_MIN, int_tuple, is_int_tuple
from ort_layouts.operators.base import (
    Candidate,
    CandidateResult,
    Described,
    DiagnosisContext,
    Operator,
    fmt_ints,
)
from ort_layouts.operators.case import Case
from ort_layouts.operators.desc_fields import (
    check_count,
    check_tensor,
    read_desc_dict,
    read_ints,
    read_tensor,
)
from ort_layouts.operators.onnx_nodes import (
    Flagged,
    Graph,
    add_node,
    attrs,
    check_size,
    const_ints,
    int64_initializer,
)
from ort_layouts.operators.shapes import rotating
from ort_layouts.reference.buffers import check_views
from ort_layouts.reference.compare import views_equal
from ort_layouts.reference.copy import strided_copy

__all__ = ["SLICE1", "Slice", "Slice1Op", "SliceWindow", "ep_slice_window", "onnx_slices",
           "slice_divergence"]

SLICE1 = "DML_OPERATOR_SLICE1"
SLICE_INPUTS_OPSET = 10  # starts, ends, axes and steps become inputs; steps appear
SLICE_NEGATIVE_AXES_OPSET = 11  # negative axes
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# Shapes with distinct sizes > 2 on most axes, so a slice on the wrong axis changes the result.
_SLICE_SHAPES: dict[int, tuple[int, ...]] = {
    1: (7,), 2: (5, 6), 3: (3, 5, 4), 4: (2, 3, 5, 4), 5: (2, 3, 2, 5, 3), 6: (2, 3, 2, 1, 4, 3),
    7: (2, 1, 3, 2, 1, 4, 2), 8: (2, 1, 2, 3, 1, 2, 3, 2),
}


def _clamp32(value: int) -> int:
    """int64 -> int32 saturating, as ``clamp_cast<int32_t>`` / ``std::clamp`` in the EP."""
    return min(max(int(value), INT32_MIN), INT32_MAX)


def _wrap32(value: int) -> int:
    """A 32-bit two's-complement ``int`` result (what the EP's ``int`` arithmetic gives)."""
    return (value + 2**31) % 2**32 - 2**31


# ---- the DML EP's window (SliceHelper::Initialize) ------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class SliceWindow:
    """What ``SliceHelper::Initialize`` computes, per input dimension.

    Attributes:
        offsets: ``m_offsets``, the window's first element (InputWindowOffsets).
        sizes: ``m_sizes``, the window's extent in input elements (InputWindowSizes); a 32-bit
            overflow of ``end - start`` shows here as a size past the input.
        strides: ``m_strides``, the signed steps (InputWindowStrides).
        output_sizes: ``m_outputDimensions``, the EP's inferred output shape.
    """

    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    output_sizes: tuple[int, ...]

    def first_and_step(self, axis: int) -> tuple[int, int, int]:
        """(first input index, step, count) DirectML reads along ``axis``; (0, 0, 0) when
        nothing, step 0 for a single element."""
        count = self.output_sizes[axis]
        if count == 0:
            return 0, 0, 0
        stride = self.strides[axis]
        first = self.offsets[axis] + (self.sizes[axis] - 1 if stride < 0 else 0)
        return first, (stride if count > 1 else 0), count


def ep_slice_window(shape: Sequence[int], starts: Sequence[int], ends: Sequence[int],
                    axes: Sequence[int] | None = None, steps: Sequence[int] | None = None) -> SliceWindow:
    """The input window the DML EP computes for ONNX Slice (``SliceHelper::Initialize``).

    Every value is clamped to int32 first; the per-axis arithmetic is 32-bit ``int``, the end
    normalised only when ``starts[i] > INT_MIN`` (OperatorHelper.cpp line 1070).

    >>> w = ep_slice_window((2, 3, 4), [1], [-1], axes=[2])
    >>> w.offsets, w.sizes, w.strides, w.output_sizes
    ((0, 0, 1), (2, 3, 2), (1, 1, 1), (2, 3, 2))
    >>> ep_slice_window((5,), [-1], [-2**63], steps=[-1], axes=[0]).offsets
    (0,)

    Raises:
        NotExpressibleError: the EP rejects the parameters (``steps`` without ``axes``).
        ShapeError: the EP's own checks fail (lengths, an axis out of range, a step 0).
    """
    # tuples of Python ints or None, as a Case holds them: the geometry alone decides
    if all(v is None or is_int_tuple(v) for v in (shape, starts, ends, axes, steps)):
        return _cached_window(shape, starts, ends, axes, steps)
    return _window(shape, starts, ends, axes, steps)


def _window(shape: Sequence[int], starts: Sequence[int], ends: Sequence[int],
            axes: Sequence[int] | None, steps: Sequence[int] | None) -> SliceWindow:
    """The window of :func:`ep_slice_window`, computed."""
    dims = tuple(int(n) for n in shape)
    rank = len(dims)
    start_list = [_clamp32(v) for v in int_tuple(starts, "Slice starts")]
    end_list = [_clamp32(v) for v in int_tuple(ends, "Slice ends")]
    axis_list = [] if axes is None else [_clamp32(v) for v in int_tuple(axes, "Slice axes")]
    step_list = [] if steps is None else [_clamp32(v) for v in int_tuple(steps, "Slice steps")]
    axis_list = [a + rank if a < 0 else a for a in axis_list]  # HandleNegativeAxes
    if len(set(axis_list)) != len(axis_list):  # ONNX's and ONNX Runtime's Slice refuse it
        raise ShapeError(f"Slice axes {list(axes or ())} repeat an axis; valid: each axis once")
    if len(start_list) != len(end_list):
        raise ShapeError(f"Slice starts {list(starts)} and ends {list(ends)} differ in length "
                         "(SliceHelper: 'starts' must equal 'ends' in size)")
    if step_list and len(step_list) != len(axis_list):
        if not axis_list:
            raise NotExpressibleError(
                f"the DML EP rejects a steps input {list(step_list)} without axes: SliceHelper "
                "requires len(steps) == len(axes) ('steps' must equal 'axes' in size), so creating "
                "the kernel fails (E_INVALIDARG: when the session is created in a fused DML graph, at "
                "the first run otherwise)")
        raise ShapeError(f"Slice steps {list(step_list)} and axes {list(axes or ())} differ in length")
    if axis_list and len(axis_list) != len(start_list):
        raise ShapeError(f"Slice axes {list(axes or ())} and starts {list(starts)} differ in length")
    out = list(dims)
    offsets = [0] * rank
    sizes = list(dims)
    strides = [1] * rank
    for i, (s, e) in enumerate(zip(start_list, end_list, strict=True)):
        d = axis_list[i] if axis_list else i
        step = step_list[i] if step_list else 1
        if not 0 <= d < rank:
            raise ShapeError(f"Slice axis {d} is out of range for rank {rank} (valid: {-rank}..{rank - 1})")
        if step == 0:
            raise ShapeError(f"Slice steps {list(step_list)} contain 0")
        dim = dims[d]
        start = s + dim if INT32_MIN < s < 0 else s
        end = e + dim if (e < 0 and s > INT32_MIN) else e  # line 1070: tests starts[i]
        if step < 0:
            start, end = end, start
            start += 1 if start < INT32_MAX else 0
            end += 1 if end < INT32_MAX else 0
        start = max(start, 0)
        end = min(end, dim)
        size = max(_wrap32(end - start), 0)
        magnitude = abs(step)
        out[d] = size // magnitude + (size % magnitude != 0)
        offsets[d], strides[d], sizes[d] = start, step, size
    return SliceWindow(tuple(offsets), tuple(sizes), tuple(strides), tuple(out))


_cached_window = functools.lru_cache(maxsize=4096)(_window)


# ---- ONNX's result -------------------------------------------------------------------------
def onnx_slices(shape: Sequence[int], starts: Sequence[int], ends: Sequence[int],
                axes: Sequence[int] | None = None, steps: Sequence[int] | None = None) -> tuple[slice, ...]:
    """ONNX Slice as numpy slices over every axis, by the ONNX specification: negative starts
    and ends get the dimension added, then start is clamped to ``[0, dim]`` (``[0, dim - 1]``
    for a negative step) and end to ``[0, dim]`` (``[-1, dim - 1]``).

    >>> onnx_slices((5,), [-100], [-2**63], steps=[-1])
    (slice(0, None, -1),)
    """
    dims = tuple(int(n) for n in shape)
    rank = len(dims)
    start_list, end_list = int_tuple(starts, "Slice starts"), int_tuple(ends, "Slice ends")
    axis_list = (list(range(len(start_list))) if axes is None
                 else [a % rank if rank else a for a in int_tuple(axes, "Slice axes")])
    step_list = [1] * len(start_list) if steps is None else list(int_tuple(steps, "Slice steps"))
    result = [slice(None)] * rank
    for a, s, e, k in zip(axis_list, start_list, end_list, step_list, strict=True):
        n = dims[a]
        s = s + n if s < 0 else s
        e = e + n if e < 0 else e
        if n == 0:
            result[a] = slice(0, 0, k)
        elif k > 0:
            result[a] = slice(min(max(s, 0), n), min(max(e, 0), n), k)
        else:
            stop = min(max(e, -1), n - 1)
            result[a] = slice(min(max(s, 0), n - 1), None if stop < 0 else stop, k)
    return tuple(result)


def _onnx_selection(n: int, sl: slice) -> tuple[int, int, int]:
    """(first, step, count) of a slice from onnx_slices over an axis of ``n``, as
    ``SliceWindow.first_and_step`` writes it."""
    picked = range(n)[sl]
    count = len(picked)
    if count == 0:
        return 0, 0, 0
    return picked[0], (picked.step if count > 1 else 0), count


def slice_divergence(shape: Sequence[int], starts: Sequence[int], ends: Sequence[int],
                     axes: Sequence[int] | None = None, steps: Sequence[int] | None = None) -> str:
    """How the DML EP's window differs from ONNX's result ("" when it does not): the axis, both
    selections and the reason.

    Raises:
        NotExpressibleError, ShapeError: as :func:`ep_slice_window`.
    """
    dims = tuple(int(n) for n in shape)
    window = ep_slice_window(dims, starts, ends, axes, steps)
    wanted = onnx_slices(dims, starts, ends, axes, steps)
    start_list = int_tuple(starts, "Slice starts")
    end_list = int_tuple(ends, "Slice ends")
    step_list = [1] * len(start_list) if steps is None else list(int_tuple(steps, "Slice steps"))
    axis_list = (list(range(len(start_list))) if axes is None
                 else [a % len(dims) for a in int_tuple(axes, "Slice axes")])
    last = {a: i for i, a in enumerate(axis_list)}  # repeated axes: the last one wins
    notes = []
    for a, i in sorted(last.items()):
        ep = window.first_and_step(a)
        onnx_sel = _onnx_selection(dims[a], wanted[a])
        if ep == onnx_sel:
            continue
        s, e, k = _clamp32(start_list[i]), _clamp32(end_list[i]), _clamp32(step_list[i])
        if window.offsets[a] + window.sizes[a] > dims[a]:
            why = (f"end - start overflows 32-bit int: the EP's window is {window.sizes[a]} elements from "
                   f"offset {window.offsets[a]} on an axis of {dims[a]}, which DirectML rejects")
        elif k > 0 and s == INT32_MIN and e < 0:
            why = (f"starts[{i}] is at or below INT32_MIN and ends[{i}] is negative: the EP adds the "
                   "dimension to the end only when starts[i] > INT_MIN (OperatorHelper.cpp line 1070 "
                   "at v1.24.1 tests starts[i] for the end), so its window is empty")
        elif k < 0 and (s == INT32_MIN or s + dims[a] < 0):
            why = ("a negative step whose start lies before the axis: ONNX clamps the start to 0 and "
                   "keeps element 0, the EP's window [end + 1, start + 1) is empty")
        else:
            why = "the EP's window arithmetic differs"
        notes.append(f"axis {a}: the DML EP reads {_describe_selection(ep)}, "
                     f"ONNX takes {_describe_selection(onnx_sel)} ({why})")
    return "; ".join(notes)


def _describe_selection(selection: tuple[int, int, int]) -> str:
    first, step, count = selection
    if count == 0:
        return "nothing"
    if count == 1:
        return f"element {first}"
    return f"{count} elements from {first} by {step}"


# ---- DML_OPERATOR_SLICE1 ---------------------------------------------------------------------
_WINDOW = ("input_window_offsets", "input_window_sizes", "input_window_strides")


@dataclasses.dataclass(frozen=True, slots=True)
class Slice1Op:
    """DML_SLICE1_OPERATOR_DESC: input and output descriptors and the input window.

    Validated as DirectML validates it: the same data type and DimensionCount (1 to 8) for
    input, output and window; a non-empty window inside the input; strides not 0; and
    ``1 <= OutputSizes[d] <= 1 + (InputWindowSizes[d] - 1) / |InputWindowStrides[d]|``.

    >>> from ort_layouts import BufferTensorDesc
    >>> op = Slice1Op.from_onnx(BufferTensorDesc("float32", (2, 3, 4)), [1], [-1], axes=[2])
    >>> op.input_window_offsets, op.input_window_sizes, op.output.sizes
    ((0, 0, 1), (2, 3, 2), (2, 3, 2))
    """

    input: BufferTensorDesc
    output: BufferTensorDesc
    input_window_offsets: tuple[int, ...]
    input_window_sizes: tuple[int, ...]
    input_window_strides: tuple[int, ...]

    def __post_init__(self) -> None:
        check_tensor(self.input, "Slice1Op input")
        check_tensor(self.output, "Slice1Op output")
        for name in ("input_window_offsets", "input_window_sizes", "input_window_strides"):
            object.__setattr__(self, name, int_tuple(getattr(self, name), f"Slice {name}"))
        n = self.input.dimension_count
        lengths = (len(self.input_window_offsets), len(self.input_window_sizes),
                   len(self.input_window_strides), self.output.dimension_count)
        if any(length != n for length in lengths):
            raise DescriptorError(
                "dimension-count", lengths,
                f"SLICE1 needs one DimensionCount: input {n}, output {self.output.dimension_count}, "
                f"offsets/sizes/strides {lengths[0]}/{lengths[1]}/{lengths[2]}")
        if not 1 <= n <= MAX_DIMENSION_COUNT:
            raise DescriptorError("dimension-count", n,
                                  f"SLICE1 DimensionCount {n} is outside 1..{MAX_DIMENSION_COUNT}")
        if self.input.data_type != self.output.data_type:
            raise DescriptorError(
                "data-type", self.output.data_type.name,
                f"SLICE1 input data type {self.input.data_type.name} differs from output "
                f"{self.output.data_type.name}")
        for d, (dim, off, size, stride, out) in enumerate(zip(
                self.input.sizes, self.input_window_offsets, self.input_window_sizes,
                self.input_window_strides, self.output.sizes, strict=True)):
            if stride == 0 or not INT32_MIN <= stride <= INT32_MAX:
                raise DescriptorError("slice-stride", stride,
                                      f"InputWindowStrides[{d}] = {stride}: a stride must be a nonzero INT")
            if off < 0 or size < 1 or off + size > dim:
                raise DescriptorError(
                    "slice-window", (off, size),
                    f"the input window at axis {d} (offset {off}, size {size}) is empty or extends past "
                    f"the input size {dim}; DirectML needs 1 <= size and offset + size <= {dim}")
            most = 1 + (size - 1) // abs(stride)
            if not 1 <= out <= most:
                raise DescriptorError(
                    "slice-output-size", out,
                    f"output size {out} at axis {d} is not in 1..{most} (window size {size}, stride "
                    f"{stride}: 1 + (size - 1) / |stride|)")

    @classmethod
    def from_onnx(cls, input: BufferTensorDesc, starts: Sequence[int], ends: Sequence[int], *,
                  axes: Sequence[int] | None = None, steps: Sequence[int] | None = None) -> Slice1Op:
        """What the DML EP builds for ONNX ``Slice(input, starts, ends, axes, steps)``: the
        window of :func:`ep_slice_window`, the packed input and the EP's output shape.

        Raises:
            NotExpressibleError: the EP builds no operator (an empty output, or parameters it
                rejects); DescriptorError: its window breaks DirectML's rules (an overflow).
        """
        window = ep_slice_window(check_tensor(input, "Slice input").sizes, starts, ends, axes, steps)
        if 0 in window.output_sizes:
            raise NotExpressibleError(
                f"the DML EP infers the empty output {list(window.output_sizes)}: it builds no "
                "DirectML operator and dispatches nothing")
        output = BufferTensorDesc(input.data_type, window.output_sizes)
        return cls(input, output, window.offsets, window.sizes, window.strides)

    @property
    def dimension_count(self) -> int:
        """DimensionCount of the input, the output and the window."""
        return self.input.dimension_count

    def copy_start(self) -> tuple[int, ...]:
        """The input coordinate of output element 0: the window's start, or its end for a
        negative stride."""
        return tuple(off + (size - 1 if stride < 0 else 0) for off, size, stride in zip(
            self.input_window_offsets, self.input_window_sizes, self.input_window_strides, strict=True))

    def _window_view(self, src: np.ndarray) -> np.ndarray:
        """The input elements DirectML copies, as a view of ``src`` in the output's shape."""
        index = []
        for first, stride, n in zip(self.copy_start(), self.input_window_strides, self.output.sizes,
                                    strict=True):
            stop = first + stride * (n - 1) + (1 if stride > 0 else -1)
            index.append(slice(first, stop if stop >= 0 else None, stride))
        return src[tuple(index)]

    def run(self, dst: np.ndarray, src: np.ndarray, *, threads: int | None = None) -> None:
        """``Output[o] = Input[CopyStart + InputWindowStrides * o]``: one strided copy."""
        check_views(dst, src, self.output, self.input, threads, writeable=True)
        strided_copy(dst, self._window_view(src), threads=threads)

    def matches(self, src: np.ndarray, got: np.ndarray, *, threads: int | None = None) -> bool:
        """Whether ``got`` equals the input elements the window reads, bit for bit."""
        check_views(got, src, self.output, self.input, threads, writeable=False, names=("got", "src"))
        return views_equal(self._window_view(src), got, threads=threads)

    def buffer_offsets_in_elements(self, index: Sequence[int]) -> tuple[int | None, int]:
        """(input buffer offset read for output ``index``, output buffer offset), in elements."""
        out_offset = self.output.offset_of(index)
        coords = [first + stride * int(i) for first, stride, i in zip(
            self.copy_start(), self.input_window_strides, index, strict=True)]
        return self.input.offset_of(coords), out_offset

    def to_dict(self) -> dict[str, Any]:
        """The DML_SLICE1_OPERATOR_DESC fields, JSON-ready (:meth:`from_dict` reads it back)."""
        return {
            "operator": SLICE1,
            "input": self.input.to_dict(),
            "output": self.output.to_dict(),
            "dimension_count": self.dimension_count,
            "input_window_offsets": list(self.input_window_offsets),
            "input_window_sizes": list(self.input_window_sizes),
            "input_window_strides": list(self.input_window_strides),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Slice1Op:
        """Inverse of :meth:`to_dict` (``dimension_count``, where given, must be the operator's).

        Raises:
            DescriptorError: ``data`` is no SLICE1 dict, a field is missing or not what it
                holds, or the operator is not valid (as the constructor checks it).
        """
        fields = read_desc_dict(data, SLICE1, required=("input", "output", *_WINDOW),
                                optional=("dimension_count",))
        op = cls(read_tensor(fields, "input", SLICE1), read_tensor(fields, "output", SLICE1),
                 *(read_ints(fields, key, SLICE1) for key in _WINDOW))
        check_count(fields, "dimension_count", SLICE1, "dimensions of its tensors and window",
                    op.dimension_count, rule="dimension-count")
        return op

    def to_cpp(self, name: str = "slice") -> str:
        """C++ initializers of the descriptors and the DML_SLICE1_OPERATOR_DESC.

        Raises:
            DescriptorError: ``name`` is no C++ identifier, or is a keyword ("cpp-name").
        """
        check_cpp_name(name)
        n = self.dimension_count
        lines = [self.input.to_cpp(f"{name}Input"), self.output.to_cpp(f"{name}Output"),
                 f"UINT {name}Offsets[{n}] = {{{', '.join(map(str, self.input_window_offsets))}}};",
                 f"UINT {name}Sizes[{n}] = {{{', '.join(map(str, self.input_window_sizes))}}};",
                 f"INT {name}Strides[{n}] = {{{', '.join(map(str, self.input_window_strides))}}};"]
        fields = [(f"&{name}InputTensor", "InputTensor"), (f"&{name}OutputTensor", "OutputTensor"),
                  (str(n), "DimensionCount"), (f"{name}Offsets", "InputWindowOffsets"),
                  (f"{name}Sizes", "InputWindowSizes"), (f"{name}Strides", "InputWindowStrides")]
        lines += cpp_struct("DML_SLICE1_OPERATOR_DESC", name, fields)
        lines.append(f"DML_OPERATOR_DESC {name}Op = {{{SLICE1}, &{name}}};")
        return "\n".join(lines)


# ---- the ONNX operator -----------------------------------------------------------------------
# starts, ends, axes, steps
_Params = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...] | None, tuple[int, ...] | None]


def _num(value: int) -> str:
    if value == INT64_MAX:
        return "max"
    if value == INT64_MIN:
        return "min"
    return str(value).replace("-", "m")


def _check(shape: tuple[int, ...], starts: tuple[int, ...] | None, ends: tuple[int, ...] | None,
           axes: tuple[int, ...] | None, steps: tuple[int, ...] | None, opset: int | None) -> None:
    """Raise ShapeError when the parameters are not a valid ONNX Slice."""
    if starts is None or ends is None:
        raise ShapeError("a Slice case needs starts and ends")
    rank = len(shape)
    if rank == 0:
        raise ShapeError("Slice needs an input of rank >= 1 (a scalar has no axis to slice)")
    if len(starts) != len(ends):
        raise ShapeError(f"Slice starts {list(starts)} and ends {list(ends)} differ in length")
    if axes is None:
        if len(starts) > rank:
            raise ShapeError(f"Slice starts {list(starts)} have {len(starts)} entries without axes; the "
                             f"input {list(shape)} has {rank} axes")
    else:
        if len(axes) != len(starts):
            raise ShapeError(f"Slice axes {list(axes)} and starts {list(starts)} differ in length")
        for a in axes:
            if not -rank <= a < rank:
                raise ShapeError(
                    f"Slice axis {a} is out of range for rank {rank} (valid: {-rank}..{rank - 1})")
            if a < 0 and opset is not None and opset < SLICE_NEGATIVE_AXES_OPSET:
                raise ShapeError(f"Slice axis {a} is negative: negative axes need opset >= "
                                 f"{SLICE_NEGATIVE_AXES_OPSET}, got {opset}")
        if len({a % rank for a in axes}) != len(axes):
            raise ShapeError(f"Slice axes {list(axes)} repeat an axis")
    if steps is not None:
        if opset is not None and opset < SLICE_INPUTS_OPSET:
            raise ShapeError(f"Slice steps need opset >= {SLICE_INPUTS_OPSET}, got {opset}")
        if len(steps) != len(starts):
            raise ShapeError(f"Slice steps {list(steps)} and starts {list(starts)} differ in length")
        if 0 in steps:
            raise ShapeError(f"Slice steps {list(steps)} contain 0 (valid: any nonzero integer)")


@functools.lru_cache(maxsize=4096)  # the geometry alone decides: cases of every data type share it
def _ep_reason(shape: tuple[int, ...], starts: tuple[int, ...], ends: tuple[int, ...],
               axes: tuple[int, ...] | None, steps: tuple[int, ...] | None) -> str:
    """Why the DML EP builds no (valid) SLICE1 for the parameters ("" when it builds one)."""
    try:
        window = ep_slice_window(shape, starts, ends, axes, steps)
    except NotExpressibleError as e:
        return str(e)
    divergence = slice_divergence(shape, starts, ends, axes, steps)
    wanted = tuple(len(range(n)[sl]) for n, sl in zip(shape, onnx_slices(shape, starts, ends, axes, steps),
                                                     strict=True))
    if divergence:
        return (f"the DML EP's window differs from ONNX's result: {divergence}. The output it infers, "
                f"{list(window.output_sizes)}, is not ONNX's {list(wanted)}, so ONNX Runtime's check of "
                "the kernel's output shapes (InferAndVerifyOutputSizes) fails the session with E_INVALIDARG")
    if 0 in window.output_sizes:
        return (f"the output {list(wanted)} is empty: the DML EP builds no DirectML operator and dispatches "
                "nothing (DmlOperator::SetDmlOperatorDesc skips empty tensors), so ONNX Runtime returns the "
                "empty tensor on the DML EP")
    return ""


def _cpu_reading(shape: tuple[int, ...], starts: Sequence[int], ends: Sequence[int],
                 axes: Sequence[int] | None, steps: Sequence[int] | None,
                 ) -> tuple[tuple[int, ...], str] | None:
    """The output ONNX Runtime's CPU EP gives where it reads the parameters otherwise than ONNX,
    and why; None where it reads them as ONNX does. The parameters are valid (:func:`_check`).

    Its Slice (``SliceOp::PrepareForCompute``, ``slice_helper.h``) takes an end of exactly
    INT32_MAX or INT64_MAX with a negative step as -1, "to the beginning": the start (clamped to
    ``[0, dim - 1]``) and every element before it. ONNX clamps that end to ``dim - 1``, so its
    result along the axis is empty.

    >>> _cpu_reading((1, 4), [-1], [2**63 - 1], [1], [-1])[0]
    (1, 4)
    """
    if steps is None:
        return None
    rank = len(shape)
    out = list(_output_shape(shape, tuple(starts), tuple(ends), None if axes is None else tuple(axes),
                             tuple(steps)))
    notes = []
    for i, (s, e, k) in enumerate(zip(starts, ends, steps, strict=True)):
        if k >= 0 or e not in (INT32_MAX, INT64_MAX):
            continue
        a = (axes[i] if axes is not None else i) % rank
        n = shape[a]
        if n == 0:  # nothing to take either way
            continue
        first = min(max(s + n if s < 0 else s, 0), n - 1)
        out[a] = first + 1
        name = "INT64_MAX" if e == INT64_MAX else "INT32_MAX"
        notes.append(f"on axis {a}, ends[{i}] = {name} with step {k} is clamped to dim - 1 = {n - 1}, so "
                     "ONNX takes nothing; the CPU EP reads it as 'to the beginning' (an end of -1) and "
                     f"takes {_describe_selection((first, k if out[a] > 1 else 0, out[a]))}")
    return (tuple(out), "; ".join(notes)) if notes else None


@functools.lru_cache(maxsize=4096)  # asked several times a case while it is planned; by geometry
def _output_shape(shape: tuple[int, ...], starts: Sequence[int], ends: Sequence[int],
                  axes: Sequence[int] | None, steps: Sequence[int] | None) -> tuple[int, ...]:
    slices = onnx_slices(shape, starts, ends, axes, steps)
    return tuple(len(range(n)[sl]) for n, sl in zip(shape, slices, strict=True))


def _case_params(case: Case) -> _Params:
    return case.starts or (), case.ends or (), case.axes, case.steps


class Slice(Operator):
    op_types = ("Slice",)
    case_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {"Slice": ("axes", "starts", "ends", "steps")}
    edge_specs = ({"shape": (4, 3), "starts": (2,), "ends": (2,), "axes": (0,)},
                  {"shape": (0, 3), "starts": (0,), "ends": (2,), "axes": (1,)})
    min_opset = 1
    stride_view = False

    def check_case(self, case: Case) -> None:
        _check(case.shape, case.starts, case.ends, case.axes, case.steps, case.opset)

    def id_parts(self, case: Case) -> list[str]:
        parts = ["starts" + ".".join(map(_num, case.starts or ())),
                 "ends" + ".".join(map(_num, case.ends or ()))]
        if case.axes is not None:
            parts.append("axes" + ".".join(map(_num, case.axes)))
        if case.steps is not None:
            parts.append("steps" + ".".join(map(_num, case.steps)))
        return parts

    def output_shape(self, case: Case) -> tuple[int, ...]:
        return _output_shape(case.shape, *_case_params(case))

    def inexpressible_reason(self, case: Case) -> str:
        return self.limits_reason(case) or _ep_reason(case.shape, *_case_params(case))

    def skips_dispatch(self, case: Case) -> bool:
        """An empty tensor, and parameters the EP takes (its window is ONNX's): a Slice whose
        parameters the EP refuses or reads otherwise fails the session instead."""
        if not super().skips_dispatch(case):
            return False
        try:
            ep_slice_window(case.shape, *_case_params(case))
        except NotExpressibleError:
            return False
        return not slice_divergence(case.shape, *_case_params(case))

    def dml_operator(self, case: Case) -> Slice1Op:
        reason = self.inexpressible_reason(case)
        if reason:
            raise NotExpressibleError(reason)
        starts, ends, axes, steps = _case_params(case)
        return Slice1Op.from_onnx(BufferTensorDesc(case.data_type, case.shape), starts, ends, axes=axes,
                                  steps=steps)

    def reference_output(self, case: Case, input_array: np.ndarray) -> np.ndarray:
        """numpy slicing with ONNX's clamped starts and ends (bits copied as they are)."""
        x = np.asarray(input_array)
        return np.ascontiguousarray(x[onnx_slices(x.shape, *_case_params(case))])

    def add_node(self, graph: onnx.GraphProto, index: int, case: Case, opset: int) -> None:
        """Attributes starts/ends/axes before opset 10; int64 initializers ``starts{i}``,
        ``ends{i}``, ``axes{i}`` and ``steps{i}`` from 10 (an empty name for axes when only steps
        are given)."""
        x, y, name = f"x{index}", f"y{index}", f"n{index}_{case.op}"
        starts, ends, axes, steps = _case_params(case)
        if steps is not None and opset < SLICE_INPUTS_OPSET:
            raise ModelError(f"case {case.id}: Slice steps need opset >= {SLICE_INPUTS_OPSET}, got {opset}")
        if axes is not None and opset < SLICE_NEGATIVE_AXES_OPSET and any(a < 0 for a in axes):
            raise ModelError(f"case {case.id}: negative Slice axes need opset >= "
                             f"{SLICE_NEGATIVE_AXES_OPSET}, got {opset}")
        if opset < SLICE_INPUTS_OPSET:
            node_attrs: dict[str, Any] = {"starts": list(starts), "ends": list(ends)}
            if axes is not None:
                node_attrs["axes"] = list(axes)
            graph.node.append(
                helper.make_node("Slice", [x], [y], name=name, doc_string=case.id, **node_attrs))
            return
        inputs = [x, f"starts{index}", f"ends{index}"]
        int64_initializer(graph, f"starts{index}", starts)
        int64_initializer(graph, f"ends{index}", ends)
        if axes is not None:
            int64_initializer(graph, f"axes{index}", axes)
            inputs.append(f"axes{index}")
        elif steps is not None:
            inputs.append("")
        if steps is not None:
            int64_initializer(graph, f"steps{index}", steps)
            inputs.append(f"steps{index}")
        add_node(graph, "Slice", inputs, y, name, case.id)

    def suite_cases(self, dtypes: Sequence[DataType], ranks: set[int], seed: int) -> list[Case]:
        """Every axis of ranks 1 to 4 (a rotating axis above) with positive and negative steps,
        negative and out-of-range starts and ends (clamped), int64 and int32 extremes; several
        axes at once with axes omitted, permuted or negative; a whole-tensor flip; opsets 1, 10,
        11 and 13; special and iota values. Cases whose DML EP window differs from ONNX's
        result, and empty outputs, are left out (see :func:`slice_divergence`)."""
        out: list[Case] = []
        for rank in sorted(r for r in ranks if r in _SLICE_SHAPES):
            shape = _SLICE_SHAPES[rank]
            sliced = [a for a, n in enumerate(shape) if n > 1]
            k = 0
            for axis in sliced:
                for j, (s, e, step) in enumerate(_axis_patterns(shape[axis])):
                    if rank > 4 and sliced[j % len(sliced)] != axis:
                        continue  # one axis per pattern, rotating
                    k += 1
                    chosen = list(dtypes) if rank <= 2 else [rotating(dtypes, k)]
                    one_axis = (axis,) if (j + axis) % 3 else (axis - rank,)
                    one_step = None if step == 1 and j % 2 else (step,)
                    out += [Case("Slice", dt, shape, starts=(s,), ends=(e,), axes=one_axis, steps=one_step)
                            for dt in chosen]
            for m, (starts, ends, axes, steps) in enumerate(_multi_axis_patterns(shape)):
                for dt in dict.fromkeys([dtypes[0], rotating(dtypes, m + rank)]):
                    out.append(Case("Slice", dt, shape, starts=starts, ends=ends, axes=axes, steps=steps))
            if rank <= 4:
                last = shape[-1]
                for values in ("special", "iota"):
                    for dt in dtypes:
                        out.append(Case("Slice", dt, shape, starts=(-1,), ends=(INT64_MIN,), axes=(rank - 1,),
                                        steps=(-2,), values=values))
                        out.append(Case("Slice", dt, shape, starts=(1,), ends=(last,), axes=(0,),
                                        steps=(2,), values=values))
        if 2 in ranks:
            shape = _SLICE_SHAPES[2]
            for opset, starts, ends, axes, steps in _OPSET_PATTERNS:
                for dt in dtypes:
                    out.append(Case("Slice", dt, shape, starts=starts, ends=ends, axes=axes, steps=steps,
                                    opset=opset))
        return [c for c in dict.fromkeys(out) if not self.inexpressible_reason(c)]

    def diagnosis_candidates(self, ctx: DiagnosisContext) -> Iterator[Candidate]:
        """A negative stride taken as positive; the window offsets ignored; offsets or sizes
        off by one; the strides ignored (step 1); the window read from the wrong end."""
        op = ctx.op
        assert isinstance(op, Slice1Op)
        offsets, sizes, strides = op.input_window_offsets, op.input_window_sizes, op.input_window_strides

        def variant(new_offsets: Sequence[int], new_sizes: Sequence[int],
                    new_strides: Sequence[int]) -> Callable[[], CandidateResult]:
            def run() -> CandidateResult:
                return ctx.run(Slice1Op(op.input, op.output, tuple(new_offsets), tuple(new_sizes),
                                        tuple(new_strides)))
            return run

        def window(o: Sequence[int], s: Sequence[int], k: Sequence[int]) -> str:
            return f"(offsets {fmt_ints(o)} sizes {fmt_ints(s)} strides {fmt_ints(k)})"

        right = window(offsets, sizes, strides)
        if any(k < 0 for k in strides):
            positive = [abs(k) for k in strides]
            yield (f"the negative strides taken as positive: the window read forwards from its start "
                   f"{window(offsets, sizes, positive)} instead of {right}",
                   variant(offsets, sizes, positive))
        if any(offsets):
            zeros = [0] * len(offsets)
            yield (f"the window offsets ignored {window(zeros, sizes, strides)} instead of {right}",
                   variant(zeros, sizes, strides))
        for d in range(len(offsets)):
            for delta in (1, -1):
                if offsets[d] + delta >= 0 and offsets[d] + delta + sizes[d] <= op.input.sizes[d]:
                    moved = list(offsets)
                    moved[d] += delta
                    yield (f"InputWindowOffsets[{d}] off by {delta:+d} {window(moved, sizes, strides)} "
                           f"instead of {right}", variant(moved, sizes, strides))
                if sizes[d] + delta >= 1 and offsets[d] + sizes[d] + delta <= op.input.sizes[d]:
                    grown = list(sizes)
                    grown[d] += delta
                    yield (f"InputWindowSizes[{d}] off by {delta:+d} {window(offsets, grown, strides)} "
                           f"instead of {right}", variant(offsets, grown, strides))
        if any(k != 1 for k in strides):
            ones = [1] * len(strides)
            yield (f"the strides ignored (step 1) {window(offsets, sizes, ones)} instead of {right}",
                   variant(offsets, sizes, ones))
            signs = [1 if k > 0 else -1 for k in strides]
            if signs != ones:
                yield (f"the stride magnitudes ignored (step +-1) {window(offsets, sizes, signs)} "
                       f"instead of {right}", variant(offsets, sizes, signs))
        wrong_offsets, wrong_sizes = list(offsets), list(sizes)
        for d, (off, size, k, n) in enumerate(zip(offsets, sizes, strides, op.output.sizes, strict=True)):
            span = (n - 1) * abs(k) + 1
            wrong_sizes[d] = span
            wrong_offsets[d] = off if k < 0 else off + size - span
        if (wrong_offsets, wrong_sizes) != (list(offsets), list(sizes)):
            yield ("the window read from the wrong end (the elements picked from the other end of the "
                   f"window: {window(wrong_offsets, wrong_sizes, strides)} instead of {right})",
                   variant(wrong_offsets, wrong_sizes, strides))

    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        starts: tuple[int, ...] | None
        ends: tuple[int, ...] | None
        axes: tuple[int, ...] | None
        steps: tuple[int, ...] | None = None
        if opset < SLICE_INPUTS_OPSET:
            node_attrs = attrs(node, opset)
            starts = tuple(int(v) for v in node_attrs.get("starts", ()))
            ends = tuple(int(v) for v in node_attrs.get("ends", ()))
            axes = tuple(int(v) for v in node_attrs["axes"]) if "axes" in node_attrs else None
        else:
            starts = const_ints(graph, node, 1, "starts", flags, opset)
            ends = const_ints(graph, node, 2, "ends", flags, opset)
            axes = const_ints(graph, node, 3, "axes", flags, opset)
            steps = const_ints(graph, node, 4, "steps", flags, opset)
            given = [i for i in (3, 4) if len(node.input) > i and node.input[i]]
            if (3 in given and axes is None) or (4 in given and steps is None):  # runtime inputs
                starts = None
        params.update(starts=starts, ends=ends, axes=axes, steps=steps)
        if shape is None or dtype is None or starts is None or ends is None:
            return None, None, {}, False
        _check(shape, starts, ends, axes, steps, None)
        wanted = onnx_slices(shape, starts, ends, axes, steps)
        out_shape = tuple(len(range(n)[sl]) for n, sl in zip(shape, wanted, strict=True))
        cpu = _cpu_reading(shape, starts, ends, axes, steps)
        if cpu is not None:
            raise Flagged(
                f"cpu-divergence: ONNX's output is {list(out_shape)}, ONNX Runtime's CPU EP returns "
                f"{list(cpu[0])} (SliceOp::PrepareForCompute in slice_helper.h): {cpu[1]}. The DML EP: "
                f"{_ep_reason(shape, starts, ends, axes, steps)}. No case: ONNX and ONNX Runtime's CPU EP "
                "disagree, and the standard suite has no such case")
        check_size(shape, "input")
        try:
            ep_slice_window(shape, starts, ends, axes, steps)
        except NotExpressibleError as e:
            flags.append(f"ep-rejects: {e}")
            return out_shape, None, {}, False
        reason = _ep_reason(shape, starts, ends, axes, steps)
        if reason:
            if not math.prod(out_shape):
                raise Flagged(f"empty: {reason}")
            flags.append(f"ep-divergence: {reason}")
            return out_shape, None, {}, False
        op = Slice1Op.from_onnx(BufferTensorDesc(dtype, shape), starts, ends, axes=axes, steps=steps)
        return out_shape, op.to_dict(), {"input": op.input, "output": op.output}, False

    def case_from_node(self, dtype: DataType, shape: tuple[int, ...], params: dict[str, Any], *,
                       values: str, seed: int, origin: str, opset: int | None = None) -> Case | None:
        if params.get("starts") is None or params.get("ends") is None:
            return None
        starts, ends, axes, steps = params["starts"], params["ends"], params.get("axes"), params.get("steps")
        _check(shape, starts, ends, axes, steps, None)  # what the Case would check first
        if _cpu_reading(shape, starts, ends, axes, steps):
            return None  # ONNX Runtime's CPU EP and ONNX disagree (describe_node's cpu-divergence flag)
        return Case("Slice", dtype, shape, starts=starts, ends=ends, axes=axes, steps=steps, values=values,
                    seed=seed, origin=origin, opset=opset)


def _axis_patterns(n: int) -> list[tuple[int, int, int]]:
    """(start, end, step) on one axis of size ``n``."""
    return [
        (1, n - 1, 1),  # the interior
        (0, INT64_MAX, 2),  # to the end, step 2
        (1, n, 3),
        (-3, -1, 1),  # negative start and end
        (-100, 100, 1),  # out of range on both sides: the whole axis
        (-1, INT64_MIN, -1),  # reversed
        (n - 2, 0, -2),  # backwards, stopping before element 0
        (100, -100, -1),  # out of range backwards: the whole axis reversed
        (-1, -n - 5, -3),
        (2**40, -(2**40), -2),  # beyond int32 (the EP clamps them)
        (-(2**40), 2**40, 2),
        (INT32_MIN, INT32_MAX, 1),  # the int32 extremes
    ]


def _multi_axis_patterns(shape: tuple[int, ...]) -> list[_Params]:
    """(starts, ends, axes, steps) over several axes."""
    rank = len(shape)
    everything = tuple(range(rank))
    alternating = tuple(2 if a % 2 == 0 else -1 for a in reversed(everything))
    pats: list[_Params] = [
        (tuple(min(1, n - 1) for n in shape), (INT64_MAX,) * rank, None, None),  # axes omitted
        ((0,), (-1 if shape[0] > 1 else 1,), None, None),  # axes omitted, fewer starts than axes
        ((-1,) * rank, (INT64_MIN,) * rank, everything, (-1,) * rank),  # every axis reversed
        (tuple(0 if k > 0 else -1 for k in alternating),
         tuple(INT64_MAX if k > 0 else INT64_MIN for k in alternating),
         tuple(reversed(everything)), alternating),  # axes in reverse order
    ]
    if rank >= 2:
        pats.append(((-1, 0), (INT64_MIN, INT64_MAX), (-1, -rank), (-1, 2)))  # negative axes
        pats.append(((0, 1), (INT64_MAX, -1 if shape[-1] > 2 else INT64_MAX), (0, rank - 1), None))
    return pats


# opset, starts, ends, axes, steps on a 5x6 input
_OPSET_PATTERNS: tuple[tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...] | None,
                             tuple[int, ...] | None], ...] = (
    (1, (1, 0), (-1, 100), (0, 1), None),  # attributes
    (1, (2,), (INT64_MAX,), None, None),  # attributes, no axes
    (10, (0, -1), (INT64_MAX, INT64_MIN), (1, 0), (2, -1)),  # inputs and steps
    (10, (1, 1), (4, -1), None, None),  # inputs, no axes, no steps
    (11, (-1,), (-100,), (-1,), (-2,)),  # negative axes
    (13, (-100, 1), (100, -1), (-2, -1), (3, 2)),
)
