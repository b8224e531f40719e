"""A 4-bit case is not run, and says why with the operator's own data-type reason (one wording
of what DirectML takes, :meth:`Operator.data_type_reason`), on every provider."""

from __future__ import annotations

import pytest

from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.case import Case
from ort_layouts.operators.registry import operator_for_type


@pytest.mark.parametrize("case", [
    Case("Transpose", "uint4", (2, 3), perm=(1, 0)),
    Case("Tile", "int4", (2, 3), repeats=(1, 2)),
], ids=["Transpose-uint4", "Tile-int4"])
def test_a_4_bit_case_gives_the_operators_data_type_reason(case: Case) -> None:
    (result,) = run_cases([case], provider="cpu", jobs=1)
    reason = operator_for_type(case.op).data_type_reason(case)
    assert result.status is Status.UNSUPPORTED and reason
    assert result.message == (f"{case.data_type.name} data is not run: numpy has no 4-bit type to make its "
                              f"input and read its outputs with, and {reason}; dml_operator and "
                              "expected_output describe the case")
