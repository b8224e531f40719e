"""What writing the reports costs a validation: ``python scripts/report_cost.py [--rounds N]
[VALIDATE ARGS...]``.

Runs ``ort-layouts validate`` (default: the standard suite on the CPU EP) in fresh processes,
alternately without and with ``--report DIR``, and prints for each round the run's wall time
in the process (imports excluded), the difference, and the time spent inside the report
writer (opening the directory, each result's ``results.jsonl`` line, the summaries
``report.json``, ``junit.xml``, ``report.html``, ``meta.json``) measured in the run with
reports. Figures only: nothing here asserts a time.

The report writer's own time is the steadier figure on a shared machine; the difference of
two runs carries the noise of both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_ARGS = ["--provider", "cpu"]


def _child(report_dir: str, validate_args: list[str]) -> None:
    """One run in this process; prints one JSON line of figures."""
    sys.path.insert(0, ROOT)
    from ort_layouts.frontends.cli import main
    from ort_layouts.reports import writer as writer_module

    spent: dict[str, float] = {}
    spent_cpu: dict[str, float] = {}

    def timed(name: str, method: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started, started_cpu = time.perf_counter(), time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                spent_cpu[name] = spent_cpu.get(name, 0.0) + time.thread_time() - started_cpu
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - started
        return wrapper

    cls = writer_module.ReportWriter
    for name in ("__init__", "add", "update_meta", "write_summaries", "close"):
        setattr(cls, name, timed(name, getattr(cls, name)))
    argv = ["validate", *validate_args, "--progress", "none"]
    if report_dir:
        argv += ["--report", report_dir]
    devnull = open(os.devnull, "w")  # noqa: SIM115 - the process ends right after
    stdout, sys.stdout = sys.stdout, devnull
    started, started_cpu = time.perf_counter(), time.process_time()
    try:
        code = main(argv)
    finally:
        seconds = time.perf_counter() - started
        cpu_seconds = time.process_time() - started_cpu
        sys.stdout = stdout
    sizes = {}
    if report_dir:
        sizes = {name: os.path.getsize(os.path.join(report_dir, name))
                 for name in sorted(os.listdir(report_dir)) if not name.startswith(".")}
    print(json.dumps({"code": code, "seconds": seconds, "cpu_seconds": cpu_seconds, "writer": spent,
                      "writer_cpu": spent_cpu, "sizes": sizes}))


def _run(report: bool, validate_args: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        report_dir = os.path.join(tmp, "report") if report else ""
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", report_dir, "--",
                              *validate_args], check=True, capture_output=True, text=True, cwd=ROOT)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _pair(wall: float, cpu: float) -> str:
    return f"{wall:.2f} ({cpu:.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each kind (default 3)")
    parser.add_argument("--child", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("validate_args", nargs="*", help=f"validate's arguments (default {DEFAULT_ARGS})")
    args = parser.parse_args()
    validate_args = args.validate_args or DEFAULT_ARGS
    if args.child is not None:
        _child(args.child, validate_args)
        return 0
    rows: list[dict[str, float]] = []
    print(f"validate {' '.join(validate_args)}: {args.rounds} rounds, each without then with --report")
    print("seconds of wall time (CPU time of the process, or of the writer's thread, in brackets)")
    print(f"{'round':>5} {'no report':>15} {'with report':>15} {'difference':>15} {'report writer':>15} "
          f"{'writer/run':>15}  writer parts, wall (CPU)")
    last: dict[str, Any] = {}
    for i in range(args.rounds):
        a = _run(False, validate_args)
        b = _run(True, validate_args)
        row = {"bare": a["seconds"], "bare_cpu": a["cpu_seconds"], "report": b["seconds"],
               "report_cpu": b["cpu_seconds"], "writer": sum(b["writer"].values()),
               "writer_cpu": sum(b["writer_cpu"].values())}
        rows.append(row)
        parts = " ".join(f"{k}={v:.3f}({b['writer_cpu'][k]:.3f})" for k, v in b["writer"].items())
        share = f"{row['writer'] / row['report']:.1%} ({row['writer_cpu'] / row['report_cpu']:.1%})"
        print(f"{i + 1:>5} {_pair(row['bare'], row['bare_cpu']):>15} "
              f"{_pair(row['report'], row['report_cpu']):>15} "
              f"{_pair(row['report'] - row['bare'], row['report_cpu'] - row['bare_cpu']):>15} "
              f"{_pair(row['writer'], row['writer_cpu']):>15} {share:>15}  {parts}")
        last = b
    m = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(f"median: without reports {_pair(m['bare'], m['bare_cpu'])} s, with reports "
          f"{_pair(m['report'], m['report_cpu'])} s: {(m['report'] - m['bare']) / m['bare']:+.1%} "
          f"({(m['report_cpu'] - m['bare_cpu']) / m['bare_cpu']:+.1%} CPU)")
    rest, rest_cpu = m["report"] - m["writer"], m["report_cpu"] - m["writer_cpu"]
    print(f"median report writer: {_pair(m['writer'], m['writer_cpu'])} s = "
          f"{m['writer'] / m['report']:.1%} of the run with reports "
          f"({m['writer_cpu'] / m['report_cpu']:.1%} of its CPU time); "
          f"{m['writer'] / rest:.1%} of the rest of that run ({m['writer_cpu'] / rest_cpu:.1%} CPU)")
    print("report files (bytes): " + ", ".join(f"{k} {v}" for k, v in last.get("sizes", {}).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
