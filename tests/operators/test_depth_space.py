"""DepthToSpace and SpaceToDepth: DML_OPERATOR_DEPTH_TO_SPACE1 and DML_OPERATOR_SPACE_TO_DEPTH as
the DML EP builds them, against DirectML's documentation examples, the ONNX specification's
reshape/transpose formulas, the ONNX reference implementation and hand-worked offsets."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from ort_layouts._errors import ModelError, ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.diagnose import diagnose
from ort_layouts.engine.graphs import build_model
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.engine.suite import SUITE_DTYPES, standard_suite
from ort_layouts.models.extract import extract, model_cases
from ort_layouts.operators.case import Case
from ort_layouts.operators.depth_space import DepthSpaceOrder, DepthToSpaceOp, SpaceToDepthOp
from ort_layouts.operators.expected import expected_output
from ort_layouts.operators.registry import CASE_OPS, operator_for_type
from ort_layouts.operators.values import make_input
from ort_layouts.reference.execute import execute, output_values, verify

# DirectML's DEPTH_TO_SPACE1 / SPACE_TO_DEPTH1 examples: {1,8,2,3} UINT32, channel k = 9k + [0..5]
DOC_INPUT = np.array([9 * k + np.arange(6) for k in range(8)], dtype=np.uint32).reshape(1, 8, 2, 3)
# ns-directml-dml_space_to_depth1_operator_desc, example 1's input (= DEPTH_TO_SPACE1 DCR's output)
DOC_DCR = np.array([[[[0, 18, 1, 19, 2, 20], [36, 54, 37, 55, 38, 56],
                      [3, 21, 4, 22, 5, 23], [39, 57, 40, 58, 41, 59]],
                     [[9, 27, 10, 28, 11, 29], [45, 63, 46, 64, 47, 65],
                      [12, 30, 13, 31, 14, 32], [48, 66, 49, 67, 50, 68]]]], dtype=np.uint32)
# example 2's input (CRD): the first six rows as the documentation prints them; the last two
# worked by hand (channel 1 reads input channels 4..7 = bases 36, 45, 54, 63, row 1 of each)
DOC_CRD = np.array([[[[0, 9, 1, 10, 2, 11], [18, 27, 19, 28, 20, 29],
                      [3, 12, 4, 13, 5, 14], [21, 30, 22, 31, 23, 32]],
                     [[36, 45, 37, 46, 38, 47], [54, 63, 55, 64, 56, 65],
                      [39, 48, 40, 49, 41, 50], [57, 66, 58, 67, 59, 68]]]], dtype=np.uint32)


def _spec_depth_to_space(x: np.ndarray, b: int, mode: str) -> np.ndarray:
    """The ONNX specification's formula, written out here."""
    n, c, h, w = x.shape
    if mode == "DCR":
        t = np.reshape(x, [n, b, b, c // (b**2), h, w]).transpose([0, 3, 4, 1, 5, 2])
    else:
        t = np.reshape(x, [n, c // (b**2), b, b, h, w]).transpose([0, 1, 4, 2, 5, 3])
    return np.reshape(t, [n, c // (b**2), h * b, w * b])


def _spec_space_to_depth(x: np.ndarray, b: int) -> np.ndarray:
    n, c, h, w = x.shape
    t = np.reshape(x, [n, c, h // b, b, w // b, b]).transpose([0, 3, 5, 1, 2, 4])
    return np.reshape(t, [n, c * b * b, h // b, w // b])


# ---- DirectML's documentation examples ----------------------------------------------------------
def test_doc_first_rows() -> None:
    dcr = output_values(DepthToSpaceOp.from_onnx("uint32", (1, 8, 2, 3), 2, "DCR"), DOC_INPUT)
    crd = output_values(DepthToSpaceOp.from_onnx("uint32", (1, 8, 2, 3), 2, "CRD"), DOC_INPUT)
    assert dcr[0, 0, 0].tolist() == [0, 18, 1, 19, 2, 20]
    assert crd[0, 0, 0].tolist() == [0, 9, 1, 10, 2, 11]


@pytest.mark.parametrize(("mode", "expected"), [("DCR", DOC_DCR), ("CRD", DOC_CRD)], ids=["DCR", "CRD"])
def test_depth_to_space1_doc_examples(mode: str, expected: np.ndarray) -> None:
    op = DepthToSpaceOp.from_onnx("uint32", (1, 8, 2, 3), 2, mode)
    assert np.array_equal(output_values(op, DOC_INPUT), expected)
    assert verify(op, DOC_INPUT, expected).passed


def test_space_to_depth_doc_example() -> None:
    # example 1 of SPACE_TO_DEPTH1 (DEPTH_COLUMN_ROW, the original SPACE_TO_DEPTH's only order)
    op = SpaceToDepthOp.from_onnx("uint32", (1, 2, 4, 6), 2)
    assert op.output.sizes == (1, 8, 2, 3)
    assert np.array_equal(output_values(op, DOC_DCR), DOC_INPUT)
    assert verify(op, DOC_DCR, DOC_INPUT).passed


# ---- descriptors ----------------------------------------------------------------------------------
def test_descriptors_and_desc_fields() -> None:
    op = DepthToSpaceOp.from_onnx("float16", (1, 8, 2, 3), 2, "CRD")
    assert op.input.sizes == (1, 8, 2, 3) and op.input.strides is None
    assert op.input.total_tensor_size_in_bytes == 96 and op.output.sizes == (1, 2, 4, 6)
    d = op.to_dict()
    assert (d["operator"], d["block_size"]) == ("DML_OPERATOR_DEPTH_TO_SPACE1", 2)
    assert d["order"] == "COLUMN_ROW_DEPTH"
    assert DepthToSpaceOp.from_dict(d) == op
    s2d = SpaceToDepthOp.from_onnx("int8", (2, 3, 6, 3), 3)
    assert s2d.output.sizes == (2, 27, 2, 1)
    assert s2d.output.total_tensor_size_in_bytes == 108  # 108 elements of 1 byte
    d2 = s2d.to_dict()
    assert d2 == {"operator": "DML_OPERATOR_SPACE_TO_DEPTH", "input": s2d.input.to_dict(),
                  "output": s2d.output.to_dict(), "block_size": 3}
    assert SpaceToDepthOp.from_dict(d2) == s2d
    assert "DML_DEPTH_SPACE_ORDER_COLUMN_ROW_DEPTH" in op.to_cpp()
    assert "DML_SPACE_TO_DEPTH_OPERATOR_DESC" in s2d.to_cpp()


def test_order_values_and_the_eps_prefix_matching() -> None:
    assert int(DepthSpaceOrder.DEPTH_COLUMN_ROW) == 0 and int(DepthSpaceOrder.COLUMN_ROW_DEPTH) == 1
    for mode, order in (("DCR", 0), ("CRD", 1), ("", 0), ("D", 0), ("DC", 0), ("C", 1), ("CR", 1)):
        assert DepthSpaceOrder.from_onnx(mode) == order, mode
    for bad in ("dcr", "X", "DCRX", "RDC"):
        with pytest.raises(ShapeError, match="valid"):
            DepthSpaceOrder.from_onnx(bad)


def test_directml_rules() -> None:
    f = DataType.FLOAT32
    with pytest.raises(ShapeError, match="4"):
        DepthToSpaceOp(BufferTensorDesc(f, (8, 2, 3)), BufferTensorDesc(f, (2, 4, 6)), 2)
    with pytest.raises(ShapeError, match="multiple of BlockSize"):
        DepthToSpaceOp(BufferTensorDesc(f, (1, 6, 2, 3)), BufferTensorDesc(f, (1, 1, 4, 6)), 2)
    with pytest.raises(ShapeError, match="output sizes"):
        DepthToSpaceOp(BufferTensorDesc(f, (1, 8, 2, 3)), BufferTensorDesc(f, (1, 2, 6, 4)), 2)
    with pytest.raises(ShapeError, match="BlockSize"):
        DepthToSpaceOp(BufferTensorDesc(f, (1, 8, 2, 3)), BufferTensorDesc(f, (1, 8, 2, 3)), 0)
    with pytest.raises(ShapeError, match="DML_DEPTH_SPACE_ORDER"):
        DepthToSpaceOp(BufferTensorDesc(f, (1, 8, 2, 3)), BufferTensorDesc(f, (1, 2, 4, 6)), 2, 2)
    with pytest.raises(ShapeError, match="multiples of BlockSize"):
        SpaceToDepthOp(BufferTensorDesc(f, (1, 2, 4, 5)), BufferTensorDesc(f, (1, 8, 2, 2)), 2)
    with pytest.raises(ShapeError, match="data type"):
        SpaceToDepthOp(BufferTensorDesc(f, (1, 2, 4, 6)), BufferTensorDesc("int32", (1, 8, 2, 3)), 2)
    with pytest.raises(ShapeError, match="4-D"):
        SpaceToDepthOp.from_onnx(f, (2, 4, 6), 2)


def test_buffer_offsets_hand_worked() -> None:
    dcr = DepthToSpaceOp.from_onnx("float32", (1, 8, 2, 3), 2, "DCR")
    crd = DepthToSpaceOp.from_onnx("float32", (1, 8, 2, 3), 2, "CRD")
    # output [0,1,2,3] of [1,2,4,6] (offset 24+12+3 = 39): bh 0, bw 1, input row 1, column 1;
    # DCR channel (0*2+1)*2+1 = 3 -> 3*6+3+1 = 22; CRD channel 1*4+0*2+1 = 5 -> 5*6+3+1 = 34
    assert dcr.buffer_offsets_in_elements((0, 1, 2, 3)) == (22, 39)
    assert crd.buffer_offsets_in_elements((0, 1, 2, 3)) == (34, 39)
    s2d = SpaceToDepthOp.from_onnx("float32", (1, 2, 4, 6), 2)
    # output [0,5,1,2] of [1,8,2,3] (offset 30+3+2 = 35): block 2 = (bh 1, bw 0), channel 1;
    # input [0,1,3,4] -> 24+18+4 = 46
    assert s2d.buffer_offsets_in_elements((0, 5, 1, 2)) == (46, 35)


# ---- the executor ------------------------------------------------------------------------------
def test_executor_against_the_spec_and_the_onnx_reference() -> None:
    rng = np.random.default_rng(123)
    dtypes = [DataType.FLOAT16, DataType.FLOAT32, DataType.FLOAT64, DataType.INT8, DataType.INT16,
              DataType.UINT32, DataType.UINT64]
    for trial in range(120):
        b = int(rng.integers(1, 4))
        n, co, h, w = (int(v) for v in rng.integers(1, 4, size=4))
        dtype = dtypes[trial % len(dtypes)]
        mode = ("DCR", "CRD")[trial % 2]
        shape = (n, co * b * b, h, w)
        x = make_input(Case("DepthToSpace", dtype, shape, blocksize=b, mode=mode, values="special",
                            seed=trial))
        op = DepthToSpaceOp.from_onnx(dtype, shape, b, mode)
        expected = _spec_depth_to_space(x, b, mode)
        assert output_values(op, x).tobytes() == np.ascontiguousarray(expected).tobytes(), (shape, b, mode)
        assert verify(op, x, expected).passed
        raw = execute(op, x)
        assert raw[: expected.nbytes].tobytes() == np.ascontiguousarray(expected).tobytes()
        # SpaceToDepth of the DepthToSpace output (DCR) gives the input back
        s2d_in = _spec_depth_to_space(x, b, "DCR")
        s2d = SpaceToDepthOp.from_onnx(dtype, s2d_in.shape, b)
        assert output_values(s2d, np.ascontiguousarray(s2d_in)).tobytes() == \
            np.ascontiguousarray(_spec_space_to_depth(s2d_in, b)).tobytes() == x.tobytes()
        wrong = np.ascontiguousarray(expected).copy().reshape(-1)
        wrong.view(np.uint8)[0] ^= 0x01
        assert not verify(op, x, wrong.reshape(expected.shape)).passed
    for op_type, attrs, shape in (("DepthToSpace", {"blocksize": 2, "mode": "CRD"}, (2, 8, 3, 2)),
                                  ("DepthToSpace", {"blocksize": 3, "mode": "DCR"}, (1, 18, 2, 3)),
                                  ("SpaceToDepth", {"blocksize": 3}, (2, 2, 6, 3))):
        node = helper.make_node(op_type, ["x"], ["y"], **attrs)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        x = rng.standard_normal(shape).astype(np.float32)
        expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
        b = attrs["blocksize"]
        op = (DepthToSpaceOp.from_onnx("float32", shape, b, attrs["mode"]) if op_type == "DepthToSpace"
              else SpaceToDepthOp.from_onnx("float32", shape, b))
        assert output_values(op, x).tobytes() == expected.tobytes()


# ---- cases, nodes, suite -----------------------------------------------------------------------
def test_case_checks_ids_and_default_mode() -> None:
    assert {"DepthToSpace", "SpaceToDepth"} <= set(CASE_OPS)
    d2s = Case("DepthToSpace", "float32", (1, 8, 2, 3), blocksize=2)
    assert d2s.mode == "DCR" and d2s.id == "DepthToSpace-float32-1x8x2x3-b2-DCR-random-s0"
    s2d = Case("SpaceToDepth", "float32", (1, 2, 4, 6), blocksize=2)
    assert s2d.id == "SpaceToDepth-float32-1x2x4x6-b2-random-s0"
    assert operator_for_type("SpaceToDepth").output_shape(s2d) == (1, 8, 2, 3)
    bad = [("DepthToSpace", (1, 8, 2, 3), {}), ("DepthToSpace", (1, 8, 2, 3), {"blocksize": 0}),
           ("DepthToSpace", (8, 2, 3), {"blocksize": 2}), ("DepthToSpace", (1, 6, 2, 3), {"blocksize": 2}),
           ("DepthToSpace", (1, 8, 2, 3), {"blocksize": 2, "mode": "RCD"}),
           ("SpaceToDepth", (1, 2, 4, 5), {"blocksize": 2}),
           ("SpaceToDepth", (1, 2, 4, 6), {"blocksize": 2, "mode": "CRD"})]
    for op, shape, kwargs in bad:
        with pytest.raises(ShapeError):
            Case(op, "float32", shape, **kwargs)


@pytest.mark.parametrize(("op", "mode", "opset"), [
    ("DepthToSpace", "DCR", 1), ("DepthToSpace", "DCR", 10), ("DepthToSpace", "CRD", 11),
    ("DepthToSpace", "CRD", 13), ("DepthToSpace", "DCR", 19), ("SpaceToDepth", "", 1),
    ("SpaceToDepth", "", 12), ("SpaceToDepth", "", 13)])
def test_nodes_at_each_opset_match_the_onnx_reference(op: str, mode: str, opset: int) -> None:
    shape = (2, 8, 2, 3) if op == "DepthToSpace" else (2, 2, 4, 6)
    case = Case(op, "float32", shape, blocksize=2, mode=mode, values="iota", opset=opset)
    model = build_model([case], ir_version=7 if opset < 11 else 10)
    onnx.checker.check_model(model, full_check=True)
    (node,) = model.graph.node
    names = {a.name for a in node.attribute}
    assert names == ({"blocksize", "mode"} if op == "DepthToSpace" and opset >= 11 else {"blocksize"})
    x = make_input(case)
    expected = ReferenceEvaluator(model).run(None, {"x0": x})[0]
    assert expected_output(case, x).tobytes() == expected.tobytes()


def test_crd_needs_opset_11() -> None:
    with pytest.raises(ModelError, match="opset >= 11"):  # a case of no opset of its own, at the run's
        build_model([Case("DepthToSpace", "float32", (1, 8, 2, 3), blocksize=2, mode="CRD")], opset=10)


@pytest.fixture(scope="module")
def suite() -> list[Case]:
    return standard_suite(ops=["DepthToSpace", "SpaceToDepth"])


def test_suite_coverage(suite: list[Case]) -> None:
    d2s = [c for c in suite if c.op == "DepthToSpace"]
    s2d = [c for c in suite if c.op == "SpaceToDepth"]
    assert {(c.mode, c.blocksize) for c in d2s} == {("DCR", 2), ("CRD", 2), ("DCR", 3), ("CRD", 3)}
    assert {c.blocksize for c in s2d} == {2, 3}
    assert {c.opset for c in d2s} == {None, 10, 11} and {c.opset for c in s2d} == {None, 12}
    for cases in (d2s, s2d):
        assert {c.data_type for c in cases} == set(SUITE_DTYPES)
        assert {c.values for c in cases} == {"random", "special", "iota"}
    assert all(c.rank == 4 for c in suite) and len({c.id for c in suite}) == len(suite)
    assert not standard_suite(ops=["DepthToSpace", "SpaceToDepth"], ranks=[3])
    assert [c.id for c in standard_suite(ops=["DepthToSpace", "SpaceToDepth"])] == [c.id for c in suite]


def test_suite_on_the_cpu_ep(suite: list[Case]) -> None:
    """Everything the CPU EP has a kernel for passes; the rest is unsupported for lack of a
    kernel (DepthToSpace-1/11 and SpaceToDepth-1 cover a few types only)."""
    results = run_cases(suite, provider="cpu")
    status = Counter(r.status for r in results)
    assert status[Status.ERROR] == status[Status.MISMATCH] == 0, \
        [(r.case.id, r.message) for r in results if r.status in (Status.ERROR, Status.MISMATCH)]
    for r in results:
        if r.status is Status.UNSUPPORTED:
            assert r.case.opset in (10, 11, 12) and not r.case.data_type.is_float, (r.case.id, r.message)
    assert status[Status.PASS] >= len(suite) - 40


# ---- diagnosis -----------------------------------------------------------------------------------
def _diagnosis(case: Case, actual: np.ndarray) -> str:
    return diagnose(case, make_input(case), actual.reshape(operator_for_type(case.op).output_shape(case)))


@pytest.mark.parametrize(("mode", "other"), [("DCR", "CRD"), ("CRD", "DCR")])
def test_diagnosis_names_the_other_mode(mode: str, other: str) -> None:
    case = Case("DepthToSpace", "float32", (1, 8, 2, 3), blocksize=2, mode=mode, values="iota", seed=1)
    text = _diagnosis(case, _spec_depth_to_space(make_input(case), 2, other))
    assert text.startswith(f"output matches mode {other} "), text


def test_diagnosis_wrong_blocksize() -> None:
    case = Case("DepthToSpace", "int32", (1, 16, 2, 2), blocksize=2, values="iota", seed=1)
    text = _diagnosis(case, _spec_depth_to_space(make_input(case), 4, "DCR"))
    assert text.startswith("output matches blocksize 4 (DCR) instead of 2"), text
    s2d = Case("SpaceToDepth", "int32", (1, 2, 4, 4), blocksize=2, values="iota", seed=1)
    text = _diagnosis(s2d, _spec_space_to_depth(make_input(s2d), 4))
    assert text.startswith("output matches blocksize 4 instead of 2"), text


def test_diagnosis_input_read_packed_and_crd_space_to_depth() -> None:
    case = Case("DepthToSpace", "uint8", (1, 8, 2, 3), blocksize=2, values="iota", seed=1)
    assert _diagnosis(case, make_input(case)).startswith("output matches the input read packed")
    s2d = Case("SpaceToDepth", "uint16", (1, 2, 4, 6), blocksize=2, values="iota", seed=1)
    x = make_input(s2d)
    # column-row-depth: output channel c*4 + bh*2 + bw holds input channel c at (2y+bh, 2x+bw)
    crd = x.reshape(1, 2, 2, 2, 3, 2).transpose(0, 1, 3, 5, 2, 4).reshape(1, 8, 2, 3)
    assert _diagnosis(s2d, crd).startswith("output matches the column-row-depth order"), _diagnosis(s2d, crd)


# ---- real models --------------------------------------------------------------------------------
def _model(op_type: str, shape, opset=13, **attrs) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node(op_type, ["x"], ["y"], name="n", **attrs)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def test_extract_describes_the_directml_operators_and_makes_cases() -> None:
    (d2s,) = extract(_model("DepthToSpace", (1, 8, 2, 3), blocksize=2, mode="CRD"))
    assert d2s.dml_operator["operator"] == "DML_OPERATOR_DEPTH_TO_SPACE1"
    assert d2s.dml_operator["order"] == "COLUMN_ROW_DEPTH" and d2s.params == {"blocksize": 2, "mode": "CRD"}
    assert d2s.output_shape == (1, 2, 4, 6) and d2s.stride_view is False and d2s.flags == ()
    case = d2s.to_case()
    assert (case.op, case.blocksize, case.mode) == ("DepthToSpace", 2, "CRD")
    (old,) = extract(_model("DepthToSpace", (1, 8, 2, 3), opset=9, blocksize=2))  # DepthToSpace-1
    assert old.dml_operator["order"] == "DEPTH_COLUMN_ROW"
    (s2d,) = model_cases(_model("SpaceToDepth", (1, 2, 4, 6), blocksize=2))
    assert (s2d.op, s2d.blocksize, s2d.mode) == ("SpaceToDepth", 2, "DCR")
    (flat,) = extract(_model("SpaceToDepth", (2, 4, 6), blocksize=2))
    assert flat.dml_operator is None and any(f.startswith("shape:") for f in flat.flags)


@pytest.mark.parametrize(("op", "shape", "attrs"), [
    ("DepthToSpace", (1, 8, 2, 3), {"mode": "CRD"}), ("SpaceToDepth", (1, 2, 4, 6), {"mode": "DCR"}),
])
def test_a_version_28_node_is_flagged_for_having_no_dml_kernel(op, shape, attrs) -> None:
    """The DML EP registers DepthToSpace-1, -11, -13 and SpaceToDepth-1, -13 only
    (OperatorRegistration.cpp: REG_INFO(7 | 11 | 13, DepthToSpace), REG_INFO(7 | 13, SpaceToDepth));
    opset 28 resolves to version 28 of both (ONNX's history), which has none: the node is flagged
    as a Transpose-23 node is. Opset 27 resolves to version 13: no flag."""
    (node,) = extract(_model(op, shape, opset=28, blocksize=2, **attrs))
    assert node.flags == (f"no-kernel: opset 28 resolves to {op}-28, and the DML EP registers {op} only "
                          f"for schema versions {[1, 11, 13] if op == 'DepthToSpace' else [1, 13]} "
                          "(OperatorRegistration.cpp, exact since-version matching); ONNX Runtime runs "
                          "the node on the CPU EP",)
    earlier = attrs if op == "DepthToSpace" else {}  # SpaceToDepth-13 has no mode: ONNX Runtime refuses one
    (supported,) = extract(_model(op, shape, opset=27, blocksize=2, **earlier))
    assert supported.flags == ()


def test_a_space_to_depth_of_mode_crd_is_flagged_and_makes_no_case() -> None:
    """SpaceToDepth-28 has a mode; the DML EP builds DML_SPACE_TO_DEPTH (DCR, its one order)
    without reading it: a CRD node is no DCR case."""
    crd = _model("SpaceToDepth", (1, 2, 4, 6), opset=28, blocksize=2, mode="CRD")
    (node,) = extract(crd)
    assert node.dml_operator is None and node.params == {}
    assert node.flags == ("mode: SpaceToDepth mode 'CRD' (opset 28) makes no case; valid: 'DCR', the one "
                          "order a SpaceToDepth case describes (DmlOperatorSpaceToDepth builds "
                          "DML_SPACE_TO_DEPTH, whose order is DCR, for SpaceToDepth-1 and -13)",)
    assert model_cases(crd) == []
    for attrs in ({"mode": "DCR"}, {}):
        (case,) = model_cases(_model("SpaceToDepth", (1, 2, 4, 6), opset=28, blocksize=2, **attrs))
        assert (case.op, case.mode) == ("SpaceToDepth", "DCR")


@pytest.mark.parametrize("mode", ["XYZ", "dcr", "D", ""])
def test_a_depth_to_space_of_an_invalid_mode_is_flagged_and_makes_no_case(mode: str) -> None:
    """ONNX's DepthToSpace-11 and -13 allow mode "DCR" or "CRD"; ONNX Runtime refuses a model
    with another (its kernel supports only those two): the node is flagged "mode", names the
    mode and the valid ones, and makes no case (neither a DepthToSpace case nor, for want of a
    mode, a SpaceToDepth one)."""
    import onnxruntime as ort

    model = _model("DepthToSpace", (1, 4, 2, 2), blocksize=2, mode=mode)
    with pytest.raises(Exception, match="DCR"):
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (node,) = extract(model)
    assert node.dml_operator is None and node.to_case() is None and model_cases(model) == []
    (flag,) = node.flags
    assert flag.startswith(f"mode: DepthToSpace mode {mode!r} (opset 13) is not valid; valid: 'DCR' or 'CRD'")


def test_a_crd_depth_to_space_at_an_opset_before_11_is_refused_when_the_case_is_made() -> None:
    """DepthToSpace-1 has no mode (always DCR)."""
    with pytest.raises(ShapeError, match=r"^DepthToSpace mode 'CRD' needs opset >= 11 .*got 10; valid: "):
        Case("DepthToSpace", "float32", (1, 8, 2, 2), blocksize=2, mode="CRD", opset=10)
    assert Case("DepthToSpace", "float32", (1, 8, 2, 2), blocksize=2, mode="DCR", opset=10).mode == "DCR"
