"""The buffer offsets a mismatch reports where the ONNX output and the DirectML descriptors have
other sizes: the reshape family (one packed descriptor of the input's sizes, at least 4D) and a
scalar (one axis). Every expected offset is worked out by hand: both buffers are packed and
row-major, so an element's offset is its flat index in the ONNX output."""

from __future__ import annotations

import numpy as np
import pytest

from ort_layouts.engine import runner as _runner
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import dml_operator

# (case, ONNX output shape, mismatch index, input offset, output offset)
OFFSETS = [
    # (3, 4) index [1, 3]: 1*4 + 3 = 7; the input (2, 6) holds it at [1, 1] = 1*6 + 1 = 7
    (Case("Reshape", "int32", (2, 6), target_shape=(3, 4)), (3, 4), (1, 3), 7, 7),
    # rank 4 to rank 4 of other sizes: [0, 2, 1, 0] of (1, 3, 4, 1) is 2*4 + 1 = 9
    (Case("Reshape", "int32", (3, 4), target_shape=(1, 3, 4, 1)), (1, 3, 4, 1), (0, 2, 1, 0), 9, 9),
    (Case("Unsqueeze", "int32", (3, 4), axes=(0, 3)), (1, 3, 4, 1), (0, 2, 3, 0), 11, 11),
    # (2, 12) index [1, 5]: 12 + 5 = 17
    (Case("Flatten", "float32", (2, 3, 4), axis=1), (2, 12), (1, 5), 17, 17),
    # (3, 2) index [2, 1]: 2*2 + 1 = 5
    (Case("Squeeze", "float16", (1, 3, 1, 2), axes=(0, 2)), (3, 2), (2, 1), 5, 5),
    (Case("Identity", "uint8", (2, 3)), (2, 3), (1, 2), 5, 5),
    # a scalar: its one element
    (Case("Expand", "float32", (), target_shape=()), (), (), 0, 0),
]


@pytest.mark.parametrize(("case", "shape", "index", "in_offset", "out_offset"), OFFSETS,
                         ids=[c[0].op + "-" + "x".join(map(str, c[1])) for c in OFFSETS])
def test_offsets_of_an_onnx_index(case: Case, shape: tuple[int, ...], index: tuple[int, ...], in_offset: int,
                                  out_offset: int) -> None:
    assert _runner._mismatch_offsets(dml_operator(case), index, shape=shape) == (in_offset, out_offset)


def test_reshape_mismatch_reports_its_offsets(monkeypatch: pytest.MonkeyPatch) -> None:
    case = Case("Reshape", "int32", (2, 6), target_shape=(3, 4), seed=3)
    real = _runner.expected_output

    def flipped(c: Case, x: np.ndarray, **known: object) -> np.ndarray:
        out = real(c, x, **known).copy()  # type: ignore[arg-type]
        out[1, 3] ^= 1
        return out

    monkeypatch.setattr(_runner, "expected_output", flipped)
    (r,) = run_cases([case], provider="cpu", jobs=1)
    assert r.status is Status.MISMATCH and r.first_mismatch_index == (1, 3)
    assert (r.input_offset_in_elements, r.output_offset_in_elements) == (7, 7)
