"""ONNX DepthToSpace and SpaceToDepth, described as a reshape + transpose + reshape chain whose
middle step is one 6-dimensional strided view of the input.

Described for real models (``extract``); they make no validation cases yet.
"""

from __future__ import annotations

from typing import Any

import onnx

from ort_layouts._errors import ShapeError
from ort_layouts.descriptors.buffer_tensor import MAX_DIMENSION_COUNT, BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.base import Described, Operator
from ort_layouts.operators.identity import identity_dict
from ort_layouts.operators.onnx_nodes import Graph, attrs, check_size

__all__ = ["DepthSpace"]


def _describe(node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                 shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                 flags: list[str]) -> Described:
    node_attrs = attrs(node)
    b = int(node_attrs.get("blocksize", 1))
    mode = str(node_attrs.get("mode", "DCR")).upper()
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
    check_size(shape, "input")
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
    dml = identity_dict(strided, packed6, chain=chain, dimension_count=strided.dimension_count,
                    fits_in_8_dims=fits,
                    note="a 6-D strided view of the input copied packed; the packed 6-D output is "
                         "the output buffer read with the output's 4-D sizes")
    return out_shape, dml, {"reshape": reshaped, "input": strided, "output_6d": packed6,
                            "output": output}, True


class DepthSpace(Operator):
    op_types = ("DepthToSpace", "SpaceToDepth")
    validates = False

    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        return _describe(node, graph, opset, dtype, shape, inferred, params, flags)
