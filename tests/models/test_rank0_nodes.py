"""Layout nodes of a real model on a rank-0 tensor make cases where the operator takes rank 0, as
the suite's rank-0 cases do (Identity, Reshape, Unsqueeze, Squeeze, Expand, Flatten, Tile), and
pass on the CPU EP; a rank-0 Transpose (no DirectML operator) and the operators ONNX does not
define at rank 0 (Pad, Slice, Concat, Split) make none, with a flag that says why (no
"dynamic" suggestion to pin a dimension).

Output shapes are asked of ONNX's reference evaluator.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.models.extract import coverage_of, extract

SCALAR = np.array(1.5, dtype=np.float32)


def _model(op: str, inits: dict[str, list[int]] | None = None, extra: tuple[str, ...] = (),
           opset: int = 17, **attributes: Any) -> onnx.ModelProto:
    """One ``op`` node on a float scalar ``x``, its parameter inputs int64 initializers."""
    inits = inits or {}
    node = helper.make_node(op, ["x", *extra, *inits], ["y"], name="n", **attributes)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


MAKES_A_CASE = {
    "identity": _model("Identity"),
    "reshape-to-1": _model("Reshape", {"s": [1]}),
    "reshape-to-scalar": _model("Reshape", {"s": []}),
    "unsqueeze": _model("Unsqueeze", {"a": [0]}),
    "squeeze": _model("Squeeze"),
    "expand-to-2x3": _model("Expand", {"s": [2, 3]}),
    "expand-to-scalar": _model("Expand", {"s": []}),
    "flatten": _model("Flatten", axis=0),
    "tile": _model("Tile", {"r": []}),
}


@pytest.mark.parametrize("name", list(MAKES_A_CASE))
def test_a_rank0_node_makes_a_case_that_passes(name: str) -> None:
    model = MAKES_A_CASE[name]
    (op,) = extract(model)
    expected = ReferenceEvaluator(model).run(None, {"x": SCALAR})[0]
    assert op.input_shape == ()
    assert op.output_shape == expected.shape
    case = op.to_case()
    assert case is not None and case.shape == ()
    (result,) = run_cases([case], provider="cpu")
    assert result.status is Status.PASS, result


NO_CASE = {
    "transpose": (_model("Transpose"), "rank-0:"),
    "pad": (_model("Pad", {"p": []}), "shape: a rank-0 Pad is not defined"),
    "slice": (_model("Slice", {"s": [], "e": []}), "shape:"),
    "concat": (_model("Concat", extra=("x",), axis=0), "shape:"),
    "split": (_model("Split", axis=0), "shape:"),
}


@pytest.mark.parametrize("name", list(NO_CASE))
def test_a_rank0_node_the_operator_cannot_take_makes_no_case_and_says_why(name: str) -> None:
    model, tag = NO_CASE[name]
    (op,) = extract(model)
    assert op.to_case() is None
    assert not [f for f in op.flags if f.startswith("dynamic")], op.flags
    (coverage,) = coverage_of([op])
    ((_, reason),) = coverage.without_case
    assert reason.startswith(tag), reason
