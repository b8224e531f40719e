"""ONNX Tile: DML_OPERATOR_TILE over the input with its size-1 output axes squeezed out.

As ONNX Runtime's DML EP builds it (``DmlOperatorTile`` in
``onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/DmlOperatorTile.cpp``, with
``TileHelper::Initialize`` in ``onnxruntime/core/providers/dml/OperatorAuthorHelper/OperatorHelper.cpp``):
the repeats input is read on the CPU as int64 (one per input axis, each >= 0, narrowed to
UINT); ``DmlOperator::Initialize`` rejects an ONNX rank above 8; every axis whose *output* size
is 1 (input size 1 and repeat 1) is removed from the input shape, the repeats and the output
shape alike (``FindValueIndices`` + ``RemoveValuesByIndex`` with keepOneValue: the last axis
stays when all would go); both descriptors are packed and built with
``TensorDesc(..., TensorAxis::RightAligned, /*minDimensionCount*/ 1, 0)``, so they keep the
squeezed rank (at least 1, right-aligned) and the repeats get a leading 1 only when that
rounding up added an axis (a rank-0 input). The DirectML desc is
``DML_TILE_OPERATOR_DESC {InputTensor, OutputTensor, RepeatsCount, Repeats}``
(``ns-directml-dml_tile_operator_desc``): ``Output[o] = Input[o mod InputSizes]`` per axis.

A zero repeat makes an empty output: ``DmlOperator::SetDmlOperatorDesc`` creates no operator
and ``ExecuteOperator`` dispatches nothing (``ContainsEmptyDimensions``), so DirectML has
nothing to validate; the DML EP is not asked to run such a case. Tile-1 (before opset 6, a
``tiles``/``axis`` pair) has no DML kernel: the EP registers Tile-6 and Tile-13 only.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import onnx
from numpy.lib.stride_tricks import as_strided

from ort_layouts._errors import ModelError, NotExpressibleError, ShapeError
from ort_layouts.descriptors.buffer_tensor import MAX_DIMENSION_COUNT, BufferTensorDesc, check_cpp_name
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import int_tuple
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
from ort_layouts.operators.onnx_nodes import Graph, add_node, const_ints, int64_initializer
from ort_layouts.operators.shapes import SUITE_SHAPES, rotating
from ort_layouts.reference.buffers import check_views
from ort_layouts.reference.compare import views_equal
from ort_layouts.reference.copy import strided_copy

__all__ = ["TILE", "Tile", "TileOp", "squeezed_axes"]

TILE = "DML_OPERATOR_TILE"
TILE_INPUT_OPSET = 6  # Tile-6: repeats as an input (Tile-1 has no DML kernel)
_ALL_PERMS_MAX_RANK = 6  # diagnosis tries every permutation of the repeats up to this rank


def squeezed_axes(output_shape: Sequence[int]) -> tuple[int, ...]:
    """The ONNX axes the DML EP keeps for Tile: those whose output size is not 1, or the last
    axis alone when every output size is 1 (``RemoveValuesByIndex`` with keepOneValue).

    >>> squeezed_axes((1, 6, 1, 15)), squeezed_axes((1, 1, 1))
    ((1, 3), (2,))
    """
    ones = [i for i, n in enumerate(output_shape) if n == 1]
    if ones and len(ones) == len(output_shape):
        ones = ones[:-1]
    return tuple(i for i in range(len(output_shape)) if i not in ones)


def _interleaved(view: np.ndarray, repeats: Sequence[int], *, writeable: bool) -> np.ndarray:
    """``view`` (output sizes ``repeats[i] * n[i]``) seen as [r0, n0, r1, n1, ...]."""
    shape: list[int] = []
    strides: list[int] = []
    for size, stride, r in zip(view.shape, view.strides, repeats, strict=True):
        n = size // r
        shape += [r, n]
        strides += [n * stride, stride]
    return as_strided(view, tuple(shape), tuple(strides), writeable=writeable)


def _broadcast_source(src: np.ndarray, repeats: Sequence[int]) -> np.ndarray:
    """The input view broadcast to [r0, n0, r1, n1, ...] (stride 0 along each repeat)."""
    shape: list[int] = []
    strides: list[int] = []
    for n, stride, r in zip(src.shape, src.strides, repeats, strict=True):
        shape += [r, n]
        strides += [0, stride]
    return as_strided(src, tuple(shape), tuple(strides), writeable=False)


@dataclasses.dataclass(frozen=True, slots=True)
class TileOp:
    """DML_TILE_OPERATOR_DESC: ``Output[o] = Input[o mod InputSizes]`` per axis.

    Attributes:
        input: the input descriptor.
        output: the output descriptor: same data type and DimensionCount, sizes
            ``input.sizes[i] * repeats[i]``.
        repeats: Repeats (RepeatsCount = DimensionCount), each >= 1.
        onnx_output_shape: the ONNX output shape the EP squeezed into these descriptors (not
            part of the DirectML desc: it maps an index of the ONNX output to the descriptors);
            None when the operator was made without one.
    """

    input: BufferTensorDesc
    output: BufferTensorDesc
    repeats: tuple[int, ...]
    onnx_output_shape: tuple[int, ...] | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self) -> None:
        check_tensor(self.input, "TileOp input")
        check_tensor(self.output, "TileOp output")
        object.__setattr__(self, "repeats", int_tuple(self.repeats, "Tile repeats"))
        if self.onnx_output_shape is not None:
            object.__setattr__(self, "onnx_output_shape",
                               int_tuple(self.onnx_output_shape, "ONNX output shape"))
        n = self.input.dimension_count
        if self.input.data_type != self.output.data_type:
            raise ShapeError(f"TILE input data type {self.input.data_type.name} differs from output "
                             f"{self.output.data_type.name}; DirectML needs the same type")
        if self.output.dimension_count != n:
            raise ShapeError(f"TILE input has {n} dimensions, output {self.output.dimension_count}; "
                             "DirectML needs the same DimensionCount")
        if len(self.repeats) != n:
            raise ShapeError(f"RepeatsCount {len(self.repeats)} (repeats {list(self.repeats)}) is not the "
                             f"input's DimensionCount {n}")
        for i, (a, r, o) in enumerate(zip(self.input.sizes, self.repeats, self.output.sizes, strict=True)):
            if r < 1:
                raise ShapeError(f"repeat {r} at axis {i} (repeats {list(self.repeats)}) must be >= 1: "
                                 "a DirectML output size cannot be 0")
            if a * r != o:
                raise ShapeError(f"output size {o} at axis {i} is not input size {a} * repeat {r}")
        self.output.validate(is_output=True)

    @classmethod
    def from_onnx(cls, data_type: DataType | str, shape: Sequence[int], repeats: Sequence[int]) -> TileOp:
        """What the DML EP builds for ONNX ``Tile(input of shape, repeats)``.

        >>> op = TileOp.from_onnx("float32", (1, 3, 1, 5), (1, 2, 1, 3))
        >>> op.input.sizes, op.output.sizes, op.repeats
        ((3, 5), (6, 15), (2, 3))

        Raises:
            ShapeError: repeats do not match the rank or hold a negative value (TileHelper).
            NotExpressibleError: the ONNX rank is over 8 (``DmlOperator::Initialize`` rejects
                it), or a repeat is 0 (an empty output: the EP creates no operator).
        """
        dtype = DataType.coerce(data_type)
        dims = int_tuple(shape, "Tile input shape")
        reps = int_tuple(repeats, "Tile repeats")
        if len(reps) != len(dims):
            raise ShapeError(f"Tile repeats {list(reps)} have {len(reps)} entries; the input {list(dims)} "
                             f"has rank {len(dims)} (TileHelper needs one repeat per axis)")
        negative = [r for r in reps if r < 0]
        if negative:
            raise ShapeError(f"Tile repeats {list(reps)} hold {negative[0]}; repeats must be >= 0")
        if len(dims) > MAX_DIMENSION_COUNT:
            raise NotExpressibleError(
                f"Tile input rank {len(dims)} ({list(dims)}) is over DirectML's {MAX_DIMENSION_COUNT} "
                "dimensions: DmlOperator::Initialize rejects it before the EP squeezes size-1 axes")
        out = tuple(n * r for n, r in zip(dims, reps, strict=True))
        if 0 in out:
            raise NotExpressibleError(
                f"Tile of {list(dims)} by {list(reps)} has the empty output {list(out)}: the DML EP "
                "creates no operator and dispatches nothing")
        keep = squeezed_axes(out)
        sq_in = tuple(dims[i] for i in keep) or (1,)
        sq_out = tuple(out[i] for i in keep) or (1,)
        sq_reps = tuple(reps[i] for i in keep)
        sq_reps = (1,) * (len(sq_out) - len(sq_reps)) + sq_reps
        return cls(BufferTensorDesc(dtype, sq_in), BufferTensorDesc(dtype, sq_out), sq_reps, out)

    @property
    def dimension_count(self) -> int:
        return self.input.dimension_count

    def run(self, dst: np.ndarray, src: np.ndarray, *, threads: int | None = None) -> None:
        """Write the input, repeated along every axis, into the output view."""
        check_views(dst, src, self.output, self.input, threads, writeable=True)
        strided_copy(_interleaved(dst, self.repeats, writeable=True), _broadcast_source(src, self.repeats),
                     threads=threads)

    def matches(self, src: np.ndarray, got: np.ndarray, *, threads: int | None = None) -> bool:
        """Whether every repeat of ``got`` equals the input, bit for bit."""
        check_views(got, src, self.output, self.input, threads, writeable=False, names=("got", "src"))
        return views_equal(_broadcast_source(src, self.repeats),
                           _interleaved(got, self.repeats, writeable=False), threads=threads)

    def _dml_index(self, index: Sequence[int]) -> tuple[int, ...]:
        idx = int_tuple(index, "index")
        rank = self.output.dimension_count
        if len(idx) == rank:
            return idx
        shape = self.onnx_output_shape
        if shape is None or len(shape) != len(idx):
            raise ShapeError(f"index {list(idx)} has {len(idx)} axes; the descriptors have {rank}"
                             + ("" if shape is None else f" and the ONNX output {len(shape)}"))
        kept = tuple(idx[i] for i in squeezed_axes(shape))
        return (0,) * (rank - len(kept)) + kept

    def buffer_offsets_in_elements(self, index: Sequence[int]) -> tuple[int | None, int]:
        """(input buffer offset read for the output ``index``, output buffer offset), in
        elements. The index is of the descriptors' rank, or of the ONNX output's rank when the
        operator knows the ONNX output shape (its squeezed axes are dropped)."""
        out = self._dml_index(index)
        src = tuple(o % n for o, n in zip(out, self.input.sizes, strict=True))
        return self.input.offset_of(src), self.output.offset_of(out)

    def to_dict(self) -> dict[str, Any]:
        """The DML desc's fields as a JSON-ready dict (:meth:`from_dict` inverts it)."""
        return {
            "operator": TILE,
            "input": self.input.to_dict(),
            "output": self.output.to_dict(),
            "repeats_count": len(self.repeats),
            "repeats": list(self.repeats),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TileOp:
        """Inverse of :meth:`to_dict` (``repeats_count``, where given, must count the repeats).

        Raises:
            DescriptorError: ``data`` is no TILE dict or a field is missing or not what it
                holds.
            ShapeError: the operator is not valid (as the constructor checks it).
        """
        fields = read_desc_dict(data, TILE, required=("input", "output", "repeats"),
                                optional=("repeats_count",))
        repeats = read_ints(fields, "repeats", TILE)
        check_count(fields, "repeats_count", TILE, f"repeats {list(repeats)}", len(repeats))
        return cls(read_tensor(fields, "input", TILE), read_tensor(fields, "output", TILE), repeats)

    def to_cpp(self, name: str = "tile") -> str:
        """C++ initializers of the descriptors and of DML_TILE_OPERATOR_DESC."""
        check_cpp_name(name)
        n = len(self.repeats)
        return "\n".join([
            self.input.to_cpp(f"{name}Input"), self.output.to_cpp(f"{name}Output"),
            f"UINT {name}Repeats[{n}] = {{{', '.join(map(str, self.repeats))}}};",
            f"DML_TILE_OPERATOR_DESC {name}Desc = {{&{name}InputTensor, &{name}OutputTensor, {n}, "
            f"{name}Repeats}};",
            f"DML_OPERATOR_DESC {name}Op = {{DML_OPERATOR_TILE, &{name}Desc}};",
        ])


# ---- the operator module -------------------------------------------------------------------
# per rank: shapes with distinct sizes and shapes with size-1 axes (squeezed when their repeat is 1)
_TILE_SHAPES: dict[int, tuple[tuple[int, ...], ...]] = {
    1: ((5,), (1,)),
    2: ((3, 4), (1, 4), (3, 1)),
    3: ((2, 3, 4), (1, 3, 1), (2, 1, 4)),
    4: ((2, 3, 4, 5), (1, 3, 1, 5), (1, 1, 2, 3)),
    5: ((2, 3, 2, 4, 3), (1, 2, 1, 3, 1)),
    6: (SUITE_SHAPES[6], (1, 1, 2, 1, 3, 1)),
    7: (SUITE_SHAPES[7], (1, 2, 1, 1, 3, 1, 2)),
    8: (SUITE_SHAPES[8], (1, 1, 1, 1, 1, 1, 1, 1)),
}


def _repeat_vectors(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """All 1s; a 2 on one axis at a time (every axis up to rank 4, else first, last and a
    size-1 one); 1, 2, 3 cycling; 2 on every size-1 axis; a large repeat on the last axis."""
    rank = len(shape)
    vecs: list[tuple[int, ...]] = [(1,) * rank]
    ones = [i for i, n in enumerate(shape) if n == 1]
    axes = list(range(rank)) if rank <= 4 else sorted({0, rank - 1, *ones[:1]})
    for a in axes:
        vecs.append(tuple(2 if i == a else 1 for i in range(rank)))
    vecs.append(tuple(1 + i % 3 for i in range(rank)))
    if ones:
        vecs.append(tuple(2 if n == 1 else 1 for n in shape))
    if rank <= 3:
        vecs.append((1,) * (rank - 1) + (7,))
    return list(dict.fromkeys(vecs))


class Tile(Operator):
    op_types = ("Tile",)
    case_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {"Tile": ("repeats",)}
    edge_specs = ({"shape": (), "repeats": ()}, {"shape": (2, 0), "repeats": (2, 3)},
                  {"shape": (2, 3), "repeats": (0, 1)})
    min_opset = TILE_INPUT_OPSET
    stride_view = False

    def check_case(self, case: Case) -> None:
        if case.repeats is None:
            raise ShapeError("a Tile case needs repeats")
        if len(case.repeats) != case.rank:
            raise ShapeError(f"Tile repeats {list(case.repeats)} have {len(case.repeats)} entries; the input "
                             f"{list(case.shape)} has rank {case.rank}")
        if any(r < 0 for r in case.repeats):
            raise ShapeError(f"Tile repeats {list(case.repeats)} must be >= 0")

    def id_parts(self, case: Case) -> list[str]:
        return ["reps" + ".".join(map(str, case.repeats or ()))]

    def output_shape(self, case: Case) -> tuple[int, ...]:
        return tuple(n * r for n, r in zip(case.shape, case.repeats or (), strict=True))

    def inexpressible_reason(self, case: Case) -> str:
        # a 4-bit type, over 8 dimensions (DmlOperator::Initialize rejects it before the EP
        # squeezes size-1 axes), over 2^32 - 1 elements
        reason = self.limits_reason(case)
        if reason:
            return reason
        if 0 in self.output_shape(case):
            return (f"Tile output {list(self.output_shape(case))} is empty: the DML EP creates no "
                    "DirectML operator and dispatches nothing")
        return ""

    def dml_operator(self, case: Case) -> TileOp:
        return TileOp.from_onnx(case.data_type, case.shape, case.repeats or ())

    def reference_output(self, case: Case, input_array: np.ndarray) -> np.ndarray:
        x = np.asarray(input_array)
        return np.asarray(np.tile(x, case.repeats or ()).reshape(self.output_shape(case)), order="C")

    def add_node(self, graph: onnx.GraphProto, index: int, case: Case, opset: int) -> None:
        """Tile-6 / Tile-13 with the repeats as the int64 initializer ``repeats{index}``."""
        if opset < TILE_INPUT_OPSET:
            raise ModelError(f"case {case.id}: Tile needs opset >= {TILE_INPUT_OPSET} (Tile-1 takes tiles "
                             f"and axis, and has no DML kernel), got {opset}")
        int64_initializer(graph, f"repeats{index}", case.repeats or ())
        add_node(graph, "Tile", [f"x{index}", f"repeats{index}"], f"y{index}", f"n{index}_{case.op}", case.id)

    def suite_cases(self, dtypes: Sequence[DataType], ranks: set[int], seed: int) -> list[Case]:
        """Ranks 1 to 8: shapes with and without size-1 axes, repeats of 1 (squeezed when the
        axis has size 1) and above; every type up to rank 2, two types beyond; special values and
        iota up to rank 4; Tile-6 (opset 12). Zero repeats (an empty output) are left out."""
        out: list[Case] = []
        for rank in sorted(ranks & set(range(1, 9))):
            for s, shape in enumerate(_TILE_SHAPES[rank]):
                for k, reps in enumerate(_repeat_vectors(shape)):
                    chosen = list(dtypes) if rank <= 2 else \
                        list(dict.fromkeys([dtypes[0], rotating(dtypes, s + k + 1)]))
                    out += [Case("Tile", dt, shape, repeats=reps) for dt in chosen]
            if rank <= 4:
                shape = _TILE_SHAPES[rank][-1]
                reps = tuple(1 + i % 3 for i in range(rank))
                for dt in dtypes:
                    out.append(Case("Tile", dt, shape, repeats=reps, values="special"))
                    out.append(Case("Tile", dt, shape, repeats=reps, values="iota"))
            if rank == 3:
                for dt in dtypes:
                    out.append(Case("Tile", dt, (2, 1, 4), repeats=(2, 3, 1), opset=12))
        return out

    def diagnosis_candidates(self, ctx: DiagnosisContext) -> Iterator[Candidate]:
        """The repeats applied to the wrong axes: the squeezed repeats right-aligned onto the
        unsqueezed input, the repeats aligned left of a 4-D input, permuted; then the input read
        packed."""
        op = ctx.op
        assert isinstance(op, TileOp)
        dims = tuple(ctx.case.shape)
        reps = tuple(ctx.case.repeats or ())
        count = math.prod(reps)
        seen = {(op.input.sizes, op.repeats)}

        def tiled(sizes: tuple[int, ...], alt: tuple[int, ...]) -> Callable[[], CandidateResult]:
            def run() -> CandidateResult:
                out = BufferTensorDesc(ctx.dtype, tuple(n * r for n, r in zip(sizes, alt, strict=True)))
                return ctx.run(TileOp(BufferTensorDesc(ctx.dtype, sizes), out, alt))
            return run

        def fresh(sizes: tuple[int, ...], alt: tuple[int, ...]) -> bool:
            if len(sizes) != len(alt) or not sizes or math.prod(alt) != count or (sizes, alt) in seen:
                return False
            seen.add((sizes, alt))
            return True

        right = f"repeats {fmt_ints(op.repeats)} on input sizes {fmt_ints(op.input.sizes)}"
        keep = squeezed_axes(tuple(n * r for n, r in zip(dims, reps, strict=True))) if dims else ()
        squeezed = tuple(reps[i] for i in keep)
        if len(dims) > len(squeezed) and squeezed:  # the squeeze removed axes: the unsqueezed input
            alt = (1,) * (len(dims) - len(squeezed)) + squeezed
            if fresh(dims, alt):
                yield (f"the squeezed repeats {fmt_ints(squeezed)} right-aligned onto the unsqueezed input "
                       f"{fmt_ints(dims)} (repeats {fmt_ints(alt)} instead of {right})", tiled(dims, alt))
        for base, base_reps, what in ((dims, reps, "ONNX"), (op.input.sizes, op.repeats, "squeezed")):
            if not base or len(base) >= 4:
                continue
            pad = 4 - len(base)
            sizes, alt = (1,) * pad + tuple(base), tuple(base_reps) + (1,) * pad
            if fresh(sizes, alt):
                yield (f"the {what} repeats aligned left of the input right-aligned to 4-D (repeats "
                       f"{fmt_ints(alt)} on input sizes {fmt_ints(sizes)} instead of {right})",
                       tiled(sizes, alt))
        rank = op.input.dimension_count
        perms: Iterator[tuple[int, ...]]
        if rank <= _ALL_PERMS_MAX_RANK:
            perms = itertools.permutations(range(rank))
        else:
            perms = iter([tuple(range(rank))[::-1]] + [
                tuple(j if k == i else i if k == j else k for k in range(rank))
                for i, j in itertools.combinations(range(rank), 2)])
        for sigma in perms:
            alt = tuple(op.repeats[sigma[i]] for i in range(rank))
            if fresh(op.input.sizes, alt):
                yield (f"the repeats applied to the wrong axes (repeats {fmt_ints(alt)} instead of {right})",
                       tiled(op.input.sizes, alt))
        # last: the output is larger than the input, so this reads past the input buffer and
        # can only match on the part inside it
        yield ("the input read packed (a plain copy of the input buffer in the output's sizes, nothing "
               "repeated)", lambda: ctx.read(BufferTensorDesc(ctx.dtype, op.output.sizes)))

    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        if opset < TILE_INPUT_OPSET:
            flags.append(f"no-dml-kernel: Tile-1 (opset {opset}) has no DML kernel; the DML EP registers "
                         "Tile-6 and Tile-13")
            return None, None, {}, False
        repeats = const_ints(graph, node, 1, "repeats", flags, opset)
        params["repeats"] = repeats
        if shape is None or dtype is None or repeats is None:
            return None, None, {}, False
        if len(repeats) != len(shape):
            raise ShapeError(f"Tile repeats {list(repeats)} have {len(repeats)} entries; the input "
                             f"{list(shape)} has rank {len(shape)}")
        out_shape = tuple(n * r for n, r in zip(shape, repeats, strict=True))
        try:
            op = TileOp.from_onnx(dtype, shape, repeats)
        except NotExpressibleError as e:
            flags.append(f"{'empty' if 0 in out_shape else 'dimensions'}: {e}")
            return out_shape, None, {}, False
        return out_shape, op.to_dict(), {"input": op.input, "output": op.output}, False

    def case_from_node(self, dtype: DataType, shape: tuple[int, ...], params: dict[str, Any], *,
                       values: str, seed: int, origin: str, opset: int | None = None) -> Case | None:
        if params.get("repeats") is None:
            return None
        return Case("Tile", dtype, shape, repeats=params["repeats"], values=values, seed=seed, origin=origin,
                    opset=opset)
