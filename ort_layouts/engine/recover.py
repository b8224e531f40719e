"""Recovery: infer the descriptor an execution provider applied, from what its output holds.

The DML EP runs every pure data movement as a strided read of the input buffer: Transpose,
Expand and the Reshape family as DML_OPERATOR_ELEMENT_WISE_IDENTITY whose input
DML_BUFFER_TENSOR_DESC carries permuted, zero (broadcast) or packed strides (``DmlOperatorCopy``
in ``DmlOperatorCopy.cpp``, ``DmlOperatorTranspose`` and ``DmlOperatorExpand`` built through
``DmlOperator::Initialize`` in ``DmlOperator.cpp``); Slice as DML_OPERATOR_SLICE1 (window
offsets, sizes and strides, ``DmlOperatorSlice.cpp``, ``SliceHelper::Initialize`` in
``OperatorHelper.cpp``); Concat and Split as JOIN / SPLIT along one axis (``DmlOperatorConcat.cpp``,
``DmlOperatorSplit.cpp``); Tile as TILE (``DmlOperatorTile.cpp``); DepthToSpace / SpaceToDepth as
DEPTH_TO_SPACE1 / SPACE_TO_DEPTH (``DmlOperatorDepthToSpace.cpp``, ``DmlOperatorSpaceToDepth.cpp``);
Pad as PADDING1 (``DmlOperatorPadding.cpp``). Each output element of these operators is one input
element, or (Pad's constant mode) a constant.

So instead of trying a list of alternatives, the recovery feeds an input whose every element
identifies its source index (a unique bit pattern; see :func:`unique_inputs`), reads back from
the output which source element each output element came from (:func:`source_index_map`,
-1 where it came from no input element: a zero, a constant, bytes past the buffer), and infers
what the GPU applied (:func:`recover`, a :class:`Recovery`), in this order:

1. Pad: its start/end padding, mode and constant (:func:`recover_padding`), in PADDING1's terms.
2. The operator's own parameters (``engine/recover_params.py``): SLICE1's window, JOIN's and
   SPLIT's axis and offsets, TILE's repeats, DEPTH_TO_SPACE1's and SPACE_TO_DEPTH's block size
   and order.
3. One strided read over the output, ``offset + dot(index, strides)`` (:func:`fit_affine`),
   compared with the same fit of the expected output, the difference named in DirectML terms:
   strides permuted, strides in bytes, a broadcast stride not zeroed, an element offset, reads
   past the buffer end.
4. A region that is right up to an element, with what the rest read when it is one read.
5. The read of each input buffer with the operator itself right (a TILE, PADDING1, JOIN, ...
   whose input descriptor had other strides or a base offset).
6. Which region is right and where it breaks, when nothing else fits.

Every parameter set above is accepted only when the operator run with it reproduces the map
exactly. Where the places are right and only values differ, the recovery names the value
transform (:func:`values_story`: -0.0 lost, denormals flushed, a float rounded through a
narrower one, a byte order swap, 64-bit words swapped, values cast through another type); NaN
quieting and 64-bit integers moved as 32-bit words are named by ``engine/diagnose.py`` itself.

Eight-bit types have only 255 non-zero patterns: a larger tensor needs several runs, one per
base-255 digit of the index (:func:`unique_inputs` gives them); a pattern may then also equal a
constant, which is read as a source element.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ort_layouts._errors import OrtLayoutsError, ReportError, a_type
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.recover_params import (
    DML_PADDING_MODES,
    InputRead,
    PaddingFit,
    fmt,
    hint_combos,
    index_feeds,
    index_map,
    operator_name,
    recover_input_reads,
    recover_padding,
    recover_parameters,
    retyped,
)
from ort_layouts.operators.case import Case
from ort_layouts.operators.identity import IDENTITY, IdentityOp
from ort_layouts.operators.join_split import JoinOp
from ort_layouts.operators.padding import PaddingMode, PaddingOp
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.reference.compare import bits_of
from ort_layouts.reference.execute import AnyDmlOperator
from ort_layouts.reference.nans import nan_bits

__all__ = [
    "KINDS",
    "AffineMap",
    "PaddingFit",
    "Recovery",
    "Rerun",
    "fit_affine",
    "flat_bits",
    "recover",
    "recover_padding",
    "recover_places",
    "recover_story",
    "reference_bits",
    "source_index_map",
    "unique_inputs",
    "values_story",
]

#: re-runs the failing case on another input (logical, the case's shape) and returns the EP's
#: outputs, one per output
Rerun = Callable[[np.ndarray], Sequence[np.ndarray]]
IndexMap = npt.NDArray[np.int64]

#: what a :class:`Recovery` describes
KINDS: tuple[str, ...] = ("read", "padding", "slice", "join", "split", "tile", "depth_to_space",
                          "space_to_depth", "region", "values")

_FIT_LIMIT = 1 << 22  # elements: no fit above this
_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_fmt = fmt


# ---- the result -------------------------------------------------------------------------------
def _jsonable(value: Any, where: str) -> Any:
    """``value`` with tuples as lists and numpy scalars as Python ones; ReportError for
    anything JSON cannot hold."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, where) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, where) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if value is None or isinstance(value, str):
        return value
    raise ReportError(f"recovery {where} holds {value!r} ({type(value).__name__}), which JSON cannot hold; "
                      "valid: ints, floats, strings, None, and lists and dicts of them")


@dataclasses.dataclass(frozen=True, slots=True)
class Recovery:
    """What the GPU applied, next to what the DML EP asked for, in DirectML terms.

    Attributes:
        kind: what is described (one of :data:`KINDS`): ``"read"`` (a strided read: ``sizes``,
            ``strides_in_elements``, ``offset_in_elements``, ``input_index``), ``"padding"``
            (``start_padding``, ``end_padding``, ``mode``, ``constant_hex``), ``"slice"``
            (``input_window_offsets``, ``input_window_sizes``, ``input_window_strides``),
            ``"join"`` / ``"split"`` (``axis``, ``offsets_along_axis``), ``"tile"``
            (``repeats``), ``"depth_to_space"`` / ``"space_to_depth"`` (``block_size``,
            ``mode``), ``"region"`` (no single map fits: ``sizes``, ``right_until_element``,
            ``break_index``, ``right_element_count``, ``after``, ``after_read``,
            ``axes_right``, ``axes_wrong``) or ``"values"`` (``transform``).
        operator: the DirectML operator the description is in terms of, e.g.
            ``DML_OPERATOR_SLICE1``; a read over the output is an
            ``DML_OPERATOR_ELEMENT_WISE_IDENTITY`` whatever the case's operator.
        applied: what the GPU applied; JSON-ready (ints, strings, lists), with the same keys as
            ``expected``. Where the applied parameters make a valid operator, both also hold
            ``"operator_dict"``: that operator's ``to_dict()`` (``reports/render.py`` draws it).
        expected: what the DML EP asked for.
        names: what the difference means, e.g. "strides permuted as perm [1,0,2]".
        text: the one line a diagnosis shows.
    """

    kind: str
    operator: str
    applied: dict[str, Any]
    expected: dict[str, Any]
    names: tuple[str, ...]
    text: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ReportError(f"recovery kind {self.kind!r} is not valid; valid: {list(KINDS)}")
        applied = _jsonable(self.applied, "applied")
        expected = _jsonable(self.expected, "expected")
        if not isinstance(applied, dict) or not isinstance(expected, dict) or set(applied) != set(expected):
            raise ReportError(f"recovery applied {self.applied!r} and expected {self.expected!r} must be "
                              "dicts with the same keys")
        object.__setattr__(self, "applied", applied)
        object.__setattr__(self, "expected", expected)
        names = self.names
        if isinstance(names, (str, bytes)) or not isinstance(names, (tuple, list)) or not all(
                isinstance(n, str) for n in names):
            raise ReportError(f"recovery names {names!r:.80} is {a_type(names)}; valid: a list of str")
        object.__setattr__(self, "names", tuple(names))
        for field in ("operator", "text"):
            value = getattr(self, field)
            if not isinstance(value, str):
                raise ReportError(f"recovery {field} {value!r:.80} is {a_type(value)}; valid: a str")

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict (:meth:`from_dict` reads it back)."""
        return {"kind": self.kind, "operator": self.operator, "applied": copy.deepcopy(self.applied),
                "expected": copy.deepcopy(self.expected), "names": list(self.names), "text": self.text}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Recovery:
        """Inverse of :meth:`to_dict`.

        Raises:
            ReportError: a field is missing or of the wrong kind (the message lists the fields).
        """
        if not isinstance(data, Mapping):
            raise ReportError(f"recovery {data!r:.80} is {a_type(data)}; valid: a mapping of its fields "
                              f"{list(_RECOVERY_FIELDS)}")
        missing = [name for name in _RECOVERY_FIELDS if name not in data]
        if missing:
            raise ReportError(f"recovery {dict(data)!r:.200} lacks {missing}; valid fields: "
                              f"{list(_RECOVERY_FIELDS)}")
        for name in ("applied", "expected"):
            if not isinstance(data[name], Mapping):
                raise ReportError(f"recovery {name} {data[name]!r:.80} is {a_type(data[name])}; valid: a "
                                  "JSON object")
        return cls(data["kind"], data["operator"], dict(data["applied"]), dict(data["expected"]),
                   data["names"], data["text"])


_RECOVERY_FIELDS = tuple(f.name for f in dataclasses.fields(Recovery))


# ---- unique inputs ----------------------------------------------------------------------------
def _pattern_base(dtype: DataType) -> int:
    """How many distinct non-zero, non-NaN, non-denormal bit patterns the type offers."""
    if dtype is DataType.FLOAT16:
        return 2 * (0x7C00 - 0x0400)
    if dtype is DataType.FLOAT32:
        return 1 << 30
    if dtype is DataType.FLOAT64:
        return 1 << 40
    return min((1 << dtype.bitwidth) - 1, 1 << 40)


def _patterns(dtype: DataType, digits: np.ndarray) -> np.ndarray:
    """The bit pattern of each digit (ascending in the digit)."""
    d = digits.astype(np.uint64)
    if dtype is DataType.FLOAT16:
        half = np.uint64(0x7C00 - 0x0400)
        bits = np.where(d < half, d + np.uint64(0x0400), d - half + np.uint64(0x8400))
    elif dtype is DataType.FLOAT32:
        bits = d + np.uint64(0x00800000)
    elif dtype is DataType.FLOAT64:
        bits = d + np.uint64(0x0010000000000000)
    else:
        bits = d + np.uint64(1)
    return bits.astype(_UINT[dtype.bitwidth])


def unique_inputs(dtype: DataType, shape: Sequence[int], *, avoid: Sequence[int] = ()) -> list[np.ndarray]:
    """Inputs of ``shape`` whose elements identify their flat index: one input when the type has
    enough patterns, else one per digit of the index in the type's base (8-bit types: base 255).
    In one input no element holds a bit pattern of ``avoid`` (a Pad's constant, which the output
    holds besides the input's elements): the patterns past each are one further on; inputs of
    several runs take every pattern.

    Raises:
        ValueError: for 4-bit types (too few patterns to be useful).
    """
    if dtype.bitwidth < 8:
        raise ValueError(f"{dtype.name} has {1 << dtype.bitwidth} bit patterns: too few to identify elements")
    count = math.prod(shape)
    patterns = _digit_patterns(dtype, count, avoid)
    if patterns.size >= count:
        return [_as_input(dtype, patterns[:count], shape)]
    base = patterns.size  # the digits of several runs: avoid's patterns in none of them either
    runs = 2
    while base ** runs < count:
        runs += 1
    index = np.arange(count, dtype=np.uint64)
    return [_as_input(dtype, patterns[(index // np.uint64(base ** r)) % np.uint64(base)], shape)
            for r in range(runs)]


def _digit_patterns(dtype: DataType, count: int, avoid: Sequence[int]) -> np.ndarray:
    """The patterns :func:`unique_inputs` gives ``count`` elements, ascending: the first
    ``count`` of the type's that are none of ``avoid``'s, or all of those (the digits of
    several runs) where there are fewer."""
    patterns = _patterns(dtype, np.arange(min(_pattern_base(dtype), count + len(avoid)), dtype=np.uint64))
    if avoid:
        patterns = patterns[~np.isin(patterns, np.array(avoid, dtype=np.uint64))]
    return patterns


def _as_input(dtype: DataType, bits: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Little-endian bit patterns as an input of ``dtype`` and ``shape``."""
    return bits.view(dtype.to_numpy().newbyteorder("<")).astype(dtype.to_numpy()).reshape(shape)


def source_index_map(dtype: DataType, inputs: Sequence[np.ndarray],
                     outputs: Sequence[np.ndarray], *, avoid: Sequence[int] = ()) -> IndexMap:
    """For each element of the outputs (flat, all outputs one after another), the flat index of
    the input element it holds, or -1 where it holds no input element.

    ``inputs`` are the runs of :func:`unique_inputs` (or one input whose elements' bits are all
    distinct and non-zero) and ``outputs`` what the EP returned for each run; ``avoid``, the
    patterns those runs were made without.
    """
    if len(inputs) == 1:
        table = bits_of(np.asarray(inputs[0]))
        order = np.argsort(table, kind="stable")
        return _lookup(table[order], order.astype(np.int64), bits_of(np.asarray(outputs[0])))
    table = _digit_patterns(dtype, math.prod(np.asarray(inputs[0]).shape), avoid)
    base = table.size
    result: IndexMap | None = None
    for r, out in enumerate(outputs):
        digit = _lookup(table, np.arange(base, dtype=np.int64), bits_of(np.asarray(out)))
        if result is None:
            result = np.zeros(digit.size, dtype=np.int64)
        result = np.where((result < 0) | (digit < 0), -1, result + digit * base ** r)
    assert result is not None
    return result


def _lookup(sorted_bits: np.ndarray, index: IndexMap, bits: np.ndarray) -> IndexMap:
    pos = np.searchsorted(sorted_bits, bits)
    pos = np.minimum(pos, sorted_bits.size - 1)
    found = sorted_bits[pos] == bits
    return np.where(found, index[pos], -1).astype(np.int64)


# ---- affine fit -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class AffineMap:
    """Which input element each output element reads: ``offset + dot(index, strides)``.

    Attributes:
        sizes: the output sizes the map runs over.
        strides_in_elements: the stride of each axis in input elements.
        offset_in_elements: the input element the first output element reads.
        past_end_count: output elements whose read lies outside the input buffer (they hold no
            input element).
        unobserved_axes: axes along which every step read outside the buffer: their stride is
            one consistent with that, not one observed.
    """

    sizes: tuple[int, ...]
    strides_in_elements: tuple[int, ...]
    offset_in_elements: int
    past_end_count: int = 0
    unobserved_axes: tuple[int, ...] = ()

    def indices(self) -> IndexMap:
        idx: IndexMap = np.full((), self.offset_in_elements, dtype=np.int64)
        for n, s in zip(self.sizes, self.strides_in_elements, strict=True):
            idx = idx[..., None] + np.arange(n, dtype=np.int64) * s
        return idx.reshape(-1)

    def describe(self) -> str:
        return (f"sizes {_fmt(self.sizes)} strides {_fmt(self.strides_in_elements)} "
                f"offset {self.offset_in_elements}")


def fit_affine(index_map: IndexMap, sizes: Sequence[int], element_count: int,
               hints: Sequence[int] = ()) -> AffineMap | None:
    """The affine map that reproduces ``index_map`` (flat, C order over ``sizes``) exactly, or
    None. Elements marked -1 must read outside ``[0, element_count)`` (past the buffer).

    An axis along which no element read inside the buffer has no observed stride; ``hints``
    are the strides tried for it, in order (the first that keeps every such read outside
    the buffer is taken).
    """
    sizes = tuple(int(n) for n in sizes)
    m = np.asarray(index_map, dtype=np.int64).reshape(-1)
    if m.size != math.prod(sizes) or m.size == 0 or m.size > _FIT_LIMIT:
        return None
    known = np.flatnonzero(m >= 0)
    if known.size == 0:
        return None
    coords = np.stack(np.unravel_index(known, sizes), axis=1)
    seen = [k for k in range(len(sizes)) if sizes[k] > 1 and np.unique(coords[:, k]).size > 1]
    design = np.concatenate([np.ones((known.size, 1)), coords[:, seen].astype(np.float64)], axis=1)
    solution, *_ = np.linalg.lstsq(design, m[known].astype(np.float64), rcond=None)
    ints = np.rint(solution).astype(np.int64)
    base = [0] * len(sizes)
    for k, v in zip(seen, ints[1:], strict=True):
        base[k] = int(v)
    offset = int(ints[0]) - sum(base[k] * int(coords[0, k]) for k in range(len(sizes)) if k not in seen)
    unseen = [k for k in range(len(sizes)) if sizes[k] > 1 and k not in seen]
    if (AffineMap(sizes, tuple(base), offset).indices()[known] != m[known]).any():
        return None  # (an unseen axis's coordinate is one along every read inside: no stride moves them)
    unknown = m < 0
    for combo in hint_combos(hints, len(unseen), m.size):
        strides = list(base)
        for k, v in zip(unseen, combo, strict=True):
            strides[k] = v
        shift = sum(strides[k] * int(coords[0, k]) for k in unseen)
        fit = AffineMap(sizes, tuple(strides), offset - shift)
        predicted = fit.indices()
        outside = (predicted < 0) | (predicted >= element_count)
        if (unknown & ~outside).any():
            continue
        return dataclasses.replace(fit, past_end_count=int((unknown & outside).sum()),
                                   unobserved_axes=tuple(unseen))
    return None


def _perm_of(applied: Sequence[int], expected: Sequence[int], sizes: Sequence[int]) -> list[int] | None:
    """sigma with applied[k] == expected[sigma[k]] over the axes of size > 1 (None: no such)."""
    axes = [k for k, n in enumerate(sizes) if n > 1]
    free = list(axes)
    sigma = list(range(len(sizes)))
    for k in axes:
        match = next((j for j in free if expected[j] == applied[k]), None)
        if match is None:
            return None
        free.remove(match)
        sigma[k] = match
    return sigma


def _name_difference(applied: AffineMap, expected: AffineMap, element_count: int,
                     element_size_in_bytes: int, case: Case) -> list[str]:
    names: list[str] = []
    sizes = applied.sizes
    s, e = applied.strides_in_elements, expected.strides_in_elements
    axes = [k for k, n in enumerate(sizes) if n > 1]
    wrong = [k for k in axes if s[k] != e[k]]
    if wrong:
        bytes_like = [k for k in axes if e[k] != 0]
        sigma = _perm_of(s, e, sizes)
        unzeroed = [k for k in wrong if e[k] == 0]
        if bytes_like and element_size_in_bytes > 1 and all(
                s[k] == e[k] * element_size_in_bytes for k in axes):
            names.append(f"strides in bytes (x{element_size_in_bytes}, the element size)")
        elif sigma is not None:
            text = f"strides permuted as perm {_fmt(sigma)}"
            if case.op == "Transpose" and case.perm is not None and len(case.perm) == len(sizes):
                applied_perm = [case.perm[sigma[k]] for k in range(len(sizes))]
                text += f" (the GPU applied perm {_fmt(applied_perm)} instead of {_fmt(case.perm)})"
            names.append(text)
        elif unzeroed and len(unzeroed) == len(wrong):
            names += [f"broadcast axis {k} not zeroed (stride {s[k]} instead of 0)" for k in unzeroed]
        else:
            names.append(f"strides differ on axes {_fmt(wrong)}")
    delta = applied.offset_in_elements - expected.offset_in_elements
    if delta:
        names.append(f"offset {delta:+d} element{'s' if abs(delta) != 1 else ''}")
    if applied.unobserved_axes:
        names.append(f"axes {_fmt(applied.unobserved_axes)} read only past the buffer end (their "
                     "strides are the ones consistent with that)")
    if applied.past_end_count:
        names.append(f"reading past the buffer end ({applied.past_end_count} of {math.prod(sizes)} "
                     f"elements read outside its {element_count})")
    return names


# ---- regions ----------------------------------------------------------------------------------
class _Region(NamedTuple):
    text: str
    applied: dict[str, Any]
    expected: dict[str, Any]
    names: tuple[str, ...]
    after: str  # "nothing from the input", "read" or "mixed"


def _read_dict(fit: AffineMap) -> dict[str, Any]:
    return {"sizes": list(fit.sizes), "strides_in_elements": list(fit.strides_in_elements),
            "offset_in_elements": fit.offset_in_elements}


_NAMED_WRONG = 8  # wrong elements a region names one by one, at most


def _region(observed: IndexMap, expected: IndexMap, right: np.ndarray, sizes: Sequence[int],
            element_count: int, element_size_in_bytes: int, case: Case) -> _Region | None:
    """Which region is right and where it breaks, when no single affine map fits."""
    if right.all():
        return None
    total = int(right.size)
    wrong = np.flatnonzero(~right)
    first = int(wrong[0])
    row = math.prod(sizes[1:]) if len(sizes) > 1 else 1
    rows = "row 0" if first // row == 1 else f"rows 0-{first // row - 1}"
    at = [int(i) for i in np.unravel_index(first, tuple(sizes))]
    if not first:
        where = "from the first element on"
    elif first % row == 0:
        where = f"{rows} of axis 0 right, from row {first // row} on"
    else:
        where = f"elements 0-{first - 1} right, from element {first} (index {_fmt(at)}) on"
    applied: dict[str, Any] = {"sizes": list(sizes), "right_until_element": first, "break_index": at,
                               "right_element_count": int(right.sum()), "after": "", "after_read": None,
                               "axes_right": [], "axes_wrong": []}
    wanted: dict[str, Any] = {"sizes": list(sizes), "right_until_element": total, "break_index": [],
                              "right_element_count": total, "after": "", "after_read": None,
                              "axes_right": [k for k, n in enumerate(sizes) if n > 1], "axes_wrong": []}
    rest = observed[first:]
    if (rest < 0).all():
        applied["after"] = "nothing from the input"
        return _Region(f"{where} nothing from the input (zeros or other values): the dispatch stopped early",
                       applied, wanted, ("the dispatch stopped early",), "nothing from the input")
    if first % row == 0 and first:
        tail_sizes = (len(rest) // row, *sizes[1:])
        tail = fit_affine(rest, tail_sizes, element_count)
        want = fit_affine(expected[first:], tail_sizes, element_count)
        if tail is not None and want is not None:
            names = _name_difference(tail, want, element_count, element_size_in_bytes, case)
            applied.update(after="read", after_read=_read_dict(tail))
            wanted.update(after_read=_read_dict(want))
            text = (f"{where} the GPU read {tail.describe()}; expected strides "
                    f"{_fmt(want.strides_in_elements)} offset {want.offset_in_elements}"
                    + (f": {'; '.join(names)}" if names else ""))
            return _Region(text, applied, wanted, tuple(names), "read")
    fraction = f"{int(right.sum())} of {right.size} elements in place"
    steps = []
    grid = observed.reshape(sizes)
    exp_grid = expected.reshape(sizes)
    for k, n in enumerate(sizes):
        if n < 2:
            continue
        a = np.take(grid, range(1, n), axis=k)
        b = np.take(grid, range(n - 1), axis=k)
        ea = np.take(exp_grid, range(1, n), axis=k) - np.take(exp_grid, range(n - 1), axis=k)
        ok = (a >= 0) & (b >= 0)
        steps.append((k, bool(ok.any() and ((a - b)[ok] == ea[ok]).all())))
    good = [k for k, flag in steps if flag]
    bad = [k for k, flag in steps if not flag]
    applied.update(after="mixed", axes_right=good, axes_wrong=bad)
    if right[first:].any():  # right elements after the first wrong one: the wrong ones named, not a break
        more = f" and {wrong.size - _NAMED_WRONG} more" if wrong.size > _NAMED_WRONG else ""
        where = f"elements {_fmt([int(i) for i in wrong[:_NAMED_WRONG]])}{more}"
    axes = f"steps along axes {_fmt(good)} right" + (f", along axes {_fmt(bad)} wrong" if bad else "")
    return _Region(f"no single affine map fits: {where} wrong ({fraction}); {axes}", applied, wanted,
                   (f"steps along axes {_fmt(bad)} wrong" if bad else f"{where} wrong",), "mixed")


# ---- reads ------------------------------------------------------------------------------------
def _hints(expected: AffineMap | None, sizes: Sequence[int], case: Case) -> list[int]:
    """Strides to try on an axis never read inside the buffer: the expected ones, in bytes,
    the packed strides of the output and the input."""
    item = max(1, case.data_type.bitwidth // 8)
    ours = list(expected.strides_in_elements) if expected is not None else []
    packed = [math.prod(sizes[k + 1:]) for k in range(len(sizes))]
    packed_in = [math.prod(case.shape[k + 1:]) for k in range(len(case.shape))]
    return [h for h in [*ours, *(e * item for e in ours), *packed, *packed_in] if h]


def _dml_operator(case: Case) -> AnyDmlOperator | None:
    try:
        return operator_for_type(case.op).dml_operator(case)
    except (OrtLayoutsError, NotImplementedError):  # an inexpressible case is fitted in ONNX terms
        return None


def _fit_sizes(case: Case, count: int, op: AnyDmlOperator | None) -> tuple[int, ...]:
    """The sizes to fit over: the identity's DirectML input sizes when the EP builds one (the
    GPU reads the input through them), else the ONNX output shape."""
    if isinstance(op, IdentityOp) and op.input.element_count == count:
        return tuple(op.input.sizes)
    shapes = operator_for_type(case.op).output_shapes(case)
    return tuple(shapes[0]) if len(shapes) == 1 else (count,)


def _identity_dicts(dtype: DataType, got: AffineMap,
                    want: AffineMap) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two ELEMENT_WISE_IDENTITY descs (``to_dict``) when both reads are descriptors (no
    offset, no negative stride); else empty dicts."""
    try:
        if got.offset_in_elements or want.offset_in_elements:
            return {}, {}
        made = [IdentityOp(BufferTensorDesc(dtype, fit.sizes, fit.strides_in_elements),
                           BufferTensorDesc(dtype, fit.sizes)).to_dict() for fit in (got, want)]
    except (OrtLayoutsError, OverflowError):
        return {}, {}
    return {"operator_dict": made[0]}, {"operator_dict": made[1]}


def _read_recovery(case: Case, got: AffineMap, want: AffineMap | None, element_count: int) -> Recovery:
    """A read over the output (an identity's input descriptor)."""
    dtype = case.data_type
    applied = {**_read_dict(got), "input_index": 0}
    if want is None:
        text = f"recovered: the GPU read {got.describe()} (the expected read is not one affine map)"
        expected: dict[str, Any] = {"sizes": list(got.sizes), "strides_in_elements": [],
                                    "offset_in_elements": None, "input_index": 0}
        return Recovery("read", IDENTITY, applied, expected, (), text)
    names = _name_difference(got, want, element_count, max(1, dtype.bitwidth // 8), case)
    strides_differ = got.strides_in_elements != want.strides_in_elements
    expected_part = (f"expected strides {_fmt(want.strides_in_elements)}"
                     + (f" offset {want.offset_in_elements}" if not strides_differ
                        or want.offset_in_elements != got.offset_in_elements else ""))
    text = (f"recovered: the GPU read {got.describe()}; {expected_part}"
            + (f": {'; '.join(names)}" if names else ""))
    extra_applied, extra_expected = _identity_dicts(dtype, got, want)
    return Recovery("read", IDENTITY, {**applied, **extra_applied},
                    {**_read_dict(want), "input_index": 0, **extra_expected}, tuple(names), text)


def _with_input(op: AnyDmlOperator, index: int, desc: BufferTensorDesc) -> AnyDmlOperator:
    if isinstance(op, JoinOp):
        inputs = list(op.inputs)
        inputs[index] = desc
        return dataclasses.replace(op, inputs=tuple(inputs))
    op_any: Any = op
    return dataclasses.replace(op_any, input=desc)  # type: ignore[no-any-return]


def _input_read_recovery(case: Case, op: AnyDmlOperator, reads: Sequence[InputRead]) -> Recovery:
    """The reads of the operator's input buffers that differ from its descriptors."""
    dtype = case.data_type
    item = max(1, dtype.bitwidth // 8)
    name = operator_name(op)
    short = name.removeprefix("DML_OPERATOR_")
    wrong = [r for r in reads if r.wrong]
    parts: list[str] = []
    names: list[str] = []
    for r in wrong:
        got = AffineMap(r.sizes, r.strides_in_elements, r.offset_in_elements, r.past_end_count,
                        r.unobserved_axes)
        want = AffineMap(r.sizes, r.expected_strides_in_elements, 0)
        found = _name_difference(got, want, r.element_count, item, case)
        which = f"input {r.index} of the {short}" if len(reads) > 1 else f"the {short} input"
        parts.append(f"the GPU read {which} through {got.describe()}; expected strides "
                     f"{_fmt(r.expected_strides_in_elements)} offset 0"
                     + (f": {'; '.join(found)}" if found else ""))
        names += [f"input {r.index}: {n}" if len(reads) > 1 else n for n in found]
    first = wrong[0]
    applied: dict[str, Any] = {"sizes": list(first.sizes),
                               "strides_in_elements": list(first.strides_in_elements),
                               "offset_in_elements": first.offset_in_elements, "input_index": first.index}
    expected: dict[str, Any] = {"sizes": list(first.sizes),
                                "strides_in_elements": list(first.expected_strides_in_elements),
                                "offset_in_elements": 0, "input_index": first.index}
    if not first.offset_in_elements and min(first.strides_in_elements, default=0) >= 0:
        try:
            desc = BufferTensorDesc(dtype, first.sizes, first.strides_in_elements)
            applied["operator_dict"] = _with_input(op, first.index, desc).to_dict()
            expected["operator_dict"] = op.to_dict()
        except (OrtLayoutsError, OverflowError):
            applied.pop("operator_dict", None)
    return Recovery("read", name, applied, expected, tuple(names), "recovered: " + " and ".join(parts))


def _places(case: Case, observed: IndexMap, expected: IndexMap, bits: np.ndarray | None = None,
            expected_bits: np.ndarray | None = None) -> Recovery | None:
    """The recovery from the observed and expected source-index maps (flat, over all outputs)
    and, where given, the flat output bits they came from (Pad's constant)."""
    observed = np.asarray(observed, dtype=np.int64).reshape(-1)
    expected = np.asarray(expected, dtype=np.int64).reshape(-1)
    if observed.size != expected.size:
        return None
    op = _dml_operator(case)
    right = observed == expected
    if bits is not None and expected_bits is not None:
        got_bits, want_bits = np.asarray(bits).reshape(-1), np.asarray(expected_bits).reshape(-1)
        if got_bits.size == want_bits.size == observed.size:
            right &= ~((observed < 0) & (got_bits != want_bits))  # a constant written wrong
    if case.op == "Pad" and isinstance(op, PaddingOp):
        decided, padded = _padding_recovery(case, op, observed, expected, bits, expected_bits)
        if decided:
            return padded
    if right.all() or not (observed >= 0).any():
        return None  # nothing from the input: no read to recover
    element_count = math.prod(case.shape)
    item = max(1, case.data_type.bitwidth // 8)
    feeds = index_feeds(case) if op is not None else []
    if op is not None:
        found = recover_parameters(op, observed, feeds)
        if found is not None:
            return Recovery(*found)
    sizes = _fit_sizes(case, observed.size, op)
    exp_fit = fit_affine(expected, sizes, element_count)
    got_fit = fit_affine(observed, sizes, element_count, _hints(exp_fit, sizes, case))
    if exp_fit is not None and got_fit is not None:
        return _read_recovery(case, got_fit, exp_fit, element_count)
    region_sizes = sizes if math.prod(sizes) == observed.size else (observed.size,)
    region = _region(observed, expected, right, region_sizes, element_count, item, case)
    name = operator_name(op) if op is not None else ""
    if region is not None and region.after == "read":
        return _region_recovery(name, region)
    if op is not None:
        reads = recover_input_reads(op, observed, feeds)
        if reads is not None and any(r.wrong for r in reads):
            return _input_read_recovery(case, op, reads)
    if got_fit is not None:
        return _read_recovery(case, got_fit, None, element_count)
    return _region_recovery(name, region) if region is not None else None


def _region_recovery(operator: str, region: _Region) -> Recovery:
    return Recovery("region", operator, region.applied, region.expected, region.names,
                    f"recovered: {region.text}")


def recover_places(case: Case, observed: IndexMap, expected: IndexMap,
                   constant_bits: np.ndarray | None = None,
                   expected_constant_bits: np.ndarray | None = None) -> str:
    """Name what the GPU read, from the observed source-index map and the expected one (flat,
    over all outputs): the text of the :class:`Recovery`, "" when they agree. For Pad,
    ``constant_bits`` and ``expected_constant_bits`` are the flat output bits the maps came from
    (the constant is read where an element holds no input element)."""
    found = _places(case, observed, expected, constant_bits, expected_constant_bits)
    return found.text if found is not None else ""


def _output_shape(case: Case) -> tuple[int, ...]:
    return tuple(operator_for_type(case.op).output_shapes(case)[0])


# ---- padding ----------------------------------------------------------------------------------
def _padding_recovery(case: Case, op: PaddingOp, observed: IndexMap, expected: IndexMap,
                      bits: np.ndarray | None,
                      expected_bits: np.ndarray | None) -> tuple[bool, Recovery | None]:
    """(whether a PADDING1 reproduces the observed map, its recovery: None when it is the
    expected one)."""
    got = recover_padding(observed, case.shape, _output_shape(case), bits)
    want = recover_padding(expected, case.shape, _output_shape(case), expected_bits)
    if got is None or want is None:
        return False, None
    want = want.resolved(case.mode)
    got = got.resolved(want.mode)
    extra = op.dimension_count - len(case.shape)
    start, end = (0,) * extra + got.start_padding, (0,) * extra + got.end_padding
    mode = PaddingMode[DML_PADDING_MODES[got.mode]]
    item = case.data_type.bitwidth // 8
    constant = b"" if got.constant_bits is None else int(got.constant_bits).to_bytes(item, "little")
    try:
        value = constant if mode == PaddingMode.CONSTANT and constant else op.padding_value_bytes
        applied_op = PaddingOp(op.input, op.output, start, end, mode, value)
        predicted = index_map(retyped(applied_op, packed_inputs=True),
                              [np.arange(op.input.element_count, dtype=np.int64)])
    except OrtLayoutsError:
        return False, None
    if not np.array_equal(predicted, observed):
        return False, None
    names = got.differences(want)
    if not names:
        return True, None
    constant_hex = constant.hex() if mode == PaddingMode.CONSTANT else ""
    expected_hex = op.padding_value_bytes.hex() if op.mode == PaddingMode.CONSTANT else ""
    applied = {"start_padding": list(start), "end_padding": list(end), "mode": mode.name,
               "constant_hex": constant_hex, "operator_dict": applied_op.to_dict()}
    wanted = {"start_padding": list(op.start_padding), "end_padding": list(op.end_padding),
              "mode": op.mode.name, "constant_hex": expected_hex, "operator_dict": op.to_dict()}
    return True, Recovery("padding", operator_name(op), applied, wanted, tuple(names), got.compare(want))


# ---- values -----------------------------------------------------------------------------------
def _value_transform(dtype: DataType, expected_bits: np.ndarray,
                     actual_bits: np.ndarray) -> tuple[str, str] | None:
    """(name, one line) of an element-wise value transform that turns the expected bits into
    the actual ones (places right, values not); None when none does."""
    exp = np.asarray(expected_bits).reshape(-1)
    act = np.asarray(actual_bits).reshape(-1)
    if exp.size != act.size or exp.dtype != act.dtype or np.array_equal(exp, act) or dtype.bitwidth < 8:
        return None
    differ = exp != act
    count = int(differ.sum())
    width = dtype.bitwidth
    if dtype.is_float:
        sign = exp.dtype.type(1 << (width - 1))
        exponent = exp.dtype.type(nan_bits(dtype).exponent)
        neg_zero = exp == sign
        denormal = ((exp & exponent) == 0) & ((exp & ~sign) != 0)
        if (neg_zero[differ] & (act[differ] == 0)).all():
            return ("-0.0 lost",
                    f"output matches the input with -0.0 lost ({count} element(s) -0.0 became +0.0)")
        flushed = denormal & ((act & ~sign) == 0)
        lost = neg_zero & (act == 0)
        if (flushed | lost)[differ].all() and flushed.any():
            extra = " and -0.0 lost" if lost[differ].any() else ""
            return (f"denormals flushed to zero{extra}",
                    f"output matches the input with denormals flushed to zero{extra} ({count} "
                    "element(s)): the values went through arithmetic, not a bit copy")
    swapped = exp.byteswap()
    if np.array_equal(swapped, act):
        return ("byte order swapped",
                f"output matches the input with each element's byte order swapped ({width // 8} bytes)")
    if width == 64:
        words = (exp << np.uint64(32)) | (exp >> np.uint64(32))
        if np.array_equal(words, act):
            return ("32-bit words swapped",
                    "output matches the input with the two 32-bit words of each element swapped")
    logical = exp.view(dtype.to_numpy().newbyteorder("<"))
    narrower = {64: (np.float32, np.float16), 32: (np.float16,), 16: ()}
    others: list[type[np.generic]] = ([*narrower[width]] if dtype.is_float else []) + [
        np.float16, np.float32, np.float64, np.int32, np.uint32, np.int64, np.uint64, np.int16,
        np.uint16, np.int8, np.uint8]
    seen = set()
    for other in others:
        if other in seen or np.dtype(other) == logical.dtype:
            continue
        seen.add(other)
        with np.errstate(all="ignore"):
            if dtype.is_float and np.dtype(other).kind in "iu":
                finite = np.isfinite(logical)
                if not finite.all():
                    continue
            try:
                back = logical.astype(other).astype(logical.dtype)
            except (OverflowError, ValueError):
                continue
        if np.array_equal(bits_of(back), act):
            kind = "rounded" if dtype.is_float and np.dtype(other).kind == "f" else "cast"
            name = np.dtype(other).name
            return (f"{kind} through {name}",
                    f"output matches the input {kind} through {name} ({count} "
                    "element(s) changed; a type that holds the same values cannot be told apart): "
                    "the values went through a conversion, not a bit copy")
    return None


def values_story(dtype: DataType, expected_bits: np.ndarray, actual_bits: np.ndarray) -> str:
    """Name an element-wise value transform that turns the expected bits into the actual ones
    (places right, values not); "" when none does."""
    found = _value_transform(dtype, expected_bits, actual_bits)
    return found[1] if found is not None else ""


# ---- the whole recovery -----------------------------------------------------------------------
def reference_bits(case: Case, x: np.ndarray) -> np.ndarray:
    """The bits of numpy's reading of ``case`` on input ``x`` (every output's, one after another).

    Raises:
        OrtLayoutsError: the operator cannot read the case.
    """
    return flat_bits(operator_for_type(case.op).reference_outputs(case, x))


def flat_bits(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The bits of ``arrays``, one after another."""
    return np.concatenate([bits_of(np.asarray(a)) for a in arrays])


def recover(case: Case, input_array: np.ndarray, actual: Sequence[np.ndarray], expected_bits: np.ndarray,
            actual_bits: np.ndarray, rerun: Rerun | None = None) -> Recovery | None:
    """What the GPU applied, for a mismatching case (None when nothing is recovered).

    Args:
        case: the case that ran.
        input_array: its input (logical values; for Concat the whole tensor).
        actual: the EP's outputs.
        expected_bits: the expected outputs' bits, flat, one output after another.
        actual_bits: the EP's outputs' bits, the same way.
        rerun: runs the case again on another input; the case is then run on
            :func:`unique_inputs`. Without it, the case's own input serves when its elements'
            bits are distinct and non-zero.

    Values first (places right, values not: on the case's own input), then places (see the
    module docstring).
    """
    dtype = case.data_type
    found = _value_transform(dtype, expected_bits, actual_bits)
    if found is not None:
        op = _dml_operator(case)
        name = operator_name(op) if op is not None else ""
        return Recovery("values", name, {"transform": found[0]}, {"transform": "bit copy"}, (found[0],),
                        found[1])
    if dtype.bitwidth < 8 or actual_bits.size > _FIT_LIMIT:
        return None
    x = np.asarray(input_array)
    own = bits_of(x)
    avoid = _written_constants(case)
    if rerun is not None:
        runs = unique_inputs(dtype, x.shape, avoid=avoid)  # (and decoded without them)
        outs = [flat_bits(rerun(r)) for r in runs]
    elif (np.unique(own).size == own.size and (own != 0).all()
          and not np.isin(own, avoid).any()):  # no element reads as the constant
        runs = [x]
        outs = [flat_bits(actual)]
    else:
        return None
    observed = source_index_map(dtype, runs, outs, avoid=avoid)
    wanted = [reference_bits(case, r) for r in runs]
    expected = source_index_map(dtype, runs, wanted, avoid=avoid)
    return _places(case, observed, expected, outs[0], wanted[0])


def _written_constants(case: Case) -> tuple[int, ...]:
    """The bit patterns a case's output holds besides its input's elements: a constant Pad's
    value (little-endian, as the output holds it), which an input element must not hold."""
    if case.op == "Pad" and case.mode == "constant" and case.pad_value_hex:
        return (int.from_bytes(bytes.fromhex(case.pad_value_hex), "little"),)
    return ()


def recover_story(case: Case, input_array: np.ndarray, actual: Sequence[np.ndarray],
                  expected_bits: np.ndarray, actual_bits: np.ndarray, rerun: Rerun | None = None) -> str:
    """The recovery's one line for a mismatching case ("" when it names nothing): the text of
    :func:`recover`."""
    found = recover(case, input_array, actual, expected_bits, actual_bits, rerun)
    return found.text if found is not None else ""
