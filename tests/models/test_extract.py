"""extract(): layout ops of real and hand-built models, descriptors checked against numpy and
the ONNX reference implementation, flags for what DirectML cannot take."""

from __future__ import annotations

import copy
import json
import operator
import pickle
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ort_layouts import DataType, ModelError, ShapeError
from ort_layouts.models.extract import (
    LayoutOp,
    extract,
    model_cases,
    model_coverage,
    parse_dims,
)
from ort_layouts.operators.depth_space import DepthToSpaceOp, SpaceToDepthOp
from ort_layouts.operators.padding import PaddingOp
from ort_layouts.reference.execute import output_values

ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
SHUFFLENET = ONNX_DATA / "light" / "light_shufflenet.onnx"
TRANSFORMER = Path(__file__).parents[1] / "data" / "transformer_block.onnx"


def _model(nodes, inputs, outputs, initializers=(), opset=18) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def _read(desc, buffer: np.ndarray, offset: int = 0) -> np.ndarray:
    """Read ``buffer`` through a descriptor with numpy's own as_strided (independent of desc.view)."""
    item = buffer.dtype.itemsize
    return as_strided(buffer[offset:], shape=desc.sizes, strides=[s * item for s in desc.effective_strides])


def _packed_elements(shape) -> tuple[int, ...]:
    arr = np.empty(shape, dtype=np.float32)
    return tuple(s // 4 for s in arr.strides)


# ---- hand-built single-node models ---------------------------------------------------------
@pytest.mark.parametrize(("shape", "perm"), [
    ((2, 3, 4), (2, 0, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)), ((1, 4, 3, 5, 2), (0, 2, 1, 3, 4)),
    ((3, 5), None),
], ids=["3d-201", "4d-nchw-to-nhwc", "5d-shuffle", "2d-default"])
def test_transpose_input_desc_reads_numpy_transpose(shape, perm):
    attrs = {} if perm is None else {"perm": list(perm)}
    out_shape = tuple(shape[a] for a in (perm or range(len(shape) - 1, -1, -1)))
    m = _model([helper.make_node("Transpose", ["x"], ["y"], name="t", **attrs)],
               [_vi("x", TensorProto.FLOAT, shape)], [_vi("y", TensorProto.FLOAT, None)])
    (op,) = extract(m)
    assert (op.node_name, op.op_type, op.data_type) == ("t", "Transpose", DataType.FLOAT32)
    assert op.input_shape == shape and op.output_shape == out_shape
    iota = np.arange(np.prod(shape), dtype=np.float32)
    expected = np.transpose(iota.reshape(shape), perm)
    assert np.array_equal(_read(op.descriptors["input"], iota), expected)
    assert op.descriptors["output"].effective_strides == _packed_elements(out_shape)
    assert op.descriptors["input"].total_tensor_size_in_bytes == iota.nbytes
    assert op.dml_operator["operator"] == "DML_OPERATOR_ELEMENT_WISE_IDENTITY"
    assert op.flags == ()


def test_transpose_facts_vector():
    # directml-facts.md: float32 [2,3,4], perm [2,0,1] -> sizes [4,2,3], strides [1,12,4], 96 bytes
    m = _model([helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])],
               [_vi("x", TensorProto.FLOAT, (2, 3, 4))], [_vi("y", TensorProto.FLOAT, None)])
    d = extract(m)[0].descriptors["input"]
    assert (d.sizes, d.strides, d.total_tensor_size_in_bytes) == ((4, 2, 3), (1, 12, 4), 96)


@pytest.mark.parametrize(("shape", "target"),
                         [((3,), (2, 3)), ((2, 1, 4), (2, 3, 4)), ((1, 1, 8, 8), (2, 2, 8, 8))],
                         ids=["facts-3-to-2x3", "ort-comment-2x1x4", "mask"])
def test_expand_input_desc_reads_numpy_broadcast(shape, target):
    m = _model([helper.make_node("Expand", ["x", "s"], ["y"])],
               [_vi("x", TensorProto.FLOAT, shape)], [_vi("y", TensorProto.FLOAT, None)],
               [_ints("s", target)])
    (op,) = extract(m)
    iota = np.arange(np.prod(shape), dtype=np.float32)
    d = op.descriptors["input"]
    assert d.dimension_count == max(4, len(target))  # the EP's leading 1s
    assert np.array_equal(_read(d, iota), np.broadcast_to(iota.reshape(shape), target).reshape(d.sizes))
    assert op.output_shape == target
    assert op.to_case().target_shape == target


def test_expand_of_a_shape_that_is_not_1d_is_flagged_as_the_dml_ep_refuses_it():
    # ExpandHelper (OperatorHelper.cpp): "Expand's shape tensor must be 1D."; ONNX Runtime's CPU EP
    # reads its values whatever its rank
    import onnxruntime as ort

    m = _model([helper.make_node("Expand", ["x", "s"], ["y"])],
               [_vi("x", TensorProto.FLOAT, (3,))], [_vi("y", TensorProto.FLOAT, None)],
               [_ints("s", [[2, 3]])])
    x = np.arange(3, dtype=np.float32)
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    (op,) = extract(m)
    assert op.output_shape == want.shape == (2, 3)
    assert any(f.startswith("ep-rejects:") and "'s' is 2-D" in f and "1-D" in f
               for f in op.flags), op.flags
    assert op.descriptors == {}
    m1 = _model([helper.make_node("Expand", ["x", "s"], ["y"])],
                [_vi("x", TensorProto.FLOAT, (3,))], [_vi("y", TensorProto.FLOAT, None)],
                [_ints("s", [2, 3])])
    (op1,) = extract(m1)
    assert op1.flags == () and op1.descriptors["input"].strides == (0, 0, 0, 1)


def test_pad_of_an_empty_axes_input_is_flagged_as_the_dml_ep_refuses_it():
    m = _model([helper.make_node("Pad", ["x", "p", "", "a"], ["y"])],
               [_vi("x", TensorProto.FLOAT, (3, 4))], [_vi("y", TensorProto.FLOAT, None)],
               [_ints("p", np.zeros(0, np.int64)), _ints("a", np.zeros(0, np.int64))], opset=18)
    (op,) = extract(m)
    assert op.output_shape == (3, 4) and op.descriptors == {}
    assert any(f.startswith("ep-rejects:") and "HandleEmptyAxes" in f for f in op.flags), op.flags


@pytest.mark.parametrize("which", ["split-11-given-a-split-input", "transpose-of-two-outputs"])
def test_a_node_of_more_inputs_or_outputs_than_its_schema_takes_makes_no_case(which: str) -> None:
    """It was read as another node (Split-11's split input as absent: parts [3, 3]) and passed."""
    import onnxruntime as ort

    if which.startswith("split"):
        node = helper.make_node("Split", ["x", "sp"], ["a", "b"], axis=1)
        outputs = [_vi("a", TensorProto.FLOAT, None), _vi("b", TensorProto.FLOAT, None)]
        m = _model([node], [_vi("x", TensorProto.FLOAT, (1, 6, 1))], outputs, [_ints("sp", [2, 4])], opset=11)
        want = "Split has 2 inputs; valid: at most 1, as Split-11"
    else:
        node = helper.make_node("Transpose", ["x"], ["a", "b"], perm=[1, 0])
        outputs = [_vi("a", TensorProto.FLOAT, None), _vi("b", TensorProto.FLOAT, None)]
        m = _model([node], [_vi("x", TensorProto.FLOAT, (2, 3))], outputs, opset=13)
        want = "Transpose has 2 outputs; valid: at most 1, as Transpose-13"
    with pytest.raises(Exception, match="not in range"):  # ONNX Runtime refuses the model
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (op,) = extract(m)
    assert any(f.startswith("input:") and want in f for f in op.flags), op.flags
    assert op.to_case() is None


def test_expand_ort_comment_strides():
    # ORT's comment: physical [2,1,4] desired [2,3,4] -> strides [4,0,1]; Initialize has padded
    # both to 4 dimensions before (leading 1s, stride 0)
    m = _model([helper.make_node("Expand", ["x", "s"], ["y"])],
               [_vi("x", TensorProto.FLOAT, (2, 1, 4))], [_vi("y", TensorProto.FLOAT, None)],
               [_ints("s", (2, 3, 4))])
    d = extract(m)[0].descriptors["input"]
    assert (d.sizes, d.strides) == ((1, 2, 3, 4), (0, 4, 0, 1))


def test_pad_facts_vector_and_case():
    # directml-facts.md: [3,4] pads [1,2,3,4] -> input [1,1,3,4], start [0,0,1,2], end [0,0,3,4]
    value = numpy_helper.from_array(np.array(1.5, dtype=np.float32), "v")
    m = _model([helper.make_node("Pad", ["x", "p", "v"], ["y"], mode="edge")],
               [_vi("x", TensorProto.FLOAT, (3, 4))], [_vi("y", TensorProto.FLOAT, None)],
               [_ints("p", [1, 2, 3, 4]), value])
    (op,) = extract(m)
    d = op.dml_operator
    assert d["operator"] == "DML_OPERATOR_PADDING1"
    assert d["input"]["sizes"] == (1, 1, 3, 4) and d["output"]["sizes"] == (1, 1, 7, 10)  # read-only: tuples
    assert (d["start_padding"], d["end_padding"], d["mode"]) == ((0, 0, 1, 2), (0, 0, 3, 4), "EDGE")
    assert op.output_shape == (7, 10) and op.stride_view is False
    case = op.to_case()
    assert (case.op, case.pads, case.mode) == ("Pad", (1, 2, 3, 4), "edge")
    assert case.pad_value_hex == np.float32(1.5).tobytes().hex()


def test_negative_pads_flagged():
    m = _model([helper.make_node("Pad", ["x", "p"], ["y"])],
               [_vi("x", TensorProto.FLOAT, (3, 4))], [_vi("y", TensorProto.FLOAT, None)],
               [_ints("p", [0, -1, 0, 0])])
    (op,) = extract(m)
    assert any(f.startswith("negative-pads:") for f in op.flags)
    assert op.output_shape == (3, 3) and op.dml_operator is None


def test_runtime_pads_flagged_and_no_case():
    m = _model([helper.make_node("Pad", ["x", "p"], ["y"])],
               [_vi("x", TensorProto.FLOAT, (3, 4)), _vi("p", TensorProto.INT64, (4,))],
               [_vi("y", TensorProto.FLOAT, None)])
    (op,) = extract(m)
    assert any(f.startswith("runtime-input:") and "'p'" in f for f in op.flags)
    assert op.to_case() is None


@pytest.mark.parametrize(("op_type", "shape", "attrs", "const", "out_shape"), [
    ("Reshape", (2, 3, 4), {}, [4, -1], (4, 6)),
    ("Reshape", (2, 3, 4), {}, [0, 12], (2, 12)),
    ("Flatten", (2, 3, 4, 5), {"axis": 2}, None, (6, 20)),
    ("Squeeze", (1, 3, 1, 4), {}, [0, 2], (3, 4)),
    ("Unsqueeze", (3, 4), {}, [0, 3], (1, 3, 4, 1)),
], ids=["reshape-minus1", "reshape-zero", "flatten", "squeeze", "unsqueeze"])
def test_reshape_like_are_the_input_read_again(op_type, shape, attrs, const, out_shape):
    """The DML EP's Copy kernel: both descriptors are the input's, packed, right-aligned to 4D."""
    inputs = ["x"] + (["c"] if const is not None else [])
    inits = [_ints("c", const)] if const is not None else []
    m = _model([helper.make_node(op_type, inputs, ["y"], **attrs)],
               [_vi("x", TensorProto.FLOAT, shape)], [_vi("y", TensorProto.FLOAT, None)], inits)
    (op,) = extract(m)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    expected = ReferenceEvaluator(m).run(None, {"x": x})[0]
    assert op.output_shape == expected.shape == out_shape
    padded = (1,) * max(0, 4 - len(shape)) + shape
    assert op.descriptors["input"].sizes == op.descriptors["output"].sizes == padded
    assert op.descriptors["input"].effective_strides == _packed_elements(padded)
    assert np.array_equal(_read(op.descriptors["input"], x.reshape(-1)).reshape(out_shape), expected)
    case = op.to_case()
    assert case is not None and case.op == op_type and case.shape == shape and op.stride_view


@pytest.mark.parametrize(("op_type", "mode", "shape", "block"), [
    ("DepthToSpace", "DCR", (1, 8, 2, 3), 2), ("DepthToSpace", "CRD", (2, 8, 2, 3), 2),
    ("SpaceToDepth", None, (1, 2, 4, 6), 2), ("DepthToSpace", "DCR", (1, 18, 2, 2), 3),
], ids=["d2s-dcr", "d2s-crd", "s2d", "d2s-dcr-b3"])
def test_depth_space_operator_matches_reference(op_type, mode, shape, block):
    attrs = {"blocksize": block} | ({"mode": mode} if mode else {})
    m = _model([helper.make_node(op_type, ["x"], ["y"], **attrs)],
               [_vi("x", TensorProto.FLOAT, shape)], [_vi("y", TensorProto.FLOAT, None)])
    (op,) = extract(m)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    expected = ReferenceEvaluator(m).run(None, {"x": x})[0]
    d = op.dml_operator
    if op_type == "DepthToSpace":
        assert d["operator"] == "DML_OPERATOR_DEPTH_TO_SPACE1"
        assert d["order"] == {"DCR": "DEPTH_COLUMN_ROW", "CRD": "COLUMN_ROW_DEPTH"}[mode]
        dml = DepthToSpaceOp.from_dict(d)
    else:
        assert d["operator"] == "DML_OPERATOR_SPACE_TO_DEPTH" and "order" not in d
        dml = SpaceToDepthOp.from_dict(d)
    assert d["block_size"] == block and op.descriptors["input"].sizes == shape
    assert op.descriptors["output"].sizes == expected.shape == op.output_shape
    assert np.array_equal(output_values(dml, x), expected) and op.stride_view is False


def _slice_model(shape, starts, ends, axes, steps, opset=18):
    names = ["x", "s", "e"] + (["a"] if axes is not None else [""] if steps is not None else []) \
        + (["k"] if steps is not None else [])
    inits = [_ints("s", starts), _ints("e", ends)] + ([_ints("a", axes)] if axes is not None else []) \
        + ([_ints("k", steps)] if steps is not None else [])
    return _model([helper.make_node("Slice", names, ["y"])], [_vi("x", TensorProto.FLOAT, shape)],
                  [_vi("y", TensorProto.FLOAT, None)], inits, opset)


@pytest.mark.parametrize(("shape", "starts", "ends", "axes", "steps"), [
    ((4, 6), [1, 2], [3, 6], [0, 1], [1, 2]),
    ((3, 8, 5), [0, -6], [2, 100], [0, 1], [1, 3]),
    ((2, 3, 4, 5), [1], [4], [3], None),
    ((5, 6), [-1, 4], [-(2**63), 0], [0, -1], [-2, -3]),
    ((5,), [4], [-10], [0], [-1]),
], ids=["2d-step2", "3d-negative-start", "4d-last-axis", "2d-negative-steps", "1d-reversed"])
def test_slice_is_a_slice1_window(shape, starts, ends, axes, steps):
    """DML_OPERATOR_SLICE1 over the EP's window, rank kept, reads what onnx.reference gives."""
    from ort_layouts.operators.slice import Slice1Op

    m = _slice_model(shape, starts, ends, axes, steps)
    (op,) = extract(m)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    expected = ReferenceEvaluator(m).run(None, {"x": x})[0]
    d = op.dml_operator
    assert d["operator"] == "DML_OPERATOR_SLICE1" and d["dimension_count"] == len(shape)
    assert np.array_equal(output_values(Slice1Op.from_dict(d), x), expected)
    assert op.descriptors["input"].sizes == shape and op.descriptors["output"].sizes == expected.shape
    assert op.output_shape == expected.shape and not op.flags and op.stride_view is False
    case = op.to_case()
    assert case is not None and case.op == "Slice" and case.starts == tuple(starts) and case.steps == (
        tuple(steps) if steps else None)


def test_slice_1_attributes():
    from ort_layouts.operators.slice import Slice1Op

    m = _model([helper.make_node("Slice", ["x"], ["y"], starts=[1, -3], ends=[-1, 2**63 - 1], axes=[1, 0])],
               [_vi("x", TensorProto.FLOAT, (4, 5))], [_vi("y", TensorProto.FLOAT, None)], opset=9)
    (op,) = extract(m)
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    assert op.dml_operator["input_window_offsets"] == (1, 1)
    assert op.dml_operator["input_window_sizes"] == (3, 3)
    assert np.array_equal(output_values(Slice1Op.from_dict(op.dml_operator), x), x[-3:, 1:-1])


@st.composite
def _slices(draw):
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=4)))
    axes = draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=len(shape),
                         unique_by=lambda a: a % len(shape)))
    bound = st.integers(-8, 8)
    starts = [draw(bound) for _ in axes]
    ends = [draw(st.one_of(bound, st.just(2**62), st.just(-(2**62)))) for _ in axes]
    steps = [draw(st.sampled_from([-3, -2, -1, 1, 2, 3])) for _ in axes]
    return shape, starts, ends, axes, steps


@settings(max_examples=60, deadline=None)
@given(_slices())
def test_slice_window_property(spec):
    """Any Slice: SLICE1 on the EP's window reads exactly what onnx.reference gives; what the EP
    builds no operator for is flagged."""
    from ort_layouts.operators.slice import Slice1Op

    shape, starts, ends, axes, steps = spec
    m = _slice_model(shape, starts, ends, axes, steps)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    expected = ReferenceEvaluator(m).run(None, {"x": x})[0]
    (op,) = extract(m)
    if op.dml_operator is None:
        assert any(f.startswith(("empty:", "ep-divergence:")) for f in op.flags), op.flags
        return
    assert op.output_shape == expected.shape
    assert np.array_equal(output_values(Slice1Op.from_dict(op.dml_operator), x), expected)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=6).flatmap(
    lambda shape: st.tuples(st.just(tuple(shape)), st.permutations(range(len(shape))))))
def test_transpose_view_property(spec):
    shape, perm = spec
    m = _model([helper.make_node("Transpose", ["x"], ["y"], perm=list(perm))],
               [_vi("x", TensorProto.FLOAT, shape)], [_vi("y", TensorProto.FLOAT, None)])
    (op,) = extract(m)
    x = np.arange(np.prod(shape), dtype=np.float32)
    assert np.array_equal(_read(op.descriptors["input"], x), np.transpose(x.reshape(shape), perm))


def test_slice_the_ep_cannot_run_is_flagged():
    # OperatorHelper.cpp line 1070: starts INT64_MIN (INT32_MIN after the clamp), a negative end
    (op,) = extract(_slice_model((5,), [-(2**63)], [-1], [0], [3]))
    assert op.dml_operator is None and op.descriptors == {} and op.output_shape == (2,)
    assert any(f.startswith("ep-divergence:") and "line 1070" in f for f in op.flags)
    assert op.to_case() is not None  # other EPs are still compared with ONNX's result
    (op,) = extract(_slice_model((5, 4), [1, -1], [4, -(2**63)], None, [2, -1]))
    assert any(f.startswith("ep-rejects:") and "without axes" in f for f in op.flags)
    assert op.output_shape == (2, 4)
    (op,) = extract(_slice_model((5,), [3], [1], [0], [1]))
    assert any(f.startswith("empty:") for f in op.flags) and op.output_shape == (0,)
    m = _model([helper.make_node("Slice", ["x", "s", "e"], ["y"])],
               [_vi("x", TensorProto.FLOAT, (5,)), _vi("s", TensorProto.INT64, (1,))],
               [_vi("y", TensorProto.FLOAT, None)], [_ints("e", [3])])
    (op,) = extract(m)
    assert any(f.startswith("runtime-input:") for f in op.flags) and op.to_case() is None


# ---- flags ---------------------------------------------------------------------------------
def test_int64_flag_and_uint32_view():
    m = _model([helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])],
               [_vi("x", TensorProto.INT64, (2, 3))], [_vi("y", TensorProto.INT64, None)])
    (op,) = extract(m)
    assert "int64: needs DirectML 64-bit support or the 32-bit emulation (values outside int32 not " \
           "preserved)" in op.flags
    view = op.descriptors["input_uint32_view"]
    assert view.data_type is DataType.UINT32 and view.strides == (2, 6)
    assert op.to_case().data_type is DataType.INT64


@pytest.mark.parametrize("elem", [TensorProto.INT4, TensorProto.UINT4], ids=["int4", "uint4"])
def test_4_bit_flagged_with_its_descriptors(elem: int) -> None:
    """DirectML's feature level history: 4-bit tensors in QUANTIZE and DEQUANTIZE only."""
    m = _model([helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])],
               [_vi("x", elem, (2, 3))], [_vi("y", elem, None)], opset=21)
    (op,) = extract(m)
    name = "int4" if elem == TensorProto.INT4 else "uint4"
    assert (f"{name}: DirectML takes 4-bit tensors only in QUANTIZE and DEQUANTIZE (feature level 6_3), "
            "in no data-movement operator") in op.flags
    source = op.descriptors["input"]
    assert source.strides == (1, 3) and source.total_tensor_size_in_bytes == 4  # 6 nibbles, rounded to 4


def test_more_than_8_dims_flagged():
    shape = (1, 2, 1, 2, 1, 2, 1, 2, 1)
    m = _model([helper.make_node("Transpose", ["x"], ["y"])],
               [_vi("x", TensorProto.FLOAT, shape)], [_vi("y", TensorProto.FLOAT, None)])
    (op,) = extract(m)
    assert any(f.startswith("dimensions:") and "9 dimensions" in f for f in op.flags)
    assert op.descriptors == {} and op.output_shape == shape[::-1]


def test_more_than_2_32_elements_flagged():
    m = _model([helper.make_node("Expand", ["x", "s"], ["y"])],
               [_vi("x", TensorProto.UINT8, (1,))], [_vi("y", TensorProto.UINT8, None)],
               [_ints("s", [65537, 65536])])
    (op,) = extract(m)
    assert any(f.startswith("elements:") and str(65537 * 65536) in f for f in op.flags)


def test_unsupported_data_type_flagged():
    m = _model([helper.make_node("Transpose", ["x"], ["y"])],
               [_vi("x", TensorProto.BFLOAT16, (2, 3))], [_vi("y", TensorProto.BFLOAT16, None)])
    (op,) = extract(m)
    assert op.data_type is None and any(f.startswith("data-type:") for f in op.flags)
    assert op.to_case() is None


# ---- real models -----------------------------------------------------------------------------
def test_shufflenet_channel_shuffle_transposes():
    ops = extract(SHUFFLENET)
    transposes = [op for op in ops if op.op_type == "Transpose"]
    assert len(transposes) == 16
    for op in transposes:
        n, g, c, h, w = op.input_shape
        assert op.params["perm"] == (0, 2, 1, 3, 4) and op.output_shape == (n, c, g, h, w) and g == 4
        x = np.arange(np.prod(op.input_shape), dtype=np.float32)
        assert np.array_equal(_read(op.descriptors["input"], x),
                              np.transpose(x.reshape(op.input_shape), (0, 2, 1, 3, 4)))
        assert not op.flags
    reshapes = [op for op in ops if op.op_type == "Reshape"]
    assert len(reshapes) == 33
    cases = model_cases(SHUFFLENET)
    transpose_cases = [c for c in cases if c.op == "Transpose"]
    assert sorted(c.shape for c in transpose_cases) == [(1, 4, 28, 56, 56), (1, 4, 34, 28, 28),
                                                       (1, 4, 68, 14, 14), (1, 4, 136, 7, 7)]
    assert all(c.origin.startswith(f"model:{SHUFFLENET}#") for c in cases)
    assert sum(c.origin.count("+") + 1 for c in transpose_cases) == 16
    reshape_cases = [c for c in cases if c.op == "Reshape"]  # 33 nodes, 9 distinct reshapes
    assert len(reshape_cases) == 9 and sum(c.origin.count("+") + 1 for c in reshape_cases) == 33


@pytest.mark.parametrize(("test_dir", "op_type"), [
    ("pytorch-operator/test_operator_pad", "Pad"),
    ("pytorch-converted/test_ConstantPad2d", "Pad"),
    ("pytorch-converted/test_ReflectionPad2d", "Pad"),
    ("pytorch-converted/test_PixelShuffle", "Transpose"),
    ("pytorch-operator/test_operator_permute2", "Transpose"),
], ids=lambda v: v.rsplit("/", 1)[-1])
def test_onnx_shipped_tests_output_shapes(test_dir, op_type):
    """Extracted output shapes equal the shapes of the outputs the onnx package ships."""
    path = ONNX_DATA / test_dir / "model.onnx"
    (op,) = [o for o in extract(path) if o.op_type == op_type]
    out_name = op.outputs[0]
    model = onnx.load(path)
    if out_name == model.graph.output[0].name:
        expected = numpy_helper.to_array(onnx.load_tensor(path.parent / "test_data_set_0" / "output_0.pb"))
        assert op.output_shape == expected.shape
    assert op.to_case() is not None


def test_old_opset_pad_value_attribute():
    path = ONNX_DATA / "pytorch-converted" / "test_ConstantPad2d" / "model.onnx"
    (op,) = extract(path)
    x = numpy_helper.to_array(onnx.load_tensor(path.parent / "test_data_set_0" / "input_0.pb"))
    y = numpy_helper.to_array(onnx.load_tensor(path.parent / "test_data_set_0" / "output_0.pb"))
    begins, ends = op.params["pads"][:4], op.params["pads"][4:]
    padded = np.pad(x, list(zip(begins, ends, strict=True)), constant_values=2.0)
    assert np.array_equal(padded, y)
    assert op.to_case().pad_value_hex == np.float32(2.0).tobytes().hex()
    assert op.descriptors["output"].sizes == y.shape


def test_transformer_needs_dim_batch():
    ops = extract(TRANSFORMER)
    assert [op.op_type for op in ops].count("Transpose") == 4
    dynamic = [op for op in ops if op.output_shape is None]
    assert dynamic and all(any("--dim batch=VALUE" in f for f in op.flags) for op in dynamic)
    # only the Concat that builds Expand's target shape from a (1,) Shape output is static
    assert [c.op for c in model_cases(TRANSFORMER)] == ["Concat"]
    coverage = {c.op_type: c for c in model_coverage(TRANSFORMER)}
    assert coverage["Transpose"].nodes == 4 and coverage["Transpose"].with_case == 0
    assert all("--dim batch=VALUE" in reason for _, reason in coverage["Transpose"].without_case)


def test_transformer_pinned():
    ops = extract(TRANSFORMER, dims={"batch": 2})
    kinds = [op.op_type for op in ops]
    assert kinds.count("Transpose") == 4 and kinds.count("Expand") == 1 and kinds.count("Reshape") == 4
    perms = sorted(op.params["perm"] for op in ops if op.op_type == "Transpose")
    assert perms == [(0, 2, 1, 3), (0, 2, 1, 3), (0, 2, 1, 3), (0, 2, 3, 1)]
    for op in ops:
        if op.op_type == "Concat":  # builds Expand's target shape: a (4,) vector
            assert op.output_shape == (4,)
            continue
        assert op.output_shape[0] == 2 and (op.op_type == "Expand" or op.input_shape[0] == 2)
        assert not any(f.startswith("dynamic") for f in op.flags)
        if op.op_type == "Transpose":
            x = np.arange(np.prod(op.input_shape), dtype=np.float32)
            assert np.array_equal(_read(op.descriptors["input"], x),
                                  np.transpose(x.reshape(op.input_shape), op.params["perm"]))
    (expand,) = [op for op in ops if op.op_type == "Expand"]
    assert expand.data_type is DataType.UINT8  # a bool mask, stored as UINT8
    assert expand.input_shape == (1, 1, 8, 8) and expand.output_shape == (2, 2, 8, 8)
    assert expand.descriptors["input"].strides == (0, 0, 8, 1)
    assert any(f.startswith("runtime-input:") for f in expand.flags)
    reshapes = [op for op in ops if op.op_type == "Reshape"]
    assert sorted(op.output_shape for op in reshapes) == [(2, 8, 2, 8)] * 3 + [(2, 8, 16)]
    cases = model_cases(TRANSFORMER, dims={"batch": 2})
    # the graph's 11 layout nodes; its 4 Reshapes make 2 distinct cases, its 4 Transposes 3
    assert sorted(c.op for c in cases) == [
        "Concat", "Expand", "Reshape", "Reshape", "Split", "Transpose", "Transpose", "Transpose"]


# ---- API and command line ----------------------------------------------------------------
def test_layout_op_to_dict_is_json():
    (op,) = extract(TRANSFORMER, dims={"batch": 1}, ops=["Expand"])
    data = json.loads(json.dumps(op.to_dict()))
    assert data["descriptors"]["input"]["strides"] == [0, 0, 8, 1]
    assert isinstance(op, LayoutOp)


def test_a_layout_op_is_read_only_and_pickles_and_encodes_as_before():
    m = _model([helper.make_node("Pad", ["x", "p"], ["y"], mode="edge")],
               [_vi("x", TensorProto.FLOAT, (3, 4))], [_vi("y", TensorProto.FLOAT, None)],
               [_ints("p", [1, 2, 3, 4])])
    (op,) = extract(m)
    (again,) = extract(m)
    assert op == again and hash(op) == hash(again) and len({op, again}) == 1
    for change in (lambda: operator.setitem(op.params, "pads", (0, 0, 0, 0)),  # type: ignore[call-overload]
                   lambda: operator.setitem(op.dml_operator, "mode", "WRAP"),  # type: ignore[call-overload]
                   lambda: operator.setitem(op.dml_operator["input"], "sizes", [9]),  # type: ignore[index]
                   lambda: operator.delitem(op.descriptors, "input")):  # type: ignore[call-overload]
        with pytest.raises(TypeError):
            change()
    with pytest.raises(AttributeError):
        op.dml_operator["start_padding"].append(7)  # type: ignore[index]
    assert op == again
    assert pickle.loads(pickle.dumps(op)) == op and copy.deepcopy(op) == op
    data = op.to_dict()  # JSON-ready: plain dicts and lists, as the operator's own to_dict gives
    assert data["dml_operator"] == PaddingOp.from_dict(op.dml_operator).to_dict()  # type: ignore[arg-type]
    assert data["dml_operator"]["start_padding"] == [0, 0, 1, 2] and data["params"]["pads"] == [1, 2, 3, 4]
    assert json.loads(json.dumps(data)) == data


def test_errors():
    with pytest.raises(ModelError, match="does not exist"):
        extract("/nonexistent/model.onnx")
    with pytest.raises(ShapeError, match="valid"):
        extract(TRANSFORMER, ops=["Conv"])
    with pytest.raises(ShapeError, match=r"\['bacth'\].*\['batch'\]"):
        extract(TRANSFORMER, dims={"bacth": 2})
    with pytest.raises(ShapeError, match="NAME=VALUE"):
        parse_dims(["batch"])
    assert parse_dims(["batch=2", "seq=8"]) == {"batch": 2, "seq": 8}


def _cli(argv):
    from ort_layouts.frontends.cli import main

    return main(["extract", *argv])


def test_cli_json(capsys):
    assert _cli([str(TRANSFORMER), "--json", "--dim", "batch=3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {d["op_type"] for d in data} == {"Transpose", "Expand", "Reshape", "Split", "Concat"}
    # every output but the Concat's shape vector (4,) starts with the pinned batch
    assert all(d["output_shape"][0] == 3 for d in data if d["op_type"] != "Concat")


def test_cli_text_suggests_dim(capsys):
    assert _cli([str(TRANSFORMER)]) == 0
    out = capsys.readouterr().out
    assert "--dim batch=VALUE" in out and "layout ops" in out
    assert _cli(["/nonexistent.onnx"]) == 2


# ---- validation on the CPU EP --------------------------------------------------------------
def test_model_cases_pass_on_cpu():
    from ort_layouts.engine.result import Status
    from ort_layouts.engine.runner import run_cases

    cases = (model_cases(SHUFFLENET) + model_cases(TRANSFORMER, dims={"batch": 2})
             + model_cases(ONNX_DATA / "pytorch-converted" / "test_ConstantPad2d" / "model.onnx")
             + model_cases(ONNX_DATA / "pytorch-operator" / "test_operator_pad" / "model.onnx"))
    kinds = [c.op for c in cases]
    assert [kinds.count(k) for k in ("Transpose", "Expand", "Pad", "Reshape")] == [7, 1, 2, 11]
    results = run_cases(cases, provider="cpu")
    assert [r.case.origin for r in results] == [c.origin for c in cases]
    assert [r.status for r in results] == [Status.PASS] * len(cases), [r.message for r in results if not r]
    assert all(r.element_count > 0 for r in results)


# ---- through the ort-layouts command line ------------------------------------------------------
def test_ort_layouts_extract_command(capsys):
    from ort_layouts.frontends.cli import main

    assert main(["extract", str(TRANSFORMER), "--dim", "batch=1", "--ops", "transpose,Expand", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["op_type"] for d in data].count("Transpose") == 4 and len(data) == 5
    assert main(["extract", str(TRANSFORMER), "--ops", "Conv"]) == 2
    assert "valid" in capsys.readouterr().err


def test_ort_layouts_validate_model_writes_report(tmp_path, capsys):
    from ort_layouts.frontends.cli import main

    code = main(["validate", "--model", str(SHUFFLENET), "--provider", "cpu", "--report", str(tmp_path),
                 "--progress", "none"])
    assert code == 0
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    results = [r for r in lines if "case" in r]
    # light_shufflenet: 16 Transposes (4 distinct), 33 Reshapes (9), 3 Concats (3)
    assert len(results) == 16 and all(r["status"] == "pass" for r in results)
    assert all(r["case"]["origin"].startswith(f"model:{SHUFFLENET}#") for r in results)
    assert "16 passed" in capsys.readouterr().out
    # batch not pinned: only the static Concat runs, and every other node is named with --dim
    assert main(["validate", "--model", str(TRANSFORMER), "--provider", "cpu", "--progress", "none"]) == 0
    err = capsys.readouterr().err
    assert "11 layout nodes make 1 distinct cases" in err and err.count("--dim batch=VALUE") == 10


def test_the_extract_summary_counts_cases_as_validate_model_runs_them(
        capsys: pytest.CaptureFixture[str]) -> None:
    from ort_layouts.frontends.cli import main
    from ort_layouts.models.extract import model_cases

    block = Path(__file__).resolve().parents[1] / "data" / "transformer_block.onnx"
    assert main(["extract", str(block), "--dim", "batch=2"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    per_node = len(model_cases(block, dims={"batch": 2}, unique=False))
    distinct = len(model_cases(block, dims={"batch": 2}))
    assert per_node > distinct  # the block repeats a case: the two counts differ
    assert last.endswith(f"; {per_node} make validation cases, {distinct} distinct "
                         "(validate --model runs those)")


# ---- subgraphs and model-local functions ---------------------------------------------------------
def _subgraph_model() -> onnx.ModelProto:
    """If: then Transpose(X), else Reshape(X, a shape of its own); Loop: a body Pad of X with the
    outer constant pads, and a body Pad whose pads 'q' the body makes itself while the outer graph
    has a constant 'q' (the body's own must win)."""
    x4 = [1, 3, 4, 5]
    then_g = helper.make_graph([helper.make_node("Transpose", ["X"], ["t"], name="perm", perm=[0, 2, 3, 1])],
                               "then", [], [_vi("t", TensorProto.FLOAT, [1, 4, 5, 3])])
    else_g = helper.make_graph([helper.make_node("Reshape", ["X", "shp"], ["r"])], "else", [],
                               [_vi("r", TensorProto.FLOAT, [1, 4, 5, 3])], [_ints("shp", [1, 4, 5, 3])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Pad", ["X", "pads"], ["pp"], name="outer_pads"),
         helper.make_node("Add", ["p_in", "p_in"], ["q"]),
         helper.make_node("Pad", ["X", "q"], ["pq"], name="inner_pads")],
        "body", [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, []),
                 _vi("p_in", TensorProto.INT64, [8])],
        [_vi("c_out", TensorProto.BOOL, []), _vi("pp", TensorProto.FLOAT, [1, 3, 6, 7]),
         _vi("pq", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("If", ["cond"], ["Y"], name="choose", then_branch=then_g, else_branch=else_g),
             helper.make_node("Loop", ["n", "", "q"], ["q_end", "Z"], body=body)]
    return _model(nodes, [_vi("X", TensorProto.FLOAT, x4), _vi("cond", TensorProto.BOOL, []),
                          _vi("n", TensorProto.INT64, [])],
                  [_vi("Y", TensorProto.FLOAT, [1, 4, 5, 3]), _vi("q_end", TensorProto.INT64, [8]),
                   _vi("Z", TensorProto.FLOAT, None)],
                  [_ints("pads", [0, 0, 1, 1, 0, 0, 1, 1]), _ints("q", [0, 0, 0, 0, 0, 0, 0, 0])], opset=17)


def test_layout_nodes_of_subgraphs_are_extracted_with_the_outer_scope():
    ops = {op.node_name: op for op in extract(_subgraph_model())}
    assert sorted(ops) == ["Loop_1/body/Identity_0", "Loop_1/body/inner_pads", "Loop_1/body/outer_pads",
                           "choose/else_branch/Reshape_0", "choose/then_branch/perm"]
    t = ops["choose/then_branch/perm"]
    assert (t.input_shape, t.output_shape, t.flags) == ((1, 3, 4, 5), (1, 4, 5, 3), ())
    x = np.arange(60, dtype=np.float32)  # the descriptor reads numpy's transpose of X
    assert np.array_equal(_read(t.descriptors["input"], x), x.reshape(1, 3, 4, 5).transpose(0, 2, 3, 1))
    assert ops["choose/else_branch/Reshape_0"].output_shape == (1, 4, 5, 3)
    outer = ops["Loop_1/body/outer_pads"]
    assert outer.output_shape == (1, 3, 6, 7) and outer.to_case().pads == (0, 0, 1, 1, 0, 0, 1, 1)
    inner = ops["Loop_1/body/inner_pads"]  # 'q' is the body's own, computed at run time
    assert inner.to_case() is None and any("runtime-input" in f and "'q'" in f for f in inner.flags)
    assert t.origin == "model:g#choose/then_branch/perm"


def test_subgraph_cases_pass_on_cpu():
    from ort_layouts.engine.result import Status
    from ort_layouts.engine.runner import run_cases

    cases = model_cases(_subgraph_model())  # the body's Identity of the rank-0 condition makes one too
    assert sorted(c.op for c in cases) == ["Identity", "Pad", "Reshape", "Transpose"]
    assert [r.status for r in run_cases(cases, provider="cpu")] == [Status.PASS] * 4



def _scan_model() -> onnx.ModelProto:
    """Y = Scan(X) over X's first axis, the body a Transpose of its input s_in, which declares
    the dimensions 'h' and 'w' of its own (the outer graph names X's 'n', 'h2', 'w2')."""
    body = helper.make_graph([helper.make_node("Transpose", ["s_in"], ["s_out"], name="perm", perm=[1, 0])],
                             "body", [_vi("s_in", TensorProto.FLOAT, ["h", "w"])],
                             [_vi("s_out", TensorProto.FLOAT, ["w", "h"])])
    model = _model([helper.make_node("Scan", ["X"], ["Y"], name="scan", body=body, num_scan_inputs=1)],
                   [_vi("X", TensorProto.FLOAT, ["n", "h2", "w2"])],
                   [_vi("Y", TensorProto.FLOAT, ["n", "w2", "h2"])], opset=17)
    onnx.checker.check_model(model, full_check=True)
    return model


def test_a_dimension_a_subgraph_names_can_be_pinned_as_its_flag_suggests():
    (op,) = extract(_scan_model())
    assert op.input_shape is None and any("--dim h=VALUE" in f for f in op.flags)
    (op,) = extract(_scan_model(), dims={"h": 3, "w": 4})
    assert (op.node_name, op.input_shape, op.output_shape, op.flags) == ("scan/body/perm", (3, 4), (4, 3), ())
    s = np.arange(12, dtype=np.float32)  # the descriptor reads numpy's transpose of one slice
    assert _read(op.descriptors["input"], s).tobytes() == np.ascontiguousarray(s.reshape(3, 4).T).tobytes()
    with pytest.raises(ShapeError, match=r"dimensions \['k'\] are not dim_params of the model; its "
                                         r"dim_params: \['h', 'h2', 'n', 'w', 'w2'\]"):
        extract(_scan_model(), dims={"k": 1})


def test_a_dimension_shape_inference_names_itself_is_no_dim_param() -> None:
    """The length of a NonZero's output depends on the data: ONNX's shape inference names it
    (unk__0), and no --dim is suggested for it, nor taken."""
    model = _model([helper.make_node("NonZero", ["X"], ["nz"]),
                    helper.make_node("Transpose", ["nz"], ["Y"], name="t", perm=[1, 0])],
                   [_vi("X", TensorProto.FLOAT, [2, 6])], [_vi("Y", TensorProto.INT64, None)], opset=13)
    inferred = onnx.shape_inference.infer_shapes(model)
    names = {d.dim_param for v in inferred.graph.value_info for d in v.type.tensor_type.shape.dim
             if d.HasField("dim_param")}
    assert names == {"unk__0"}  # what inference calls the dimension it could not compute
    (op,) = extract(model)
    assert op.input_shape is None and op.to_case() is None
    (dynamic,) = [f for f in op.flags if f.startswith("dynamic")]
    # the model's one input is static: no pin would make the data-dependent length known
    assert "[2, None]" in dynamic and "unk__0" not in dynamic and "--dim NAME=VALUE" not in dynamic
    assert "no --dim can pin it: every input dimension of the model is static" in dynamic
    with pytest.raises(ShapeError, match=r"dimensions \['unk__0'\] are not dim_params of the model; "
                                         r"it has none"):
        extract(model, dims={"unk__0": 3})


def _function_model() -> onnx.ModelProto:
    """Y = Perm(X), Perm a model-local function holding one Transpose."""
    perm = onnx.helper.make_function("local", "Perm", ["a"], ["b"],
                                     [helper.make_node("Transpose", ["a"], ["b"], perm=[0, 2, 3, 1])],
                                     [helper.make_opsetid("", 17)])
    graph = helper.make_graph([helper.make_node("Perm", ["X"], ["Y"], domain="local")], "f",
                              [_vi("X", TensorProto.FLOAT, [1, 3, 4, 5])],
                              [_vi("Y", TensorProto.FLOAT, None)])
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    return helper.make_model(graph, opset_imports=opsets, functions=[perm], ir_version=10)


def test_layout_nodes_of_functions_are_counted_and_reported(tmp_path, capsys):
    from ort_layouts.frontends.cli import main
    from ort_layouts.models.extract import format_coverage, layout_nodes_in_functions

    model = _function_model()
    assert extract(model) == [] and layout_nodes_in_functions(model) == 1
    assert layout_nodes_in_functions(model, ops=["Pad"]) == 0
    assert format_coverage([], in_functions=1)[-1].startswith("1 layout node in model-local functions not "
                                                              "examined")
    onnx.save(model, tmp_path / "f.onnx")
    assert _cli([str(tmp_path / "f.onnx")]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("1 layout node in model-local functions not "
                                                               "examined")
    assert main(["validate", "--model", str(tmp_path / "f.onnx"), "--provider", "cpu"]) == 3
    assert capsys.readouterr().err.strip().splitlines() == [
        f"ort-layouts: nothing to validate: {tmp_path / 'f.onnx'} has no layout node in its main graph or "
        "subgraphs (1 in model-local functions, not examined); nothing written"]


# ---- small constant inputs stored as external data ----------------------------------------------
def _external_params_model(folder: Path) -> Path:
    nodes = [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad"),
             helper.make_node("Reshape", ["y", "shape"], ["z"], name="reshape")]
    model = _model(nodes, [_vi("x", TensorProto.FLOAT, (1, 2, 3, 4))], [_vi("z", TensorProto.FLOAT, None)],
                   [_ints("pads", [0, 0, 1, 2, 0, 0, 3, 4]), _ints("shape", [2, -1])])
    folder.mkdir()
    onnx.save(model, folder / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0)
    return folder / "m.onnx"


def test_external_parameters_are_read_from_the_model_folder(tmp_path):
    path = _external_params_model(tmp_path / "m")
    pad, reshape = extract(path)
    assert pad.flags == () and reshape.flags == ()
    assert pad.to_case().pads == (0, 0, 1, 2, 0, 0, 3, 4) and pad.output_shape == (1, 2, 7, 10)
    assert reshape.output_shape == (2, 70)
    # a ModelProto has no folder to read from: flagged as before
    pad, _ = extract(onnx.load(path, load_external_data=False))
    assert any("stored as external data in 'm.data', not loaded" in f for f in pad.flags)
    (tmp_path / "m" / "m.data").unlink()  # a file that is gone: flagged, naming it; no exception
    pad, reshape = extract(path)
    gone = f"there is no file {str(tmp_path / 'm' / 'm.data')!r}"
    assert pad.to_case() is None
    assert (f"runtime-input: pads input 'pads' is stored as external data in 'm.data', which could not be "
            f"read ({gone}); the DML EP reads pads on the CPU when the graph is built") in pad.flags
    # the Reshape's input shape follows from the pads: its flag names the file, and no --dim
    # (every input dimension of the model is static)
    (dynamic,) = [f for f in reshape.flags if f.startswith("dynamic")]
    assert dynamic == (f"dynamic: the shape of 'y' is unknown (shape inference could not compute it); the "
                       f"external data 'm.data' could not be read ({gone})")
    assert [c.without_case for c in model_coverage(path)] == [(("pad", dynamic),), (("reshape", dynamic),)]


def test_bool_pad_with_a_constant_value_is_described():
    """Pad of a bool tensor with constant_value True: a PADDING1 of UINT8 padding with 1."""
    m = _model([helper.make_node("Pad", ["x", "p", "v"], ["y"])], [_vi("x", TensorProto.BOOL, (2, 3))],
               [_vi("y", TensorProto.BOOL, None)],
               [_ints("p", [1, 0, 0, 2]), numpy_helper.from_array(np.array(True), "v")])
    (op,) = extract(m)
    assert op.flags == () and op.dml_operator["operator"] == "DML_OPERATOR_PADDING1"
    assert op.params["value_hex"] == "01" and op.output_shape == (3, 5)
    padding = PaddingOp.from_dict(op.dml_operator)
    x = np.array([[1, 0, 1], [0, 0, 1]], dtype=np.uint8)
    expected = np.pad(x.astype(bool), ((1, 0), (0, 2)), constant_values=True).astype(np.uint8)
    assert np.array_equal(output_values(padding, x).reshape(3, 5), expected)


@pytest.mark.parametrize(("opset", "since", "kernel"), [
    (11, (1, 11), True), (13, (13, 13), True), (19, (13, 19), True), (21, (21, 21), True),
    (22, (21, 21), True), (23, (23, 23), False), (24, (24, 24), False),
])
def test_transpose_and_pad_at_opsets_without_a_dml_kernel_are_flagged(opset, since, kernel):
    """The DML EP registers Transpose-1, -13, -21 and Pad-2, -11, -13, -18, -19, -21
    (OperatorRegistration.cpp); an opset resolves to a schema version by ONNX's history."""
    assert (onnx.defs.get_schema("Transpose", opset).since_version,
            onnx.defs.get_schema("Pad", opset).since_version) == since
    m = _model([helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
                helper.make_node("Pad", ["x", "p"], ["y"])],
               [_vi("x", TensorProto.FLOAT, (2, 3))],
               [_vi("t", TensorProto.FLOAT, None), _vi("y", TensorProto.FLOAT, None)],
               [_ints("p", [0, 1, 1, 0])], opset=opset)
    transpose, pad = extract(m)
    for op, version in ((transpose, since[0]), (pad, since[1])):
        no_kernel = [f for f in op.flags if f.startswith("no-kernel")]
        if kernel:
            assert no_kernel == []
        else:
            assert len(no_kernel) == 1 and f"resolves to {op.op_type}-{version}" in no_kernel[0]


def _external_constants_model(folder: Path) -> Path:
    """The model above with its pads and shape as Constant nodes, and a large Constant W that no
    layout node takes, each value stored as external data (``convert_attribute``)."""
    nodes = [helper.make_node("Constant", [], ["pads"], value=_ints("pads", [0, 0, 1, 2, 0, 0, 3, 4])),
             helper.make_node("Constant", [], ["shape"], value=_ints("shape", [2, -1])),
             helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(
                 np.arange(140, dtype=np.float32).reshape(2, 70), "w")),
             helper.make_node("Pad", ["x", "pads"], ["y"], name="pad"),
             helper.make_node("Reshape", ["y", "shape"], ["r"], name="reshape"),
             helper.make_node("Add", ["r", "w"], ["z"], name="add")]
    model = _model(nodes, [_vi("x", TensorProto.FLOAT, (1, 2, 3, 4))], [_vi("z", TensorProto.FLOAT, None)],
                   [])
    folder.mkdir()
    onnx.save(model, folder / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0,
              convert_attribute=True)
    return folder / "m.onnx"


def test_external_constant_values_are_read_from_the_model_folder(tmp_path, monkeypatch):
    path = _external_constants_model(tmp_path / "m")
    stored = onnx.load(path, load_external_data=False)
    assert all(n.attribute[0].t.data_location == TensorProto.EXTERNAL for n in stored.graph.node[:3])
    monkeypatch.chdir(tmp_path)  # not the model's folder: data is read from the model's folder only
    pad, reshape = extract(path)
    assert pad.flags == () and reshape.flags == ()
    assert pad.to_case().pads == (0, 0, 1, 2, 0, 0, 3, 4) and pad.output_shape == (1, 2, 7, 10)
    assert reshape.output_shape == (2, 70)
    # a ModelProto has no folder to read from: its node is flagged, and nothing raises
    pad, reshape = extract(stored)
    assert any("stored as external data in 'm.data', not loaded" in f for f in pad.flags)
    assert pad.to_case() is None


def test_extract_loads_the_external_data_of_the_constant_value_it_reads(tmp_path, monkeypatch):
    """A Constant node's value is its first value attribute (value_ints here, as Graph.read
    takes it): extract loads no external data of a later ``value`` tensor that nothing reads."""
    from ort_layouts.models import extract as extract_module

    constant = helper.make_node("Constant", [], ["shape"], value_ints=[2, -1])
    constant.attribute.append(helper.make_attribute("value", _ints("v", [6, -1])))
    model = _model([constant, helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                   [_vi("x", TensorProto.FLOAT, (1, 2, 3, 4))], [_vi("y", TensorProto.FLOAT, None)])
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0,
              convert_attribute=True)
    loaded: list[str] = []
    load = extract_module.load_external_data_for_tensor
    monkeypatch.setattr(extract_module, "load_external_data_for_tensor",
                        lambda tensor, folder: (loaded.append(tensor.name), load(tensor, folder)))
    (reshape,) = extract(tmp_path / "m.onnx")
    assert loaded == []
    assert reshape.params["target_shape"] == (2, -1) and reshape.output_shape == (2, 12)  # 24 elements


def test_a_loop_carried_tensor_of_unknown_shape_is_not_advised_a_pin():
    """A Loop body's carried tensor that grows each iteration (Concat with itself) has no shape
    shape inference computes; the model's inputs are static, so the Transpose of it is flagged
    without the --dim advice a pin could not follow."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Concat", ["acc_in", "acc_in"], ["acc_out"], axis=0),
         helper.make_node("Transpose", ["acc_in"], ["t_out"], name="t", perm=[1, 0])],
        "body",
        [_vi("i", TensorProto.INT64, []), _vi("cond_in", TensorProto.BOOL, []),
         _vi("acc_in", TensorProto.FLOAT, None)],
        [_vi("cond_out", TensorProto.BOOL, []), _vi("acc_out", TensorProto.FLOAT, None),
         _vi("t_out", TensorProto.FLOAT, None)])
    model = _model([helper.make_node("Loop", ["n", "c", "x"], ["acc", "ts"], body=body)],
                   [_vi("x", TensorProto.FLOAT, [2, 3])], [_vi("acc", TensorProto.FLOAT, None),
                                                            _vi("ts", TensorProto.FLOAT, None)],
                   [_ints("n", 3), numpy_helper.from_array(np.array(True), "c")])
    (op,) = extract(model, ops=["Transpose"])
    assert op.node_name == "Loop_0/body/t" and op.to_case() is None
    (dynamic,) = [f for f in op.flags if f.startswith("dynamic")]
    assert dynamic == ("dynamic: the shape of 'acc_in' is unknown (shape inference could not compute it); "
                       "no --dim can pin it: every input dimension of the model is static (the shape depends "
                       "on data, or on a Loop or Scan body's state)")
