"""Nodes whose attributes or parameter inputs ONNX Runtime refuses to load are flagged and make
no case; the variants it takes are read as before.

What ONNX Runtime refuses is asked of onnxruntime itself (each model is loaded and run on the
CPU EP); what is valid comes from ONNX's operator schemas (an attribute's declared type, an
input's allowed element types) and from ONNX Runtime's kernels (a 1-D parameter tensor).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_layouts.models.extract import extract, model_cases
from ort_layouts.operators.expected import expected_output

ort.set_default_logger_severity(4)


def _model(op: str, shape: tuple[int, ...], inputs: list[str], inits: dict[str, Any], opset: int,
           outputs: int = 1, **attributes: Any) -> onnx.ModelProto:
    """One ``op`` node on a float input ``x`` of ``shape``; ``inits`` are initializers (numpy
    arrays, kept in their dtype and rank), ``attributes`` attribute values as given
    (``helper.make_attribute`` infers their type: ``perm=[1.0, 0.0]`` is FLOATS)."""
    node = helper.make_node(op, ["x", *inputs], [f"y{k}" for k in range(outputs)], name="n")
    node.attribute.extend(helper.make_attribute(k, v) for k, v in attributes.items())
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, None) for k in range(outputs)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _input(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(math.prod(shape), dtype=np.float32).reshape(shape)


def _ort_outputs(model: onnx.ModelProto, shape: tuple[int, ...]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(o) for o in session.run(None, {"x": _input(shape)})]


i64, i32, f32 = np.int64, np.int32, np.float32

# (id, model, the flag's start, fragments it names)
REFUSED = [
    ("transpose-perm-floats", _model("Transpose", (2, 3), [], {}, 17, perm=[1.0, 0.0]),
     "attribute:", ["'perm' is FLOATS [1.0, 0.0]", "valid: INTS (a list of integers)"]),
    ("transpose-perm-int", _model("Transpose", (2, 3), [], {}, 17, perm=1),
     "attribute:", ["'perm' is INT 1", "valid: INTS"]),
    ("depth-to-space-blocksize-string", _model("DepthToSpace", (1, 4, 2, 2), [], {}, 17, blocksize="2"),
     "attribute:", ["'blocksize' is STRING '2'", "valid: INT (an integer)"]),
    ("depth-to-space-blocksize-float", _model("DepthToSpace", (1, 4, 2, 2), [], {}, 13, blocksize=2.0),
     "attribute:", ["'blocksize' is FLOAT 2.0", "valid: INT"]),
    ("concat-axis-float", _model("Concat", (2, 3), ["x"], {}, 13, axis=1.0),
     "attribute:", ["'axis' is FLOAT 1.0", "valid: INT"]),
    ("flatten-axis-float", _model("Flatten", (2, 3), [], {}, 13, axis=1.0),
     "attribute:", ["'axis' is FLOAT 1.0", "valid: INT"]),
    ("reshape-allowzero-float", _model("Reshape", (2, 2), ["s"], {"s": np.array([2, 2], i64)}, 14,
                                       allowzero=0.0),
     "attribute:", ["'allowzero' is FLOAT 0.0", "valid: INT"]),
    ("pad-mode-int", _model("Pad", (2, 2), ["p"], {"p": np.array([1, 1, 1, 1], i64)}, 13, mode=1),
     "attribute:", ["'mode' is INT 1", "valid: STRING (a string)"]),
    ("pad-2-pads-floats", _model("Pad", (2, 2), [], {}, 2, pads=[1.0, 1.0, 1.0, 1.0]),
     "attribute:", ["'pads' is FLOATS [1.0, 1.0, 1.0, 1.0]", "valid: INTS"]),
    ("slice-1-starts-floats", _model("Slice", (4,), [], {}, 1, starts=[1.0], ends=[3]),
     "attribute:", ["'starts' is FLOATS [1.0]", "valid: INTS"]),
    ("split-2-split-floats", _model("Split", (4,), [], {}, 2, outputs=2, split=[1.0, 3.0]),
     "attribute:", ["'split' is FLOATS [1.0, 3.0]", "valid: INTS"]),
    ("split-18-num-outputs-float", _model("Split", (4,), [], {}, 18, outputs=2, axis=0, num_outputs=2.0),
     "attribute:", ["'num_outputs' is FLOAT 2.0", "valid: INT"]),
    ("unsqueeze-11-axes-int", _model("Unsqueeze", (3,), [], {}, 11, axes=0),
     "attribute:", ["'axes' is INT 0", "valid: INTS"]),
    ("space-to-depth-13-mode", _model("SpaceToDepth", (1, 4, 2, 2), [], {}, 13, blocksize=2, mode="DCR"),
     "attribute:", ["SpaceToDepth has no attribute 'mode' at SpaceToDepth-13", "valid: ['blocksize']",
                    "unrecognized attribute"]),
    ("transpose-unknown-attribute", _model("Transpose", (2, 3), [], {}, 17, perm=[1, 0], axis=1),
     "attribute:", ["Transpose has no attribute 'axis'", "valid: ['perm']"]),
    ("slice-10-leftover-starts", _model("Slice", (4,), ["s", "e"], {"s": np.array([1], i64),
                                                                   "e": np.array([3], i64)}, 10, starts=[1]),
     "attribute:", ["Slice has no attribute 'starts' at Slice-10", "valid: []"]),
    ("reshape-shape-float32", _model("Reshape", (2, 2), ["s"], {"s": np.array([2.0, 2.0], f32)}, 13),
     "input:", ["(shape) 's' is float32", "valid: ['int64']"]),
    ("reshape-shape-int32", _model("Reshape", (2, 2), ["s"], {"s": np.array([2, 2], i32)}, 13),
     "input:", ["(shape) 's' is int32", "valid: ['int64']"]),
    ("reshape-shape-2d", _model("Reshape", (2, 2), ["s"], {"s": np.array([[2, 2]], i64)}, 13),
     "input:", ["(shape) 's' has rank 2 (shape [1, 2])", "valid: a 1-D tensor"]),
    ("reshape-shape-scalar", _model("Reshape", (4,), ["s"], {"s": np.array(4, i64)}, 13),
     "input:", ["(shape) 's' has rank 0 (shape [])", "valid: a 1-D tensor"]),
    ("pad-pads-2d", _model("Pad", (2, 2), ["p"], {"p": np.array([[1, 1], [1, 1]], i64)}, 13),
     "input:", ["(pads) 'p' has rank 2 (shape [2, 2])", "valid: a 1-D tensor"]),
    ("pad-pads-int32", _model("Pad", (2, 2), ["p"], {"p": np.array([1, 1, 1, 1], i32)}, 13),
     "input:", ["(pads) 'p' is int32", "valid: ['int64']"]),
    ("pad-axes-2d", _model("Pad", (2, 2), ["p", "", "a"], {"p": np.array([1, 1], i64),
                                                          "a": np.array([[1]], i64)}, 18),
     "input:", ["(axes) 'a' has rank 2 (shape [1, 1])", "valid: a 1-D tensor"]),
    ("pad-axes-scalar", _model("Pad", (2, 2), ["p", "", "a"], {"p": np.array([1, 1], i64),
                                                              "a": np.array(1, i64)}, 18),
     "input:", ["(axes) 'a' has rank 0", "valid: a 1-D tensor"]),
    ("expand-shape-float32", _model("Expand", (2, 2), ["s"], {"s": np.array([2, 2], f32)}, 13),
     "input:", ["(shape) 's' is float32", "valid: ['int64']"]),
    ("tile-repeats-2d", _model("Tile", (2, 2), ["r"], {"r": np.array([[2, 2]], i64)}, 13),
     "input:", ["(repeats) 'r' has rank 2 (shape [1, 2])", "valid: a 1-D tensor"]),
    ("tile-repeats-int32", _model("Tile", (2, 2), ["r"], {"r": np.array([2, 2], i32)}, 13),
     "input:", ["(repeats) 'r' is int32", "valid: ['int64']"]),
    ("tile-repeats-scalar", _model("Tile", (2,), ["r"], {"r": np.array(2, i64)}, 13),
     "input:", ["(repeats) 'r' has rank 0", "valid: a 1-D tensor"]),
    ("slice-starts-float32", _model("Slice", (4,), ["s", "e"], {"s": np.array([1.0], f32),
                                                               "e": np.array([3.0], f32)}, 13),
     "input:", ["(starts) 's' is float32", "valid: ['int32', 'int64']"]),
    ("slice-starts-2d", _model("Slice", (4,), ["s", "e"], {"s": np.array([[1]], i64),
                                                          "e": np.array([[3]], i64)}, 13),
     "input:", ["(starts) 's' has rank 2 (shape [1, 1])", "valid: a 1-D tensor"]),
    ("slice-starts-scalar", _model("Slice", (4,), ["s", "e"], {"s": np.array(1, i64),
                                                              "e": np.array(3, i64)}, 13),
     "input:", ["(starts) 's' has rank 0", "valid: a 1-D tensor"]),
    ("slice-int32-and-int64", _model("Slice", (4,), ["s", "e"], {"s": np.array([1], i32),
                                                                "e": np.array([3], i64)}, 13),
     "input:", ["(starts) 's' is int32 and input 2 (ends) 'e' is int64", "valid: one type for both",
                "Tind"]),
    ("split-split-2d", _model("Split", (4,), ["s"], {"s": np.array([[1, 3]], i64)}, 13, outputs=2, axis=0),
     "input:", ["(split) 's' has rank 2 (shape [1, 2])", "valid: a 1-D tensor"]),
    ("split-split-int32", _model("Split", (4,), ["s"], {"s": np.array([1, 3], i32)}, 13, outputs=2, axis=0),
     "input:", ["(split) 's' is int32", "valid: ['int64']"]),
    ("squeeze-axes-scalar", _model("Squeeze", (1, 3), ["a"], {"a": np.array(0, i64)}, 13),
     "input:", ["(axes) 'a' has rank 0", "valid: a 1-D tensor"]),
    ("squeeze-axes-2d", _model("Squeeze", (1, 3), ["a"], {"a": np.array([[0]], i64)}, 13),
     "input:", ["(axes) 'a' has rank 2", "valid: a 1-D tensor"]),
    ("squeeze-axes-int32", _model("Squeeze", (1, 3), ["a"], {"a": np.array([0], i32)}, 13),
     "input:", ["(axes) 'a' is int32", "valid: ['int64']"]),
    ("unsqueeze-axes-2d", _model("Unsqueeze", (3,), ["a"], {"a": np.array([[0]], i64)}, 13),
     "input:", ["(axes) 'a' has rank 2", "valid: a scalar or a 1-D tensor"]),
]


@pytest.mark.parametrize(("model", "tag", "named"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_a_node_onnx_runtime_refuses_is_flagged_and_makes_no_case(model: onnx.ModelProto, tag: str,
                                                                 named: list[str]) -> None:
    shape = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim)
    with pytest.raises(Exception):  # noqa: B017 (load or run: ONNX Runtime's errors have several types)
        _ort_outputs(model, shape)
    (node,) = extract(model)
    assert node.to_case() is None and model_cases(model) == []
    assert node.dml_operator is None
    refusals = [f for f in node.flags if f.startswith(tag)]
    assert len(refusals) == 1, node.flags
    for fragment in [*named, "ONNX Runtime refuses the model"]:
        assert fragment in refusals[0], (fragment, refusals[0])


# variants ONNX Runtime takes: read, and the case computes what ONNX Runtime computes
TAKEN = [
    ("slice-int32-inputs", _model("Slice", (4,), ["s", "e"], {"s": np.array([1], i32),
                                                             "e": np.array([3], i32)}, 13)),
    ("expand-shape-2d", _model("Expand", (2, 1), ["s"], {"s": np.array([[2, 3]], i64)}, 13)),
    ("expand-shape-scalar", _model("Expand", (1,), ["s"], {"s": np.array(3, i64)}, 13)),
    ("unsqueeze-axes-scalar", _model("Unsqueeze", (3,), ["a"], {"a": np.array(0, i64)}, 13)),
    ("transpose-perm-ints", _model("Transpose", (2, 3), [], {}, 13, perm=[1, 0])),
    ("pad-2-pads-ints", _model("Pad", (2, 2), [], {}, 2, pads=[1, 0, 0, 1])),
    ("transpose-1", _model("Transpose", (2, 3), [], {}, 1, perm=[1, 0])),
]


@pytest.mark.parametrize("model", [t[1] for t in TAKEN], ids=[t[0] for t in TAKEN])
def test_a_node_onnx_runtime_takes_is_read_and_makes_its_case(model: onnx.ModelProto) -> None:
    shape = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim)
    (want,) = _ort_outputs(model, shape)
    (node,) = extract(model)
    assert not [f for f in node.flags if f.startswith(("attribute:", "input:"))], node.flags
    case = node.to_case()
    assert case is not None
    got = expected_output(case, _input(shape))
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


# versions ONNX Runtime's CPU EP has no kernel for: the node is described (its DirectML operator
# too), and flagged; it makes no case
NO_CPU_KERNEL = [
    ("concat-1", _model("Concat", (2, 3), ["x"], {}, 3, axis=0), "opset 3 resolves to Concat-1",
     "kernels for Concat versions 4 and up"),
    ("pad-1", _model("Pad", (2, 2), [], {}, 1, paddings=[1, 0, 0, 1]), "opset 1 resolves to Pad-1",
     "kernels for Pad versions 2 and up"),
    ("split-1", _model("Split", (4,), [], {}, 1, outputs=2, axis=0), "opset 1 resolves to Split-1",
     "kernels for Split versions 2 and up"),
]


@pytest.mark.parametrize(("model", "version", "kernels"), [r[1:] for r in NO_CPU_KERNEL],
                         ids=[r[0] for r in NO_CPU_KERNEL])
def test_a_node_the_cpu_ep_has_no_kernel_for_is_flagged_and_makes_no_case(
        model: onnx.ModelProto, version: str, kernels: str) -> None:
    shape = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim)
    with pytest.raises(Exception, match="Could not find an implementation"):
        _ort_outputs(model, shape)
    (node,) = extract(model)
    (flag,) = [f for f in node.flags if f.startswith("no-cpu-kernel:")]
    assert version in flag and kernels in flag and f"ONNX Runtime {ort.__version__}" in flag
    assert node.to_case() is None and model_cases(model) == []


@pytest.mark.parametrize("model", [_model("Concat", (2, 3), ["x"], {}, 4, axis=0),
                                   _model("Split", (4,), [], {}, 2, outputs=2, axis=0)],
                         ids=["concat-4", "split-2"])
def test_the_first_versions_the_cpu_ep_has_kernels_for_make_cases(model: onnx.ModelProto) -> None:
    shape = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim)
    assert _ort_outputs(model, shape)  # ONNX Runtime runs them
    (node,) = extract(model)
    assert node.flags == () and node.to_case() is not None


def test_a_constant_whose_data_its_dims_do_not_hold_flags_its_node_and_the_others_are_read(
        tmp_path: Any) -> None:
    """Reshape's shape initializer of dims [3] holds two int64s: extract stopped on numpy's
    "cannot reshape array of size 2 into shape (3,)", naming neither the tensor nor the node,
    and listed no other node. ONNX Runtime refuses the model."""
    shape = onnx.TensorProto(name="sh", data_type=TensorProto.INT64, dims=[3],
                             raw_data=np.array([6, 4], dtype=np.int64).tobytes())
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "sh"], ["y"]),
         helper.make_node("Transpose", ["x"], ["z"], perm=[1, 0])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], [shape])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    with pytest.raises(Exception, match="size"):
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    reshape, transpose = extract(path)
    (flag,) = reshape.flags
    assert flag.startswith("input: the constant 'sh' (dims [3]) cannot be read: ")
    assert reshape.to_case() is None
    assert transpose.flags == () and transpose.output_shape == (6, 4)
    assert [c.op for c in model_cases(path)] == ["Transpose"]
