"""What a case should produce: its DirectML operator, its ONNX output shape, and its output by
the reference executor (from the descriptors alone) or by numpy (the ONNX reading).
"""

from __future__ import annotations

import numpy as np

from ort_layouts.operators.case import Case
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.reference.execute import DmlOperator, output_values

__all__ = ["dml_operator", "expected_output", "output_shape", "reference_output"]


def dml_operator(case: Case) -> DmlOperator:
    """The DirectML operator the DML EP builds for a case (descriptors as the EP builds them).

    Transpose and Expand are ELEMENT_WISE_IDENTITY with permuted / broadcast input strides; Pad
    is PADDING1 after the EP's coercion to 4D.

    Raises:
        NotExpressibleError: DirectML cannot express the case (a Pad that crops).
        ShapeError: the case has no descriptor (a rank-0 Transpose).
    """
    return operator_for_type(case.op).dml_operator(case)


def output_shape(case: Case) -> tuple[int, ...]:
    """The ONNX output shape of a case (negative pads crop)."""
    return operator_for_type(case.op).output_shape(case)


def reference_output(case: Case, input_array: np.ndarray) -> np.ndarray:
    """The ONNX result computed with numpy alone (np.transpose, np.broadcast_to, np.pad, ...)."""
    return operator_for_type(case.op).reference_output(case, input_array)


def expected_output(case: Case, input_array: np.ndarray, *, op: DmlOperator | None = None) -> np.ndarray:
    """What the DirectML operator produces for ``input_array``, by the reference executor, in the
    ONNX output shape. A case DirectML cannot express (negative pads) uses
    :func:`reference_output`.

    Args:
        case: the case.
        input_array: its input (the ONNX tensor, read packed).
        op: ``dml_operator(case)`` when the caller has it already.
    """
    operator = operator_for_type(case.op)
    if operator.inexpressible_reason(case):
        return operator.reference_output(case, input_array)
    op = operator.dml_operator(case) if op is None else op
    x = np.ascontiguousarray(input_array, dtype=case.data_type.to_numpy())
    addressed = (op.input.last_element_index + 1) * x.itemsize
    if addressed <= x.nbytes <= op.input.total_tensor_size_in_bytes:
        values = output_values(op, x)  # x holds every byte the input descriptor reads
    else:  # a short input reads zeros past its end; a long one does not fit the buffer
        raw = np.zeros(op.input.total_tensor_size_in_bytes, dtype=np.uint8)
        raw[: x.nbytes] = x.reshape(-1).view(np.uint8)
        values = output_values(op, raw)
    return np.ascontiguousarray(values).reshape(operator.output_shape(case))
