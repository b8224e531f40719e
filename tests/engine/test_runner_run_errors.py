"""A run that fails in a node the error names: that case and its kin run alone, the rest batched
(the shape of the DML EP's Pad "wrap" failure on DirectML below feature level 6.4)."""

from __future__ import annotations

from typing import Any

import onnx

from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.case import Case


def test_a_named_run_failure_isolates_its_kin_without_bisection(monkeypatch: Any) -> None:
    from ort_layouts.engine import runner as _runner
    from ort_layouts.engine.providers import ProviderConfig

    real_make_session = _runner.make_session
    sizes: list[int] = []

    class WrapFails:
        """A session that fails like ORT 1.24.4's DML EP on a Pad "wrap" node of an old DirectML."""

        def __init__(self, model: onnx.ModelProto, config: ProviderConfig) -> None:
            self.inner = real_make_session(model, config)
            self.wrap = [n.name for n in model.graph.node
                         if any(a.name == "mode" and a.s == b"wrap" for a in n.attribute)]
            sizes.append(len(model.graph.node))

        def run(self, names: list[str], feeds: dict[str, Any]) -> list[Any]:
            if self.wrap:
                raise RuntimeError(
                    "[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running Pad node. "
                    f"Name:'{self.wrap[0]}' Status Message: MLOperatorAuthorImpl.cpp(2508) 80070057 "
                    "Invalid parameter.")
            return self.inner.run(names, feeds)  # type: ignore[no-any-return]

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    monkeypatch.setattr(_runner, "make_session", WrapFails)
    modes = ["constant", "wrap", "edge", "wrap", "reflect", "wrap", "constant", "edge"]
    cases = [Case("Pad", "float32", (3, 4), pads=(1, 1 + k % 2, 1, k % 3), mode=m)
             for k, m in enumerate(modes)]
    results = run_cases(cases, provider="cpu", batch_size=64)
    assert [r.status for r in results] == [
        Status.ERROR if m == "wrap" else Status.PASS for m in modes]
    # each wrap case reports the failure of its own one-node session
    assert all("Name:'n0_Pad'" in r.message for r in results if r.status is Status.ERROR)
    # the batch of 8, the three wrap cases alone, then the other five in one batch: no bisection
    assert sizes == [8, 1, 1, 1, 5]
