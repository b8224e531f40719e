"""ONNX Pad: DML_OPERATOR_PADDING1 after the EP's coercion to 4 dimensions.

As ONNX Runtime's DML EP builds it (``DmlOperatorPadding`` in
``onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/DmlOperatorPadding.cpp``):
the input is right-aligned to 4 dimensions, ONNX pads [x1_begin, ..., x1_end, ...] (over the
axes input from opset 18) become unsigned start/end padding with leading zeros, constant ->
CONSTANT, edge -> EDGE, reflect -> REFLECTION, wrap -> WRAP (opset 19, feature level 6.4), and
the constant is in the tensor's own data type (PADDING1). Negative pads (cropping) cannot be
expressed: the DML EP cannot run such a Pad, and other EPs are compared with numpy.

A node without a mode attribute is a constant Pad, as ONNX defines it. ``DmlOperatorPadding.cpp``
reads a missing mode as reflect, but ONNX Runtime gives every attribute a node leaves out its
schema's default when it resolves the graph (``VerifyNodeAndOpMatch`` in ``graph.cc``), so the
kernel never sees one missing: on DirectML 1.15.4 such nodes pad the constant
(``tests/engine/dml/test_dml_pad_default_mode.py``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
import onnx
from onnx import helper

from ort_layouts._errors import NotExpressibleError, ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.base import (
    Candidate,
    CandidateResult,
    Described,
    DiagnosisContext,
    Operator,
    fmt_ints,
)
from ort_layouts.operators.case import Case
from ort_layouts.operators.kernels import flag_no_kernel
from ort_layouts.operators.onnx_nodes import (
    Flagged,
    Graph,
    add_node,
    attrs,
    check_input,
    check_size,
    const_ints,
    flag_overridable,
    int64_initializer,
    value_hex,
)
from ort_layouts.operators.padding import (
    PaddingMode,
    PaddingOp,
    empty_axes_reason,
    ep_pads,
    ep_value_union,
    padding_for,
    split_onnx_pads,
)
from ort_layouts.operators.shapes import rotating
from ort_layouts.operators.values import special_values
from ort_layouts.reference.buffers import is_nibble, nibble_values, values_dtype
from ort_layouts.reference.nans import nan_bits

__all__ = ["PAD_MODES", "Pad", "has_negative_pads"]

PAD_INPUTS_OPSET = 11  # pads and constant_value become inputs
PAD_AXES_OPSET = 18  # the axes input
PAD_WRAP_OPSET = 19  # mode "wrap"
PAD_MODES: tuple[str, ...] = ("constant", "edge", "reflect", "wrap")

# ONNX Pad modes other than "constant" as numpy.pad names them
_NUMPY_PAD_MODES: dict[str, Literal["edge", "reflect", "wrap"]] = {
    "edge": "edge", "reflect": "reflect", "wrap": "wrap"}

_PAD_SHAPES: dict[int, tuple[int, ...]] = {
    1: (5,), 2: (3, 4), 3: (2, 3, 4), 4: (2, 3, 2, 3), 5: (2, 1, 3, 2, 2),
}


def has_negative_pads(case: Case) -> bool:
    """Whether a Pad case crops (a negative pad): DirectML cannot express it."""
    return case.op == "Pad" and any(p < 0 for p in case.pads or ())


def _split_pads(shape: tuple[int, ...], pads: Sequence[int],
                axes: Sequence[int] | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """ONNX ``pads`` as the ``begins`` and ``ends`` of each axis of ``shape``
    (:func:`split_onnx_pads`).

    Raises:
        ShapeError: they leave an axis no size >= 0 (a crop past the dimension is no tensor:
            ONNX Runtime fails such a node, "Tensor shape.Size() must be >= 0").
    """
    begins, ends = split_onnx_pads(pads, len(shape), axes)
    for axis, (n, b, e) in enumerate(zip(shape, begins, ends, strict=True)):
        if n + b + e < 0:
            raise ShapeError(f"Pad pads {list(pads)} crop axis {axis} of the input {list(shape)} past its "
                             f"size: {n} with pads {b} and {e} is {n + b + e}; valid: pads that leave each "
                             "axis a size >= 0")
    return tuple(begins), tuple(ends)


def _pad_value_size(data_type: DataType) -> int:
    """The bytes of a Pad constant: an element's, one for 4-bit types (its low nibble)."""
    return max(1, data_type.bitwidth // 8)


def _pad_value_bytes(case: Case) -> bytes:
    """The constant's little-endian bytes as the case's values hold it (for 4-bit types the byte
    of :func:`~ort_layouts.reference.buffers.values_dtype`: the low nibble, INT4's sign-extended)."""
    raw = bytes.fromhex(case.pad_value_hex) if case.pad_value_hex else bytes(_pad_value_size(case.data_type))
    if is_nibble(case.data_type):
        return nibble_values(np.array([raw[0] & 0x0F], dtype=np.uint8), case.data_type).tobytes()
    return raw


def _ep_padding(case: Case) -> tuple[str, str]:
    """The DML EP's StartPadding and EndPadding of a Pad, printed: ONNX's pads in uint32 (a
    negative pad wraps to 2^32 - k), with the leading zeros of DmlOperator::Initialize's
    4 dimensions."""
    pads = ep_pads(*split_onnx_pads(case.pads or (), case.rank, case.axes), case.rank)
    start, end = (fmt_ints(p % 2**32 for p in side) for side in pads)
    return start, end


def _pad_value(case: Case) -> np.ndarray | None:
    if not case.pad_value_hex:
        return None
    dtype = case.data_type.to_numpy().newbyteorder("<")
    raw = bytes.fromhex(case.pad_value_hex)  # of the type's size: check_case refused any other
    return np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="))[0:1].reshape(())


def _pad_vectors(shape: tuple[int, ...], mode: str) -> list[tuple[int, ...]]:
    """pads over all axes: one axis at a time (begin, end, both; 1, dim-1, dim, beyond), all axes."""
    rank = len(shape)
    vecs: list[tuple[int, ...]] = [(0,) * (2 * rank)]
    if mode != "reflect" or min(shape) > 1:
        vecs.append((1,) * (2 * rank))
    for axis, n in enumerate(shape):
        amounts = {1, max(n - 1, 1)}
        if mode != "reflect":
            amounts |= {n, 2 * n + 1}  # up to and beyond the dimension
        elif n - 1 < 1:
            continue  # reflect needs pads < dim (ONNX Runtime's rule)
        for amount in sorted(amounts):
            for begin, end in ((amount, 0), (0, amount), (amount, max(amount - 1, 0))):
                v = [0] * (2 * rank)
                v[axis], v[rank + axis] = begin, end
                vecs.append(tuple(v))
    begins = [min(1, n - 1) if mode == "reflect" else 2 for n in shape]
    ends = [min(a % 2, n - 1) if mode == "reflect" else 1 + a % 3 for a, n in enumerate(shape)]
    vecs.append(tuple(begins) + tuple(ends))
    return list(dict.fromkeys(vecs))


def _border_value(ctx: DiagnosisContext, variant: Callable[..., Callable[[], CandidateResult]],
                  start: tuple[int, ...], end: tuple[int, ...]) -> bytes | None:
    """The little-endian bytes of the first border element of the EP's output (None when the
    case has no border or the type is 4-bit)."""
    if ctx.actual_bits is None or ctx.dtype.bitwidth < 8:
        return None
    item = ctx.dtype.bitwidth // 8
    low = variant(start, end, PaddingMode.CONSTANT, bytes(item))()
    high = variant(start, end, PaddingMode.CONSTANT, b"\xff" * item)()
    if (not isinstance(low, np.ndarray) or not isinstance(high, np.ndarray)
            or low.size != ctx.actual_bits.size):
        return None
    border = low != high
    if not border.any():
        return None
    value = ctx.actual_bits[border][0]
    return np.asarray(value).astype(value.dtype.newbyteorder("<")).tobytes()


def _converted_nan(dtype: DataType, constant: bytes, written: bytes) -> bool:
    """Whether ``written`` (little-endian bytes) is what a float conversion makes of a NaN
    ``constant``: its quieted pattern or the canonical quiet NaN. The diagnosis names that as
    the conversion it is (NaNs quieted or their payloads replaced), not as another constant."""
    if not dtype.is_float or len(constant) != len(written):
        return False
    nan = nan_bits(dtype)
    return bool(nan.converted(int.from_bytes(constant, "little"), int.from_bytes(written, "little")))


def _as_float_attribute(value: np.ndarray) -> np.ndarray:
    """``value`` as a Pad before opset 11 holds it: a Python float (:meth:`Pad.add_node`) in an
    ONNX float attribute, which the EPs read as a float32 (``DmlOperatorPadding.cpp``:
    ``GetOptionalAttribute<float>``) and cast to the tensor's type; its bytes in that type."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(np.float32(float(value))).astype(value.dtype)


class Pad(Operator):
    op_types = ("Pad",)
    case_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {"Pad": ("pads", "mode", "pad_value_hex", "axes")}
    edge_specs = ({"shape": (2, 0), "pads": (0, 0, 0, 0)},
                  {"shape": (0, 3), "pads": (0, 1, 0, 1), "mode": "edge"})
    default_mode = "constant"
    min_opset = 2
    stride_view = False

    def check_case(self, case: Case) -> None:
        """A mode of :data:`PAD_MODES`, a constant of the data type's size, pads with a begin
        and an end for each of its axes that leave every axis a size >= 0 (a crop past the
        dimension is no tensor), and a mode other than constant padding only axes with
        elements left to read once cropped (what its opset lacks: :meth:`opset_problem`)."""
        if case.pads is None:
            raise ShapeError("a Pad case needs pads")
        if not case.shape:  # ONNX Runtime's CPU EP and ONNX's reference both fail such a node
            raise ShapeError("a rank-0 Pad is not defined (a scalar has no axis to pad); valid: an input of "
                             "rank >= 1")
        if case.mode not in PAD_MODES:
            raise ShapeError(f"Pad mode {case.mode!r} is not valid; valid: {list(PAD_MODES)}")
        if case.pad_value_hex:
            try:
                raw = bytes.fromhex(case.pad_value_hex)
            except ValueError:
                raise ShapeError(f"Pad pad_value_hex {case.pad_value_hex!r} is not hexadecimal bytes; valid: "
                                 "the constant's little-endian bytes in hex, e.g. '0000803f' (1.0)") from None
            size = _pad_value_size(case.data_type)
            if len(raw) != size:
                raise ShapeError(f"Pad pad_value_hex {case.pad_value_hex!r} is {len(raw)} bytes; valid: "
                                 f"{size} ({case.data_type.name}), or '' for no constant (0)")
        begins, ends = _split_pads(case.shape, case.pads, case.axes)
        for axis, (n, b, e) in enumerate(zip(case.shape, begins, ends, strict=True)):
            left = n + min(b, 0) + min(e, 0)
            if case.mode != "constant" and left <= 0 and (b > 0 or e > 0):
                raise ShapeError(
                    f"Pad mode {case.mode!r} pads axis {axis} of the input {list(case.shape)} (pads "
                    f"{list(case.pads)}), which has no element left to read once cropped; valid: mode "
                    "'constant', or pads only on axes with elements")

    def opset_problem(self, case: Case, opset: int) -> str:
        """Why a Pad case cannot be a node at ``opset`` ("" when it can): mode wrap came with
        Pad-19, the axes input with Pad-18, and before Pad-11 the data is of a float type
        (Pad-2's T: float16, float, double) and the constant a float attribute, which must hold
        it exactly."""
        if case.mode == "wrap" and opset < PAD_WRAP_OPSET:
            return (f"Pad mode 'wrap' came with opset {PAD_WRAP_OPSET}, and the opset is {opset}; valid: "
                    f"opset >= {PAD_WRAP_OPSET}, or another mode")
        if case.axes is not None and opset < PAD_AXES_OPSET:
            return (f"Pad's axes input came with opset {PAD_AXES_OPSET}, and the opset is {opset}; valid: "
                    f"opset >= {PAD_AXES_OPSET}, or no axes")
        if opset < PAD_INPUTS_OPSET and not case.data_type.is_float:
            return (f"Pad before opset {PAD_INPUTS_OPSET} (Pad-2, the opset is {opset}) takes float16, "
                    f"float32 and float64 data, not {case.data_type.name}; valid: a float type, or "
                    f"opset >= {PAD_INPUTS_OPSET}")
        if opset < PAD_INPUTS_OPSET and case.pad_value_hex:
            value = _pad_value(case)
            assert value is not None
            held = _as_float_attribute(value)
            if held.tobytes() != value.tobytes():
                return (f"Pad's constant is a float attribute before opset {PAD_INPUTS_OPSET} (the opset is "
                        f"{opset}), and pad_value_hex {case.pad_value_hex!r} ({case.data_type.name} "
                        f"{value.item()!r}) does not survive it: it reads back as {held.tobytes().hex()!r}; "
                        f"valid: a constant that a float32 holds exactly (no signalling NaN), or "
                        f"opset >= {PAD_INPUTS_OPSET}")
        return ""

    def id_parts(self, case: Case) -> list[str]:
        parts = [case.mode, "pads" + ".".join(map(str, case.pads or ())).replace("-", "m")]
        if case.axes is not None:
            parts.append("axes" + ".".join(map(str, case.axes)).replace("-", "m"))
        if case.pad_value_hex:
            parts.append("v" + case.pad_value_hex)
        return parts

    def output_shape(self, case: Case) -> tuple[int, ...]:
        begins, ends = split_onnx_pads(case.pads or (), case.rank, case.axes)
        return tuple(n + b + e for n, b, e in zip(case.shape, begins, ends, strict=True))

    def inexpressible_reason(self, case: Case) -> str:
        reason = empty_axes_reason(case.axes)
        if reason or not has_negative_pads(case):
            return reason or super().inexpressible_reason(case)
        if not self.ep_runs_inexpressible(case):  # over DirectML's limits, or a Pad-10
            return self.limits_reason(case) or (
                "negative pads (cropping) cannot be expressed as DML_OPERATOR_PADDING1 (unsigned "
                f"start/end padding); the DML EP does not take this Pad before opset {PAD_INPUTS_OPSET}")
        start, end = _ep_padding(case)
        return ("negative pads (cropping) cannot be expressed as DML_OPERATOR_PADDING1 "
                f"(unsigned start/end padding); from opset {PAD_INPUTS_OPSET} the DML EP runs this Pad "
                "all the same, its PaddingHelper keeping the pads in uint32: StartPadding "
                f"{start}, EndPadding {end} (the output's sizes wrap to ONNX's), which DirectML's "
                "documentation gives no meaning; the output is compared with ONNX's")

    def ep_runs_inexpressible(self, case: Case) -> bool:
        """An empty tensor, and a Pad that crops from opset 11: the DML EP's PaddingHelper
        reads the pads input into int32 and keeps them in its uint32 StartPadding and
        EndPadding, and DirectML takes the wrapped values (its size check wraps alike). The
        real DML EP ran every such suite case here; a Pad-10 that crops it leaves to another
        EP."""
        if super().ep_runs_inexpressible(case):
            return True
        return (has_negative_pads(case) and not empty_axes_reason(case.axes)
                and not self.limits_reason(case)
                and (case.opset is None or case.opset >= PAD_INPUTS_OPSET))

    def inexpressible_candidates(self, case: Case, input_array: np.ndarray) -> Iterator[
            tuple[str, Callable[[], np.ndarray]]]:
        """A Pad that crops at the start, read as the DML EP's uint32 StartPadding says: every
        position along a cropped axis lies before 2^32 - k, and is read as past the input's
        end (constant: the constant; edge: the input's last element there). Seen on the real
        DML EP (its constant and edge Pads that crop at the start); reflect and crops at the
        end come out right."""
        begins, _ = split_onnx_pads(case.pads or (), case.rank, case.axes)
        cropped = [axis for axis, b in enumerate(begins) if b < 0]
        if not cropped or case.mode not in ("constant", "edge"):
            return
        x = np.asarray(input_array)
        if is_nibble(case.data_type):
            x = x.astype(values_dtype(case.data_type), copy=False)
        shape = self.output_shape(case)

        def past_end() -> np.ndarray:
            uint = np.dtype(f"u{x.dtype.itemsize}")
            if case.mode == "constant":
                value = np.frombuffer(_pad_value_bytes(case), dtype=uint.newbyteorder("<"))[0]
                return np.full(shape, value, dtype=uint).view(x.dtype)
            maps = [np.full(m, n - 1) if b < 0 else np.clip(np.arange(m) - b, 0, n - 1)
                    for n, m, b in zip(x.shape, shape, begins, strict=True)]
            return np.ascontiguousarray(x[np.ix_(*maps)])

        yield (f"the negative start padding taken as unsigned (StartPadding {_ep_padding(case)[0]}): "
               "every position "
               f"along axes {cropped} read as past the input's end "
               f"({'the constant' if case.mode == 'constant' else 'its last element'})", past_end)

    def dml_operator(self, case: Case) -> PaddingOp:
        op = padding_for(BufferTensorDesc(case.data_type, case.shape), case.pads or (), mode=case.mode,
                         value_hex=case.pad_value_hex, axes=case.axes)
        return ep_value_union(op, case.opset)

    def reference_output(self, case: Case, input_array: np.ndarray) -> np.ndarray:
        """np.pad (ONNX's own reference implementation), extended to negative pads as ONNX
        Runtime reads them: a constant pad crops after padding with the non-negative parts (a
        crop may then reach into the constant); edge, reflect and wrap pad what is left once
        cropped (edge and reflect read the same either way; wrap wraps around the cropped
        tensor, not the whole input). The constant is written bit for bit (NaN payloads kept)."""
        x = np.asarray(input_array)
        if is_nibble(case.data_type):
            x = x.astype(values_dtype(case.data_type), copy=False)
        begins, ends = split_onnx_pads(case.pads or (), case.rank, case.axes)
        width = [(max(b, 0), max(e, 0)) for b, e in zip(begins, ends, strict=True)]
        if case.mode != "constant":
            x = x[tuple(slice(max(-b, 0), n - max(-e, 0))
                        for n, b, e in zip(x.shape, begins, ends, strict=True))]
            return np.ascontiguousarray(np.pad(x, width, mode=_NUMPY_PAD_MODES[case.mode]))
        uint = np.dtype(f"u{x.dtype.itemsize}")
        value = np.frombuffer(_pad_value_bytes(case), dtype=uint.newbyteorder("<"))[0]
        padded = np.pad(x.view(uint), width, mode="constant", constant_values=value).view(x.dtype)
        crop = tuple(slice(max(-b, 0), padded.shape[a] - max(-e, 0))
                     for a, (b, e) in enumerate(zip(begins, ends, strict=True)))
        return np.ascontiguousarray(padded[crop])

    def add_node(self, graph: onnx.GraphProto, index: int, case: Case, opset: int) -> None:
        """Attributes before opset 11, inputs from 11, the axes input from 18, wrap from 19."""
        x, y, name = f"x{index}", f"y{index}", f"n{index}_{case.op}"
        value = _pad_value(case)
        pads = [int(p) for p in case.pads or ()]
        if opset < PAD_INPUTS_OPSET:
            node_attrs: dict[str, Any] = {"mode": case.mode, "pads": pads}
            if value is not None:
                node_attrs["value"] = float(value)
            graph.node.append(helper.make_node("Pad", [x], [y], name=name, doc_string=case.id, **node_attrs))
            return
        inputs = [x, f"pads{index}"]
        int64_initializer(graph, f"pads{index}", pads)
        if value is not None:
            tensor = graph.initializer.add()  # from_array of the 0-d constant: its little-endian bytes
            tensor.name = f"value{index}"
            tensor.raw_data = bytes.fromhex(case.pad_value_hex)
            tensor.data_type = case.data_type.to_onnx()
            inputs.append(f"value{index}")
        if case.axes is not None:
            if value is None:
                inputs.append("")
            int64_initializer(graph, f"axes{index}", case.axes)
            inputs.append(f"axes{index}")
        node = add_node(graph, "Pad", inputs, y, name, case.id)
        attr = node.attribute.add()
        attr.name = "mode"
        attr.s = case.mode.encode("utf-8")
        attr.type = onnx.AttributeProto.STRING

    def suite_cases(self, dtypes: Sequence[DataType], ranks: set[int], seed: int) -> list[Case]:
        """constant (with and without a value), edge, reflect and wrap; pads up to and beyond the
        dimension where ONNX Runtime allows it (reflect: below it); the axes input; opsets
        10/11/13/18/19; negative pads; special inputs and constants."""
        out: list[Case] = []
        modes = PAD_MODES
        for rank in sorted(r for r in ranks if r <= 5):
            shape = _PAD_SHAPES[rank]
            for mode in modes:
                for k, pads in enumerate(_pad_vectors(shape, mode)):
                    chosen = list(dtypes) if rank <= 2 else [rotating(dtypes, k)]
                    for dt in chosen:
                        value = (value_hex(7, dt) or "") if mode == "constant" and k % 2 else ""
                        out.append(Case("Pad", dt, shape, pads=pads, mode=mode, pad_value_hex=value))
                for dt in dtypes:  # special inputs; a special constant (NaN payload, -0.0, extreme)
                    specials = special_values(dt)
                    value = "" if mode != "constant" else \
                        specials[1:2].astype(specials.dtype.newbyteorder("<")).tobytes().hex()
                    pads = tuple(min(1, n - 1) for n in shape) * 2 if mode == "reflect" else (1,) * (2 * rank)
                    out.append(Case("Pad", dt, shape, pads=pads, mode=mode, pad_value_hex=value,
                                    values="special"))
            if rank >= 2:  # the axes input (opset 18+), negative axes included
                for k, axes in enumerate([(0,), (-1,), (rank - 1, 0), (-2, -1)]):
                    for mode in modes:
                        pads = tuple(1 for _ in axes) + tuple(min(2, shape[a] - 1) if mode == "reflect" else 2
                                                              for a in axes)
                        for dt in (dtypes[0], rotating(dtypes, k + 1)):
                            out.append(Case("Pad", dt, shape, pads=pads, mode=mode, axes=axes))
        if not ranks & {2, 3}:
            return out
        # opsets that change Pad: 2-10 attributes (float types only), 11-17 inputs, 18 axes, 19 wrap
        shape = (3, 4)
        floats = [dt for dt in dtypes if dt.is_float]
        for opset, mode in ((10, "constant"), (10, "edge"), (10, "reflect"), (11, "constant"), (11, "edge"),
                            (11, "reflect"), (13, "constant"), (18, "edge"), (19, "wrap")):
            chosen = floats if opset < 11 else list(dtypes)
            for dt in chosen:
                value = (value_hex(-3, dt) or "") if mode == "constant" else ""
                out.append(Case("Pad", dt, shape, pads=(1, 2, 2, 1), mode=mode, pad_value_hex=value,
                                opset=opset))
        # negative pads (cropping): DirectML cannot express them; other EPs compare with numpy.
        # Not with wrap: ONNX does not say whether wrap reads the cropped or the whole tensor
        # (the reference reads the cropped one, as ONNX Runtime's CPU EP does).
        for mode in ("constant", "edge", "reflect"):
            crops = [(-1, 0, 0, 0), (0, 0, 0, -2), (-1, 1, 1, -1), (0, -1, 0, 2), (1, 0, -2, 0)]
            for k, pads in enumerate(crops):
                if mode == "reflect" and pads in ((0, -1, 0, 2), (1, 0, -2, 0)):
                    continue  # ONNX Runtime crops first, and then a reflect pad must stay below the dim
                for dt in (dtypes[0], rotating(dtypes, k + 1)):
                    out.append(Case("Pad", dt, shape, pads=pads, mode=mode))
        return out

    def diagnosis_candidates(self, ctx: DiagnosisContext) -> Iterator[Candidate]:
        """The constant lost; start and end swapped; another mode; pads read interleaved,
        aligned left, or on the wrong axes."""
        op = ctx.op
        assert isinstance(op, PaddingOp)
        case = ctx.case
        value_hex = op.padding_value_bytes.hex()
        zero_value = not any(op.padding_value_bytes)

        def variant(start: tuple[int, ...], end: tuple[int, ...], mode: PaddingMode,
                    value: bytes) -> Callable[[], CandidateResult]:
            def run() -> CandidateResult:
                sizes = tuple(n + s + e for n, s, e in zip(op.input.sizes, start, end, strict=True))
                alt = PaddingOp(op.input, BufferTensorDesc(ctx.dtype, sizes), start, end, mode, value)
                return ctx.run(alt)
            return run

        start, end, mode = op.start_padding, op.end_padding, op.mode
        if mode == PaddingMode.CONSTANT and not zero_value:
            yield (f"the constant value lost (padding with 0 instead of 0x{value_hex})",
                   variant(start, end, mode, b""))
        written = _border_value(ctx, variant, start, end) if mode == PaddingMode.CONSTANT else None
        if written is not None and written != op.padding_value_bytes and not _converted_nan(
                ctx.dtype, op.padding_value_bytes, written):
            constant = op.padding_value_bytes[::-1].hex() or "0"
            yield (f"the constant replaced by 0x{written[::-1].hex()} (0x{constant} "
                   "expected; the interior and the borders' extent right)",
                   variant(start, end, mode, written))
        if start != end:
            yield (f"start and end padding swapped (start {fmt_ints(end)} end {fmt_ints(start)} "
                   f"instead of start {fmt_ints(start)} end {fmt_ints(end)})",
                   variant(end, start, mode, op.padding_value_bytes))
        for other in PaddingMode:
            if other != mode:
                label = f"mode {other.name}" + (f" ({other.onnx_name})" if other.onnx_name else "")
                value = op.padding_value_bytes if other == PaddingMode.CONSTANT else b""
                current = mode.name + (f" ({mode.onnx_name})" if mode.onnx_name else "")
                yield (f"{label} instead of {current}", variant(start, end, other, value))
                if other == PaddingMode.CONSTANT and not zero_value:
                    yield (f"mode CONSTANT with value 0 instead of {mode.name}",
                           variant(start, end, other, b""))
        pads = list(case.pads or ())
        half = len(pads) // 2
        interleaved = [*pads[0::2], *pads[1::2]]
        if interleaved != pads:
            yield (f"pads {fmt_ints(pads)} read interleaved as [x1_begin, x1_end, x2_begin, x2_end, ...]",
                   lambda: ctx.run(padding_for(ctx.source, interleaved, mode=mode, value_hex=value_hex,
                                               axes=case.axes)))
        rank = ctx.source.dimension_count
        extra = op.dimension_count - rank
        begins, ends = split_onnx_pads(pads, rank, case.axes) if half else ((0,) * rank, (0,) * rank)
        if extra:
            left_start = tuple(begins) + (0,) * extra
            left_end = tuple(ends) + (0,) * extra
            yield (f"the pads applied left-aligned (start {fmt_ints(left_start)} end "
                   f"{fmt_ints(left_end)} instead of "
                   f"start {fmt_ints(start)} end {fmt_ints(end)}: rank coercion on the wrong side)",
                   variant(left_start, left_end, mode, op.padding_value_bytes))
        if rank <= 5:
            for sigma in itertools.permutations(range(rank)):
                if sigma == tuple(range(rank)):
                    continue
                moved_b, moved_e = [0] * rank, [0] * rank
                for i, target in enumerate(sigma):
                    moved_b[target], moved_e[target] = begins[i], ends[i]
                if (moved_b, moved_e) == (list(begins), list(ends)):
                    continue
                alt_start = (0,) * extra + tuple(moved_b)
                alt_end = (0,) * extra + tuple(moved_e)
                moves = ", ".join(f"{i}->{t}" for i, t in enumerate(sigma) if i != t)
                yield (f"the pads applied to the wrong axes (ONNX axis {moves}: start "
                       f"{fmt_ints(alt_start)} end "
                       f"{fmt_ints(alt_end)} instead of start {fmt_ints(start)} end {fmt_ints(end)})",
                       variant(alt_start, alt_end, mode, op.padding_value_bytes))

    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        node_attrs = attrs(node, opset)
        mode = str(node_attrs.get("mode", "constant"))
        params["mode"] = mode
        flag_no_kernel(flags, node.op_type, opset)
        value: Any = 0
        value_text: str | None = ""
        if opset < 11:
            pads: tuple[int, ...] | None = tuple(
                int(v) for v in node_attrs.get("paddings", node_attrs.get("pads", ())))
            axes = None
            value = float(node_attrs.get("value", 0.0))
            if value != 0.0 or math.copysign(1.0, value) < 0:
                value_text = value_hex(value, dtype)
        else:
            pads = const_ints(graph, node, 1, "pads", flags, opset)
            axes = const_ints(graph, node, 3, "axes", flags, opset)
            if len(node.input) > 3 and node.input[3] and axes is None:
                pads = None
            if len(node.input) > 2 and node.input[2]:
                constant = graph.constant(node, 2)
                if constant is None:
                    const_ints(graph, node, 2, "constant_value", flags, opset, ranks=None)
                    value_text = None
                else:
                    check_input(graph, node, 2, "constant_value", opset, constant, None)  # the data's type
                    if constant.size != 1:  # pad.cc: "Value tensor should be a 1D tensor of size 1 ..."
                        raise Flagged(
                            f"input: Pad input 2 (constant_value) {node.input[2]!r} holds {constant.size} "
                            f"values (shape {list(constant.shape)}); valid: one value (a scalar, as ONNX "
                            "has it); ONNX Runtime's Pad fails the node when it runs")
                    flag_overridable(graph, node.input[2], "constant_value", constant, flags)
                    value = constant.reshape(-1)[0]
                    if dtype is not None and is_nibble(dtype):  # onnx's 4-bit scalar, as the int it is
                        value = int(value.astype(np.int64))
                    value_text = value_hex(value, dtype)
        params.update(pads=pads, axes=axes, value_hex=value_text)
        if shape is None or dtype is None or pads is None:
            return None, None, {}, False
        if not shape:
            raise ShapeError("a rank-0 Pad is not defined (a scalar has no axis to pad); ONNX Runtime's CPU "
                             "EP fails such a node, as ONNX's reference does")
        check_size(shape, "input")
        begins, ends = _split_pads(shape, pads, axes)  # a crop past a size: ONNX Runtime fails the node
        out_shape = tuple(n + b + e for n, b, e in zip(shape, begins, ends, strict=True))
        try:
            op = ep_value_union(PaddingOp.from_onnx(BufferTensorDesc(dtype, shape), pads, mode=mode,
                                                    value=value, axes=axes), opset)
        except NotExpressibleError as e:
            flags.append(f"{'ep-rejects' if empty_axes_reason(axes) else 'negative-pads'}: {e}")
            return out_shape, None, {}, False
        return out_shape, op.to_dict(), {"input": op.input, "output": op.output}, False

    def case_from_node(self, dtype: DataType, shape: tuple[int, ...], params: dict[str, Any], *,
                       values: str, seed: int, origin: str, opset: int | None = None) -> Case | None:
        if params.get("pads") is None or params.get("value_hex") is None:
            return None
        return Case("Pad", dtype, shape, pads=params["pads"], mode=params.get("mode", "constant"),
                    pad_value_hex=params["value_hex"], axes=params.get("axes"), values=values, seed=seed,
                    origin=origin, opset=opset)
