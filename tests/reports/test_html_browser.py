"""The HTML report of a deliberately broken run, opened in a real browser (headless Chromium).

The run is a real ``ort-layouts validate`` on the CPU EP, with ONNX Runtime's output for the
Transpose of a 2x3x4 tensor by perm [1, 0, 2] replaced by the input read packed, as an EP that
ignores the input strides would give. The page is loaded in Chromium inside a probe page that
reads what the browser laid out and styled: the matrix cells' computed colours, the failing
case's rendered text (diagnosis included) and the size of its inline SVG picture.
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ort_layouts.frontends.cli import main

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(f"ort_layouts.{m}") is None
        for m in ("engine.providers", "engine.runner", "engine.suite")),
    reason="the validation engine is not installed")

FAIL_BACKGROUND = "rgb(255, 205, 210)"  # .fail in the report's style sheet (#ffcdd2)
PASS_BACKGROUND = "rgb(200, 230, 201)"  # .pass (#c8e6c9)

PROBE = """<!DOCTYPE html>
<html><body><pre id="out">pending</pre>
<iframe id="frame" src="report.html" style="width:1200px;height:1000px"></iframe>
<script>
document.getElementById("frame").addEventListener("load", function () {
  var out = {};
  try {
    var d = this.contentDocument, w = this.contentWindow;
    out.title = d.title;
    out.verdict = d.querySelector(".verdict").innerText;
    out.cells = Array.from(d.querySelectorAll("#matrix td.cell")).map(function (c) {
      return {op: c.dataset.op, dtype: c.dataset.dtype, rank: c.dataset.rank, text: c.innerText,
              background: w.getComputedStyle(c).backgroundColor};
    });
    out.failures = Array.from(d.querySelectorAll("#failures section.case")).map(function (s) {
      return {id: s.id, text: s.innerText, height: s.getBoundingClientRect().height,
              svgs: Array.from(s.querySelectorAll("svg")).map(function (g) {
                var r = g.getBoundingClientRect(); return [r.width, r.height]; })};
    });
  } catch (e) { out.error = String(e); }
  document.getElementById("out").textContent = JSON.stringify(out);
});
</script></body></html>
"""


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if path is None:
        if os.environ.get("ORT_LAYOUTS_REQUIRE_BROWSER"):
            pytest.fail("no Chromium found, and ORT_LAYOUTS_REQUIRE_BROWSER is set (.ci/run installs it)")
        pytest.skip("no Chromium here (apt-get install -y chromium); .ci/run installs it")
    return path


@pytest.fixture
def broken_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import onnxruntime

    real_run = onnxruntime.InferenceSession.run

    def run(self, output_names, input_feed, run_options=None):  # type: ignore[no-untyped-def]
        outputs = real_run(self, output_names, input_feed, run_options)
        names = output_names or [o.name for o in self.get_outputs()]
        for k, name in enumerate(names):
            x = input_feed.get("x" + name[1:]) if name.startswith("y") else None
            if x is not None and x.shape == (2, 3, 4) and outputs[k].shape == (3, 2, 4):
                outputs[k] = np.ascontiguousarray(x).reshape(3, 2, 4)  # the input read packed
        return outputs

    monkeypatch.setattr(onnxruntime.InferenceSession, "run", run)
    report = tmp_path / "report"
    code = main(["validate", "--provider", "cpu", "--ops", "Transpose", "--dtypes", "float32",
                 "--ranks", "2,3", "--values", "iota", "--report", str(report), "--progress", "none"])
    assert code == 1, "the broken run should fail"
    return report


def test_report_of_a_broken_run_in_chromium(broken_report: Path, tmp_path: Path) -> None:
    chromium = _chromium()
    probe = broken_report / "probe.html"
    probe.write_text(PROBE)
    proc = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--allow-file-access-from-files",
         "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    match = re.search(r'<pre id="out">(.*?)</pre>', proc.stdout, re.S)
    assert match, proc.stdout[:2000]
    page = json.loads(html.unescape(match.group(1)))
    assert "error" not in page, page

    assert page["verdict"].startswith("FAIL")
    cells = {(c["op"], c["dtype"], c["rank"]): c for c in page["cells"]}
    # rank 3 holds the broken perm [1, 0, 2]; rank 2 is untouched
    assert cells[("Transpose", "float32", "3")]["background"] == FAIL_BACKGROUND
    assert cells[("Transpose", "float32", "2")]["background"] == PASS_BACKGROUND
    passed, total = (int(v) for v in cells[("Transpose", "float32", "3")]["text"].split("/"))
    assert passed == total - 1

    assert len(page["failures"]) == 1
    failure = page["failures"][0]
    assert failure["id"].startswith("case-Transpose-float32-2x3x4-perm1.0.2-iota")
    assert failure["height"] > 100
    text = failure["text"]
    assert "mismatch" in text
    # 24 elements; perm [1, 0, 2] keeps the first 4 and the last 4 in place
    assert "16 of 24 elements differ" in text
    assert "Diagnosis:" in text and "packed" in text
    assert "[3, 2, 4]" in text and "[4, 12, 1]" in text  # the input descriptor as the EP reads it
    assert failure["svgs"] and all(w > 50 and h > 50 for w, h in failure["svgs"])
