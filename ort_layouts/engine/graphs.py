"""ONNX graphs that exercise the layout operators: one graph holds many cases.

Case ``i`` of a model has the data input ``x{i}`` (a graph input, so constant folding cannot
remove the node), the output ``y{i}``, and one node named ``n{i}_{op}``. Shapes, pads, pad
values and axes are initializers named ``shape{i}``, ``pads{i}``, ``value{i}`` and ``axes{i}``
(the DML EP reads them on the CPU).

The IR version and opset default to what the installed ONNX Runtime accepts: a table by
ONNX Runtime version gives the starting point and a probe (creating a tiny CPU session)
confirms it, stepping down until the runtime loads the model.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

from ort_layouts._errors import ModelError
from ort_layouts.operators.case import Case
from ort_layouts.operators.pad import split_onnx_pads

__all__ = [
    "provider_opset",
    "build_model",
    "default_ir_version",
    "default_opset",
    "output_shape",
]

# Newest IR version / ai.onnx opset each ONNX Runtime release loads (from its release notes and
# its model loader). Releases not listed use the nearest older entry; the probe has the last word.
_ORT_LIMITS: tuple[tuple[tuple[int, int], int, int], ...] = (
    ((1, 14), 9, 18),
    ((1, 15), 9, 19),
    ((1, 17), 9, 20),
    ((1, 18), 10, 21),
    ((1, 20), 10, 21),
    ((1, 21), 10, 22),
    ((1, 22), 11, 22),
    ((1, 23), 11, 23),
    ((1, 24), 11, 24),
    ((1, 26), 12, 25),
    ((1, 30), 13, 26),
)

# Lowest opset at which each operator / feature exists.
MIN_OPSET = {"Transpose": 1, "Expand": 8, "Pad": 2}
PAD_INPUTS_OPSET = 11  # pads and constant_value become inputs
PAD_AXES_OPSET = 18  # the axes input
PAD_WRAP_OPSET = 19  # mode "wrap"


def _ort_version() -> tuple[int, int]:
    import onnxruntime as ort

    parts = ort.__version__.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):  # a development build: trust the probe alone
        return (99, 0)


def _table_limits() -> tuple[int, int]:
    version = _ort_version()
    ir, opset = _ORT_LIMITS[0][1], _ORT_LIMITS[0][2]
    for release, release_ir, release_opset in _ORT_LIMITS:
        if release <= version:
            ir, opset = release_ir, release_opset
    if version > _ORT_LIMITS[-1][0]:  # newer than the table: let the probe look a little higher
        opset += 2
        ir += 1
    return ir, opset


def _loads(ir_version: int, opset: int) -> bool:
    """Whether the installed ONNX Runtime creates a CPU session for a tiny model."""
    import onnxruntime as ort

    graph = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["y"], name="probe")], "probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=ir_version)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception:  # any load failure means "not this version"
        return False
    return True


@functools.cache
def default_ir_version() -> int:
    """The newest IR version that both onnx writes and the installed ONNX Runtime loads."""
    ir, _ = _table_limits()
    ir = min(ir, onnx.IR_VERSION)
    for candidate in range(ir, 6, -1):
        if _loads(candidate, 13):
            return candidate
    raise ModelError(f"the installed onnxruntime loads no IR version between 7 and {ir}")


@functools.cache
def default_opset() -> int:
    """The newest ai.onnx opset that both onnx knows and the installed ONNX Runtime loads."""
    _, opset = _table_limits()
    opset = min(opset, onnx.defs.onnx_opset_version())
    ir = default_ir_version()
    for candidate in range(opset, 12, -1):
        if _loads(ir, candidate):
            return candidate
    raise ModelError(f"the installed onnxruntime loads no opset between 13 and {opset}")


# The newest opset at which Transpose, Expand and Pad resolve to schema versions the EP registers
# kernels for. An EP's kernel for version N only serves nodes whose schema version falls in its
# registered range, so a model at the runtime's newest opset (Transpose-25 under opset 26, say)
# would find no kernel at all and test nothing.
#   WebGPU EP: Transpose 21-22 and 23, Pad 21-22 and 23, Expand 13 (webgpu_execution_provider.cc).
#   DML EP: Transpose 13, Expand 13, Pad 18 and 19 (wrap, DirectML feature level 6.4).
_EP_OPSET: dict[str, int] = {"WebGpuExecutionProvider": 23, "DmlExecutionProvider": 19}


def provider_opset(provider: str) -> int:
    """The opset to build cases with for an execution provider (full name): the newest one at
    which its kernels serve Transpose, Expand and Pad, never above :func:`default_opset`."""
    newest = default_opset()
    return min(_EP_OPSET.get(provider, newest), newest)


def output_shape(case: Case) -> tuple[int, ...]:
    """The ONNX output shape of a case (negative pads crop)."""
    if case.op == "Transpose":
        perm = case.perm if case.perm is not None else tuple(range(case.rank - 1, -1, -1))
        return tuple(case.shape[a] for a in perm)
    if case.op == "Expand":
        target = case.target_shape or ()
        rank = max(len(target), case.rank)
        src = (1,) * (rank - case.rank) + case.shape
        tgt = (1,) * (rank - len(target)) + target
        return tuple(b if a == 1 else a for a, b in zip(src, tgt, strict=True))
    begins, ends = split_onnx_pads(case.pads or (), case.rank, case.axes)
    return tuple(n + b + e for n, b, e in zip(case.shape, begins, ends, strict=True))


def _pad_value(case: Case) -> np.ndarray | None:
    if not case.pad_value_hex:
        return None
    dtype = case.data_type.to_numpy().newbyteorder("<")
    raw = bytes.fromhex(case.pad_value_hex)
    if len(raw) != dtype.itemsize:
        raise ModelError(f"case {case.id}: pad value {case.pad_value_hex!r} is {len(raw)} bytes; "
                         f"{case.data_type.name} needs {dtype.itemsize}")
    return np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="))[0:1].reshape(())


def _int64_initializer(graph: onnx.GraphProto, name: str, values: Sequence[int]) -> None:
    """``numpy_helper.from_array(np.array(values, np.int64), name)``, written in place."""
    tensor = graph.initializer.add()
    tensor.dims.append(len(values))
    tensor.name = name
    tensor.raw_data = np.array(values, dtype="<i8").tobytes()
    tensor.data_type = TensorProto.INT64


def _add_case(i: int, case: Case, opset: int, graph: onnx.GraphProto) -> None:
    """Append case ``i``'s node and initializers to ``graph``. The protos are written in place
    field by field, exactly as ``helper.make_node`` / ``numpy_helper.from_array`` fill them
    (copying each finished message into the graph would cost as much again)."""
    x, y, name = f"x{i}", f"y{i}", f"n{i}_{case.op}"
    if opset < MIN_OPSET[case.op]:
        raise ModelError(f"case {case.id}: {case.op} needs opset >= {MIN_OPSET[case.op]}, got {opset}")
    if case.op == "Transpose":
        if case.perm is not None and not case.perm:  # let make_node report the empty attribute
            graph.node.append(helper.make_node("Transpose", [x], [y], name=name, doc_string=case.id,
                                               perm=[]))
            return
        node = _node(graph, "Transpose", [x], y, name, case.id)
        if case.perm is not None:
            attr = node.attribute.add()
            attr.name = "perm"
            attr.ints.extend(case.perm)
            attr.type = onnx.AttributeProto.INTS
        return
    if case.op == "Expand":
        _int64_initializer(graph, f"shape{i}", case.target_shape or ())
        _node(graph, "Expand", [x, f"shape{i}"], y, name, case.id)
        return
    # Pad
    if case.mode == "wrap" and opset < PAD_WRAP_OPSET:
        raise ModelError(f"case {case.id}: Pad mode 'wrap' needs opset >= {PAD_WRAP_OPSET}, got {opset}")
    if case.axes is not None and opset < PAD_AXES_OPSET:
        raise ModelError(f"case {case.id}: the Pad axes input needs opset >= {PAD_AXES_OPSET}, got {opset}")
    value = _pad_value(case)
    pads = [int(p) for p in case.pads or ()]
    if opset < PAD_INPUTS_OPSET:
        attrs: dict[str, Any] = {"mode": case.mode, "pads": pads}
        if value is not None:
            attrs["value"] = float(value)
        graph.node.append(helper.make_node("Pad", [x], [y], name=name, doc_string=case.id, **attrs))
        return
    inputs = [x, f"pads{i}"]
    _int64_initializer(graph, f"pads{i}", pads)
    if value is not None:
        tensor = graph.initializer.add()  # from_array of the 0-d constant: its little-endian bytes
        tensor.name = f"value{i}"
        tensor.raw_data = bytes.fromhex(case.pad_value_hex)
        tensor.data_type = case.data_type.to_onnx()
        inputs.append(f"value{i}")
    if case.axes is not None:
        if value is None:
            inputs.append("")
        _int64_initializer(graph, f"axes{i}", case.axes)
        inputs.append(f"axes{i}")
    node = _node(graph, "Pad", inputs, y, name, case.id)
    attr = node.attribute.add()
    attr.name = "mode"
    attr.s = case.mode.encode("utf-8")
    attr.type = onnx.AttributeProto.STRING


def _node(graph: onnx.GraphProto, op_type: str, inputs: list[str], output: str, name: str,
          doc_string: str) -> onnx.NodeProto:
    node: onnx.NodeProto = graph.node.add()  # protobuf's containers are untyped here
    node.op_type = op_type
    node.input.extend(inputs)
    node.output.append(output)
    node.name = name
    node.doc_string = doc_string
    return node


def _value_info(values: Any, name: str, elem_type: int, shape: Sequence[int]) -> None:
    """``helper.make_tensor_value_info(name, elem_type, shape)``, appended to ``values`` in place."""
    info = values.add()
    info.name = name
    tensor_type = info.type.tensor_type
    tensor_type.elem_type = elem_type
    dims = tensor_type.shape.dim
    dims.extend([])  # an empty shape is still a shape (a scalar), as make_tensor_type_proto writes it
    for d in shape:
        dims.add().dim_value = d


def build_model(
    cases: Sequence[Case], *, opset: int | None = None, ir_version: int | None = None,
) -> onnx.ModelProto:
    """One ONNX model holding every case: input ``x{i}``, output ``y{i}``, node ``n{i}_{op}``.

    Args:
        cases: the cases; all must share one opset (``case.opset`` None means the default).
        opset: the ai.onnx opset; default: the cases' own, else :func:`default_opset`.
        ir_version: default :func:`default_ir_version`.

    Raises:
        ModelError: no cases, cases that ask for different opsets, or an operator / Pad feature
            the opset does not have (Expand < 8, Pad axes < 18, wrap < 19).
    """
    if not cases:
        raise ModelError("build_model needs at least one case")
    asked = sorted({c.opset for c in cases if c.opset is not None})
    if opset is None:
        if len(asked) > 1:
            raise ModelError(f"cases ask for different opsets {asked}; one model has one opset")
        opset = asked[0] if asked else default_opset()
    elif asked and asked != [opset]:
        raise ModelError(f"cases ask for opsets {asked} but the model is built with opset {opset}")
    # the model is filled in place, field for field what helper.make_model(make_graph(...)) gives
    model = onnx.ModelProto()
    model.ir_version = default_ir_version() if ir_version is None else ir_version
    graph = model.graph
    for i, case in enumerate(cases):
        elem = case.data_type.to_onnx()
        _add_case(i, case, opset, graph)
        _value_info(graph.input, f"x{i}", elem, case.shape)
        _value_info(graph.output, f"y{i}", elem, output_shape(case))
    graph.name = "ort_layouts"
    opset_id = model.opset_import.add()
    opset_id.domain = ""
    opset_id.version = opset
    model.producer_name = "ort_layouts"
    return model
