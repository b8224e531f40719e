"""Cases, their inputs and expected outputs, and the standard suite.

- :func:`dml_operator`: the DirectML operator the DML EP builds for a case (Transpose and Expand
  are ELEMENT_WISE_IDENTITY with permuted / broadcast input strides; Pad is PADDING1 after the
  EP's coercion to 4D).
- :func:`make_input`: the case's input, deterministic from ``case.seed`` and ``case.values``.
- :func:`expected_output`: what the operator gives, computed by the oracle from the descriptors
  alone. Pads with negative entries (cropping) have no DirectML operator; for them the expected
  output is the numpy reading of ONNX (pad with the non-negative parts, then crop), see
  :func:`reference_output`, and the runner reports them unsupported on the DML EP.
- :func:`standard_suite`: thousands of small cases covering every permutation of ranks 1 to 6,
  broadcast patterns, Pad modes, opsets, data types and special values.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np

from ort_layouts._errors import ShapeError
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.graphs import output_shape
from ort_layouts.operators.case import Case
from ort_layouts.operators.pad import PaddingOp, split_onnx_pads
from ort_layouts.reference.execute import IdentityOp
from ort_layouts.reference.execute import operator_for as dml_operator

__all__ = [
    "SUITE_DTYPES",
    "dml_operator",
    "expected_output",
    "has_negative_pads",
    "make_input",
    "reference_output",
    "special_values",
    "standard_suite",
]

# Every DirectML data type an ONNX tensor can carry (BOOL data is UINT8).
SUITE_DTYPES: tuple[DataType, ...] = (
    DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT64,
    DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64,
    DataType.UINT8, DataType.UINT16, DataType.UINT32, DataType.UINT64,
)


# ---- operators, inputs, expected outputs ----------------------------------------------------
def has_negative_pads(case: Case) -> bool:
    return case.op == "Pad" and any(p < 0 for p in case.pads or ())


def _pad_value_bytes(case: Case) -> bytes:
    if case.pad_value_hex:
        return bytes.fromhex(case.pad_value_hex)
    return bytes(case.data_type.to_numpy().itemsize)


def special_values(data_type: DataType) -> np.ndarray:
    """Bit patterns that catch conversions and lossy copies: NaNs with payloads, -0.0,
    denormals, infinities, integer extremes."""
    dtype = data_type.to_numpy()
    if data_type.is_float:
        bits = {
            DataType.FLOAT16: [0x7E00, 0x7C01, 0x7D55, 0xFE01, 0x8000, 0x0000, 0x0001, 0x03FF,
                               0x8001, 0x7C00, 0xFC00, 0x7BFF, 0x0400, 0x3C00, 0xBC00, 0x7FFF],
            DataType.FLOAT32: [0x7FC00000, 0x7F800001, 0x7FA5A5A5, 0xFFC00001, 0x80000000,
                               0x00000000, 0x00000001, 0x007FFFFF, 0x80000001, 0x7F800000,
                               0xFF800000, 0x7F7FFFFF, 0x00800000, 0x3F800000, 0xBF800000,
                               0x7FFFFFFF],
            DataType.FLOAT64: [0x7FF8000000000000, 0x7FF0000000000001, 0x7FF5A5A5A5A5A5A5,
                               0xFFF8000000000001, 0x8000000000000000, 0, 1, 0x000FFFFFFFFFFFFF,
                               0x8000000000000001, 0x7FF0000000000000, 0xFFF0000000000000,
                               0x7FEFFFFFFFFFFFFF, 0x0010000000000000, 0x3FF0000000000000,
                               0xBFF0000000000000, 0x7FFFFFFFFFFFFFFF],
        }[data_type]
        uint = np.dtype(f"<u{dtype.itemsize}")
        return np.array(bits, dtype=uint).view(dtype.newbyteorder("<")).astype(dtype)
    info = np.iinfo(dtype)
    values = {info.min, info.max, 0, 1, info.max - 1, info.min + 1, info.max // 2, info.max // 2 + 1}
    if info.min < 0:
        values |= {-1, -2, info.min // 2}
    if dtype.itemsize == 8:  # values a 32-bit emulation cannot keep
        values |= {2**32, 2**32 + 1, 2**31}
        if info.min < 0:
            values |= {-(2**32), -(2**31) - 1}
    return np.array(sorted(values), dtype=dtype)


@functools.cache
def _special_pool(data_type: DataType) -> np.ndarray:
    pool = special_values(data_type)
    pool.flags.writeable = False  # shared by every case of the type
    return pool


@functools.cache
def _iinfo(dtype: np.dtype[Any]) -> np.iinfo[Any]:
    return np.iinfo(dtype)


def make_input(case: Case) -> np.ndarray:
    """The case's input data: deterministic from ``case.seed`` and ``case.values``.

    "random" covers each type's full range (integers) or normal values (floats); "iota" counts
    0, 1, 2, ... (wrapping in the type); "special" shuffles :func:`special_values`.
    """
    dtype = case.data_type.to_numpy()
    count = math.prod(case.shape)
    rng = np.random.default_rng(case.seed)
    if case.values == "iota":
        if case.data_type.is_float:
            flat = np.arange(count).astype(dtype)
        else:  # wraps in the type's bits
            flat = np.arange(count, dtype=np.uint64).astype(f"u{dtype.itemsize}").view(dtype)
    elif case.values == "special":
        pool = _special_pool(case.data_type)
        flat = pool[rng.permutation(np.resize(np.arange(pool.size), count))] if count else pool[:0]
    elif case.data_type.is_float:
        flat = (rng.standard_normal(count) * 100).astype(dtype)
    else:
        info = _iinfo(dtype)
        flat = rng.integers(info.min, info.max, size=count, dtype=dtype, endpoint=True)
    return np.ascontiguousarray(flat.reshape(case.shape))


# ONNX Pad modes other than "constant" as numpy.pad names them
_NUMPY_PAD_MODES: dict[str, Literal["edge", "reflect", "wrap"]] = {
    "edge": "edge", "reflect": "reflect", "wrap": "wrap"}


def reference_output(case: Case, input_array: np.ndarray) -> np.ndarray:
    """The ONNX result computed with numpy alone (np.transpose, np.broadcast_to, np.pad).

    Negative pads crop after padding with the non-negative parts (the reading of ONNX's own
    reference implementation, extended to negative pads). np.pad's "constant" value is written
    bit for bit (NaN payloads kept).
    """
    x = np.asarray(input_array)
    if case.op == "Transpose":
        return np.ascontiguousarray(np.transpose(x, case.perm))
    if case.op == "Expand":
        return np.ascontiguousarray(np.broadcast_to(x, output_shape(case)))
    begins, ends = split_onnx_pads(case.pads or (), case.rank, case.axes)
    width = [(max(b, 0), max(e, 0)) for b, e in zip(begins, ends, strict=True)]
    if case.mode == "constant":
        uint = np.dtype(f"u{x.dtype.itemsize}")
        value = np.frombuffer(_pad_value_bytes(case), dtype=uint.newbyteorder("<"))[0]
        padded = np.pad(x.view(uint), width, mode="constant", constant_values=value).view(x.dtype)
    else:
        padded = np.pad(x, width, mode=_NUMPY_PAD_MODES[case.mode])
    crop = tuple(slice(max(-b, 0), padded.shape[a] - max(-e, 0))
                 for a, (b, e) in enumerate(zip(begins, ends, strict=True)))
    return np.ascontiguousarray(padded[crop])


def expected_output(case: Case, input_array: np.ndarray, *, op: IdentityOp | PaddingOp | None = None
                    ) -> np.ndarray:
    """What the DirectML operator produces for ``input_array``, by the oracle, in the ONNX output
    shape. Negative pads (no DirectML operator) use :func:`reference_output`.

    Args:
        case: the case.
        input_array: its input (the ONNX tensor, read packed).
        op: ``dml_operator(case)`` when the caller has it already.
    """
    if has_negative_pads(case):
        return reference_output(case, input_array)
    from ort_layouts.reference.execute import output_values

    op = dml_operator(case) if op is None else op
    x = np.ascontiguousarray(input_array, dtype=case.data_type.to_numpy())
    addressed = (op.input.last_element_index + 1) * x.itemsize
    if addressed <= x.nbytes <= op.input.total_tensor_size_in_bytes:
        values = output_values(op, x)  # x holds every byte the input descriptor reads
    else:  # a short input reads zeros past its end; a long one does not fit the buffer
        raw = np.zeros(op.input.total_tensor_size_in_bytes, dtype=np.uint8)
        raw[: x.nbytes] = x.reshape(-1).view(np.uint8)
        values = output_values(op, raw)
    return np.ascontiguousarray(values).reshape(output_shape(case))


# ---- the standard suite ---------------------------------------------------------------------
# Shapes with distinct sizes where possible, so a swapped axis changes the result.
_SHAPES: dict[int, tuple[int, ...]] = {
    1: (5,), 2: (3, 4), 3: (2, 3, 4), 4: (2, 3, 4, 5), 5: (2, 3, 2, 4, 3), 6: (2, 3, 2, 1, 3, 2),
    7: (2, 1, 3, 2, 1, 2, 2), 8: (2, 1, 2, 3, 1, 2, 1, 2),
}
_EXTRA_SHAPES: dict[int, tuple[tuple[int, ...], ...]] = {
    1: ((1,), (17,)), 2: ((1, 7), (6, 1), (16, 16)), 3: ((1, 5, 1), (4, 1, 3)),
    4: ((1, 1, 3, 5), (3, 1, 1, 2), (1, 4, 1, 6)),
}


def _rotating(dtypes: Sequence[DataType], i: int) -> DataType:
    return dtypes[i % len(dtypes)]


def _transpose_cases(dtypes: Sequence[DataType], ranks: set[int], rng_key: tuple[int, ...]) -> list[Case]:
    out: list[Case] = []
    for rank in sorted(ranks):
        shape = _SHAPES[rank]
        perms: list[tuple[int, ...] | None]
        if rank <= 6:
            perms = list(itertools.permutations(range(rank)))
        else:
            rank_rng = np.random.default_rng([*rng_key, rank])  # the same sample whatever the ranks asked
            perms = [tuple(int(a) for a in rank_rng.permutation(rank)) for _ in range(40)]
        perms.append(None)
        for k, perm in enumerate(perms):
            if rank <= 4 or perm is None:
                chosen = list(dtypes)
            else:  # every permutation in float32 and one more type, rotating
                chosen = list(dict.fromkeys([dtypes[0], _rotating(dtypes, k + 1)]))
            out += [Case("Transpose", dt, shape, perm=perm) for dt in chosen]
        for shape2 in _EXTRA_SHAPES.get(rank, ()):
            for k, perm in enumerate(itertools.permutations(range(rank))):
                out.append(Case("Transpose", _rotating(dtypes, k), shape2, perm=perm))
        if 2 <= rank <= 4:
            for dt in dtypes:
                for perm in (tuple(range(rank - 1, -1, -1)), (1, 0, *range(2, rank))):
                    out.append(Case("Transpose", dt, shape, perm=perm, values="special"))
                    out.append(Case("Transpose", dt, shape, perm=perm, values="iota"))
    return out


def _expand_full(rank: int) -> tuple[int, ...]:
    """Expand's target shapes have no 1s, so every subset of axes is a distinct broadcast."""
    return _SHAPES[rank] if 1 not in _SHAPES[rank] else tuple(n if n > 1 else 2 for n in _SHAPES[rank])


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


def _expand_cases(dtypes: Sequence[DataType], ranks: set[int]) -> list[Case]:
    out: list[Case] = []
    for rank in sorted(r for r in ranks if r <= 6):
        for k, (src, tgt) in enumerate(_expand_patterns(rank)):
            chosen = list(dtypes) if rank <= 3 else [_rotating(dtypes, k)]
            out += [Case("Expand", dt, src, target_shape=tgt) for dt in chosen]
        for k, (src, tgt) in enumerate(_multidirectional(rank)):
            chosen = list(dtypes) if rank <= 2 else [_rotating(dtypes, k)]
            out += [Case("Expand", dt, src, target_shape=tgt) for dt in chosen]
        if rank <= 3:
            src = tuple(1 if a % 2 == 0 else n for a, n in enumerate(_expand_full(rank)))
            for dt in dtypes:
                out.append(Case("Expand", dt, src, target_shape=(2, *_expand_full(rank)), values="special"))
    return out


def _pad_vectors(shape: tuple[int, ...], mode: str) -> list[tuple[int, ...]]:
    """pads over all axes: one axis at a time (begin, end, both; 1, dim-1, dim, beyond), all axes."""
    rank = len(shape)
    vecs: list[tuple[int, ...]] = [(0,) * (2 * rank)]
    if mode != "reflect" or min(shape) > 1:
        vecs.append((1,) * (2 * rank))
    for axis, n in enumerate(shape):
        amounts = {1, max(n - 1, 1)}
        if mode != "reflect":
            amounts |= {n, 2 * n + 1}  # up to and beyond the dimension
        elif n - 1 < 1:
            continue  # reflect needs pads < dim (ONNX Runtime's rule)
        for amount in sorted(amounts):
            for begin, end in ((amount, 0), (0, amount), (amount, max(amount - 1, 0))):
                v = [0] * (2 * rank)
                v[axis], v[rank + axis] = begin, end
                vecs.append(tuple(v))
    begins = [min(1, n - 1) if mode == "reflect" else 2 for n in shape]
    ends = [min(a % 2, n - 1) if mode == "reflect" else 1 + a % 3 for a, n in enumerate(shape)]
    vecs.append(tuple(begins) + tuple(ends))
    return list(dict.fromkeys(vecs))


_PAD_SHAPES: dict[int, tuple[int, ...]] = {
    1: (5,), 2: (3, 4), 3: (2, 3, 4), 4: (2, 3, 2, 3), 5: (2, 1, 3, 2, 2),
}


def _value_hex(dt: DataType, value: float | int) -> str:
    return np.array(value).astype(dt.to_numpy()).astype(dt.to_numpy().newbyteorder("<")).tobytes().hex()


def _pad_cases(dtypes: Sequence[DataType], ranks: set[int]) -> list[Case]:
    out: list[Case] = []
    modes = ("constant", "edge", "reflect", "wrap")
    for rank in sorted(r for r in ranks if r <= 5):
        shape = _PAD_SHAPES[rank]
        for mode in modes:
            for k, pads in enumerate(_pad_vectors(shape, mode)):
                chosen = list(dtypes) if rank <= 2 else [_rotating(dtypes, k)]
                for dt in chosen:
                    value = _value_hex(dt, 7) if mode == "constant" and k % 2 else ""
                    out.append(Case("Pad", dt, shape, pads=pads, mode=mode, pad_value_hex=value))
            for dt in dtypes:  # special inputs; a special constant (NaN payload, -0.0, extreme)
                specials = special_values(dt)
                value = "" if mode != "constant" else \
                    specials[1:2].astype(specials.dtype.newbyteorder("<")).tobytes().hex()
                pads = tuple(min(1, n - 1) for n in shape) * 2 if mode == "reflect" else (1,) * (2 * rank)
                out.append(Case("Pad", dt, shape, pads=pads, mode=mode, pad_value_hex=value,
                                values="special"))
        if rank >= 2:  # the axes input (opset 18+), negative axes included
            for k, axes in enumerate([(0,), (-1,), (rank - 1, 0), (-2, -1)]):
                for mode in modes:
                    pads = tuple(1 for _ in axes) + tuple(min(2, shape[a] - 1) if mode == "reflect" else 2
                                                          for a in axes)
                    for dt in (dtypes[0], _rotating(dtypes, k + 1)):
                        out.append(Case("Pad", dt, shape, pads=pads, mode=mode, axes=axes))
    if not ranks & {2, 3}:
        return out
    # opsets that change Pad: 2-10 attributes (float types only), 11-17 inputs, 18 axes, 19 wrap
    shape = (3, 4)
    floats = [dt for dt in dtypes if dt.is_float]
    for opset, mode in ((10, "constant"), (10, "edge"), (10, "reflect"), (11, "constant"), (11, "edge"),
                        (11, "reflect"), (13, "constant"), (18, "edge"), (19, "wrap")):
        chosen = floats if opset < 11 else list(dtypes)
        for dt in chosen:
            value = _value_hex(dt, -3) if mode == "constant" else ""
            out.append(Case("Pad", dt, shape, pads=(1, 2, 2, 1), mode=mode, pad_value_hex=value, opset=opset))
    # negative pads (cropping): DirectML cannot express them; other EPs compare with numpy.
    # Not with wrap: ONNX does not say whether wrap reads the cropped or the whole tensor.
    for mode in ("constant", "edge", "reflect"):
        crops = [(-1, 0, 0, 0), (0, 0, 0, -2), (-1, 1, 1, -1), (0, -1, 0, 2), (1, 0, -2, 0)]
        for k, pads in enumerate(crops):
            if mode == "reflect" and pads in ((0, -1, 0, 2), (1, 0, -2, 0)):
                continue  # ONNX Runtime crops first, and then a reflect pad must stay below the dim
            for dt in (dtypes[0], _rotating(dtypes, k + 1)):
                out.append(Case("Pad", dt, shape, pads=pads, mode=mode))
    return out


def standard_suite(
    *, ops: Iterable[str] | None = None, dtypes: Iterable[DataType | str] | None = None,
    ranks: Iterable[int] | None = None, seed: int = 0,
) -> list[Case]:
    """The standard suite: a deterministic list of small cases with unique ids.

    Transpose: every permutation of ranks 1 to 6 (and the default perm), a seeded sample for
    ranks 7 and 8. Expand: each subset of axes broadcast, rank increases by 1 and 2,
    multidirectional targets. Pad: constant (with and without a value), edge, reflect and wrap,
    pads up to and beyond the dimension where ONNX Runtime allows it (reflect: below it), the
    axes input, opsets 10/11/13/18/19, negative pads. Every data type; special values.

    Args:
        ops: keep only these ops ("Transpose", "Expand", "Pad").
        dtypes: keep only these data types.
        ranks: keep only cases whose input rank is one of these.
        seed: mixed into every case's seed (and the rank-7/8 permutation sample).
    """
    op_set = {"Transpose", "Expand", "Pad"} if ops is None else set(ops)
    unknown = op_set - {"Transpose", "Expand", "Pad"}
    if unknown:
        raise ShapeError(f"ops {sorted(unknown)} are not layout ops; valid: ['Expand', 'Pad', 'Transpose']")
    dtype_list = list(SUITE_DTYPES) if dtypes is None else [DataType.coerce(d) for d in dtypes]
    bad = [d.name for d in dtype_list if d not in SUITE_DTYPES]
    if bad:
        raise ShapeError(f"data types {bad} cannot be an ONNX tensor's; valid: "
                         f"{[d.name.lower() for d in SUITE_DTYPES]}")
    rank_set = set(range(1, 9)) if ranks is None else {int(r) for r in ranks}
    cases: list[Case] = []
    if "Transpose" in op_set:
        cases += _transpose_cases(dtype_list, rank_set & set(range(1, 9)), (seed, 0x7A7))
    if "Expand" in op_set:
        cases += _expand_cases(dtype_list, rank_set)
    if "Pad" in op_set:
        cases += _pad_cases(dtype_list, rank_set)
    cases = [c for c in cases if c.data_type in dtype_list and c.rank in rank_set]
    unique = list(dict.fromkeys(cases))
    return [_with_seed(c, seed) for c in unique]


def _with_seed(case: Case, suite_seed: int) -> Case:
    """The case with a seed derived from its own content and the suite seed, so a case keeps
    its id and its data whatever the selection (--ops, --dtypes, --ranks) around it."""
    import dataclasses
    import hashlib

    digest = hashlib.blake2b(f"{suite_seed}|{case.id}".encode(), digest_size=4).digest()
    return dataclasses.replace(case, seed=int.from_bytes(digest, "little") & 0x7FFFFFFF)
