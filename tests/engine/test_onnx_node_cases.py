"""ONNX's own node tests for Transpose, Expand and Pad: read as cases, run through the graph
builders and runner on the CPU EP, and the oracle's expected output equal to ONNX's, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ort_layouts.engine.onnx_node_tests import (
    NodeTest,
    load_node_test,
    materialize_node_tests,
    onnx_node_tests,
)
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.expected import expected_output

TESTS = onnx_node_tests()
IDS = [t.name for t in TESTS]


def test_all_three_ops_are_covered() -> None:
    ops = {t.case.op for t in TESTS}
    assert ops == {"Transpose", "Expand", "Pad"}
    names = set(IDS)
    assert {"test_transpose_default", "test_expand_dim_changed", "test_constant_pad", "test_edge_pad",
            "test_reflect_pad", "test_wrap_pad", "test_constant_pad_axes"} <= names


@pytest.mark.parametrize("test", TESTS, ids=IDS)
def test_oracle_matches_onnx_expected_bits(test: NodeTest) -> None:
    got = expected_output(test.case, test.input)
    assert got.dtype == test.expected.dtype and got.shape == test.expected.shape
    assert got.tobytes() == test.expected.tobytes()


def test_run_on_cpu_all_pass() -> None:
    results = run_cases([t.case for t in TESTS], provider="cpu", inputs={t.case.id: t.input for t in TESTS})
    failed = [(r.case.origin, r.status.value, r.message) for r in results if r.status is not Status.PASS]
    assert not failed


@pytest.mark.parametrize("test", TESTS, ids=IDS)
def test_case_reads_node_parameters(test: NodeTest) -> None:
    assert test.case.origin == f"onnx-node-test:{test.name}"
    assert test.case.shape == test.input.shape
    if test.name == "test_transpose_default":
        assert test.case.perm is None
    if test.name == "test_constant_pad_negative_axes":
        assert test.case.axes is not None and min(test.case.axes) < 0


def test_loader_reads_directory_layout(tmp_path: Path) -> None:
    root = materialize_node_tests(tmp_path, ["Expand"])
    test = load_node_test(root / "test_expand_dim_changed")
    assert test.case.op == "Expand" and test.case.target_shape is not None
    want = np.broadcast_to(test.input, np.broadcast_shapes(test.input.shape, test.case.target_shape))
    assert np.array_equal(test.expected, want)
