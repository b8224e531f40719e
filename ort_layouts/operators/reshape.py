"""ONNX Reshape, Flatten, Squeeze, Unsqueeze and Identity: one buffer, read again with new sizes.

As ONNX Runtime's DML EP builds them (``DmlOperatorCopy`` in
``onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/DmlOperatorCopy.cpp``, one
creation function ``Copy`` for all five, registered with ``REG_INFO_COPY`` in
``OperatorRegistration.cpp``):

- ``Initialize(kernelInfo, {0})`` describes input 0 only (the shape or axes input is read on the
  CPU): a packed ``DML_BUFFER_TENSOR_DESC`` of the ONNX input shape, right-aligned to at least 4
  dimensions with leading 1s (``TensorDesc.cpp``; [2, 3, 4] -> sizes [1, 2, 3, 4], strides null).
- ``m_outputTensorDescs.front() = m_inputTensorDescs.front()``: the output is described with the
  *input's* sizes ("DirectML requires the input & output dimensions to be identical"). Both
  sides are that one packed descriptor; the output's own ONNX shape never reaches DirectML.
- The kernel declares ``Alias(0, 0)``, so ONNX Runtime's allocation planner gives the output the
  input's buffer. Standalone (graph fusion off, as the engine runs the EP) the kernel compiles no
  operator and ``Compute`` does nothing when the buffers alias, else a raw byte copy
  (``ExecutionProviderImpl::CopyTensor``). In a fused DML graph the node is a
  DML_OPERATOR_ELEMENT_WISE_IDENTITY between the two equal descriptors (no ScaleBias).

So the DirectML operator is :class:`~ort_layouts.operators.identity.IdentityOp` with input and
output both the packed input-shaped descriptor: the output bytes are the input bytes, and only
the ONNX shape changes. The shape rules are the EP's helpers in ``OperatorHelper.cpp``, which
agree with ONNX's: ``ReshapeHelper`` (0 copies the input dimension unless ``allowzero``, one -1
is inferred), ``FlattenHelper`` (axis default 1, in [-r, r]), ``SqueezeHelper`` (axes attribute
before opset 13, optional int64 input from 13; no axes: every size-1 axis),
``UnsqueezeHelper`` (axes attribute before 13, int64 input from 13, normalized against the output
rank), ``GetOutputShapeAsInputShapeHelper`` (Identity). One divergence no case can show:
``SqueezeHelper`` silently keeps a listed axis whose size is not 1, where ONNX (and the CPU EP)
reject the node; such cases are refused here.

Kernels exist only for the schema versions ``OperatorRegistration.cpp`` lists, and ONNX Runtime
matches a DML kernel only to its exact since-version: Identity 1, 13, 14, 16, 19, 21; Flatten 1, 9,
11, 13, 21; Squeeze and Unsqueeze 1, 11, 13, 21; Reshape 5, 13, 14, 19, 21. Opset 23 and later
resolve to schema versions (23, 24, 25) with no DML kernel: with CPU fallback off the EP cannot
take those nodes. A Reshape ``allowzero`` only differs from the default for empty tensors (a 0
in the shape then keeps a 0-sized axis), which no DirectML descriptor holds; a case asks for the
attribute with ``mode="allowzero"`` (opset 14+), and a 0 in ``target_shape`` always copies the
input dimension. Under allowzero ``ReshapeHelper::GetOutputShapes`` takes the shape verbatim and
infers no -1, so a valid allowzero Reshape with a -1 gets an output dimension of 2^32 - 1 and
kernel creation fails (E_INVALIDARG): the DML EP cannot take such a node.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import onnx
from onnx import helper

from ort_layouts._errors import ModelError, NotExpressibleError, ShapeError
from ort_layouts.descriptors.buffer_tensor import MAX_DIMENSION_COUNT, BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.size import packed_strides
from ort_layouts.operators.base import (
    Candidate,
    CandidateResult,
    Described,
    DiagnosisContext,
    Operator,
    fmt_ints,
)
from ort_layouts.operators.case import Case
from ort_layouts.operators.ep_tensor import padded_desc
from ort_layouts.operators.identity import IdentityOp, identity_dict
from ort_layouts.operators.kernels import flag_no_kernel
from ort_layouts.operators.onnx_nodes import (
    Graph,
    add_node,
    attrs,
    check_size,
    const_ints,
    int64_initializer,
    name_of,
    static,
)
from ort_layouts.operators.shapes import SUITE_SHAPES, rotating

__all__ = [
    "ReshapeLike",
    "flatten_output_shape",
    "reshape_output_shape",
    "squeeze_output_shape",
    "unsqueeze_output_shape",
]

OP_TYPES: tuple[str, ...] = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity")

RESHAPE_INPUT_OPSET = 5  # Reshape-5: the shape becomes an input (Reshape-1's attribute has no DML kernel)
ALLOWZERO_OPSET = 14  # Reshape-14: the allowzero attribute
FLATTEN_ALL_TYPES_OPSET = 9  # Flatten-1 takes float16/float/double only
NEGATIVE_AXES_OPSET = 11  # Flatten-11, Squeeze-11, Unsqueeze-11: negative axes
AXES_INPUT_OPSET = 13  # Squeeze-13, Unsqueeze-13: axes become an int64 input
ALLOWZERO = "allowzero"  # Case.mode of a Reshape with allowzero=1



# ---- shapes (the EP's helpers in OperatorHelper.cpp; ONNX agrees) ---------------------------
def reshape_output_shape(shape: Sequence[int], target: Sequence[int], *,
                         allowzero: bool = False) -> tuple[int, ...]:
    """Reshape's output shape (``ReshapeHelper``): 0 copies the input dimension at its index
    (unless ``allowzero``), one -1 takes the remaining elements.

    >>> reshape_output_shape((2, 3, 4), (4, 0, -1))
    (4, 3, 2)

    Raises:
        ShapeError: a second -1, a value below -1, a 0 past the input's rank, a 0 with -1 under
            allowzero, or element counts that differ.
    """
    shape, dims = tuple(shape), [int(v) for v in target]
    where = f"Reshape of {list(shape)} to target_shape {dims}"
    if dims.count(-1) > 1:
        raise ShapeError(f"{where}: more than one -1; valid: at most one -1")
    bad = [v for v in dims if v < -1]
    if bad:
        raise ShapeError(f"{where}: value {bad[0]} is not valid; valid: -1, 0 or a positive size")
    if allowzero and 0 in dims and -1 in dims:
        raise ShapeError(f"{where}: with allowzero a 0 and a -1 cannot both appear")
    for i, v in enumerate(dims):
        if v == 0 and not allowzero:
            if i >= len(shape):
                raise ShapeError(f"{where}: the 0 at index {i} copies input dimension {i}, but the "
                                 f"input has rank {len(shape)}; valid: 0 at indices 0..{len(shape) - 1}")
            dims[i] = shape[i]
    count = math.prod(shape)
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or count % known:
            raise ShapeError(f"{where}: {count} elements do not divide into the known sizes "
                             f"(product {known})")
        dims[dims.index(-1)] = count // known
    if math.prod(dims) != count:
        raise ShapeError(f"{where}: {math.prod(dims)} elements, the input has {count}")
    return tuple(dims)


def flatten_output_shape(shape: Sequence[int], axis: int | None) -> tuple[int, int]:
    """Flatten's output shape (``FlattenHelper``): [prod(d[:axis]), prod(d[axis:])], axis
    default 1, in [-r, r].

    Raises:
        ShapeError: the axis is out of range.
    """
    shape = tuple(shape)
    rank = len(shape)
    a = 1 if axis is None else int(axis)
    if not -rank <= a <= rank:
        raise ShapeError(f"Flatten axis {a} is out of range for rank {rank} {list(shape)}; "
                         f"valid: {-rank}..{rank}")
    a = a + rank if a < 0 else a
    return math.prod(shape[:a]), math.prod(shape[a:])


def _normalized_axes(axes: Sequence[int], rank: int, what: str) -> tuple[int, ...]:
    if not axes:
        raise ShapeError(f"{what} axes are empty; give at least one axis (or None: the default)")
    bad = [a for a in axes if not -rank <= a < rank]
    if bad:
        raise ShapeError(f"{what} axis {bad[0]} is out of range for rank {rank}; "
                         f"valid: {-rank}..{rank - 1}")
    norm = tuple(a + rank if a < 0 else a for a in axes)
    if len(set(norm)) != len(norm):
        raise ShapeError(f"{what} axes {list(axes)} name an axis twice (normalized {list(norm)})")
    return norm


def squeeze_output_shape(shape: Sequence[int], axes: Sequence[int] | None) -> tuple[int, ...]:
    """Squeeze's output shape: the listed axes removed (each of size 1), or every size-1 axis.

    Raises:
        ShapeError: an axis out of range, listed twice, or of a size other than 1 (ONNX rejects
            it; the DML EP's ``SqueezeHelper`` would silently keep it).
    """
    shape = tuple(shape)
    if axes is None:
        return tuple(n for n in shape if n != 1)
    norm = _normalized_axes(axes, len(shape), "Squeeze")
    wide = [(given, a) for given, a in zip(axes, norm, strict=True) if shape[a] != 1]
    if wide:
        given, a = wide[0]
        named = f"{given}" if given == a else f"{given} (axis {a})"
        raise ShapeError(f"Squeeze axis {named} of {list(shape)} has size {shape[a]}; "
                         f"valid: axes of size 1 {[i for i, n in enumerate(shape) if n == 1]}")
    return tuple(n for i, n in enumerate(shape) if i not in norm)


def unsqueeze_output_shape(shape: Sequence[int], axes: Sequence[int]) -> tuple[int, ...]:
    """Unsqueeze's output shape: a 1 inserted at each axis, axes counted in the output's rank.

    Raises:
        ShapeError: an axis out of range for the output rank, or listed twice.
    """
    shape = tuple(shape)
    out_rank = len(shape) + len(axes)
    norm = set(_normalized_axes(axes, out_rank, "Unsqueeze"))
    it = iter(shape)
    return tuple(1 if i in norm else next(it) for i in range(out_rank))


# ---- cases ----------------------------------------------------------------------------------
def _output_shape(case: Case) -> tuple[int, ...]:
    if case.op == "Reshape":
        return reshape_output_shape(case.shape, case.target_shape or (), allowzero=case.mode == ALLOWZERO)
    if case.op == "Flatten":
        return flatten_output_shape(case.shape, case.axis)
    if case.op == "Squeeze":
        return squeeze_output_shape(case.shape, case.axes)
    if case.op == "Unsqueeze":
        return unsqueeze_output_shape(case.shape, case.axes or ())
    return case.shape


def _dashless(values: Sequence[int], sep: str) -> str:
    return sep.join(str(v).replace("-", "m") for v in values)


def _allowzero_reason(case: Case) -> str:
    """Why the DML EP cannot take an allowzero Reshape with a -1 ("" for another case):
    ``ReshapeHelper::GetOutputShapes`` takes the shape verbatim under allowzero and infers no
    -1, so the output gets a dimension of 2^32 - 1 and the kernel's creation fails."""
    if case.op != "Reshape" or case.mode != ALLOWZERO or -1 not in (case.target_shape or ()):
        return ""
    return (f"an allowzero Reshape to {list(case.target_shape or ())} with a -1: the DML EP's "
            "ReshapeHelper takes the shape verbatim under allowzero and infers no -1, so kernel creation "
            "fails (E_INVALIDARG)")


class ReshapeLike(Operator):
    """Reshape, Flatten, Squeeze, Unsqueeze and Identity: the DML EP's Copy kernel."""

    op_types = OP_TYPES
    edge_specs = ({"shape": (), "target_shape": (1,)}, {"shape": (1, 1), "target_shape": ()},
                  {"op": "Unsqueeze", "shape": (), "axes": (0,)}, {"op": "Squeeze", "shape": (1,)},
                  {"op": "Identity", "shape": ()}, {"op": "Identity", "shape": (0, 2)},
                  {"shape": (2, 0), "target_shape": (0, 3), "mode": ALLOWZERO},
                  {"op": "Flatten", "shape": (0, 3, 2), "axis": 1},
                  {"op": "Squeeze", "shape": (1, 0), "axes": (0,)})
    min_opset = 1
    case_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "Reshape": ("target_shape", "mode"), "Flatten": ("axis",), "Squeeze": ("axes",),
        "Unsqueeze": ("axes",), "Identity": ()}

    # ---- cases -----------------------------------------------------------------------------
    def check_case(self, case: Case) -> None:
        op = case.op  # Case refused the fields its op does not take (a mode but Reshape's among them)
        if case.mode not in ("", ALLOWZERO):
            raise ShapeError(f"{op} mode {case.mode!r} is not valid; valid: '' or {ALLOWZERO!r}")
        if op == "Reshape" and case.target_shape is None:
            raise ShapeError("a Reshape case needs target_shape")
        if op == "Unsqueeze" and case.axes is None:
            raise ShapeError("an Unsqueeze case needs axes")
        _output_shape(case)  # raises ShapeError for bad parameters
        opset = case.opset
        if opset is None:
            return
        if op == "Reshape" and opset < RESHAPE_INPUT_OPSET:
            raise ShapeError(f"Reshape opset {opset}: Reshape-1 takes the shape as an attribute, and "
                             "cases give the shape input of Reshape-5 and later; "
                             f"valid: opset >= {RESHAPE_INPUT_OPSET}")
        if case.mode == ALLOWZERO and opset < ALLOWZERO_OPSET:
            raise ShapeError(f"Reshape allowzero needs opset >= {ALLOWZERO_OPSET}, got {opset}")
        if op == "Flatten" and opset < FLATTEN_ALL_TYPES_OPSET and not case.data_type.is_float:
            raise ShapeError(f"Flatten opset {opset} (Flatten-1) takes float16/float32/float64, not "
                             f"{case.data_type.name}; valid: opset >= {FLATTEN_ALL_TYPES_OPSET}")
        negative = (case.axis is not None and case.axis < 0) or any(a < 0 for a in case.axes or ())
        if negative and opset < NEGATIVE_AXES_OPSET:
            raise ShapeError(f"{op} opset {opset}: negative axes need opset >= {NEGATIVE_AXES_OPSET}")

    def id_parts(self, case: Case) -> list[str]:
        if case.op == "Reshape":
            parts = ["to" + (_dashless(case.target_shape or (), "x") or "scalar")]
            return [*parts, ALLOWZERO] if case.mode == ALLOWZERO else parts
        if case.op == "Flatten":
            return ["axis" + ("default" if case.axis is None else _dashless((case.axis,), ""))]
        if case.op in ("Squeeze", "Unsqueeze"):
            return ["axes" + ("all" if case.axes is None else _dashless(case.axes, "."))]
        return []

    def output_shape(self, case: Case) -> tuple[int, ...]:
        return _output_shape(case)

    def inexpressible_reason(self, case: Case) -> str:
        out = _output_shape(case)
        for what, shape in (("input", case.shape), ("output", out)):
            if len(shape) > MAX_DIMENSION_COUNT:
                return (f"the {case.op} {what} {list(shape)} has {len(shape)} dimensions; the DML EP "
                        f"builds a TensorDesc for it and DirectML takes at most {MAX_DIMENSION_COUNT}")
        return _allowzero_reason(case) or super().inexpressible_reason(case)

    def dml_operator(self, case: Case) -> IdentityOp:
        """ELEMENT_WISE_IDENTITY with both descriptors the input's, packed, at least 4D.

        Raises:
            NotExpressibleError: an allowzero Reshape with a -1, which the DML EP cannot take.
        """
        reason = _allowzero_reason(case)
        if reason:
            raise NotExpressibleError(reason)
        desc = padded_desc(case.data_type, case.shape)
        return IdentityOp(desc, desc)

    def reference_output(self, case: Case, input_array: np.ndarray) -> np.ndarray:
        """np.reshape (0 copying the input's dimension), np.squeeze, np.expand_dims, a copy."""
        x = np.asarray(input_array)
        if case.op == "Reshape":
            target = case.target_shape or ()
            dims = [x.shape[i] if v == 0 and case.mode != ALLOWZERO else v for i, v in enumerate(target)]
            y = np.reshape(x, dims)
        elif case.op == "Flatten":
            axis = 1 if case.axis is None else case.axis
            axis = axis + x.ndim if axis < 0 else axis
            y = np.reshape(x, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))  # -1 fails on 0
        elif case.op == "Squeeze":
            y = np.squeeze(x) if case.axes is None else np.squeeze(x, case.axes)
        elif case.op == "Unsqueeze":
            y = np.expand_dims(x, case.axes or ())
        else:
            y = x
        return np.array(y, copy=True, order="C")  # a C-ordered copy that keeps a 0-d result 0-d

    def add_node(self, graph: onnx.GraphProto, index: int, case: Case, opset: int) -> None:
        """Reshape: the ``shape{i}`` input (allowzero from 14); Flatten: the axis attribute;
        Squeeze / Unsqueeze: the axes attribute before opset 13, the ``axes{i}`` input from 13."""
        x, y, name = f"x{index}", f"y{index}", f"n{index}_{case.op}"
        if case.op == "Reshape" and opset < RESHAPE_INPUT_OPSET:
            raise ModelError(f"case {case.id}: Reshape needs opset >= {RESHAPE_INPUT_OPSET} (the shape "
                             f"input), got {opset}")
        if case.mode == ALLOWZERO and opset < ALLOWZERO_OPSET:
            raise ModelError(f"case {case.id}: Reshape allowzero needs opset >= {ALLOWZERO_OPSET}, "
                             f"got {opset}")
        inputs = [x]
        node_attrs: dict[str, Any] = {}
        if case.op == "Reshape":
            int64_initializer(graph, f"shape{index}", case.target_shape or ())
            inputs.append(f"shape{index}")
            if case.mode == ALLOWZERO:
                node_attrs["allowzero"] = 1
        elif case.op == "Flatten" and case.axis is not None:
            node_attrs["axis"] = case.axis
        elif case.op in ("Squeeze", "Unsqueeze") and case.axes is not None:
            if opset < AXES_INPUT_OPSET:
                node_attrs["axes"] = list(case.axes)
            else:
                int64_initializer(graph, f"axes{index}", case.axes)
                inputs.append(f"axes{index}")
        node = add_node(graph, case.op, inputs, y, name, case.id)
        for key, value in node_attrs.items():
            node.attribute.append(helper.make_attribute(key, value))

    def suite_cases(self, dtypes: Sequence[DataType], ranks: set[int], seed: int) -> list[Case]:
        """Each op type over ranks 1 to 8 (Unsqueeze to 7: its output has one axis more) with a
        handful of parameters, the data types rotating; every data type once and with special
        values; iota on a few; every opset with its own schema version (7 for the version-1
        kernels, up to 23 and 24, which the DML EP has no kernel for)."""
        out: list[Case] = []
        for make in (_reshape_cases, _flatten_cases, _squeeze_cases, _unsqueeze_cases, _identity_cases):
            out += [c for c in make(dtypes) if c.rank in ranks]
        return out

    # ---- diagnosis -------------------------------------------------------------------------
    def diagnosis_candidates(self, ctx: DiagnosisContext) -> Iterator[Candidate]:
        """The output's sizes read with the input's strides (a view instead of a packed copy);
        the buffer read from a byte offset, either way."""
        case = ctx.case
        out = _output_shape(case) or (1,)
        shape = case.shape or (1,)
        source = packed_strides(shape)
        rank = len(out)
        if rank <= len(shape):
            strides = source[len(shape) - rank:]
        else:  # the input's leading axes continue packed: stride = element count
            strides = (math.prod(shape),) * (rank - len(shape)) + source
        if rank <= MAX_DIMENSION_COUNT and strides != packed_strides(out):
            view = BufferTensorDesc(ctx.dtype, out, strides)
            yield (f"the output's sizes {fmt_ints(out)} read with the input's strides {fmt_ints(strides)} "
                   f"(those of {fmt_ints(shape)}) instead of packed {fmt_ints(packed_strides(out))}",
                   lambda: ctx.read(view))
        if ctx.dtype.bitwidth < 8:
            return
        item = ctx.dtype.bitwidth // 8
        total = ctx.elements.size * item
        for shift in sorted({item, 4, 16}):
            if shift >= total:
                continue
            for sign, words in ((1, "after"), (-1, "before")):
                yield (f"the input buffer read from {shift} bytes {words} its start ("
                       f"{'a byte offset' if sign > 0 else 'the output written at a byte offset'}: "
                       f"every element {shift / item:g} element(s) "
                       f"{'later' if sign > 0 else 'earlier'} in the input)",
                       _shifted(ctx, sign * shift))

    # ---- real models -----------------------------------------------------------------------
    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        flag_no_kernel(flags, node.op_type, opset)
        read: dict[str, Any] = {}
        given = _read_params(node, graph, opset, read, flags)  # a refused node keeps no op_type: no case
        params["op_type"] = node.op_type
        params.update(read)
        if node.op_type == "Reshape" and params.get("allowzero") and -1 in (params["target_shape"] or ()):
            flags.append("allowzero-infer: under allowzero the DML EP's ReshapeHelper takes the shape "
                         "verbatim and does not infer the -1, so kernel creation fails (E_INVALIDARG)")
        if shape is None or dtype is None:
            return None, None, {}, True
        out_shape = _node_output_shape(node.op_type, shape, params) if given else None
        if out_shape is None:
            out_shape = static(inferred, node.output[0], flags, graph.advice_for(node.output[0]))
            if out_shape is None:
                return None, None, {}, True
            if node.op_type == "Reshape":  # the inferred shape is a valid constant target
                params["target_shape"] = out_shape
                params["allowzero"] = 0
            elif node.op_type in ("Squeeze", "Unsqueeze"):  # axes that give the inferred shape
                params["axes"] = _axes_between(shape, out_shape, squeeze=node.op_type == "Squeeze")
        if math.prod(out_shape) != math.prod(shape):
            raise ShapeError(f"{node.op_type} {name_of(node)} turns {list(shape)} into {list(out_shape)}: "
                             "the element counts differ")
        check_size(shape or (1,), "input")
        check_size(out_shape or (1,), "output")
        desc = padded_desc(dtype, shape)
        dml = identity_dict(
            desc, desc, kernel="DmlOperatorCopy", alias=True,
            note="both descriptors are the input's (packed, at least 4D): the output aliases the input "
                 "buffer (standalone: no operator, or a raw byte copy); in a fused DML graph an "
                 "ELEMENT_WISE_IDENTITY between the two")
        return out_shape, dml, {"input": desc, "output": desc}, True

    def case_from_node(self, dtype: DataType, shape: tuple[int, ...], params: dict[str, Any], *,
                       values: str, seed: int, origin: str, opset: int | None = None) -> Case | None:
        op = params.get("op_type")
        if op not in OP_TYPES:
            return None
        fields: dict[str, Any] = {}
        if op == "Reshape":
            if params.get("target_shape") is None:
                return None
            fields["target_shape"] = params["target_shape"]
            if params.get("allowzero"):
                fields["mode"] = ALLOWZERO
        elif op == "Flatten":
            fields["axis"] = params.get("axis")
        elif op in ("Squeeze", "Unsqueeze"):
            axes = params.get("axes")
            if op == "Unsqueeze" and axes is None:
                return None
            fields["axes"] = axes or None  # Squeeze: no axes, or empty ones, squeeze every size-1 axis
        return Case(op, dtype, shape, values=values, seed=seed, origin=origin, opset=opset, **fields)


def _shifted(ctx: DiagnosisContext, shift_in_bytes: int) -> Callable[[], CandidateResult]:
    """The input's bytes moved by ``shift_in_bytes`` (positive: read from that far into the
    buffer), compared only on the elements whose bytes all lie inside it."""
    def run() -> CandidateResult:
        raw = np.ascontiguousarray(ctx.elements).view(np.uint8)
        n = raw.size
        moved = np.zeros(n, dtype=np.uint8)
        valid = np.zeros(n, dtype=bool)
        k = abs(shift_in_bytes)
        if shift_in_bytes > 0:
            moved[: n - k], valid[: n - k] = raw[k:], True
        else:
            moved[k:], valid[k:] = raw[: n - k], True
        item = ctx.elements.itemsize
        inside = np.asarray(valid.reshape(-1, item).all(axis=1))
        return ctx.canonical(moved.view(ctx.elements.dtype)), inside
    return run


def _read_params(node: onnx.NodeProto, graph: Graph, opset: int, params: dict[str, Any],
                 flags: list[str]) -> bool:
    """Fill ``params`` with the node's parameters; False when one is computed at runtime."""
    node_attrs = attrs(node, opset)
    if node.op_type == "Reshape":
        target = const_ints(graph, node, 1, "shape", flags, opset)
        params["target_shape"] = target
        params["allowzero"] = int(node_attrs.get("allowzero", 0))
        return target is not None
    if node.op_type == "Flatten":
        params["axis"] = int(node_attrs["axis"]) if "axis" in node_attrs else None
        return True
    if node.op_type in ("Squeeze", "Unsqueeze"):
        if opset < AXES_INPUT_OPSET:
            axes = node_attrs.get("axes")
            params["axes"] = None if axes is None else tuple(int(a) for a in axes)
            return True
        # Unsqueeze's axes may be a scalar (ONNX Runtime's Unsqueeze), Squeeze's may not
        axes_value = const_ints(graph, node, 1, "axes", flags, opset,
                                ranks=(0, 1) if node.op_type == "Unsqueeze" else (1,))
        params["axes"] = axes_value
        return not (len(node.input) > 1 and bool(node.input[1]) and axes_value is None)
    return True


def _axes_between(shape: tuple[int, ...], out: tuple[int, ...], *, squeeze: bool) -> tuple[int, ...]:
    """The axes a Squeeze removes from ``shape`` (or an Unsqueeze inserts into it) to give
    ``out``, the first fitting size-1 axes taken.

    Raises:
        ShapeError: ``out`` is not ``shape`` with size-1 axes removed (inserted).
    """
    longer, shorter = (shape, out) if squeeze else (out, shape)
    axes, j = [], 0
    for i, n in enumerate(longer):
        if j < len(shorter) and shorter[j] == n:
            j += 1
        elif n == 1:
            axes.append(i)
        else:
            break
    else:
        if j == len(shorter) and axes:
            return tuple(axes)
    what = "Squeeze" if squeeze else "Unsqueeze"
    raise ShapeError(f"{what} of {list(shape)} to the inferred {list(out)}: no axes of size 1 "
                     "account for the change")


def _node_output_shape(op_type: str, shape: tuple[int, ...], params: dict[str, Any]) -> tuple[int, ...]:
    if op_type == "Reshape":
        return reshape_output_shape(shape, params["target_shape"], allowzero=bool(params.get("allowzero")))
    if op_type == "Flatten":
        return flatten_output_shape(shape, params.get("axis"))
    if op_type == "Squeeze":
        axes = params.get("axes")
        return squeeze_output_shape(shape, axes if axes else None)
    if op_type == "Unsqueeze":
        return unsqueeze_output_shape(shape, params.get("axes") or ())
    return shape


# ---- the standard suite ---------------------------------------------------------------------
_FLOATS = (DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT64)
# shapes with size-1 axes where they can be squeezed
_SQUEEZE_SHAPES: dict[int, tuple[int, ...]] = {
    1: (1,), 2: (3, 1), 3: (1, 4, 1), 4: (2, 1, 3, 1), 5: (1, 2, 1, 3, 2), 6: (2, 3, 2, 1, 3, 2),
    7: (2, 1, 3, 2, 1, 2, 2), 8: (2, 1, 2, 3, 1, 2, 1, 2),
}


def _spread(op: str, dtypes: Sequence[DataType], specs: Sequence[tuple[tuple[int, ...], dict[str, Any]]],
            ) -> list[Case]:
    """One case per spec, the data types rotating."""
    return [Case(op, rotating(dtypes, k), shape, **kw) for k, (shape, kw) in enumerate(specs)]


def _every_type(op: str, dtypes: Sequence[DataType], shape: tuple[int, ...], **kw: Any) -> list[Case]:
    """The same case in every data type, with random and special values; iota in the first."""
    out = [Case(op, dt, shape, values=v, **kw) for dt in dtypes for v in ("random", "special")]
    return [*out, Case(op, dtypes[0], shape, values="iota", **kw)]


def _by_opset(op: str, dtypes: Sequence[DataType], opsets: Sequence[int], shape: tuple[int, ...],
              kw_of: Any) -> list[Case]:
    """The case at each opset, in the first data type and one more (rotating); ``kw_of(opset)``
    gives its parameters."""
    out = []
    for k, opset in enumerate(opsets):
        chosen = list(dtypes)
        if op == "Flatten" and opset < FLATTEN_ALL_TYPES_OPSET:
            chosen = [d for d in dtypes if d in _FLOATS]
        if not chosen:
            continue
        for dt in dict.fromkeys([chosen[0], rotating(chosen, k + 1)]):
            out.append(Case(op, dt, shape, opset=opset, **kw_of(opset)))
    return out


def _reshape_cases(dtypes: Sequence[DataType]) -> list[Case]:
    specs: list[tuple[tuple[int, ...], dict[str, Any]]] = []
    for rank in range(1, 9):
        shape = SUITE_SHAPES[rank]
        targets: list[tuple[int, ...]] = [(-1,), shape[::-1], (1, math.prod(shape))]
        if rank >= 2:
            targets += [(0, -1), (-1, shape[-1])]
        if rank <= 6:
            targets.append((1, *shape, 1))
        if rank >= 4:
            targets += [(0, 0, -1), (-1, 0, shape[-1])]
        for target in dict.fromkeys(targets):
            specs.append((shape, {"target_shape": target}))
    out = _spread("Reshape", dtypes, specs)
    out += _every_type("Reshape", dtypes, (2, 3, 4), target_shape=(4, 0, -1))
    out += _by_opset("Reshape", dtypes, (5, 13, 14, 19, 21, 23, 24), (2, 3, 4),
                     lambda _: {"target_shape": (4, 0, -1)})
    out += _by_opset("Reshape", dtypes, (14, 21), (2, 3, 4),
                     lambda _: {"target_shape": (4, 3, 2), "mode": ALLOWZERO})
    # a -1 under allowzero: valid ONNX that the DML EP's ReshapeHelper does not infer
    out += _by_opset("Reshape", dtypes, (14, 19, 21, 23), (2, 3, 4),
                     lambda _: {"target_shape": (4, -1, 2), "mode": ALLOWZERO})
    return out


def _flatten_cases(dtypes: Sequence[DataType]) -> list[Case]:
    specs: list[tuple[tuple[int, ...], dict[str, Any]]] = []
    for rank in range(1, 9):
        shape = SUITE_SHAPES[rank]
        for axis in dict.fromkeys([None, 0, rank, -1, rank // 2, -rank]):
            specs.append((shape, {"axis": axis}))
    out = _spread("Flatten", dtypes, specs)
    out += _every_type("Flatten", dtypes, (2, 3, 4, 5), axis=2)
    out += _by_opset("Flatten", dtypes, (7, 9, 11, 13, 21, 23, 24), (2, 3, 4),
                     lambda o: {"axis": -1 if o >= NEGATIVE_AXES_OPSET else 2})
    return out


def _squeeze_cases(dtypes: Sequence[DataType]) -> list[Case]:
    specs: list[tuple[tuple[int, ...], dict[str, Any]]] = []
    for rank in range(1, 9):
        shape = _SQUEEZE_SHAPES[rank]
        ones = [i for i, n in enumerate(shape) if n == 1]
        variants: list[tuple[int, ...] | None] = [None, (ones[0],), (ones[-1] - rank,)]
        if len(ones) > 1:
            variants.append(tuple(reversed(ones)))
        for axes in dict.fromkeys(variants):
            specs.append((shape, {"axes": axes}))
    out = _spread("Squeeze", dtypes, specs)
    out += _every_type("Squeeze", dtypes, (2, 1, 3, 1), axes=(1, 3))
    out += _by_opset("Squeeze", dtypes, (7, 11, 13, 21, 23, 24), (2, 1, 3, 1),
                     lambda o: {"axes": (-1, 1) if o >= NEGATIVE_AXES_OPSET else (1, 3)})
    out += _by_opset("Squeeze", dtypes, (7, 13), (1, 3, 1, 4), lambda _: {})
    return out


def _unsqueeze_cases(dtypes: Sequence[DataType]) -> list[Case]:
    specs: list[tuple[tuple[int, ...], dict[str, Any]]] = []
    for rank in range(1, 8):
        shape = SUITE_SHAPES[rank]
        variants: list[tuple[int, ...]] = [(0,), (rank,), (-1,)]
        if rank + 2 <= MAX_DIMENSION_COUNT:
            variants += [(rank + 1, 0), (1, -1)]
        for axes in dict.fromkeys(variants):
            specs.append((shape, {"axes": axes}))
    out = _spread("Unsqueeze", dtypes, specs)
    out += _every_type("Unsqueeze", dtypes, (3, 4), axes=(0, 3))
    out += _by_opset("Unsqueeze", dtypes, (7, 11, 13, 21, 23, 24), (3, 4),
                     lambda o: {"axes": (-1, 0) if o >= NEGATIVE_AXES_OPSET else (0, 3)})
    return out


def _identity_cases(dtypes: Sequence[DataType]) -> list[Case]:
    out = _spread("Identity", dtypes, [(SUITE_SHAPES[rank], {}) for rank in range(1, 9)])
    out += _every_type("Identity", dtypes, (2, 3, 4))
    out += _by_opset("Identity", dtypes, (7, 13, 14, 16, 19, 21, 23, 24), (2, 3, 4), lambda _: {})
    return out
