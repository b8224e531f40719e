"""The machine a run is made on: OS, Python and package versions, for a report's meta."""

from __future__ import annotations

import ctypes
import importlib.metadata
import platform
import sys
from typing import Any

from ort_layouts.reference.compare import comparison_kernel

__all__ = ["MEMORY_CHECK_BYTES", "available_memory_bytes", "environment", "short_of_memory"]

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


# a case that needs at least this many bytes is held to available_memory_bytes() before it is
# made (by a run and by an export); smaller ones are made without asking
MEMORY_CHECK_BYTES = 256 << 20


def short_of_memory(needed: int) -> int | None:
    """The bytes this machine has available, where they are fewer than ``needed`` (what a
    case holds at once): the one check a run and an export refuse a case by before making it.
    None where the case may be made: it needs less than :data:`MEMORY_CHECK_BYTES` (the
    machine is not asked), the machine has the memory, or it cannot tell
    (:func:`available_memory_bytes` is None)."""
    if needed < MEMORY_CHECK_BYTES:
        return None
    available = available_memory_bytes()
    if available is None or needed <= available:
        return None
    return available


def available_memory_bytes() -> int | None:
    """The memory this machine can give a process now without swapping, in bytes: Linux's
    ``MemAvailable`` (/proc/meminfo), Windows' ``ullAvailPhys`` (GlobalMemoryStatusEx); None
    where neither can be read."""
    if sys.platform == "win32":
        class _MemoryStatus(ctypes.Structure):
            _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                        ("ullTotalPhys", ctypes.c_ulonglong), ("ullAvailPhys", ctypes.c_ulonglong),
                        ("ullTotalPageFile", ctypes.c_ulonglong), ("ullAvailPageFile", ctypes.c_ulonglong),
                        ("ullTotalVirtual", ctypes.c_ulonglong), ("ullAvailVirtual", ctypes.c_ulonglong),
                        ("ullAvailExtendedVirtual", ctypes.c_ulonglong)]

        status = _MemoryStatus()
        status.dwLength = ctypes.sizeof(status)
        if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
            return None
        return int(status.ullAvailPhys)
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        return None
    return None
