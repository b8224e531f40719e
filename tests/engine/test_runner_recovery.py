"""A mismatching case is re-run with an input that tells its elements apart, and the read the
EP applied goes into the result (``CaseResult.recovered``) next to the expected one."""

from __future__ import annotations

import json
from typing import Any
from xml.etree import ElementTree

import numpy as np
import onnx

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.case import Case
from ort_layouts.reports.html import render_report_html
from ort_layouts.reports.junit import render_junit
from ort_layouts.reports.report import Report


def _plain_copy_ep(monkeypatch: Any) -> list[int]:
    """Sessions whose Transpose ignores ``perm`` (the input read packed: a plain copy), and a
    count of the sessions made."""
    from ort_layouts.engine import runner as _runner
    from ort_layouts.engine.providers import ProviderConfig

    real_make_session = _runner.make_session
    made: list[int] = []

    class PlainCopy:
        def __init__(self, model: onnx.ModelProto, config: ProviderConfig) -> None:
            self.inner = real_make_session(model, config)
            made.append(len(model.graph.node))

        def run(self, names: list[str], feeds: dict[str, Any]) -> list[Any]:
            outs = self.inner.run(names, feeds)
            return [np.ascontiguousarray(feeds["x" + n[1:]]).reshape(o.shape)
                    for n, o in zip(names, outs, strict=True)]

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    monkeypatch.setattr(_runner, "make_session", PlainCopy)
    return made


def test_a_mismatch_carries_the_recovered_read(monkeypatch: Any) -> None:
    made = _plain_copy_ep(monkeypatch)
    # iota values repeat nothing here, but an 8-bit 16x16 has more elements than patterns:
    # the recovery must re-run the case on inputs that tell elements apart
    case = Case("Transpose", "uint8", (16, 16), perm=(1, 0))
    (result,) = run_cases([case], provider="cpu")
    assert result.status is Status.MISMATCH
    rec = result.recovered
    assert rec["kind"] == "read"
    # DirectML reads the input of a 16x16 transpose with strides [1, 16] (the output's axis 0
    # walks the input's axis 1); a plain copy reads it packed, [16, 1]
    assert rec["expected"]["strides_in_elements"] == [1, 16]
    assert rec["applied"]["strides_in_elements"] == [16, 1]
    assert rec["applied"]["offset_in_elements"] == 0
    assert len(made) > 1  # the case ran again for the recovery
    # it survives the JSON reports
    back = CaseResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert back.recovered == rec
    # ... the JUnit properties
    junit = ElementTree.fromstring(render_junit(Report({"provider": "CPUExecutionProvider"}, (result,))))
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert json.loads(props["recovered_applied"])["strides_in_elements"] == [16, 1]
    assert json.loads(props["recovered_expected"])["strides_in_elements"] == [1, 16]
    # ... and the HTML, which draws the expected and the applied read side by side
    page = render_report_html(Report({"provider": "CPUExecutionProvider"}, (result,)))
    section = page[page.index('<div class="recovered">'):]
    section = section[:section.index("</div></div>") if "</div></div>" in section else len(section)]
    assert section.count("<svg") == 2
    assert "<figcaption>expected</figcaption>" in section and "<figcaption>applied</figcaption>" in section
    assert '<td class="differs">[16, 1]</td>' in section


def test_passing_cases_carry_no_recovery() -> None:
    (result,) = run_cases([Case("Transpose", "float32", (2, 3), perm=(1, 0))], provider="cpu")
    assert result.status is Status.PASS and result.recovered == {}


def test_the_re_runs_of_a_validation_are_capped(monkeypatch: Any) -> None:
    """A broken stack fails every case: the recovery makes at most ``RERUN_LIMIT`` re-runs,
    and the rest are still reported (diagnosed from their own inputs)."""
    from ort_layouts.engine import runner as _runner

    made = _plain_copy_ep(monkeypatch)
    monkeypatch.setattr(_runner, "RERUN_LIMIT", 3)
    # 8-bit 16x16: more elements than patterns, so each recovery needs two re-runs
    cases = [Case("Transpose", "uint8", (16, 16), perm=(1, 0), seed=s) for s in range(4)]
    results = run_cases(cases, provider="cpu")
    assert [r.status for r in results] == [Status.MISMATCH] * 4
    assert len(made) - 1 <= 3  # the batch's own session, then at most three re-runs
