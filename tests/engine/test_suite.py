"""Standard suite, inputs, DML operators (facts' vectors) and expected outputs (vs numpy)."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import DataTypeError, NotExpressibleError, ShapeError
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.suite import SUITE_DTYPES, standard_suite
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import dml_operator, expected_output, reference_output
from ort_layouts.operators.pad import has_negative_pads
from ort_layouts.operators.values import make_input, special_values


@pytest.fixture(scope="module")
def suite() -> list[Case]:
    return standard_suite()


def test_size_unique_ids_deterministic(suite: list[Case]) -> None:
    assert len(suite) >= 5000
    assert len({c.id for c in suite}) == len(suite)
    assert [c.id for c in standard_suite()] == [c.id for c in suite]
    assert [c.seed for c in standard_suite(seed=1)] != [c.seed for c in suite]


def test_every_permutation_of_ranks_1_to_6(suite: list[Case]) -> None:
    perms = {(c.rank, c.perm) for c in suite if c.op == "Transpose"}
    for rank in range(1, 7):
        for perm in itertools.permutations(range(rank)):
            assert (rank, perm) in perms
        assert (rank, None) in perms  # the default (reversed) perm
    assert sum(1 for r, p in perms if r in (7, 8) and p is not None) >= 40


def test_every_dtype_for_every_op(suite: list[Case]) -> None:
    seen = {(c.op, c.data_type) for c in suite}
    for op in ("Transpose", "Expand", "Pad"):
        for dt in SUITE_DTYPES:
            assert (op, dt) in seen
    assert {c.values for c in suite} == {"random", "special", "iota"}


def test_expand_patterns(suite: list[Case]) -> None:
    expands = [c for c in suite if c.op == "Expand"]
    for rank in range(1, 7):  # each subset of broadcast axes appears
        masks = {tuple(n == 1 for n in c.shape) for c in expands
                 if c.rank == rank and len(c.target_shape or ()) == rank}
        assert len(masks) == 2**rank
    assert any(len(c.target_shape or ()) == c.rank + 2 for c in expands)
    assert any(len(c.target_shape or ()) < c.rank for c in expands)  # multidirectional


def test_pad_coverage(suite: list[Case]) -> None:
    pads = [c for c in suite if c.op == "Pad"]
    assert {c.mode for c in pads} == {"constant", "edge", "reflect", "wrap"}
    assert any(c.axes is not None and min(c.axes) < 0 for c in pads)
    assert {c.opset for c in pads} >= {10, 11, 13, 18, 19, None}
    assert any(has_negative_pads(c) for c in pads)
    assert any(c.pad_value_hex for c in pads)
    beyond = [c for c in pads if c.mode in ("constant", "edge", "wrap")
              and any(p > n for p, n in zip(c.pads or (), c.shape * 2, strict=False))]
    assert beyond
    for c in pads:  # reflect stays below the dimension (ONNX Runtime's rule)
        if c.mode == "reflect" and not has_negative_pads(c) and c.axes is None:
            assert all(p < n for p, n in zip(c.pads or (), c.shape * 2, strict=True)), c.id


@pytest.mark.parametrize(("kwargs", "check"), [
    ({"ops": ["Expand"]}, lambda c: c.op == "Expand"),
    ({"dtypes": ["float16", DataType.INT8]}, lambda c: c.data_type in (DataType.FLOAT16, DataType.INT8)),
    ({"ranks": [2, 3]}, lambda c: c.rank in (2, 3)),
], ids=["ops", "dtypes", "ranks"])
def test_filters(kwargs: dict, check) -> None:  # type: ignore[no-untyped-def,type-arg]
    cases = standard_suite(**kwargs)
    assert cases and all(check(c) for c in cases)


def test_bad_filters() -> None:
    with pytest.raises(ShapeError, match="valid"):
        standard_suite(ops=["Conv"])
    with pytest.raises(DataTypeError, match="valid"):
        standard_suite(dtypes=["uint4"])


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"dtypes": ["bool"]}, DataTypeError,
     "'bool' has no cases of its own: the DML EP runs ONNX bool tensors as DirectML UINT8, so uint8 covers "
     "them; valid: ['float32', "),
    ({"dtypes": "float32"}, DataTypeError,
     "dtypes 'float32' is one str, not a list of data types; valid: a list or other iterable of data types, "
     "e.g. ['float32']"),
    ({"ops": "Pad"}, ShapeError,
     "ops 'Pad' is one str, not a list of op names; valid: a list or other iterable of op names, "
     "e.g. ['Pad']"),
    ({"ranks": "12"}, ShapeError,
     "ranks '12' is one str, not a list of integers; valid: a list or other iterable of integers, "
     "e.g. [1, 2]"),
    ({"ranks": b"12"}, ShapeError, "ranks b'12' is a bytes object, not a list of integers; valid: a list"),
    ({"ranks": bytearray(b"\x01\x02")}, ShapeError,
     "ranks bytearray(b'\\x01\\x02') is a bytearray object, not a list of integers; valid: a list"),
    ({"ranks": 3}, ShapeError,
     "ranks 3 is not a list of integers; valid: a list or other iterable of integers, e.g. [1, 2]"),
    ({"ops": 3}, ShapeError, "ops 3 is not a list of op names; valid: a list or other iterable of op names, "
                             "e.g. ['Transpose', 'Pad']"),
    ({"ops": [["Pad"]]}, ShapeError,
     "op ['Pad'] is not a layout op that makes cases here; valid: ['Transpose', "),
    ({"dtypes": 3}, DataTypeError, "dtypes 3 is not a list of data types; valid: a list or other iterable of "
                                   "data types, e.g. ['float32', 'int8']"),
    ({"ranks": [1.7]}, ShapeError, "ranks (1.7,) holds 1.7, which is not an integer; valid: a list, tuple or "
                                   "array of integers"),
    ({"ranks": [True]}, ShapeError, "ranks (True,) holds True, which is not an integer"),
    ({"ranks": [9]}, ShapeError, "ranks [9]: [9] is outside the valid ranks 0..8"),
    ({"ranks": [-1]}, ShapeError, "ranks [-1]: [-1] is outside the valid ranks 0..8"),
    ({"ranks": [2, 10**20]}, ShapeError, "ranks [2, 100000000000000000000]: [100000000000000000000] is "
                                            "outside"),
    ({"seed": -5}, ShapeError, "seed -5 is not valid; valid: an integer >= 0"),
    ({"seed": "abc"}, ShapeError, "seed 'abc' is not valid; valid: an integer >= 0"),
    ({"seed": 1.5}, ShapeError, "seed 1.5 is not valid; valid: an integer >= 0"),
    ({"seed": True}, ShapeError, "seed True is not valid; valid: an integer >= 0"),
], ids=["bool", "dtypes-str", "ops-str", "ranks-str", "ranks-bytes", "ranks-bytearray", "ranks-int",
        "ops-int", "ops-unhashable", "dtypes-int", "rank-float", "rank-bool", "rank-9", "rank-negative",
        "rank-huge", "seed-negative", "seed-str", "seed-float", "seed-bool"])
def test_bad_arguments_are_refused(kwargs: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        standard_suite(**{"ops": ["Transpose"], **kwargs})
    assert message in str(info.value)


def test_the_order_and_repeats_of_the_dtypes_make_no_other_cases() -> None:
    asked = standard_suite(ops=["Transpose", "Pad"], dtypes=["int8", "float32", "int8"], ranks=[2])
    assert asked == standard_suite(ops=["Transpose", "Pad"], dtypes=["float32", "int8"], ranks=[2])
    # each op's cases follow SUITE_DTYPES' order (FLOAT32 before INT8), whatever the order asked
    for op in ("Transpose", "Pad"):
        kinds = [c.data_type for c in asked if c.op == op]
        assert kinds.index(DataType.INT8) > kinds.index(DataType.FLOAT32)


def _shape_of(case: Case) -> tuple[Any, ...]:
    """A case but for its data type, constant and seed: the shape the suite makes it in."""
    return (case.op, case.shape, case.perm, case.target_shape, case.pads, case.mode, case.axes, case.starts,
            case.ends, case.steps, case.axis, case.parts, case.num_outputs, case.repeats, case.blocksize,
            case.opset, case.values)


def test_one_data_type_alone_gets_every_shape_of_the_suite(suite: list[Case]) -> None:
    """What README and --dtypes say: --dtypes float16 alone sweeps every shape of the suite in
    float16, and runs per data type are not the suite cut in parts (together they hold more)."""
    float16 = standard_suite(dtypes=["float16"])
    assert {c.data_type for c in float16} == {DataType.FLOAT16}
    assert {_shape_of(c) for c in float16} == {_shape_of(c) for c in suite}
    in_suite = sum(c.data_type is DataType.FLOAT16 for c in suite)
    assert len(float16) > in_suite  # the whole suite makes fewer of its shapes in float16
    per_type = sum(len(standard_suite(dtypes=[t])) for t in SUITE_DTYPES)
    assert per_type > len(suite)


def test_any_iterable_is_a_list() -> None:
    by_list = standard_suite(ops=["Tile"], dtypes=["int8"], ranks=[2])
    assert by_list
    assert standard_suite(ops=("Tile",), dtypes={"int8"}, ranks=(r for r in (2,))) == by_list
    assert standard_suite(ops=iter(["Tile"]), dtypes=["int8"], ranks=np.array([2])) == by_list


@pytest.mark.parametrize("empty", ["ops", "dtypes", "ranks"])
def test_an_empty_filter_keeps_no_case(empty: str) -> None:
    assert standard_suite(**{empty: []}) == []


def test_a_numpy_seed_is_the_same_seed() -> None:
    assert standard_suite(ops=["Tile"], seed=np.int64(3)) == standard_suite(ops=["Tile"], seed=3)


def test_make_input_deterministic_and_typed() -> None:
    case = Case("Transpose", "int64", (4, 5), seed=3)
    a, b = make_input(case), make_input(case)
    assert a.dtype == np.int64 and a.shape == (4, 5) and np.array_equal(a, b)
    assert np.abs(a).max() > 2**32  # random integers use the full range
    assert not np.array_equal(a, make_input(Case("Transpose", "int64", (4, 5), seed=4)))
    iota = make_input(Case("Transpose", "uint8", (300,), values="iota"))
    assert iota[255] == 255 and iota[256] == 0


def test_special_values_bits() -> None:
    f16 = special_values(DataType.FLOAT16).view(np.uint16).tolist()
    assert 0x7C01 in f16 and 0x8000 in f16 and 0x0001 in f16  # signalling NaN, -0.0, denormal
    f32 = special_values(DataType.FLOAT32).view(np.uint32).tolist()
    assert 0x7FA5A5A5 in f32 and 0x80000000 in f32
    i64 = special_values(DataType.INT64).tolist()
    assert -(2**63) in i64 and 2**63 - 1 in i64 and 2**32 in i64 and -1 in i64
    x = make_input(Case("Expand", "float32", (4, 8), target_shape=(4, 8), values="special"))
    pool = set(special_values(DataType.FLOAT32).view(np.uint32).tolist())
    assert pool == set(x.view(np.uint32).ravel().tolist())


def test_dml_operator_transpose_vector() -> None:
    # directml-facts.md: float32 [2,3,4], perm [2,0,1] -> sizes [4,2,3], strides [1,12,4], 96 bytes
    op = dml_operator(Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1)))
    assert op.input.sizes == (4, 2, 3) and op.input.strides == (1, 12, 4)
    assert op.input.total_tensor_size_in_bytes == 96
    assert op.output.sizes == (4, 2, 3) and op.output.total_tensor_size_in_bytes == 96
    assert op.output.effective_strides == (6, 3, 1)


def test_dml_operator_expand_vector() -> None:
    # DmlOperator::Initialize pads both to 4 dimensions (leading 1s), then TensorDesc walks the
    # input's padded sizes from the right: stride 0 where a size is 1 or missing (TensorDesc.cpp)
    op = dml_operator(Case("Expand", "float32", (3,), target_shape=(2, 3)))
    assert op.input.sizes == (1, 1, 2, 3) and op.input.strides == (0, 0, 0, 1)
    assert op.input.total_tensor_size_in_bytes == 12
    assert op.output.sizes == (1, 1, 2, 3) and op.output.strides is None
    op = dml_operator(Case("Expand", "float32", (2, 1, 4), target_shape=(2, 3, 4)))
    assert op.input.strides == (0, 4, 0, 1)  # ORT's own comment's [4,0,1], with the leading 1 Initialize adds
    # sizes that are equal once padded: no strides, as TensorDesc gives none where nothing broadcasts
    op = dml_operator(Case("Expand", "float32", (3, 4), target_shape=(3, 4)))
    assert op.input.sizes == (1, 1, 3, 4) and op.input.strides is None
    op = dml_operator(Case("Expand", "float32", (), target_shape=()))
    assert op.input.sizes == op.output.sizes == (1, 1, 1, 1) and op.input.strides is None
    op = dml_operator(Case("Expand", "float32", (1, 2, 1, 3, 1), target_shape=(2, 2, 3, 3, 4)))
    assert op.input.sizes == (2, 2, 3, 3, 4) and op.input.strides == (0, 3, 0, 1, 0)  # 5-D: nothing added


def test_dml_operator_pad_vector() -> None:
    op = dml_operator(Case("Pad", "float32", (3, 4), pads=(1, 2, 3, 4)))
    assert op.input.sizes == (1, 1, 3, 4)
    # DmlOperator::Initialize's TensorDesc of the input's shape: no strides (TensorDesc.cpp sets
    # them only where it broadcasts), as the output has none
    assert op.input.strides is None and op.output.strides is None
    assert op.start_padding == (0, 0, 1, 2) and op.end_padding == (0, 0, 3, 4)
    assert op.output.sizes == (1, 1, 7, 10)
    with pytest.raises(NotExpressibleError):
        dml_operator(Case("Pad", "float32", (3, 4), pads=(-1, 0, 0, 0)))


def _numpy(case: Case, x: np.ndarray) -> np.ndarray:
    """An independent numpy reading of the ONNX op (non-negative pads)."""
    if case.op == "Transpose":
        return np.transpose(x, case.perm)
    if case.op == "Expand":
        return x * np.ones(case.target_shape or (), dtype=x.dtype) if x.dtype.kind in "iu" else \
            np.broadcast_to(x, np.broadcast_shapes(x.shape, case.target_shape or ()))
    rank = case.rank
    axes = [a % rank for a in (case.axes if case.axes is not None else range(rank))]
    width = [(0, 0)] * rank
    for i, a in enumerate(axes):
        width[a] = (case.pads[i], case.pads[len(axes) + i])  # type: ignore[index]
    if case.mode == "constant":
        value = np.frombuffer(bytes.fromhex(case.pad_value_hex), x.dtype)[0] if case.pad_value_hex else 0
        return np.pad(x, width, constant_values=value)
    return np.pad(x, width, mode=case.mode)


def test_expected_output_matches_numpy_on_a_sample(suite: list[Case]) -> None:
    rng = np.random.default_rng(7)
    known = [c for c in suite if c.op in ("Transpose", "Expand", "Pad")]  # the ops _numpy reads
    sample = [known[i] for i in rng.choice(len(known), 400, replace=False)]
    checked = Counter()
    for case in sample:
        if has_negative_pads(case):
            continue
        x = make_input(case)
        if case.values == "special" and case.data_type.is_float and case.op == "Pad":
            continue  # np.pad with a NaN constant is not bit-exact; covered by the tests below
        want = np.ascontiguousarray(_numpy(case, x))
        got = expected_output(case, x)
        assert got.dtype == want.dtype and got.shape == want.shape, case.id
        assert got.tobytes() == want.tobytes(), case.id
        checked[case.op] += 1
    assert min(checked.values()) > 30


def test_expected_output_keeps_nan_payloads() -> None:
    x = special_values(DataType.FLOAT16).reshape(4, 4)
    case = Case("Pad", "float16", (4, 4), pads=(0, 1, 0, 2), mode="wrap")
    got = expected_output(case, x).view(np.uint16)
    assert np.array_equal(got, np.pad(x.view(np.uint16), ((0, 0), (1, 2)), mode="wrap"))
    value = np.array([0x7D55], np.uint16)  # a signalling NaN as the constant
    case = Case("Pad", "float16", (4, 4), pads=(1, 0, 0, 0),
                pad_value_hex=value.astype("<u2").tobytes().hex())
    got = expected_output(case, x).view(np.uint16)
    assert got[0].tolist() == [0x7D55] * 4 and np.array_equal(got[1:], x.view(np.uint16))


@pytest.mark.parametrize(("mode", "pads", "want"), [
    ("constant", (-1, 2), [2, 3, 0, 0]),
    ("edge", (1, -2), [1, 1]),
    ("reflect", (-1, 1), [2, 3, 2]),
    ("wrap", (2, -1), [1, 2, 1, 2]),  # crop, then wrap around what is left (ONNX Runtime's reading)
], ids=["constant", "edge", "reflect", "wrap"])
def test_negative_pads_reference(mode: str, pads: tuple[int, int], want: list[int]) -> None:
    case = Case("Pad", "int32", (3,), pads=pads, mode=mode)
    assert reference_output(case, np.array([1, 2, 3], np.int32)).tolist() == want
    assert expected_output(case, np.array([1, 2, 3], np.int32)).tolist() == want


@pytest.mark.parametrize("selection", [{"ops": ["Transpose"]}, {"ops": ["Pad"], "ranks": [2]},
                                       {"ranks": [8]}, {"ranks": [7, 8]}],
                         ids=["transpose", "pad-rank2", "rank8", "rank7-8"])
def test_a_case_keeps_its_id_and_data_whatever_the_selection(selection: dict[str, list[object]]) -> None:
    full = {c.id: c for c in standard_suite()}
    subset = standard_suite(**selection)  # type: ignore[arg-type]
    assert subset and all(c.id in full for c in subset)
    for c in subset[:: max(1, len(subset) // 20)]:
        assert make_input(c).tobytes() == make_input(full[c.id]).tobytes()
