"""ONNX's own node tests for every registered op: read as cases through the registry's operator
modules, run through the graph builders and runner on the CPU EP, and the oracle's expected
output(s) equal to ONNX's (an independent source), bit for bit."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ort_layouts._errors import ModelError
from ort_layouts.engine.onnx_node_tests import (
    NODE_TEST_OPS,
    NodeTest,
    load_node_test,
    materialize_node_tests,
    onnx_node_tests,
)
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.expected import expected_output, expected_outputs
from ort_layouts.operators.registry import CASE_OPS

SKIPPED: list[tuple[str, str]] = []
TESTS = onnx_node_tests(skipped=SKIPPED)
IDS = [t.name for t in TESTS]

# a SpaceToDepth-28 of mode CRD makes no case (the DML EP reads no mode: operators/depth_space.py)
_CRD_S2D = "test_spacetodepth_crd_mode_example"


def test_every_registered_op_is_covered() -> None:
    assert set(NODE_TEST_OPS) == set(CASE_OPS)
    per_op = Counter(t.case.op for t in TESTS)
    assert set(per_op) == set(CASE_OPS), f"ops without node-test cases: {set(CASE_OPS) - set(per_op)}"
    names = set(IDS)
    assert {"test_transpose_default", "test_expand_dim_changed", "test_constant_pad", "test_edge_pad",
            "test_reflect_pad", "test_wrap_pad", "test_constant_pad_axes", "test_slice_neg_steps",
            "test_concat_1d_axis_0", "test_split_equal_parts_1d_opset18", "test_tile",
            "test_depthtospace_crd_mode_example", "test_spacetodepth", "test_reshape_negative_dim",
            "test_flatten_axis0", "test_squeeze", "test_unsqueeze_axis_0", "test_identity"} <= names


def test_tests_that_make_no_case_say_why() -> None:
    # every single-node test of a registered op is a case or is named with a reason
    names = [t.name for t in TESTS] + [name for name, _ in SKIPPED]
    assert len(names) == len(set(names))
    assert all(reason.startswith(name + ":") for name, reason in SKIPPED)
    others = [name for name, _ in SKIPPED if name != _CRD_S2D]
    assert len(others) <= 1, SKIPPED  # at most a test with a 0-sized axis


def test_a_space_to_depth_of_mode_crd_is_refused_not_read_as_dcr(tmp_path: Path) -> None:
    assert _CRD_S2D not in IDS
    assert dict(SKIPPED)[_CRD_S2D] == (
        f"{_CRD_S2D}: makes no case (mode: SpaceToDepth mode 'CRD' (opset 28) makes no case; valid: 'DCR', "
        "the one order a SpaceToDepth case describes (DmlOperatorSpaceToDepth builds DML_SPACE_TO_DEPTH, "
        "whose order is DCR, for SpaceToDepth-1 and -13))")
    root = materialize_node_tests(tmp_path, ["SpaceToDepth"])
    with pytest.raises(ModelError, match=r"makes no case \(mode: SpaceToDepth mode 'CRD' \(opset 28\)"):
        load_node_test(root / _CRD_S2D)
    dcr = load_node_test(root / "test_spacetodepth_dcr_mode_example")  # mode DCR at opset 28 reads
    assert (dcr.case.op, dcr.case.mode, dcr.case.opset) == ("SpaceToDepth", "DCR", 28)


def test_a_missing_directory_is_refused_by_name(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    with pytest.raises(ModelError, match=re.escape(f"node test root '{missing}' is not a directory; valid: a "
                                                   "directory of node test directories")):
        onnx_node_tests(root=missing)
    (tmp_path / "file").write_text("")
    with pytest.raises(ModelError, match="is not a directory"):
        onnx_node_tests(root=tmp_path / "file")
    with pytest.raises(ModelError, match=re.escape(f"node test '{tmp_path}' has no model.onnx; valid: a "
                                                   "directory with model.onnx and test_data_set_0")):
        load_node_test(tmp_path)


def test_old_case_ids_are_kept() -> None:
    tests = onnx_node_tests(ops=("Transpose", "Expand", "Pad"))
    ids = {t.name: t.case.id for t in tests}
    assert len(tests) == 15
    assert ids["test_constant_pad"] == ("Pad-float32-1x3x4x5-constant-pads0.0.1.3.0.0.2.4-v9a99993f"
                                        "-op25-random-s0")
    assert ids["test_transpose_default"] == "Transpose-float32-2x3x4-permdefault-op25-random-s13"
    assert ids["test_wrap_pad"] == "Pad-int32-1x3x4x5-wrap-pads0.0.1.1.0.0.1.1-op25-random-s14"


@pytest.mark.parametrize("test", TESTS, ids=IDS)
def test_oracle_matches_onnx_expected_bits(test: NodeTest) -> None:
    got = expected_outputs(test.case, test.input)
    assert len(got) == len(test.expected_outputs)
    for g, want in zip(got, test.expected_outputs, strict=True):
        assert g.dtype == want.dtype and g.shape == want.shape
        assert g.tobytes() == want.tobytes()
    if len(got) == 1:
        assert expected_output(test.case, test.input).tobytes() == test.expected.tobytes()


def test_run_on_cpu_all_pass() -> None:
    results = run_cases([t.case for t in TESTS], provider="cpu", inputs={t.case.id: t.input for t in TESTS})
    assert len(results) == len(TESTS)
    failed = [(r.case.origin, r.status.value, r.message) for r in results if r.status is not Status.PASS]
    assert not failed


@pytest.mark.parametrize("test", TESTS, ids=IDS)
def test_case_reads_node_parameters(test: NodeTest) -> None:
    assert test.case.origin == f"onnx-node-test:{test.name}"
    assert test.case.shape == test.input.shape
    assert test.expected is test.expected_outputs[0]
    if test.name == "test_transpose_default":
        assert test.case.perm is None
    if test.name == "test_constant_pad_negative_axes":
        assert test.case.axes is not None and min(test.case.axes) < 0


def test_concat_inputs_are_put_together(tmp_path: Path) -> None:
    root = materialize_node_tests(tmp_path, ["Concat"])
    test = load_node_test(root / "test_concat_2d_axis_1")
    assert test.case.op == "Concat" and test.case.axis == 1 and test.case.parts == (2, 2)
    # the generator's inputs: [[1, 2], [3, 4]] and [[5, 6], [7, 8]], joined along axis 1
    assert test.input.tolist() == [[1, 2, 5, 6], [3, 4, 7, 8]]
    assert np.array_equal(test.expected, test.input)


def test_split_has_every_expected_output(tmp_path: Path) -> None:
    root = materialize_node_tests(tmp_path, ["Split"])
    test = load_node_test(root / "test_split_variable_parts_1d_opset13")
    assert test.case.parts == (2, 4)
    assert [o.tolist() for o in test.expected_outputs] == [[1.0, 2.0], [3.0, 4.0, 5.0, 6.0]]


def test_slice_reads_its_inputs(tmp_path: Path) -> None:
    root = materialize_node_tests(tmp_path, ["Slice"])
    test = load_node_test(root / "test_slice_neg_steps")
    assert test.case.starts == (20, 10, 4) and test.case.steps == (-1, -3, -2)
    want = test.input[20:0:-1, 10:0:-3, 4:1:-2]  # the generator's own numpy slicing
    assert np.array_equal(test.expected, want)


def test_loader_reads_directory_layout(tmp_path: Path) -> None:
    root = materialize_node_tests(tmp_path, ["Expand"])
    test = load_node_test(root / "test_expand_dim_changed")
    assert test.case.op == "Expand" and test.case.target_shape is not None
    want = np.broadcast_to(test.input, np.broadcast_shapes(test.input.shape, test.case.target_shape))
    assert np.array_equal(test.expected, want)


def test_unknown_op_is_refused() -> None:
    with pytest.raises(ModelError, match="valid"):
        onnx_node_tests(ops=["Gather"])


@pytest.mark.parametrize(("ops", "named"), [
    ("Transpose", "ops 'Transpose' is one str, not a list of op names; valid: a list or other iterable "
                  "of op names, e.g. ['Transpose']"),
    (3, "ops 3 is not a list of op names"),
    ([["Transpose"]], "op types [['Transpose']] make no cases"),
], ids=["one-str", "no-iterable", "no-name"])
def test_ops_that_are_no_list_of_names_are_refused_before_any_test_is_read(
        ops: object, named: str, tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=re.escape(named)):
        onnx_node_tests(ops=ops)  # type: ignore[arg-type]
    with pytest.raises(ModelError, match=re.escape(named)):
        materialize_node_tests(tmp_path / "out", ops=ops)  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists()


def test_a_node_test_s_case_is_built_once(tmp_path: Path, cases_built: list[object]) -> None:
    """The case is built at the node's opset, seed and origin directly."""
    root = materialize_node_tests(tmp_path, ["Transpose"])
    test = load_node_test(root / "test_transpose_default", seed=7)
    assert cases_built == [test.case]
    assert (test.case.seed, test.case.origin) == (7, "onnx-node-test:test_transpose_default")
    assert test.case.opset is not None
