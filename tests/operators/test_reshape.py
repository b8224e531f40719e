"""Reshape, Flatten, Squeeze, Unsqueeze and Identity: the DML EP's Copy kernel.

Descriptors are checked against hand-worked values (the input shape, packed, right-aligned to
4 dimensions, on both sides; DirectML's buffer size rule), outputs against numpy and ONNX's own
reference implementation, the suite on the CPU EP.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from typing import Any

import numpy as np
import onnx
import pytest
from numpy.lib.stride_tricks import as_strided
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ort_layouts import DataType, ModelError, ShapeError
from ort_layouts.engine.diagnose import diagnose
from ort_layouts.engine.graphs import build_model
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.engine.suite import SUITE_DTYPES, standard_suite
from ort_layouts.models.extract import extract
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import dml_operator, expected_output, output_shape, reference_output
from ort_layouts.operators.identity import IDENTITY, IdentityOp
from ort_layouts.operators.registry import CASE_OPS, operator_for_type
from ort_layouts.operators.values import make_input

OPS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity")


# ---- descriptors, worked by hand --------------------------------------------------------------
@pytest.mark.parametrize(("case", "sizes", "total_bytes"), [
    # the note's example: Reshape [2,3,4] -> [6,4], both descriptors [1,2,3,4], 96 bytes
    (Case("Reshape", DataType.FLOAT32, (2, 3, 4), target_shape=(6, 4)), (1, 2, 3, 4), 96),
    # 5 int16 = 10 bytes, rounded up to a multiple of 4
    (Case("Unsqueeze", DataType.INT16, (5,), axes=(0, 2)), (1, 1, 1, 5), 12),
    (Case("Flatten", DataType.UINT8, (2, 3, 2, 4, 3), axis=2), (2, 3, 2, 4, 3), 144),
    (Case("Squeeze", DataType.FLOAT64, (2, 1, 2, 3, 1, 2, 1, 2)), (2, 1, 2, 3, 1, 2, 1, 2), 48 * 8),
    (Case("Identity", DataType.FLOAT16, (3, 5)), (1, 1, 3, 5), 32),
    (Case("Unsqueeze", DataType.INT8, (), axes=(0,)), (1, 1, 1, 1), 4),  # a scalar
    (Case("Squeeze", DataType.UINT32, (1, 1, 1, 1, 7), axes=(0, 3)), (1, 1, 1, 1, 7), 28),
], ids=["reshape-note-example", "unsqueeze-rank1", "flatten-rank5", "squeeze-rank8", "identity-rank2",
        "unsqueeze-scalar", "squeeze-rank5"])
def test_both_descriptors_are_the_input_packed_at_least_4d(case: Case, sizes: tuple[int, ...],
                                                           total_bytes: int) -> None:
    op = dml_operator(case)
    assert isinstance(op, IdentityOp)
    for desc in (op.input, op.output):
        assert desc.data_type is case.data_type
        assert desc.sizes == sizes and desc.strides is None
        assert desc.total_tensor_size_in_bytes == total_bytes
    assert op.to_dict()["operator"] == IDENTITY == "DML_OPERATOR_ELEMENT_WISE_IDENTITY"


@pytest.mark.parametrize(("case", "shape"), [
    (Case("Reshape", DataType.FLOAT32, (2, 3, 4), target_shape=(4, 0, -1)), (4, 3, 2)),
    (Case("Reshape", DataType.FLOAT32, (2, 3, 4), target_shape=(0, 0, 0)), (2, 3, 4)),
    (Case("Reshape", DataType.FLOAT32, (2, 3, 4), target_shape=(-1,)), (24,)),
    (Case("Reshape", DataType.INT8, (2, 3, 4), target_shape=(4, 3, 2), mode="allowzero"), (4, 3, 2)),
    (Case("Flatten", DataType.FLOAT32, (2, 3, 4, 5)), (2, 60)),
    (Case("Flatten", DataType.FLOAT32, (2, 3, 4, 5), axis=0), (1, 120)),
    (Case("Flatten", DataType.FLOAT32, (2, 3, 4, 5), axis=4), (120, 1)),
    (Case("Flatten", DataType.FLOAT32, (2, 3, 4, 5), axis=-3), (2, 60)),
    (Case("Squeeze", DataType.FLOAT32, (1, 3, 1, 4)), (3, 4)),
    (Case("Squeeze", DataType.FLOAT32, (1, 3, 1, 4), axes=(-2,)), (1, 3, 4)),
    (Case("Squeeze", DataType.FLOAT32, (1,)), ()),
    (Case("Unsqueeze", DataType.FLOAT32, (3, 4), axes=(0, 3)), (1, 3, 4, 1)),
    (Case("Unsqueeze", DataType.FLOAT32, (3, 4), axes=(-1, 0)), (1, 3, 4, 1)),
    (Case("Unsqueeze", DataType.FLOAT32, (3, 4), axes=(1,)), (3, 1, 4)),
    (Case("Identity", DataType.FLOAT32, (3, 4)), (3, 4)),
])
def test_output_shape_by_hand(case: Case, shape: tuple[int, ...]) -> None:
    assert output_shape(case) == shape


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"op": "Reshape", "shape": (2, 3, 4), "target_shape": (-1, -1)}, "more than one -1"),
    ({"op": "Reshape", "shape": (2, 3, 4), "target_shape": (5, -1)}, "do not divide"),
    ({"op": "Reshape", "shape": (2, 3, 4), "target_shape": (2, 3, 5)}, "30 elements, the input has 24"),
    ({"op": "Reshape", "shape": (2, 3, 4), "target_shape": (1, 1, 1, 0)}, "valid: 0 at indices 0..2"),
    ({"op": "Reshape", "shape": (2, 3, 4), "target_shape": (-2, 12)}, "valid: -1, 0 or a positive"),
    ({"op": "Reshape", "shape": (2, 3, 4)}, "needs target_shape"),
    ({"op": "Reshape", "shape": (2, 3, 4), "target_shape": (24,), "mode": "allowzero", "opset": 13},
     "opset >= 14"),
    ({"op": "Reshape", "shape": (2, 3, 4), "target_shape": (24,), "opset": 4}, "opset >= 5"),
    ({"op": "Reshape", "shape": (2, 3, 4), "target_shape": (24,), "mode": "constant"}, "valid: ''"),
    ({"op": "Flatten", "shape": (2, 3), "axis": 3}, r"valid: -2\.\.2"),
    ({"op": "Flatten", "shape": (2, 3), "axes": (0,)}, r"takes \['axis'\], not \['axes'\]"),
    ({"op": "Flatten", "shape": (2, 3), "data_type": "int8", "opset": 7}, "float16/float32/float64"),
    ({"op": "Flatten", "shape": (2, 3), "axis": -1, "opset": 9}, "opset >= 11"),
    ({"op": "Squeeze", "shape": (1, 3), "axes": (1,)}, r"has size 3; valid: axes of size 1 \[0\]"),
    ({"op": "Squeeze", "shape": (1, 3), "axes": (0, -2)}, "twice"),
    ({"op": "Squeeze", "shape": (1, 3), "axes": ()}, "empty"),
    ({"op": "Squeeze", "shape": (1, 3), "axes": (2,)}, r"valid: -2\.\.1"),
    ({"op": "Unsqueeze", "shape": (3,)}, "needs axes"),
    ({"op": "Unsqueeze", "shape": (3,), "axes": (2,)}, r"valid: -2\.\.1"),
    ({"op": "Unsqueeze", "shape": (3,), "axes": (-1,), "opset": 7}, "opset >= 11"),
    ({"op": "Identity", "shape": (3,), "perm": (0,)}, "no parameters"),
])
def test_bad_cases_are_typed_errors_naming_the_valid_choices(kwargs: dict[str, Any], match: str) -> None:
    kwargs = {"data_type": "float32", **kwargs}
    with pytest.raises(ShapeError, match=match):
        Case(**kwargs)


def test_every_op_type_makes_cases() -> None:
    assert set(OPS) <= set(CASE_OPS)
    assert {id(operator_for_type(op)) for op in OPS} == {id(operator_for_type("Reshape"))}


# ---- outputs against numpy and ONNX's reference ----------------------------------------------
def _factor_regroup(shape: tuple[int, ...], rng: np.random.Generator) -> tuple[int, ...]:
    """A random shape with the same element count: the prime factors of ``shape`` shuffled
    and grouped."""
    factors = []
    for n in shape:
        d = 2
        while n > 1:
            while n % d == 0:
                factors.append(d)
                n //= d
            d += 1
    rng.shuffle(factors)
    groups = int(rng.integers(1, 6))
    out = [1] * groups
    for f in factors:
        out[int(rng.integers(groups))] *= f
    return tuple(out)


def _random_case(op: str, seed: int) -> Case:
    rng = np.random.default_rng([seed, OPS.index(op)])
    rank = int(rng.integers(1, 6))
    shape = tuple(int(n) for n in rng.integers(1, 5, size=rank))
    dtype = SUITE_DTYPES[int(rng.integers(len(SUITE_DTYPES)))]
    opset = int(rng.choice([7, 11, 13, 14, 21]))
    values = str(rng.choice(["random", "special", "iota"]))
    common: dict[str, Any] = {"values": values, "seed": seed, "opset": opset}
    if op == "Reshape":
        out = list(_factor_regroup(shape, rng))
        same = [i for i in range(min(len(out), rank)) if out[i] == shape[i]]
        if same and rng.random() < 0.6:
            out[int(rng.choice(same))] = 0
        if rng.random() < 0.6:
            out[int(rng.integers(len(out)))] = -1
        return Case(op, dtype, shape, target_shape=tuple(out), **common)
    if op == "Flatten":
        low = -rank if opset >= 11 else 0
        if opset < 9:
            dtype = DataType.FLOAT32
        return Case(op, dtype, shape, axis=int(rng.integers(low, rank + 1)), **common)
    if op == "Squeeze":
        ones = sorted(int(i) for i in rng.choice(rank + 2, size=2, replace=False))
        full = list(shape)
        for i in ones:
            full.insert(i, 1)
        picked = [i for i in range(len(full)) if full[i] == 1 and rng.random() < 0.7]
        axes = None if not picked else tuple(i - len(full) if opset >= 11 and rng.random() < 0.5 else i
                                             for i in rng.permutation(picked))
        if axes is not None and opset < 13:  # ONNX's reference applies attribute axes one by one
            axes = tuple(sorted(a % len(full) for a in axes))
        return Case(op, dtype, tuple(full), axes=axes, **common)
    if op == "Unsqueeze":
        k = int(rng.integers(1, 4))
        out_rank = rank + k
        axes = tuple(int(a) - (out_rank if opset >= 11 and rng.random() < 0.5 else 0)
                     for a in rng.choice(out_rank, size=k, replace=False))
        if opset < 13:  # ONNX's reference inserts attribute axes one by one
            axes = tuple(sorted(a % out_rank for a in axes))
        return Case(op, dtype, shape, axes=axes, **common)
    return Case(op, dtype, shape, **common)


def _onnx_reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    (out,) = ReferenceEvaluator(model).run(None, feeds)
    return np.asarray(out)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("op", OPS)
def test_output_matches_numpy_and_onnx_reference(op: str, seed: int) -> None:
    """The reference executor on the EP's descriptors, the numpy reading, and ONNX's reference
    implementation running the very node add_node writes (at the case's opset) agree bit for bit."""
    case = _random_case(op, seed)
    x = make_input(case)
    model = build_model([case])
    onnx.checker.check_model(model)
    onnx_out = _onnx_reference(model, {"x0": x})
    got = expected_output(case, x)
    numpy_out = reference_output(case, x)
    assert got.shape == numpy_out.shape == onnx_out.shape == output_shape(case)
    assert got.dtype == onnx_out.dtype == x.dtype
    assert got.tobytes() == numpy_out.tobytes() == onnx_out.tobytes() == x.tobytes()


@pytest.mark.parametrize(("case", "attribute", "inputs"), [
    (Case("Squeeze", DataType.FLOAT32, (1, 3, 1), axes=(0, 2), opset=7), {"axes": [0, 2]}, 1),
    (Case("Squeeze", DataType.FLOAT32, (1, 3, 1), axes=(0, 2), opset=13), {}, 2),
    (Case("Squeeze", DataType.FLOAT32, (1, 3, 1), opset=13), {}, 1),
    (Case("Unsqueeze", DataType.FLOAT32, (3,), axes=(-1,), opset=11), {"axes": [-1]}, 1),
    (Case("Unsqueeze", DataType.FLOAT32, (3,), axes=(-1,), opset=21), {}, 2),
    (Case("Flatten", DataType.FLOAT32, (2, 3)), {}, 1),
    (Case("Flatten", DataType.FLOAT32, (2, 3), axis=-1), {"axis": -1}, 1),
    (Case("Reshape", DataType.FLOAT32, (2, 3), target_shape=(3, -1), opset=5), {}, 2),
    (Case("Reshape", DataType.FLOAT32, (2, 3), target_shape=(3, -1), mode="allowzero", opset=14),
     {"allowzero": 1}, 2),
    (Case("Identity", DataType.FLOAT32, (2, 3), opset=7), {}, 1),
], ids=["squeeze-attr", "squeeze-input", "squeeze-all", "unsqueeze-attr", "unsqueeze-input",
        "flatten-default", "flatten-axis", "reshape5", "reshape-allowzero", "identity"])
def test_nodes_by_opset(case: Case, attribute: dict[str, Any], inputs: int) -> None:
    model = build_model([case])
    (node,) = model.graph.node
    assert node.name == f"n0_{case.op}" and len(node.input) == inputs
    assert {a.name: helper.get_attribute_value(a) for a in node.attribute} == attribute
    inits = {t.name: numpy_helper.to_array(t).tolist() for t in model.graph.initializer}
    if case.op == "Reshape":
        assert inits == {"shape0": list(case.target_shape or ())} and node.input[1] == "shape0"
    elif inputs == 2:
        assert inits == {"axes0": list(case.axes or ())} and node.input[1] == "axes0"
    else:
        assert inits == {}


def test_opset_features_rejected_when_building() -> None:
    with pytest.raises(ModelError, match="opset >= 14"):
        build_model([Case("Reshape", DataType.FLOAT32, (2, 3), target_shape=(6,), mode="allowzero")],
                    opset=13)
    with pytest.raises(ModelError, match="opset >= 5"):
        build_model([Case("Reshape", DataType.FLOAT32, (2, 3), target_shape=(6,))], opset=4)


def test_rank_over_8_is_inexpressible_and_checked_with_numpy() -> None:
    case = Case("Unsqueeze", DataType.INT16, (2, 1, 2, 3, 1, 2, 1, 2), axes=(0,))
    reason = operator_for_type("Unsqueeze").inexpressible_reason(case)
    assert "9 dimensions" in reason and "at most 8" in reason
    (result,) = run_cases([case], provider="cpu")
    assert result.status is Status.PASS, result.message
    x = make_input(case)
    assert expected_output(case, x).tobytes() == x.tobytes()


# ---- a model node without a DML kernel ------------------------------------------------------
def test_transpose_pad_and_reshape_nodes_flag_a_missing_kernel_alike() -> None:
    """The three operators' model nodes at opset 23 carry one no-kernel flag each, worded alike
    but for the op type and its registered versions."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
             helper.make_node("Pad", ["x", "p"], ["q"]),
             helper.make_node("Reshape", ["x", "s"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 3))],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("t", "q", "y")],
        [_ints("p", [0, 1, 1, 0]), _ints("s", [3, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)
    ops = extract(model)
    assert [o.op_type for o in ops] == ["Transpose", "Pad", "Reshape"]
    texts = []
    for o in ops:
        (flag,) = [f for f in o.flags if f.startswith("no-kernel")]
        texts.append(re.sub(r"\[[0-9, ]+\]", "[...]", flag.replace(o.op_type, "OP")))
    assert texts[0] == texts[1] == texts[2]
    assert texts[0].startswith("no-kernel: opset 23 resolves to OP-23, and the DML EP registers OP ")
    assert texts[0].endswith("; ONNX Runtime runs the node on the CPU EP")


# ---- the suite ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def suite() -> list[Case]:
    return standard_suite(ops=OPS)


def test_suite_is_modest_unique_and_covers_types_ranks_opsets(suite: list[Case]) -> None:
    assert 200 <= len(suite) <= 600
    assert len({c.id for c in suite}) == len(suite)
    assert [c.id for c in standard_suite(ops=OPS)] == [c.id for c in suite]
    assert set(Counter(c.op for c in suite)) == set(OPS)
    for op in OPS:
        mine = [c for c in suite if c.op == op]
        assert {c.data_type for c in mine} == set(SUITE_DTYPES), op
        assert {c.data_type for c in mine if c.values == "special"} == set(SUITE_DTYPES), op
        assert any(c.values == "iota" for c in mine), op
        top = 7 if op == "Unsqueeze" else 8
        assert {c.rank for c in mine} >= set(range(1, top + 1)), op
        assert {23, 24} <= {c.opset for c in mine}, op
    assert {c.opset for c in suite if c.op == "Reshape"} >= {5, 13, 14, 19, 21}
    assert any(c.mode == "allowzero" for c in suite)
    assert {c.opset for c in suite if c.op == "Squeeze"} >= {7, 11, 13, 21}


def test_suite_ids_are_readable(suite: list[Case]) -> None:
    ids = {c.id.rsplit("-s", 1)[0] for c in suite}
    assert "Reshape-float32-2x3x4-to4x0xm1-op5-random" in ids
    assert "Flatten-float32-2x3x4-axism1-op11-random" in ids
    assert "Squeeze-float32-2x1x3x1-axesm1.1-op13-random" in ids
    assert "Unsqueeze-float32-3x4-axes0.3-op7-random" in ids
    assert "Identity-float32-2x3x4-op16-random" in ids


def test_suite_passes_on_cpu(suite: list[Case]) -> None:
    results = run_cases(suite, provider="cpu")
    bad = [(r.case.id, r.status.value, r.message) for r in results if r.status is not Status.PASS]
    assert bad == []
    assert all(r.element_count == math.prod(r.case.shape) for r in results)


# ---- diagnosis ------------------------------------------------------------------------------
def test_diagnosis_names_the_input_strides() -> None:
    """Flatten [2,3,4] axis 1 -> [2,12] read as a view with the input's last strides [4, 1]."""
    case = Case("Flatten", DataType.FLOAT32, (2, 3, 4), axis=1)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) + 0.5
    actual = np.ascontiguousarray(as_strided(x, shape=(2, 12), strides=(16, 4)))
    text = diagnose(case, x, actual)
    assert "output's sizes [2, 12] read with the input's strides [4, 1]" in text


@pytest.mark.parametrize(("dtype", "shift", "words"), [
    ("float32", 4, "4 bytes after"), ("int64", -8, "8 bytes before"), ("uint8", 16, "16 bytes after"),
])
def test_diagnosis_names_a_byte_offset(dtype: str, shift: int, words: str) -> None:
    case = Case("Reshape", DataType.coerce(dtype), (4, 6), target_shape=(3, 8))
    x = np.arange(1, 25).astype(dtype).reshape(4, 6)
    raw = x.tobytes()
    moved = raw[shift:] + bytes(shift) if shift > 0 else bytes(-shift) + raw[:shift]
    actual = np.frombuffer(moved, dtype=dtype).reshape(3, 8)
    text = diagnose(case, x, actual)
    assert words in text and "elements it reads inside the input buffer" in text


def test_right_output_has_no_diagnosis() -> None:
    case = Case("Unsqueeze", DataType.FLOAT16, (3, 4), axes=(0,))
    x = make_input(case)
    assert diagnose(case, x, x.reshape(1, 3, 4)) == ""


# ---- real models ----------------------------------------------------------------------------
def _model(node: onnx.NodeProto, shape: tuple[int, ...], inits: list[onnx.TensorProto], opset: int,
           extra_inputs: list[onnx.ValueInfoProto] | None = None) -> onnx.ModelProto:
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
                                            *(extra_inputs or [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _ints(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


@pytest.mark.parametrize(("node", "shape", "inits", "opset", "want"), [
    (helper.make_node("Reshape", ["x", "s"], ["y"]), (2, 3, 4), [_ints("s", [4, 0, -1])], 14,
     Case("Reshape", DataType.FLOAT32, (2, 3, 4), target_shape=(4, 0, -1))),
    (helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1), (2, 3, 4), [_ints("s", [4, 3, 2])], 14,
     Case("Reshape", DataType.FLOAT32, (2, 3, 4), target_shape=(4, 3, 2), mode="allowzero")),
    (helper.make_node("Flatten", ["x"], ["y"], axis=-2), (2, 3, 4), [], 13,
     Case("Flatten", DataType.FLOAT32, (2, 3, 4), axis=-2)),
    (helper.make_node("Squeeze", ["x"], ["y"], axes=[0]), (1, 3, 1), [], 11,
     Case("Squeeze", DataType.FLOAT32, (1, 3, 1), axes=(0,))),
    (helper.make_node("Squeeze", ["x"], ["y"]), (1, 3, 1), [], 13,
     Case("Squeeze", DataType.FLOAT32, (1, 3, 1))),
    (helper.make_node("Unsqueeze", ["x", "a"], ["y"]), (3, 4), [_ints("a", [-1, 0])], 13,
     Case("Unsqueeze", DataType.FLOAT32, (3, 4), axes=(-1, 0))),
    (helper.make_node("Identity", ["x"], ["y"]), (3, 4), [], 21, Case("Identity", DataType.FLOAT32, (3, 4))),
], ids=["reshape", "reshape-allowzero", "flatten", "squeeze-attr", "squeeze-all", "unsqueeze", "identity"])
def test_extract_describes_and_makes_cases(node: onnx.NodeProto, shape: tuple[int, ...],
                                           inits: list[onnx.TensorProto], opset: int, want: Case) -> None:
    model = _model(node, shape, inits, opset)
    (op,) = extract(model)
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    expected = _onnx_reference(model, {"x": x})
    assert op.output_shape == expected.shape and not op.flags
    padded = (1,) * max(0, 4 - len(shape)) + shape
    assert op.descriptors["input"].sizes == op.descriptors["output"].sizes == padded
    assert op.descriptors["input"].strides is None
    assert op.dml_operator is not None and op.dml_operator["alias"] is True
    case = op.to_case()
    assert case is not None
    assert case == dataclasses.replace(want, opset=opset, origin=case.origin)  # at the model's opset
    assert case.id == dataclasses.replace(want, opset=opset).id and f"-op{opset}-" in case.id
    assert expected_output(case, x).tobytes() == expected.tobytes()


def test_runtime_axes_take_the_inferred_shape() -> None:
    node = helper.make_node("Squeeze", ["x", "a"], ["y"])
    model = _model(node, (1, 3, 1), [], 13, [helper.make_tensor_value_info("a", TensorProto.INT64, (1,))])
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, (3, 1)))
    (op,) = extract(model)
    assert any(f.startswith("runtime-input:") for f in op.flags)
    assert op.output_shape == (3, 1) and op.params["axes"] == (0,)
    case = op.to_case()
    assert case is not None and case.axes == (0,) and output_shape(case) == (3, 1)


def test_runtime_shape_without_inferred_output_makes_no_case() -> None:
    node = helper.make_node("Reshape", ["x", "s"], ["y"])
    model = _model(node, (2, 3), [], 14, [helper.make_tensor_value_info("s", TensorProto.INT64, (2,))])
    (op,) = extract(model)
    assert op.to_case() is None and any(f.startswith("runtime-input:") for f in op.flags)


def test_extract_flags_opsets_without_a_dml_kernel_and_allowzero_minus_one() -> None:
    (op,) = extract(_model(helper.make_node("Identity", ["x"], ["y"]), (3,), [], 23))
    assert any(f.startswith("no-kernel:") and "Identity-23" in f for f in op.flags)
    node = helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)
    (op,) = extract(_model(node, (2, 3), [_ints("s", [3, -1])], 14))
    assert op.output_shape == (3, 2)
    assert any(f.startswith("allowzero-infer:") for f in op.flags)


def test_an_allowzero_reshape_with_a_minus_one_is_no_directml_operator() -> None:
    """Under allowzero the DML EP's ReshapeHelper infers no -1 and the kernel's creation fails:
    DirectML 1.15.4 (ONNX Runtime 1.24.4's DML EP, lavapipe) refused the session of each such
    case of the suite. The CPU EP runs it, against numpy's reshape."""
    from ort_layouts import NotExpressibleError, dml_operator
    from ort_layouts.operators.registry import operator_for_type

    case = Case("Reshape", "float32", (2, 3, 4), target_shape=(4, -1, 2), mode="allowzero", opset=14)
    reason = operator_for_type("Reshape").inexpressible_reason(case)
    assert reason.startswith("an allowzero Reshape to [4, -1, 2] with a -1: ")
    with pytest.raises(NotExpressibleError, match=re.escape(reason)):
        dml_operator(case)
    (result,) = run_cases([case], provider="cpu")
    assert result.status is Status.PASS, result.message
    plain = Case("Reshape", "float32", (2, 3, 4), target_shape=(4, -1, 2), opset=14)
    assert operator_for_type("Reshape").inexpressible_reason(plain) == ""
    assert dml_operator(plain).output.sizes == (1, 2, 3, 4)  # the input's, packed, at least 4D


def test_a_squeeze_axis_of_another_size_is_named_as_given() -> None:
    with pytest.raises(ShapeError) as info:
        Case("Squeeze", "float32", (2, 3), axes=(-2,))
    assert str(info.value) == "Squeeze axis -2 (axis 0) of [2, 3] has size 2; valid: axes of size 1 []"
