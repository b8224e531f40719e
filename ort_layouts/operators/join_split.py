"""DML_OPERATOR_JOIN and DML_OPERATOR_SPLIT: the DirectML operators behind ONNX Concat and Split.

How the DML EP builds them (ONNX Runtime 1.24, ``onnxruntime/core/providers/dml/
DmlExecutionProvider/src``):

- Every tensor gets a packed ``DML_BUFFER_TENSOR_DESC`` of its ONNX shape, right-aligned to at
  least 4 dimensions with leading 1s (``DmlOperator::Initialize`` with the default
  ``minDimensionCount`` 4, ``TensorDesc`` in ``TensorDesc.cpp``): ``[2, 3]`` becomes
  ``[1, 1, 2, 3]``; ranks 4 to 8 keep their rank; ``Strides`` is null and
  ``TotalTensorSizeInBytes`` is DMLCalcBufferTensorSize's: the element bytes rounded up to a
  multiple of 4.
- The axis moves with the padding: ``GetDmlAdjustedAxis`` (``OperatorUtility.cpp``) gives
  ``HandleNegativeAxis(axis, rank) + max(rank, 4) - rank``.
- ``DmlOperatorConcat`` (``Operators/DmlOperatorConcat.cpp``) binds only the inputs without a
  0-sized dimension (its ``kernelInputIndices``): DML_JOIN_OPERATOR_DESC gets ``InputCount``
  non-empty inputs, and with none left it creates no operator and writes nothing.
- ``DmlOperatorSplit`` (``Operators/DmlOperatorSplit.cpp``) binds input 0 and every output:
  DML_SPLIT_OPERATOR_DESC with ``OutputCount`` outputs. When any output has a 0-sized dimension,
  ``DmlOperator::SetDmlOperatorDesc`` creates no operator and
  ``ExecutionProviderImpl::ExecuteOperator`` returns before dispatching, so no output is written,
  the non-empty ones included.

DirectML's semantics (``DML_JOIN_OPERATOR_DESC``, ``DML_SPLIT_OPERATOR_DESC``): every tensor has
the same data type and DimensionCount and the same sizes except along ``Axis``; JOIN's output is
its inputs one after another along ``Axis`` (InputCount 1 is a copy); SPLIT is the inverse, output
``k`` being the input's slab ``[offset_k, offset_k + size_k)`` along ``Axis``. Both take 1 to 8
dimensions and 64-bit types from feature level 4.1.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ort_layouts._errors import NotExpressibleError, ShapeError, a_type
from ort_layouts.descriptors.buffer_tensor import (
    BufferTensorDesc,
    check_cpp_name,
    cpp_struct,
    full_index,
)
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import int_tuple, is_integer, is_ordered_sequence
from ort_layouts.operators.desc_fields import (
    check_count,
    check_integer,
    check_tensor,
    check_tensors,
    read_desc_dict,
    read_integer,
    read_ints,
    read_tensor,
    read_tensors,
)
from ort_layouts.operators.ep_tensor import (
    MIN_DIMENSION_COUNT,
    checked_min_dimension_count,
    padded,
    padded_desc,
)
from ort_layouts.reference.buffers import check_view_lists
from ort_layouts.reference.compare import views_equal
from ort_layouts.reference.copy import strided_copy

__all__ = [
    "JOIN",
    "MIN_DIMENSION_COUNT",
    "SPLIT",
    "JoinOp",
    "SplitOp",
    "along_axis",
    "dml_adjusted_axis",
    "other_axes",
    "padded_desc",
    "part_orders",
]

JOIN = "DML_OPERATOR_JOIN"
SPLIT = "DML_OPERATOR_SPLIT"


def _axis_in_range(axis: Any, rank: int, what: str) -> int:
    """``HandleNegativeAxis``: a negative axis counts from the back; ShapeError outside [-rank, rank)
    and for anything that is no integer (None, True, 1.0)."""
    if not is_integer(axis):
        raise ShapeError(f"{what} axis {axis!r} is not an integer; valid: {-rank}..{rank - 1}")
    index = int(axis)
    if not -rank <= index < rank:
        raise ShapeError(f"{what} axis {index} is out of range for rank {rank} (valid: {-rank}..{rank - 1})")
    return index % rank


def dml_adjusted_axis(onnx_axis: int, rank: int, dimension_count: int | None = None) -> int:
    """``GetDmlAdjustedAxis``: the ONNX axis (negative allowed) in the padded descriptors'
    dimensions, ``axis + dimension_count - rank`` (``dimension_count`` default ``max(rank, 4)``).

    >>> dml_adjusted_axis(1, 2), dml_adjusted_axis(-1, 6)
    (3, 5)
    """
    count = max(rank, MIN_DIMENSION_COUNT) if dimension_count is None else dimension_count
    if count < rank:
        raise ShapeError(f"DimensionCount {count} is below the ONNX rank {rank}")
    return _axis_in_range(int(onnx_axis), rank, "ONNX") + count - rank


def along_axis(whole: BufferTensorDesc, counts: Sequence[int],
               axis: int) -> tuple[BufferTensorDesc, ...] | None:
    """Packed descriptors of tensors of ``counts`` elements that share ``whole``'s sizes except
    along ``axis``: how buffers of those sizes read when joined into (or split from) ``whole``
    along ``axis``. None when a count is not a positive multiple of the other axes' product.

    >>> [d.sizes for d in along_axis(BufferTensorDesc("int8", (1, 1, 4, 6)), [12, 12], 2)]
    [(1, 1, 2, 6), (1, 1, 2, 6)]
    """
    rest = whole.element_count // whole.sizes[axis]
    descs = []
    for count in counts:
        if count <= 0 or count % rest:
            return None
        sizes = list(whole.sizes)
        sizes[axis] = count // rest
        descs.append(BufferTensorDesc(whole.data_type, tuple(sizes)))
    return tuple(descs)


def other_axes(kind: str, whole: BufferTensorDesc, counts: Sequence[int], axis: int,
               rank: int) -> tuple[str, list[tuple[int, tuple[BufferTensorDesc, ...], str]]]:
    """A JOIN or SPLIT (``kind``) of ``counts``-element tensors with ``whole`` along the wrong
    axis, for the diagnosis: the note for the tensors placed back to back when the ONNX axis of
    a rank-``rank`` tensor was not adjusted for the padding to ``whole``'s dimension count (""
    when it needs none), and for each other DML axis the tensors' packed descriptors along it
    (:func:`along_axis`) with words that name that axis."""
    dimension_count = whole.dimension_count
    pad = dimension_count - rank
    onnx_axis = axis - pad
    unadjusted = (f": {kind} along DML axis {onnx_axis}, a leading size-1 axis, the ONNX axis "
                  f"{onnx_axis} not adjusted for the padding to {dimension_count}-D (Axis "
                  f"{axis} expected)") if onnx_axis < pad else ""
    others = []
    for k in range(dimension_count):
        descs = along_axis(whole, counts, k) if k != axis else None
        if descs is None:
            continue
        note = (f", the ONNX axis {onnx_axis} not adjusted for the padding to "
                f"{dimension_count}-D") if k == onnx_axis and pad else ""
        where = f"ONNX axis {k - pad}" if k >= pad else "a leading size-1 axis"
        others.append((k, descs, f"a {kind} along DML axis {k} ({where}{note}) instead of {axis}"))
    return unadjusted, others


# parts whose every order a diagnosis tries (5! = 120); more get the orders of one slip alone
_ALL_ORDERS_MAX_PARTS = 5


def part_orders(count: int) -> list[tuple[int, ...]]:
    """The orders of ``count`` parts other than the right one that a diagnosis tries: reversed,
    two neighbours swapped, then every other permutation; above
    :data:`_ALL_ORDERS_MAX_PARTS` parts, in place of every permutation (10! is 3.6 million, each
    a candidate output), any two parts swapped and the parts rotated by one either way.

    >>> part_orders(3)
    [(2, 1, 0), (1, 0, 2), (0, 2, 1), (1, 2, 0), (2, 0, 1)]
    >>> len(part_orders(12))  # reversed, 11 neighbour swaps, 55 other pair swaps, 2 rotations
    69
    """
    right = tuple(range(count))
    orders = [right[::-1]]
    # two parts swapped, neighbours first
    pairs = sorted(itertools.combinations(range(count), 2), key=lambda p: (p[1] - p[0], p))
    for i, j in pairs if count > _ALL_ORDERS_MAX_PARTS else pairs[:count - 1]:
        swapped = list(right)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        orders.append(tuple(swapped))
    if count > _ALL_ORDERS_MAX_PARTS:
        orders += [right[1:] + right[:1], right[-1:] + right[:-1]]
    else:
        orders += list(itertools.permutations(right))
    return [o for o in dict.fromkeys(orders) if o != right]


def _starts(sizes: Sequence[int]) -> list[int]:
    return [0, *itertools.accumulate(sizes)][:-1]


def _slab(axis: int, start: int, size: int) -> tuple[slice, ...]:
    return (slice(None),) * axis + (slice(start, start + size),)


def _check_tensors(what: str, whole: BufferTensorDesc, parts: Sequence[BufferTensorDesc], axis: int,
                   part_name: str) -> None:
    """DirectML's JOIN / SPLIT validation: one data type and DimensionCount, equal sizes except
    along ``axis``, whose part sizes add up to the whole's."""
    if not parts:
        raise ShapeError(f"{what} needs at least one {part_name} tensor")
    n = whole.dimension_count
    if not 0 <= axis < n:
        raise ShapeError(f"{what} Axis {axis} is out of range for DimensionCount {n} (valid: 0..{n - 1})")
    for k, part in enumerate(parts):
        if part.data_type != whole.data_type:
            raise ShapeError(f"{what} {part_name} {k} data type {part.data_type.name} differs from "
                             f"{whole.data_type.name}; every tensor needs the same type")
        if part.dimension_count != n:
            raise ShapeError(f"{what} {part_name} {k} has DimensionCount {part.dimension_count}, the "
                             f"others {n}; every tensor needs the same")
        other = [i for i in range(n) if i != axis and part.sizes[i] != whole.sizes[i]]
        if other:
            raise ShapeError(f"{what} {part_name} {k} sizes {list(part.sizes)} differ from "
                             f"{list(whole.sizes)} at axis {other[0]}, not only at Axis {axis}")
    total = sum(p.sizes[axis] for p in parts)
    if total != whole.sizes[axis]:
        raise ShapeError(f"{what} {part_name} sizes along Axis {axis} add up to {total}, not "
                         f"{whole.sizes[axis]} ({[p.sizes[axis] for p in parts]})")


def _check_output(output: Any, count: int, operator: str) -> int:
    """``output`` as an int when it numbers one of ``count`` outputs of ``operator``.

    Raises:
        ShapeError: ``output`` is no integer (a bool or float neither) or is out of 0..count - 1
            (a negative one too: it does not count from the end).
    """
    if not is_integer(output) or not 0 <= output < count:
        raise ShapeError(f"output {output!r:.80} is not an output of the {operator}; valid: "
                         + ("0, its one output" if count == 1 else f"an integer 0..{count - 1}"))
    return int(output)


@dataclasses.dataclass(frozen=True, slots=True)
class JoinOp:
    """DML_JOIN_OPERATOR_DESC: ``InputCount`` inputs joined along ``Axis`` into one output.

    Attributes:
        inputs: the input descriptors (InputTensors), in order.
        output: the output descriptor (OutputTensor).
        axis: Axis, in the descriptors' dimensions.
        onnx_inputs: which ONNX input each DirectML input is (the EP's ``kernelInputIndices``;
            the empty ONNX inputs are not bound); None means input k is ONNX input k.
    """

    inputs: tuple[BufferTensorDesc, ...]
    output: BufferTensorDesc
    axis: int
    onnx_inputs: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "inputs", check_tensors(self.inputs, "JoinOp inputs"))
        check_tensor(self.output, "JoinOp output")
        object.__setattr__(self, "axis", check_integer(self.axis, "JoinOp axis"))
        _check_tensors("JOIN", self.output, self.inputs, self.axis, "input")
        if self.onnx_inputs is not None:
            indices = int_tuple(self.onnx_inputs, "JoinOp onnx_inputs")
            if len(indices) != len(self.inputs) or list(indices) != sorted(set(indices)) or indices[0] < 0:
                raise ShapeError(f"onnx_inputs {list(indices)} must name {len(self.inputs)} distinct "
                                 "ONNX inputs in increasing order")
            object.__setattr__(self, "onnx_inputs", indices)

    @classmethod
    def from_onnx(cls, data_type: DataType | str, input_shapes: Sequence[Sequence[int]], axis: int, *,
                  min_dimension_count: int = MIN_DIMENSION_COUNT) -> JoinOp:
        """What the DML EP builds for ONNX ``Concat(inputs, axis=axis)``.

        Empty inputs are left out (``onnx_inputs`` names the bound ones); the output shape is
        input 0's with the axis summed (``ConcatHelperBase::GetOutputShapes``).

        >>> op = JoinOp.from_onnx("float32", [(2, 3), (2, 5)], 1)
        >>> [d.sizes for d in op.inputs], op.output.sizes, op.axis
        ([(1, 1, 2, 3), (1, 1, 2, 5)], (1, 1, 2, 8), 3)

        Raises:
            NotExpressibleError: every input is empty (the EP creates no operator; the output
                is empty too).
            ShapeError: no inputs, ranks that differ, an axis out of range, or sizes that
                differ off the axis.
        """
        if not is_ordered_sequence(input_shapes):
            raise ShapeError(f"Concat input shapes {input_shapes!r:.80} is {a_type(input_shapes)}; valid: a "
                             "list of shapes, one per input")
        shapes = [int_tuple(s, f"Concat input {k} shape") for k, s in enumerate(input_shapes)]
        count = checked_min_dimension_count(min_dimension_count)
        if not shapes:
            raise ShapeError("Concat needs at least one input")
        rank = len(shapes[0])
        if rank == 0:
            raise ShapeError("Concat of rank-0 tensors is not defined (ONNX needs rank >= 1)")
        for k, s in enumerate(shapes):
            if len(s) != rank:
                raise ShapeError(f"Concat input {k} has rank {len(s)}, input 0 has {rank}; all must agree")
        a = _axis_in_range(axis, rank, "Concat")
        out_shape = list(shapes[0])
        out_shape[a] = sum(s[a] for s in shapes)
        kept = [k for k, s in enumerate(shapes) if 0 not in s]
        if not kept:
            raise NotExpressibleError(
                f"every input of the Concat {[list(s) for s in shapes]} is empty: the DML EP binds no "
                "input, creates no JOIN and writes nothing (the output is empty too)")
        dtype = DataType.coerce(data_type)
        inputs = tuple(padded(dtype, shapes[k], count) for k in kept)
        output = padded(dtype, tuple(out_shape), count)
        return cls(inputs, output, a + max(rank, count) - rank, tuple(kept))

    @property
    def outputs(self) -> tuple[BufferTensorDesc, ...]:
        return (self.output,)

    @property
    def input_count(self) -> int:
        """InputCount."""
        return len(self.inputs)

    @property
    def dimension_count(self) -> int:
        return self.output.dimension_count

    @property
    def offsets_along_axis(self) -> tuple[int, ...]:
        """Where each input starts along Axis in the output, in elements of that axis."""
        return tuple(_starts([d.sizes[self.axis] for d in self.inputs]))

    @property
    def kernel_input_indices(self) -> tuple[int, ...]:
        """The ONNX input of each DirectML input."""
        return tuple(range(len(self.inputs))) if self.onnx_inputs is None else self.onnx_inputs

    def run_all(self, dsts: Sequence[np.ndarray], srcs: Sequence[np.ndarray], *,
                threads: int | None = None) -> None:
        """Copy each input view into its slab of the output view."""
        check_view_lists(dsts, srcs, self.outputs, self.inputs, threads, writeable=True)
        (dst,) = dsts
        for src, start, desc in zip(srcs, self.offsets_along_axis, self.inputs, strict=True):
            strided_copy(dst[_slab(self.axis, start, desc.sizes[self.axis])], src, threads=threads)

    def matches_all(self, srcs: Sequence[np.ndarray], gots: Sequence[np.ndarray], *,
                    threads: int | None = None) -> bool:
        """Whether each slab of the output equals its input, bit for bit."""
        check_view_lists(gots, srcs, self.outputs, self.inputs, threads, writeable=False,
                         names=("gots", "srcs"))
        (got,) = gots
        return all(views_equal(src, got[_slab(self.axis, start, desc.sizes[self.axis])], threads=threads)
                   for src, start, desc in zip(srcs, self.offsets_along_axis, self.inputs, strict=True))

    def source_of(self, index: Sequence[int]) -> tuple[int, tuple[int, ...]]:
        """(DirectML input, its index) that output ``index`` (ONNX rank or the descriptors')
        comes from.

        Raises:
            ShapeError: ``index`` is not an index of the output (:func:`full_index`).
        """
        return self._source_of(full_index(index, self.output.sizes, leading=True))

    def _source_of(self, full: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
        """:meth:`source_of` of an index of the descriptors' rank, within the output."""
        position = full[self.axis]
        for k, (start, desc) in enumerate(zip(self.offsets_along_axis, self.inputs, strict=True)):
            if start <= position < start + desc.sizes[self.axis]:
                local = list(full)
                local[self.axis] = position - start
                return k, tuple(local)
        raise ShapeError(f"index {list(full)} is outside the JOIN output {list(self.output.sizes)}")

    def buffer_offsets_in_elements(self, index: Sequence[int], output: int = 0) -> tuple[int | None, int]:
        """(offset read in the buffer of the input that output ``index`` comes from, output
        offset), in elements. ``output`` is 0, JOIN's one output (as SplitOp's names one of its).

        Raises:
            ShapeError: ``index`` is not an index of the output, or ``output`` is not 0.
        """
        if type(output) is not int or output:
            _check_output(output, 1, "JOIN")
        full = full_index(index, self.output.sizes, leading=True)
        k, local = self._source_of(full)
        return self.inputs[k].offset_of(local), self.output.offset_of(full)

    def to_dict(self) -> dict[str, Any]:
        """The DML desc as a plain dict (JSON-ready); :meth:`from_dict` reads it back."""
        return {
            "operator": JOIN,
            "InputCount": self.input_count,
            "InputTensors": [d.to_dict() for d in self.inputs],
            "OutputTensor": self.output.to_dict(),
            "Axis": self.axis,
            "onnx_inputs": list(self.kernel_input_indices),
        }

    def to_cpp(self, name: str = "join") -> str:
        """C++ initializers of the descriptors and of DML_JOIN_OPERATOR_DESC (InputTensors an
        array of DML_TENSOR_DESC)."""
        check_cpp_name(name)
        n = self.input_count
        lines = [d.to_cpp(f"{name}Input{k}") for k, d in enumerate(self.inputs)]
        lines.append(self.output.to_cpp(f"{name}Output"))
        if self.kernel_input_indices != tuple(range(n)):
            lines.append(f"// InputTensors are ONNX inputs {', '.join(map(str, self.kernel_input_indices))} "
                         "(the empty ones are not bound)")
        tensors = ", ".join(f"{name}Input{k}Tensor" for k in range(n))
        lines.append(f"DML_TENSOR_DESC {name}InputTensors[{n}] = {{{tensors}}};")
        fields = [(str(n), "InputCount"), (f"{name}InputTensors", "InputTensors"),
                  (f"&{name}OutputTensor", "OutputTensor"), (str(self.axis), "Axis")]
        lines += cpp_struct("DML_JOIN_OPERATOR_DESC", name, fields)
        lines.append(f"DML_OPERATOR_DESC {name}Op = {{{JOIN}, &{name}}};")
        return "\n".join(lines)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JoinOp:
        """Inverse of :meth:`to_dict` (``InputCount``, where given, must count InputTensors).

        Raises:
            DescriptorError: ``data`` is no JOIN dict, or a field is missing or not what it
                holds.
            ShapeError: the operator is not valid (as the constructor checks it).
        """
        fields = read_desc_dict(data, JOIN, required=("InputTensors", "OutputTensor", "Axis"),
                                optional=("InputCount", "onnx_inputs"))
        inputs = read_tensors(fields, "InputTensors", JOIN)
        check_count(fields, "InputCount", JOIN, "InputTensors", len(inputs))
        onnx_inputs = None if fields.get("onnx_inputs") is None else read_ints(fields, "onnx_inputs", JOIN)
        return cls(inputs, read_tensor(fields, "OutputTensor", JOIN), read_integer(fields, "Axis", JOIN),
                   onnx_inputs)


@dataclasses.dataclass(frozen=True, slots=True)
class SplitOp:
    """DML_SPLIT_OPERATOR_DESC: one input split along ``Axis`` into ``OutputCount`` outputs.

    Attributes:
        input: the input descriptor (InputTensor).
        outputs: the output descriptors (OutputTensors), in order.
        axis: Axis, in the descriptors' dimensions.
    """

    input: BufferTensorDesc
    outputs: tuple[BufferTensorDesc, ...]
    axis: int

    def __post_init__(self) -> None:
        check_tensor(self.input, "SplitOp input")
        object.__setattr__(self, "outputs", check_tensors(self.outputs, "SplitOp outputs"))
        object.__setattr__(self, "axis", check_integer(self.axis, "SplitOp axis"))
        _check_tensors("SPLIT", self.input, self.outputs, self.axis, "output")

    @classmethod
    def from_onnx(cls, data_type: DataType | str, input_shape: Sequence[int], parts: Sequence[int],
                  axis: int, *, min_dimension_count: int = MIN_DIMENSION_COUNT) -> SplitOp:
        """What the DML EP builds for an ONNX Split of ``input_shape`` into outputs of ``parts``
        along ``axis`` (the sizes ``SplitHelper`` worked out).

        >>> op = SplitOp.from_onnx("float32", (6, 4, 5), [2, 4], 0)
        >>> op.input.sizes, [d.sizes for d in op.outputs], op.axis
        ((1, 6, 4, 5), [(1, 2, 4, 5), (1, 4, 4, 5)], 1)

        Raises:
            NotExpressibleError: an output (or the input) is empty: the EP creates no operator
                and writes no output at all.
            ShapeError: the parts do not add up to the dimension, or the axis is out of range.
        """
        shape = int_tuple(input_shape, "Split input shape")
        sizes = list(int_tuple(parts, "Split parts"))
        count = checked_min_dimension_count(min_dimension_count)
        rank = len(shape)
        if rank == 0:
            raise ShapeError("Split of a rank-0 tensor is not defined (ONNX needs rank >= 1)")
        a = _axis_in_range(axis, rank, "Split")
        if not sizes or any(p < 0 for p in sizes) or sum(sizes) != shape[a]:
            raise ShapeError(f"Split parts {sizes} must be >= 0 and add up to dimension {a} of "
                             f"{list(shape)} ({shape[a]})")
        if 0 in shape or 0 in sizes:
            raise NotExpressibleError(
                f"Split of {list(shape)} into parts {sizes} along axis {a} has an empty tensor: the DML "
                "EP creates no SPLIT (DmlOperator::SetDmlOperatorDesc) and returns before dispatching "
                "(ExecutionProviderImpl::ExecuteOperator), so no output is written, the non-empty ones "
                "included")
        dtype = DataType.coerce(data_type)
        outputs = tuple(padded(dtype, (*shape[:a], p, *shape[a + 1:]), count) for p in sizes)
        return cls(padded(dtype, shape, count), outputs, a + max(rank, count) - rank)

    @property
    def inputs(self) -> tuple[BufferTensorDesc, ...]:
        return (self.input,)

    @property
    def output_count(self) -> int:
        """OutputCount."""
        return len(self.outputs)

    @property
    def dimension_count(self) -> int:
        return self.input.dimension_count

    @property
    def offsets_along_axis(self) -> tuple[int, ...]:
        """Where each output starts along Axis in the input, in elements of that axis."""
        return tuple(_starts([d.sizes[self.axis] for d in self.outputs]))

    def run_all(self, dsts: Sequence[np.ndarray], srcs: Sequence[np.ndarray], *,
                threads: int | None = None) -> None:
        """Copy each slab of the input view into its output view."""
        check_view_lists(dsts, srcs, self.outputs, self.inputs, threads, writeable=True)
        (src,) = srcs
        for dst, start, desc in zip(dsts, self.offsets_along_axis, self.outputs, strict=True):
            strided_copy(dst, src[_slab(self.axis, start, desc.sizes[self.axis])], threads=threads)

    def matches_all(self, srcs: Sequence[np.ndarray], gots: Sequence[np.ndarray], *,
                    threads: int | None = None) -> bool:
        """Whether each output equals its slab of the input, bit for bit."""
        check_view_lists(gots, srcs, self.outputs, self.inputs, threads, writeable=False,
                         names=("gots", "srcs"))
        (src,) = srcs
        return all(views_equal(src[_slab(self.axis, start, desc.sizes[self.axis])], got, threads=threads)
                   for got, start, desc in zip(gots, self.offsets_along_axis, self.outputs, strict=True))

    def buffer_offsets_in_elements(self, index: Sequence[int], output: int = 0) -> tuple[int | None, int]:
        """(input offset read for ``index`` of output ``output``, offset in that output's buffer),
        in elements; ``index`` has the ONNX rank or the descriptors'.

        Raises:
            ShapeError: ``output`` is no integer 0..OutputCount - 1, or ``index`` is not an index
                of that output.
        """
        if type(output) is not int or not 0 <= output < len(self.outputs):
            output = _check_output(output, len(self.outputs), "SPLIT")
        desc = self.outputs[output]
        full = full_index(index, desc.sizes, leading=True)
        source = list(full)
        source[self.axis] += self.offsets_along_axis[output]
        return self.input.offset_of(source), desc.offset_of(full)

    def to_dict(self) -> dict[str, Any]:
        """The DML desc as a plain dict (JSON-ready); :meth:`from_dict` reads it back."""
        return {
            "operator": SPLIT,
            "InputTensor": self.input.to_dict(),
            "OutputCount": self.output_count,
            "OutputTensors": [d.to_dict() for d in self.outputs],
            "Axis": self.axis,
        }

    def to_cpp(self, name: str = "split") -> str:
        """C++ initializers of the descriptors and of DML_SPLIT_OPERATOR_DESC (OutputTensors an
        array of DML_TENSOR_DESC)."""
        check_cpp_name(name)
        n = self.output_count
        lines = [self.input.to_cpp(f"{name}Input")]
        lines += [d.to_cpp(f"{name}Output{k}") for k, d in enumerate(self.outputs)]
        tensors = ", ".join(f"{name}Output{k}Tensor" for k in range(n))
        lines.append(f"DML_TENSOR_DESC {name}OutputTensors[{n}] = {{{tensors}}};")
        fields = [(f"&{name}InputTensor", "InputTensor"), (str(n), "OutputCount"),
                  (f"{name}OutputTensors", "OutputTensors"), (str(self.axis), "Axis")]
        lines += cpp_struct("DML_SPLIT_OPERATOR_DESC", name, fields)
        lines.append(f"DML_OPERATOR_DESC {name}Op = {{{SPLIT}, &{name}}};")
        return "\n".join(lines)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SplitOp:
        """Inverse of :meth:`to_dict` (``OutputCount``, where given, must count OutputTensors).

        Raises:
            DescriptorError: ``data`` is no SPLIT dict, or a field is missing or not what it
                holds.
            ShapeError: the operator is not valid (as the constructor checks it).
        """
        fields = read_desc_dict(data, SPLIT, required=("InputTensor", "OutputTensors", "Axis"),
                                optional=("OutputCount",))
        outputs = read_tensors(fields, "OutputTensors", SPLIT)
        check_count(fields, "OutputCount", SPLIT, "OutputTensors", len(outputs))
        return cls(read_tensor(fields, "InputTensor", SPLIT), outputs, read_integer(fields, "Axis", SPLIT))
