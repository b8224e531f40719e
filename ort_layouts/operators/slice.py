"""ONNX Slice with positive steps, described as a strided view that starts at a base offset
(in elements) of the input buffer.

Described for real models (``extract``); it makes no validation cases yet.
"""

from __future__ import annotations

from typing import Any

import onnx

from ort_layouts._errors import ShapeError
from ort_layouts.descriptors.buffer_tensor import MINIMUM_BUFFER_ALIGNMENT_IN_BYTES, BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.size import packed_strides
from ort_layouts.operators.base import Described, Operator
from ort_layouts.operators.identity import identity_dict
from ort_layouts.operators.onnx_nodes import Graph, attrs, check_size, const_ints

__all__ = ["Slice"]


def _describe(node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
           shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
           flags: list[str]) -> Described:
    starts: tuple[int, ...] | None
    ends: tuple[int, ...] | None
    if opset < 10:
        node_attrs = attrs(node)
        starts = tuple(int(v) for v in node_attrs.get("starts", ()))
        ends = tuple(int(v) for v in node_attrs.get("ends", ()))
        axes = tuple(int(v) for v in node_attrs["axes"]) if "axes" in node_attrs else None
        steps = None
    else:
        starts = const_ints(graph, node, 1, "starts", flags)
        ends = const_ints(graph, node, 2, "ends", flags)
        axes = const_ints(graph, node, 3, "axes", flags)
        steps = const_ints(graph, node, 4, "steps", flags)
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
    check_size(shape, "input")
    check_size(out_shape, "output")
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
    dml = identity_dict(view, output, input_offset_in_elements=offset, input_offset_in_bytes=offset_bytes,
                    source=source.to_dict())
    return out_shape, dml, {"source": source, "input": view, "output": output}, True


class Slice(Operator):
    op_types = ("Slice",)
    validates = False

    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        return _describe(node, graph, opset, dtype, shape, inferred, params, flags)
