"""The batched runner against a plain per-case reference: a sample of the standard suite run
one case per session, with the expected outputs made the straightforward way (the reference
executor's ``output_values`` / ``output_values_all`` on ``make_input``'s data, numpy's result
for a case DirectML cannot express) and compared with ``compare``, gives the same verdicts and
the same figures, field for field, as ``run_cases`` with its batches, batch inputs and fast
comparison."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest

from ort_layouts.engine.graphs import build_model, provider_opset
from ort_layouts.engine.providers import CPU, ProviderConfig, session_options
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.engine.suite import is_edge_case, standard_suite
from ort_layouts.operators.base import input_name, output_name
from ort_layouts.operators.case import Case
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.operators.values import make_input
from ort_layouts.reference.compare import compare
from ort_layouts.reference.execute import DmlMultiOperator, output_values, output_values_all


def _expected(case: Case, x: np.ndarray, op: Any, reason: str) -> list[np.ndarray]:
    """The expected outputs, one case at a time, by the reference executor's public functions."""
    operator = operator_for_type(case.op)
    if reason:
        return [np.asarray(r) for r in operator.reference_outputs(case, x)]
    if isinstance(op, DmlMultiOperator):
        bound = operator.dml_inputs(case, operator.input_feeds(case, x))
        values = output_values_all(op, [np.asarray(b, dtype=x.dtype, order="C") for b in bound])
        return [v.reshape(s) for v, s in zip(values, operator.output_shapes(case), strict=True)]
    addressed = (op.input.last_element_index + 1) * x.itemsize
    buffer: np.ndarray = x
    if not addressed <= x.nbytes <= op.input.total_tensor_size_in_bytes:  # zeros past a short input
        buffer = np.zeros(op.input.total_tensor_size_in_bytes, dtype=np.uint8)
        buffer[: x.nbytes] = x.reshape(-1).view(np.uint8)
    return [output_values(op, buffer).reshape(operator.output_shape(case))]


def _reference(case: Case) -> dict[str, Any]:
    """One case alone: its own session, its outputs compared with ``compare``."""
    operator = operator_for_type(case.op)
    reason = operator.inexpressible_reason(case)
    op = None if reason else operator.dml_operator(case)
    x = np.asarray(make_input(case), dtype=case.data_type.to_numpy(), order="C")
    expected = _expected(case, x, op, reason)
    feeds = {input_name(0, k): np.asarray(f, dtype=x.dtype, order="C")
             for k, f in enumerate(operator.input_feeds(case, x))}
    model = build_model([case], opset=case.opset or provider_opset(CPU)).SerializeToString()
    try:
        options = session_options(ProviderConfig(CPU))
        session = ort.InferenceSession(model, sess_options=options, providers=[CPU])
    except Exception:
        return {"status": Status.UNSUPPORTED}
    actuals = session.run([output_name(0, k) for k in range(len(expected))], feeds)
    cmps = [compare(e, a) for e, a in zip(expected, actuals, strict=True)]
    out: dict[str, Any] = {
        "status": Status.PASS if all(cmps) else Status.MISMATCH,
        "element_count": sum(c.element_count for c in cmps),
        "mismatch_count": sum(c.mismatch_count for c in cmps),
        "descriptors": op.to_dict() if op is not None else {},
        "node_provider": CPU,
    }
    failed = [c for c in cmps if not c]
    if failed:
        first = failed[0]
        out.update(first_mismatch_index=first.first_mismatch_index, expected_hex=first.expected_hex,
                   actual_hex=first.actual_hex)
        if len(cmps) == 1:
            out["message"] = first.message
            if op is not None and first.first_mismatch_index is not None:
                offsets = op.buffer_offsets_in_elements(first.first_mismatch_index)
                out["input_offset_in_elements"], out["output_offset_in_elements"] = offsets
    return out


def _sample() -> list[Case]:
    """Every 13th case of the standard suite, every edge case (rank 0, empty tensors) and every
    case the CPU EP is known to get wrong (float16 Pad and Tile of special values)."""
    suite = standard_suite()
    chosen = {c.id: c for c in suite[::13]}
    for c in suite:
        quieted = c.op in ("Pad", "Tile") and c.data_type.name == "FLOAT16" and c.values == "special"
        if is_edge_case(c) or quieted:
            chosen[c.id] = c
    return list(chosen.values())


def test_runner_gives_the_reference_results_field_for_field() -> None:
    cases = _sample()
    ops = {c.op for c in cases}
    assert len(ops) == 14 and len(cases) > 800
    results = run_cases(cases, provider="cpu")
    assert [r.case for r in results] == cases
    seen = {Status.PASS: 0, Status.MISMATCH: 0, Status.UNSUPPORTED: 0}
    for case, result in zip(cases, results, strict=True):
        want = _reference(case)
        assert result.status is want["status"], (case.id, result.message)
        seen[result.status] += 1
        assert result.provider == CPU
        if result.status is Status.UNSUPPORTED:
            assert case.op in result.message and case.data_type.name.lower() in result.message, case.id
            continue
        for name, value in want.items():
            if name != "status":
                assert getattr(result, name) == value, (case.id, name, getattr(result, name), value)
        if result.status is Status.PASS:
            assert (result.mismatch_count, result.first_mismatch_index, result.message, result.expected_hex,
                    result.diagnosis) == (0, None, "", "", "")
    # the sample holds every verdict the CPU EP gives
    assert seen[Status.PASS] > 700 and seen[Status.MISMATCH] >= 20 and seen[Status.UNSUPPORTED] > 10, seen


@pytest.mark.parametrize("batch_size", [1, 7, 256])
def test_any_batch_size_gives_the_same_results(batch_size: int) -> None:
    """The cases of a few groups cut into batches of another size: the same results (all but
    the seconds), in the same order."""
    cases = standard_suite(ops=["Concat", "Split", "Pad"], dtypes=["float16", "uint8"], ranks=[0, 1, 2])
    assert 40 < len(cases) < 600
    base = [(r.to_dict() | {"seconds": 0}) for r in run_cases(cases, provider="cpu")]
    other = [(r.to_dict() | {"seconds": 0}) for r in run_cases(cases, provider="cpu", batch_size=batch_size)]
    assert other == base
    assert math.isfinite(sum(r.seconds for r in run_cases(cases[:5], provider="cpu")))
