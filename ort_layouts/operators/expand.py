"""ONNX Expand: DML_OPERATOR_ELEMENT_WISE_IDENTITY over the input broadcast with stride 0.

As ONNX Runtime's DML EP builds it (``DmlOperatorExpand`` in
``onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/DmlOperatorExpand.cpp``):
``DmlOperator::Initialize`` gives the input and the output at least 4 dimensions (leading 1s: its
default ``minDimensionCount``, ``NchwDimensionCount``); the constructor then makes the input's
``TensorDesc`` of the output's sizes over the input's (``TensorDesc.cpp``): where the two differ,
every size-1 or missing input dimension gets stride 0 and the others their packed strides
(physical [2,1,4] desired [2,3,4] -> sizes [1,2,3,4], strides [0,4,0,1]); where they are equal,
no strides. The output is packed. The shape input must be a 1-D constant: the EP reads it on the
CPU when it builds the graph (``ExpandHelper``: "Expand's shape tensor must be 1D.").
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import onnx

from ort_layouts._errors import OrtLayoutsError, ShapeError
from ort_layouts.descriptors.broadcast import broadcast_conflict, broadcast_shape
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.size import packed_strides
from ort_layouts.operators.base import Candidate, Described, DiagnosisContext, Operator, fmt_ints
from ort_layouts.operators.case import Case
from ort_layouts.operators.ep_tensor import padded_desc
from ort_layouts.operators.identity import IdentityOp
from ort_layouts.operators.onnx_nodes import (
    Graph,
    add_node,
    check_size,
    const_ints,
    int64_initializer,
    static,
)
from ort_layouts.operators.shapes import SUITE_SHAPES, rotating

__all__ = ["Expand"]


def expand_operator(dtype: DataType, shape: Sequence[int], target: Sequence[int]) -> IdentityOp:
    """The DML EP's Expand of an input of ``shape`` to ``target`` (see the module's text): input
    and output padded to 4 dimensions, the input broadcast with stride 0 where its sizes differ
    from the output's.

    Raises:
        ShapeError: ``target`` does not broadcast with ``shape``.
        DescriptorError: a size DirectML cannot hold (0, or past its limits).
    """
    out = broadcast_shape(shape, target)
    if out is None:  # Case.check_case refuses it when a case is made
        raise ShapeError(f"Expand target_shape {list(target)} does not broadcast with the input "
                         f"{list(shape)}")
    source, output = padded_desc(dtype, shape), padded_desc(dtype, out)
    if source.sizes != output.sizes:
        source = source.broadcast_to(output.sizes)
    return IdentityOp(source, output)


def _expand_full(rank: int) -> tuple[int, ...]:
    """Expand's target shapes have no 1s, so every subset of axes is a distinct broadcast."""
    shape = SUITE_SHAPES[rank]
    return shape if 1 not in shape else tuple(n if n > 1 else 2 for n in shape)


def _expand_patterns(rank: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(source shape, target shape): each subset of axes broadcast, rank increase 0 to 2."""
    full = _expand_full(rank)
    pats = []
    for mask in itertools.product((False, True), repeat=rank):
        src = tuple(1 if m else n for m, n in zip(mask, full, strict=True))
        for extra in ((), (2,), (3, 2)):
            if rank + len(extra) > 8:
                continue
            pats.append((src, extra + full))
    return pats


def _multidirectional(rank: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Target shapes with 1s where the source is larger, or fewer axes than the source."""
    full = _expand_full(rank)
    pats = []
    for mask in itertools.product((False, True), repeat=rank):
        if not any(mask):
            continue
        src = tuple(1 if m else n for m, n in zip(mask, full, strict=True))
        tgt = tuple(n if m else 1 for m, n in zip(mask, full, strict=True))
        pats.append((src, tgt))
        if rank >= 2:
            pats.append((src, tgt[1:]))
    return pats


class Expand(Operator):
    op_types = ("Expand",)
    case_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {"Expand": ("target_shape",)}
    edge_specs = ({"shape": (), "target_shape": ()}, {"shape": (), "target_shape": (2, 3)},
                  {"shape": (1,), "target_shape": ()}, {"shape": (), "target_shape": (0,)},
                  {"shape": (2, 0), "target_shape": (3, 2, 0)}, {"shape": (2, 1), "target_shape": (2, 0)})
    min_opset = 8

    def check_case(self, case: Case) -> None:
        """A target shape of sizes >= 0 that broadcasts with the input as ONNX's
        multidirectional broadcasting does (sizes right-aligned, each pair equal or one of them
        1): any other makes no ONNX Expand, and its output shape would be a guess."""
        target = case.target_shape
        if target is None:
            raise ShapeError("an Expand case needs target_shape")
        if any(n < 0 for n in target):
            raise ShapeError(f"Expand target_shape {list(target)} has a negative size; valid: sizes >= 0")
        conflict = broadcast_conflict(case.shape, target)
        if conflict is not None:
            axis, a, b = conflict
            raise ShapeError(
                f"Expand target_shape {list(target)} does not broadcast with the input "
                f"{list(case.shape)}: axis {axis} (right-aligned) has {a} and {b}; valid: each "
                "pair of sizes equal or one of them 1 (ONNX's multidirectional broadcasting)")

    def id_parts(self, case: Case) -> list[str]:
        return ["to" + ("x".join(map(str, case.target_shape or ())) or "scalar")]

    def output_shape(self, case: Case) -> tuple[int, ...]:
        shape = broadcast_shape(case.shape, case.target_shape or ())
        if shape is None:  # check_case refused it when the case was made
            raise ShapeError(f"Expand target_shape {case.target_shape} does not broadcast with the input "
                             f"{list(case.shape)}")
        return shape

    def dml_operator(self, case: Case) -> IdentityOp:
        return expand_operator(case.data_type, case.shape, case.target_shape or ())

    def reference_output(self, case: Case, input_array: np.ndarray) -> np.ndarray:
        return np.asarray(np.broadcast_to(np.asarray(input_array), self.output_shape(case)), order="C")

    def add_node(self, graph: onnx.GraphProto, index: int, case: Case, opset: int) -> None:
        int64_initializer(graph, f"shape{index}", case.target_shape or ())
        add_node(graph, "Expand", [f"x{index}", f"shape{index}"], f"y{index}", f"n{index}_{case.op}", case.id)

    def suite_cases(self, dtypes: Sequence[DataType], ranks: set[int], seed: int) -> list[Case]:
        """Each subset of axes broadcast, rank increases by 1 and 2, multidirectional targets;
        special values up to rank 3."""
        out: list[Case] = []
        for rank in sorted(r for r in ranks if r <= 6):
            for k, (src, tgt) in enumerate(_expand_patterns(rank)):
                chosen = list(dtypes) if rank <= 3 else [rotating(dtypes, k)]
                out += [Case("Expand", dt, src, target_shape=tgt) for dt in chosen]
            for k, (src, tgt) in enumerate(_multidirectional(rank)):
                chosen = list(dtypes) if rank <= 2 else [rotating(dtypes, k)]
                out += [Case("Expand", dt, src, target_shape=tgt) for dt in chosen]
            if rank <= 3:
                src = tuple(1 if a % 2 == 0 else n for a, n in enumerate(_expand_full(rank)))
                for dt in dtypes:
                    out.append(Case("Expand", dt, src, target_shape=(2, *_expand_full(rank)),
                                    values="special"))
        return out

    def diagnosis_candidates(self, ctx: DiagnosisContext) -> Iterator[Candidate]:
        """Broadcast strides not zeroed (all, or one axis); the input aligned left."""
        right = ctx.op.input
        sizes = right.sizes
        rank = len(sizes)
        shape = ctx.case.shape
        aligned = (1,) * (rank - len(shape)) + tuple(shape)
        source_strides = packed_strides(aligned)
        broadcast = right.broadcast_axes
        yield (f"the input read with the packed strides {fmt_ints(packed_strides(sizes))} "
               "of the output shape "
               f"{fmt_ints(sizes)} (broadcast strides not zeroed)",
               lambda: ctx.read(BufferTensorDesc(ctx.dtype, sizes)))
        for axis in broadcast:
            strides = list(right.effective_strides)
            strides[axis] = source_strides[axis]
            alt = BufferTensorDesc(ctx.dtype, sizes, tuple(strides))
            yield (f"broadcast axis {axis} not zeroed (stride {source_strides[axis]} instead of 0: "
                   f"input strides {fmt_ints(strides)} instead of {fmt_ints(right.effective_strides)})",
                   functools.partial(ctx.read, alt))
        if len(broadcast) > 1:
            strides = [source_strides[a] if a in broadcast else s
                       for a, s in enumerate(right.effective_strides)]
            alt_all = BufferTensorDesc(ctx.dtype, sizes, tuple(strides))
            yield (f"no broadcast stride zeroed (input strides {fmt_ints(strides)} instead of "
                   f"{fmt_ints(right.effective_strides)})", lambda: ctx.read(alt_all))
        onnx_rank = len(self.output_shape(ctx.case))
        if len(shape) < onnx_rank:  # within ONNX's output rank, then padded as the EP pads it
            onnx_left = tuple(shape) + (1,) * (onnx_rank - len(shape))
            onnx_right = (1,) * (onnx_rank - len(shape)) + tuple(shape)
            left = (1,) * (rank - onnx_rank) + onnx_left
            try:
                alt_left = BufferTensorDesc(ctx.dtype, left).broadcast_to(sizes)
            except OrtLayoutsError:
                return
            if alt_left.sizes == sizes:
                yield (f"the input shape aligned left {fmt_ints(onnx_left)} instead of right "
                       f"{fmt_ints(onnx_right)} before "
                       f"broadcasting (input strides {fmt_ints(alt_left.effective_strides)} instead of "
                       f"{fmt_ints(right.effective_strides)})", lambda: ctx.read(alt_left))

    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        # ranks=None: ONNX Runtime's CPU EP reads the shape's values whatever its rank; the DML
        # EP's ExpandHelper refuses a shape that is not 1-D (below)
        target = const_ints(graph, node, 1, "shape", flags, opset, ranks=None)
        params["target_shape"] = target
        if target is None and shape is not None:
            out_static = static(inferred, node.output[0], [])
            if out_static is not None:  # the broadcast result is a valid target shape
                target = out_static
                params["target_shape"] = target
        if shape is None or dtype is None or target is None:
            return None, None, {}, True
        check_size(shape or (1,), "input")
        out_shape = broadcast_shape(shape, target)
        check_size(out_shape or (1,), "output")
        shape_rank = _shape_input_rank(graph, node)
        if shape_rank is not None and shape_rank != 1:
            flags.append(f"ep-rejects: the shape input {node.input[1]!r} is {shape_rank}-D; the DML EP's "
                         "Expand takes a 1-D shape (ExpandHelper in OperatorHelper.cpp: \"Expand's shape "
                         "tensor must be 1D.\"), ONNX Runtime's CPU EP reads its values whatever its rank")
            return out_shape, None, {}, True
        op = expand_operator(dtype, shape, target)
        return out_shape, op.to_dict(), {"input": op.input, "output": op.output}, True

    def case_from_node(self, dtype: DataType, shape: tuple[int, ...], params: dict[str, Any], *,
                       values: str, seed: int, origin: str, opset: int | None = None) -> Case | None:
        if params.get("target_shape") is None:
            return None
        return Case("Expand", dtype, shape, target_shape=params["target_shape"], values=values,
                    seed=seed, origin=origin, opset=opset)


def _shape_input_rank(graph: Graph, node: onnx.NodeProto) -> int | None:
    """The rank of an Expand node's constant shape input (None where it has none)."""
    value = graph.value(node.input[1]) if len(node.input) > 1 and node.input[1] else None
    return None if value is None else np.asarray(value).ndim
