"""ONNX Reshape, Flatten, Squeeze and Unsqueeze: the same buffer read with new sizes.

The DML EP runs them as a copy between two packed descriptors of one buffer size (no data moves
in a graph where the EP aliases the buffer). Described for real models (``extract``); they make
no validation cases yet.
"""

from __future__ import annotations

import math
from typing import Any

import onnx

from ort_layouts._errors import ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.base import Described, Operator
from ort_layouts.operators.identity import identity_dict
from ort_layouts.operators.onnx_nodes import Graph, attrs, check_size, const_ints, name_of, static

__all__ = ["ReshapeLike"]


def _describe(node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                  shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                  flags: list[str]) -> Described:
    if shape is None or dtype is None:
        return None, None, {}, True
    out_shape = _new_shape(node, graph, opset, shape, params, flags)
    if out_shape is None:
        out_shape = static(inferred, node.output[0], flags)
        if out_shape is None:
            return None, None, {}, True
    if math.prod(out_shape) != math.prod(shape):
        raise ShapeError(f"{node.op_type} {name_of(node)} turns {list(shape)} into {list(out_shape)}: "
                         "the element counts differ")
    check_size(shape or (1,), "input")
    check_size(out_shape or (1,), "output")
    view = BufferTensorDesc(dtype, out_shape or (1,))
    dml = identity_dict(view, view, alias=True,
                    note="the same buffer read with the output's sizes, packed (no data moves)")
    return out_shape, dml, {"input": view, "output": view}, True


def _axes_of(node: onnx.NodeProto, graph: Graph, opset: int, flags: list[str]) -> tuple[int, ...] | None:
    if opset < 13:
        axes = attrs(node).get("axes")
        return None if axes is None else tuple(int(a) for a in axes)
    return const_ints(graph, node, 1, "axes", flags)


def _new_shape(node: onnx.NodeProto, graph: Graph, opset: int, shape: tuple[int, ...],
               params: dict[str, Any], flags: list[str]) -> tuple[int, ...] | None:
    rank = len(shape)
    if node.op_type == "Flatten":
        axis = int(attrs(node).get("axis", 1))
        axis = axis + rank if axis < 0 else axis
        params["axis"] = axis
        return (math.prod(shape[:axis]), math.prod(shape[axis:]))
    if node.op_type == "Reshape":
        target = const_ints(graph, node, 1, "shape", flags)
        params["shape"] = target
        if target is None:
            return None
        allowzero = int(attrs(node).get("allowzero", 0))
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


class ReshapeLike(Operator):
    op_types = ("Reshape", "Flatten", "Squeeze", "Unsqueeze")
    validates = False

    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        return _describe(node, graph, opset, dtype, shape, inferred, params, flags)
