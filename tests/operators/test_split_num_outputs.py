"""Split's num_outputs is checked when a case is made, before any list of sizes: the counts
ONNX Runtime's CPU EP refuses ("Split sizes would produce a negative final split") are refused,
the ones it runs are accepted with its output sizes, and a huge count is a ShapeError at once
(it used to be an OverflowError or a MemoryError from building the sizes)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from ort_layouts._errors import ShapeError
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import output_shapes
from ort_layouts.operators.split import MAX_SPLIT_OUTPUTS, check_num_outputs, split_sizes


def _ort_sizes(dim: int, n: int) -> tuple[int, ...] | None:
    """The output sizes along axis 0 of a Split-18 of (dim, 2) into n outputs on the CPU EP,
    or None where ONNX Runtime refuses the count."""
    node = helper.make_node("Split", ["x"], [f"y{k}" for k in range(n)], axis=0, num_outputs=n)
    outputs = [helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, None) for k in range(n)]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [dim, 2])],
                              outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    try:
        outs = session.run(None, {"x": np.zeros((dim, 2), np.float32)})
    except Exception as e:  # ONNX Runtime's own refusal
        assert "negative final split" in str(e)
        return None
    return tuple(o.shape[0] for o in outs)


@pytest.mark.parametrize("dim", [1, 2, 3, 4, 5, 7])
def test_a_case_takes_exactly_the_num_outputs_onnx_runtime_runs(dim: int) -> None:
    for n in range(1, dim + 4):
        want = _ort_sizes(dim, n)
        if want is None:
            with pytest.raises(ShapeError, match=f"Split num_outputs {n} cannot cut dimension {dim}"):
                Case("Split", "float32", (dim, 2), axis=0, num_outputs=n)
        else:
            case = Case("Split", "float32", (dim, 2), axis=0, num_outputs=n)
            assert [s[0] for s in output_shapes(case)] == list(want), (dim, n)


@pytest.mark.parametrize("n", [300_000_000, 2**63 - 1], ids=str)
def test_a_huge_num_outputs_is_a_shape_error_before_any_sizes_are_made(n: int) -> None:
    with pytest.raises(ShapeError) as raised:
        Case("Split", "float32", (3, 4), axis=0, num_outputs=n)
    assert str(raised.value).startswith(f"Split num_outputs {n} cannot cut dimension 3: chunks of 1 leave "
                                        f"{3 - (n - 1)} for the last output; valid:")
    with pytest.raises(ShapeError):
        split_sizes(3, n, num_outputs=n)


@pytest.mark.parametrize("n", [10**20, 99999999999999999999, 2**63], ids=str)
def test_a_num_outputs_past_int64_is_refused_as_no_model_holds_it(n: int) -> None:
    with pytest.raises(ShapeError) as raised:
        Case("Split", "float32", (3, 4), axis=0, num_outputs=n)
    assert str(raised.value).startswith(f"num_outputs {n} does not fit int64")
    with pytest.raises(ShapeError):
        split_sizes(3, n, num_outputs=n)


def test_an_empty_dimension_is_cut_into_at_most_max_split_outputs() -> None:
    """Any count cuts a 0-sized dimension (ONNX Runtime runs (0, 2) into 3 empty outputs); the
    count is capped so that no huge list of sizes is made."""
    assert _ort_sizes(0, 3) == (0, 0, 0)
    assert check_num_outputs(0, 3) == 0
    assert [s[0] for s in output_shapes(Case("Split", "float32", (0, 2), axis=0, num_outputs=3))] == [0, 0, 0]
    over = f"Split num_outputs {2**62} is over the 65536 outputs a Split is worked out for; valid: 1..65536"
    with pytest.raises(ShapeError) as raised:
        Case("Split", "float32", (0, 2), axis=0, num_outputs=2**62)
    assert str(raised.value) == over


def test_max_split_outputs_is_65536_and_its_edge_is_exact() -> None:
    assert MAX_SPLIT_OUTPUTS == 65536
    assert check_num_outputs(0, 65536) == 0
    with pytest.raises(ShapeError) as raised:
        check_num_outputs(0, 65537)
    assert str(raised.value) == ("Split num_outputs 65537 is over the 65536 outputs a Split is worked out "
                                 "for; valid: 1..65536")


@pytest.mark.parametrize("n", [0, -3])
def test_a_num_outputs_below_one_is_refused(n: int) -> None:
    with pytest.raises(ShapeError, match=f"Split num_outputs {n} must be at least 1"):
        Case("Split", "float32", (3, 4), axis=0, num_outputs=n)
