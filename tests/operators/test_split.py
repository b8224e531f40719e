"""Split -> DML_OPERATOR_SPLIT: descriptors against the worked examples of the DML EP and
DirectML's documentation (SPLIT is JOIN's inverse), the split sizes against onnx.reference, the
reference executor against numpy.split and onnx.reference, the graph at every opset, the
standard suite on the CPU EP, a mismatch naming its output, the diagnosis of typical SPLIT bugs,
and real models."""

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
from ort_layouts.engine import runner as _runner
from ort_layouts.engine.diagnose import diagnose
from ort_layouts.engine.graphs import build_model
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.engine.suite import SUITE_DTYPES, standard_suite
from ort_layouts.engine.suite import is_edge_case as is_edge
from ort_layouts.models.extract import extract, model_cases
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import (
    dml_operator,
    expected_output,
    expected_outputs,
    output_shape,
    output_shapes,
    reference_outputs,
)
from ort_layouts.operators.join_split import SPLIT, SplitOp
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.operators.split import split_sizes
from ort_layouts.operators.values import make_input
from ort_layouts.reference.execute import output_values_all, verify_all


def random_bits(dtype: DataType, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    npt = dtype.to_numpy()
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * npt.itemsize, dtype=np.uint8)
    return raw.view(npt).reshape(shape)


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _split_model(count: int, elem: int, opset: int, *, axis: int | None = None,
                 split: list[int] | None = None, num_outputs: int | None = None) -> onnx.ModelProto:
    """A one-node Split model written with onnx.helper (the independent builder)."""
    outs = [f"o{k}" for k in range(count)]
    inputs, inits, node_attrs = ["x"], [], {}
    if axis is not None:
        node_attrs["axis"] = axis
    if split is not None and opset < 13:
        node_attrs["split"] = split
    elif split is not None:
        inputs.append("s")
        inits.append(numpy_helper.from_array(np.array(split, np.int64), "s"))
    if num_outputs is not None:
        node_attrs["num_outputs"] = num_outputs
    node = helper.make_node("Split", inputs, outs, **node_attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, None)],
                              [helper.make_tensor_value_info(o, elem, None) for o in outs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


# ---- descriptors -----------------------------------------------------------------------------
def test_the_worked_example_of_dml_operator_split() -> None:
    """DmlOperatorSplit on float [6,4,5], axis 0, split [2,4]: input {1,6,4,5}, outputs {1,2,4,5},
    {1,4,4,5}, Axis 1."""
    op = dml_operator(Case("Split", "float32", (6, 4, 5), axis=0, parts=(2, 4)))
    assert isinstance(op, SplitOp)
    assert op.input.sizes == (1, 6, 4, 5) and [d.sizes for d in op.outputs] == [(1, 2, 4, 5), (1, 4, 4, 5)]
    assert op.axis == 1 and op.output_count == 2
    assert all(d.strides is None for d in (op.input, *op.outputs))
    assert [d.total_tensor_size_in_bytes for d in (op.input, *op.outputs)] == [480, 160, 320]
    d = op.to_dict()
    assert d["operator"] == SPLIT == "DML_OPERATOR_SPLIT"
    assert d["OutputCount"] == 2 and d["Axis"] == 1 and d["InputTensor"]["sizes"] == [1, 6, 4, 5]
    assert [t["sizes"] for t in d["OutputTensors"]] == [[1, 2, 4, 5], [1, 4, 4, 5]]
    assert SplitOp.from_dict(d) == op


@pytest.mark.parametrize(("shape", "axis", "dml_axis"), [
    ((5,), None, 3), ((5,), -1, 3), ((4, 3), 1, 3), ((4, 3), -2, 2), ((2, 3, 4), 0, 1),
    ((2, 3, 4, 5, 2), 4, 4), ((2, 1, 2, 3, 1, 2, 1, 2), -8, 0),
], ids=["r1-default", "r1-neg", "r2", "r2-neg", "r3", "r5", "r8-neg"])
def test_axis_moves_with_the_right_aligned_padding(shape: tuple[int, ...], axis: int | None,
                                                   dml_axis: int) -> None:
    a = (axis or 0) % len(shape)
    op = dml_operator(Case("Split", "uint16", shape, axis=axis, parts=(shape[a],)))
    assert op.axis == dml_axis and op.input.dimension_count == max(4, len(shape))


@pytest.mark.parametrize(("dim", "count", "split", "num_outputs", "want"), [
    (7, 3, None, 3, (3, 3, 1)),
    (10, 4, None, 4, (3, 3, 3, 1)),
    (6, 4, None, 4, (2, 2, 2, 0)),  # SplitHelper: the last chunk may be 0
    (6, 3, None, None, (2, 2, 2)),
    (6, 2, (1, 5), None, (1, 5)),
], ids=["ceil-7-3", "ceil-10-4", "last-zero", "even", "explicit"])
def test_split_sizes_as_split_helper_and_onnx_reference(
        dim: int, count: int, split: tuple[int, ...] | None, num_outputs: int | None,
        want: tuple[int, ...]) -> None:
    assert split_sizes(dim, count, split, num_outputs) == want
    model = _split_model(count, TensorProto.FLOAT, 18, split=list(split) if split else None,
                         num_outputs=num_outputs)
    if split is None and num_outputs is None:
        model = _split_model(count, TensorProto.FLOAT, 13)
    outs = ReferenceEvaluator(model).run(None, {"x": np.zeros((dim, 2), np.float32)})
    assert tuple(o.shape[0] for o in outs) == want


@pytest.mark.parametrize(("args", "match"), [
    ((5, 4, None, 4), "leave -1"),  # SplitHelper would make the last chunk -1
    ((7, 2, None, None), "does not divide"),
    ((6, 2, (2, 3), None), "adding up to 6"),
    ((6, 2, (2, 4), 2), "both"),
], ids=["negative-last", "uneven-without-num-outputs", "bad-sum", "both"])
def test_split_sizes_refuses(args: tuple[object, ...], match: str) -> None:
    with pytest.raises(ShapeError, match=match):
        split_sizes(*args)  # type: ignore[arg-type]


def test_an_empty_output_writes_nothing_at_all() -> None:
    """Any empty output: no SPLIT (SetDmlOperatorDesc), no dispatch (ExecuteOperator), no output
    written."""
    with pytest.raises(NotExpressibleError, match="no output is written, the non-empty ones included"):
        SplitOp.from_onnx("float32", (6, 4), (2, 0, 4), 0)
    for case in (Case("Split", "float32", (6, 4), parts=(2, 0, 4)),
                 Case("Split", "float32", (6, 4), num_outputs=4)):  # chunks 2, 2, 2, 0
        reason = operator_for_type("Split").inexpressible_reason(case)
        assert "none of the outputs is written, the non-empty ones included" in reason
        x = make_input(case)
        got = expected_outputs(case, x)  # other EPs: numpy's split
        assert [g.shape[0] for g in got] == list(split_sizes(6, len(got), case.parts, case.num_outputs))
        assert bits(np.concatenate(got)) == bits(x)
    assert not any(0 in (c.parts or ()) or 0 in split_sizes(c.shape[(c.axis or 0) % c.rank],
                                                            len(output_shapes(c)), c.parts, c.num_outputs)
                   for c in standard_suite(ops=["Split"]))


def test_split_validation_names_the_bad_tensor() -> None:
    inp = BufferTensorDesc("int8", (1, 1, 4, 6))
    with pytest.raises(ShapeError, match="add up to 5, not 6"):
        SplitOp(inp, (BufferTensorDesc("int8", (1, 1, 4, 2)), BufferTensorDesc("int8", (1, 1, 4, 3))), 3)
    with pytest.raises(ShapeError, match=r"output 0 sizes .* at axis 2"):
        SplitOp(inp, (BufferTensorDesc("int8", (1, 1, 3, 6)),), 3)


@pytest.mark.parametrize("bad", [
    {}, {"parts": (2, 2), "num_outputs": 2}, {"parts": (2, 3)}, {"num_outputs": 0},
    {"num_outputs": 4, "axis": 1}, {"parts": (4,), "axis": 2}, {"num_outputs": 3, "opset": 13},
], ids=["neither", "both", "bad-sum", "zero-outputs", "negative-chunk", "axis-high", "uneven-before-18"])
def test_bad_cases_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ShapeError):
        Case("Split", "float32", (4, 5), **bad)  # type: ignore[arg-type]


def test_several_outputs_have_no_single_output_shape() -> None:
    case = Case("Split", "float32", (4, 5), parts=(1, 3))
    assert output_shapes(case) == [(1, 5), (3, 5)]
    with pytest.raises(ShapeError, match="2 outputs"):
        output_shape(case)
    with pytest.raises(ShapeError, match="expected_outputs"):
        expected_output(case, make_input(case))


# ---- DirectML's documentation: SPLIT is JOIN's inverse ------------------------------------------
def test_split_inverts_the_directml_join_example() -> None:
    """DML_JOIN_OPERATOR_DESC example 1 read backwards: {1,1,2,7} split on axis 3 into {1,1,2,3}
    and {1,1,2,4} gives back the two inputs (DML_SPLIT_OPERATOR_DESC: the inverse of JOIN)."""
    whole = np.array([[[[1, 2, 3, 7, 8, 9, 10], [4, 5, 6, 11, 12, 13, 14]]]], np.float32)
    op = SplitOp(BufferTensorDesc("float32", (1, 1, 2, 7)),
                 (BufferTensorDesc("float32", (1, 1, 2, 3)), BufferTensorDesc("float32", (1, 1, 2, 4))), 3)
    a, b = output_values_all(op, [whole])
    assert a.tolist() == [[[[1, 2, 3], [4, 5, 6]]]] and b.tolist() == [[[[7, 8, 9, 10], [11, 12, 13, 14]]]]


# ---- the executor against numpy and onnx.reference ---------------------------------------------
def test_executor_matches_numpy_and_onnx_reference_on_random_shapes() -> None:
    """A seeded property loop: rank 1-8, any axis (negative too, or the default), 1-4 parts of
    random sizes or num_outputs, every suite data type with random bits; the SPLIT the EP builds,
    run from its descriptors alone, gives numpy.split's bytes, and onnx.reference's on every
    fifth."""
    rng = np.random.default_rng(987)
    dtypes = list(SUITE_DTYPES)
    checked: Counter[object] = Counter()
    for trial in range(250):
        rank = int(rng.integers(1, 9))
        shape = [int(n) for n in rng.integers(1, 4, size=rank)]
        axis = None if trial % 9 == 0 else int(rng.integers(-rank, rank))
        a = (axis or 0) % rank
        if trial % 4 == 0:
            n = int(rng.integers(1, 5))
            shape[a] = int(rng.integers(n, 3 * n + 1))
            chunk = -(-shape[a] // n)
            if shape[a] - (n - 1) * chunk <= 0:  # an empty or negative last chunk: no valid case
                continue
            case = Case("Split", dtypes[trial % len(dtypes)], tuple(shape), axis=axis, num_outputs=n)
        else:
            parts = tuple(int(p) for p in rng.integers(1, 5, size=int(rng.integers(1, 5))))
            shape[a] = sum(parts)
            case = Case("Split", dtypes[trial % len(dtypes)], tuple(shape), axis=axis, parts=parts)
        x = random_bits(case.data_type, case.shape, rng)
        sizes = [s[a] for s in output_shapes(case)]
        want = np.split(x, list(np.cumsum(sizes))[:-1], axis=a)
        got = expected_outputs(case, x)
        assert [g.shape for g in got] == [w.shape for w in want], case.id
        assert all(bits(g) == bits(w) for g, w in zip(got, want, strict=True)), case.id
        assert all(c.passed for c in verify_all(dml_operator(case), [x], want))
        if trial % 5 == 0:
            model = _split_model(len(sizes), case.data_type.to_onnx(), 18, axis=axis,
                                 split=list(case.parts) if case.parts else None, num_outputs=case.num_outputs)
            ref = ReferenceEvaluator(model).run(None, {"x": x})
            assert [bits(r) for r in ref] == [bits(g) for g in got], case.id
            checked["onnx"] += 1
        checked[rank] += 1
    assert checked["onnx"] >= 40 and all(checked[r] >= 10 for r in range(1, 9))


def test_verify_all_finds_a_flipped_bit_in_the_right_output() -> None:
    case = Case("Split", "int16", (5, 3), parts=(2, 3))
    x = make_input(case)
    want = reference_outputs(case, x)
    bad = [w.copy() for w in want]
    bad[1].view(np.uint16)[2, 1] ^= 0x100
    first, second = verify_all(dml_operator(case), [x], bad)
    assert first.passed and not second.passed and second.first_mismatch_index == (2, 1)


# ---- graphs, opsets and the suite on the CPU EP ------------------------------------------------
@pytest.mark.parametrize(("opset", "case", "inputs", "node_attrs"), [
    (2, Case("Split", "float32", (5, 4), axis=0, parts=(2, 3)), ["x0"], {"axis": 0, "split": [2, 3]}),
    (11, Case("Split", "float32", (5, 4), axis=-2, parts=(2, 3)), ["x0"], {"axis": -2, "split": [2, 3]}),
    (13, Case("Split", "float32", (5, 4), axis=0, parts=(2, 3)), ["x0", "split0"], {"axis": 0}),
    (13, Case("Split", "float32", (6, 4), num_outputs=3), ["x0"], {}),
    (18, Case("Split", "float32", (5, 4), parts=(2, 3)), ["x0", "split0"], {}),
    (18, Case("Split", "float32", (7, 4), num_outputs=3), ["x0"], {"num_outputs": 3}),
], ids=["op2-attr", "op11-neg", "op13-input", "op13-even", "op18-input", "op18-num-outputs"])
def test_graph_at_each_opset_runs_like_numpy(opset: int, case: Case, inputs: list[str],
                                             node_attrs: dict[str, object]) -> None:
    import onnxruntime as ort

    model = build_model([case], opset=opset)
    onnx.checker.check_model(model, full_check=True)
    node = model.graph.node[0]
    count = len(output_shapes(case))
    assert list(node.input) == inputs and list(node.output) == ["y0"] + [f"y0_{k}" for k in range(1, count)]
    assert {a.name: helper.get_attribute_value(a) for a in node.attribute} == node_attrs
    assert [o.name for o in model.graph.output] == list(node.output)
    x = make_input(case)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    got = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(
        None, {"x0": x})
    a = (case.axis or 0) % case.rank
    sizes = [s[a] for s in output_shapes(case)]
    want = np.split(x, list(np.cumsum(sizes))[:-1], axis=a)
    assert [bits(g) for g in got] == [bits(w) for w in want]


def test_uneven_chunks_need_opset_18() -> None:
    with pytest.raises(ModelError, match="need num_outputs"):
        build_model([Case("Split", "float32", (7, 4), num_outputs=3)], opset=17)
    with pytest.raises(ModelError, match="negative Split axis needs opset >= 11"):
        build_model([Case("Split", "float32", (5, 4), axis=-1, parts=(1, 3))], opset=10)


def test_standard_suite_covers_and_passes_on_cpu() -> None:
    cases = [c for c in standard_suite(ops=["Split"]) if not is_edge(c)]  # rank 0, empty: test_edge_tensors
    assert len({c.id for c in cases}) == len(cases)
    assert {c.rank for c in cases} == set(range(1, 9))
    assert {len(output_shapes(c)) for c in cases} == {1, 2, 3, 4}
    assert {c.data_type for c in cases} == set(SUITE_DTYPES)
    assert {c.opset for c in cases} == {None, 2, 11, 13, 18}
    assert any(c.axis is not None and c.axis < 0 for c in cases) and any(c.axis is None for c in cases)
    uneven_chunks = [c for c in cases
                     if c.parts is None and c.shape[(c.axis or 0) % c.rank] % (c.num_outputs or 1)]
    assert uneven_chunks and {c.opset for c in uneven_chunks} == {None, 18}
    assert {c.values for c in cases} == {"random", "special", "iota"}
    results = run_cases(cases, provider="cpu")
    bad = [(r.case.id, r.status.value, r.message) for r in results if r.status is not Status.PASS]
    assert not bad
    for r in results:
        assert r.descriptors["operator"] == SPLIT
        assert r.element_count == int(np.prod(r.case.shape))  # every output compared


def test_ids_are_stable() -> None:
    case = Case("Split", "int8", (7, 2), num_outputs=3, opset=18, seed=1)
    assert case.id == "Split-int8-7x2-n3-op18-random-s1"
    case = Case("Split", "int8", (3, 4), axis=-1, parts=(1, 3))
    assert case.id == "Split-int8-3x4-axism1-parts1.3-random-s0"


def test_a_mismatch_names_its_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """One wrong bit in output 2 of 3: the mismatch counts every output's elements, points at
    output 2's element and its buffer offsets, and the message names the output."""
    case = Case("Split", "float32", (2, 7), axis=1, parts=(2, 2, 3), seed=5)
    real = _runner.expected_outputs

    def flipped(c: Case, x: np.ndarray, **kwargs: object) -> list[np.ndarray]:
        out = [o.copy() for o in real(c, x, **kwargs)]  # type: ignore[arg-type]
        out[2].view(np.uint32)[1, 2] ^= 1
        return out

    monkeypatch.setattr(_runner, "expected_outputs", flipped)
    (r,) = run_cases([case], provider="cpu")
    assert r.status is Status.MISMATCH and r.mismatch_count == 1 and r.element_count == 14
    assert r.message.startswith("output 2 of 3 [2, 3]: 1 of 6 elements differ; first at [1, 2]"), r.message
    assert r.first_mismatch_index == (1, 2)
    # output 2, element [1, 2] reads input [1, 2 + 4] (packed offset 13); in its own [1,1,2,3] buffer: 5
    assert (r.input_offset_in_elements, r.output_offset_in_elements) == (13, 5)
    x = make_input(case)
    assert r.actual_hex == x[1, 6:7].astype("<f4").tobytes().hex()


# ---- diagnosis ----------------------------------------------------------------------------------
def _split_case(shape: tuple[int, ...], axis: int, parts: tuple[int, ...]) -> tuple[Case, np.ndarray]:
    case = Case("Split", "float32", shape, axis=axis, parts=parts)
    x = np.random.default_rng(11).permutation(int(np.prod(shape))).astype(np.float32).reshape(shape) + 0.5
    return case, x


def _pieces(flat: np.ndarray, shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    edges = list(np.cumsum([int(np.prod(s)) for s in shapes]))[:-1]
    return [p.reshape(s) for p, s in zip(np.split(flat, edges), shapes, strict=True)]


def test_input_cut_into_consecutive_pieces_is_named_as_the_unadjusted_axis() -> None:
    case, x = _split_case((3, 5), 1, (2, 3))
    actual = _pieces(x.reshape(-1), output_shapes(case))
    text = diagnose(case, x, actual)
    assert text.startswith("output matches the input buffer cut into consecutive pieces of [6, 9]"), text
    assert "ONNX axis 1 not adjusted for the padding to 4-D" in text


def test_outputs_in_the_wrong_order_are_named() -> None:
    case, x = _split_case((2, 6), 1, (1, 2, 3))
    a, b, c = np.split(x, [1, 3], axis=1)
    # the EP cut the parts in the order 2, 1, 0: output 0 from column 5, output 1 from 3, output 2 from 0
    actual = [x[:, 5:6], x[:, 3:5], x[:, 0:3]]
    text = diagnose(case, x, actual)
    assert text.startswith("output matches the outputs cut in the order [2, 1, 0]"), text
    assert "offsets [5, 3, 0] along DML axis 3 instead of [0, 1, 3]" in text
    assert diagnose(case, x, [a, b, c]) == ""


def test_a_split_offset_off_by_one_part_is_named() -> None:
    case, x = _split_case((6, 2, 3), 0, (2, 1, 3))
    # each output read one part too far: output 0 from row 2, output 1 from row 3, output 2 from row 6
    # (past the end of the input: unknown there)
    actual = [x[2:4], x[3:4], np.concatenate([np.full((3, 2, 3), -7, np.float32)])]
    text = diagnose(case, x, actual)
    assert "each output read one part too far" in text, text
    assert "offsets [2, 3, 6] along DML axis 1 instead of [0, 2, 3]" in text
    assert "on the 18 of 36 elements it reads inside the input buffer" in text
    actual = [x[0:2], x[0:1], x[2:5]]  # one part too early: output k from output k-1's offset
    assert "each output read one part too early" in diagnose(case, x, actual)


def test_nothing_written_is_named_for_several_outputs() -> None:
    case, x = _split_case((3, 5), 1, (2, 3))
    text = diagnose(case, x, [np.zeros((3, 2), np.float32), np.zeros((3, 3), np.float32)])
    assert "all zeros" in text


# ---- real models ---------------------------------------------------------------------------------
def _model(opset: int, shape: list[int], outputs: int, **kw: object) -> onnx.ModelProto:
    model = _split_model(outputs, TensorProto.INT32, opset, **kw)  # type: ignore[arg-type]
    model.graph.input[0].CopyFrom(helper.make_tensor_value_info("x", TensorProto.INT32, shape))
    model.graph.node[0].name = "sp"
    return model


def test_extract_describes_a_split_and_makes_its_case() -> None:
    for model, want in ((_model(13, [4, 6], 2, axis=1, split=[2, 4]), (2, 4)),
                        (_model(11, [4, 6], 2, axis=-1, split=[2, 4]), (2, 4)),
                        (_model(18, [4, 7], 3, axis=1, num_outputs=3), (3, 3, 1))):
        (op,) = extract(model)
        assert op.op_type == "Split" and not op.flags, op.flags
        assert op.dml_operator is not None and op.dml_operator["operator"] == SPLIT
        assert op.dml_operator["Axis"] == 3 and op.dml_operator["OutputCount"] == len(want)
        assert op.params["parts"] == want and op.output_shape == (4, want[0])
        assert op.descriptors["input"].sizes == (1, 1, 4, sum(want))
        assert op.descriptors[f"output_{len(want) - 1}"].sizes == (1, 1, 4, want[-1])
        (case,) = model_cases(model)
        assert case.op == "Split" and output_shapes(case) == [(4, p) for p in want]
        (r,) = run_cases([case], provider="cpu")
        assert r.passed, r.message


def test_extract_says_an_empty_output_writes_nothing() -> None:
    (op,) = extract(_model(13, [4, 6], 3, axis=1, split=[2, 0, 4]))
    assert op.dml_operator is None
    assert any(f.startswith("empty-output:") and "no output is written" in f for f in op.flags), op.flags


def test_extract_flags_a_split_18_with_neither_split_nor_num_outputs() -> None:
    (op,) = extract(_model(18, [4, 6], 2, axis=0))
    assert op.dml_operator is None and op.output_shape == (2, 6)
    assert any(f.startswith("split: a Split-18 needs the split input or the num_outputs") for f in op.flags)
    assert model_cases(_model(18, [4, 6], 2, axis=0)) == []


def test_empty_outputs_run_on_cpu() -> None:
    """A Split with an empty part is compared with numpy's split (what DirectML does with it is
    tests/engine/dml/test_dml_provider.py's)."""
    case = Case("Split", "float32", (6, 4), parts=(2, 0, 4), seed=2)
    (r,) = run_cases([case], provider="cpu")
    assert r.passed and r.element_count == 24 and r.descriptors == {}


def test_a_negative_axis_at_an_opset_before_11_is_refused_when_the_case_is_made() -> None:
    with pytest.raises(ShapeError, match=r"^a negative Split axis needs opset >= 11, got 2; valid: axis 1 "):
        Case("Split", "float32", (2, 6), axis=-1, parts=(1, 5), opset=2)
    assert Case("Split", "float32", (2, 6), axis=1, parts=(1, 5), opset=2).axis == 1


def test_empty_parts_are_refused_saying_so() -> None:
    """The sizes' check ran first and said "must be 0 sizes ... adding up to 3": what was given."""
    with pytest.raises(ShapeError) as info:
        Case("Split", "float32", (3, 4), parts=())
    assert str(info.value) == ("Split parts is empty; a Split has at least one output; valid: one or more "
                               "sizes >= 0 adding up to dimension 0 of [3, 4] (3)")
