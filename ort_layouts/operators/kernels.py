"""Which ONNX operator versions the DML EP has a kernel for: ONNX Runtime matches a DML kernel
only to the exact schema since-version ``OperatorRegistration.cpp`` registers, so an opset that
resolves to a newer version of the operator has none, and ONNX Runtime runs the node on another
EP (or, with CPU fallback off, cannot take it).
"""

from __future__ import annotations

from ort_layouts.operators.onnx_nodes import schema_version

__all__ = ["DML_KERNEL_VERSIONS", "dml_kernel_reason", "flag_no_kernel"]

#: the ONNX schema since-versions the DML EP registers a kernel for: the Copy kernel's
#: (``REG_INFO_COPY`` rows of ``OperatorRegistration.cpp``, lines 852-875 at ONNX Runtime 1.24.1),
#: Transpose's and Pad's (``REG_INFO(7 | 13 | 21, Transpose)``, ``REG_INFO_VER(7 | 11 | 13 | 18 |
#: 19 | 21, Pad)``; opset 7 names Transpose-1 and Pad-2; 19 came with microsoft/onnxruntime#19175,
#: 21 with #22547), and DepthToSpace's and SpaceToDepth's (``REG_INFO(7 | 11 | 13, DepthToSpace)``,
#: ``REG_INFO(7 | 13, SpaceToDepth)``, lines 816-820 at ONNX Runtime 1.24.1; opset 7 names
#: DepthToSpace-1 and SpaceToDepth-1, ``sc_sinceVer_*`` of ``OperatorVersions.h``).
#: Transpose-23, -24, -25, Pad-23, -24, -25, DepthToSpace-28 and SpaceToDepth-28 have none.
DML_KERNEL_VERSIONS: dict[str, tuple[int, ...]] = {
    "Identity": (1, 13, 14, 16, 19, 21),
    "Flatten": (1, 9, 11, 13, 21),
    "Squeeze": (1, 11, 13, 21),
    "Unsqueeze": (1, 11, 13, 21),
    "Reshape": (5, 13, 14, 19, 21),
    "Transpose": (1, 13, 21),
    "Pad": (2, 11, 13, 18, 19, 21),
    "DepthToSpace": (1, 11, 13),
    "SpaceToDepth": (1, 13),
}


def dml_kernel_reason(op_type: str, opset: int) -> str:
    """Why the DML EP has no kernel for ``op_type`` at ``opset`` ("" when it has one)."""
    version = schema_version(op_type, opset)
    if version is None or version in DML_KERNEL_VERSIONS[op_type]:
        return ""
    return (f"opset {opset} resolves to {op_type}-{version}, and the DML EP registers {op_type} "
            f"only for schema versions {list(DML_KERNEL_VERSIONS[op_type])} "
            "(OperatorRegistration.cpp, exact since-version matching)")


def flag_no_kernel(flags: list[str], op_type: str, opset: int) -> None:
    """Add the ``no-kernel`` flag of a model's node to ``flags`` when the DML EP has no kernel
    for ``op_type`` at ``opset`` (:func:`dml_kernel_reason`); nothing when it has one or the
    opset is unknown (0)."""
    reason = dml_kernel_reason(op_type, opset) if opset else ""
    if reason:
        flags.append(f"no-kernel: {reason}; ONNX Runtime runs the node on the CPU EP")
