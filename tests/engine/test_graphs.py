"""Graph builders: naming contract, initializers, opsets, and results checked against numpy."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ort_layouts._errors import ModelError, ShapeError
from ort_layouts.engine.graphs import build_model, default_ir_version, default_opset
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import output_shape


def _run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def test_default_ir_version_loads_and_next_does_not() -> None:
    ir = default_ir_version()
    assert 7 <= ir <= onnx.IR_VERSION
    case = Case("Transpose", "float32", (2, 3))
    _run(build_model([case]), {"x0": np.zeros((2, 3), np.float32)})  # loads
    if ir < onnx.IR_VERSION:  # the next IR version is refused, or the probe would have taken it
        with pytest.raises(Exception, match=r"(?i)ir|version"):
            _run(build_model([case], ir_version=ir + 1), {"x0": np.zeros((2, 3), np.float32)})


def test_default_opset_is_known_to_onnx_and_loads() -> None:
    opset = default_opset()
    assert 13 <= opset <= onnx.defs.onnx_opset_version()
    model = build_model([Case("Pad", "float32", (2, 3), pads=(1, 1, 1, 1), mode="wrap")])
    assert model.opset_import[0].version == opset


def test_naming_contract_and_initializers() -> None:
    cases = [Case("Transpose", "float16", (2, 3, 4), perm=(2, 0, 1)),
             Case("Expand", "int64", (3, 1), target_shape=(2, 3, 4)),
             Case("Pad", "uint8", (3, 4), pads=(1, 0, 0, 2), mode="constant", pad_value_hex="07",
                  axes=(0, 1))]
    model = build_model(cases)
    g = model.graph
    assert [i.name for i in g.input] == ["x0", "x1", "x2"]
    assert [o.name for o in g.output] == ["y0", "y1", "y2"]
    assert [n.name for n in g.node] == ["n0_Transpose", "n1_Expand", "n2_Pad"]
    inits = {t.name for t in g.initializer}
    assert inits == {"shape1", "pads2", "value2", "axes2"}
    assert not {"x0", "x1", "x2"} & inits  # data is never an initializer
    assert list(g.node[2].input) == ["x2", "pads2", "value2", "axes2"]
    onnx.checker.check_model(model)


def test_default_perm_has_no_attribute() -> None:
    model = build_model([Case("Transpose", "float32", (2, 3, 4))])
    assert not model.graph.node[0].attribute
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (y,) = _run(model, {"x0": x})
    assert np.array_equal(y, x.transpose())


def test_many_cases_one_model_match_numpy() -> None:
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((2, 3, 4)).astype(np.float32)
    x1 = rng.integers(-100, 100, (3, 1)).astype(np.int8)
    x2 = rng.standard_normal((3, 4))
    x3 = rng.integers(0, 2**63, (2, 5), dtype=np.int64)
    cases = [Case("Transpose", "float32", (2, 3, 4), perm=(1, 2, 0)),
             Case("Expand", "int8", (3, 1), target_shape=(2, 1, 5)),
             Case("Pad", "float64", (3, 4), pads=(1, 2, 2, 1), mode="reflect"),
             Case("Pad", "int64", (2, 5), pads=(3, 11), mode="wrap", axes=(-1,))]
    y0, y1, y2, y3 = _run(build_model(cases), {"x0": x0, "x1": x1, "x2": x2, "x3": x3})
    assert np.array_equal(y0, np.transpose(x0, (1, 2, 0)))
    assert np.array_equal(y1, np.broadcast_to(x1, (2, 3, 5)))
    assert np.array_equal(y2, np.pad(x2, ((1, 2), (2, 1)), mode="reflect"))
    assert np.array_equal(y3, np.pad(x3, ((0, 0), (3, 11)), mode="wrap"))


def test_pad_constant_value_bits() -> None:
    nan = np.array([0x7FC0ABCD], np.uint32).view(np.float32)
    case = Case("Pad", "float32", (2,), pads=(1, 1), pad_value_hex=nan.astype("<f4").tobytes().hex())
    (y,) = _run(build_model([case]), {"x0": np.array([1, 2], np.float32)})
    assert y.view(np.uint32).tolist() == [0x7FC0ABCD, 0x3F800000, 0x40000000, 0x7FC0ABCD]


@pytest.mark.parametrize(("opset", "kind"),
                         [(10, "attributes"), (11, "inputs"), (13, "inputs"), (18, "inputs")],
                         ids=["op10-attrs", "op11", "op13", "op18"])
def test_pad_opsets(opset: int, kind: str) -> None:
    value = np.float32(-3).astype("<f4").tobytes().hex()
    case = Case("Pad", "float32", (3, 4), pads=(1, 2, 2, 1), pad_value_hex=value, opset=opset)
    model = build_model([case])
    node = model.graph.node[0]
    attrs = {a.name for a in node.attribute}
    if kind == "attributes":
        assert list(node.input) == ["x0"] and {"pads", "value", "mode"} <= attrs
    else:
        assert list(node.input) == ["x0", "pads0", "value0"] and attrs == {"mode"}
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (y,) = _run(model, {"x0": x})
    assert np.array_equal(y, np.pad(x, ((1, 2), (2, 1)), constant_values=-3))


@pytest.mark.parametrize(("fields", "opset", "match"), [
    ({"op": "Pad", "pads": (1, 1), "mode": "wrap"}, 18, "wrap"),
    ({"op": "Pad", "pads": (1, 1), "axes": (0,)}, 17, "axes"),
    ({"op": "Expand", "target_shape": (2, 3)}, 7, "Expand"),
], ids=["wrap-op18", "axes-op17", "expand-op7"])
def test_opset_features_rejected(fields: dict, opset: int, match: str) -> None:
    """A case of its own opset is refused when it is made; one without is refused when a model
    of a lower opset is built for it."""
    with pytest.raises(ShapeError, match=match):
        Case(data_type="float32", shape=(3,), opset=opset, **fields)
    with pytest.raises(ModelError, match=match):
        build_model([Case(data_type="float32", shape=(3,), **fields)], opset=opset)


def test_each_op_of_a_model_is_held_to_its_own_opsets() -> None:
    """A model of several ops checks each op's opsets, not only the first case's: an Expand
    (opset 8 on) after Transpose cases in a model of opset 7 is refused, naming that case."""
    transposes = [Case("Transpose", "float32", (2, 3), perm=(1, 0)), Case("Transpose", "float32", (3, 2))]
    expand = Case("Expand", "float32", (3,), target_shape=(2, 3))
    with pytest.raises(ModelError, match=rf"^case {expand.id}: opset 7 is before opset 8, the first Expand "):
        build_model([*transposes, expand], opset=7)
    assert len(build_model([*transposes, expand], opset=8).graph.node) == 3


def test_mixed_opsets_rejected() -> None:
    with pytest.raises(ModelError, match="different opsets"):
        build_model([Case("Transpose", "float32", (2,), opset=13),
                     Case("Transpose", "float32", (2,), opset=18)])
    with pytest.raises(ModelError, match="at least one"):
        build_model([])


@pytest.mark.parametrize(("case", "shape"), [
    (Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1)), (4, 2, 3)),
    (Case("Expand", "float32", (3, 1, 5), target_shape=(4, 1)), (3, 4, 5)),
    (Case("Pad", "float32", (3, 4), pads=(-1, 2, 0, -3)), (2, 3)),
], ids=["transpose", "expand-multidirectional", "pad-negative"])
def test_output_shape(case: Case, shape: tuple[int, ...]) -> None:
    assert output_shape(case) == shape


def _helper_model(cases: list[Case], opset: int) -> onnx.ModelProto:
    """The same model made with onnx.helper and numpy_helper, as a reference for the bytes."""
    from onnx import helper, numpy_helper

    nodes, inits, inputs, outputs = [], [], [], []
    for i, c in enumerate(cases):
        x, y, name = f"x{i}", f"y{i}", f"n{i}_{c.op}"
        if c.op == "Transpose":
            attrs = {} if c.perm is None else {"perm": list(c.perm)}
            nodes.append(helper.make_node("Transpose", [x], [y], name=name, doc_string=c.id, **attrs))
            out_shape = np.transpose(np.zeros(c.shape), c.perm).shape
        elif c.op == "Expand":
            inits.append(numpy_helper.from_array(np.array(c.target_shape, np.int64), f"shape{i}"))
            nodes.append(helper.make_node("Expand", [x, f"shape{i}"], [y], name=name, doc_string=c.id))
            out_shape = (np.zeros(c.shape) * np.ones(c.target_shape)).shape
        else:
            names = [x, f"pads{i}"]
            inits.append(numpy_helper.from_array(np.array(c.pads, np.int64), f"pads{i}"))
            dtype = c.data_type.to_numpy()
            if c.pad_value_hex:
                value = np.frombuffer(bytes.fromhex(c.pad_value_hex), dtype.newbyteorder("<")).astype(dtype)
                inits.append(numpy_helper.from_array(value.reshape(()), f"value{i}"))
                names.append(f"value{i}")
            if c.axes is not None:
                names += [""] * (not c.pad_value_hex) + [f"axes{i}"]
                inits.append(numpy_helper.from_array(np.array(c.axes, np.int64), f"axes{i}"))
            nodes.append(helper.make_node("Pad", names, [y], name=name, doc_string=c.id, mode=c.mode))
            axes = range(len(c.shape)) if c.axes is None else [a % len(c.shape) for a in c.axes]
            width = [(0, 0)] * len(c.shape)
            for k, a in enumerate(axes):
                width[a] = (c.pads[k], c.pads[len(c.pads) // 2 + k])
            out_shape = np.pad(np.zeros(c.shape), width).shape
        elem = c.data_type.to_onnx()
        inputs.append(helper.make_tensor_value_info(x, elem, list(c.shape)))
        outputs.append(helper.make_tensor_value_info(y, elem, list(out_shape)))
    graph = helper.make_graph(nodes, "ort_layouts", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=default_ir_version(), producer_name="ort_layouts")


def test_model_bytes_match_the_onnx_helpers() -> None:
    """build_model writes its protos in place: byte for byte what onnx.helper would make."""
    cases = [
        Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1)),
        Case("Transpose", "uint8", (5,)),
        Case("Expand", "int64", (3, 1), target_shape=(2, 3, 4)),
        Case("Pad", "float16", (3, 4), pads=(1, 0, 2, 3), mode="constant", pad_value_hex="017e"),
        Case("Pad", "int32", (3, 4), pads=(1, 2), mode="reflect", axes=(-1,)),
        Case("Pad", "uint16", (3, 4), pads=(1, 2), mode="constant", pad_value_hex="0700", axes=(0,)),
        Case("Pad", "float64", (2, 3), pads=(0, 1, 1, 0), mode="wrap"),
    ]
    assert build_model(cases, opset=19).SerializeToString() == _helper_model(cases, 19).SerializeToString()


def test_shapes_the_caller_has_give_the_same_model() -> None:
    """The runner passes each case's tensor shapes, which it asked its operator for already:
    the model is byte for byte the one build_model makes by asking again, and the value infos
    are the shapes passed."""
    from ort_layouts.operators.registry import operator_for_type

    cases = [
        Case("Concat", "float16", (2, 5), axis=1, parts=(2, 3)),
        Case("Split", "int8", (6, 2), axis=0, parts=(1, 5)),
        Case("Pad", "float32", (3, 4), pads=(1, 0, 2, 3), mode="edge"),
        Case("Transpose", "uint8", ()),
    ]
    ops = [operator_for_type(c.op) for c in cases]
    shapes = [(op.input_shapes(c), op.output_shapes(c)) for op, c in zip(ops, cases, strict=True)]
    model = build_model(cases, opset=19, shapes=shapes)
    assert model.SerializeToString() == build_model(cases, opset=19).SerializeToString()
    dims = [[d.dim_value for d in v.type.tensor_type.shape.dim] for v in model.graph.output]
    assert dims == [[2, 5], [1, 2], [5, 2], [6, 7], []]
    with pytest.raises(ModelError, match="shapes for 1 cases and 2 cases"):
        build_model(cases[:2], opset=19, shapes=shapes[:1])
