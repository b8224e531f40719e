"""How each layout operator reads its input: the DirectML descriptors of one ONNX node.

Private to :mod:`ort_layouts.models.extract`: :func:`describe_node` turns one node of a shape-inferred
graph into the fields of a :class:`~ort_layouts.models.extract.LayoutOp`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from ort_layouts._errors import DataTypeError, DescriptorError, NotExpressibleError, ShapeError
from ort_layouts.descriptors.buffer_tensor import (
    MAX_DIMENSION_COUNT,
    MAX_ELEMENT_COUNT,
    MINIMUM_BUFFER_ALIGNMENT_IN_BYTES,
    BufferTensorDesc,
    normalize_perm,
)
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.size import packed_strides
from ort_layouts.operators.pad import PaddingOp, split_onnx_pads

__all__ = ["Graph", "describe_node"]

_IDENTITY = "DML_OPERATOR_ELEMENT_WISE_IDENTITY"


# ---- the graph as seen by one op ---------------------------------------------------------
Dim = int | str | None  # a value, a dim_param, or unknown


@dataclasses.dataclass
class Graph:
    shapes: dict[str, tuple[Dim, ...] | None]
    elem_types: dict[str, int]
    constants: dict[str, np.ndarray | onnx.TensorProto]  # TensorProtos are converted on first use
    external: set[str]
    dims: dict[str, int]

    @classmethod
    def read(cls, model: onnx.ModelProto, dims: dict[str, int]) -> Graph:
        g = model.graph
        shapes: dict[str, tuple[Dim, ...] | None] = {}
        types: dict[str, int] = {}
        for v in (*g.input, *g.value_info, *g.output):
            tt = v.type.tensor_type
            if not v.type.HasField("tensor_type"):
                continue
            types[v.name] = tt.elem_type
            if tt.HasField("shape"):
                shapes[v.name] = tuple(
                    int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or None)
                    for d in tt.shape.dim)
            else:
                shapes.setdefault(v.name, None)
        constants: dict[str, np.ndarray | onnx.TensorProto] = {}
        external: set[str] = set()
        for t in g.initializer:
            shapes[t.name] = tuple(int(d) for d in t.dims)
            types[t.name] = t.data_type
            if t.data_location == onnx.TensorProto.EXTERNAL and not t.raw_data:
                external.add(t.name)
            else:
                constants[t.name] = t
        for node in g.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
                value = _constant_value(node)
                if value is not None:
                    constants[node.output[0]] = value
        return cls(shapes, types, constants, external, dims)

    def shape(self, name: str) -> tuple[Dim, ...] | None:
        raw = self.shapes.get(name)
        if raw is None:
            return None
        return tuple(self.dims.get(d, d) if isinstance(d, str) else d for d in raw)

    def constant(self, node: onnx.NodeProto, index: int) -> np.ndarray | None:
        if index >= len(node.input) or not node.input[index]:
            return None
        return self.value(node.input[index])

    def value(self, name: str) -> np.ndarray | None:
        """The value of a constant tensor (initializer or Constant node), or None."""
        found = self.constants.get(name)
        if isinstance(found, onnx.TensorProto):
            found = self.constants[name] = numpy_helper.to_array(found)
        return found


def _constant_value(node: onnx.NodeProto) -> np.ndarray | None:
    for a in node.attribute:
        if a.name == "value":
            return numpy_helper.to_array(a.t)
        if a.name == "value_int":
            return np.array(a.i, dtype=np.int64)
        if a.name == "value_ints":
            return np.array(list(a.ints), dtype=np.int64)
        if a.name == "value_float":
            return np.array(a.f, dtype=np.float32)
        if a.name == "value_floats":
            return np.array(list(a.floats), dtype=np.float32)
    return None


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


class _Flagged(Exception):
    """Stops describing an op; its message is the flag."""


def _static(shape: tuple[Dim, ...] | None, name: str, flags: list[str]) -> tuple[int, ...] | None:
    if shape is None:
        flags.append(f"dynamic: the shape of {name!r} is unknown (shape inference could not compute "
                     "it); pin the model's input dimensions with --dim NAME=VALUE")
        return None
    known = [d for d in shape if isinstance(d, int)]
    if len(known) == len(shape):
        return tuple(int(d) for d in known)
    missing = [d for d in shape if not isinstance(d, int)]
    for d in dict.fromkeys(missing):
        if isinstance(d, str):
            flags.append(f"dynamic: dimension {d!r} of {name!r} is not pinned; suggest --dim {d}=VALUE "
                         f"(API: dims={{{d!r}: VALUE}})")
        else:
            flags.append(f"dynamic: {name!r} has an unnamed unknown dimension {list(shape)}; pin the "
                         "model's input dimensions with --dim NAME=VALUE")
    return None


def _const_ints(graph: Graph, node: onnx.NodeProto, index: int, what: str,
                flags: list[str]) -> tuple[int, ...] | None:
    if index >= len(node.input) or not node.input[index]:
        return None
    name = node.input[index]
    value = graph.value(name)
    if value is None:
        why = "stored as external data that was not loaded" if name in graph.external else \
            "computed at runtime, not a constant initializer"
        flags.append(f"runtime-input: {what} input {name!r} is {why}; the DML EP reads {what} on the "
                     "CPU when the graph is built")
        return None
    return tuple(int(v) for v in np.asarray(value).reshape(-1))


def describe_node(node: onnx.NodeProto, index: int, graph: Graph, opset: int) -> dict[str, Any]:
    """The LayoutOp fields of one node (all but ``origin``)."""
    name = node.name or f"{node.op_type}_{index}"
    flags: list[str] = []
    data = node.input[0] if node.input else ""
    out = node.output[0] if node.output else ""
    data_type: DataType | None = None
    elem = graph.elem_types.get(data) or graph.elem_types.get(out)
    if elem is None:
        flags.append(f"data-type: the element type of {data!r} is unknown")
    else:
        try:
            data_type = DataType.from_onnx(elem)
        except DataTypeError as e:
            flags.append(f"data-type: {e}")
    if data_type is not None and data_type.is_64bit_integer:
        low = "int32" if data_type is DataType.INT64 else "uint32"
        flags.append(f"{data_type.name.lower()}: needs DirectML 64-bit support or the 32-bit emulation "
                     f"(values outside {low} not preserved)")
    in_shape = _static(graph.shape(data), data, flags)
    inferred_out = graph.shape(out)
    params: dict[str, Any] = {}
    try:
        out_shape, dml, descs, stride_view = _DESCRIBERS[node.op_type](
            node, graph, opset, data_type, in_shape, inferred_out, params, flags)
    except _Flagged as e:
        flags.append(str(e))
        out_shape, dml, descs, stride_view = None, None, {}, node.op_type != "Pad"
    except DescriptorError as e:
        flags.append(f"{_rule_tag(e.rule)}: {e}")
        out_shape, dml, descs, stride_view = _static(inferred_out, out, []), None, {}, True
    except (ShapeError, NotExpressibleError) as e:
        flags.append(f"shape: {e}")
        out_shape, dml, descs, stride_view = None, None, {}, True
    if out_shape is None and not any(f.startswith("dynamic") for f in flags) and in_shape is not None:
        out_shape = _static(inferred_out, out, flags)
    if data_type is not None and data_type.is_64bit_integer and "input" in descs:
        descs = {**descs, "input_uint32_view": descs["input"].as_uint32_view()}
    return {"node_name": name, "op_type": node.op_type, "inputs": tuple(node.input),
            "outputs": tuple(node.output), "data_type": data_type, "input_shape": in_shape,
            "output_shape": out_shape, "params": params, "dml_operator": dml, "descriptors": descs,
            "flags": tuple(dict.fromkeys(flags)), "stride_view": stride_view}


def _rule_tag(rule: str) -> str:
    return {"dimension-count": "dimensions", "element-count": "elements"}.get(rule, rule)


_Described = tuple[tuple[int, ...] | None, dict[str, Any] | None, dict[str, BufferTensorDesc], bool]


def _check_size(shape: tuple[int, ...], what: str) -> None:
    if len(shape) > MAX_DIMENSION_COUNT:
        raise _Flagged(f"dimensions: {what} has {len(shape)} dimensions {list(shape)}, over DirectML's "
                       f"maximum of {MAX_DIMENSION_COUNT}")
    count = math.prod(shape)
    if count > MAX_ELEMENT_COUNT:
        raise _Flagged(f"elements: {what} {list(shape)} holds {count} elements, over DirectML's "
                       "2^32 - 1")
    if count == 0:
        raise _Flagged(f"empty: {what} {list(shape)} has a 0-sized dimension, which no DirectML "
                       "descriptor can hold (the EP skips empty tensors)")


def _identity(inp: BufferTensorDesc, outp: BufferTensorDesc, **extra: Any) -> dict[str, Any]:
    return {"operator": _IDENTITY, "input": inp.to_dict(), "output": outp.to_dict(), **extra}


def _transpose(node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
               shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
               flags: list[str]) -> _Described:
    perm = _attrs(node).get("perm")
    params["perm"] = None if perm is None else tuple(int(a) for a in perm)
    if shape is None or dtype is None:
        return None, None, {}, True
    if not shape:
        raise _Flagged("rank-0: a rank-0 Transpose has no DirectML descriptor (DimensionCount >= 1)")
    p = tuple(range(len(shape) - 1, -1, -1)) if perm is None else normalize_perm(perm, len(shape))
    out_shape = tuple(shape[a] for a in p)
    _check_size(shape, "input")
    inp = BufferTensorDesc(dtype, shape).transpose(p)
    outp = BufferTensorDesc(dtype, out_shape)
    return out_shape, _identity(inp, outp), {"input": inp, "output": outp}, True


def _expand(node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
            shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
            flags: list[str]) -> _Described:
    target = _const_ints(graph, node, 1, "shape", flags)
    params["target_shape"] = target
    if target is None and shape is not None:
        out_static = _static(inferred, node.output[0], [])
        if out_static is not None:  # the broadcast result is a valid target shape
            target = out_static
            params["target_shape"] = target
    if shape is None or dtype is None or target is None:
        return None, None, {}, True
    _check_size(shape or (1,), "input")
    base = BufferTensorDesc(dtype, shape or (1,))
    if not shape:  # a scalar: broadcast from a single element
        base = BufferTensorDesc(dtype, (1,), (0,))
    inp = base.broadcast_to(target)
    _check_size(inp.sizes, "output")
    out_shape = inp.sizes
    outp = BufferTensorDesc(dtype, out_shape)
    return out_shape, _identity(inp, outp), {"input": inp, "output": outp}, True


def _pad(node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
         shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
         flags: list[str]) -> _Described:
    attrs = _attrs(node)
    mode = str(attrs.get("mode", "constant"))
    params["mode"] = mode
    value: Any = 0
    value_hex: str | None = ""
    if opset < 11:
        pads: tuple[int, ...] | None = tuple(int(v) for v in attrs.get("paddings", attrs.get("pads", ())))
        axes = None
        value = float(attrs.get("value", 0.0))
        if value != 0.0 or math.copysign(1.0, value) < 0:
            value_hex = _hex(value, dtype)
    else:
        pads = _const_ints(graph, node, 1, "pads", flags)
        axes = _const_ints(graph, node, 3, "axes", flags)
        if len(node.input) > 3 and node.input[3] and axes is None:
            pads = None
        if len(node.input) > 2 and node.input[2]:
            constant = graph.constant(node, 2)
            if constant is None:
                _const_ints(graph, node, 2, "constant_value", flags)
                value_hex = None
            else:
                value = constant.reshape(-1)[0] if constant.size else 0
                value_hex = _hex(value, dtype)
    params.update(pads=pads, axes=axes, value_hex=value_hex)
    if shape is None or dtype is None or pads is None:
        return None, None, {}, False
    _check_size(shape or (1,), "input")
    try:
        op = PaddingOp.from_onnx(BufferTensorDesc(dtype, shape or (1,)), pads, mode=mode, value=value,
                                 axes=axes)
    except NotExpressibleError as e:
        flags.append(f"negative-pads: {e}")
        begins, ends = split_onnx_pads(pads, len(shape), axes)
        out_shape = tuple(n + b + e for n, b, e in zip(shape, begins, ends, strict=True))
        return out_shape, None, {}, False
    begins = op.start_padding[op.dimension_count - len(shape):]
    ends = op.end_padding[op.dimension_count - len(shape):]
    out_shape = tuple(n + b + e for n, b, e in zip(shape, begins, ends, strict=True))
    return out_shape, op.to_dict(), {"input": op.input, "output": op.output}, False


def _hex(value: Any, dtype: DataType | None) -> str | None:
    """The little-endian bytes of ``value`` in ``dtype``, as hex (Case.pad_value_hex)."""
    if dtype is None:
        return None
    scalar = np.array(value).astype(dtype.to_numpy())
    return scalar.astype(scalar.dtype.newbyteorder("<")).tobytes().hex()


def _reshape_like(node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                  shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                  flags: list[str]) -> _Described:
    if shape is None or dtype is None:
        return None, None, {}, True
    out_shape = _new_shape(node, graph, opset, shape, params, flags)
    if out_shape is None:
        out_shape = _static(inferred, node.output[0], flags)
        if out_shape is None:
            return None, None, {}, True
    if math.prod(out_shape) != math.prod(shape):
        raise ShapeError(f"{node.op_type} {name_of(node)} turns {list(shape)} into {list(out_shape)}: "
                         "the element counts differ")
    _check_size(shape or (1,), "input")
    _check_size(out_shape or (1,), "output")
    view = BufferTensorDesc(dtype, out_shape or (1,))
    dml = _identity(view, view, alias=True,
                    note="the same buffer read with the output's sizes, packed (no data moves)")
    return out_shape, dml, {"input": view, "output": view}, True


def name_of(node: onnx.NodeProto) -> str:
    return repr(node.name) if node.name else f"({node.op_type})"


def _axes_of(node: onnx.NodeProto, graph: Graph, opset: int, flags: list[str]) -> tuple[int, ...] | None:
    if opset < 13:
        axes = _attrs(node).get("axes")
        return None if axes is None else tuple(int(a) for a in axes)
    return _const_ints(graph, node, 1, "axes", flags)


def _new_shape(node: onnx.NodeProto, graph: Graph, opset: int, shape: tuple[int, ...],
               params: dict[str, Any], flags: list[str]) -> tuple[int, ...] | None:
    rank = len(shape)
    if node.op_type == "Flatten":
        axis = int(_attrs(node).get("axis", 1))
        axis = axis + rank if axis < 0 else axis
        params["axis"] = axis
        return (math.prod(shape[:axis]), math.prod(shape[axis:]))
    if node.op_type == "Reshape":
        target = _const_ints(graph, node, 1, "shape", flags)
        params["shape"] = target
        if target is None:
            return None
        allowzero = int(_attrs(node).get("allowzero", 0))
        dims = [shape[i] if v == 0 and not allowzero else v for i, v in enumerate(target)]
        if dims.count(-1) == 1:
            known = math.prod(d for d in dims if d != -1)
            dims[dims.index(-1)] = math.prod(shape) // known if known else 0
        return tuple(dims)
    axes = _axes_of(node, graph, opset, flags)
    params["axes"] = axes
    if node.op_type == "Squeeze":
        if axes is None and opset >= 13 and len(node.input) > 1 and node.input[1]:
            return None
        drop = {a % rank for a in axes} if axes is not None else {i for i, n in enumerate(shape) if n == 1}
        return tuple(n for i, n in enumerate(shape) if i not in drop)
    if axes is None:  # Unsqueeze with runtime axes
        return None
    out_rank = rank + len(axes)
    ins = {a % out_rank for a in axes}
    it = iter(shape)
    return tuple(1 if i in ins else next(it) for i in range(out_rank))


def _depth_space(node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                 shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                 flags: list[str]) -> _Described:
    attrs = _attrs(node)
    b = int(attrs.get("blocksize", 1))
    mode = str(attrs.get("mode", "DCR")).upper()
    params["blocksize"] = b
    if node.op_type == "DepthToSpace":
        params["mode"] = mode
    if shape is None or dtype is None:
        return None, None, {}, True
    if len(shape) != 4:
        raise ShapeError(f"{node.op_type} needs a 4-D input, got {list(shape)}")
    n, c, h, w = shape
    if node.op_type == "DepthToSpace":
        if c % (b * b):
            raise ShapeError(f"DepthToSpace channels {c} are not a multiple of blocksize^2 = {b * b}")
        if mode == "DCR":
            view, perm = (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2)
        elif mode == "CRD":
            view, perm = (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3)
        else:
            raise ShapeError(f"DepthToSpace mode {mode!r} is not valid; valid: ['CRD', 'DCR']")
        out_shape = (n, c // (b * b), h * b, w * b)
    else:
        if h % b or w % b:
            raise ShapeError(f"SpaceToDepth height/width {h}x{w} are not multiples of blocksize {b}")
        view, perm = (n, c, h // b, b, w // b, b), (0, 3, 5, 1, 2, 4)
        out_shape = (n, c * b * b, h // b, w // b)
    _check_size(shape, "input")
    reshaped = BufferTensorDesc(dtype, view)
    strided = reshaped.transpose(perm)
    packed6 = BufferTensorDesc(dtype, strided.sizes)
    output = BufferTensorDesc(dtype, out_shape)
    fits = strided.dimension_count <= MAX_DIMENSION_COUNT
    chain = [
        {"step": "reshape", "sizes": list(view)},
        {"step": "transpose", "perm": list(perm), "sizes": list(strided.sizes),
         "strides": list(strided.effective_strides)},
        {"step": "reshape", "sizes": list(out_shape)},
    ]
    dml = _identity(strided, packed6, chain=chain, dimension_count=strided.dimension_count,
                    fits_in_8_dims=fits,
                    note="a 6-D strided view of the input copied packed; the packed 6-D output is "
                         "the output buffer read with the output's 4-D sizes")
    return out_shape, dml, {"reshape": reshaped, "input": strided, "output_6d": packed6,
                            "output": output}, True


def _slice(node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
           shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
           flags: list[str]) -> _Described:
    starts: tuple[int, ...] | None
    ends: tuple[int, ...] | None
    if opset < 10:
        attrs = _attrs(node)
        starts = tuple(int(v) for v in attrs.get("starts", ()))
        ends = tuple(int(v) for v in attrs.get("ends", ()))
        axes = tuple(int(v) for v in attrs["axes"]) if "axes" in attrs else None
        steps = None
    else:
        starts = _const_ints(graph, node, 1, "starts", flags)
        ends = _const_ints(graph, node, 2, "ends", flags)
        axes = _const_ints(graph, node, 3, "axes", flags)
        steps = _const_ints(graph, node, 4, "steps", flags)
        given = [i for i in (3, 4) if len(node.input) > i and node.input[i]]
        if starts is None or ends is None or (3 in given and axes is None) or (4 in given and steps is None):
            params.update(starts=starts, ends=ends, axes=axes, steps=steps)
            return None, None, {}, True
    params.update(starts=starts, ends=ends, axes=axes, steps=steps)
    if shape is None or dtype is None:
        return None, None, {}, True
    rank = len(shape)
    axis_list = [a % rank for a in axes] if axes is not None else list(range(len(starts)))
    step_list = list(steps) if steps is not None else [1] * len(axis_list)
    if 0 in step_list:
        raise ShapeError(f"Slice steps {step_list} contain 0")
    begin, step = [0] * rank, [1] * rank
    out = list(shape)
    for a, s, e, k in zip(axis_list, starts, ends, step_list, strict=True):
        dim = shape[a]
        s = s + dim if s < 0 else s
        e = e + dim if e < 0 else e
        if k > 0:
            s, e = min(max(s, 0), dim), min(max(e, 0), dim)
            count = max(0, -(-(e - s) // k))
        else:
            s, e = min(max(s, 0), dim - 1), min(max(e, -1), dim - 1)
            count = max(0, -(-(s - e) // -k))
        begin[a], step[a], out[a] = s, k, count
    out_shape = tuple(out)
    if any(k < 0 for k in step):
        axis = next(i for i, k in enumerate(step) if k < 0)
        flags.append(f"not-stride-view: Slice step {step[axis]} at axis {axis} is negative; DirectML "
                     "strides are unsigned, so this Slice is not a stride view (it needs a reversing "
                     "operator)")
        return out_shape, None, {}, False
    _check_size(shape, "input")
    _check_size(out_shape, "output")
    packed = packed_strides(shape)
    offset = sum(b * p for b, p in zip(begin, packed, strict=True))
    strides = tuple(p * k for p, k in zip(packed, step, strict=True))
    view = BufferTensorDesc(dtype, out_shape, strides)
    output = BufferTensorDesc(dtype, out_shape)
    source = BufferTensorDesc(dtype, shape)
    offset_bytes = offset * dtype.bitwidth // 8
    if offset_bytes % MINIMUM_BUFFER_ALIGNMENT_IN_BYTES:
        flags.append(f"offset: the view starts {offset} elements ({offset_bytes} bytes) into the input, "
                     f"not a multiple of {MINIMUM_BUFFER_ALIGNMENT_IN_BYTES} bytes; a DirectML buffer "
                     "binding offset must be, so the EP copies instead of binding a view")
    params["begin"] = tuple(begin)
    params["step"] = tuple(step)
    dml = _identity(view, output, input_offset_in_elements=offset, input_offset_in_bytes=offset_bytes,
                    source=source.to_dict())
    return out_shape, dml, {"source": source, "input": view, "output": output}, True


_DESCRIBERS = {
    "Transpose": _transpose, "Expand": _expand, "Pad": _pad,
    "Reshape": _reshape_like, "Flatten": _reshape_like, "Squeeze": _reshape_like,
    "Unsqueeze": _reshape_like, "DepthToSpace": _depth_space, "SpaceToDepth": _depth_space,
    "Slice": _slice,
}


