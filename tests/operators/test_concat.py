"""Concat -> DML_OPERATOR_JOIN: descriptors against the worked examples of the DML EP and
DirectML's documentation, the reference executor against numpy.concatenate and onnx.reference,
the graph, the standard suite on the CPU EP, the diagnosis of typical JOIN bugs, and real models."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from ort_layouts._errors import DescriptorError, ModelError, NotExpressibleError, ShapeError
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
from ort_layouts.operators.expected import dml_operator, expected_output, expected_outputs, input_feeds
from ort_layouts.operators.join_split import JOIN, JoinOp
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.operators.values import make_input
from ort_layouts.reference.execute import output_values_all, verify_all

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
NUMPY_TYPES = [t for t in SUITE_DTYPES]


def random_bits(dtype: DataType, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random bit patterns of ``dtype`` (NaN payloads and -0.0 included)."""
    npt = dtype.to_numpy()
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * npt.itemsize, dtype=np.uint8)
    return raw.view(npt).reshape(shape)


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


# ---- descriptors -----------------------------------------------------------------------------
def test_the_worked_example_of_dml_operator_concat() -> None:
    """DmlOperatorConcat on float [2,3] (+) [2,5] on axis 1: inputs {1,1,2,3}, {1,1,2,5}, output
    {1,1,2,8}, Axis 1+4-2 = 3."""
    op = dml_operator(Case("Concat", "float32", (2, 8), axis=1, parts=(3, 5)))
    assert isinstance(op, JoinOp)
    assert [d.sizes for d in op.inputs] == [(1, 1, 2, 3), (1, 1, 2, 5)]
    assert op.output.sizes == (1, 1, 2, 8) and op.axis == 3 and op.input_count == 2
    assert all(d.strides is None for d in (*op.inputs, op.output))  # packed: Strides null
    assert [d.total_tensor_size_in_bytes for d in (*op.inputs, op.output)] == [24, 40, 64]
    d = op.to_dict()
    assert d["operator"] == JOIN == "DML_OPERATOR_JOIN"
    assert d["InputCount"] == 2 and d["Axis"] == 3 and d["onnx_inputs"] == [0, 1]
    assert [t["sizes"] for t in d["InputTensors"]] == [[1, 1, 2, 3], [1, 1, 2, 5]]
    assert d["OutputTensor"]["sizes"] == [1, 1, 2, 8]
    assert JoinOp.from_dict(d) == op


@pytest.mark.parametrize(("shape", "axis", "dml_axis", "sizes"), [
    ((5,), 0, 3, (1, 1, 1, 5)),
    ((5,), -1, 3, (1, 1, 1, 5)),
    ((3, 4), 0, 2, (1, 1, 3, 4)),
    ((3, 4), -2, 2, (1, 1, 3, 4)),
    ((2, 3, 4), -1, 3, (1, 2, 3, 4)),
    ((2, 3, 4), 1, 2, (1, 2, 3, 4)),
    ((2, 3, 4, 5), 0, 0, (2, 3, 4, 5)),
    ((2, 3, 4, 5, 6, 7), 2, 2, (2, 3, 4, 5, 6, 7)),  # 6-D: Axis = the ONNX axis
    ((1, 2, 1, 2, 1, 2, 1, 2), -1, 7, (1, 2, 1, 2, 1, 2, 1, 2)),
], ids=["r1", "r1-neg", "r2", "r2-neg", "r3-neg", "r3", "r4", "r6", "r8-neg"])
def test_axis_moves_with_the_right_aligned_padding(shape: tuple[int, ...], axis: int, dml_axis: int,
                                                   sizes: tuple[int, ...]) -> None:
    op = dml_operator(Case("Concat", "int16", shape, axis=axis, parts=(shape[axis],)))
    assert op.axis == dml_axis and op.output.sizes == sizes and op.inputs[0].sizes == sizes


def test_total_size_rounds_up_to_4_bytes() -> None:
    """DMLCalcBufferTensorSize: element bytes, rounded up to a multiple of 4."""
    op = JoinOp.from_onnx("float16", [(1, 3), (1, 2)], 1)
    assert [d.total_tensor_size_in_bytes for d in op.inputs] == [8, 4]  # 6 -> 8, 4
    assert op.output.total_tensor_size_in_bytes == 12  # 10 -> 12
    op = JoinOp.from_onnx("int8", [(3,), (2,)], 0)
    assert [d.total_tensor_size_in_bytes for d in (*op.inputs, op.output)] == [4, 4, 8]
    op = JoinOp.from_onnx("int64", [(2, 3)], 0)
    assert op.output.total_tensor_size_in_bytes == 48 and op.output.data_type is DataType.INT64


def test_rank_over_8_is_rejected() -> None:
    with pytest.raises(DescriptorError, match="over DirectML's maximum of 8"):
        JoinOp.from_onnx("float32", [(1,) * 9, (1,) * 9], 0)


def test_empty_inputs_are_left_out_of_the_join() -> None:
    """DmlOperatorConcat binds only the non-empty inputs; with none there is no operator."""
    op = JoinOp.from_onnx("float32", [(2, 0), (2, 3), (2, 0), (2, 1)], 1)
    assert op.input_count == 2 and op.kernel_input_indices == (1, 3)
    assert [d.sizes for d in op.inputs] == [(1, 1, 2, 3), (1, 1, 2, 1)] and op.output.sizes == (1, 1, 2, 4)
    assert op.to_dict()["onnx_inputs"] == [1, 3]
    with pytest.raises(NotExpressibleError, match="creates no JOIN"):
        JoinOp.from_onnx("float32", [(2, 0), (2, 0)], 1)
    case = Case("Concat", "int32", (3, 5), axis=1, parts=(2, 0, 3))
    x = make_input(case)
    feeds = input_feeds(case, x)
    assert [f.shape for f in feeds] == [(3, 2), (3, 0), (3, 3)]
    (got,) = expected_outputs(case, x)
    assert bits(got) == bits(np.concatenate(feeds, axis=1))
    empty = Case("Concat", "int32", (0, 5), axis=0, parts=(0, 0))
    assert "creates no JOIN" in operator_for_type("Concat").inexpressible_reason(empty)
    # an all-empty Concat is the one DirectML cannot run; numpy gives its (empty) output
    assert expected_output(empty, make_input(empty)).shape == (0, 5)


def test_join_validation_names_the_bad_tensor() -> None:
    out = BufferTensorDesc("float32", (1, 1, 2, 7))
    with pytest.raises(ShapeError, match=r"input 1 sizes .* differ .* at axis 2"):
        JoinOp((BufferTensorDesc("float32", (1, 1, 2, 3)), BufferTensorDesc("float32", (1, 1, 3, 4))), out, 3)
    with pytest.raises(ShapeError, match="add up to 6, not 7"):
        JoinOp((BufferTensorDesc("float32", (1, 1, 2, 3)), BufferTensorDesc("float32", (1, 1, 2, 3))), out, 3)
    with pytest.raises(ShapeError, match="data type INT32"):
        JoinOp((BufferTensorDesc("int32", (1, 1, 2, 7)),), out, 3)
    with pytest.raises(ShapeError, match="Axis 4 is out of range"):
        JoinOp((out,), out, 4)


@pytest.mark.parametrize("bad", [
    {"parts": None}, {"axis": None}, {"parts": (2, 2)}, {"parts": (-1, 6)}, {"axis": 2}, {"axis": -3},
], ids=["no-parts", "no-axis", "bad-sum", "negative-part", "axis-high", "axis-low"])
def test_bad_cases_are_refused(bad: dict[str, object]) -> None:
    fields: dict[str, object] = {"axis": 1, "parts": (2, 3)} | bad
    with pytest.raises(ShapeError):
        Case("Concat", "float32", (4, 5), **fields)  # type: ignore[arg-type]


# ---- DirectML's documentation examples ---------------------------------------------------------
def test_directml_join_example_1() -> None:
    """DML_JOIN_OPERATOR_DESC, example 1: {1,1,2,3} and {1,1,2,4} joined on axis 3."""
    a = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)
    b = np.arange(7, 15, dtype=np.float32).reshape(1, 1, 2, 4)
    op = JoinOp((BufferTensorDesc("float32", (1, 1, 2, 3)), BufferTensorDesc("float32", (1, 1, 2, 4))),
                BufferTensorDesc("float32", (1, 1, 2, 7)), 3)
    (out,) = output_values_all(op, [a, b])
    assert out.tolist() == [[[[1, 2, 3, 7, 8, 9, 10], [4, 5, 6, 11, 12, 13, 14]]]]


@pytest.mark.parametrize(("axis", "sizes", "want"), [
    (1, (1, 3, 2, 2), [[[[1, 2], [3, 4]], [[5, 6], [7, 8]], [[9, 10], [11, 12]]]]),
    (2, (1, 1, 6, 2), [[[[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12]]]]),
    (3, (1, 1, 2, 6), [[[[1, 2, 5, 6, 9, 10], [3, 4, 7, 8, 11, 12]]]]),
], ids=["axis1", "axis2", "axis3"])
def test_directml_join_example_2(axis: int, sizes: tuple[int, ...], want: list[object]) -> None:
    """DML_JOIN_OPERATOR_DESC, example 2: three {1,1,2,2} inputs joined on axes 1, 2 and 3."""
    ins = [np.arange(1 + 4 * k, 5 + 4 * k, dtype=np.float32).reshape(1, 1, 2, 2) for k in range(3)]
    op = JoinOp(tuple(BufferTensorDesc("float32", (1, 1, 2, 2)) for _ in ins),
                BufferTensorDesc("float32", sizes), axis)
    (out,) = output_values_all(op, ins)
    assert out.tolist() == want


# ---- the executor against numpy and onnx.reference ---------------------------------------------
def _concat_model(rank: int, count: int, axis: int, elem: int, opset: int = 13) -> onnx.ModelProto:
    names = [f"i{k}" for k in range(count)]
    node = helper.make_node("Concat", names, ["y"], axis=axis)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, elem, None) for n in names],
                              [helper.make_tensor_value_info("y", elem, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_executor_matches_numpy_and_onnx_reference_on_random_shapes() -> None:
    """A seeded property loop: rank 1-8, any axis (negative too), 1-4 inputs of random sizes
    (0 included), every suite data type with random bits; the JOIN the EP builds, run from its
    descriptors alone, gives numpy.concatenate's bytes, and onnx.reference's on every fifth."""
    rng = np.random.default_rng(20240611)
    checked: Counter[object] = Counter()
    for trial in range(250):
        rank = int(rng.integers(1, 9))
        shape = [int(n) for n in rng.integers(1, 4, size=rank)]
        axis = int(rng.integers(-rank, rank))
        low = 0 if trial % 7 == 0 else 1  # now and then an empty input
        parts = tuple(int(p) for p in rng.integers(low, 5, size=int(rng.integers(1, 5))))
        if not sum(parts):
            continue
        shape[axis] = sum(parts)
        dtype = NUMPY_TYPES[trial % len(NUMPY_TYPES)]
        case = Case("Concat", dtype, tuple(shape), axis=axis, parts=parts)
        x = random_bits(dtype, case.shape, rng)
        feeds = input_feeds(case, x)
        assert [f.shape[axis] for f in feeds] == list(parts)
        want = np.concatenate(feeds, axis=axis)
        (got,) = expected_outputs(case, x)
        assert got.shape == want.shape and bits(got) == bits(want), case.id
        op = dml_operator(case)
        bound = [f for f in feeds if f.size]
        assert [c.passed for c in verify_all(op, bound, [want])] == [True]
        if trial % 5 == 0:
            model = _concat_model(rank, len(parts), axis, dtype.to_onnx())
            (ref,) = ReferenceEvaluator(model).run(None, {f"i{k}": f for k, f in enumerate(feeds)})
            assert bits(ref) == bits(got), case.id
            checked["onnx"] += 1
        checked[rank] += 1
    assert checked["onnx"] >= 40 and all(checked[r] >= 10 for r in range(1, 9))


def test_expected_outputs_join_the_feeds_the_caller_gives() -> None:
    """Given feeds (the runner cuts them once for the session and the oracle) are what the JOIN
    reads: other feeds of the same shapes give their own numpy.concatenate, and the case's own
    feeds give what expected_output makes without them."""
    rng = np.random.default_rng(5)
    case = Case("Concat", DataType.FLOAT16, (2, 7, 3), axis=1, parts=(3, 0, 4))
    x = random_bits(case.data_type, case.shape, rng)
    other = [random_bits(case.data_type, f.shape, rng) for f in input_feeds(case, x)]
    (got,) = expected_outputs(case, x, feeds=other)
    assert bits(got) == bits(np.concatenate(other, axis=1)) != bits(x)
    assert bits(expected_output(case, x, feeds=other)) == bits(got)
    own = expected_output(case, x, feeds=input_feeds(case, x))
    assert bits(own) == bits(expected_output(case, x)) == bits(x)


def test_verify_all_finds_a_flipped_bit() -> None:
    case = Case("Concat", "float32", (2, 7), axis=1, parts=(3, 4))
    x = make_input(case)
    bad = x.copy()
    bad.view(np.uint32)[1, 5] ^= 1
    (cmp,) = verify_all(dml_operator(case), input_feeds(case, x), [bad])
    assert not cmp.passed and cmp.mismatch_count == 1 and cmp.first_mismatch_index == (1, 5)


# ---- graphs and the suite on the CPU EP --------------------------------------------------------
def test_graph_inputs_and_node() -> None:
    cases = [Case("Transpose", "float32", (2, 3), perm=(1, 0)),
             Case("Concat", "uint8", (2, 9), axis=-1, parts=(2, 3, 4)),
             Case("Concat", "int64", (5, 2), axis=0, parts=(5,))]
    model = build_model(cases, opset=13)
    g = model.graph
    assert [i.name for i in g.input] == ["x0", "x1", "x1_1", "x1_2", "x2"]
    assert [o.name for o in g.output] == ["y0", "y1", "y2"]
    dims = [[d.dim_value for d in i.type.tensor_type.shape.dim] for i in g.input[1:4]]
    assert dims == [[2, 2], [2, 3], [2, 4]]
    node = g.node[1]
    assert node.name == "n1_Concat" and list(node.input) == ["x1", "x1_1", "x1_2"]
    assert list(node.output) == ["y1"]
    assert helper.get_attribute_value(node.attribute[0]) == -1
    onnx.checker.check_model(model, full_check=True)
    with pytest.raises(ModelError, match="negative Concat axis needs opset >= 11"):
        build_model([cases[1]], opset=10)


def test_standard_suite_covers_and_passes_on_cpu() -> None:
    cases = [c for c in standard_suite(ops=["Concat"]) if not is_edge(c)]  # rank 0, empty: test_edge_tensors
    assert len({c.id for c in cases}) == len(cases)
    assert {c.rank for c in cases} == set(range(1, 9))
    assert {len(c.parts or ()) for c in cases} == {1, 2, 3, 4}
    assert {c.data_type for c in cases} == set(SUITE_DTYPES)
    assert {c.opset for c in cases} == {None, 4, 11, 13}
    assert any(c.axis is not None and c.axis < 0 for c in cases)
    assert any(len(set(c.parts or ())) > 1 for c in cases)  # uneven
    assert {c.values for c in cases} == {"random", "special", "iota"}
    # an empty input only in the edge cases' Concat of an empty and a non-empty part
    assert {c.parts for c in cases if 0 in (c.parts or ())} <= {(0, 3)}
    results = run_cases(cases, provider="cpu")
    bad = [(r.case.id, r.status.value, r.message) for r in results if r.status is not Status.PASS]
    assert not bad
    assert all(r.descriptors["operator"] == JOIN for r in results)


def test_ids_are_stable() -> None:
    case = Case("Concat", "float16", (2, 8), axis=-1, parts=(3, 5), opset=11, seed=4)
    assert case.id == "Concat-float16-2x8-axism1-parts3.5-op11-random-s4"


# ---- diagnosis ----------------------------------------------------------------------------------
def _case_and_feeds(shape: tuple[int, ...], axis: int, parts: tuple[int, ...]
                    ) -> tuple[Case, np.ndarray, list[np.ndarray]]:
    case = Case("Concat", "float32", shape, axis=axis, parts=parts)
    x = np.random.default_rng(3).permutation(int(np.prod(shape))).astype(np.float32).reshape(shape) + 0.5
    return case, x, input_feeds(case, x)


def test_inputs_back_to_back_is_named_as_the_unadjusted_axis() -> None:
    """[2,3] (+) [2,5] on axis 1 with Axis 1 (the ONNX axis, not moved to 3): the input buffers
    land one after the other."""
    case, x, (a, b) = _case_and_feeds((2, 8), 1, (3, 5))
    actual = np.concatenate([a.reshape(-1), b.reshape(-1)]).reshape(2, 8)
    text = diagnose(case, x, actual)
    assert text.startswith("output matches the inputs' buffers placed one after another"), text
    assert "ONNX axis 1 not adjusted for the padding to 4-D" in text


def test_join_along_another_axis_is_named() -> None:
    # [2,2,3] (+) [2,2,3] on ONNX axis 2 (DML 3); the EP joins along ONNX axis 1 (DML 2)
    case, x, (a, b) = _case_and_feeds((2, 2, 6), 2, (3, 3))
    actual = np.concatenate([a.reshape(2, 1, 6), b.reshape(2, 1, 6)], axis=1).reshape(2, 2, 6)
    text = diagnose(case, x, actual)
    assert "a JOIN along DML axis 2 (ONNX axis 1, the ONNX axis 2 not adjusted" in text, text
    assert "instead of 3" in text


def test_inputs_in_the_wrong_order_are_named() -> None:
    case, x, (a, b, c) = _case_and_feeds((3, 6), 1, (1, 2, 3))
    text = diagnose(case, x, np.concatenate([c, b, a], axis=1))
    assert text.startswith("output matches the inputs joined in the order [2, 1, 0]"), text
    text = diagnose(case, x, np.concatenate([b, a, c], axis=1))
    assert "order [1, 0, 2]" in text and "parts [2, 1, 3]" in text, text


def test_right_output_has_no_diagnosis() -> None:
    case, x, feeds = _case_and_feeds((3, 6), 1, (1, 2, 3))
    assert diagnose(case, x, np.concatenate(feeds, axis=1)) == ""


# ---- real models ---------------------------------------------------------------------------------
def _model(shapes: list[list[int]], axis: int) -> onnx.ModelProto:
    inputs = [helper.make_tensor_value_info(f"a{k}", TensorProto.FLOAT16, s) for k, s in enumerate(shapes)]
    node = helper.make_node("Concat", [f"a{k}" for k in range(len(shapes))], ["y"], name="cat", axis=axis)
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)
    graph = helper.make_graph([node], "m", inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_extract_describes_a_concat_and_makes_its_case() -> None:
    (op,) = extract(_model([[1, 2, 3], [1, 4, 3]], -2))
    assert op.op_type == "Concat" and op.output_shape == (1, 6, 3) and not op.flags
    assert op.dml_operator is not None and op.dml_operator["operator"] == JOIN
    assert op.dml_operator["Axis"] == 2 and op.dml_operator["InputCount"] == 2
    assert op.descriptors["input"].sizes == (1, 1, 2, 3) and op.descriptors["input_1"].sizes == (1, 1, 4, 3)
    assert op.descriptors["output"].sizes == (1, 1, 6, 3) and op.params["parts"] == (2, 4)
    (case,) = model_cases(_model([[1, 2, 3], [1, 4, 3]], -2))
    assert (case.op, case.shape, case.axis, case.parts) == ("Concat", (1, 6, 3), -2, (2, 4))
    (r,) = run_cases([case], provider="cpu")
    assert r.passed


def test_extract_says_empty_inputs_are_dropped() -> None:
    (op,) = extract(_model([[2, 0], [2, 3]], 1))
    assert op.dml_operator is not None and op.dml_operator["InputCount"] == 1
    said = "empty-input: Concat inputs [0] are empty; the DML EP leaves them out"
    assert any(f.startswith(said) for f in op.flags), op.flags
    assert "input" not in op.descriptors and op.descriptors["input_1"].sizes == (1, 1, 2, 3)
    (op,) = extract(_model([[2, 0], [2, 0]], 1))
    assert op.dml_operator is None and any(f.startswith("empty:") for f in op.flags)


def test_a_concat_with_an_empty_input_runs_on_cpu() -> None:
    case = Case("Concat", "uint16", (3, 5), axis=1, parts=(2, 0, 3), seed=6)
    (r,) = run_cases([case], provider="cpu")
    assert r.passed and r.element_count == 15
    assert r.descriptors["InputCount"] == 2 and r.descriptors["onnx_inputs"] == [0, 2]


def test_a_concat_1_node_without_axis_reads_axis_1() -> None:
    """ONNX's Concat-1 defaults its axis to 1 (its schema: "Default value is 1"); the attribute
    is required from Concat-4. A [2, 3] and a [2, 1] input join to [2, 4] along axis 1: the
    case's expected output is numpy's concatenation of the two, worked here."""
    assert "Default value is 1" in onnx.defs.get_schema("Concat", 1).attributes["axis"].description
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    c = np.array([[10.0], [11.0]], dtype=np.float32)

    def model(opset: int) -> onnx.ModelProto:
        graph = helper.make_graph(
            [helper.make_node("Concat", ["x", "c"], ["y"], name="cat")], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 3)),
             helper.make_tensor_value_info("c", TensorProto.FLOAT, (2, 1))],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=3)

    for opset in (1, 3):
        (node,) = extract(model(opset))
        assert node.params["axis"] == 1 and node.output_shape == (2, 4)
        assert not [f for f in node.flags if f.startswith("shape:")], node.flags
        # ONNX Runtime has no kernel for Concat-1: the node is described, and makes no case
        assert any(f.startswith("no-cpu-kernel:") for f in node.flags) and node.to_case() is None
        case = Case("Concat", "float32", (2, 4), axis=node.params["axis"], parts=(3, 1))
        joined = expected_output(case, np.concatenate([x, c], axis=1))
        assert joined.tobytes() == np.array([[0, 1, 2, 10], [3, 4, 5, 11]], np.float32).tobytes()
    (required,) = extract(model(4))
    assert required.to_case() is None
    assert "shape: Concat 'cat' has no axis attribute (required from Concat-4; opset 4)" in required.flags


@pytest.mark.parametrize("axis", [True, None, 1.0, "1"], ids=["bool", "none", "float", "str"])
def test_join_and_split_refuse_an_axis_that_is_no_integer(axis: object) -> None:
    """JoinOp.from_onnx took True as axis 1 and gave a bare TypeError for None; both now refuse
    what is no integer, naming it and the valid axes."""
    from ort_layouts.operators.join_split import SplitOp

    with pytest.raises(ShapeError, match=r"Concat axis .* is not an integer; valid: -2..1"):
        JoinOp.from_onnx("float32", [(2, 3), (2, 1)], axis)  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match=r"Split axis .* is not an integer; valid: -2..1"):
        SplitOp.from_onnx("float32", (4, 3), (1, 3), axis)  # type: ignore[arg-type]
    assert JoinOp.from_onnx("float32", [(2, 3), (2, 1)], 1).output.sizes[-2:] == (2, 4)


def test_join_to_cpp_names_the_onnx_inputs_its_input_tensors_are_when_an_empty_one_is_unbound() -> None:
    """An empty input of the Concat is no InputTensor of the JOIN: the C++ says which ONNX inputs
    the InputTensors are; with every input bound it needs no such line."""
    gap = JoinOp.from_onnx("float32", [(2, 3), (2, 0), (2, 2)], 1).to_cpp()
    assert "// InputTensors are ONNX inputs 0, 2 (the empty ones are not bound)\n" \
           "DML_TENSOR_DESC joinInputTensors[2] = {joinInput0Tensor, joinInput1Tensor};" in gap
    assert "are ONNX inputs" not in JoinOp.from_onnx("float32", [(2, 3), (2, 2)], 1).to_cpp()


def test_a_negative_axis_at_an_opset_before_11_is_refused_when_the_case_is_made() -> None:
    """Concat-4 takes only axis >= 0: the case was made, and failed later as an error."""
    with pytest.raises(ShapeError, match=r"^a negative Concat axis needs opset >= 11, got 4; valid: axis 1 "):
        Case("Concat", "float32", (2, 3), axis=-1, parts=(1, 2), opset=4)
    assert Case("Concat", "float32", (2, 3), axis=1, parts=(1, 2), opset=4).axis == 1
