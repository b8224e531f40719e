"""ONNX Concat: DML_OPERATOR_JOIN over packed descriptors right-aligned to 4 dimensions.

As ONNX Runtime's DML EP builds it (``DmlOperatorConcat`` in
``onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/DmlOperatorConcat.cpp``, with
``ConcatHelperBase::Initialize`` / ``GetOutputShapes`` in
``onnxruntime/core/providers/dml/OperatorAuthorHelper/OperatorHelper.cpp``): the axis attribute
goes through ``HandleNegativeAxis`` against input 0's rank; the output shape is input 0's with
the axis summed over every input; only the inputs without a 0-sized dimension are bound (its
``kernelInputIndices``), each as a packed descriptor right-aligned to at least 4 dimensions;
``Axis = GetDmlAdjustedAxis(axis) = axis + max(rank, 4) - rank``; and
``DML_JOIN_OPERATOR_DESC {InputCount, InputTensors, OutputTensor, Axis}`` joins them
(``ns-directml-dml_join_operator_desc``). With every input empty no operator is made and
nothing is written (the output is empty too). The EP registers Concat-4, -11 and -13
(``OperatorRegistration.cpp``); Concat-1 has no DML kernel. A model's Concat-1 node without an
axis reads as axis 1, that version's default (ONNX's schema of Concat-1: "Default value is 1");
the attribute is required from Concat-4.

A case's ``shape`` is the whole output and ``parts`` the inputs' sizes along ``axis``; its input
(:func:`~ort_layouts.operators.values.make_input`) is that whole tensor, cut into the node's
inputs ``x{i}``, ``x{i}_1``, ... along the axis, so the expected output is the input itself, as
the executor's JOIN must rebuild it.
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
from ort_layouts.operators.join_split import JoinOp, other_axes, padded_desc, part_orders
from ort_layouts.operators.onnx_nodes import Flagged, Graph, add_node, attrs, check_size, static
from ort_layouts.operators.shapes import SUITE_SHAPES, rotating

__all__ = ["SUITE_PARTS", "Concat", "axis_parts_cases", "cut_along", "with_size_along"]

CONCAT_AXIS_REQUIRED_OPSET = 4  # Concat-4: the axis is required; Concat-1's defaults to 1
CONCAT1_DEFAULT_AXIS = 1
CONCAT_NEGATIVE_AXIS_OPSET = 11  # Concat-11: the axis may be negative
#: the parts' sizes along the axis in the suites of Concat (inputs) and Split (outputs): one
#: part (a copy), even, uneven, three and four parts
SUITE_PARTS: tuple[tuple[int, ...], ...] = ((3,), (2, 2), (2, 3), (3, 1, 2), (1, 2, 2, 3))


def _axis(case: Case) -> int:
    if case.axis is None:
        raise ShapeError(f"a {case.op} case needs axis")
    return case.axis % case.rank


def cut_along(array: np.ndarray, axis: int, parts: Sequence[int]) -> list[np.ndarray]:
    """``array`` cut along ``axis`` into C-contiguous pieces of ``parts`` (``np.split`` at the
    running sums); a part may be 0."""
    edges = list(itertools.accumulate(parts))[:-1]
    return [np.ascontiguousarray(p) for p in np.split(np.asarray(array), edges, axis=axis)]


def with_size_along(shape: tuple[int, ...], axis: int, size: int) -> tuple[int, ...]:
    """``shape`` with ``size`` along ``axis`` (which may be negative)."""
    dims = list(shape)
    dims[axis % len(dims)] = size
    return tuple(dims)


def _whole(shape: tuple[int, ...], axis: int, parts: Sequence[int]) -> tuple[int, ...]:
    return with_size_along(shape, axis, sum(parts))


def axis_parts_cases(op: str, dtypes: Sequence[DataType], rank: int) -> list[Case]:
    """Cases of a Concat or Split of the suite's rank-``rank`` shape along every axis (and -1
    and -rank) into each of :data:`SUITE_PARTS`: every data type up to rank 2, float32 and one
    more type (rotating) beyond."""
    base = SUITE_SHAPES[rank]
    out: list[Case] = []
    k = 0
    for axis in [*range(rank), *sorted({-1, -rank})]:
        for parts in SUITE_PARTS:
            k += 1
            chosen = list(dtypes) if rank <= 2 else list(dict.fromkeys([dtypes[0], rotating(dtypes, k)]))
            out += [Case(op, dt, _whole(base, axis, parts), axis=axis, parts=parts) for dt in chosen]
    return out


def _check_axis_parts(case: Case, what: str) -> None:
    rank = case.rank
    if rank == 0:
        raise ShapeError(f"a rank-0 {case.op} is not defined (ONNX needs rank >= 1)")
    if case.axis is not None and not -rank <= case.axis < rank:
        raise ShapeError(f"{case.op} axis {case.axis} is out of range for rank {rank} "
                         f"(valid: {-rank}..{rank - 1})")
    if case.parts is None:
        return
    a = (case.axis or 0) % rank
    if not case.parts or any(p < 0 for p in case.parts) or sum(case.parts) != case.shape[a]:
        raise ShapeError(f"{case.op} parts {list(case.parts)} must be one or more sizes >= 0 adding up "
                         f"to dimension {a} of {list(case.shape)} ({case.shape[a]}): the {what} along "
                         "the axis")


def negative_axis_problem(case: Case, opset: int, since: int) -> str:
    """Why a Concat or Split case cannot be a node at ``opset`` ("" when it can): a negative
    axis came with the op's version ``since`` (Concat-11, Split-11)."""
    if case.axis is not None and case.axis < 0 and opset < since:
        return (f"a negative {case.op} axis needs opset >= {since}, got {opset}; valid: "
                f"axis {case.axis + case.rank} (the same axis), or opset >= {since}")
    return ""


class Concat(Operator):
    op_types = ("Concat",)
    case_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {"Concat": ("axis", "parts")}
    edge_specs = ({"shape": (3, 2), "axis": 0, "parts": (0, 3)},
                  {"shape": (0, 2), "axis": 0, "parts": (0, 0)},
                  {"shape": (2, 0), "axis": 0, "parts": (1, 1)})
    min_opset = 4
    stride_view = False

    def check_case(self, case: Case) -> None:
        if case.axis is None:
            raise ShapeError("a Concat case needs axis (ONNX's Concat-4 and later require it)")
        if case.parts is None:
            raise ShapeError("a Concat case needs parts (the inputs' sizes along the axis)")
        _check_axis_parts(case, "inputs' sizes")

    def opset_problem(self, case: Case, opset: int) -> str:
        return negative_axis_problem(case, opset, CONCAT_NEGATIVE_AXIS_OPSET)

    def id_parts(self, case: Case) -> list[str]:
        return [f"axis{case.axis}".replace("-", "m"), "parts" + ".".join(map(str, case.parts or ()))]

    # ---- shapes and values ------------------------------------------------------------------
    def output_shape(self, case: Case) -> tuple[int, ...]:
        return case.shape

    def input_shapes(self, case: Case) -> list[tuple[int, ...]]:
        axis = _axis(case)
        return [tuple(p if i == axis else n for i, n in enumerate(case.shape)) for p in case.parts or ()]

    def input_feeds(self, case: Case, input_array: np.ndarray) -> list[np.ndarray]:
        return cut_along(np.asarray(input_array).reshape(case.shape), _axis(case), case.parts or ())

    def dml_inputs(self, case: Case, feeds: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The non-empty inputs: ``DmlOperatorConcat`` binds only those."""
        return [f for f in feeds if f.size]

    def reference_output(self, case: Case, input_array: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.concatenate(self.input_feeds(case, input_array), axis=_axis(case)))

    # ---- DirectML ----------------------------------------------------------------------------
    def skips_dispatch(self, case: Case) -> bool:
        """Only when every input is empty: ``DmlOperatorConcat`` leaves empty inputs out of the
        JOIN, and the output is empty exactly when all of them are."""
        return 0 in case.shape

    def inexpressible_reason(self, case: Case) -> str:
        limits = self.limits_reason(case)
        if limits:
            return limits
        if 0 in case.shape:
            shapes = [list(s) for s in self.input_shapes(case)]
            return (f"every input of the Concat {shapes} is empty: the DML EP binds no input, creates no "
                    "JOIN and writes nothing (the output is empty too)")
        return ""

    def dml_operator(self, case: Case) -> JoinOp:
        return JoinOp.from_onnx(case.data_type, self.input_shapes(case), _axis(case))

    # ---- graphs ------------------------------------------------------------------------------
    def add_node(self, graph: onnx.GraphProto, index: int, case: Case, opset: int) -> None:
        """``Concat(x{i}, x{i}_1, ..., axis=axis)``; a negative axis from opset 11."""
        axis = case.axis if case.axis is not None else 0
        inputs = [input_name(index, k) for k in range(len(case.parts or ()))]
        node = add_node(graph, "Concat", inputs, output_name(index), f"n{index}_{case.op}", case.id)
        attr = node.attribute.add()
        attr.name = "axis"
        attr.i = axis
        attr.type = onnx.AttributeProto.INT

    def suite_cases(self, dtypes: Sequence[DataType], ranks: set[int], seed: int) -> list[Case]:
        """Every axis of ranks 1 to 8 (and -1 and -rank) with one to four inputs, even and uneven;
        every data type up to rank 2, float32 and one more type beyond; special values and iota
        for ranks 2 to 4; opsets 4, 11 and 13. No empty inputs (the EP drops them from the JOIN:
        see ``dml_inputs``)."""
        out: list[Case] = []
        for rank in sorted(ranks & set(range(1, 9))):
            base = SUITE_SHAPES[rank]
            out += axis_parts_cases("Concat", dtypes, rank)
            if 2 <= rank <= 4:
                for dt in dtypes:
                    out.append(Case("Concat", dt, _whole(base, -1, (1, 2, 2)), axis=-1, parts=(1, 2, 2),
                                    values="special"))
                    out.append(Case("Concat", dt, _whole(base, 0, (2, 3)), axis=0, parts=(2, 3),
                                    values="iota"))
        if ranks & {2}:
            for opset, axis in ((4, 1), (4, 0), (11, -1), (11, 0), (13, -2), (13, 1)):
                for dt in dtypes:
                    out.append(Case("Concat", dt, _whole((3, 4), axis, (1, 3)), axis=axis, parts=(1, 3),
                                    opset=opset))
        return out

    # ---- diagnosis ---------------------------------------------------------------------------
    def diagnosis_candidates(self, ctx: DiagnosisContext) -> Iterator[Candidate]:
        """The inputs' buffers back to back (a JOIN along an outer size-1 axis: the ONNX axis not
        adjusted for the padding to 4-D); a JOIN along another axis; the inputs in another
        order."""
        op = ctx.op
        assert isinstance(op, JoinOp)
        buffers = ctx.input_buffers
        counts = [d.element_count for d in op.inputs]

        def joined(alt: JoinOp, inputs: Sequence[np.ndarray] | None = None) -> Callable[[], CandidateResult]:
            return lambda: ctx.run(alt, inputs)

        if op.input_count > 1:
            flat_inputs = tuple(padded_desc(ctx.dtype, (c,)) for c in counts)
            flat = JoinOp(flat_inputs, padded_desc(ctx.dtype, (sum(counts),)), 3)
            unadjusted, others = other_axes("JOIN", op.output, counts, op.axis, ctx.case.rank)
            yield (f"the inputs' buffers placed one after another (joined along an outer axis"
                   f"{unadjusted})", joined(flat))
            for k, descs, what in others:
                yield (f"{what}: the inputs read as sizes {[list(d.sizes) for d in descs]}",
                       joined(JoinOp(descs, op.output, k)))
        parts = [d.sizes[op.axis] for d in op.inputs]
        for order in part_orders(op.input_count):
            alt = JoinOp(tuple(op.inputs[j] for j in order), op.output, op.axis)
            yield (f"the inputs joined in the order {fmt_ints(order)} instead of "
                   f"{fmt_ints(range(op.input_count))} (parts {fmt_ints(parts[j] for j in order)} along "
                   f"DML axis {op.axis} instead of {fmt_ints(parts)})",
                   joined(alt, [buffers[j] for j in order]))

    # ---- real models -------------------------------------------------------------------------
    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        node_attrs = attrs(node, opset)
        axis = int(node_attrs["axis"]) if "axis" in node_attrs else None
        if axis is None and 0 < opset < CONCAT_AXIS_REQUIRED_OPSET:
            axis = CONCAT1_DEFAULT_AXIS
        params["axis"] = axis
        shapes: list[tuple[int, ...] | None] = [shape]
        shapes += [static(graph.shape(name), name, flags, graph.advice_for(name)) for name in node.input[1:]]
        if dtype is None or any(s is None for s in shapes):
            return None, None, {}, False
        known = [s for s in shapes if s is not None]
        if axis is None:
            raise ShapeError(f"Concat {node.name!r} has no axis attribute (required from "
                             f"Concat-{CONCAT_AXIS_REQUIRED_OPSET}; opset {opset})")
        rank = len(known[0])
        if not -rank <= axis < rank or any(len(s) != rank for s in known):
            raise ShapeError(f"Concat axis {axis} and input shapes {[list(s) for s in known]} do not fit "
                             f"(every input needs rank {rank}, axis {-rank}..{rank - 1})")
        a = axis % rank
        params["parts"] = tuple(s[a] for s in known)
        try:
            op = JoinOp.from_onnx(dtype, known, axis)
        except NotExpressibleError as e:
            raise Flagged(f"empty: {e}") from None
        out_shape = _whole(known[0], a, [s[a] for s in known])
        check_size(out_shape, "output")
        empty = [k for k, s in enumerate(known) if 0 in s]
        if empty:
            flags.append(f"empty-input: Concat inputs {empty} are empty; the DML EP leaves them out of the "
                         f"JOIN (InputCount {op.input_count} of {len(known)} inputs, onnx_inputs "
                         f"{list(op.kernel_input_indices)})")
        descs: dict[str, BufferTensorDesc] = {}
        for k, desc in zip(op.kernel_input_indices, op.inputs, strict=True):
            descs["input" if k == 0 else f"input_{k}"] = desc
        descs["output"] = op.output
        return out_shape, op.to_dict(), descs, False

    def case_from_node(self, dtype: DataType, shape: tuple[int, ...], params: dict[str, Any], *,
                       values: str, seed: int, origin: str, opset: int | None = None) -> Case | None:
        axis, parts = params.get("axis"), params.get("parts")
        if axis is None or parts is None or not shape:
            return None
        return Case("Concat", dtype, _whole(shape, axis, parts), axis=axis, parts=parts, values=values,
                    seed=seed, origin=origin, opset=opset)
