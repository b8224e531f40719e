"""Diagnosis: name what an execution provider did, in layout terms, when its output mismatches.

The actual output is tested against the outputs of alternative descriptors and operators (the
input read packed, another permutation, a broadcast stride left non-zero, padding swapped or on
the wrong axes, another padding mode, ...), each computed with the reference executor; the first
alternative that reproduces the output bit for bit is named. Each operator module gives its own
alternatives (``Operator.diagnosis_candidates``); the ones for values (64-bit integers moved
as 32-bit words, nothing written) are common to all, and NaN payloads replaced or quieted by a
float conversion are tried last.

Alternatives that read past the end of the input buffer (a broadcast stride not zeroed) are
compared only on the elements they read inside it; the message says so.

An operator with several outputs (Split) is diagnosed on all of them at once: the actual
outputs' bits one after another against each alternative's.

When no alternative reproduces the output, the recovery (``engine/recover.py``) infers what
was applied instead: the value transform, or the strided read, padding or operator parameters
the GPU applied (fitted from an input whose elements identify their source, through ``rerun``
when the caller gives it). :func:`explain` returns both the line and that structured
:class:`~ort_layouts.engine.recover.Recovery`; when a named alternative reproduces the output,
the recovery still runs for the structure, on the case's own input when that identifies every
element (numpy alone), else through ``rerun``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

import numpy as np

from ort_layouts._errors import DataTypeError, NotExpressibleError, OrtLayoutsError, ShapeError
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.recover import Recovery, Rerun, flat_bits, reference_bits
from ort_layouts.engine.recover import recover as recover_mismatch
from ort_layouts.operators.base import Candidate, CandidateResult, DiagnosisContext
from ort_layouts.operators.case import Case
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.operators.values import check_case, check_input
from ort_layouts.reference.compare import bits_equal, bits_of
from ort_layouts.reference.nans import nan_bits

__all__ = ["Diagnosis", "diagnose", "explain"]


@dataclasses.dataclass(frozen=True, slots=True)
class Diagnosis:
    """What a diagnosis found.

    Attributes:
        text: the one line (see :func:`diagnose`); "" when the output is right or nothing
            explains it.
        recovery: what the recovery inferred the GPU applied, next to what was expected, in
            DirectML terms (None when it inferred nothing, or did not run).
    """

    text: str
    recovery: Recovery | None = None


def diagnose(case: Case, input_array: np.ndarray, actual: np.ndarray | Sequence[np.ndarray],
             rerun: Rerun | None = None, *, recover: bool = True) -> str:
    """Explain a mismatching output in layout terms: :func:`explain`'s line.

    Args:
        case: the case that ran.
        input_array: the input it was given (logical values; for Concat the whole tensor its
            inputs were cut from).
        actual: the output the execution provider returned, or for an operator with several
            outputs the list of them in order.
        rerun: runs the case again on another input (the case's shape) and returns its outputs;
            the recovery uses it to read the case with an input whose elements identify their
            source. Without it the case's own input serves when its elements are distinct.
        recover: whether the recovery runs when no alternative reproduces the output.

    Returns:
        "" when the output is right or nothing explains it; else one line naming the
        alternative that reproduces it, e.g. "output matches the input read packed (strides
        ignored: a plain copy)", or what the recovery inferred, e.g. "recovered: the GPU read
        sizes [4,2,3] strides [1,12,4] offset 1; expected strides [1,12,4] offset 0: offset
        +1 element".
    """
    return explain(case, input_array, actual, rerun, recover=recover).text


def explain(case: Case, input_array: np.ndarray, actual: np.ndarray | Sequence[np.ndarray],
            rerun: Rerun | None = None, *, recover: bool = True) -> Diagnosis:
    """The diagnosis line and the structured recovery of a mismatching output.

    Arguments as :func:`diagnose`. The alternatives are tried first; the first that reproduces
    the output gives the line, and the recovery then runs on the case's own input when its
    elements identify their source (distinct, non-zero bits: no re-run), else through ``rerun``
    when given. When no alternative reproduces the output, the recovery gives the line (through
    ``rerun`` when given). With ``recover=False`` the recovery never runs. A re-run that fails
    (raises) is never raised: after an alternative was found it leaves that alternative's line,
    which says so; else the line says that no alternative reproduces the output and the
    recovery failed.

    NaN payloads replaced or quieted (a float conversion) are named only when no alternative
    that moves bits reproduces the output, and only when every element that differs is a NaN
    that became its own pattern quieted or the canonical quiet NaN.

    Raises:
        ArgumentError: ``case`` is no :class:`Case` (None), naming its type.
        DataTypeError, ShapeError: ``input_array`` is not of the case's data type (its values'
            numpy type) and shape, or ``actual`` is not one output for each of the case's, each
            of the data type's element size. An actual output of another shape is diagnosed
            (nothing explains it).
    """
    check_case(case)
    acts = [np.asarray(a) for a in actual] if isinstance(actual, (list, tuple)) else [np.asarray(actual)]
    input_array = _check_arguments(case, input_array, acts)
    try:
        operator = operator_for_type(case.op)
        op = operator.dml_operator(case)
        feeds = operator.dml_inputs(case, operator.input_feeds(case, np.asarray(input_array)))
        ctx = DiagnosisContext(case, input_array, op, feeds)
        act_bits = ctx.canonical(bits_of(acts[0])) if len(acts) == 1 else \
            np.concatenate([ctx.canonical(bits_of(a)) for a in acts])
        ctx.actual_bits = act_bits
        expected = ctx.run(ctx.op)
    except NotExpressibleError:  # no DirectML operator to vary: numpy's reading, its NaNs and places
        return _inexpressible(case, input_array, acts, recover=recover, rerun=rerun)
    except OrtLayoutsError:
        return Diagnosis("")
    if expected.size == act_bits.size and bits_equal(expected, act_bits):
        return Diagnosis("")
    for name, make in _candidates(ctx, expected):
        try:
            result = make()
        except OrtLayoutsError:
            continue
        verdict = _matches(result, act_bits, expected)
        if verdict is not None:
            text = f"output matches {name if isinstance(name, str) else name()}{verdict}"
            if not recover:
                return Diagnosis(text)
            try:
                found = _recovered(case, input_array, acts, expected, act_bits, None)
                if found is None and rerun is not None:
                    found = _recovered(case, input_array, acts, expected, act_bits, rerun)
            except Exception as e:  # a failed re-run (a device lost) keeps the alternative found
                return Diagnosis(f"{text}; the recovery failed: {e}")
            return Diagnosis(text, found)
    # values, not places: tried after every alternative that moves bits, which a NaN input
    # would otherwise pass for (a stride bug moving NaNs is no float conversion)
    name = str(ctx.op.to_dict().get("operator", ""))
    return _nans_then_places(case, input_array, acts, expected, act_bits, name, recover=recover,
                             rerun=rerun)


def _nans_then_places(case: Case, input_array: np.ndarray, acts: Sequence[np.ndarray],
                      expected: np.ndarray, act_bits: np.ndarray, operator: str, *, recover: bool,
                      rerun: Rerun | None) -> Diagnosis:
    """What :func:`explain` says when no alternative operator reproduces the output: NaN
    payloads rewritten (``operator``, the DirectML operator's name, "" for none), else the
    recovery of the places (with ``recover``)."""
    if expected.size == act_bits.size and case.data_type.is_float:
        nan = _nan_rewrite(case.data_type, expected, act_bits)
        if nan is not None:
            transform, story = nan
            values = Recovery("values", operator, {"transform": transform}, {"transform": "bit copy"},
                              (transform,), story)
            return Diagnosis(story, values if recover else None)
    if not recover:
        return Diagnosis("")
    try:
        found = _recovered(case, input_array, acts, expected, act_bits, rerun)
    except Exception as e:  # a failed re-run (a device lost) is said, as after an alternative
        return Diagnosis(f"no alternative reproduces the output; the recovery failed: {e}")
    return Diagnosis(found.text if found is not None else "", found)


def _inexpressible(case: Case, input_array: np.ndarray, acts: Sequence[np.ndarray], *, recover: bool,
                   rerun: Rerun | None) -> Diagnosis:
    """:func:`explain` of a case DirectML cannot express (a Pad that crops, a rank-0 Transpose),
    which other EPs run: no alternative operator to try, but the output is still compared with
    numpy's reading (:meth:`~ort_layouts.operators.base.Operator.reference_outputs`) for NaNs
    rewritten, and its places recovered (the recovery fits such a case in ONNX terms)."""
    try:
        expected = reference_bits(case, np.asarray(input_array))
    except OrtLayoutsError:
        return Diagnosis("")
    act_bits = flat_bits(acts)
    if expected.size == act_bits.size and bits_equal(expected, act_bits):
        return Diagnosis("")
    for name, make in operator_for_type(case.op).inexpressible_candidates(case, np.asarray(input_array)):
        try:
            bits = bits_of(make())
        except OrtLayoutsError:
            continue
        if bits.size == act_bits.size and bits_equal(bits, act_bits):
            return Diagnosis(f"output matches {name}")
    return _nans_then_places(case, input_array, acts, expected, act_bits, "", recover=recover, rerun=rerun)


def _check_arguments(case: Case, input_array: np.ndarray, acts: Sequence[np.ndarray]) -> np.ndarray:
    """The input (:func:`~ort_layouts.operators.values.check_input`: in this machine's byte order).

    Raises:
        ShapeError, DataTypeError: the input is not of the case's shape and data type, or the
            outputs are not as many as the case has, each of its data type's element size (an
            output of another shape is the provider's doing, and diagnosed)."""
    x = check_input(case, input_array, f"case {case.id}: the input")
    count = len(operator_for_type(case.op).output_shapes(case))
    if len(acts) != count:
        raise ShapeError(f"case {case.id}: {len(acts)} actual output(s); valid: {count}, one per "
                         "output of the case")
    size = max(1, case.data_type.bitwidth // 8)
    for k, a in enumerate(acts):
        if a.dtype.itemsize != size:
            raise DataTypeError(f"case {case.id}: actual output {k} is {a.dtype}, of {a.dtype.itemsize}-byte "
                                f"elements; valid: {size}-byte elements, as {case.data_type.name}'s")
    return x


class _RerunFailed(Exception):
    """A re-run that raised (a device lost, a session ONNX Runtime refused, a re-run budget
    spent), told from the recovery's own refusals, which leave no recovery: its message is the
    re-run's."""


def _failing_loudly(rerun: Rerun) -> Rerun:
    def run(x: np.ndarray) -> Sequence[np.ndarray]:
        try:
            return rerun(x)
        except Exception as e:
            raise _RerunFailed(str(e)) from e

    return run


def _recovered(case: Case, input_array: np.ndarray, acts: Sequence[np.ndarray], expected: np.ndarray,
               act_bits: np.ndarray, rerun: Rerun | None) -> Recovery | None:
    """The recovery, None where it names nothing or refuses the case (its own typed errors).

    Raises:
        _RerunFailed: ``rerun`` raised, whatever its error (the caller's line says so)."""
    try:
        return recover_mismatch(case, np.asarray(input_array), acts, expected, act_bits,
                                None if rerun is None else _failing_loudly(rerun))
    except (OrtLayoutsError, ValueError, NotImplementedError):
        return None


def _nan_rewrite(dtype: DataType, expected: np.ndarray, actual: np.ndarray) -> tuple[str, str] | None:
    """(transform, line) of a mismatch where only NaN elements differ, each as a float conversion
    leaves it: quieted, or replaced by the canonical quiet NaN (:meth:`NanBits.converted`);
    None for another mismatch. Quiet NaNs that traded places are no conversion: a quiet NaN
    that is neither its own pattern quieted nor the canonical one refuses the whole output.
    The same NaN may come out two ways (ONNX Runtime's CPU Pad converts its constant and its
    data on two paths: a constant quieted in the border, the canonical NaN at the end)."""
    differ = expected != actual
    exp, act = expected[differ], actual[differ]
    nan = nan_bits(dtype)
    if not nan.converted(exp, act).all():
        return None
    count = int(differ.sum())
    quiet = nan.quiet
    if ((exp | exp.dtype.type(quiet)) == act).all():
        return ("signalling NaNs quieted",
                f"output matches the input with signalling NaNs quieted ({count} element(s) gained the "
                f"quiet bit 0x{quiet:x}): the values went through a float conversion, not a bit copy")
    return ("NaN payloads replaced",
            f"output matches the input with NaN payloads replaced ({count} NaN element(s) changed their "
            "payload bits): the values went through a float conversion, not a bit copy")


def _matches(result: CandidateResult, actual: np.ndarray, expected: np.ndarray) -> str | None:
    if result is None:
        return None
    if isinstance(result, tuple):
        values, inside = result
        if values.size != actual.size or not inside.any():
            return None
        if (values[inside] != actual[inside]).any():
            return None
        if expected.size == actual.size and not (actual[inside] != expected[inside]).any():
            return None  # explains nothing that differs
        if inside.all():
            return ""
        return (f" on the {int(inside.sum())} of {inside.size} elements it reads inside the input "
                "buffer (the rest lie past its end)")
    if result.size != actual.size or not bits_equal(result, actual):
        return None
    if result.size == expected.size and bits_equal(result, expected):
        return None
    return ""


def _candidates(ctx: DiagnosisContext, expected: np.ndarray) -> Iterator[Candidate]:
    if ctx.dtype.is_64bit_integer:
        yield from _int64_candidates(ctx, expected)
    yield from operator_for_type(ctx.case.op).diagnosis_candidates(ctx)
    yield ("all zeros (nothing was written)", lambda: np.zeros_like(expected))


def _int64_candidates(ctx: DiagnosisContext, expected: np.ndarray) -> Iterator[Candidate]:
    low = expected & np.uint64(0xFFFFFFFF)
    yield ("the 64-bit integers moved as UINT32 low words (high words zero: the 32-bit emulation)",
           lambda: low)
    yield ("the 64-bit integers truncated to 32 bits and sign-extended",
           lambda: low.view(np.uint32)[0::2].view(np.int32).astype(np.int64).view(np.uint64))
