"""Parameter recovery: the DirectML operator parameters a GPU applied, read back from its output.

The input is the source-index map of the EP's output (``engine/recover.py``: for every output
element, the flat index of the input element it holds, -1 where it holds none). Each DirectML
operator the DML EP builds for the data-movement family moves elements by a few parameters,
and each is fitted here from that map, in the operator's own terms, then checked by running
the operator with the fitted parameters on an index input and comparing maps exactly:

- PADDING1 (``DmlOperatorPadding`` in ``DmlOperatorPadding.cpp``: the ONNX pads split into start and
  end padding, the input coerced to 4-D with leading zero padding; ``DML_PADDING1_OPERATOR_DESC``):
  per axis where the input sits in the output, the border's mode (CONSTANT, EDGE, REFLECTION,
  SYMMETRIC, WRAP) and the constant (:func:`recover_padding`).
- SLICE1 (``DmlOperatorSlice`` in ``DmlOperatorSlice.cpp``, the window from
  ``SliceHelper::Initialize`` in ``OperatorHelper.cpp``; ``DML_SLICE1_OPERATOR_DESC``): per axis
  the first input element read and the signed step, so InputWindowOffsets / Sizes / Strides
  (the smallest window that reads them; a size past the last element read is not visible).
- JOIN and SPLIT (``DmlOperatorConcat.cpp``, ``DmlOperatorSplit.cpp``; the descriptors packed and
  right-aligned to 4-D by ``DmlOperator::Initialize``, ``Axis = GetDmlAdjustedAxis(axis)`` in
  ``OperatorUtility.cpp``; ``DML_JOIN_OPERATOR_DESC``, ``DML_SPLIT_OPERATOR_DESC``): the axis
  and, per tensor, its offset along it. A wrong offset is modelled as each input written (JOIN)
  or each output read (SPLIT) through the packed strides of the whole tensor from a base
  offset of ``offset * stride[Axis]`` elements; elements past the buffer are dropped (JOIN) or
  hold no input element (SPLIT), and a later JOIN input overwrites an earlier one.
- TILE (``DmlOperatorTile.cpp``, ``TileHelper::Initialize``; ``DML_TILE_OPERATOR_DESC``, over the
  EP's squeezed descriptors): the Repeats, from the periodicity of the map.
- DEPTH_TO_SPACE1 (``DmlOperatorDepthToSpace.cpp``, the order from ``MapStringToDepthSpaceMode``
  in ``OperatorUtility.cpp``) and SPACE_TO_DEPTH (``DmlOperatorSpaceToDepth.cpp``): BlockSize and
  the order (DCR = DML_DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW, CRD = COLUMN_ROW_DEPTH).

:func:`recover_input_reads` fits, per input tensor, the descriptor its buffer was read through
(sizes, strides, a base offset) with the operator itself right: the operator run with packed
inputs gives every output element's logical input coordinate, and ``offset + dot(coordinate,
strides)`` is fitted to the buffer element the output holds.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ort_layouts._errors import OrtLayoutsError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.case import Case
from ort_layouts.operators.depth_space import DepthSpaceOrder, DepthToSpaceOp, SpaceToDepthOp
from ort_layouts.operators.join_split import JoinOp, SplitOp, along_axis
from ort_layouts.operators.padding import PaddingOp
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.operators.slice import Slice1Op
from ort_layouts.operators.tile import TileOp
from ort_layouts.reference.buffers import unpack
from ort_layouts.reference.execute import AnyDmlOperator, execute_all, input_descs, output_descs

__all__ = [
    "DML_PADDING_MODES",
    "Found",
    "InputRead",
    "PaddingFit",
    "fit_coords",
    "fmt",
    "index_feeds",
    "index_map",
    "operator_name",
    "recover_input_reads",
    "recover_padding",
    "recover_parameters",
    "retyped",
]

IndexMap = npt.NDArray[np.int64]

_COORD_LIMIT = 1 << 20  # elements: no parameter recovery or per-input fit above this
_HINT_COMBOS = 4096  # stride combinations tried for axes never read inside the buffer, at most
_HINT_ELEMENTS = 1 << 24  # ... and elements predicted over all of them: a large map gets fewer
_PERMUTED_REPEATS_MAX_RANK = 5  # Tile: permutations of the repeats tried up to this rank
_ORDERS = {DepthSpaceOrder.DEPTH_COLUMN_ROW: "DCR", DepthSpaceOrder.COLUMN_ROW_DEPTH: "CRD"}


class Found(NamedTuple):
    """A recovered set of operator parameters, in the fields of ``recover.Recovery``."""

    kind: str
    operator: str
    applied: dict[str, Any]
    expected: dict[str, Any]
    names: tuple[str, ...]
    text: str


def fmt(values: Sequence[int]) -> str:
    """``[1,2,3]``: integers as a recovery prints them."""
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _amount(count: int, what: str = "element") -> str:
    n = abs(int(count))
    return f"one {what}" if n == 1 else f"{n} {what}s"


def _packed_strides(sizes: Sequence[int]) -> npt.NDArray[np.int64]:
    return np.array([math.prod(sizes[k + 1:]) for k in range(len(sizes))], dtype=np.int64)


def _coords(flat: np.ndarray, sizes: Sequence[int]) -> npt.NDArray[np.int64]:
    """[N, rank] coordinates of flat C-order indices over ``sizes``."""
    if not len(sizes):
        return np.zeros((np.asarray(flat).size, 0), dtype=np.int64)
    return np.stack(np.unravel_index(np.asarray(flat, dtype=np.int64), tuple(sizes)), axis=1).astype(np.int64)


# ---- running an operator on indices ---------------------------------------------------------
def operator_name(op: AnyDmlOperator) -> str:
    """The DirectML operator's name, e.g. ``DML_OPERATOR_SLICE1`` (its ``to_dict`` field)."""
    return str(op.to_dict().get("operator", ""))


def _i64(desc: BufferTensorDesc, packed: bool = True) -> BufferTensorDesc:
    return BufferTensorDesc(DataType.INT64, desc.sizes, None if packed else desc.strides)


def retyped(op: AnyDmlOperator, *, packed_inputs: bool) -> AnyDmlOperator:
    """The operator on INT64 tensors of the same sizes (Pad's constant -1), the inputs packed
    when ``packed_inputs`` (else with their strides): run on index buffers it gives, for every
    output element, the index it reads."""
    out: Any
    if isinstance(op, JoinOp):
        out = dataclasses.replace(op, inputs=tuple(_i64(d, packed_inputs) for d in op.inputs),
                                  output=_i64(op.output))
    elif isinstance(op, SplitOp):
        out = dataclasses.replace(op, input=_i64(op.input, packed_inputs),
                                  outputs=tuple(_i64(d) for d in op.outputs))
    elif isinstance(op, PaddingOp):
        out = dataclasses.replace(op, input=_i64(op.input, packed_inputs), output=_i64(op.output),
                                  padding_value_bytes=b"\xff" * 8)
    else:
        op_any: Any = op
        out = dataclasses.replace(op_any, input=_i64(op_any.input, packed_inputs), output=_i64(op_any.output))
    return out  # type: ignore[no-any-return]


def index_map(op: AnyDmlOperator, buffers: Sequence[np.ndarray]) -> IndexMap:
    """Every output element of an INT64 operator run on ``buffers`` (one per input), flat,
    outputs one after another."""
    raws = execute_all(op, [np.ascontiguousarray(np.asarray(b, dtype=np.int64).reshape(-1)) for b in buffers])
    parts = [np.asarray(unpack(d, raw), dtype=np.int64).reshape(-1)
             for d, raw in zip(output_descs(op), raws, strict=True)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def index_feeds(case: Case) -> list[np.ndarray]:
    """The buffers the DirectML operator binds when the case's input holds its own flat index:
    what each input buffer element is, as an index into the case's input (Concat's inputs are
    cut from it)."""
    operator = operator_for_type(case.op)
    whole = np.arange(math.prod(case.shape), dtype=np.int64).reshape(case.shape)
    feeds = operator.dml_inputs(case, operator.input_feeds(case, whole))
    return [np.asarray(f, dtype=np.int64) for f in feeds]


def _owners(feeds: Sequence[np.ndarray], total: int) -> tuple[IndexMap, IndexMap]:
    """(the input each case-input element is bound in, its element index in that buffer)."""
    owner = np.full(total, -1, dtype=np.int64)
    local = np.zeros(total, dtype=np.int64)
    for k, f in enumerate(feeds):
        flat = np.asarray(f, dtype=np.int64).reshape(-1)
        owner[flat] = k
        local[flat] = np.arange(flat.size, dtype=np.int64)
    return owner, local


# ---- a strided read over given coordinates -------------------------------------------------
def fit_coords(targets: np.ndarray, coords: np.ndarray, sizes: Sequence[int], element_count: int,
               hints: Sequence[int] = ()) -> tuple[tuple[int, ...], int, int, tuple[int, ...]] | None:
    """``offset + dot(coords, strides)`` that gives ``targets`` exactly, where ``targets`` are
    buffer element indices (-1: the element read lies outside ``[0, element_count)``) and
    ``coords`` the [N, rank] logical coordinates over ``sizes`` each was read at. Returns
    (strides, offset, elements read outside the buffer, axes never seen varying), or None.

    Axes of size > 1 whose coordinate never varies among the elements read inside the buffer
    take the first of ``hints`` that keeps every outside read outside.
    """
    t = np.asarray(targets, dtype=np.int64).reshape(-1)
    c = np.asarray(coords, dtype=np.int64).reshape(t.size, len(sizes))
    known = t >= 0
    if not known.any() or t.size > _COORD_LIMIT:
        return None
    ck = c[known]
    rank = len(sizes)
    seen = [k for k in range(rank) if sizes[k] > 1 and np.unique(ck[:, k]).size > 1]
    design = np.concatenate([np.ones((ck.shape[0], 1)), ck[:, seen].astype(np.float64)], axis=1)
    solution, *_ = np.linalg.lstsq(design, t[known].astype(np.float64), rcond=None)
    ints = np.rint(solution).astype(np.int64)
    base = [0] * rank
    for k, v in zip(seen, ints[1:], strict=True):
        base[k] = int(v)
    offset = int(ints[0])
    unseen = [k for k in range(rank) if sizes[k] > 1 and k not in seen]
    for combo in hint_combos(hints, len(unseen), t.size):
        strides = list(base)
        for k, v in zip(unseen, combo, strict=True):
            strides[k] = v
        off = offset - sum(strides[k] * int(ck[0, k]) for k in unseen)
        predicted = off + c @ np.array(strides, dtype=np.int64) if rank else np.full(t.size, off)
        if (predicted[known] != t[known]).any():
            continue
        outside = (predicted < 0) | (predicted >= element_count)
        if (~known & ~outside).any():
            continue
        return tuple(strides), off, int((~known & outside).sum()), tuple(unseen)
    return None


def hint_combos(hints: Sequence[int], axes: int, element_count: int) -> Iterator[tuple[int, ...]]:
    """The stride combinations a fit tries for ``axes`` axes never read inside the buffer: each
    of ``hints`` (once each, in order; 0 without any) on each axis, at most :data:`_HINT_COMBOS`
    of them and :data:`_HINT_ELEMENTS` elements predicted over all (``element_count`` a
    combination): a dispatch that wrote one element leaves every axis unseen, and trying all
    ``len(hints) ** axes`` took minutes at rank 8."""
    if not axes:
        return iter([()])
    choices = list(dict.fromkeys(int(h) for h in hints)) or [0]
    limit = max(1, min(_HINT_COMBOS, _HINT_ELEMENTS // max(1, element_count)))
    return itertools.islice(itertools.product(choices, repeat=axes), limit)


@dataclasses.dataclass(frozen=True, slots=True)
class InputRead:
    """How one input buffer of an operator was read: through ``sizes`` (the input
    descriptor's) with ``strides_in_elements`` from ``offset_in_elements``.

    Attributes:
        index: the DirectML input (its position in the operator's inputs).
        sizes: the input descriptor's sizes.
        strides_in_elements: the strides fitted (size-1 axes keep the expected stride).
        offset_in_elements: the buffer element the coordinate 0 reads.
        expected_strides_in_elements: the descriptor's own strides.
        element_count: the elements the buffer holds.
        past_end_count: output elements whose read lies outside the buffer.
        unobserved_axes: axes never read inside the buffer with more than one coordinate.
    """

    index: int
    sizes: tuple[int, ...]
    strides_in_elements: tuple[int, ...]
    offset_in_elements: int
    expected_strides_in_elements: tuple[int, ...]
    element_count: int
    past_end_count: int = 0
    unobserved_axes: tuple[int, ...] = ()

    @property
    def wrong(self) -> bool:
        """Whether the read differs from the descriptor's (axes of size > 1 only)."""
        return self.offset_in_elements != 0 or any(
            s != e for n, s, e in zip(self.sizes, self.strides_in_elements,
                                      self.expected_strides_in_elements, strict=True) if n > 1)


def recover_input_reads(op: AnyDmlOperator, observed: IndexMap,
                        feeds: Sequence[np.ndarray]) -> list[InputRead] | None:
    """The read of every input buffer, with the operator itself right (see the module
    docstring), or None when no strided read per input reproduces ``observed`` (flat over all
    outputs, indices into the case's input; ``feeds`` from :func:`index_feeds`)."""
    descs = input_descs(op)
    counts = [d.element_count for d in descs]
    if len(feeds) != len(descs) or [np.asarray(f).size for f in feeds] != counts:
        return None
    m = np.asarray(observed, dtype=np.int64).reshape(-1)
    total = sum(counts)
    if m.size > _COORD_LIMIT or (m >= total).any():
        return None
    starts = np.cumsum([0, *counts])
    try:
        logical = index_map(retyped(op, packed_inputs=True),
                            [np.arange(c, dtype=np.int64) + starts[k] for k, c in enumerate(counts)])
    except OrtLayoutsError:
        return None
    if logical.size != m.size or ((logical < 0) & (m >= 0)).any():
        return None
    k_exp = np.where(logical >= 0, np.searchsorted(starts, logical, side="right") - 1, -1)
    local_exp = logical - starts[np.maximum(k_exp, 0)]
    owner, local = _owners(feeds, total)
    src = np.where(m >= 0, m, 0)
    k_obs = np.where(m >= 0, owner[src], -1)
    if ((m >= 0) & (k_obs != k_exp)).any():
        return None  # an element read from another input's buffer
    item = max(1, descs[0].data_type.bitwidth // 8)
    reads = []
    for k, desc in enumerate(descs):
        sel = k_exp == k
        if not sel.any():
            return None
        expected = tuple(int(s) for s in desc.effective_strides)
        targets = np.where(m[sel] >= 0, local[src[sel]], -1)
        packed = [int(s) for s in _packed_strides(desc.sizes)]
        hints = [*expected, *(e * item for e in expected), *packed]
        fit = fit_coords(targets, _coords(local_exp[sel], desc.sizes), desc.sizes, counts[k],
                         [h for h in hints if h])
        if fit is None:
            return None
        strides, offset, past, unseen = fit
        strides = tuple(s if n > 1 else e for s, n, e in zip(strides, desc.sizes, expected, strict=True))
        reads.append(InputRead(k, tuple(desc.sizes), strides, offset, expected, counts[k], past, unseen))
    return reads


# ---- PADDING1 -------------------------------------------------------------------------------
_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")
#: numpy's pad mode -> DML_PADDING_MODE's name
DML_PADDING_MODES = {"constant": "CONSTANT", "edge": "EDGE", "reflect": "REFLECTION",
                     "symmetric": "SYMMETRIC", "wrap": "WRAP"}


def _mode_name(mode: str) -> str:
    """DML_PADDING_MODE's name of numpy's pad mode (each of "a|b" when ambiguous)."""
    return "|".join(DML_PADDING_MODES.get(m, m.upper()) for m in mode.split("|"))


@dataclasses.dataclass(frozen=True, slots=True)
class PaddingFit:
    """Start/end padding per axis, the mode, and (constant mode) the constant's bits.

    ``mode`` is numpy's name ("constant", "edge", "reflect", "symmetric", "wrap"), or several
    joined by "|" when the output cannot tell them apart.
    """

    start_padding: tuple[int, ...]
    end_padding: tuple[int, ...]
    mode: str
    constant_bits: int | None = None

    def describe(self) -> str:
        text = (f"start padding {fmt(self.start_padding)} end padding {fmt(self.end_padding)} "
                f"mode {_mode_name(self.mode)}")
        if self.mode == "constant" and self.constant_bits is not None:
            text += f" constant 0x{self.constant_bits:x}"
        return text

    def resolved(self, preferred: str) -> PaddingFit:
        """One mode: ``preferred`` when the output cannot tell it from the others, else the
        first (in DML_PADDING_MODE's order)."""
        modes = self.mode.split("|")
        if len(modes) == 1:
            return self
        return dataclasses.replace(self, mode=preferred if preferred in modes else modes[0])

    def differences(self, expected: PaddingFit) -> list[str]:
        """What differs from ``expected``, named ([] when nothing does)."""
        if self == expected or (self.constant_bits is None and dataclasses.replace(
                expected, constant_bits=None) == self):
            return []
        names = []
        if (self.start_padding, self.end_padding) == (expected.end_padding, expected.start_padding) \
                and self.start_padding != self.end_padding:
            names.append("start and end padding swapped")
        else:
            for axis, (a, b, c, d) in enumerate(zip(self.start_padding, self.end_padding,
                                                    expected.start_padding, expected.end_padding,
                                                    strict=True)):
                if (a, b) != (c, d):
                    names.append(f"axis {axis} padded {a}/{b} instead of {c}/{d}")
        if self.mode != expected.mode:
            names.append(f"mode {_mode_name(self.mode)} instead of {_mode_name(expected.mode)}")
        elif self.mode == "constant" and expected.constant_bits is not None \
                and self.constant_bits != expected.constant_bits:
            names.append(f"constant 0x{self.constant_bits or 0:x} instead of 0x{expected.constant_bits:x}")
        return names

    def compare(self, expected: PaddingFit) -> str:
        names = self.differences(expected)
        if not names:
            return ""
        return (f"recovered: the GPU padded {self.describe()}; expected {expected.describe()}: "
                + "; ".join(names))


def _border_source(mode: str, j: int, n: int, side: str) -> int:
    """The source coordinate numpy's pad mode gives the j-th (1-based) border element."""
    if mode == "edge":
        return 0 if side == "start" else n - 1
    if mode == "reflect":
        k = j % (2 * (n - 1)) if n > 1 else 0
        k = k if k <= n - 1 else 2 * (n - 1) - k
    elif mode == "symmetric":
        k = (j - 1) % (2 * n)
        k = k if k < n else 2 * n - 1 - k
    else:  # wrap
        return (n - j % n) % n if side == "start" else (j - 1) % n
    return k if side == "start" else n - 1 - k


def recover_padding(index_map: IndexMap, input_shape: Sequence[int], output_shape: Sequence[int],
                    constant_bits: np.ndarray | None = None) -> PaddingFit | None:
    """Start/end padding, mode and constant of a padded output, from its source-index map
    (flat over ``output_shape``) and, for constant mode, the bits of the elements that hold no
    input element. None when the map is no padding of the input with one mode, or (given the
    bits) the border holds more than one constant: no PADDING1 writes that (a dispatch that
    stopped in the border).

    The mode is the one every padded axis's border agrees with; where several do (an edge of
    one element reads the same in EDGE and SYMMETRIC), they are all given, joined by "|".
    """
    in_shape, out_shape = tuple(input_shape), tuple(output_shape)
    m = np.asarray(index_map, dtype=np.int64).reshape(out_shape)
    if not in_shape or len(in_shape) != len(out_shape) or not (m >= 0).any():
        return None
    src = np.unravel_index(np.where(m >= 0, m, 0), in_shape)
    starts, ends = [], []
    modes: set[str] = set(_MODES)
    for d, (n, size) in enumerate(zip(in_shape, out_shape, strict=True)):
        coords = np.full(size, -1)
        for i in range(size):
            known = np.take(m, i, axis=d) >= 0
            values = np.unique(np.take(src[d], i, axis=d)[known])
            if values.size > 1:
                return None
            coords[i] = values[0] if values.size else -1
        start = next((p for p in range(size - n + 1)
                      if np.array_equal(coords[p:p + n], np.arange(n))), None)
        if start is None:
            return None
        end = size - start - n
        starts.append(start)
        ends.append(end)
        border = [(j, coords[start - j], "start") for j in range(1, start + 1)] + \
                 [(j, coords[start + n - 1 + j], "end") for j in range(1, end + 1)]
        if not border:
            continue
        if all(c < 0 for _, c, _ in border):
            modes &= {"constant"}
        else:
            modes &= {mode for mode in _MODES[1:]
                      if all(c == _border_source(mode, j, n, side) for j, c, side in border)}
        if not modes:
            return None
    mode = "|".join(x for x in _MODES if x in modes)
    constant = None
    if constant_bits is not None and mode == "constant":
        values = np.unique(np.asarray(constant_bits).reshape(-1)[(m < 0).reshape(-1)])
        if values.size > 1:
            return None
        constant = int(values[0]) if values.size == 1 else None
    return PaddingFit(tuple(starts), tuple(ends), mode, constant)


# ---- SLICE1 ---------------------------------------------------------------------------------
def _slice(op: Slice1Op, m: IndexMap) -> Found | None:
    out, ins = op.output.sizes, op.input.sizes
    if m.size != math.prod(out) or (m < 0).any() or (m >= math.prod(ins)).any():
        return None
    source = _coords(m, ins)
    grid = _coords(np.arange(m.size), out)
    exp_first, exp_strides = op.copy_start(), op.input_window_strides
    offsets, sizes, strides, names = [], [], [], []
    for d, n in enumerate(out):
        first = int(source[0, d])
        step = int(source[math.prod(out[d + 1:]), d]) - first if n > 1 else 0
        if not np.array_equal(source[:, d], first + step * grid[:, d]) or (n > 1 and step == 0):
            return None
        if first == exp_first[d] and (n == 1 or step == exp_strides[d]):
            offsets.append(op.input_window_offsets[d])
            sizes.append(op.input_window_sizes[d])
            strides.append(exp_strides[d])
            continue
        k = step if n > 1 else exp_strides[d]
        size = (n - 1) * abs(k) + 1
        offsets.append(first if k > 0 else first - size + 1)
        sizes.append(size)
        strides.append(k)
        if n > 1 and k != exp_strides[d]:
            if k == -exp_strides[d]:
                names.append(f"axis {d} read {'forwards' if k > 0 else 'backwards'} (stride {k} instead of "
                             f"{exp_strides[d]})")
            else:
                names.append(f"stride {k} instead of {exp_strides[d]} on axis {d}")
        if first != exp_first[d]:
            late = "late" if first > exp_first[d] else "early"
            what = "window starts" if k > 0 else "window's first read (its end: the stride is negative)"
            names.append(f"{what} {_amount(first - exp_first[d])} {late} on axis {d}")
    try:
        applied_op = Slice1Op(op.input, op.output, tuple(offsets), tuple(sizes), tuple(strides))
    except OrtLayoutsError:
        return None
    keys = ("input_window_offsets", "input_window_sizes", "input_window_strides")
    applied: dict[str, Any] = {k: list(getattr(applied_op, k)) for k in keys}
    expected: dict[str, Any] = {k: list(getattr(op, k)) for k in keys}
    applied["operator_dict"] = applied_op.to_dict()
    expected["operator_dict"] = op.to_dict()
    text = (f"recovered: the GPU sliced the input window offsets {fmt(offsets)} sizes {fmt(sizes)} strides "
            f"{fmt(strides)}; expected offsets {fmt(op.input_window_offsets)} sizes "
            f"{fmt(op.input_window_sizes)} strides {fmt(op.input_window_strides)}: {'; '.join(names)}")
    return Found("slice", operator_name(op), applied, expected, tuple(names), text)


# ---- JOIN and SPLIT -------------------------------------------------------------------------
def _order_name(offsets: Sequence[int], parts: Sequence[int], what: str) -> str | None:
    """"inputs 0 and 1 swapped" when ``offsets`` are the back-to-back offsets of the parts in
    another order; None otherwise."""
    order = sorted(range(len(offsets)), key=lambda k: offsets[k])
    position = 0
    for k in order:
        if offsets[k] != position:
            return None
        position += parts[k]
    if order == list(range(len(order))):
        return None
    if len(order) == 2:
        return f"{what}s 0 and 1 swapped"
    return f"{what}s in the order {fmt(order)} instead of {fmt(range(len(order)))}"


def _join_map(out_sizes: Sequence[int], in_sizes: Sequence[Sequence[int]], offsets: Sequence[int], axis: int,
              feeds: Sequence[np.ndarray]) -> IndexMap:
    """Each input written, in order, through the output's packed strides from element
    ``offsets[k] * stride[axis]``; writes outside the output are dropped."""
    strides = _packed_strides(out_sizes)
    total = math.prod(out_sizes)
    out = np.full(total, -1, dtype=np.int64)
    for sizes, off, feed in zip(in_sizes, offsets, feeds, strict=True):
        flat = np.asarray(feed, dtype=np.int64).reshape(-1)
        position = off * int(strides[axis]) + _coords(np.arange(flat.size), sizes) @ strides
        inside = (position >= 0) & (position < total)
        out[position[inside]] = flat[inside]
    return out


def _join(op: JoinOp, m: IndexMap, feeds: Sequence[np.ndarray]) -> Found | None:
    total = sum(np.asarray(f).size for f in feeds)
    if m.size != op.output.element_count or (m >= total).any() or len(feeds) != op.input_count:
        return None
    owner, local = _owners(feeds, total)
    known = m >= 0
    src = np.where(known, m, 0)
    who = np.where(known, owner[src], -1)
    strides = _packed_strides(op.output.sizes)
    counts = [d.element_count for d in op.inputs]
    candidates: list[tuple[int, tuple[BufferTensorDesc, ...]]] = [(op.axis, op.inputs)]
    for a in range(op.dimension_count):
        descs = along_axis(op.output, counts, a) if a != op.axis else None
        if descs is not None:
            candidates.append((a, descs))
    for axis, descs in candidates:
        step = int(strides[axis])
        found: list[int | None] = []
        for k, desc in enumerate(descs):
            sel = who == k
            if not sel.any():
                found.append(None)
                continue
            base = np.flatnonzero(sel) - _coords(local[src[sel]], desc.sizes) @ strides
            if (base != base[0]).any() or int(base[0]) % step:
                break
            found.append(int(base[0]) // step)
        else:
            parts = [d.sizes[axis] for d in descs]
            starts = [sum(parts[:k]) for k in range(len(parts))]
            past = -(-m.size // step)
            sizes = [d.sizes for d in descs]
            for fill in (starts, [past] * len(parts)):
                offsets = [f if o is None else o for o, f in zip(found, fill, strict=True)]
                if np.array_equal(_join_map(op.output.sizes, sizes, offsets, axis, feeds), m):
                    return _join_found(op, axis, offsets, found, parts, past)
    return None


def _join_found(op: JoinOp, axis: int, offsets: list[int], found: list[int | None], parts: list[int],
                past: int) -> Found:
    notes = []
    for k, (o, e) in enumerate(zip(offsets, op.offsets_along_axis, strict=True)):
        if found[k] is None and o == past:
            notes.append(f"input {k} not written")
        elif found[k] is None:
            notes.append(f"input {k} overwritten")
        elif o != e or axis != op.axis:
            notes.append(f"input {k} written at offset {o} instead of {e} along axis {axis}")
    return _along_axis_found("join", op, axis, offsets, parts, "input", "joined", "at", notes)


def _along_axis_found(kind: str, op: JoinOp | SplitOp, axis: int, offsets: list[int], parts: list[int],
                      tensor: str, verb: str, preposition: str, notes: list[str]) -> Found:
    """A JOIN's or SPLIT's recovered axis and offsets, named: the other axis, then the
    ``tensor``s' other order along the axis or, when they are in no other order, ``notes``
    (what happened to each)."""
    expected = list(op.offsets_along_axis)
    names = [f"{verb} along axis {axis} instead of {op.axis}"] if axis != op.axis else []
    order = _order_name(offsets, parts, tensor) if axis == op.axis else None
    names += [order] if order else notes
    text = (f"recovered: the GPU {verb} along axis {axis} {preposition} offsets {fmt(offsets)}; "
            f"expected axis {op.axis} offsets {fmt(expected)}: {'; '.join(names)}")
    return Found(kind, operator_name(op), {"axis": axis, "offsets_along_axis": offsets},
                 {"axis": op.axis, "offsets_along_axis": expected}, tuple(names), text)


def _split_map(in_sizes: Sequence[int], out_sizes: Sequence[Sequence[int]], offsets: Sequence[int],
               axis: int) -> IndexMap:
    """Each output read through the input's packed strides from element ``offsets[k] *
    stride[axis]``; reads outside the input hold no input element (-1)."""
    strides = _packed_strides(in_sizes)
    total = math.prod(in_sizes)
    parts = []
    for sizes, off in zip(out_sizes, offsets, strict=True):
        position = off * int(strides[axis]) + _coords(np.arange(math.prod(sizes)), sizes) @ strides
        parts.append(np.where((position >= 0) & (position < total), position, -1))
    return np.concatenate(parts)


def _split(op: SplitOp, m: IndexMap) -> Found | None:
    counts = [d.element_count for d in op.outputs]
    if m.size != sum(counts) or (m >= op.input.element_count).any():
        return None
    strides = _packed_strides(op.input.sizes)
    segments = np.split(m, np.cumsum(counts)[:-1])
    candidates: list[tuple[int, tuple[BufferTensorDesc, ...]]] = [(op.axis, op.outputs)]
    for a in range(op.dimension_count):
        descs = along_axis(op.input, counts, a) if a != op.axis else None
        if descs is not None:
            candidates.append((a, descs))
    for axis, descs in candidates:
        step = int(strides[axis])
        past = -(-op.input.element_count // step)
        found: list[int | None] = []
        for seg, desc in zip(segments, descs, strict=True):
            known = seg >= 0
            if not known.any():
                found.append(None)
                continue
            base = seg[known] - _coords(np.flatnonzero(known), desc.sizes) @ strides
            if (base != base[0]).any() or int(base[0]) % step:
                break
            found.append(int(base[0]) // step)
        else:
            offsets = [past if o is None else o for o in found]
            if np.array_equal(_split_map(op.input.sizes, [d.sizes for d in descs], offsets, axis), m):
                return _split_found(op, axis, offsets, found, [d.sizes[axis] for d in descs])
    return None


def _split_found(op: SplitOp, axis: int, offsets: list[int], found: list[int | None],
                 parts: list[int]) -> Found:
    notes = []
    for k, (o, e) in enumerate(zip(offsets, op.offsets_along_axis, strict=True)):
        if found[k] is None:
            notes.append(f"output {k} read entirely past the end of the input")
        elif o != e or axis != op.axis:
            notes.append(f"output {k} read from offset {o} instead of {e} along axis {axis}")
    return _along_axis_found("split", op, axis, offsets, parts, "output", "split", "from", notes)


# ---- TILE -----------------------------------------------------------------------------------
def _tile_map(sizes: Sequence[int], repeats: Sequence[int]) -> IndexMap:
    """``Output[o] = Input[o mod InputSizes]`` over the output of ``sizes * repeats``, flat."""
    out = [n * r for n, r in zip(sizes, repeats, strict=True)]
    grid = _coords(np.arange(math.prod(out)), out) % np.array(sizes, dtype=np.int64)
    return grid @ _packed_strides(sizes)


def _greedy_repeats(sizes: Sequence[int], m: IndexMap) -> list[int] | None:
    """Repeats read from the map's periodicity, innermost axis first: along each axis, how many
    times the block of the axes inside it comes back before the next input element."""
    repeats = [1] * len(sizes)
    block = 1
    for d in reversed(range(len(sizes))):
        unit = sizes[d] * block
        r = 1
        while (r + 1) * unit <= m.size and m[r * unit] == m[0]:
            r += 1
        repeats[d] = r
        block = unit * r
    return repeats if block == m.size else None


def _tile(op: TileOp, m: IndexMap) -> Found | None:
    sizes, repeats = op.input.sizes, op.repeats
    if m.size != op.output.element_count or (m < 0).any() or m[0] != 0:
        return None
    greedy = _greedy_repeats(sizes, m)
    if greedy is None or not np.array_equal(_tile_map(sizes, greedy), m):
        return None
    applied = greedy
    if len(repeats) <= _PERMUTED_REPEATS_MAX_RANK and sorted(greedy) != sorted(repeats):
        for perm in itertools.permutations(repeats):
            if list(perm) != list(repeats) and np.array_equal(_tile_map(sizes, perm), m):
                applied = list(perm)
                break
    names = [f"repeats {fmt(applied)} instead of {fmt(repeats)}"
             + (" (the repeats on the wrong axes)" if sorted(applied) == sorted(repeats) else "")]
    found_applied: dict[str, Any] = {"repeats": list(applied)}
    found_expected: dict[str, Any] = {"repeats": list(repeats)}
    try:
        out = BufferTensorDesc(op.input.data_type, tuple(n * r for n, r in zip(sizes, applied, strict=True)))
        found_applied["operator_dict"] = TileOp(op.input, out, tuple(applied)).to_dict()
        found_expected["operator_dict"] = op.to_dict()
    except OrtLayoutsError:
        found_applied.pop("operator_dict", None)
    text = (f"recovered: the GPU tiled input sizes {fmt(sizes)} by repeats {fmt(applied)}; expected repeats "
            f"{fmt(repeats)}: {'; '.join(names)}")
    return Found("tile", operator_name(op), found_applied, found_expected, tuple(names), text)


# ---- DEPTH_TO_SPACE1 and SPACE_TO_DEPTH -----------------------------------------------------
def _depth_to_space_map(shape: Sequence[int], block: int, mode: str) -> IndexMap:
    """DirectML's DEPTH_TO_SPACE1 index formula (ONNX's reshape / transpose / reshape)."""
    n, c, h, w = shape
    x = np.arange(math.prod(shape), dtype=np.int64)
    co = c // (block * block)
    if mode == "DCR":
        return x.reshape(n, block, block, co, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(-1)
    return x.reshape(n, co, block, block, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(-1)


def _space_to_depth_map(shape: Sequence[int], block: int, mode: str) -> IndexMap:
    """SPACE_TO_DEPTH's index formula (DCR: DirectML's and ONNX's order; CRD: the other)."""
    n, c, h, w = shape
    x = np.arange(math.prod(shape), dtype=np.int64).reshape(n, c, h // block, block, w // block, block)
    axes = (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4)
    return x.transpose(axes).reshape(-1)


def _depth_space(op: DepthToSpaceOp | SpaceToDepthOp, m: IndexMap) -> Found | None:
    shape = op.input.sizes
    n, c, h, w = shape
    to_space = isinstance(op, DepthToSpaceOp)
    mode = _ORDERS[op.order] if isinstance(op, DepthToSpaceOp) else "DCR"
    other = "CRD" if mode == "DCR" else "DCR"
    b = op.block_size
    if to_space:
        blocks = [k for k in range(1, c + 1) if c % (k * k) == 0]
    else:
        blocks = [k for k in range(1, max(h, w) + 1) if h % k == 0 and w % k == 0]
    trials = [(b, other)] + [(k, md) for k in blocks if k != b for md in (mode, other)]
    make = _depth_to_space_map if to_space else _space_to_depth_map
    if m.size != math.prod(shape) or (m < 0).any():
        return None
    for block, order in trials:
        if np.array_equal(make(shape, block, order), m):
            names = []
            if block != b:
                names.append(f"block size {block} instead of {b}")
            if order != mode:
                names.append(f"mode {order} instead of {mode}")
            applied: dict[str, Any] = {"block_size": block, "mode": order}
            expected: dict[str, Any] = {"block_size": b, "mode": mode}
            dtype = op.input.data_type
            if to_space:
                out = BufferTensorDesc(dtype, (n, c // (block * block), h * block, w * block))
                dml_order = next(o for o, name in _ORDERS.items() if name == order)
                applied["operator_dict"] = DepthToSpaceOp(op.input, out, block, dml_order).to_dict()
                expected["operator_dict"] = op.to_dict()
            elif order == "DCR":
                out = BufferTensorDesc(dtype, (n, c * block * block, h // block, w // block))
                applied["operator_dict"] = SpaceToDepthOp(op.input, out, block).to_dict()
                expected["operator_dict"] = op.to_dict()
            kind = "depth_to_space" if to_space else "space_to_depth"
            moved = "depth to space" if to_space else "space to depth"
            text = (f"recovered: the GPU moved {moved} with block size {block} mode {order}; expected block "
                    f"size {b} mode {mode}: {'; '.join(names)}")
            return Found(kind, operator_name(op), applied, expected, tuple(names), text)
    return None


def recover_parameters(op: AnyDmlOperator, observed: IndexMap, feeds: Sequence[np.ndarray]) -> Found | None:
    """The operator's own parameters (SLICE1's window, JOIN's and SPLIT's axis and offsets,
    TILE's repeats, DEPTH_TO_SPACE1's and SPACE_TO_DEPTH's block size and order) that reproduce
    ``observed`` exactly; None for another operator or when none does."""
    m = np.asarray(observed, dtype=np.int64).reshape(-1)
    if m.size > _COORD_LIMIT:
        return None
    if isinstance(op, Slice1Op):
        return _slice(op, m)
    if isinstance(op, JoinOp):
        return _join(op, m, feeds)
    if isinstance(op, SplitOp):
        return _split(op, m)
    if isinstance(op, TileOp):
        return _tile(op, m)
    if isinstance(op, (DepthToSpaceOp, SpaceToDepthOp)):
        return _depth_space(op, m)
    return None
