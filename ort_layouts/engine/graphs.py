"""ONNX graphs that exercise the layout operators: one graph holds many cases.

Case ``i`` of a model has the data input ``x{i}`` (a graph input, so constant folding cannot
remove the node), the output ``y{i}``, and one node named ``n{i}_{op}``, written by the case's
operator module; its parameters (shapes, pads, pad values, axes) are initializers named
``shape{i}``, ``pads{i}``, ``value{i}``, ``axes{i}`` (the DML EP reads them on the CPU). An
operator with several data inputs or outputs (Concat, Split) has ``x{i}``, ``x{i}_1``, ... and
``y{i}``, ``y{i}_1``, ... (:meth:`Operator.input_shapes`, :meth:`Operator.output_shapes`).

The IR version and opset default to what the installed ONNX Runtime accepts: a table by
ONNX Runtime version gives the starting point and a probe (creating a tiny CPU session)
confirms it, stepping down until the runtime loads the model.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import onnx
from onnx import TensorProto, helper

from ort_layouts._errors import ArgumentError, ModelError, a_type
from ort_layouts.descriptors.sequences import is_integer
from ort_layouts.operators.base import input_name, output_name
from ort_layouts.operators.case import Case
from ort_layouts.operators.onnx_nodes import value_info
from ort_layouts.operators.registry import case_refusal, operator_for_type
from ort_layouts.operators.values import check_cases

__all__ = [
    "provider_ir_version",
    "provider_opset",
    "build_model",
    "default_ir_version",
    "default_opset",
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


def _ort_version() -> tuple[int, int]:
    import onnxruntime as ort

    parts = ort.__version__.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):  # a development build: trust the probe alone
        return (99, 0)


def _table_limits(version: tuple[int, int] | None = None) -> tuple[int, int]:
    """(IR version, opset) the table gives for an ONNX Runtime release (default: the installed one)."""
    version = _ort_version() if version is None else version
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
#   DML EP: Transpose 13 and 21, Expand 13, Pad 18, 19 (wrap, DirectML feature level 6.4) and 21
#   (OperatorRegistration.cpp; the -21 kernels since ONNX Runtime 1.20, microsoft/onnxruntime#22547),
#   none for Transpose-23+ or Pad-23+. Opsets 21 and 22 would serve as well; the DML suite stays at
#   19, where its DirectML results were taken.
_EP_OPSET: dict[str, int] = {"WebGpuExecutionProvider": 23, "DmlExecutionProvider": 19}


def provider_opset(provider: str) -> int:
    """The opset to build cases with for an execution provider (full name): the newest one at
    which its kernels serve Transpose, Expand and Pad, never above :func:`default_opset`."""
    newest = default_opset()
    return min(_EP_OPSET.get(provider, newest), newest)


def provider_ir_version(provider: str) -> int:
    """The IR version to build with for an execution provider (full name): the newest its
    ONNX Runtime loads. DirectML through the worker runs the pinned onnxruntime-directml's
    runtime, not the installed one."""
    from ort_layouts.engine.providers import DML, dml_through_worker

    if provider == DML and dml_through_worker():
        from ort_layouts.engine.dml.stack import ORT_DIRECTML_VERSION

        major, minor = (int(p) for p in ORT_DIRECTML_VERSION.split(".")[:2])
        return min(default_ir_version(), _table_limits((major, minor))[0])
    return default_ir_version()


@functools.lru_cache(maxsize=4096)
def _value_type(elem_type: int, shape: tuple[int, ...]) -> bytes:
    """A tensor's ``ValueInfoProto`` without its name, serialized (:func:`value_info`'s): a
    batch's many tensors of a few shapes are each merged from it and named, a fraction of the
    cost of filling every field again."""
    graph = onnx.GraphProto()
    value_info(graph.input, "", elem_type, shape)
    info = graph.input[0]
    info.ClearField("name")
    return bytes(info.SerializeToString())


def build_model(
    cases: Sequence[Case], *, opset: int | None = None, ir_version: int | None = None,
    shapes: Sequence[tuple[Sequence[tuple[int, ...]], Sequence[tuple[int, ...]]]] | None = None,
) -> onnx.ModelProto:
    """One ONNX model holding every case: input ``x{i}``, output ``y{i}``, node ``n{i}_{op}``
    (and ``x{i}_1``, ``y{i}_1``, ... for an operator's further inputs and outputs).

    Args:
        cases: the cases; all must share one opset (``case.opset`` None means the default).
        opset: the ai.onnx opset; default: the cases' own, else :func:`default_opset`.
        ir_version: default :func:`default_ir_version`.
        shapes: each case's (input shapes, output shapes), as its operator's ``input_shapes``
            and ``output_shapes`` give them, when the caller has them already.

    Raises:
        ArgumentError: ``cases`` is one Case or no iterable, an item is no Case, or ``opset`` or
            ``ir_version`` is no integer (each named).
        ModelError: no cases, cases that ask for different opsets, an opset out of a case's
            :func:`~ort_layouts.operators.registry.case_opsets` (Expand < 8, one above the
            newest onnx defines), or a Pad feature the opset does not have (axes < 18, wrap < 19).
    """
    cases = check_cases(cases)  # read once: a generator's cases are the model's
    for name, value in (("opset", opset), ("ir_version", ir_version)):
        if value is not None and (not is_integer(value) or value < 1):
            raise ArgumentError(f"{name} {value!r:.40} ({a_type(value)}) is no integer >= 1; valid: an "
                                "integer >= 1, or None for the default")
    if not cases:
        raise ModelError("build_model needs at least one case")
    if shapes is not None and len(shapes) != len(cases):
        raise ModelError(f"build_model got shapes for {len(shapes)} cases and {len(cases)} cases")
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
    inputs, outputs = graph.input, graph.output
    in_shapes: Sequence[tuple[int, ...]]
    out_shapes: Sequence[tuple[int, ...]]
    for i, case in enumerate(cases):
        elem = case.data_type.to_onnx()
        operator = operator_for_type(case.op)
        refusal = case_refusal(case, opset)
        if refusal:
            raise ModelError(f"case {case.id}: {refusal}")
        operator.add_node(graph, i, case, opset)
        if shapes is None:
            in_shapes, out_shapes = operator.input_shapes(case), operator.output_shapes(case)
        else:
            in_shapes, out_shapes = shapes[i]
        for k, shape in enumerate(in_shapes):
            named = inputs.add()
            named.MergeFromString(_value_type(elem, tuple(shape)))
            named.name = input_name(i, k)
        for k, shape in enumerate(out_shapes):
            named = outputs.add()
            named.MergeFromString(_value_type(elem, tuple(shape)))
            named.name = output_name(i, k)
    graph.name = "ort_layouts"
    opset_id = model.opset_import.add()
    opset_id.domain = ""
    opset_id.version = opset
    model.producer_name = "ort_layouts"
    return model
