"""The bench's DirectML section: the worker against the CPU EP on the same cases, and the
worker's overhead per Run against the C API call it wraps (needs the DirectML stack)."""

from __future__ import annotations

import pytest


@pytest.mark.usefixtures("dml_stack")  # skipped where the stack is not set up
def test_dml_section_compares_the_worker_with_the_cpu_ep_and_its_bare_run() -> None:
    from ort_layouts.frontends.bench import bench_dml

    figures = {f.name: f for f in bench_dml(sample_size=20, repeats=1, runs=5)}
    dml = figures["DirectML (worker) on a suite sample"]
    cpu = figures["CPU EP on the same cases"]
    assert "20 cases" in dml.detail and "DirectML 1.15.4" in dml.detail
    assert figures["DirectML / CPU EP"].value == pytest.approx(dml.value / cpu.value)
    wall = figures["one Run seen from Python (worker round trip)"].value
    bare = figures["the same Run inside the worker (C API OrtRun)"].value
    assert 0 < bare < wall
    assert figures["worker overhead per Run"].value == pytest.approx(wall - bare)
