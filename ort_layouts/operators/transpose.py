"""ONNX Transpose: DML_OPERATOR_ELEMENT_WISE_IDENTITY over the input read with permuted strides.

As ONNX Runtime's DML EP builds it (``DmlOperatorTranspose`` in
``onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/DmlOperatorTranspose.cpp``):
the input descriptor has the packed strides of the ONNX input shape, permuted, so
``sizes[i] = shape[perm[i]]`` and ``strides[i] = packed[perm[i]]``; the output is packed; the
operator is an identity. The original rank is kept (no coercion to 4D); a missing perm means
reversed axes; rank 0 has no descriptor.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import onnx
from onnx import helper

from ort_layouts._errors import NotExpressibleError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc, normalize_perm
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.base import (
    Candidate,
    CandidateResult,
    Described,
    DiagnosisContext,
    Operator,
    fmt_ints,
)
from ort_layouts.operators.case import Case
from ort_layouts.operators.identity import IdentityOp
from ort_layouts.operators.kernels import flag_no_kernel
from ort_layouts.operators.onnx_nodes import Flagged, Graph, add_node, attrs, check_size
from ort_layouts.operators.shapes import SUITE_SHAPES, rotating

__all__ = ["Transpose"]

_EXTRA_SHAPES: dict[int, tuple[tuple[int, ...], ...]] = {
    1: ((1,), (17,)), 2: ((1, 7), (6, 1), (16, 16)), 3: ((1, 5, 1), (4, 1, 3)),
    4: ((1, 1, 3, 5), (3, 1, 1, 2), (1, 4, 1, 6)),
}
_ALL_PERMS_MAX_RANK = 6  # every permutation is tried up to this rank, transpositions beyond


_RANK0_REASON = ("a rank-0 Transpose has no DirectML operator: DmlOperatorTranspose checks "
                 "ML_CHECK_VALID_ARGUMENT(!originalSizes.empty()), so the DML EP fails to create the kernel")


# normalize_perm of the (perm, rank) pairs seen: a case asks for its output shape several times
_checked_perm = functools.lru_cache(maxsize=4096)(normalize_perm)


def _perm(case: Case) -> tuple[int, ...]:
    """The case's perm, checked against its rank (ShapeError names both), or ONNX's default."""
    if case.perm is None:
        return tuple(range(case.rank - 1, -1, -1))
    return _checked_perm(case.perm, case.rank)


class Transpose(Operator):
    op_types = ("Transpose",)
    case_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {"Transpose": ("perm",)}
    edge_specs = ({"shape": ()}, {"shape": (), "perm": ()}, {"shape": (0,)},
                  {"shape": (2, 0, 3), "perm": (2, 0, 1)})
    min_opset = 1

    def check_case(self, case: Case) -> None:
        """A perm, where given, that is a permutation of ``0..rank-1`` (ShapeError names the perm
        and the rank): ONNX's Transpose takes no other (a repeated, missing or negative axis)."""
        if case.perm is not None:
            _checked_perm(case.perm, case.rank)

    def id_parts(self, case: Case) -> list[str]:
        return ["perm" + (".".join(map(str, case.perm)) if case.perm is not None else "default")]

    def output_shape(self, case: Case) -> tuple[int, ...]:
        return tuple(case.shape[a] for a in _perm(case))

    def inexpressible_reason(self, case: Case) -> str:
        if not case.shape:
            return _RANK0_REASON
        return super().inexpressible_reason(case)

    def dml_operator(self, case: Case) -> IdentityOp:
        if not case.shape:
            raise NotExpressibleError(_RANK0_REASON)
        source = BufferTensorDesc(case.data_type, case.shape).transpose(case.perm)
        return IdentityOp(source, BufferTensorDesc(case.data_type, source.sizes))

    def reference_output(self, case: Case, input_array: np.ndarray) -> np.ndarray:
        return np.asarray(np.transpose(np.asarray(input_array), case.perm), order="C")

    def add_node(self, graph: onnx.GraphProto, index: int, case: Case, opset: int) -> None:
        x, y, name = f"x{index}", f"y{index}", f"n{index}_{case.op}"
        if case.perm is not None and not case.perm and case.rank:  # make_node reports it
            graph.node.append(helper.make_node("Transpose", [x], [y], name=name, doc_string=case.id,
                                               perm=[]))
            return
        node = add_node(graph, "Transpose", [x], y, name, case.id)
        if case.perm is not None:
            attr = node.attribute.add()
            attr.name = "perm"
            attr.ints.extend(case.perm)
            attr.type = onnx.AttributeProto.INTS

    def suite_cases(self, dtypes: Sequence[DataType], ranks: set[int], seed: int) -> list[Case]:
        """Every permutation of ranks 1 to 6 (and the default perm), a seeded sample for ranks 7
        and 8; odd shapes with size-1 axes; special values and iota for ranks 2 to 4."""
        out: list[Case] = []
        for rank in sorted(ranks & set(range(1, 9))):
            shape = SUITE_SHAPES[rank]
            perms: list[tuple[int, ...] | None]
            if rank <= 6:
                perms = list(itertools.permutations(range(rank)))
            else:  # the same sample whatever the ranks asked
                rank_rng = np.random.default_rng([seed, 0x7A7, rank])
                perms = [tuple(int(a) for a in rank_rng.permutation(rank)) for _ in range(40)]
            perms.append(None)
            for k, perm in enumerate(perms):
                if rank <= 4 or perm is None:
                    chosen = list(dtypes)
                else:  # every permutation in float32 and one more type, rotating
                    chosen = list(dict.fromkeys([dtypes[0], rotating(dtypes, k + 1)]))
                out += [Case("Transpose", dt, shape, perm=perm) for dt in chosen]
            for shape2 in _EXTRA_SHAPES.get(rank, ()):
                for k, perm in enumerate(itertools.permutations(range(rank))):
                    out.append(Case("Transpose", rotating(dtypes, k), shape2, perm=perm))
            if 2 <= rank <= 4:
                for dt in dtypes:
                    for perm in (tuple(range(rank - 1, -1, -1)), (1, 0, *range(2, rank))):
                        out.append(Case("Transpose", dt, shape, perm=perm, values="special"))
                        out.append(Case("Transpose", dt, shape, perm=perm, values="iota"))
        return out

    def diagnosis_candidates(self, ctx: DiagnosisContext) -> Iterator[Candidate]:
        """The input read packed; the inverse perm, the perm applied twice, two entries swapped;
        every other permutation up to rank 6."""
        rank = ctx.source.dimension_count
        perm = (tuple(range(rank - 1, -1, -1)) if ctx.case.perm is None
                else normalize_perm(ctx.case.perm, rank))
        right = ctx.source.transpose(perm)
        seen = {perm}

        def transposed(q: tuple[int, ...]) -> Callable[[], CandidateResult]:
            return lambda: ctx.read(ctx.source.transpose(q))

        def strides_note(q: tuple[int, ...]) -> str:
            return (f" (input sizes {fmt_ints(ctx.source.transpose(q).sizes)} strides "
                    f"{fmt_ints(ctx.source.transpose(q).effective_strides)} "
                    f"instead of sizes {fmt_ints(right.sizes)} "
                    f"strides {fmt_ints(right.effective_strides)})")

        identity = tuple(range(rank))
        seen.add(identity)
        yield ("the input read packed (strides ignored: a plain copy of the input buffer)",
               lambda: ctx.read(BufferTensorDesc(ctx.dtype, right.sizes)))
        inverse = tuple(int(i) for i in np.argsort(perm))
        twice = tuple(perm[perm[i]] for i in range(rank))
        if inverse not in seen:
            seen.add(inverse)
            also = f", also perm {fmt_ints(perm)} applied twice" if twice == inverse else ""
            yield (f"perm {fmt_ints(inverse)}, the inverse of perm {fmt_ints(perm)}"
                   f"{also}{strides_note(inverse)}",
                   transposed(inverse))
        if twice not in seen:
            seen.add(twice)
            yield (f"perm {fmt_ints(perm)} applied twice (perm {fmt_ints(twice)}){strides_note(twice)}",
                   transposed(twice))

        def swapped_name(q: tuple[int, ...], i: int, j: int) -> Callable[[], str]:
            return lambda: (f"perm {fmt_ints(q)}: entries {i} and {j} of perm {fmt_ints(perm)} swapped"
                            f"{strides_note(q)}")

        for i, j in itertools.combinations(range(rank), 2):
            q = list(perm)
            q[i], q[j] = q[j], q[i]
            swapped = tuple(q)
            if swapped not in seen:
                seen.add(swapped)
                yield swapped_name(swapped, i, j), transposed(swapped)
        if rank <= _ALL_PERMS_MAX_RANK:
            others = [q for q in itertools.permutations(range(rank)) if q not in seen]
            found: list[tuple[int, ...]] = []

            def first_other() -> CandidateResult:
                """The read of the first of ``others`` that gives the EP's output: each is the
                input's elements transposed (what ``ctx.read`` of its descriptor gives), made
                and compared without a descriptor (up to 714 of them)."""
                actual = ctx.actual_bits
                if actual is None or actual.size != ctx.source.element_count:
                    return None
                grid = ctx.elements.reshape(ctx.source.sizes)
                for q in others:
                    values = ctx.canonical(np.ascontiguousarray(grid.transpose(q)).reshape(-1))
                    if np.array_equal(values, actual):
                        found.append(q)
                        return values
                return None

            def other_name() -> str:
                q = found[-1]
                return f"perm {fmt_ints(q)} instead of {fmt_ints(perm)}{strides_note(q)}"

            if others:
                yield other_name, first_other

    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        perm = attrs(node, opset).get("perm")
        params["perm"] = None if perm is None else tuple(int(a) for a in perm)
        flag_no_kernel(flags, node.op_type, opset)
        if shape is None or dtype is None:
            return None, None, {}, True
        if not shape:  # the suite's rank-0 Transposes are unsupported for this reason: no case of a node
            raise Flagged(f"rank-0: {_RANK0_REASON}; the node makes no case")
        p = tuple(range(len(shape) - 1, -1, -1)) if perm is None else normalize_perm(perm, len(shape))
        out_shape = tuple(shape[a] for a in p)
        check_size(shape, "input")
        op = IdentityOp(BufferTensorDesc(dtype, shape).transpose(p), BufferTensorDesc(dtype, out_shape))
        return out_shape, op.to_dict(), {"input": op.input, "output": op.output}, True

    def case_from_node(self, dtype: DataType, shape: tuple[int, ...], params: dict[str, Any], *,
                       values: str, seed: int, origin: str, opset: int | None = None) -> Case | None:
        # a refused node keeps no perm (its reading keeps None for none); a rank-0 one is flagged
        if "perm" not in params or not shape:
            return None
        return Case("Transpose", dtype, shape, perm=params["perm"], values=values, seed=seed,
                    origin=origin, opset=opset)

