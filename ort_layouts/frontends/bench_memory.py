"""The memory section's measurement, in a process of its own so that its peak is the run's:
``python -m ort_layouts.frontends.bench_memory PROVIDER KIND SIZE RANKS``.

KIND is ``suite`` (the standard suite, of RANKS: ``all`` or a comma list) or ``large`` (one
NCHW->NHWC transpose of about SIZE bytes). After warming up (imports, arenas) it resets the
peak resident memory where the OS allows it, runs the cases on PROVIDER, and prints one JSON
line: base_kib, peak_kib, reset, input_bytes, output_bytes, cases, passed, and the peak resident
memory of each worker process the run used (``worker_peak_kib``, Linux; [] for a run in one
process).
"""

from __future__ import annotations

import json
import resource
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.parallel import worker_pids
from ort_layouts.engine.providers import resolve_provider
from ort_layouts.engine.runner import resolve_jobs, run_cases
from ort_layouts.engine.suite import standard_suite
from ort_layouts.operators.case import Case
from ort_layouts.operators.registry import operator_for_type

__all__ = ["main", "measure", "peak_kib", "process_peak_kib", "reset_peak"]


def process_peak_kib(pid: int | str) -> int | None:
    """The peak resident memory of process ``pid`` ("self": this one) in KiB: VmHWM, the peak
    since the last reset (Linux); None where it cannot be read (the process is gone, or there is
    no /proc), never another process's figure."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None


def peak_kib() -> int:
    """The peak resident memory of this process in KiB: VmHWM, the peak since the last reset
    (Linux); else its ru_maxrss."""
    kib = process_peak_kib("self")
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) if kib is None else kib


def reset_peak() -> bool:
    """Reset VmHWM to the current resident memory (writing 5 to clear_refs, Linux >= 4.0);
    False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure(provider: str, kind: str, size_in_bytes: int, ranks: str) -> dict[str, Any]:
    """Run the cases of KIND on ``provider`` and return the peak memory figures."""
    if kind == "suite":
        cases = standard_suite(ranks=None if ranks == "all" else [int(r) for r in ranks.split(",")])
    else:
        side = max(2, round((size_in_bytes // 4 // 64) ** 0.5))
        cases = [Case("Transpose", DataType.FLOAT32, (1, 64, side, side), perm=(0, 2, 3, 1))]
    jobs = resolve_jobs(None, resolve_provider(provider), len(cases))  # the runner's own choice
    run_cases(standard_suite(ranks=[1], ops=["Transpose"])[:4], provider=provider)  # imports, arenas
    item = {c: np.dtype(c.data_type.to_numpy()).itemsize for c in cases}
    inputs = sum(int(np.prod(c.shape)) * item[c] for c in cases)
    outputs = sum(int(np.prod(shape)) * item[c] for c in cases
                  for shape in operator_for_type(c.op).output_shapes(c))
    reset = reset_peak()
    base = peak_kib()
    results = run_cases(cases, provider=provider, jobs=jobs)
    peak = peak_kib()
    used = min(jobs, len(cases)) if jobs > 1 else 0  # the pool's first ones (it may hold more, from before)
    workers = [k for k in map(process_peak_kib, worker_pids()[:used]) if k is not None]
    return {"base_kib": base, "peak_kib": peak, "reset": reset, "input_bytes": inputs,
            "output_bytes": outputs, "cases": len(cases), "passed": sum(1 for r in results if r),
            "worker_peak_kib": workers}


def main(argv: Sequence[str] | None = None) -> int:
    """Measure as the command line says and print the figures as one JSON line."""
    provider, kind, size, ranks = list(sys.argv[1:] if argv is None else argv)
    print(json.dumps(measure(provider, kind, int(size), ranks)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
