"""ONNX Split: DML_OPERATOR_SPLIT over packed descriptors right-aligned to 4 dimensions.

As ONNX Runtime's DML EP builds it (``DmlOperatorSplit`` in
``onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/DmlOperatorSplit.cpp``, with
``SplitHelper::Initialize`` / ``GetOutputShapes`` in
``onnxruntime/core/providers/dml/OperatorAuthorHelper/OperatorHelper.cpp``): the sizes come
from the ``split`` attribute before opset 13 and from the ``split`` input (read on the CPU)
from 13; from 18 a ``num_outputs`` attribute instead gives chunks of ``ceil(dim / n)`` with a
smaller last one (``DivideRoundUp``); with neither, the dimension is split evenly over the
outputs (and must divide). The axis (default 0) goes through ``HandleNegativeAxis``. Input 0
and every output get packed descriptors right-aligned to at least 4 dimensions,
``Axis = GetDmlAdjustedAxis(axis) = axis + max(rank, 4) - rank``, and
``DML_SPLIT_OPERATOR_DESC {InputTensor, OutputCount, OutputTensors, Axis}`` splits
(``ns-directml-dml_split_operator_desc``). The EP registers Split-2, -11, -13 and -18.

A Split with a 0-sized output makes no operator (``DmlOperator::SetDmlOperatorDesc``) and no
dispatch (``ExecutionProviderImpl::ExecuteOperator`` returns when any bound tensor is empty), so
none of its outputs is written, the non-empty ones included: such cases are not expressible
for the DML EP (other EPs are compared with ``np.split``), and the standard suite has none.

A case's ``shape`` is the input; ``parts`` the outputs' sizes along ``axis`` (the ``split``
values), or ``num_outputs`` alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import onnx

from ort_layouts._errors import NotExpressibleError, ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.base import (
    Candidate,
    CandidateResult,
    Described,
    DiagnosisContext,
    Operator,
    fmt_ints,
    input_name,
    output_name,
)
from ort_layouts.operators.case import Case
from ort_layouts.operators.concat import axis_parts_cases, cut_along, negative_axis_problem, with_size_along
from ort_layouts.operators.join_split import SplitOp, other_axes, padded_desc, part_orders
from ort_layouts.operators.onnx_nodes import Graph, attrs, check_size, const_ints, int64_initializer
from ort_layouts.operators.shapes import SUITE_SHAPES, rotating

__all__ = ["MAX_SPLIT_OUTPUTS", "Split", "check_num_outputs", "split_sizes"]

SPLIT_NEGATIVE_AXIS_OPSET = 11  # Split-11: the axis may be negative
SPLIT_INPUT_OPSET = 13  # Split-13: split is an input
SPLIT_NUM_OUTPUTS_OPSET = 18  # Split-18: the num_outputs attribute
#: the most outputs a ``num_outputs`` Split is worked out for: a dimension of up to 2^16 - 1
#: may be cut into chunks of 1 (and one empty output); more would be a graph with that many outputs
MAX_SPLIT_OUTPUTS = 2**16
# (dimension, num_outputs): even, and uneven chunks (ceil, the last smaller)
_CHUNKS: tuple[tuple[int, int], ...] = ((6, 3), (5, 2), (7, 3), (10, 4), (5, 3))


def split_sizes(dim: int, output_count: int, split: Sequence[int] | None = None,
                num_outputs: int | None = None) -> tuple[int, ...]:
    """The outputs' sizes along the axis as ``SplitHelper`` works them out.

    ``split`` given: taken as is (as many as outputs, adding up to ``dim``); else ``num_outputs``
    (opset 18): ``ceil(dim / n)`` each and the rest last; else ``dim`` split evenly.

    >>> split_sizes(7, 3, num_outputs=3), split_sizes(6, 3)
    ((3, 3, 1), (2, 2, 2))

    Raises:
        ShapeError: the sizes do not add up, a size is negative, ``num_outputs`` does not cut
            ``dim`` (:func:`check_num_outputs`), or an even split does not divide.
    """
    if split is not None and num_outputs:
        raise ShapeError(f"Split has both split {list(split)} and num_outputs {num_outputs}; ONNX allows one")
    if split is not None:
        sizes = tuple(int(s) for s in split)
        if len(sizes) != output_count or any(s < 0 for s in sizes) or sum(sizes) != dim:
            raise ShapeError(f"Split sizes {list(sizes)} must be {output_count} sizes >= 0 adding up to "
                             f"{dim}")
        return sizes
    if num_outputs:
        chunk = check_num_outputs(dim, num_outputs)
        return (chunk,) * (num_outputs - 1) + (dim - (num_outputs - 1) * chunk,)
    if output_count < 1 or dim % output_count:
        raise ShapeError(f"Split of dimension {dim} evenly over {output_count} outputs does not divide")
    return (dim // output_count,) * output_count


def check_num_outputs(dim: int, num_outputs: int) -> int:
    """The chunk size of a Split-18 of ``dim`` into ``num_outputs``: ``ceil(dim / n)``, checked,
    without making any list of sizes, as ONNX Runtime's Split does: at least one output, and
    ``n - 1`` chunks that leave the last output a size >= 0 ("Split sizes would produce a
    negative final split"), so at most ``dim + 1`` outputs; and at most
    :data:`MAX_SPLIT_OUTPUTS` outputs.

    >>> check_num_outputs(7, 3), check_num_outputs(4, 5)
    (3, 1)

    Raises:
        ShapeError: ``num_outputs`` below 1, over :data:`MAX_SPLIT_OUTPUTS`, or leaving the last
            output a negative size.
    """
    if num_outputs < 1:
        raise ShapeError(f"Split num_outputs {num_outputs} must be at least 1")
    chunk = -(-dim // num_outputs)
    last = dim - (num_outputs - 1) * chunk
    if last < 0:
        raise ShapeError(f"Split num_outputs {num_outputs} cannot cut dimension {dim}: chunks of {chunk} "
                         f"leave {last} for the last output; valid: a num_outputs n >= 1 whose n - 1 chunks "
                         f"of ceil({dim} / n) add up to at most {dim} (so n <= {dim + 1})")
    if num_outputs > MAX_SPLIT_OUTPUTS:
        raise ShapeError(f"Split num_outputs {num_outputs} is over the {MAX_SPLIT_OUTPUTS} outputs a Split "
                         f"is worked out for; valid: 1..{MAX_SPLIT_OUTPUTS}")
    return chunk


def _axis(case: Case) -> int:
    return (case.axis or 0) % case.rank


def _parts(case: Case) -> tuple[int, ...]:
    a = _axis(case)
    if case.parts is not None:
        return case.parts
    return split_sizes(case.shape[a], case.num_outputs or 0, num_outputs=case.num_outputs)


class Split(Operator):
    op_types = ("Split",)
    case_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {"Split": ("axis", "parts", "num_outputs")}
    edge_specs = ({"shape": (0, 2), "axis": 1, "parts": (1, 1)},)
    min_opset = 2
    stride_view = False

    def check_case(self, case: Case) -> None:
        rank = case.rank
        if rank == 0:
            raise ShapeError("a rank-0 Split is not defined (ONNX needs rank >= 1)")
        if case.axis is not None and not -rank <= case.axis < rank:
            raise ShapeError(f"Split axis {case.axis} is out of range for rank {rank} "
                             f"(valid: {-rank}..{rank - 1})")
        if (case.parts is None) == (case.num_outputs is None):
            raise ShapeError("a Split case needs parts (the split sizes) or num_outputs, one of the two")
        dim = case.shape[_axis(case)]
        if case.parts is not None:
            if not case.parts:
                raise ShapeError(f"Split parts is empty; a Split has at least one output; valid: one or "
                                 f"more sizes >= 0 adding up to dimension {_axis(case)} of "
                                 f"{list(case.shape)} ({dim})")
            split_sizes(dim, len(case.parts), case.parts)
            return
        check_num_outputs(dim, case.num_outputs or 0)  # before any list of n sizes is made

    def opset_problem(self, case: Case, opset: int) -> str:
        """A negative axis before Split-11; uneven chunks without parts before Split-18, which
        brought the num_outputs attribute (an even split is the outputs' count before it)."""
        problem = negative_axis_problem(case, opset, SPLIT_NEGATIVE_AXIS_OPSET)
        dim = case.shape[_axis(case)]
        # without parts, num_outputs is the outputs' count (check_case took only a count that cuts dim)
        count = case.num_outputs or 1
        if not problem and case.parts is None and opset < SPLIT_NUM_OUTPUTS_OPSET and dim % count:
            problem = (f"Split of {dim}: uneven chunks {list(_parts(case))} need num_outputs (opset >= "
                       f"{SPLIT_NUM_OUTPUTS_OPSET}), got opset {opset}; valid: parts, a count that divides "
                       f"{dim}, or opset >= {SPLIT_NUM_OUTPUTS_OPSET}")
        return problem

    def id_parts(self, case: Case) -> list[str]:
        parts = [] if case.axis is None else [f"axis{case.axis}".replace("-", "m")]
        if case.parts is not None:
            return [*parts, "parts" + ".".join(map(str, case.parts))]
        return [*parts, f"n{case.num_outputs}"]

    # ---- shapes and values ------------------------------------------------------------------
    def output_shapes(self, case: Case) -> list[tuple[int, ...]]:
        return [with_size_along(case.shape, _axis(case), p) for p in _parts(case)]

    def output_shape(self, case: Case) -> tuple[int, ...]:
        shapes = self.output_shapes(case)
        if len(shapes) != 1:
            raise ShapeError(f"Split case {case.id} has {len(shapes)} outputs; see output_shapes")
        return shapes[0]

    def reference_outputs(self, case: Case, input_array: np.ndarray) -> list[np.ndarray]:
        """``np.split`` at the running sums of the parts."""
        return cut_along(np.asarray(input_array).reshape(case.shape), _axis(case), _parts(case))

    def reference_output(self, case: Case, input_array: np.ndarray) -> np.ndarray:
        (single,) = self.reference_outputs(case, input_array)
        return single

    # ---- DirectML ----------------------------------------------------------------------------
    def inexpressible_reason(self, case: Case) -> str:
        limits = self.limits_reason(case)
        if limits:
            return limits
        parts = _parts(case)
        if 0 in parts or 0 in case.shape:
            return (f"Split of {list(case.shape)} into {list(parts)} along axis {_axis(case)} has an empty "
                    "output: the DML EP creates no SPLIT and dispatches nothing, so none of the outputs is "
                    "written, the non-empty ones included")
        return ""

    def dml_operator(self, case: Case) -> SplitOp:
        return SplitOp.from_onnx(case.data_type, case.shape, _parts(case), _axis(case))

    # ---- graphs ------------------------------------------------------------------------------
    def add_node(self, graph: onnx.GraphProto, index: int, case: Case, opset: int) -> None:
        """``Split(x{i}) -> y{i}, y{i}_1, ...``: ``split`` as an attribute before opset 13, as the
        input ``split{i}`` from 13; without parts, ``num_outputs`` from 18, an even split before."""
        parts = _parts(case)
        node = graph.node.add()
        node.op_type = "Split"
        node.input.append(input_name(index))
        if case.parts is not None and opset >= SPLIT_INPUT_OPSET:
            int64_initializer(graph, f"split{index}", case.parts)
            node.input.append(f"split{index}")
        node.output.extend(output_name(index, k) for k in range(len(parts)))
        node.name = f"n{index}_{case.op}"
        node.doc_string = case.id
        if case.axis is not None:
            attr = node.attribute.add()
            attr.name = "axis"
            attr.i = case.axis
            attr.type = onnx.AttributeProto.INT
        if case.parts is None and opset >= SPLIT_NUM_OUTPUTS_OPSET:
            attr = node.attribute.add()
            attr.name = "num_outputs"
            attr.i = len(parts)
            attr.type = onnx.AttributeProto.INT
        elif case.parts is not None and opset < SPLIT_INPUT_OPSET:
            attr = node.attribute.add()
            attr.name = "split"
            attr.ints.extend(case.parts)
            attr.type = onnx.AttributeProto.INTS

    def suite_cases(self, dtypes: Sequence[DataType], ranks: set[int], seed: int) -> list[Case]:
        """Every axis of ranks 1 to 8 (and -1 and -rank) into one to four outputs, even and
        uneven; the default axis; num_outputs with even and uneven chunks; every data type up to
        rank 2, float32 and one more type beyond; special values and iota for ranks 2 to 4;
        opsets 2, 11, 13 and 18 (split as attribute, input, and num_outputs). No empty outputs
        (the DML EP writes nothing at all for them)."""
        out: list[Case] = []
        for rank in sorted(ranks & set(range(1, 9))):
            base = SUITE_SHAPES[rank]
            out += axis_parts_cases("Split", dtypes, rank)
            out.append(Case("Split", rotating(dtypes, rank), with_size_along(base, 0, 5), parts=(2, 3)))
            for j, (dim, n) in enumerate(_CHUNKS):
                axis = (rank - 1, 0, -1)[j % 3] if rank > 1 else 0
                out.append(Case("Split", rotating(dtypes, rank + j), with_size_along(base, axis, dim),
                                axis=axis, num_outputs=n))
            if 2 <= rank <= 4:
                for dt in dtypes:
                    out.append(Case("Split", dt, with_size_along(base, -1, 5), axis=-1, parts=(1, 2, 2),
                                    values="special"))
                    out.append(Case("Split", dt, with_size_along(base, 0, 5), axis=0, parts=(2, 3),
                                    values="iota"))
        if ranks & {2}:
            for opset in (2, 11, 13, 18):
                for dt in dtypes:
                    out.append(Case("Split", dt, (5, 4), axis=0, parts=(2, 3), opset=opset))
                    out.append(Case("Split", dt, (3, 6), axis=1, num_outputs=3, opset=opset))
                    if opset >= SPLIT_NEGATIVE_AXIS_OPSET:
                        out.append(Case("Split", dt, (3, 7), axis=-1, parts=(4, 3), opset=opset))
                    if opset >= SPLIT_NUM_OUTPUTS_OPSET:
                        out.append(Case("Split", dt, (3, 7), axis=1, num_outputs=3, opset=opset))
                        out.append(Case("Split", dt, (5, 4), num_outputs=2, opset=opset))
        return out

    # ---- diagnosis ---------------------------------------------------------------------------
    def diagnosis_candidates(self, ctx: DiagnosisContext) -> Iterator[Candidate]:
        """The input buffer cut into consecutive pieces (a SPLIT along an outer size-1 axis: the
        ONNX axis not adjusted for the padding to 4-D); a SPLIT along another axis; the outputs
        cut in another order; each output read one part too far or too early."""
        op = ctx.op
        assert isinstance(op, SplitOp)
        counts = [d.element_count for d in op.outputs]
        parts = [d.sizes[op.axis] for d in op.outputs]
        starts = list(op.offsets_along_axis)

        def run(alt: SplitOp) -> Callable[[], CandidateResult]:
            return lambda: ctx.run(alt)

        if op.output_count > 1:
            flat = SplitOp(padded_desc(ctx.dtype, (sum(counts),)),
                           tuple(padded_desc(ctx.dtype, (c,)) for c in counts), 3)
            unadjusted, others = other_axes("SPLIT", op.input, counts, op.axis, ctx.case.rank)
            yield (f"the input buffer cut into consecutive pieces of {fmt_ints(counts)} elements (split "
                   f"along an outer axis{unadjusted})", run(flat))
            for k, descs, what in others:
                yield (f"{what}: the outputs written as sizes {[list(d.sizes) for d in descs]}",
                       run(SplitOp(op.input, descs, k)))
        for order in part_orders(op.output_count):
            offsets = [0] * op.output_count
            position = 0
            for j in order:
                offsets[j] = position
                position += parts[j]
            yield (f"the outputs cut in the order {fmt_ints(order)} instead of "
                   f"{fmt_ints(range(op.output_count))} (offsets {fmt_ints(offsets)} along DML axis "
                   f"{op.axis} instead of {fmt_ints(starts)})", self._reordered(ctx, op, order))
        if op.output_count > 1:
            late = [*starts[1:], sum(parts)]
            early = [0, *starts[:-1]]
            for offsets, how in ((late, "one part too far (output k from the offset of output k+1)"),
                                 (early, "one part too early (output k from the offset of output k-1)")):
                yield (f"each output read {how}: offsets {fmt_ints(offsets)} along DML axis {op.axis} "
                       f"instead of {fmt_ints(starts)}", self._shifted(ctx, op, offsets))

    @staticmethod
    def _reordered(ctx: DiagnosisContext, op: SplitOp,
                   order: tuple[int, ...]) -> Callable[[], CandidateResult]:
        """The outputs of a SPLIT that cuts the parts in ``order``, put back in output order."""
        def run() -> CandidateResult:
            alt = SplitOp(op.input, tuple(op.outputs[j] for j in order), op.axis)
            bits = ctx.run(alt)  # the outputs' bits in ``order``
            edges = list(itertools.accumulate(op.outputs[j].element_count for j in order))
            pieces = dict(zip(order, np.split(bits, edges[:-1]), strict=True))
            return np.concatenate([pieces[j] for j in range(op.output_count)])
        return run

    @staticmethod
    def _shifted(ctx: DiagnosisContext, op: SplitOp, offsets: Sequence[int]) -> Callable[[], CandidateResult]:
        """Each output read through the input's strides from ``offsets`` along the axis; the
        elements past the end of the input buffer are unknown."""
        def run() -> CandidateResult:
            strides = op.input.effective_strides
            reads = [ctx.read(BufferTensorDesc(ctx.dtype, desc.sizes, strides), offset * strides[op.axis])
                     for desc, offset in zip(op.outputs, offsets, strict=True)]
            if any(r is None for r in reads):
                return None
            pairs = [r if isinstance(r, tuple) else (r, np.ones(r.size, dtype=bool)) for r in reads
                     if r is not None]
            result = np.concatenate([values for values, _ in pairs])
            mask = np.concatenate([inside for _, inside in pairs])
            return result if mask.all() else (result, mask)
        return run

    # ---- real models -------------------------------------------------------------------------
    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        node_attrs = attrs(node, opset)
        axis = int(node_attrs["axis"]) if "axis" in node_attrs else None
        split: tuple[int, ...] | None
        if opset < SPLIT_INPUT_OPSET:
            split = tuple(int(v) for v in node_attrs["split"]) if "split" in node_attrs else None
        else:
            split = const_ints(graph, node, 1, "split", flags, opset)
            if len(node.input) > 1 and node.input[1] and split is None:
                params.update(axis=axis, split=None, num_outputs=None, outputs=len(node.output))
                return None, None, {}, False
        num_outputs = int(node_attrs["num_outputs"]) if opset >= SPLIT_NUM_OUTPUTS_OPSET and \
            "num_outputs" in node_attrs else None
        params.update(axis=axis, split=split, num_outputs=num_outputs, outputs=len(node.output))
        if shape is None or dtype is None:
            return None, None, {}, False
        if not shape:
            raise ShapeError("a rank-0 Split is not defined (ONNX needs rank >= 1)")
        a = axis if axis is not None else 0
        if not -len(shape) <= a < len(shape):
            raise ShapeError(f"Split axis {a} is out of range for rank {len(shape)}")
        a %= len(shape)
        if opset >= SPLIT_NUM_OUTPUTS_OPSET and split is None and not num_outputs:
            flags.append(f"split: a Split-{SPLIT_NUM_OUTPUTS_OPSET} needs the split input or the num_outputs "
                         "attribute: ONNX's shape inference refuses one with neither (ONNX Runtime does not "
                         "load the model), and so does the DML EP's SplitHelper; no DirectML operator")
            even = shape[a] // len(node.output) if node.output and shape[a] % len(node.output) == 0 else None
            return (None if even is None else with_size_along(shape, a, even)), None, {}, False
        parts = split_sizes(shape[a], len(node.output), split, num_outputs)
        if len(parts) != len(node.output):
            raise ShapeError(f"Split makes {len(parts)} outputs {list(parts)}; the node has "
                             f"{len(node.output)}")
        params["parts"] = parts
        shapes = [with_size_along(shape, a, p) for p in parts]
        params["output_shapes"] = tuple(shapes)
        try:
            op = SplitOp.from_onnx(dtype, shape, parts, a)
        except NotExpressibleError as e:
            flags.append(f"empty-output: {e}")
            return shapes[0], None, {}, False
        check_size(shape, "input")
        descs: dict[str, BufferTensorDesc] = {"input": op.input}
        for k, desc in enumerate(op.outputs):
            descs["output" if k == 0 else f"output_{k}"] = desc
        return shapes[0], op.to_dict(), descs, False

    def case_from_node(self, dtype: DataType, shape: tuple[int, ...], params: dict[str, Any], *,
                       values: str, seed: int, origin: str, opset: int | None = None) -> Case | None:
        if params.get("parts") is None or not shape:
            return None
        split, num_outputs = params.get("split"), params.get("num_outputs")
        if split is None and not num_outputs:
            num_outputs = params.get("outputs")
        return Case("Split", dtype, shape, axis=params.get("axis"), parts=split,
                    num_outputs=None if split is not None else num_outputs, values=values, seed=seed,
                    origin=origin, opset=opset)

