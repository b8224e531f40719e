"""A large case's expected output is left pending (PendingOutput) and checked from the
descriptors: the verdict and every mismatch detail are exactly compare's on the expected array
that numpy computes (np.transpose, np.broadcast_to, np.pad), and the runner gives the same
results with every output pending as with every output computed."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.engine import runner
from ort_layouts.engine.result import CaseResult
from ort_layouts.engine.runner import run_cases
from ort_layouts.engine.suite import standard_suite
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import dml_operator, output_shape
from ort_layouts.operators.identity import IdentityOp
from ort_layouts.reference import execute
from ort_layouts.reference.compare import compare
from ort_layouts.reference.execute import PendingOutput, compare_output, pending_output

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def random_bits(dtype: np.dtype[np.generic] | type, shape: tuple[int, ...], seed: int) -> np.ndarray:
    dt = np.dtype(dtype)
    raw = np.random.default_rng(seed).integers(0, 256, size=int(np.prod(shape)) * dt.itemsize, dtype=np.uint8)
    return raw.view(dt).reshape(shape)


def flipped(a: np.ndarray, flat_index: int, bit: int) -> np.ndarray:
    out = a.copy()
    out.reshape(-1).view(UINT[out.itemsize])[flat_index] ^= UINT[out.itemsize](1 << bit)
    return out


CASES = [
    (Case("Transpose", "float32", (1, 8, 40, 60), perm=(0, 2, 3, 1)),
     lambda x: np.transpose(x, (0, 2, 3, 1))),
    (Case("Transpose", "uint16", (3, 5, 70), perm=(2, 0, 1)), lambda x: np.transpose(x, (2, 0, 1))),
    (Case("Expand", "float64", (1, 1, 30, 20), target_shape=(2, 3, 30, 20)),
     lambda x: np.broadcast_to(x, (2, 3, 30, 20))),
    (Case("Pad", "int8", (2, 30, 40), pads=(0, 2, 1, 0, 3, 2), mode="reflect"),
     lambda x: np.pad(x, [(0, 0), (2, 3), (1, 2)], mode="reflect")),
    (Case("Pad", "float32", (20, 30), pads=(1, 2, 3, 4), mode="edge"),
     lambda x: np.pad(x, [(1, 3), (2, 4)], mode="edge")),
]


@pytest.mark.parametrize("k", range(len(CASES)), ids=lambda k: CASES[k][0].op + str(k))
def test_pending_compare_is_compare_on_the_numpy_output(k: int) -> None:
    case, reference = CASES[k]
    x = random_bits(case.data_type.to_numpy(), case.shape, seed=k)
    expected = np.ascontiguousarray(reference(x))  # type: ignore[no-untyped-call]
    pending = pending_output(dml_operator(case), x, output_shape(case), min_bytes=0)
    assert isinstance(pending, PendingOutput)
    assert pending.shape == expected.shape and pending.dtype == expected.dtype
    assert pending.values().tobytes() == expected.tobytes()
    assert compare_output(pending, expected) == compare(expected, expected)
    assert compare_output(pending, expected).passed
    top = expected.itemsize * 8 - 1
    for where, bit in ((0, 0), (expected.size // 2 + 3, top), (expected.size - 1, 1)):
        actual = flipped(expected, where, bit)
        got = compare_output(pending, actual)
        assert not got.passed
        assert got == compare(expected, actual)
        assert got.first_mismatch_index == tuple(int(i) for i in np.unravel_index(where, expected.shape))
    many = expected.copy()
    many.reshape(-1).view(UINT[many.itemsize])[::7] ^= 1
    assert compare_output(pending, many) == compare(expected, many)
    # another shape of the same size, another element type: compare's verdict and message
    other_shape = expected.reshape(-1)
    assert compare_output(pending, other_shape) == compare(expected, other_shape)
    assert not compare_output(pending, other_shape).passed
    same_size = f"{'u' if expected.dtype.kind == 'i' else 'i'}{expected.itemsize}"
    other_type = expected.view(same_size)
    assert compare_output(pending, other_type) == compare(expected, other_type)


def test_pending_compare_keeps_nan_payloads_and_the_sign_of_zero() -> None:
    bits = np.array([[0x7FC00001, 0x80000000, 0x7F800001], [0x00000000, 0xFFA00000, 0x3F800000]],
                    dtype=np.uint32)
    x = bits.view(np.float32)
    case = Case("Transpose", "float32", (2, 3), perm=(1, 0))
    pending = pending_output(dml_operator(case), x, (3, 2), min_bytes=0)
    assert pending is not None
    good = np.ascontiguousarray(x.T)
    assert compare_output(pending, good).passed
    for row, col, other in ((0, 0, 0x7FC00000), (1, 0, 0x00000000), (2, 0, 0x7FC00001)):
        bad = good.copy()
        bad.view(np.uint32)[row, col] = other  # equal as floats (NaN, zero) or quieted; not as bits
        got = compare_output(pending, bad)
        assert not got.passed and got == compare(good, bad)


def test_pending_only_for_large_single_tensor_whole_byte_cases() -> None:
    case = Case("Transpose", "float32", (64, 64), perm=(1, 0))
    op = dml_operator(case)
    x = random_bits(np.float32, (64, 64), seed=1)
    assert pending_output(op, x, (64, 64)) is None  # 16 KiB: below LARGE_OUTPUT_BYTES
    assert pending_output(op, x, (64, 64), min_bytes=64 * 64 * 4) is not None
    assert pending_output(op, x, (64, 64), min_bytes=64 * 64 * 4 + 1) is None
    assert pending_output(None, x, (64, 64), min_bytes=0) is None  # inexpressible: numpy's output
    assert pending_output(op, x[:, :32], (64, 64), min_bytes=0) is None  # not its input buffer as is
    assert pending_output(op, x[:32], (64, 64), min_bytes=0) is None  # too short
    assert pending_output(op, x.view(np.int32), (64, 64), min_bytes=0) is None  # another element type
    split = dml_operator(Case("Split", "float32", (4, 6), axis=1, num_outputs=2))
    assert pending_output(split, x, (4, 3), min_bytes=0) is None  # several outputs
    nibbles = IdentityOp(BufferTensorDesc("uint4", (2, 4)), BufferTensorDesc("uint4", (2, 4)))
    assert pending_output(nibbles, np.zeros(4, np.uint8), (2, 4), min_bytes=0) is None


def _summary(results: list[CaseResult]) -> list[tuple[tuple[str, Any], ...]]:
    skip = {"seconds", "descriptors"}
    return [tuple((f.name, getattr(r, f.name)) for f in dataclasses.fields(r) if f.name not in skip)
            for r in results]


def _counting_compare(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = PendingOutput.compare

    def counted(self: PendingOutput, actual: np.ndarray) -> Any:
        calls.append(1)
        return original(self, actual)

    monkeypatch.setattr(PendingOutput, "compare", counted)
    return calls


def test_runner_results_are_the_same_with_every_output_pending(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = standard_suite(ranks=[2, 4])[::23]
    eager = run_cases(cases, provider="cpu")
    monkeypatch.setattr(execute, "LARGE_OUTPUT_BYTES", 0)
    monkeypatch.setattr(runner, "LARGE_OUTPUT_BYTES", 0, raising=False)  # where it keeps a copy
    calls = _counting_compare(monkeypatch)
    pending = run_cases(cases, provider="cpu")
    assert _summary(pending) == _summary(eager)
    assert sum(1 for r in pending if r) > 0.9 * len(cases)
    assert len(calls) > len(cases) // 2  # every single-output case DirectML expresses


def test_runner_validates_a_large_case_from_its_descriptors(monkeypatch: pytest.MonkeyPatch) -> None:
    big = Case("Transpose", "float32", (1, 64, 256, 257), perm=(0, 2, 3, 1))  # 16.1 MiB
    assert execute.LARGE_OUTPUT_BYTES <= 4 * 64 * 256 * 257
    calls = _counting_compare(monkeypatch)
    (result,) = run_cases([big], provider="cpu")
    assert result.passed and result.element_count == 64 * 256 * 257
    assert calls == [1]


def test_a_large_validation_holds_little_more_than_its_tensors() -> None:
    """The memory section's measurement (a fresh process, peak resident memory reset before the
    run) for a 64 MiB transpose: input and output, no expected copy (that would be 1.5x), and a
    few MiB of scratch and session."""
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-m", "ort_layouts.frontends.bench_memory", "cpu", "large",
                          str(64 << 20), "all"], capture_output=True, text=True, cwd=root, check=True)
    d = json.loads(out.stdout.strip().splitlines()[-1])
    if not d["reset"]:
        pytest.skip("the peak resident memory cannot be reset here (not Linux)")
    assert d["passed"] == 1
    growth = (d["peak_kib"] - d["base_kib"]) * 1024
    tensors = d["input_bytes"] + d["output_bytes"]
    assert tensors == 2 * 4 * 64 * 1024 * 256
    assert growth <= 1.1 * tensors + (16 << 20)
