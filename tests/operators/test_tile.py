"""Tile: the DML_OPERATOR_TILE the DML EP builds, against DirectML's documentation, the ONNX
Runtime source read by hand, numpy.tile and the ONNX reference implementation."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ort_layouts._errors import ModelError, NotExpressibleError, ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.diagnose import diagnose
from ort_layouts.engine.graphs import build_model
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.engine.suite import SUITE_DTYPES, standard_suite
from ort_layouts.engine.suite import is_edge_case as is_edge
from ort_layouts.models.extract import extract, model_cases
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import expected_output
from ort_layouts.operators.registry import CASE_OPS, operator_for_type
from ort_layouts.operators.tile import TileOp, squeezed_axes
from ort_layouts.operators.values import make_input
from ort_layouts.reference.execute import execute, output_values, verify

# ---- descriptors: the ONNX Runtime source read by hand ---------------------------------------
# DmlOperatorTile.cpp squeezes every axis whose output size is 1 and builds both descriptors with
# TensorDesc(..., TensorAxis::RightAligned, /*minDimensionCount*/ 1, 0): the squeezed rank, not 4-D.


@pytest.mark.parametrize(("shape", "repeats", "sizes_in", "sizes_out", "dml_repeats"), [
    # the notes' worked example: squeeze indices {0, 2}; [3,5] x [2,3] -> [6,15]
    ((1, 3, 1, 5), (1, 2, 1, 3), (3, 5), (6, 15), (2, 3)),
    ((4,), (3,), (4,), (12,), (3,)),
    ((1, 1, 1), (1, 1, 1), (1,), (1,), (1,)),  # every output size 1: the last axis stays
    ((1, 1), (1, 5), (1,), (5,), (5,)),  # a size-1 input axis with a repeat > 1 stays
    ((2, 1, 3), (1, 4, 1), (2, 1, 3), (2, 4, 3), (1, 4, 1)),
    ((), (), (1,), (1,), (1,)),  # rank 0: one element, a leading 1 added to the repeats
], ids=["notes-1x3x1x5", "rank1", "all-ones", "size1-repeated", "no-squeeze", "rank0"])
def test_descriptors_as_the_ep_builds_them(shape, repeats, sizes_in, sizes_out, dml_repeats) -> None:
    op = TileOp.from_onnx("float32", shape, repeats)
    assert (op.input.sizes, op.output.sizes, op.repeats) == (sizes_in, sizes_out, dml_repeats)
    assert op.input.strides is None and op.output.strides is None  # packed
    assert op.to_dict()["repeats_count"] == len(dml_repeats)


def test_to_dict_fields_and_sizes_in_bytes() -> None:
    op = TileOp.from_onnx("float16", (1, 3, 1, 5), (1, 2, 1, 3))
    d = op.to_dict()
    assert d["operator"] == "DML_OPERATOR_TILE"
    assert (d["repeats_count"], d["repeats"]) == (2, [2, 3])
    assert d["input"]["sizes"] == [3, 5] and d["input"]["total_tensor_size_in_bytes"] == 32  # 30 -> 32
    assert d["output"]["sizes"] == [6, 15] and d["output"]["total_tensor_size_in_bytes"] == 180
    assert TileOp.from_dict(d) == op
    cpp = op.to_cpp()
    assert "UINT tileRepeats[2] = {2, 3};" in cpp and "DML_OPERATOR_TILE" in cpp


def test_squeezed_axes_keep_the_last_when_all_go() -> None:
    assert squeezed_axes((1, 6, 1, 15)) == (1, 3)
    assert squeezed_axes((1, 1, 1, 1)) == (3,)
    assert squeezed_axes((2, 3)) == (0, 1)


@pytest.mark.parametrize(("shape", "repeats", "error"), [
    ((2, 3), (2,), ShapeError),  # one repeat per axis
    ((2, 3), (2, -1), ShapeError),
    ((2, 3), (2, 0), NotExpressibleError),  # an empty output: no operator
    ((1,) * 9, (1,) * 9, NotExpressibleError),  # rank 9: DmlOperator::Initialize rejects it
], ids=["count", "negative", "zero", "rank9"])
def test_from_onnx_rejects(shape, repeats, error) -> None:
    with pytest.raises(error):
        TileOp.from_onnx("float32", shape, repeats)


def test_tile_op_validates_directml_rules() -> None:
    inp, out = BufferTensorDesc("int32", (2, 3)), BufferTensorDesc("int32", (4, 3))
    TileOp(inp, out, (2, 1))
    with pytest.raises(ShapeError, match="RepeatsCount 1"):
        TileOp(inp, out, (2,))
    with pytest.raises(ShapeError, match="not input size"):
        TileOp(inp, out, (1, 1))
    with pytest.raises(ShapeError, match=">= 1"):
        TileOp(inp, out, (0, 1))
    with pytest.raises(ShapeError, match="data type"):
        TileOp(inp, BufferTensorDesc("uint32", (4, 3)), (2, 1))
    with pytest.raises(ShapeError, match="DimensionCount"):
        TileOp(inp, BufferTensorDesc("int32", (1, 4, 3)), (1, 2, 1))


# ---- the executor ------------------------------------------------------------------------------
def test_directml_documentation_example() -> None:
    # ns-directml-dml_tile_operator_desc: {1,1,2,3} [[1,2,3],[4,5,6]], Repeats {1,1,3,3} -> {1,1,6,9}
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    op = TileOp(BufferTensorDesc("float32", (1, 1, 2, 3)), BufferTensorDesc("float32", (1, 1, 6, 9)),
                (1, 1, 3, 3))
    row_a = [1, 2, 3, 1, 2, 3, 1, 2, 3]
    row_b = [4, 5, 6, 4, 5, 6, 4, 5, 6]
    expected = np.array([row_a, row_b] * 3, dtype=np.float32).reshape(1, 1, 6, 9)
    assert np.array_equal(output_values(op, x), expected)
    assert verify(op, x, expected).passed


def test_executor_against_numpy_tile_over_random_shapes() -> None:
    rng = np.random.default_rng(20240611)
    dtypes = [DataType.FLOAT16, DataType.FLOAT32, DataType.FLOAT64, DataType.INT8, DataType.UINT16,
              DataType.INT64]
    for trial in range(300):
        rank = int(rng.integers(0, 9))
        shape = tuple(int(v) for v in rng.integers(1, 4, size=rank))
        repeats = tuple(int(v) for v in rng.integers(1, 4, size=rank))
        dtype = dtypes[trial % len(dtypes)]
        x = make_input(Case("Tile", dtype, shape, repeats=repeats, values="special", seed=trial))
        op = TileOp.from_onnx(dtype, shape, repeats)
        expected = np.tile(x, repeats).reshape(tuple(n * r for n, r in zip(shape, repeats, strict=True)))
        raw = execute(op, x)
        got = raw[: expected.nbytes].view(expected.dtype).reshape(expected.shape)
        assert got.tobytes() == expected.tobytes(), (shape, repeats, dtype)
        assert verify(op, x, expected).passed
        wrong = expected.copy().reshape(-1)
        wrong.view(np.uint8)[-1] ^= 0x01  # one bit of the last element
        assert not verify(op, x, wrong.reshape(expected.shape)).passed


def test_executor_against_the_onnx_reference() -> None:
    rng = np.random.default_rng(7)
    for rank in range(1, 7):
        shape = tuple(int(v) for v in rng.integers(1, 4, size=rank))
        repeats = tuple(int(v) for v in rng.integers(1, 4, size=rank))
        node = helper.make_node("Tile", ["x", "r"], ["y"])
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.INT16, shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.INT16, None)],
                                  [numpy_helper.from_array(np.array(repeats, dtype=np.int64), "r")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        x = rng.integers(-3000, 3000, size=shape).astype(np.int16)
        expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
        op = TileOp.from_onnx("int16", shape, repeats)
        assert output_values(op, x).tobytes() == expected.tobytes()


def test_buffer_offsets_map_an_onnx_index_through_the_squeeze() -> None:
    op = TileOp.from_onnx("float32", (1, 3, 1, 5), (1, 2, 1, 3))
    # ONNX output [1,6,1,15], index [0,4,0,7] -> descriptors [4,7]; input [4 % 3, 7 % 5] = [1,2]
    assert op.buffer_offsets_in_elements((0, 4, 0, 7)) == (1 * 5 + 2, 4 * 15 + 7)
    assert op.buffer_offsets_in_elements((4, 7)) == (7, 67)  # the descriptors' own rank
    with pytest.raises(ShapeError):
        op.buffer_offsets_in_elements((0, 4, 7))


# ---- cases, nodes, suite -----------------------------------------------------------------------
def test_case_checks_and_id() -> None:
    assert "Tile" in CASE_OPS
    case = Case("Tile", "float32", (2, 3), repeats=(1, 2))
    assert case.id == "Tile-float32-2x3-reps1.2-random-s0"
    assert operator_for_type("Tile").output_shape(case) == (2, 6)
    for bad in [{}, {"repeats": (1,)}, {"repeats": (1, -2)}]:
        with pytest.raises(ShapeError):
            Case("Tile", "float32", (2, 3), **bad)


@pytest.mark.parametrize("opset", [6, 12, 13, 19])
def test_node_at_each_opset_runs_like_numpy(opset: int) -> None:
    import onnxruntime as ort

    case = Case("Tile", "uint8", (2, 1, 3), repeats=(2, 3, 1), values="iota", opset=opset)
    model = build_model([case], ir_version=10)
    onnx.checker.check_model(model, full_check=True)
    (init,) = model.graph.initializer
    assert init.name == "repeats0" and init.data_type == TensorProto.INT64
    assert list(numpy_helper.to_array(init)) == [2, 3, 1]
    x = make_input(case)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x0": x})
    assert y.tobytes() == np.tile(x, (2, 3, 1)).tobytes()
    assert expected_output(case, x).tobytes() == y.tobytes()


def test_tile_1_has_no_node() -> None:
    with pytest.raises(ModelError, match=r"opset 5 is before opset 6, the first Tile cases are built at; "
                                         r"valid: 6\.\."):
        build_model([Case("Tile", "float32", (2,), repeats=(2,))], opset=5)
    with pytest.raises(ShapeError, match=r"Tile at opset 5: Tile cases start at opset 6 .*valid: opset >= 6"):
        Case("Tile", "float32", (2,), repeats=(2,), opset=5)


def test_zero_repeats_are_inexpressible_and_compare_with_numpy() -> None:
    case = Case("Tile", "float32", (2, 3), repeats=(0, 2))
    operator = operator_for_type("Tile")
    assert "empty" in operator.inexpressible_reason(case) and "dispatches nothing" in \
        operator.inexpressible_reason(case)
    assert expected_output(case, make_input(case)).shape == (0, 6)
    (result,) = run_cases([case], provider="cpu")
    assert result.status is Status.PASS, result.message


@pytest.fixture(scope="module")
def suite() -> list[Case]:
    return [c for c in standard_suite(ops=["Tile"]) if not is_edge(c)]  # rank 0, empty: test_edge_tensors


def test_suite_covers_ranks_types_squeezes(suite: list[Case]) -> None:
    assert {c.rank for c in suite} == set(range(1, 9))
    assert {c.data_type for c in suite} == set(SUITE_DTYPES)
    assert {c.values for c in suite} == {"random", "special", "iota"}
    assert {c.opset for c in suite} == {None, 12}
    assert all(0 not in (c.repeats or ()) for c in suite)  # no empty outputs
    squeezed = [c for c in suite if TileOp.from_onnx(c.data_type, c.shape, c.repeats or ()).dimension_count
                < c.rank]
    assert {c.rank for c in squeezed} >= set(range(2, 9))
    assert any(c.repeats and all(r == 1 for r in c.repeats) and set(c.shape) == {1} for c in suite)
    assert len({c.id for c in suite}) == len(suite)
    assert [c.id for c in standard_suite(ops=["Tile"]) if not is_edge(c)] == [c.id for c in suite]
    # a case keeps its seed whatever the selection around it
    mine = {c.id.rpartition("-s")[0]: c.seed for c in suite}
    subset = standard_suite(ops=["Tile"], dtypes=["float32", "int8"], ranks=[3])
    floats = [c for c in subset if c.data_type is DataType.FLOAT32]
    assert floats and all(mine[c.id.rpartition("-s")[0]] == c.seed for c in floats)


def test_suite_on_the_cpu_ep(suite: list[Case]) -> None:
    """Everything passes except ONNX Runtime CPU's float16 Tile, which moves values through
    float and so rewrites NaNs; the diagnosis must name that and nothing else may differ."""
    results = run_cases(suite, provider="cpu")
    status = Counter(r.status for r in results)
    assert status[Status.ERROR] == status[Status.UNSUPPORTED] == 0
    for r in results:
        if r.status is Status.MISMATCH:
            assert r.case.data_type is DataType.FLOAT16 and r.case.values == "special", r.case.id
            assert r.diagnosis.startswith(("output matches the input with signalling NaNs quieted",
                                           "output matches the input with NaN payloads replaced")), \
                r.diagnosis
    assert status[Status.PASS] >= len(suite) - 5


# ---- diagnosis -----------------------------------------------------------------------------------
def _diagnosis(case: Case, actual: np.ndarray) -> str:
    return diagnose(case, make_input(case), actual.reshape(operator_for_type("Tile").output_shape(case)))


def test_diagnosis_repeats_on_the_wrong_axes() -> None:
    case = Case("Tile", "int32", (2, 3, 4), repeats=(1, 2, 3), values="iota", seed=3)
    x = make_input(case)
    text = _diagnosis(case, np.tile(x, (3, 2, 1)))
    assert text.startswith("output matches the repeats applied to the wrong axes (repeats [3, 2, 1]"), text


def test_diagnosis_squeezed_repeats_right_aligned_onto_the_unsqueezed_input() -> None:
    case = Case("Tile", "float32", (1, 3, 1, 5), repeats=(1, 2, 1, 3), values="iota", seed=3)
    x = make_input(case)
    text = _diagnosis(case, np.tile(x, (1, 1, 2, 3)))
    assert text.startswith("output matches the squeezed repeats [2, 3] right-aligned onto the "
                           "unsqueezed input [1, 3, 1, 5]"), text


def test_diagnosis_repeats_aligned_left() -> None:
    case = Case("Tile", "uint16", (3, 4), repeats=(2, 3), values="iota", seed=3)
    x = make_input(case)
    text = _diagnosis(case, np.tile(x.reshape(1, 1, 3, 4), (2, 3, 1, 1)))
    assert "repeats aligned left" in text, text


def test_diagnosis_input_read_packed() -> None:
    case = Case("Tile", "int8", (2, 3), repeats=(2, 2), values="iota", seed=3)
    x = make_input(case)
    actual = np.zeros(24, dtype=np.int8)
    actual[:6] = x.reshape(-1)
    text = _diagnosis(case, actual)
    assert text.startswith("output matches the input read packed"), text


# ---- real models --------------------------------------------------------------------------------
def _tile_model(shape, repeats, *, opset=13, runtime_repeats=False) -> onnx.ModelProto:
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)]
    inits = []
    if runtime_repeats:
        inputs.append(helper.make_tensor_value_info("r", TensorProto.INT64, (len(shape),)))
    else:
        inits.append(numpy_helper.from_array(np.array(repeats, dtype=np.int64), "r"))
    node = helper.make_node("Tile", ["x", "r"], ["y"], name="tile")
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    graph = helper.make_graph([node], "g", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def test_extract_describes_tile_and_makes_its_case() -> None:
    model = _tile_model((1, 3, 1, 5), (1, 2, 1, 3))
    (op,) = extract(model)
    assert op.output_shape == (1, 6, 1, 15) and op.flags == () and op.stride_view is False
    assert op.dml_operator["operator"] == "DML_OPERATOR_TILE" and op.dml_operator["repeats"] == (2, 3)
    assert op.descriptors["input"].sizes == (3, 5) and op.descriptors["output"].sizes == (6, 15)
    (case,) = model_cases(model)
    assert (case.op, case.shape, case.repeats) == ("Tile", (1, 3, 1, 5), (1, 2, 1, 3))
    x = np.arange(15, dtype=np.float32).reshape(1, 3, 1, 5)
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert expected_output(case, x).tobytes() == expected.tobytes()


def test_extract_flags_what_directml_cannot_take() -> None:
    (empty,) = extract(_tile_model((2, 3), (0, 2)))
    assert empty.output_shape == (0, 6) and empty.dml_operator is None
    assert any(f.startswith("empty:") for f in empty.flags)
    (runtime,) = extract(_tile_model((2, 3), None, runtime_repeats=True))
    assert any(f.startswith("runtime-input:") for f in runtime.flags) and runtime.to_case() is None


def test_extract_flags_tile_1() -> None:
    graph = helper.make_graph(
        [helper.make_node("Tile", ["x", "t", "a"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 3))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(2, dtype=np.int64), "t"),
         numpy_helper.from_array(np.array(1, dtype=np.int64), "a")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 5)], ir_version=7)
    (op,) = extract(model)
    assert op.dml_operator is None and any(f.startswith("no-dml-kernel:") for f in op.flags)
    assert any(f.startswith("no-cpu-kernel: opset 5 resolves to Tile-1") for f in op.flags)  # nor the CPU EP
    assert op.to_case() is None
