"""The machine a run is made on: OS, Python and package versions, for a report's meta."""

from __future__ import annotations

import importlib.metadata
import platform
from typing import Any

from ort_layouts.reference.compare import comparison_kernel

__all__ = ["environment"]

_RUNTIME_DISTRIBUTIONS = (
    "onnxruntime", "onnxruntime-directml", "onnxruntime-gpu", "onnxruntime-ep-webgpu",
    "onnx", "numpy", "ort_layouts",
)


def environment() -> dict[str, Any]:
    """The machine, OS, Python and package versions, and what compares large views bit for bit
    (``comparison_kernel``: the optional C kernel or numpy), as a JSON-ready dict."""
    versions: dict[str, str] = {}
    for dist in _RUNTIME_DISTRIBUTIONS:
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    if not any(d.startswith("onnxruntime") and d != "onnxruntime-ep-webgpu" for d in versions):
        try:  # a build without package metadata
            import onnxruntime

            versions["onnxruntime"] = str(onnxruntime.__version__)
        except ImportError:  # pragma: no cover - onnxruntime is a dependency
            pass
    return {
        "hostname": platform.node(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "versions": versions,
        "comparison_kernel": comparison_kernel(),
    }
