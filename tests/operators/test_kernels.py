"""Which opsets the DML EP has a kernel for (``OperatorRegistration.cpp``, exact since-version
matching), and the no-kernel flag of a model's node."""

from __future__ import annotations

import onnx
import pytest

from ort_layouts.operators.kernels import dml_kernel_reason, flag_no_kernel


@pytest.mark.parametrize(("op", "opset", "since", "kernel"), [
    ("Reshape", 7, 5, True), ("Reshape", 19, 19, True), ("Reshape", 22, 21, True),
    ("Reshape", 23, 23, False), ("Reshape", 24, 24, False), ("Identity", 16, 16, True),
    ("Identity", 23, 23, False), ("Flatten", 10, 9, True), ("Flatten", 23, 23, False),
    ("Squeeze", 20, 13, True), ("Squeeze", 24, 24, False), ("Unsqueeze", 23, 23, False),
    ("Unsqueeze", 1, 1, True),
    # REG_INFO(7 | 11 | 13, DepthToSpace), REG_INFO(7 | 13, SpaceToDepth): OperatorRegistration.cpp
    # lines 816-820 at ONNX Runtime 1.24.1
    ("DepthToSpace", 10, 1, True), ("DepthToSpace", 12, 11, True), ("DepthToSpace", 27, 13, True),
    ("DepthToSpace", 28, 28, False), ("SpaceToDepth", 12, 1, True), ("SpaceToDepth", 27, 13, True),
    ("SpaceToDepth", 28, 28, False),
])
def test_dml_kernel_versions(op: str, opset: int, since: int, kernel: bool) -> None:
    """An opset resolves to a schema version (ONNX's operator history); the DML EP has a kernel
    exactly for the REG_INFO_COPY rows of OperatorRegistration.cpp."""
    assert onnx.defs.get_schema(op, opset).since_version == since
    reason = dml_kernel_reason(op, opset)
    if kernel:
        assert reason == ""
    else:
        assert f"{op}-{since}" in reason and "registers" in reason


@pytest.mark.parametrize(("op", "opset", "since"), [
    ("Transpose", 23, 23), ("Pad", 24, 24), ("Reshape", 23, 23), ("Identity", 25, 25),
    ("Transpose", 22, None), ("Pad", 21, None), ("Reshape", 14, None), ("Transpose", 0, None),
])
def test_the_no_kernel_flag_of_a_model_node(op: str, opset: int, since: int | None) -> None:
    """Transpose-23, Pad-24, Reshape-23 and Identity-25 have no DML kernel (OperatorRegistration.cpp
    stops at 21); opset 22 resolves to Transpose-21, 21 to Pad-21, 14 to Reshape-14, which have
    one; an unknown opset (0) is not flagged."""
    flags = ["kept"]
    flag_no_kernel(flags, op, opset)
    if since is None:
        assert flags == ["kept"]
    else:
        assert len(flags) == 2 and flags[0] == "kept"
        assert flags[1].startswith(f"no-kernel: opset {opset} resolves to {op}-{since}, ")
        assert flags[1].endswith("; ONNX Runtime runs the node on the CPU EP")
