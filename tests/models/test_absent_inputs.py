"""A node input named "" is absent: where the operator's schema makes that input optional
(Slice's axes, Pad's constant_value, Split's split) the node is read without it; where the
schema requires it (Reshape's shape, Transpose's data, one of Concat's inputs) ONNX Runtime
refuses the model or fails the node, so extract flags it "input:" and it makes no case.

What ONNX Runtime refuses is asked of onnxruntime itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ort_layouts.models.extract import coverage_of, extract

ort.set_default_logger_severity(4)

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _model(op: str, inputs: list[str], inits: dict[str, list[int]], opset: int = 18, outputs: int = 1,
           **attributes: Any) -> onnx.ModelProto:
    node = helper.make_node(op, inputs, [f"y{k}" for k in range(outputs)], name="n", **attributes)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, None)
                               for k in range(outputs)],
                              [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _ort_outputs(model: onnx.ModelProto) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, {"x": X}))


OPTIONAL = {
    "slice-axes": _model("Slice", ["x", "s", "e", "", "st"],
                         {"s": [0, 1, 1], "e": [2, 3, 4], "st": [1, 1, 2]}),
    "pad-constant": _model("Pad", ["x", "p", "", "a"], {"p": [1, 1], "a": [1]}),
    "split-split": _model("Split", ["x", ""], {}, outputs=2, axis=2, num_outputs=2),
}


@pytest.mark.parametrize("name", list(OPTIONAL))
def test_an_absent_optional_input_is_read_as_left_out(name: str) -> None:
    model = OPTIONAL[name]
    (op,) = extract(model)
    assert not [f for f in op.flags if f.startswith("input:")], op.flags
    expected = ReferenceEvaluator(model).run(None, {"x": X})
    assert [r.shape for r in _ort_outputs(model)] == [e.shape for e in expected]
    assert op.output_shape == expected[0].shape
    assert op.to_case() is not None


REQUIRED = {
    "reshape-shape": (_model("Reshape", ["x", ""], {}), "input 1 (shape)"),
    "transpose-data": (_model("Transpose", [""], {}), "input 0 (data)"),
    "concat-input": (_model("Concat", ["x", "", "x"], {}, axis=0), "input 1 (inputs)"),
}


@pytest.mark.parametrize("name", list(REQUIRED))
def test_an_absent_required_input_is_flagged_and_makes_no_case(name: str) -> None:
    model, which = REQUIRED[name]
    with pytest.raises(Exception, match=r"empty string|input count mismatch"):
        _ort_outputs(model)  # refused when loaded (a single input), or when the node runs (Concat)
    (op,) = extract(model)
    flags = [f for f in op.flags if f.startswith("input:")]
    assert len(flags) == 1 and which in flags[0] and "absent" in flags[0], op.flags
    assert not [f for f in op.flags if f.startswith("dynamic")], op.flags
    assert op.to_case() is None
    (coverage,) = coverage_of([op])
    assert coverage.without_case == (("n", flags[0]),)
