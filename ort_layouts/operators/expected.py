"""What a case should produce: its DirectML operator, its ONNX output shape(s), and its
output(s) by the reference executor (from the descriptors alone) or by numpy (the ONNX reading).

The expected outputs are what :func:`~ort_layouts.reference.execute.output_values` (and
``output_values_all``) give; a packed output, the common case, is written by the operator
straight into its values as there, without checking again that the operator is one (it came
from :func:`dml_operator`). A caller that has the case's DirectML operator, its inexpressible
reason or its output shapes already (the runner) passes them in.

Most operators have one input and one output. Concat has several inputs (the case's input is
the whole tensor, cut into them along the axis) and Split several outputs: :func:`input_feeds`,
:func:`output_shapes` and :func:`expected_outputs` give one entry per tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ort_layouts._errors import DescriptorError, NotExpressibleError, ShapeError
from ort_layouts.operators.case import Case
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.operators.values import check_case, check_input
from ort_layouts.reference.buffers import (
    UINT_OF_SIZE,
    buffer_elements,
    check_buffer_size,
    is_nibble,
    raw_bytes,
    strided_view,
    values_dtype,
)
from ort_layouts.reference.execute import (
    AnyDmlOperator,
    DmlOperator,
    input_views,
    is_multi_operator,
    output_values,
    output_values_all,
)

__all__ = [
    "dml_operator",
    "expected_output",
    "expected_outputs",
    "input_feeds",
    "output_shape",
    "output_shapes",
    "reference_output",
    "reference_outputs",
]


def dml_operator(case: Case) -> AnyDmlOperator:
    """The DirectML operator the DML EP builds for a case (descriptors as the EP builds them).

    Transpose and Expand are ELEMENT_WISE_IDENTITY with permuted / broadcast input strides; Pad
    is PADDING1 after the EP's coercion to 4D; Concat is JOIN and Split is SPLIT over
    descriptors right-aligned to 4D.

    Raises:
        NotExpressibleError: DirectML cannot express the case (a Pad that crops, a Split with an
            empty output, a rank-0 Transpose, an empty tensor, more than 8 dimensions), naming
            why.
        ArgumentError: ``case`` is not a Case.
    """
    operator = operator_for_type(check_case(case).op)
    try:
        return operator.dml_operator(case)
    except (DescriptorError, ShapeError) as e:  # a descriptor DirectML refuses: say why the EP cannot
        reason = operator.inexpressible_reason(case)
        if reason:
            raise NotExpressibleError(reason) from e
        raise


def output_shape(case: Case) -> tuple[int, ...]:
    """The ONNX output shape of a case (negative pads crop).

    Raises:
        ShapeError: the operator has several outputs (Split): see :func:`output_shapes`.
        ArgumentError: ``case`` is not a Case.
    """
    return operator_for_type(check_case(case).op).output_shape(case)


def output_shapes(case: Case) -> list[tuple[int, ...]]:
    """The ONNX shape of each output of a case.

    Raises:
        ArgumentError: ``case`` is not a Case.
    """
    return operator_for_type(check_case(case).op).output_shapes(case)


def input_feeds(case: Case, input_array: np.ndarray) -> list[np.ndarray]:
    """The node's data inputs made from the case's input (the whole tensor of ``case.shape``):
    ``[input_array]``, or Concat's inputs cut from it along the axis.

    Raises:
        (:func:`_checked_input`) ``case`` is not a Case, or ``input_array`` not its input.
    """
    x = _checked_input(case, input_array)
    return operator_for_type(case.op).input_feeds(case, x)


def reference_output(case: Case, input_array: np.ndarray) -> np.ndarray:
    """The ONNX result computed with numpy alone (np.transpose, np.broadcast_to, np.pad, ...).

    Raises:
        (:func:`_checked_input`) ``case`` is not a Case, or ``input_array`` not its input.
    """
    x = _checked_input(case, input_array)
    return operator_for_type(case.op).reference_output(case, x)


def reference_outputs(case: Case, input_array: np.ndarray) -> list[np.ndarray]:
    """The ONNX results computed with numpy alone, one per output (np.split for Split).

    Raises:
        (:func:`_checked_input`) ``case`` is not a Case, or ``input_array`` not its input.
    """
    x = _checked_input(case, input_array)
    return operator_for_type(case.op).reference_outputs(case, x)


def _checked_input(case: Case, input_array: Any) -> np.ndarray:
    """``input_array`` as the input of ``case``: of its shape and its values' numpy type, never
    cast (:func:`~ort_layouts.operators.values.check_input`).

    Raises:
        ArgumentError: ``case`` is not a Case.
        DataTypeError: ``input_array`` is of another element type (None, a float64 array for a
            float32 case).
        ShapeError: ``input_array`` is of another shape.
    """
    return check_input(check_case(case), input_array, "input_array")


def expected_output(case: Case, input_array: np.ndarray, *, op: AnyDmlOperator | None = None,
                    reason: str | None = None, shape: Sequence[int] | None = None,
                    feeds: Sequence[np.ndarray] | None = None) -> np.ndarray:
    """What the DirectML operator produces for ``input_array``, by the reference executor, in the
    ONNX output shape. A case DirectML cannot express (negative pads) uses
    :func:`reference_output`.

    Args:
        case: the case.
        input_array: its input (the ONNX tensor, read packed).
        op: ``dml_operator(case)`` when the caller has it already.
        reason: the operator's ``inexpressible_reason(case)`` when the caller has it already.
        shape: ``output_shape(case)`` when the caller has it already.
        feeds: the operator's ``input_feeds(case, input_array)``, of the case's data type, when
            the caller has them already (an operator of several inputs reads them).

    Raises:
        ShapeError: the case has several outputs (Split): see :func:`expected_outputs`.
        (:func:`_checked_input`) ``case`` is not a Case, or ``input_array`` not its input.
    """
    input_array = _checked_input(case, input_array)
    operator = operator_for_type(case.op)
    if operator.inexpressible_reason(case) if reason is None else reason:
        (single,) = _single(case, operator.reference_outputs(case, input_array))
        return single
    op = operator.dml_operator(case) if op is None else op
    if is_multi_operator(op):
        (single,) = _single(case, expected_outputs(case, input_array, op=op, reason="", feeds=feeds))
        return single
    op = cast(DmlOperator, op)
    x = np.asarray(input_array, dtype=case.data_type.to_numpy(), order="C")
    inp = op.input
    addressed = (inp.last_element_index + 1) * x.itemsize
    if addressed <= x.nbytes <= inp.total_tensor_size_in_bytes:  # x holds every byte the input reads
        if op.output.strides is None and not is_nibble(inp.data_type):
            # output_values' packed path on x's elements, whose size was just checked
            uint = UINT_OF_SIZE[x.itemsize]
            values = np.zeros(op.output.sizes, dtype=inp.data_type.to_numpy())
            src = strided_view(x.reshape(-1).view(uint), inp, writeable=False)
            op.run(values.view(uint), src, threads=None)
        else:
            values = _output_values(op, x)
    else:  # a short input reads zeros past its end; a long one does not fit the buffer
        raw = np.zeros(op.input.total_tensor_size_in_bytes, dtype=np.uint8)
        raw[: x.nbytes] = x.reshape(-1).view(np.uint8)
        values = _output_values(op, raw)
    return np.asarray(values, order="C").reshape(operator.output_shape(case) if shape is None else shape)


def _single(case: Case, outputs: list[np.ndarray]) -> list[np.ndarray]:
    if len(outputs) != 1:
        raise ShapeError(f"case {case.id} has {len(outputs)} outputs; expected_output gives one "
                         "(use expected_outputs)")
    return outputs


def expected_outputs(case: Case, input_array: np.ndarray, *, op: AnyDmlOperator | None = None,
                     reason: str | None = None, shapes: Sequence[tuple[int, ...]] | None = None,
                     feeds: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    """What the DirectML operator produces for ``input_array`` (the whole tensor of
    ``case.shape``), one array per ONNX output in its ONNX shape: the reference executor runs
    the operator on the buffers it binds (:meth:`Operator.dml_inputs`). A case DirectML cannot
    express uses :func:`reference_outputs`.

    Args:
        case: the case.
        input_array: its input, as :func:`~ort_layouts.operators.values.make_input` makes it.
        op: ``dml_operator(case)`` when the caller has it already.
        reason: the operator's ``inexpressible_reason(case)`` when the caller has it already.
        shapes: ``output_shapes(case)`` when the caller has them already.
        feeds: the operator's ``input_feeds(case, input_array)``, of the case's data type, when
            the caller has them already.

    Raises:
        (:func:`_checked_input`) ``case`` is not a Case, or ``input_array`` not its input.
    """
    input_array = _checked_input(case, input_array)
    operator = operator_for_type(case.op)
    dtype = values_dtype(case.data_type)
    if operator.inexpressible_reason(case) if reason is None else reason:
        return [np.asarray(r, dtype=dtype, order="C") for r in operator.reference_outputs(case, input_array)]
    op = operator.dml_operator(case) if op is None else op
    if not is_multi_operator(op):
        shape = shapes[0] if shapes is not None and len(shapes) == 1 else None
        return [expected_output(case, input_array, op=op, reason="", shape=shape)]
    if feeds is None:
        feeds = operator.input_feeds(case, np.asarray(input_array, dtype=dtype, order="C"))
    bound = operator.dml_inputs(case, feeds)
    values = _output_values_all(op, [np.asarray(f, dtype=dtype, order="C") for f in bound])
    shapes = operator.output_shapes(case) if shapes is None else shapes
    return [np.asarray(v, order="C").reshape(shape) for v, shape in zip(values, shapes, strict=True)]


def _output_values(op: Any, input_buffer: Any) -> np.ndarray:
    """:func:`~ort_layouts.reference.execute.output_values` of an operator from
    :func:`dml_operator`: a packed whole-byte output is written straight into its values."""
    dtype = op.input.data_type
    if op.output.strides is not None or is_nibble(dtype):
        return output_values(op, input_buffer)
    raw_in = raw_bytes(input_buffer)
    check_buffer_size(raw_in, op.input, "input", addressed=True)
    values = np.zeros(op.output.sizes, dtype=dtype.to_numpy())
    src = strided_view(buffer_elements(raw_in[: op.input.total_tensor_size_in_bytes], dtype), op.input,
                       writeable=False)
    op.run(values.view(UINT_OF_SIZE[dtype.bitwidth // 8]), src, threads=None)
    return values


def _output_values_all(op: Any, input_buffers: Sequence[np.ndarray]) -> list[np.ndarray]:
    """:func:`~ort_layouts.reference.execute.output_values_all` of a JOIN or SPLIT from
    :func:`dml_operator`: packed whole-byte outputs are written straight into their values."""
    outputs = tuple(op.outputs)
    if any(d.strides is not None or is_nibble(d.data_type) for d in outputs):
        return output_values_all(op, input_buffers)
    for desc in outputs:
        desc.validate(is_output=True)
    srcs = input_views(tuple(op.inputs), input_buffers)
    values = [np.zeros(d.sizes, dtype=d.data_type.to_numpy()) for d in outputs]
    dsts = [v.view(UINT_OF_SIZE[d.data_type.bitwidth // 8]) for v, d in zip(values, outputs, strict=True)]
    op.run_all(dsts, srcs, threads=None)
    return values
