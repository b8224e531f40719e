"""Convert a model's image inputs and outputs between NCHW and NHWC, and prove the result.

:func:`convert_layout` changes only the graph boundary: each converted input gets the new
layout and a Transpose back to the layout the graph was written for; each converted output is
transposed from the graph's layout to the new one. Names, element types, doc strings, metadata
and every other node stay as they were. :func:`check_conversion` runs the original and the
converted model on the same data (transposed as needed) on the CPU execution provider and
compares every output bit for bit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper

from ort_layouts._errors import ModelError, ShapeError
from ort_layouts.engine.selection import check_dims
from ort_layouts.models.extract import load_model

__all__ = [
    "ConversionCheck",
    "LAYOUTS",
    "OutputComparison",
    "check_conversion",
    "convert_layout",
    "converted_tensors",
]

LAYOUTS = ("NCHW", "NHWC")
_NODE_PREFIX = "ort_layouts.convert/"
_ModelLike = str | Path | onnx.ModelProto


def _channels_last_perm(rank: int) -> tuple[int, ...]:
    """Channels-first -> channels-last: (0, 2, ..., rank-1, 1)."""
    return (0, *range(2, rank), 1)


def _channels_first_perm(rank: int) -> tuple[int, ...]:
    """Channels-last -> channels-first: (0, rank-1, 1, ..., rank-2)."""
    return (0, rank - 1, *range(1, rank - 1))


def _rank(value: onnx.ValueInfoProto) -> int | None:
    tt = value.type.tensor_type
    if not value.type.HasField("tensor_type") or not tt.HasField("shape"):
        return None
    return len(tt.shape.dim)


def _rename(graph: onnx.GraphProto, old: str, new: str) -> None:
    """Rename tensor ``old`` to ``new`` in every node (subgraphs included) and value_info entry."""
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = new
        for i, name in enumerate(node.output):
            if name == old:
                node.output[i] = new
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _rename(attr.g, old, new)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    _rename(g, old, new)
    for value in graph.value_info:
        if value.name == old:
            value.name = new


def _all_names(graph: onnx.GraphProto) -> set[str]:
    names = {v.name for v in (*graph.input, *graph.output, *graph.value_info)}
    names |= {t.name for t in graph.initializer}
    for node in graph.node:
        names.update(node.input)
        names.update(node.output)
        names.add(node.name)
    return names


def _unique(base: str, taken: set[str]) -> str:
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def _renamed_info(value: onnx.ValueInfoProto, name: str) -> onnx.ValueInfoProto:
    """A copy of ``value`` under another name, without its doc string (an internal value)."""
    info = onnx.ValueInfoProto()
    info.CopyFrom(value)
    info.name = name
    info.ClearField("doc_string")
    return info


def _permuted(value: onnx.ValueInfoProto, perm: Sequence[int]) -> onnx.ValueInfoProto:
    """A copy of ``value`` whose dims (values, dim_params and denotations) are permuted."""
    out = onnx.ValueInfoProto()
    out.CopyFrom(value)
    dims = [onnx.TensorShapeProto.Dimension() for _ in perm]
    for new, src in zip(dims, perm, strict=True):
        new.CopyFrom(value.type.tensor_type.shape.dim[src])
    del out.type.tensor_type.shape.dim[:]
    out.type.tensor_type.shape.dim.extend(dims)
    return out


def convert_layout(
    model: _ModelLike,
    *,
    to: str = "NHWC",
    names: Iterable[str] | None = None,
    inputs: bool = True,
    outputs: bool = True,
) -> onnx.ModelProto:
    """Change a model's image inputs and outputs to channels-last ("NHWC") or channels-first.

    The graph is assumed to be written for the other layout (``to="NHWC"``: an NCHW model).
    Only the boundary changes: a Transpose after each converted input and before each converted
    output, named ``ort_layouts.convert/...``.

    Args:
        model: a path or a ModelProto (not modified).
        to: the layout the converted inputs and outputs get: "NHWC" or "NCHW".
        names: the inputs and outputs to convert (any rank >= 3); default: every rank-4 input
            (initializers excluded) and output.
        inputs, outputs: whether to convert inputs and outputs (``names`` may name only
            those of the sides converted).

    Returns:
        A new ModelProto with the same input and output names, element types, doc strings and
        metadata; converted shapes are permuted, symbolic dimensions included.
    """
    target = str(to).upper()
    if target not in LAYOUTS:
        raise ModelError(f"layout {to!r} is not a conversion target; valid: {list(LAYOUTS)}")
    source, _ = load_model(model, load_external_data=True)
    converted = onnx.ModelProto()
    converted.CopyFrom(source)
    graph = converted.graph
    initializers = {t.name for t in graph.initializer}
    graph_inputs = [v for v in graph.input if v.name not in initializers]
    if names is None:
        chosen_in = [v for v in graph_inputs if inputs and _rank(v) == 4]
        chosen_out = [v for v in graph.output if outputs and _rank(v) == 4]
    else:
        wanted = list(dict.fromkeys(names))
        valid = [v.name for v in graph_inputs if inputs] + [v.name for v in graph.output if outputs]
        missing = [n for n in wanted if n not in valid]
        if missing:
            what = {(True, True): "inputs or outputs", (True, False): "inputs (inputs only are converted)",
                    (False, True): "outputs (outputs only are converted)"}.get((inputs, outputs), "converted")
            raise ModelError(f"names {missing} are not graph {what}; valid: {valid}")
        chosen_in = [v for v in graph_inputs if v.name in wanted]
        chosen_out = [v for v in graph.output if v.name in wanted]
    for v in (*chosen_in, *chosen_out):
        rank = _rank(v)
        if rank is None or rank < 3:
            raise ShapeError(f"{v.name!r} has rank {rank}; only tensors of rank >= 3 have a channel "
                             "axis to move")
    input_names = {v.name for v in graph.input}
    for v in chosen_out:
        if v.name in input_names or v.name in initializers:
            raise ModelError(f"output {v.name!r} is also a graph input or initializer; it cannot be "
                             "converted on its own")
    to_last = target == "NHWC"
    taken = _all_names(graph)
    head: list[onnx.NodeProto] = []
    tail: list[onnx.NodeProto] = []
    internal_infos: list[onnx.ValueInfoProto] = []
    for v in chosen_in:
        rank = _rank(v) or 0
        boundary = _channels_last_perm(rank) if to_last else _channels_first_perm(rank)
        back = _channels_first_perm(rank) if to_last else _channels_last_perm(rank)
        inner = _unique(f"{v.name}__{'nchw' if to_last else 'nhwc'}", taken)
        _rename(graph, v.name, inner)
        head.append(helper.make_node(
            "Transpose", [v.name], [inner], name=_unique(f"{_NODE_PREFIX}{v.name}", taken),
            perm=list(back), doc_string=f"input {v.name!r}: {target} at the boundary, back to the "
                                        "layout the graph was written for"))
        internal_infos.append(_renamed_info(v, inner))
        v.CopyFrom(_permuted(v, boundary))
    for v in chosen_out:
        rank = _rank(v) or 0
        boundary = _channels_last_perm(rank) if to_last else _channels_first_perm(rank)
        inner = _unique(f"{v.name}__{'nchw' if to_last else 'nhwc'}", taken)
        _rename(graph, v.name, inner)
        tail.append(helper.make_node(
            "Transpose", [inner], [v.name], name=_unique(f"{_NODE_PREFIX}{v.name}", taken),
            perm=list(boundary), doc_string=f"output {v.name!r}: to {target} at the boundary"))
        internal_infos.append(_renamed_info(v, inner))
        v.CopyFrom(_permuted(v, boundary))
    present = {v.name for v in graph.value_info}
    internal_infos = [v for v in internal_infos if v.name not in present]
    nodes = [*head, *graph.node, *tail]
    del graph.node[:]
    graph.node.extend(nodes)
    graph.value_info.extend(internal_infos)
    if not any(o.domain in ("", "ai.onnx") for o in converted.opset_import):
        converted.opset_import.append(helper.make_opsetid("", 13))
    return converted


def converted_tensors(model: onnx.ModelProto) -> list[str]:
    """The inputs and outputs :func:`convert_layout` converted in ``model``, in the order of its
    boundary Transposes (inputs first)."""
    inputs = {v.name for v in model.graph.input}
    return [n.input[0] if n.input[0] in inputs else n.output[0]
            for n in model.graph.node if n.name.startswith(_NODE_PREFIX)]


# ---- checking ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class OutputComparison:
    """Bit-for-bit comparison of one output. Truthy when every byte matches."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    element_count: int
    mismatch_count: int
    first_mismatch_index: tuple[int, ...] | None
    message: str = ""

    def __bool__(self) -> bool:
        return self.mismatch_count == 0 and not self.message


@dataclasses.dataclass(frozen=True, slots=True)
class ConversionCheck:
    """The original and the converted model run on the same data. Truthy when all outputs match.

    Attributes:
        passed: every output bit-identical (after transposing the original's to the new layout).
        outputs: one comparison per graph output.
        input_perms: for each converted input, the perm that turns the converted model's input
            into the original's.
        output_perms: for each converted output, the perm applied to the original's output.
    """

    passed: bool
    outputs: tuple[OutputComparison, ...]
    input_perms: dict[str, tuple[int, ...]] = dataclasses.field(default_factory=dict, hash=False)
    output_perms: dict[str, tuple[int, ...]] = dataclasses.field(default_factory=dict, hash=False)

    def __bool__(self) -> bool:
        return self.passed

    def summary(self) -> str:
        lines = []
        for o in self.outputs:
            state = "identical" if o else f"{o.mismatch_count} of {o.element_count} elements differ" + (
                f", first at {list(o.first_mismatch_index)}" if o.first_mismatch_index else "")
            lines.append(f"{o.name} {o.dtype} {list(o.shape)}: {state}{' ' + o.message if o.message else ''}")
        lines.append("conversion check: " + ("passed (bit-identical)" if self.passed else "FAILED"))
        return "\n".join(lines)


def _boundary_perms(model: onnx.ModelProto) -> tuple[dict[str, tuple[int, ...]], dict[str, tuple[int, ...]]]:
    inputs = {v.name for v in model.graph.input}
    outputs = {v.name for v in model.graph.output}
    in_perms, out_perms = {}, {}
    for node in model.graph.node:
        if node.op_type != "Transpose" or not node.name.startswith(_NODE_PREFIX):
            continue
        perm = tuple(int(a) for a in helper.get_attribute_value(node.attribute[0]))
        if node.input[0] in inputs:
            in_perms[node.input[0]] = perm
        elif node.output[0] in outputs:
            out_perms[node.output[0]] = perm
    return in_perms, out_perms


def _random(rng: np.random.Generator, shape: tuple[int, ...], elem_type: int) -> np.ndarray:
    dtype = helper.tensor_dtype_to_np_dtype(elem_type)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(size=shape).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True).astype(dtype)
    raise ModelError(f"no random data for ONNX element type {elem_type} ({dtype})")


def _session(model: onnx.ModelProto, optimize: bool) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception as e:
        raise ModelError(f"ONNX Runtime cannot load model {model.graph.name!r}: {e}") from e


def _compare(name: str, expected: np.ndarray, actual: np.ndarray) -> OutputComparison:
    shape = tuple(int(n) for n in np.shape(actual))
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return OutputComparison(name, shape, str(actual.dtype), int(np.size(actual)), int(np.size(actual)),
                                None, f"expected {expected.dtype} {list(expected.shape)}, got "
                                      f"{actual.dtype} {list(actual.shape)}")
    item = expected.dtype.itemsize
    a = np.ascontiguousarray(expected).view(np.uint8).reshape(*expected.shape, item) if expected.size \
        else np.zeros((*expected.shape, item), np.uint8)
    b = np.ascontiguousarray(actual).view(np.uint8).reshape(*actual.shape, item) if actual.size \
        else np.zeros((*actual.shape, item), np.uint8)
    bad = np.any(a != b, axis=-1)
    count = int(bad.sum())
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if count else None
    return OutputComparison(name, shape, str(actual.dtype), int(expected.size), count, first)


def check_conversion(
    original: _ModelLike,
    converted: _ModelLike,
    *,
    seed: int = 0,
    dims: dict[str, int] | None = None,
    optimize: bool = False,
) -> ConversionCheck:
    """Run both models on the CPU EP on the same random data and compare outputs bit for bit.

    The converted model's boundary Transposes (named ``ort_layouts.convert/...``) say how its
    inputs map to the original's and how the original's outputs map to its own.

    Args:
        original, converted: paths or ModelProtos.
        seed: seed of the ``numpy.random.Generator`` that makes the inputs.
        dims: values for symbolic input dimensions (default 1 for each), integers >= 1; each
            must be a dim_param of the model's inputs.
        optimize: run with ONNX Runtime's graph optimizations (off by default, so each model
            runs exactly its own nodes).
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ShapeError(f"seed {seed!r} is not an integer >= 0")
    pins = check_dims(dims)
    orig, _ = load_model(original, load_external_data=True)
    conv, _ = load_model(converted, load_external_data=True)
    in_perms, out_perms = _boundary_perms(conv)
    rng = np.random.default_rng(seed)
    feeds_conv: dict[str, np.ndarray] = {}
    feeds_orig: dict[str, np.ndarray] = {}
    initializers = {t.name for t in conv.graph.initializer}
    known = {d.dim_param for v in conv.graph.input if v.name not in initializers
             for d in v.type.tensor_type.shape.dim if d.dim_param}
    unknown_dims = sorted(set(pins) - known)
    if unknown_dims:
        raise ShapeError(f"dimensions {unknown_dims} are not dim_params of the model's inputs; its "
                         f"dim_params: {sorted(known)}")
    for v in conv.graph.input:
        if v.name in initializers:
            continue
        tt = v.type.tensor_type
        shape = tuple(int(d.dim_value) if d.HasField("dim_value") else int(pins.get(d.dim_param, 1))
                      for d in tt.shape.dim)
        data = _random(rng, shape, tt.elem_type)
        feeds_conv[v.name] = data
        perm = in_perms.get(v.name)
        feeds_orig[v.name] = np.ascontiguousarray(np.transpose(data, perm)) if perm else data
    got_orig = _session(orig, optimize).run(None, feeds_orig)
    got_conv = _session(conv, optimize).run(None, feeds_conv)
    names = [o.name for o in conv.graph.output]
    results = []
    for name, a, b in zip(names, got_orig, got_conv, strict=True):
        perm = out_perms.get(name)
        expected = np.ascontiguousarray(np.transpose(a, perm)) if perm else np.asarray(a)
        results.append(_compare(name, expected, np.asarray(b)))
    return ConversionCheck(all(results), tuple(results), in_perms, out_perms)
