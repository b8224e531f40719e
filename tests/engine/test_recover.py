"""recover: bugs modelled with numpy alone (not with the project's descriptors) are recovered and named.

Each bug is a function of the input, as a broken GPU would be: the test runs it once on the
case's input (the mismatching output) and again, through ``rerun``, on whatever input the
recovery asks for. Expected strides, offsets and paddings are worked by hand from the shapes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import ReportError
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.diagnose import diagnose
from ort_layouts.engine.recover import (
    AffineMap,
    Recovery,
    fit_affine,
    recover,
    recover_padding,
    recover_places,
    source_index_map,
    unique_inputs,
    values_story,
)
from ort_layouts.operators.case import Case
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.operators.values import make_input
from ort_layouts.reference.compare import bits_of

Bug = Callable[[np.ndarray], np.ndarray | list[np.ndarray]]


def gather(x: np.ndarray, sizes: Sequence[int], strides: Sequence[int], offset: int = 0) -> np.ndarray:
    """What a GPU writes when it reads ``x``'s buffer through sizes/strides/offset (elements);
    reads outside the buffer give zero bits."""
    flat = np.ascontiguousarray(x).reshape(-1)
    idx = np.full((), offset, dtype=np.int64)
    for n, s in zip(sizes, strides, strict=True):
        idx = idx[..., None] + np.arange(n, dtype=np.int64) * s
    inside = (idx >= 0) & (idx < flat.size)
    out = np.zeros(idx.shape, dtype=x.dtype)
    out[inside] = flat[idx[inside]]
    return out


def stopped_after(good: np.ndarray, count: int) -> np.ndarray:
    out = np.zeros_like(good).reshape(-1)
    out[:count] = good.reshape(-1)[:count]
    return out.reshape(good.shape)


def swap_words(x: np.ndarray) -> np.ndarray:
    u = x.view(np.uint64)
    return ((u << np.uint64(32)) | (u >> np.uint64(32))).view(x.dtype)


def flush(x: np.ndarray) -> np.ndarray:
    bits = x.view(np.uint32).copy()
    denormal = ((bits & 0x7F800000) == 0) & ((bits & 0x7FFFFF) != 0)
    bits[denormal] &= np.uint32(0x80000000)
    return bits.view(np.float32)


T234 = Case("Transpose", DataType.FLOAT32, (2, 3, 4), perm=(2, 0, 1))  # out [4,2,3], strides [1,12,4]
T333 = Case("Transpose", DataType.INT32, (3, 3, 3), perm=(1, 2, 0))  # out strides [3,1,9]
T_U8 = Case("Transpose", DataType.UINT8, (2, 3, 50), perm=(2, 1, 0))  # 300 elements > 255 patterns
T_F16 = Case("Transpose", DataType.FLOAT16, (4, 5), perm=(1, 0))  # out [5,4] strides [1,5]
E_RANK = Case("Expand", DataType.FLOAT32, (4,), target_shape=(3, 4))  # strides [0,1]
E_MID = Case("Expand", DataType.INT16, (3, 1, 4), target_shape=(3, 5, 4))  # strides [4,0,1]
R26 = Case("Reshape", DataType.FLOAT32, (2, 6), target_shape=(3, 4))
S46 = Case("Slice", DataType.FLOAT32, (4, 6), starts=(1, 0), ends=(3, 6), axes=(0, 1), steps=(1, 2))  # [2,3]
P34 = Case("Pad", DataType.FLOAT32, (3, 4), pads=(1, 2, 3, 4), mode="reflect")
PC34 = Case("Pad", DataType.FLOAT32, (3, 4), pads=(1, 1, 1, 1), mode="constant",
            pad_value_hex=np.float32(2.5).tobytes().hex())
C43 = Case("Concat", DataType.FLOAT32, (4, 3), axis=0, parts=(1, 3))
SP62 = Case("Split", DataType.FLOAT32, (6, 2), axis=0, parts=(2, 4))
TI23 = Case("Tile", DataType.FLOAT32, (2, 3), repeats=(2, 2))
D2S = Case("DepthToSpace", DataType.FLOAT32, (1, 8, 2, 2), blocksize=2)


def transpose_of(case: Case) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: np.ascontiguousarray(np.transpose(x, case.perm))


def padded(x: np.ndarray, widths: list[tuple[int, int]], mode: str, value: float = 0.0) -> np.ndarray:
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=value)
    return np.pad(x, widths, mode=mode)  # type: ignore[call-overload, no-any-return]


# (id, case, values kind, bug, words the new diagnosis must contain)
BUGS: list[tuple[str, Case, str, Bug, list[str]]] = [
    ("strides-permuted", T234, "random", lambda x: gather(x, (4, 2, 3), (4, 12, 1)),
     ["strides [4,12,1]", "expected strides [1,12,4]", "strides permuted as perm [2,1,0]",
      "reading past the buffer end"]),
    ("strides-in-bytes", T234, "random", lambda x: gather(x, (4, 2, 3), (4, 48, 16)),
     ["strides [4,48,16]", "strides in bytes (x4"]),
    ("offset-plus-1", T234, "random", lambda x: gather(x, (4, 2, 3), (1, 12, 4), 1),
     ["offset 1", "offset +1 element", "reading past the buffer end (1 of 24"]),
    ("offset-float16", T_F16, "random", lambda x: gather(x, (5, 4), (1, 5), 2),
     ["offset +2 elements"]),
    ("strides-permuted-uint8", T_U8, "random", lambda x: gather(x, (50, 3, 2), (1, 150, 50)),
     ["strides [1,150,50]", "strides permuted as perm [0,2,1]"]),
    ("broadcast-not-zeroed-rank-extended", E_RANK, "random", lambda x: gather(x, (3, 4), (4, 1)),
     # the descriptors are 4-D, as the EP pads them: ONNX's axis 0 is their axis 2
     ["strides [0,0,4,1]", "expected strides [0,0,0,1]",
      "broadcast axis 2 not zeroed (stride 4 instead of 0)"]),
    ("broadcast-not-zeroed-middle", E_MID, "random", lambda x: gather(x, (3, 5, 4), (4, 1, 1)),
     ["broadcast axis 2 not zeroed (stride 1 instead of 0)"]),  # ONNX's axis 1, in the 4-D descriptors
    ("reshape-offset", R26, "random", lambda x: gather(x, (3, 4), (4, 1), 3),
     ["offset +3 elements", "reading past the buffer end (3 of 12"]),
    ("slice-window-shifted-2", S46, "random", lambda x: gather(x, (2, 3), (6, 2), 8),
     ["strides [6,2] offset 8", "expected strides [6,2] offset 6", "offset +2 elements"]),
    ("slice-rows-and-columns-swapped", S46, "random", lambda x: gather(x, (2, 3), (2, 6), 6),
     ["strides [2,6]", "expected strides [6,2]", "strides permuted as perm [1,0]"]),
    ("dispatch-stopped-early", T234, "random", lambda x: stopped_after(transpose_of(T234)(x), 12),
     ["rows 0-1 of axis 0 right, from row 2 on nothing from the input", "dispatch stopped early"]),
    ("dispatch-stopped-mid-row", T333, "random", lambda x: stopped_after(transpose_of(T333)(x), 10),
     ["elements 0-9 right, from element 10", "dispatch stopped early"]),
    ("concat-second-part-shifted", C43, "random",
     lambda x: np.concatenate([x[:1], gather(x, (3, 3), (3, 1), 4)]),
     ["row 0 of axis 0 right, from row 1 on the GPU read sizes [3,3] strides [3,1] offset 4",
      "expected strides [3,1] offset 3: offset +1 element"]),
    ("split-outputs-offset", SP62, "random",
     lambda x: [gather(x, (2, 2), (2, 1), 1), gather(x, (4, 2), (2, 1), 5)],
     ["strides [1] offset 1", "offset +1 element"]),
    ("pad-widths-wrong", P34, "random", lambda x: padded(x, [(2, 2), (2, 4)], "reflect"),
     ["start padding [2,2] end padding [2,4] mode REFLECT", "axis 0 padded 2/2 instead of 1/3"]),
    ("pad-widths-and-mode", P34, "random", lambda x: padded(x, [(1, 3), (3, 3)], "wrap"),
     ["mode WRAP", "axis 1 padded 3/3 instead of 2/4", "mode WRAP instead of REFLECT"]),
    ("pad-constant-on-wrong-axis", PC34, "random",
     lambda x: padded(x, [(2, 0), (1, 1)], "constant", 2.5).reshape(5, 6),
     ["start padding [2,1] end padding [0,1] mode CONSTANT constant 0x40200000",
      "axis 0 padded 2/0 instead of 1/1"]),
    ("negative-zero-lost", T234, "special",
     lambda x: np.where(transpose_of(T234)(x).view(np.uint32) == 0x80000000, 0,
                        transpose_of(T234)(x).view(np.uint32)).astype(np.uint32).view(np.float32),
     ["-0.0 lost"]),
    ("denormals-flushed", T234, "special", lambda x: flush(transpose_of(T234)(x)),
     ["denormals flushed"]),
    ("float32-rounded-through-float16", T234, "random",
     lambda x: transpose_of(T234)(x).astype(np.float16).astype(np.float32), ["rounded through float16"]),
    ("cast-through-int32", T234, "random",
     lambda x: transpose_of(T234)(x).astype(np.int32).astype(np.float32), ["cast through int32"]),
    ("byte-order-swapped", Case("Transpose", DataType.UINT16, (3, 4), perm=(1, 0)), "random",
     lambda x: np.ascontiguousarray(x.T).byteswap(), ["byte order swapped"]),
    ("int64-words-swapped", Case("Transpose", DataType.INT64, (3, 4), perm=(1, 0)), "random",
     lambda x: swap_words(np.ascontiguousarray(x.T)), ["32-bit words of each element swapped"]),
    # bugs the list of alternatives names already (the recovery must not get in their way)
    ("other-perm-cube", T333, "random", lambda x: gather(x, (3, 3, 3), (9, 1, 3)),
     ["perm [0, 2, 1]"]),  # input strides [9,3,1]; expected [3,1,9]
    ("read-packed", T234, "random", lambda x: x.reshape(4, 2, 3), ["input read packed"]),
    ("pad-start-end-swapped", P34, "random", lambda x: padded(x, [(3, 1), (4, 2)], "reflect"),
     ["start and end padding swapped"]),
    ("pad-mode-symmetric", P34, "random", lambda x: padded(x, [(1, 3), (2, 4)], "symmetric"),
     ["SYMMETRIC"]),
    ("int64-low-words", Case("Transpose", DataType.INT64, (3, 4), perm=(1, 0)), "random",
     lambda x: (np.ascontiguousarray(x.T).view(np.uint64) & np.uint64(0xFFFFFFFF)).view(np.int64),
     ["UINT32 low words"]),
    ("tile-dispatch-stopped", TI23, "random", lambda x: stopped_after(np.tile(x, (2, 2)), 12),
     ["rows 0-1 of axis 0 right, from row 2 on nothing from the input"]),
    ("pad-constant-wrong", PC34, "random", lambda x: padded(x, [(1, 1), (1, 1)], "constant", 1.0),
     ["constant replaced by 0x3f800000"]),
    ("slice-step-ignored", S46, "random", lambda x: gather(x, (2, 3), (6, 1), 6),
     ["strides ignored"]),
    ("depth-to-space-crd", D2S, "random",
     lambda x: x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 4, 4),
     ["CRD"]),
]


def _run(case: Case, kind: str, bug: Bug, recover: bool = True) -> str:
    import dataclasses

    case = dataclasses.replace(case, values=kind, seed=7)
    x = make_input(case)
    out = bug(x)

    def rerun(arr: np.ndarray) -> list[np.ndarray]:
        got = bug(arr)
        return got if isinstance(got, list) else [got]

    return diagnose(case, x, out, rerun, recover=recover)


@pytest.mark.parametrize("case,kind,bug,words", [b[1:] for b in BUGS], ids=[b[0] for b in BUGS])
def test_modelled_bug_is_recovered_and_named(case: Case, kind: str, bug: Bug, words: list[str]) -> None:
    text = _run(case, kind, bug)
    for word in words:
        assert word in text, text
    assert "\n" not in text


def test_recovery_names_more_bugs_than_the_list_of_alternatives() -> None:
    kinds = {b[0] for b in BUGS}
    assert len(kinds) >= 20
    old = sum(bool(_run(c, k, f, recover=False)) for _, c, k, f, _ in BUGS)
    new = sum(all(w in _run(c, k, f) for w in words) for _, c, k, f, words in BUGS)
    assert new == len(BUGS)
    assert old < new
    print(f"named: old {old}/{len(BUGS)}, new {new}/{len(BUGS)}")


# ---- the parts, without the engine ---------------------------------------------------------
def test_unique_inputs_identify_every_element() -> None:
    for dtype, shape, runs in ((DataType.FLOAT32, (3, 5), 1), (DataType.FLOAT16, (7, 11), 1),
                               (DataType.UINT8, (20, 20), 2), (DataType.INT8, (4,), 1),
                               (DataType.INT64, (2, 3), 1)):
        inputs = unique_inputs(dtype, shape)
        assert len(inputs) == runs
        assert all(a.shape == shape and a.dtype == dtype.to_numpy() for a in inputs)
        # the identity read back gives each element's own index
        index = source_index_map(dtype, inputs, [a.copy() for a in inputs])
        assert np.array_equal(index, np.arange(math.prod(shape)))
        # a float pattern is never NaN, zero or denormal
        if dtype.is_float:
            values = inputs[0].astype(np.float64)
            assert np.isfinite(values).all() and (np.abs(values) >= np.finfo(dtype.to_numpy()).tiny).all()


def test_unique_inputs_refuse_four_bit_types() -> None:
    with pytest.raises(ValueError, match="too few"):
        unique_inputs(DataType.UINT4, (3,))


def test_source_index_map_marks_foreign_values() -> None:
    x = np.array([10, 20, 30], dtype=np.int32)
    out = np.array([30, 0, 10, 7], dtype=np.int32)
    assert source_index_map(DataType.INT32, [x], [out]).tolist() == [2, -1, 0, -1]


def test_fit_affine_exact_and_past_end() -> None:
    # a [2,3] read of a 6-element buffer with strides [1,2] offset 1: the last read (index 6)
    # lies past the end
    m = np.array([1, 3, 5, 2, 4, -1])
    assert fit_affine(m, (2, 3), 6) == AffineMap((2, 3), (1, 2), 1, past_end_count=1)
    assert fit_affine(np.array([0, 1, 2, 4]), (4,), 6) is None  # not affine
    assert fit_affine(np.array([0, 1, -1, 3]), (4,), 6) is None  # -1 inside the buffer
    assert fit_affine(np.array([-1, -1]), (2,), 6) is None


def test_recover_places_without_hardware() -> None:
    # Transpose [2,3,4] perm [2,0,1]: expected reads strides [1,12,4]; observed: strides [12,1,4]
    # over sizes [4,2,3] would leave the buffer; here the map is given directly
    sizes = (4, 2, 3)
    expected = AffineMap(sizes, (1, 12, 4), 0).indices()
    observed = AffineMap(sizes, (1, 12, 4), 2).indices()
    observed[observed >= 24] = -1
    text = recover_places(T234, observed, expected)
    assert text == ("recovered: the GPU read sizes [4,2,3] strides [1,12,4] offset 2; expected strides "
                    "[1,12,4] offset 0: offset +2 elements; reading past the buffer end (2 of 24 "
                    "elements read outside its 24)")
    assert recover_places(T234, expected, expected) == ""


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap", "constant"])
def test_recover_padding_every_mode(mode: str) -> None:
    shape, widths = (3, 4), [(2, 1), (3, 5)]
    index = np.arange(12).reshape(shape)
    kw = {"constant_values": -1} if mode == "constant" else {}
    m = np.pad(index, widths, mode=mode, **kw)  # type: ignore[call-overload]
    bits = np.where(m < 0, 0x40200000, 0).astype(np.uint32)
    fit = recover_padding(m.reshape(-1), shape, m.shape, bits)
    assert fit is not None
    assert (fit.start_padding, fit.end_padding) == ((2, 3), (1, 5))
    assert fit.mode == mode
    assert fit.constant_bits == (0x40200000 if mode == "constant" else None)


def test_values_story_names_each_transform() -> None:
    x = np.array([1.5, -0.0, 1e-40, 3.25], dtype=np.float32)
    bits = x.view(np.uint32)
    assert "-0.0 lost" in values_story(DataType.FLOAT32, bits, np.abs(x).view(np.uint32) | (bits & 0))
    assert "denormals flushed" in values_story(DataType.FLOAT32, bits, flush(x).view(np.uint32))
    assert values_story(DataType.FLOAT32, bits, bits.copy()) == ""
    y = np.array([1, 2, 0x1234], dtype=np.uint16)
    assert "byte order swapped" in values_story(DataType.UINT16, y, y.byteswap())


def test_random_injected_reads_are_recovered_whenever_identifiable() -> None:
    """Random Transposes read through random strides and offsets: wherever the elements read
    inside the buffer pin the map down (their index matrix has full column rank), the
    recovered read is the injected one."""
    rng = np.random.default_rng(2024)
    checked = 0
    for _ in range(60):
        rank = int(rng.integers(2, 5))
        shape = tuple(int(n) for n in rng.integers(2, 5, size=rank))
        perm = tuple(int(p) for p in rng.permutation(rank))
        case = Case("Transpose", DataType.FLOAT32, shape, perm=perm)
        out_shape = tuple(shape[p] for p in perm)
        strides = [int(s) for s in rng.integers(0, 2 * math.prod(shape) // max(out_shape), size=rank)]
        offset = int(rng.integers(0, 4))
        (x,) = unique_inputs(DataType.FLOAT32, shape)
        observed = source_index_map(DataType.FLOAT32, [x], [gather(x, out_shape, strides, offset)])
        expected = source_index_map(DataType.FLOAT32, [x], [np.transpose(x, perm)])
        index = np.stack(np.unravel_index(np.flatnonzero(observed >= 0), out_shape), axis=1)
        design = np.concatenate([np.ones((index.shape[0], 1)), index], axis=1)
        if np.linalg.matrix_rank(design) < rank + 1 or np.array_equal(observed, expected):
            continue
        text = recover_places(case, observed, expected)
        want = f"the GPU read sizes {str(list(out_shape)).replace(' ', '')} strides " \
               f"{str(strides).replace(' ', '')} offset {offset}"
        assert want in text, (case, strides, offset, text)
        checked += 1
    assert checked >= 20, checked
    print(f"checked {checked}")


# ---- the structured recovery ---------------------------------------------------------------
def _recovery(case: Case, bug: Bug) -> Recovery:
    import dataclasses

    case = dataclasses.replace(case, seed=11)
    x = make_input(case)
    out = bug(x)
    outs = out if isinstance(out, list) else [out]
    expected = operator_for_type(case.op).reference_outputs(case, x)

    def rerun(arr: np.ndarray) -> list[np.ndarray]:
        got = bug(arr)
        return got if isinstance(got, list) else [got]

    found = recover(case, x, outs, np.concatenate([bits_of(np.asarray(e)).reshape(-1) for e in expected]),
                    np.concatenate([bits_of(np.asarray(o)).reshape(-1) for o in outs]), rerun)
    assert found is not None
    return found


T_TILE = Case("Tile", DataType.FLOAT32, (2, 3), repeats=(1, 2))  # out [2,6]; no size-1 axis squeezed
S2D = Case("SpaceToDepth", DataType.FLOAT32, (1, 2, 4, 4), blocksize=2)  # out [1,8,2,2]


@pytest.mark.parametrize(("case", "bug", "kind", "operator", "applied", "expected", "name"), [
    # SLICE1 of [4,6] rows 1..2, columns 0,2,4: window offsets [1,0] sizes [2,6] strides [1,2]
    # (the EP's window: sizes are the clamped start..end, not the output); the GPU read columns
    # 1,3,5: its smallest window is offsets [1,1] sizes [2,5]
    (S46, lambda x: np.ascontiguousarray(x[1:3, 1::2]), "slice", "DML_OPERATOR_SLICE1",
     {"input_window_offsets": [1, 1], "input_window_sizes": [2, 5], "input_window_strides": [1, 2]},
     {"input_window_offsets": [1, 0], "input_window_sizes": [2, 6], "input_window_strides": [1, 2]},
     "window starts one element late on axis 1"),
    # Concat of [1,3] and [3,3] along ONNX axis 0 = DML axis 2 of [1,1,4,3]: input 1 first
    (C43, lambda x: np.concatenate([x[1:], x[:1]]), "join", "DML_OPERATOR_JOIN",
     {"axis": 2, "offsets_along_axis": [3, 0]}, {"axis": 2, "offsets_along_axis": [0, 1]},
     "inputs 0 and 1 swapped"),
    # Split of [6,2] into rows [2,4] along DML axis 2 of [1,1,6,2]: output 1 read from row 1
    (SP62, lambda x: [np.ascontiguousarray(x[:2]), np.ascontiguousarray(x[1:5])], "split",
     "DML_OPERATOR_SPLIT", {"axis": 2, "offsets_along_axis": [0, 1]},
     {"axis": 2, "offsets_along_axis": [0, 2]},
     "output 1 read from offset 1 instead of 2 along axis 2"),
    # TILE repeats [2,1] instead of [1,2]: a [4,3] output read back as [2,6]
    (T_TILE, lambda x: np.tile(x, (2, 1)).reshape(2, 6), "tile", "DML_OPERATOR_TILE",
     {"repeats": [2, 1]}, {"repeats": [1, 2]},
     "repeats [2,1] instead of [1,2] (the repeats on the wrong axes)"),
    # DEPTH_TO_SPACE1 in CRD order: ONNX's CRD reshape [1,2,2,2,2,2] -> (0,1,4,2,5,3)
    (D2S, lambda x: x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 4, 4),
     "depth_to_space", "DML_OPERATOR_DEPTH_TO_SPACE1", {"block_size": 2, "mode": "CRD"},
     {"block_size": 2, "mode": "DCR"}, "mode CRD instead of DCR"),
    # SPACE_TO_DEPTH with block size 4: ONNX's reshape [1,2,1,4,1,4] -> (0,3,5,1,2,4), [1,32,1,1]
    # (with one channel, block sizes 1 and 4 would give the same order: not identifiable)
    (S2D, lambda x: x.reshape(1, 2, 1, 4, 1, 4).transpose(0, 3, 5, 1, 2, 4).reshape(1, 8, 2, 2),
     "space_to_depth", "DML_OPERATOR_SPACE_TO_DEPTH", {"block_size": 4, "mode": "DCR"},
     {"block_size": 2, "mode": "DCR"}, "block size 4 instead of 2"),
    # PADDING1 of [3,4] coerced to [1,1,3,4]: pads [1,2,3,4] are start [0,0,1,2] end [0,0,3,4]
    # (PaddingOp.from_onnx's documented example); the GPU padded axis 0 by 2/2
    (P34, lambda x: padded(x, [(2, 2), (2, 4)], "reflect"), "padding", "DML_OPERATOR_PADDING1",
     {"start_padding": [0, 0, 2, 2], "end_padding": [0, 0, 2, 4], "mode": "REFLECTION", "constant_hex": ""},
     {"start_padding": [0, 0, 1, 2], "end_padding": [0, 0, 3, 4], "mode": "REFLECTION", "constant_hex": ""},
     "axis 0 padded 2/2 instead of 1/3"),
    # the constant 1.0 (0x3f800000) written instead of 2.5 (0x40200000), little-endian hex
    (PC34, lambda x: padded(x, [(1, 1), (1, 1)], "constant", 1.0), "padding", "DML_OPERATOR_PADDING1",
     {"start_padding": [0, 0, 1, 1], "end_padding": [0, 0, 1, 1], "mode": "CONSTANT",
      "constant_hex": "0000803f"},
     {"start_padding": [0, 0, 1, 1], "end_padding": [0, 0, 1, 1], "mode": "CONSTANT",
      "constant_hex": "00002040"},
     "constant 0x3f800000 instead of 0x40200000"),
    # a TILE whose input buffer is read from element 1: the input descriptor [2,3] (packed
    # strides [3,1]) with a base offset of one element; the last element read lies past the end
    (T_TILE, lambda x: np.tile(np.append(x.reshape(-1)[1:], np.zeros(1, x.dtype)).reshape(2, 3), (1, 2)),
     "read", "DML_OPERATOR_TILE",
     {"sizes": [2, 3], "strides_in_elements": [3, 1], "offset_in_elements": 1, "input_index": 0},
     {"sizes": [2, 3], "strides_in_elements": [3, 1], "offset_in_elements": 0, "input_index": 0},
     "offset +1 element"),
    # Transpose [2,3,4] perm [2,0,1] reads strides [1,12,4] (packed [12,4,1] permuted); the GPU
    # read the packed input instead: strides [6,3,1] over the output [4,2,3]
    (T234, lambda x: x.reshape(4, 2, 3), "read", "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
     {"sizes": [4, 2, 3], "strides_in_elements": [6, 3, 1], "offset_in_elements": 0, "input_index": 0},
     {"sizes": [4, 2, 3], "strides_in_elements": [1, 12, 4], "offset_in_elements": 0, "input_index": 0},
     "strides differ on axes [0,1,2]"),
    # 12 of 24 elements written: rows 0-1 of the [4,2,3] output, the break at index [2,0,0]
    (T234, lambda x: stopped_after(transpose_of(T234)(x), 12), "region", "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
     {"sizes": [4, 2, 3], "right_until_element": 12, "break_index": [2, 0, 0], "right_element_count": 12,
      "after": "nothing from the input", "after_read": None, "axes_right": [], "axes_wrong": []},
     {"sizes": [4, 2, 3], "right_until_element": 24, "break_index": [], "right_element_count": 24,
      "after": "", "after_read": None, "axes_right": [0, 1, 2], "axes_wrong": []},
     "the dispatch stopped early"),
], ids=["slice-window", "join-swapped", "split-offset", "tile-repeats", "d2s-mode", "s2d-block", "pad-widths",
        "pad-constant", "tile-input-offset", "transpose-read-packed", "region"])
def test_recovery_gives_the_applied_and_expected_parameters(
        case: Case, bug: Bug, kind: str, operator: str, applied: dict[str, Any], expected: dict[str, Any],
        name: str) -> None:
    found = _recovery(case, bug)
    assert (found.kind, found.operator) == (kind, operator), found.text
    assert {k: v for k, v in found.applied.items() if k != "operator_dict"} == applied
    assert {k: v for k, v in found.expected.items() if k != "operator_dict"} == expected
    assert name in found.names, found.names
    assert found.text.startswith("recovered: ") and name in found.text
    assert Recovery.from_dict(json.loads(json.dumps(found.to_dict()))) == found


def test_join_and_split_recoveries_read_as_one_line() -> None:
    join = _recovery(C43, lambda x: np.concatenate([x[1:], x[:1]]))
    assert join.text == ("recovered: the GPU joined along axis 2 at offsets [3,0]; expected axis 2 offsets "
                         "[0,1]: inputs 0 and 1 swapped")
    split = _recovery(SP62, lambda x: [np.ascontiguousarray(x[:2]), np.ascontiguousarray(x[1:5])])
    assert split.text == ("recovered: the GPU split along axis 2 from offsets [0,1]; expected axis 2 offsets "
                          "[0,2]: output 1 read from offset 1 instead of 2 along axis 2")


def test_the_recovered_operators_can_be_drawn_side_by_side() -> None:
    """Where the applied parameters make a DirectML operator, both sides carry its to_dict,
    which the reports read back and draw."""
    from ort_layouts.reports.render import operator_from_dict, render_svg

    for case, bug in ((S46, lambda x: np.ascontiguousarray(x[1:3, 1::2])),
                      (T_TILE, lambda x: np.tile(x, (2, 1)).reshape(2, 6)),
                      (P34, lambda x: padded(x, [(2, 2), (2, 4)], "reflect"))):
        found = _recovery(case, bug)
        applied = operator_from_dict(found.applied["operator_dict"])
        expected = operator_from_dict(found.expected["operator_dict"])
        assert applied != expected
        assert expected.to_dict() == operator_for_type(case.op).dml_operator(case).to_dict()
        assert "<svg" in render_svg(applied) and "<svg" in render_svg(expected)


_GOOD_RECOVERY = {"kind": "read", "operator": "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
                  "applied": {"strides": [1, 2]}, "expected": {"strides": [2, 1]},
                  "names": ["strides permuted"], "text": "recovered: strides"}


@pytest.mark.parametrize(("data", "message"), [
    (None, "recovery None is a NoneType; valid: a mapping of its fields ['kind', 'operator', 'applied', "
           "'expected', 'names', 'text']"),
    ([], "recovery [] is a list; valid: a mapping of its fields ['kind', 'operator', 'applied', 'expected', "
         "'names', 'text']"),
    ({k: v for k, v in _GOOD_RECOVERY.items() if k != "text"}, "lacks ['text']; valid fields: "),
    ({**_GOOD_RECOVERY, "names": "abc"}, "recovery names 'abc' is a str; valid: a list of str"),
    ({**_GOOD_RECOVERY, "names": [1]}, "recovery names [1] is a list; valid: a list of str"),
    ({**_GOOD_RECOVERY, "text": None}, "recovery text None is a NoneType; valid: a str"),
    ({**_GOOD_RECOVERY, "operator": 5}, "recovery operator 5 is an int; valid: a str"),
    ({**_GOOD_RECOVERY, "applied": [1]}, "recovery applied [1] is a list; valid: a JSON object"),
])
def test_a_recovery_read_from_data_of_a_wrong_kind_is_refused_naming_the_field(data: Any,
                                                                               message: str) -> None:
    """from_dict converted such fields (names 'abc' became ('a', 'b', 'c'), text None 'None') or
    raised a bare TypeError; a report holding them is damaged."""
    assert Recovery.from_dict(_GOOD_RECOVERY).names == ("strides permuted",)
    with pytest.raises(ReportError) as raised:
        Recovery.from_dict(data)
    assert message in str(raised.value)


def test_the_strides_tried_for_axes_never_read_are_bounded() -> None:
    """A dispatch that wrote one element leaves every axis unseen: every combination of the
    hinted strides was tried, len(hints) ** rank of them, each over the whole map (a rank-8
    Expand's diagnosis did not end in 290 s)."""
    from ort_layouts.engine.recover_params import hint_combos

    assert list(hint_combos([7, 7, 0], 2, 4)) == [(7, 7), (7, 0), (0, 7), (0, 0)]  # each hint once, in order
    assert list(hint_combos([], 3, 10)) == [(0, 0, 0)] and list(hint_combos([1, 2], 0, 10)) == [()]
    assert len(list(hint_combos([1, 2, 3, 4, 5], 8, 1728))) == 4096  # of 390,625
    assert len(list(hint_combos([1, 2, 3], 8, 1 << 22))) == 4  # a large map: fewer


@pytest.mark.parametrize("case", [
    Case("Transpose", "float32", (2,) * 8, perm=tuple(range(7, -1, -1)), seed=1),
    Case("Expand", "float32", (2, 3, 2, 2, 1, 1), target_shape=(3, 2, 2, 3, 2, 2, 3, 2), seed=1831366602),
], ids=["transpose-rank-8", "expand-rank-8"])
def test_a_dispatch_that_wrote_one_element_is_said_to_have_stopped_early(case: Case) -> None:
    from ort_layouts.engine.diagnose import explain

    x = make_input(case)
    expected = (np.transpose(x, case.perm) if case.op == "Transpose"  # numpy's reading of the op
                else np.broadcast_to(x, case.target_shape or ()))
    actual = np.zeros(expected.shape, expected.dtype)
    actual.flat[0] = expected.flat[0]
    text = explain(case, x, actual).text
    assert text.startswith("recovered: elements 0-0 right, from element 1 (index [0,0,0,0,0,0,0,1]) on "
                           "nothing from the input (zeros or other values): the dispatch stopped early"), text


def test_one_wrong_element_is_named_not_a_break_from_it_on() -> None:
    """A right Transpose whose output element 5 is a NaN was "from element 5 on wrong" with
    "steps along axes [] wrong", although 23 of 24 elements, every one after 5 too, were right."""
    from ort_layouts.engine.diagnose import explain

    case = Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1))
    x = make_input(case)

    def gpu(z: np.ndarray) -> np.ndarray:
        out = np.ascontiguousarray(np.transpose(z, case.perm))  # numpy's transpose, one element lost
        out.flat[5] = np.float32("nan")
        return out

    found = explain(case, x, gpu(x), lambda z: [gpu(z)])
    assert found.text == ("recovered: no single affine map fits: elements [5] wrong (23 of 24 elements in "
                          "place); steps along axes [0,1,2] right")
    assert found.recovery is not None and found.recovery.names == ("elements [5] wrong",)
    assert found.recovery.applied["axes_wrong"] == [] and found.recovery.applied["right_element_count"] == 23


@pytest.mark.parametrize("count", [200, 255, 256, 300, 70000])
def test_inputs_of_several_runs_never_hold_the_constant_and_still_name_each_element(count: int) -> None:
    """The runs of an 8-bit input too large for one took every pattern as a digit, a Pad's
    constant among them (and 255 elements with one constant avoided took it in one input): the
    constant read as an input element, and the diagnosis was wrong or missing."""
    from ort_layouts.engine.recover import source_index_map, unique_inputs

    runs = unique_inputs(DataType.UINT8, (count,), avoid=(5,))
    assert all(not (run == 5).any() for run in runs)
    flat = np.arange(count)[::-1]  # an output that holds the elements reversed, then the constant
    outputs = [np.concatenate([run.reshape(-1)[flat], [np.uint8(5)]]) for run in runs]
    found = source_index_map(DataType.UINT8, runs, outputs, avoid=(5,))
    assert found.tolist() == [*flat.tolist(), -1]


@pytest.mark.parametrize("shape", [(15, 17), (16, 16), (20, 20)])
def test_a_uint8_pad_padded_elsewhere_is_recovered_with_a_constant_that_is_no_digit(
        shape: tuple[int, int]) -> None:
    from ort_layouts.engine.diagnose import explain

    case = Case("Pad", "uint8", shape, pads=(1, 1, 1, 1), mode="constant", pad_value_hex="05")
    x = make_input(case)

    def gpu(z: np.ndarray) -> np.ndarray:  # numpy's pad, axis 0 padded 2/0 in place of 1/1
        return np.pad(z, [(2, 0), (1, 1)], mode="constant", constant_values=5)

    text = explain(case, x, gpu(x), lambda z: [gpu(z)]).text
    assert text.startswith("recovered: the GPU padded start padding [2,1] end padding [0,1] mode CONSTANT "
                           "constant 0x5; expected start padding [1,1] end padding [1,1]"), text
