"""Known execution-provider deviations, waived only when the diagnosis proves the signature.

A mismatch is labelled with a known issue when the provider, op and data type match an entry,
the case lies inside what the entry was seen on (its rank, its opset, the version of ONNX
Runtime, where the entry names them: a deviation seen only for rank-2 Transposes does not waive
a rank-4 one) AND the diagnosis (which reproduced the whole actual output bit for bit from an
alternative) names that entry's signature. Anything else stays an unexplained mismatch. A labelled case is
still a mismatch in every report; the command line does not fail a run on it unless asked to
(``--strict``).
"""

from __future__ import annotations

import dataclasses

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.pad import PAD_INPUTS_OPSET

__all__ = ["KNOWN_ISSUES", "KnownIssue", "known_issue_for"]


@dataclasses.dataclass(frozen=True, slots=True)
class KnownIssue:
    """One known deviation of an execution provider from a bit-exact layout operation.

    Attributes:
        provider, op, data_types: where it was seen.
        signatures: the diagnosis prefixes that prove it.
        reason: what it is, and where it was seen.
        ranks: the input ranks it was seen with; empty: any.
        opset_below: it was seen only below this opset (a case built at the default opset, the
            newest, is not below any); None: any opset.
        ort_versions: the ONNX Runtime releases ("major.minor") it was seen with: those of the
            runtime that runs the provider (this process's onnxruntime for the in-process ones,
            the pinned onnxruntime-directml for DirectML through the worker:
            :func:`~ort_layouts.engine.providers.runtime_version`); empty: any.
    """

    provider: str
    op: str
    data_types: tuple[DataType, ...]
    signatures: tuple[str, ...]
    reason: str
    ranks: tuple[int, ...] = ()
    opset_below: int | None = None
    ort_versions: tuple[str, ...] = ()

    def matches(self, result: CaseResult, ort_version: str = "") -> bool:
        """Whether ``result`` is this deviation; ``ort_version``: the ONNX Runtime that ran it
        (needed when :attr:`ort_versions` names some)."""
        case = result.case
        return (result.status is Status.MISMATCH and result.provider == self.provider
                and case.op == self.op and case.data_type in self.data_types
                and (not self.ranks or len(case.shape) in self.ranks)
                and (self.opset_below is None or (case.opset is not None and case.opset < self.opset_below))
                and (not self.ort_versions or _release(ort_version) in self.ort_versions)
                and result.diagnosis.startswith(self.signatures))


def _release(version: str) -> str:
    """"major.minor" of a version string ("1.30.0" -> "1.30")."""
    return ".".join(version.split(".")[:2])


KNOWN_ISSUES: tuple[KnownIssue, ...] = (
    KnownIssue(
        provider="CPUExecutionProvider", op="Pad", data_types=(DataType.FLOAT16,),
        signatures=("output matches the input with signalling NaNs quieted",
                    "output matches the input with NaN payloads replaced"),
        reason="ONNX Runtime's CPU Pad moves float16 through float32, which quiets signalling NaNs "
               "(and replaces a rank-1 constant's payload); Transpose and Expand keep the bits"),
    KnownIssue(
        provider="CPUExecutionProvider", op="Tile", data_types=(DataType.FLOAT16,),
        signatures=("output matches the input with NaN payloads replaced",
                    "output matches the input with signalling NaNs quieted"),
        reason="ONNX Runtime's CPU Tile (seen in 1.30 and 1.32) moves float16 through a float "
               "conversion, which replaces NaN payloads; Transpose and Expand keep the bits"),
    *(KnownIssue(
        provider="CPUExecutionProvider", op=op, data_types=(DataType.FLOAT16,),
        signatures=("output matches the input with signalling NaNs quieted",),
        reason=f"ONNX Runtime 1.30's CPU {op} (seen on the GPU machine) moves float16 through "
               "float32, which quiets signalling NaNs; 1.32 keeps the bits", ort_versions=("1.30",))
      for op in ("DepthToSpace", "SpaceToDepth")),
    KnownIssue(
        provider="DmlExecutionProvider", op="Transpose", data_types=(DataType.FLOAT16,),
        signatures=("output matches the input with signalling NaNs quieted",),
        reason="seen with DirectML 1.15.4 (ONNX Runtime 1.24.4's DML EP) on Wine/vkd3d 1.6 and Mesa "
               "lavapipe (DXBC shaders): a rank-2 float16 Transpose quiets signalling NaNs; the "
               "other float16 Transposes keep the bits", ranks=(2,)),
    KnownIssue(
        provider="DmlExecutionProvider", op="Pad", data_types=(DataType.FLOAT16,),
        signatures=("output matches the constant replaced by 0xffff",),
        reason="seen with DirectML 1.15.4 (ONNX Runtime 1.24.4's DML EP) on Wine/vkd3d 1.6, on Mesa "
               "lavapipe and on an NVIDIA H100: a float16 Pad-10 (the constant as the float 'value' "
               "attribute) pads with 0xFFFF (a NaN) instead of a non-zero constant. The DML EP writes "
               "that float's 32 bits into PaddingValue.Float32 for a FLOAT16 tensor "
               "(CastToClampedScalarUnion<float>), where from opset 11 (the constant as a float16 "
               "input) it copies the float16 bits, and the constant is right", opset_below=PAD_INPUTS_OPSET),
    KnownIssue(
        provider="DmlExecutionProvider", op="Pad", data_types=tuple(DataType),
        signatures=("output matches the negative start padding taken as unsigned",),
        reason="seen with DirectML 1.9.1, 1.13.1 and 1.15.4 alike (ONNX Runtime 1.24.4's DML EP) on "
               "Wine/vkd3d 1.6 and Mesa lavapipe: from opset 11 the DML EP runs a Pad that crops, its "
               "PaddingHelper keeping the negative pads in uint32 (DmlOperatorPadding passes them to "
               "DML_PADDING1 as 2^32 - k); "
               "a constant or edge Pad that crops at the start reads every position along that axis as "
               "past the input's end; crops at the end, and reflect, come out right"),
)


def known_issue_for(result: CaseResult, ort_version: str | None = None) -> str:
    """The reason of the known issue that explains ``result``, or "".

    Args:
        ort_version: the version of the ONNX Runtime that ran it (the runner gives
            :func:`~ort_layouts.engine.providers.runtime_version` of its provider); None: this
            process's onnxruntime (the in-process providers')."""
    if ort_version is None:
        import onnxruntime

        ort_version = str(onnxruntime.__version__)
    for issue in KNOWN_ISSUES:
        if issue.matches(result, ort_version):
            return issue.reason
    return ""
