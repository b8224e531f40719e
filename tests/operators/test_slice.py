"""ONNX Slice as the DML EP builds it (DML_OPERATOR_SLICE1): the window against the worked
examples and DirectML's documentation, the executor against numpy slicing and the ONNX
reference implementation, the EP's divergences from ONNX, the suite on the CPU EP."""

from __future__ import annotations

import collections
import itertools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from ort_layouts import BufferTensorDesc, DescriptorError, ModelError, NotExpressibleError, ShapeError
from ort_layouts.engine.diagnose import diagnose
from ort_layouts.engine.graphs import build_model
from ort_layouts.engine.runner import run_cases
from ort_layouts.engine.suite import SUITE_DTYPES, standard_suite
from ort_layouts.engine.suite import is_edge_case as is_edge
from ort_layouts.models.extract import extract, model_cases
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import expected_output
from ort_layouts.operators.slice import (
    SLICE1,
    Slice,
    Slice1Op,
    ep_slice_window,
    slice_divergence,
)
from ort_layouts.operators.values import make_input
from ort_layouts.reference.buffers import unpack
from ort_layouts.reference.execute import execute

I32MIN, I32MAX = -(2**31), 2**31 - 1
I64MIN, I64MAX = -(2**63), 2**63 - 1
SLICE = Slice()


def _onnx_reference(case: Case, x: np.ndarray, opset: int = 13) -> np.ndarray:
    """onnx.reference's Slice on the node ``add_node`` writes."""
    elem = case.data_type.to_onnx()
    graph = helper.make_graph([], "g", [helper.make_tensor_value_info("x0", elem, x.shape)],
                              [helper.make_tensor_value_info("y0", elem, None)])
    SLICE.add_node(graph, 0, case, opset)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    return np.asarray(ReferenceEvaluator(model).run(None, {"x0": x})[0])


def _numpy(x: np.ndarray, starts, ends, axes, steps) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Plain numpy slicing with the raw ONNX values (numpy clamps them itself)."""
    index = [slice(None)] * x.ndim
    axis_list = range(len(starts)) if axes is None else axes
    step_list = [1] * len(starts) if steps is None else steps
    for a, s, e, k in zip(axis_list, starts, ends, step_list, strict=True):
        index[a] = slice(s, e, k)
    return x[tuple(index)]


# ---- descriptors: the notes' worked examples -----------------------------------------------
def test_worked_example_last_axis() -> None:
    """Slice-13, float32 [2,3,4], starts [1], ends [-1], axes [2]: offsets [0,0,1], sizes
    [2,3,2], strides [1,1,1]; output [2,3,2]; packed rank-3 descriptors of 96 and 48 bytes."""
    op = SLICE.dml_operator(Case("Slice", "float32", (2, 3, 4), starts=(1,), ends=(-1,), axes=(2,), opset=13))
    d = op.to_dict()
    assert d["operator"] == SLICE1 == "DML_OPERATOR_SLICE1"
    assert d["dimension_count"] == 3
    assert d["input_window_offsets"] == [0, 0, 1]
    assert d["input_window_sizes"] == [2, 3, 2]
    assert d["input_window_strides"] == [1, 1, 1]
    assert d["input"] == {"data_type": "FLOAT32", "sizes": [2, 3, 4], "strides": None,
                          "total_tensor_size_in_bytes": 96, "guaranteed_base_offset_alignment": 0, "flags": 0}
    assert d["output"]["sizes"] == [2, 3, 2] and d["output"]["strides"] is None
    assert d["output"]["total_tensor_size_in_bytes"] == 48


def test_worked_example_reverse() -> None:
    """Reverse [5] with starts [-1], ends [INT64_MIN], steps [-1]: window [0,5), stride -1."""
    case = Case("Slice", "int32", (5,), starts=(-1,), ends=(I64MIN,), axes=(0,), steps=(-1,), values="iota")
    op = SLICE.dml_operator(case)
    assert (op.input_window_offsets, op.input_window_sizes, op.input_window_strides) == ((0,), (5,), (-1,))
    assert op.output.sizes == (5,) and op.input.dimension_count == 1
    assert expected_output(case, np.arange(5, dtype=np.int32)).tolist() == [4, 3, 2, 1, 0]


def test_rank_is_kept_not_padded_to_4d() -> None:
    for rank in range(1, 9):
        shape = tuple(range(2, 2 + rank))
        op = SLICE.dml_operator(Case("Slice", "uint8", shape, starts=(1,), ends=(I64MAX,), axes=(rank - 1,)))
        assert op.dimension_count == op.output.dimension_count == rank
        assert op.input.sizes == shape and op.input.strides is None


@pytest.mark.parametrize(("starts", "ends", "steps", "offset", "size", "out"), [
    ((2**40,), (-(2**40),), (-2,), 0, 5, [4, 2, 0]),  # clamped to int32, then to the axis
    ((-(2**40),), (2**40,), (2,), 0, 5, [0, 2, 4]),
    ((I32MIN,), (I32MAX,), (1,), 0, 5, [0, 1, 2, 3, 4]),  # INT_MIN start, positive end: no typo effect
    ((100,), (-100,), (-1,), 0, 5, [4, 3, 2, 1, 0]),
    ((3,), (0,), (-2,), 1, 3, [3, 1]),  # window [end + 1, start + 1) = [1, 4)
    ((-2,), (-5,), (-1,), 1, 3, [3, 2, 1]),
    ((1,), (I64MAX,), (3,), 1, 4, [1, 4]),
], ids=["2^40-back", "2^40-fwd", "int32-extremes", "out-of-range-back", "step-2-back", "neg-start-back",
        "int64-max-end"])
def test_window_by_hand(starts: tuple[int, ...], ends: tuple[int, ...], steps: tuple[int, ...], offset: int,
                        size: int, out: list[int]) -> None:
    """Windows worked by hand from SliceHelper::Initialize for an axis of 5, and the values
    DirectML reads from them."""
    case = Case("Slice", "int16", (5,), starts=starts, ends=ends, axes=(0,), steps=steps)
    op = SLICE.dml_operator(case)
    assert op.input_window_offsets == (offset,) and op.input_window_sizes == (size,)
    assert op.input_window_strides == steps
    assert expected_output(case, np.arange(5, dtype=np.int16)).tolist() == out


# ---- DirectML's documentation examples -------------------------------------------------------
DOC_INPUT = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)


@pytest.mark.parametrize(("strides", "want"), [
    ((1, 1, 2, 2), [[2, 4], [10, 12]]),
    ((1, 1, -2, 2), [[14, 16], [6, 8]]),
], ids=["positive", "negative"])
def test_directml_doc_examples(strides: tuple[int, ...], want: list[list[int]]) -> None:
    op = Slice1Op(BufferTensorDesc("float32", (1, 1, 4, 4)), BufferTensorDesc("float32", (1, 1, 2, 2)),
                  (0, 0, 0, 1), (1, 1, 4, 3), strides)
    got = unpack(op.output, execute(op, DOC_INPUT.tobytes()))
    assert got.reshape(2, 2).tolist() == want


def test_doc_example_buffer_offsets() -> None:
    """Example 2: output [0,0,0,0] reads input [0,0,3,1] (offset 13), [0,0,1,1] reads [0,0,1,3]."""
    op = Slice1Op(BufferTensorDesc("float32", (1, 1, 4, 4)), BufferTensorDesc("float32", (1, 1, 2, 2)),
                  (0, 0, 0, 1), (1, 1, 4, 3), (1, 1, -2, 2))
    assert op.copy_start() == (0, 0, 3, 1)
    assert op.buffer_offsets_in_elements((0, 0, 0, 0)) == (13, 0)
    assert op.buffer_offsets_in_elements((0, 0, 1, 1)) == (7, 3)


def test_output_may_copy_fewer_than_the_window_holds() -> None:
    """1 <= OutputSizes[d] <= 1 + (size - 1) / |stride|: a smaller output is valid."""
    op = Slice1Op(BufferTensorDesc("float32", (1, 1, 4, 4)), BufferTensorDesc("float32", (1, 1, 1, 2)),
                  (0, 0, 0, 1), (1, 1, 4, 3), (1, 1, -2, 2))
    assert unpack(op.output, execute(op, DOC_INPUT.tobytes())).reshape(-1).tolist() == [14, 16]


@pytest.mark.parametrize(("offsets", "sizes", "strides", "out", "rule"), [
    ((0, 2), (4, 3), (1, 1), (4, 3), "slice-window"),  # 2 + 3 > 4
    ((0, 0), (4, 0), (1, 1), (4, 1), "slice-window"),  # an empty window
    ((0, 0), (4, 4), (1, 0), (4, 4), "slice-stride"),
    ((0, 0), (4, 4), (1, 2), (4, 3), "slice-output-size"),  # at most 1 + 3 // 2 = 2
    ((0, 0), (4, 4), (1, -3), (4, 3), "slice-output-size"),
    ((0,), (4,), (1,), (4, 4), "dimension-count"),
], ids=["past-the-input", "empty-window", "stride-0", "too-many-outputs", "too-many-backwards",
        "window-rank"])
def test_directml_rules_are_checked(offsets: tuple[int, ...], sizes: tuple[int, ...],
                                    strides: tuple[int, ...], out: tuple[int, ...], rule: str) -> None:
    with pytest.raises(DescriptorError) as info:
        Slice1Op(BufferTensorDesc("float32", (4, 4)), BufferTensorDesc("float32", out), offsets, sizes,
                 strides)
    assert info.value.rule == rule


def test_data_types_must_match() -> None:
    with pytest.raises(DescriptorError, match="differs"):
        Slice1Op(BufferTensorDesc("float32", (4,)), BufferTensorDesc("int32", (4,)), (0,), (4,), (1,))


def test_dict_round_trip_and_cpp() -> None:
    op = SLICE.dml_operator(Case("Slice", "float16", (3, 5), starts=(-1, 1), ends=(I64MIN, 5), axes=(0, 1),
                                 steps=(-1, 2)))
    assert Slice1Op.from_dict(op.to_dict()) == op
    cpp = op.to_cpp("s")
    assert "DML_SLICE1_OPERATOR_DESC s = {" in cpp and "INT sStrides[2] = {-1, 2};" in cpp
    assert "UINT sOffsets[2] = {0, 1};" in cpp and "UINT sSizes[2] = {3, 4};" in cpp
    assert "DML_OPERATOR_DESC sOp = {DML_OPERATOR_SLICE1, &s};" in cpp
    assert "DML_BUFFER_TENSOR_DESC sInput = {" in cpp and "&sOutputTensor,  // OutputTensor" in cpp


# ---- the executor against numpy slicing and the ONNX reference --------------------------------
_POOL = [*range(-9, 10), 100, -100, 2**40, -(2**40), I32MIN, I32MAX, I64MIN, I64MAX]
_LOW = [*range(-5, 3), -100, -(2**40), I32MIN, I64MIN]  # starts of a positive step (ends of a negative)
_HIGH = [*range(-2, 6), 100, 2**40, I32MAX, I64MAX]


@pytest.mark.parametrize("seed", range(4))
def test_executor_matches_numpy_and_onnx_reference(seed: int) -> None:
    """Seeded random shapes of rank 1 to 8 with random starts, ends, steps and axes (given,
    omitted, negative): DirectML's SLICE1 on the EP's window equals numpy slicing and
    onnx.reference bit for bit whenever the EP builds an operator."""
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(150):
        rank = int(rng.integers(1, 9))
        shape = tuple(int(n) for n in rng.integers(1, 6, size=rank))
        count = int(rng.integers(1, rank + 1))
        omitted = rng.random() < 0.25
        axes = None if omitted else tuple(int(a) - (rank if rng.random() < 0.4 else 0)
                                          for a in rng.permutation(rank)[:count])
        steps = None if omitted or rng.random() < 0.2 else tuple(
            int(rng.choice([-3, -2, -1, 1, 2, 3])) for _ in range(count))
        starts_list, ends_list = [], []
        for k in steps or (1,) * count:  # mostly from the low side to the high side of the step
            low, high = _LOW[int(rng.integers(len(_LOW)))], _HIGH[int(rng.integers(len(_HIGH)))]
            if rng.random() < 0.15:
                low, high = _POOL[int(rng.integers(len(_POOL)))], _POOL[int(rng.integers(len(_POOL)))]
            starts_list.append(low if k > 0 else high)
            ends_list.append(high if k > 0 else low)
        starts, ends = tuple(starts_list), tuple(ends_list)
        dt = SUITE_DTYPES[int(rng.integers(len(SUITE_DTYPES)))]
        case = Case("Slice", dt, shape, starts=starts, ends=ends, axes=axes, steps=steps, seed=seed)
        x = make_input(case)
        if SLICE.inexpressible_reason(case):
            continue
        got = expected_output(case, x)  # the reference executor on the EP's SLICE1
        want = _numpy(x, starts, ends, axes, steps)
        assert got.shape == want.shape and got.tobytes() == want.tobytes(), case.id
        ref = _onnx_reference(case, x)
        assert ref.shape == got.shape and ref.tobytes() == got.tobytes(), case.id
        checked += 1
    assert checked > 50


def test_opset_1_attributes_match_onnx_reference() -> None:
    case = Case("Slice", "float32", (4, 5), starts=(1, -4), ends=(100, -1), axes=(1, 0), opset=1,
                values="iota")
    x = make_input(case)
    got = expected_output(case, x)
    assert np.array_equal(got, x[-4:-1, 1:100])
    assert np.array_equal(_onnx_reference(case, x, opset=1), got)


# ---- the EP's divergences from ONNX ----------------------------------------------------------
def test_typo_at_line_1070_diverges_from_onnx_reference() -> None:
    """Positive step, starts INT64_MIN (INT32_MIN after the clamp), ends -1: the EP's end is
    not made relative (it tests starts[i] > INT_MIN) so its window is empty; ONNX takes [0, 3]."""
    case = Case("Slice", "int32", (5,), starts=(I64MIN,), ends=(-1,), axes=(0,), steps=(3,), values="iota")
    x = np.arange(5, dtype=np.int32)
    assert _onnx_reference(case, x).tolist() == [0, 3]
    window = ep_slice_window((5,), (I64MIN,), (-1,), (0,), (3,))
    assert window.output_sizes == (0,) and window.sizes == (0,)
    note = slice_divergence((5,), (I64MIN,), (-1,), (0,), (3,))
    assert "line 1070" in note and "INT32_MIN" in note
    reason = SLICE.inexpressible_reason(case)
    assert "InferAndVerifyOutputSizes" in reason and "[0]" in reason and "[2]" in reason
    assert expected_output(case, x).tolist() == [0, 3]  # the expected output stays ONNX's
    with pytest.raises(NotExpressibleError, match="line 1070"):
        SLICE.dml_operator(case)
    # the same with INT32_MIN itself, and with opset 1 attributes
    assert ep_slice_window((5,), (I32MIN,), (-2,)).output_sizes == (0,)
    int32_min = Case("Slice", "int32", (5,), starts=(I32MIN,), ends=(-2,))
    assert _onnx_reference(int32_min, x).tolist() == [0, 1, 2] and SLICE.inexpressible_reason(int32_min)
    attrs = Case("Slice", "int32", (5,), starts=(I64MIN,), ends=(-1,), opset=1)
    assert _onnx_reference(attrs, x, opset=1).tolist() == [0, 1, 2, 3] and SLICE.inexpressible_reason(attrs)


def test_negative_step_before_the_axis() -> None:
    """Negative step, start -100 on an axis of 5, end INT64_MIN: ONNX's specification clamps the
    start to 0 and keeps element 0; the EP's window [end + 1, start + 1) is empty (as numpy's,
    and so onnx.reference's, reading is)."""
    case = Case("Slice", "int32", (5,), starts=(-100,), ends=(I64MIN,), axes=(0,), steps=(-1,))
    x = np.arange(5, dtype=np.int32)
    assert SLICE.reference_output(case, x).tolist() == [0]  # start clamped to [0, 4], end to [-1, 4]
    assert _onnx_reference(case, x).tolist() == []
    assert ep_slice_window((5,), (-100,), (I64MIN,), (0,), (-1,)).output_sizes == (0,)
    assert "start lies before the axis" in slice_divergence((5,), (-100,), (I64MIN,), (0,), (-1,))
    assert SLICE.output_shape(case) == (1,) and SLICE.inexpressible_reason(case)


def test_overflow_of_end_minus_start() -> None:
    """starts 100, ends INT64_MIN, step 1: ONNX's result is empty; the EP's end - start wraps in
    32-bit int to a window of 2^31 - 95 elements, which DirectML rejects."""
    window = ep_slice_window((5,), (100,), (I64MIN,), (0,), (1,))
    assert window.offsets == (100,) and window.sizes == (2**31 - 95,)
    case = Case("Slice", "float32", (5,), starts=(100,), ends=(I64MIN,), axes=(0,), steps=(1,))
    assert "overflows" in SLICE.inexpressible_reason(case)
    assert SLICE.output_shape(case) == (0,)


def test_steps_without_axes_are_rejected_by_the_ep() -> None:
    case = Case("Slice", "float32", (5, 4), starts=(1, -1), ends=(4, I64MIN), steps=(2, -1), values="iota")
    x = make_input(case)
    assert np.array_equal(_onnx_reference(case, x), x[1:4:2, ::-1])
    with pytest.raises(NotExpressibleError, match="without axes"):
        ep_slice_window(case.shape, case.starts, case.ends, None, case.steps)  # type: ignore[arg-type]
    assert "without axes" in SLICE.inexpressible_reason(case)
    assert np.array_equal(expected_output(case, x), x[1:4:2, ::-1])


def test_ep_grid_agrees_with_numpy_wherever_it_builds_an_operator() -> None:
    """Over axes of 1 to 6 and starts/ends/steps around 0, the axis and the integer extremes:
    a non-empty EP window inside the axis reads exactly numpy's selection; everywhere else
    numpy's selection is empty or the divergence is the documented one (line 1070)."""
    magnitudes = (1, 2, 3, 5, 9, 100, 2**40, I32MAX, I32MAX + 1, I64MAX)
    values = sorted({0, *magnitudes} | {-v for v in magnitudes} | {I32MIN, I64MIN})
    kinds: collections.Counter[str] = collections.Counter()
    for n, s, e, k in itertools.product(range(1, 7), values, values, (1, 2, 3, -1, -2, -3)):
        window = ep_slice_window((n,), (s,), (e,), (0,), (k,))
        picked = list(range(n)[s:e:k])
        count = window.output_sizes[0]
        inside = window.offsets[0] + window.sizes[0] <= n
        if count and inside:
            first, step, _ = window.first_and_step(0)
            assert [first + step * i for i in range(count)] == picked, (n, s, e, k)
            kinds["same"] += 1
        elif picked:
            assert k > 0 and max(s, I32MIN) == I32MIN and e < 0, (n, s, e, k)
            assert "line 1070" in slice_divergence((n,), (s,), (e,), (0,), (k,))
            kinds["line-1070"] += 1
        else:
            kinds["empty" if count == 0 else "overflow"] += 1
    assert min(kinds.values()) > 0, kinds


def test_divergent_cases_pass_on_the_cpu_ep() -> None:
    """The CPU EP follows ONNX where the DML EP diverges: the expected output is ONNX's."""
    cases = [
        Case("Slice", "float32", (5,), starts=(I64MIN,), ends=(-1,), axes=(0,), steps=(3,)),
        Case("Slice", "float32", (5,), starts=(-100,), ends=(I64MIN,), axes=(0,), steps=(-1,)),
        Case("Slice", "int64", (5, 4), starts=(1, -1), ends=(4, I64MIN), steps=(2, -1)),
    ]
    results = run_cases(cases, provider="cpu")
    assert [r.status.name for r in results] == ["PASS"] * 3, [r.message for r in results]


# ---- cases and nodes -------------------------------------------------------------------------
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"starts": None, "ends": (1,)}, "needs starts and ends"),
    ({"starts": (0, 1), "ends": (1,)}, "differ in length"),
    ({"starts": (0, 0, 0), "ends": (1, 1, 1)}, "3 entries without axes"),
    ({"starts": (0,), "ends": (1,), "axes": (0, 1)}, "differ in length"),
    ({"starts": (0,), "ends": (1,), "axes": (2,)}, "out of range"),
    ({"starts": (0, 0), "ends": (1, 1), "axes": (1, -1)}, "repeat"),
    ({"starts": (0,), "ends": (1,), "axes": (-1,), "opset": 10}, "opset >= 11"),
    ({"starts": (0,), "ends": (1,), "steps": (1,), "opset": 1}, "opset >= 10"),
    ({"starts": (0,), "ends": (1,), "steps": (0,)}, "contain 0"),
    ({"starts": (0,), "ends": (1,), "steps": (1, 1)}, "differ in length"),
    ({"starts": (2**63,), "ends": (1,)}, "int64"),
], ids=["no-starts", "lengths", "too-many-starts", "axes-length", "axis-range", "repeated-axis",
        "negative-axis-opset-10", "steps-opset-1", "step-0", "steps-length", "beyond-int64"])
def test_check_case(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ShapeError, match=message):
        Case("Slice", "float32", (3, 4), **kwargs)  # type: ignore[arg-type]


def test_rank_0_is_refused() -> None:
    with pytest.raises(ShapeError, match="rank >= 1"):
        Case("Slice", "float32", (), starts=(), ends=())


def test_add_node_attributes_and_inputs() -> None:
    case = Case("Slice", "float32", (3, 4), starts=(1,), ends=(3,), axes=(1,))
    old = build_model([case], opset=1)
    (node,) = old.graph.node
    assert list(node.input) == ["x0"] and not old.graph.initializer
    assert {a.name: list(a.ints) for a in node.attribute} == {"starts": [1], "ends": [3], "axes": [1]}
    stepped = Case("Slice", "float32", (3, 4), starts=(1,), ends=(3,), steps=(-1,))
    model = build_model([stepped], opset=13)
    (node,) = model.graph.node
    assert list(node.input) == ["x0", "starts0", "ends0", "", "steps0"]
    inits = {t.name: onnx.numpy_helper.to_array(t).tolist() for t in model.graph.initializer}
    assert inits == {"starts0": [1], "ends0": [3], "steps0": [-1]}
    assert all(t.data_type == TensorProto.INT64 for t in model.graph.initializer)
    onnx.checker.check_model(model, full_check=True)
    with pytest.raises(ModelError, match="opset >= 10"):
        SLICE.add_node(onnx.GraphProto(), 0, stepped, 9)
    with pytest.raises(ModelError, match="opset >= 11"):
        negative = Case("Slice", "float32", (3,), starts=(0,), ends=(1,), axes=(-1,))
        SLICE.add_node(onnx.GraphProto(), 0, negative, 10)


def test_ids_name_extremes() -> None:
    case = Case("Slice", "int8", (5,), starts=(-1,), ends=(I64MIN,), axes=(-1,), steps=(-2,), opset=11)
    assert case.id == "Slice-int8-5-startsm1-endsmin-axesm1-stepsm2-op11-random-s0"
    plain = Case("Slice", "int8", (5,), starts=(0,), ends=(I64MAX,))
    assert plain.id == "Slice-int8-5-starts0-endsmax-random-s0"


# ---- the suite -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def suite() -> list[Case]:
    return [c for c in standard_suite(ops=["Slice"]) if not is_edge(c)]  # rank 0, empty: test_edge_tensors


def test_suite_coverage(suite: list[Case]) -> None:
    assert len({c.id for c in suite}) == len(suite) > 500
    assert [c.id for c in standard_suite(ops=["Slice"]) if not is_edge(c)] == [c.id for c in suite]  # stable
    assert {c.rank for c in suite} == set(range(1, 9))
    assert {c.data_type for c in suite} == set(SUITE_DTYPES)
    assert {c.opset for c in suite} == {None, 1, 10, 11, 13}
    assert {c.values for c in suite} == {"random", "special", "iota"}
    steps = [k for c in suite for k in c.steps or ()]
    assert min(steps) <= -3 and max(steps) >= 3
    assert any(c.axes is None for c in suite) and any(c.axes is None and len(c.starts or ()) < c.rank
                                                      for c in suite)
    assert any(a < 0 for c in suite for a in c.axes or ())
    assert any(c.axes is not None and list(c.axes) != sorted(c.axes) for c in suite)
    extremes = {I64MIN, I64MAX, I32MIN, I32MAX, 2**40, -100, 100}
    assert extremes <= {v for c in suite for v in (*(c.starts or ()), *(c.ends or ()))}
    for rank in range(1, 9):  # every sliced axis of every rank, forwards and backwards
        seen = {(a % rank, k > 0) for c in suite if c.rank == rank and c.axes is not None
                for a, k in zip(c.axes, c.steps or (1,) * len(c.axes), strict=True)}
        shape = next(c.shape for c in suite if c.rank == rank)
        for axis in (a for a, n in enumerate(shape) if n > 1):
            assert {(axis, True), (axis, False)} <= seen, (rank, axis)


def test_suite_leaves_out_what_the_ep_cannot_run(suite: list[Case]) -> None:
    assert not [c.id for c in suite if SLICE.inexpressible_reason(c)]
    excluded = SLICE.suite_cases(list(SUITE_DTYPES), set(range(1, 9)), 0)
    assert len(excluded) == len(suite)


def test_suite_expected_outputs_equal_numpy(suite: list[Case]) -> None:
    for case in suite:
        x = make_input(case)
        got = expected_output(case, x)
        want = _numpy(x, case.starts, case.ends, case.axes, case.steps)
        assert got.shape == want.shape and got.tobytes() == want.tobytes(), case.id


def test_suite_passes_on_the_cpu_ep(suite: list[Case]) -> None:
    results = run_cases(suite, provider="cpu")
    failed = [(r.case.id, r.status.name, r.message, r.diagnosis) for r in results if r.status.name != "PASS"]
    assert not failed, failed[:5]
    assert all(r.descriptors["operator"] == SLICE1 for r in results)


# ---- diagnosis -------------------------------------------------------------------------------
X97 = np.random.default_rng(97).permutation(63).astype(np.float32).reshape(9, 7) + 0.5  # distinct values
CASE97 = Case("Slice", "float32", (9, 7), starts=(-1, 2), ends=(I64MIN, 7), axes=(0, 1), steps=(-3, 2))


@pytest.mark.parametrize(("wrong", "name"), [
    (X97[0:9:3, 2:7:2], "the negative strides taken as positive"),
    (X97[8::-3, 0:5:2], "the window offsets ignored"),
    (X97[8::-3, 1:6:2], "InputWindowOffsets[1] off by -1"),
    (X97[0:3, 2:5], "the strides ignored (step 1)"),
    (X97[8:5:-1, 2:5], "the stride magnitudes ignored"),
    (X97[6::-3, 2:7:2], "the window read from the wrong end"),
], ids=["negative-as-positive", "offsets-ignored", "offset-off-by-one", "strides-ignored",
        "magnitudes-ignored", "wrong-end"])
def test_diagnosis_names_slice_bugs(wrong: np.ndarray, name: str) -> None:
    """The right output reads rows 8, 5, 2 and columns 2, 4, 6; each wrong one is built with
    numpy and named."""
    assert np.array_equal(expected_output(CASE97, X97), X97[8::-3, 2:7:2])
    assert wrong.shape == (3, 3)
    text = diagnose(CASE97, X97, np.ascontiguousarray(wrong))
    assert text.startswith(f"output matches {name}"), text


def test_diagnosis_of_the_right_output_is_empty() -> None:
    assert diagnose(CASE97, X97, np.ascontiguousarray(X97[8::-3, 2:7:2])) == ""


def test_the_window_cache_keeps_integers_apart_from_floats_and_bools() -> None:
    # a Case's tuples are cached by value; 1.0 and True equal 1 but are no Slice parameters
    assert ep_slice_window((5,), (1,), (3,)).offsets == (1,)
    for bad in ((1.0,), (True,)):
        with pytest.raises(ShapeError, match="which is not an integer"):
            ep_slice_window((5,), bad, (3,))
    # lists and numpy integers take the uncached path, with the same window
    assert ep_slice_window([5], [np.int64(1)], [3]) == ep_slice_window((5,), (1,), (3,))


_MAX64, _MAX32 = 2**63 - 1, 2**31 - 1


def _slice_node_model(shape: tuple[int, ...], starts: list[int], ends: list[int], axes: list[int],
                      steps: list[int]) -> onnx.ModelProto:
    inits = [onnx.numpy_helper.from_array(np.array(v, np.int64), n)
             for n, v in (("s", starts), ("e", ends), ("a", axes), ("k", steps))]
    graph = helper.make_graph([helper.make_node("Slice", ["x", "s", "e", "a", "k"], ["y"], name="sl")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize(("shape", "starts", "ends", "axes", "steps", "onnx_shape", "cpu"), [
    # hand-worked: ONNX clamps an end of a negative step to dim - 1, at or past the clamped
    # start, so it takes nothing; ONNX Runtime's CPU EP reads the end as -1 (to the beginning)
    ((1, 4), [-1], [_MAX64], [1], [-1], (1, 0), [[3, 2, 1, 0]]),
    ((1, 4), [-1], [_MAX32], [1], [-1], (1, 0), [[3, 2, 1, 0]]),
    ((1, 4), [2], [_MAX64], [1], [-1], (1, 0), [[2, 1, 0]]),
    ((1, 4), [-100], [_MAX64], [1], [-1], (1, 0), [[0]]),
    ((3, 2), [-1, 0], [_MAX64, _MAX64], [0, 1], [-1, 1], (0, 2), [[4, 5], [2, 3], [0, 1]]),
], ids=["int64-max", "int32-max", "start-2", "start-before-the-axis", "two-axes"])
def test_a_negative_step_to_int_max_is_flagged_with_what_the_cpu_ep_returns(
        shape: tuple[int, ...], starts: list[int], ends: list[int], axes: list[int], steps: list[int],
        onnx_shape: tuple[int, ...], cpu: list[list[int]]) -> None:
    """The node reads ONNX's output shape, and its flag says what ONNX Runtime's CPU EP returns
    instead (onnxruntime asked here); it makes no case: ONNX and the CPU EP disagree, and the
    standard suite has no such case (no known issue waives one)."""
    import onnxruntime as ort

    model = _slice_node_model(shape, starts, ends, axes, steps)
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"x": x})
    assert got.tolist() == cpu
    (node,) = extract(model)
    assert node.output_shape == onnx_shape and node.to_case() is None and model_cases(model) == []
    (flag,) = [f for f in node.flags if f.startswith("cpu-divergence:")]
    assert f"ONNX's output is {list(onnx_shape)}, ONNX Runtime's CPU EP returns {list(got.shape)}" in flag
    assert "INT64_MAX" in flag or "INT32_MAX" in flag
    assert not [f for f in node.flags if f.startswith("empty:")]


def test_a_negative_step_to_just_below_int64_max_stays_an_empty_case() -> None:
    """An end one below INT64_MAX is an ordinary end: ONNX Runtime's CPU EP clamps it as ONNX
    does and returns the empty output, which the node's case expects."""
    import onnxruntime as ort

    model = _slice_node_model((1, 4), [-1], [_MAX64 - 1], [1], [-1])
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    (got,) = ort.InferenceSession(model.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert got.shape == (1, 0)
    (node,) = extract(model)
    assert [f.split(":")[0] for f in node.flags] == ["empty"]
    case = node.to_case()
    assert case is not None and expected_output(case, x).shape == got.shape


def test_from_onnx_refuses_repeated_axes() -> None:
    """ONNX Runtime's CPU EP refuses a Slice whose axes name one axis twice ("Axis 1 is referred
    to more than once"); Slice1Op.from_onnx dropped the first entry without a word."""
    from ort_layouts.operators.slice import Slice1Op

    with pytest.raises(ShapeError, match=r"Slice axes \[1, -1\] repeat an axis; valid: each axis once"):
        Slice1Op.from_onnx(BufferTensorDesc("float32", (4, 4)), [1, 2], [3, 4], axes=[1, -1])
    op = Slice1Op.from_onnx(BufferTensorDesc("float32", (4, 4)), [1, 2], [3, 4], axes=[0, -1])
    assert op.output.sizes[-2:] == (2, 2)  # rows 1..2 and columns 2..3, by hand
