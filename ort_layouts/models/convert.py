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
import math
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, shape_inference
from onnx.external_data_helper import uses_external_data

from ort_layouts._errors import ArgumentError, ModelError, ShapeError, a_type
from ort_layouts.descriptors.sequences import is_integer
from ort_layouts.engine.selection import check_dims
from ort_layouts.engine.suite import check_seed, list_argument
from ort_layouts.models.extract import (
    ModelFile,
    check_is_model,
    load_model,
    model_path,
    refuse_aborting_inference,
)
from ort_layouts.models.walk import subgraphs, walk
from ort_layouts.operators.onnx_nodes import external_location

__all__ = [
    "CHECK_INPUT_LIMIT_IN_BYTES",
    "ConversionCheck",
    "LAYOUTS",
    "OutputComparison",
    "check_conversion",
    "check_limit_bytes",
    "convert_layout",
    "converted_tensors",
    "external_data_files",
    "serialized_model",
]

LAYOUTS = ("NCHW", "NHWC")
# the most bytes the random inputs of :func:`check_conversion` take in all (each made in its own
# element type) unless its ``limit_bytes`` says otherwise; larger dims are refused before anything
# is made
CHECK_INPUT_LIMIT_IN_BYTES = 1 << 30
_MIB = 1 << 20
_NODE_PREFIX = "ort_layouts.convert/"
_ModelLike = str | Path | onnx.ModelProto | ModelFile


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


def _inferred_ranks(model: onnx.ModelProto, name: str) -> dict[str, int]:
    """The ranks ONNX shape inference gives the graph outputs that declare no shape (none where
    inference fails: a model of custom ops, one over protobuf's 2 GB).

    Raises:
        ModelError: a model that would abort the inference, and the process
            (:func:`~ort_layouts.models.extract.refuse_aborting_inference`; ``name`` names it)."""
    refuse_aborting_inference(model, name)
    try:
        inferred = shape_inference.infer_shapes(model)
    except Exception:  # onnx raises InferenceError, ValueError, EncodeError...
        return {}
    return {v.name: rank for v in (*inferred.graph.value_info, *inferred.graph.output)
            if (rank := _rank(v)) is not None}


def _why_no_rank(value: onnx.ValueInfoProto) -> str:
    if not value.type.HasField("tensor_type"):
        kind = value.type.WhichOneof("value") or "no type"
        return f"{value.name!r} is not a tensor ({kind.replace('_type', '')}); only tensors of rank >= 3 " \
               "have a channel axis to move"
    return f"the shape of {value.name!r} is not declared in the model and ONNX shape inference cannot " \
           "compute it, so its channel axis is unknown; declare its shape in the model"


def _owns(graph: onnx.GraphProto, name: str) -> bool:
    """Whether the subgraph ``graph`` has a value ``name`` of its own: an input, an initializer
    or a node's output. ONNX Runtime reads ``name`` everywhere in it, and in the graphs inside
    it, as that value, never as the outer one it shadows (ONNX's checker lets an input or an
    initializer shadow any outer value, and a node output one that the outer graph makes only
    after the node that holds the subgraph, such as that node's own output)."""
    return (any(v.name == name for v in graph.input) or any(t.name == name for t in graph.initializer)
            or any(t.values.name == name for t in graph.sparse_initializer)
            or any(name in node.output for node in graph.node))


def _rename(graph: onnx.GraphProto, old: str, new: str, *, outputs: bool = False) -> None:
    """Rename tensor ``old`` to ``new`` in every node and value_info entry of ``graph`` (in its
    outputs too where ``outputs``) and of the graphs its nodes hold, at any depth, outputs
    included, but for a subgraph that has an ``old`` of its own (:func:`_owns`: a Loop body's
    input, a branch's initializer or node output): it and the graphs inside it read that one."""
    for value in (*graph.value_info, *(graph.output if outputs else ())):
        if value.name == old:
            value.name = new
    for node in graph.node:
        for names in (node.input, node.output):
            for i, name in enumerate(names):
                if name == old:
                    names[i] = new
        for _, sub in subgraphs(node):
            if not _owns(sub, old):
                _rename(sub, old, new, outputs=True)


def _passthrough(name: str) -> str:
    return (f"{name!r} is both a graph input and a graph output (the output is that input itself), so "
            "it cannot be converted: a Transpose between them would need a second tensor of that "
            "name; valid: the model's other inputs and outputs (name them with --name)")


def _all_names(graph: onnx.GraphProto) -> set[str]:
    """Every name of ``graph`` and of the graphs its nodes hold (If's branches, Loop's and Scan's
    bodies, at any depth): ONNX keeps one value namespace across a graph and the graphs inside
    it, so a new name must be new to all of them."""
    names: set[str] = set()
    for step in walk(graph):
        if step.node is None:
            g = step.graph
            names.update(v.name for v in (*g.input, *g.output, *g.value_info))
            names.update(t.name for t in g.initializer)
            names.update(t.values.name for t in g.sparse_initializer)  # one a node reads or none does
            continue
        names.update(step.node.input)
        names.update(step.node.output)
        names.add(step.node.name)
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


def _boundary_layout(node: onnx.NodeProto, name: str, side: str, rank: int | None) -> str | None:
    """The layout an earlier conversion's boundary Transpose ``node`` gave the graph input or
    output ``name`` (``side``: "input" or "output"): what its doc string says
    (``input 'x': NHWC at the boundary, ...``, ``output 'y': to NHWC at the boundary``), else
    what its perm says (rank >= 4 only: at rank 3 both directions are (0, 2, 1)); None when
    neither tells."""
    lead = f"{side} {name!r}: " + ("to " if side == "output" else "")
    if node.doc_string.startswith(lead):
        word = node.doc_string[len(lead):].split(" ", 1)[0]
        if word in LAYOUTS:
            return word
    if rank is None or rank < 4:
        return None
    perm = _perm_of(node) if any(a.name == "perm" for a in node.attribute) else None
    # an input's Transpose turns the boundary layout back into the graph's; an output's, the
    # graph's into the boundary layout
    last, first = _channels_last_perm(rank), _channels_first_perm(rank)
    if perm == (first if side == "input" else last):
        return "NHWC"
    if perm == (last if side == "input" else first):
        return "NCHW"
    return None


def _earlier_layouts(graph: onnx.GraphProto, inputs: Sequence[onnx.ValueInfoProto],
                     outputs: Sequence[onnx.ValueInfoProto], ranks: dict[str, int]
                     ) -> dict[str, tuple[str, str]]:
    """For each of ``inputs`` and ``outputs`` that an earlier conversion left at the boundary:
    (the layout it gave it, the name of its boundary Transpose). The outermost Transpose of a
    tensor converted more than once is the latest conversion's."""
    boundary = [n for n in graph.node if n.op_type == "Transpose" and n.name.startswith(_NODE_PREFIX)
                and len(n.input) == 1 and len(n.output) == 1]
    by_input = {n.input[0]: n for n in boundary}
    by_output = {n.output[0]: n for n in boundary}
    found: dict[str, tuple[str, str]] = {}
    for side, values, nodes in (("input", inputs, by_input), ("output", outputs, by_output)):
        for v in values:
            node = nodes.get(v.name)
            layout = None if node is None else _boundary_layout(node, v.name, side, ranks.get(v.name))
            if node is not None and layout is not None:
                found.setdefault(v.name, (layout, node.name))
    return found


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
        model: a path, a :class:`~ort_layouts.models.extract.ModelFile` read from one, or a
            ModelProto (not modified). A path's external data is not loaded:
            the converted model keeps the references, relative to the model's folder, so it
            must be saved in that folder (see :func:`external_data_files`).
        to: the layout the converted inputs and outputs get: "NHWC" or "NCHW".
        names: the inputs and outputs to convert (any rank >= 3); default: every rank-4 input
            (initializers excluded) and output. An output that declares no shape gets its rank
            from ONNX shape inference (and still declares none).
        inputs, outputs: whether to convert inputs and outputs (``names`` may name only
            those of the sides converted).

    Returns:
        A new ModelProto with the same input and output names, element types, doc strings and
        metadata; converted shapes are permuted, symbolic dimensions included.

    Raises:
        ModelError: a model that is no path, ModelFile or ModelProto (:func:`load_model`); an
            unknown layout or name; ``names`` given as one str or no iterable; a tensor that is
            both a graph input and a graph output (it cannot change its layout), with
            ``inputs`` or ``outputs`` alike; an output that is an initializer; a tensor that an
            earlier conversion (its ``ort_layouts.convert/`` boundary Transpose) already put in
            layout ``to`` (convert it back to the other layout, or name other tensors).
        ShapeError: a tensor named that is not a tensor, has rank < 3, or whose rank neither
            the model nor shape inference gives.
    """
    target = str(to).upper()
    if target not in LAYOUTS:
        raise ModelError(f"layout {to!r} is not a conversion target; valid: {list(LAYOUTS)}")
    named = list_argument(names, "names", "input and output names", ModelError, example="['image']",
                          of_str=True)
    source, name = load_model(model)  # external data stays where it is: only the boundary changes
    converted = onnx.ModelProto()
    converted.CopyFrom(source)
    graph = converted.graph
    initializers = {t.name for t in graph.initializer}
    graph_inputs = [v for v in graph.input if v.name not in initializers]
    ranks = {v.name: rank for v in (*graph_inputs, *graph.output) if (rank := _rank(v)) is not None}
    if outputs and any(v.name not in ranks and v.type.HasField("tensor_type") for v in graph.output):
        ranks = {**_inferred_ranks(source, name), **ranks}  # an output that declares no shape
    if named is None:
        chosen_in = [v for v in graph_inputs if inputs and ranks.get(v.name) == 4]
        chosen_out = [v for v in graph.output if outputs and ranks.get(v.name) == 4]
    else:
        wanted = list(dict.fromkeys(named or ()))
        valid = [v.name for v in graph_inputs if inputs] + [v.name for v in graph.output if outputs]
        missing = [n for n in wanted if n not in valid]
        if missing:
            what = {(True, True): "inputs or outputs", (True, False): "inputs (inputs only are converted)",
                    (False, True): "outputs (outputs only are converted)"}.get((inputs, outputs), "converted")
            raise ModelError(f"names {missing} are not graph {what}; valid: {valid}")
        chosen_in = [v for v in graph_inputs if v.name in wanted]
        chosen_out = [v for v in graph.output if v.name in wanted]
    for v in (*chosen_in, *chosen_out):
        rank = ranks.get(v.name)
        if rank is None:
            raise ShapeError(_why_no_rank(v))
        if rank < 3:
            raise ShapeError(f"{v.name!r} has rank {rank}; only tensors of rank >= 3 have a channel "
                             "axis to move")
    output_names = {v.name for v in graph.output}
    for v in chosen_in:
        if v.name in output_names:
            raise ModelError(_passthrough(v.name))
    input_names = {v.name for v in graph.input}
    for v in chosen_out:
        if v.name in initializers:
            raise ModelError(f"output {v.name!r} is an initializer; a constant output cannot be converted")
        if v.name in input_names:
            raise ModelError(_passthrough(v.name))
    _refuse_converted_again(graph, target, chosen_in, chosen_out, ranks,
                            graph_inputs if inputs else [], list(graph.output) if outputs else [])
    to_last = target == "NHWC"
    taken = _all_names(graph)
    head: list[onnx.NodeProto] = []
    tail: list[onnx.NodeProto] = []
    internal_infos: list[onnx.ValueInfoProto] = []
    for v in chosen_in:
        rank = ranks[v.name]
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
    done_out: dict[str, onnx.ValueInfoProto] = {}
    for v in chosen_out:
        if v.name in done_out:  # an output listed again: one Transpose makes it, each entry declares it
            v.CopyFrom(done_out[v.name])
            continue
        done_out[v.name] = v
        rank = ranks[v.name]
        boundary = _channels_last_perm(rank) if to_last else _channels_first_perm(rank)
        inner = _unique(f"{v.name}__{'nchw' if to_last else 'nhwc'}", taken)
        _rename(graph, v.name, inner)
        tail.append(helper.make_node(
            "Transpose", [inner], [v.name], name=_unique(f"{_NODE_PREFIX}{v.name}", taken),
            perm=list(boundary), doc_string=f"output {v.name!r}: to {target} at the boundary"))
        internal_infos.append(_renamed_info(v, inner))
        if _rank(v) is not None:  # an output that declares no shape keeps declaring none
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


def _refuse_converted_again(graph: onnx.GraphProto, target: str, chosen_in: Sequence[onnx.ValueInfoProto],
                            chosen_out: Sequence[onnx.ValueInfoProto], ranks: dict[str, int],
                            side_in: Sequence[onnx.ValueInfoProto],
                            side_out: Sequence[onnx.ValueInfoProto]) -> None:
    """Refuse to convert to ``target`` a tensor that an earlier conversion already put in
    ``target``: the graph behind it is in the other layout, so a second Transpose would
    scramble its axes (an NHWC [1, 8, 8, 3] read as NCHW becomes [1, 8, 3, 8]).

    Raises:
        ModelError: naming those tensors, their layout and boundary Transposes, and the valid
            choices: the other layout, or the other tensors of rank >= 3 of the sides converted.
    """
    earlier = _earlier_layouts(graph, chosen_in, chosen_out, ranks)
    again = {name: node for name, (layout, node) in earlier.items() if layout == target}
    if not again:
        return
    other = next(layout for layout in LAYOUTS if layout != target)
    every = _earlier_layouts(graph, side_in, side_out, ranks)
    rest = list(dict.fromkeys(v.name for v in (*side_in, *side_out)
                              if v.name not in again and every.get(v.name, ("",))[0] != target
                              and ranks.get(v.name, 0) >= 3))  # those with a channel axis
    names = list(again)
    it, are = ("it", "is") if len(names) == 1 else ("them", "are")
    others = f", or name other tensors (names, --name): {rest}" if rest else \
        "; the model has no other inputs or outputs to convert"
    raise ModelError(
        f"{names} {are} already {target}: an earlier ort_layouts conversion put {it} in {target} (boundary "
        f"Transpose {', '.join(repr(n) for n in again.values())}); converting to {target} again would "
        f"transpose {it} a second time; valid: convert {it} back to {other} (to={other!r}, --to {other})"
        f"{others}")


def _tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """The initializers and attribute tensors of a model's graph and of its subgraphs, then the
    attribute tensors of its model-local functions (a Constant's value), in :func:`walk`'s order
    (a graph's initializers as it is entered, a node's attribute tensors before the graphs it
    holds): every tensor ONNX's ``external_data_helper`` may find external."""
    for body in (model.graph, *model.functions):
        for step in walk(body):
            if step.node is None:
                if isinstance(step.graph, onnx.GraphProto):  # a function has no initializers
                    yield from step.graph.initializer
                continue
            for a in step.node.attribute:
                if a.HasField("t"):
                    yield a.t
                yield from a.tensors


def external_data_files(model: onnx.ModelProto) -> list[str]:
    """The external data files ``model``'s tensors refer to (relative to the model's folder),
    in order of first reference; [] for a model that keeps its data inline."""
    files = [external_location(t) for t in _tensors(model) if uses_external_data(t)]
    return list(dict.fromkeys(files))


def converted_tensors(model: _ModelLike, original: _ModelLike | None = None) -> list[str]:
    """The inputs and outputs a conversion changed, inputs first.

    Args:
        model: a model :func:`convert_layout` made.
        original: the model it was made from; only the boundary Transposes ``model`` adds to
            it count (those of an earlier conversion of ``original`` are part of it). Without
            it, every ``ort_layouts.convert/`` Transpose at ``model``'s boundary counts.
    """
    in_perms, out_perms = _boundary_perms(load_model(model)[0],
                                          None if original is None else load_model(original)[0])
    return [*in_perms, *out_perms]


# ---- checking ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class OutputComparison:
    """Bit-for-bit comparison of one output. Truthy when every byte matches.

    A tensor is compared byte for byte (NaN payloads included), a string tensor element by
    element (the same str or bytes; ``dtype`` "string"). A sequence is compared item by item,
    each as a tensor: its ``shape`` is (number of items,), its ``dtype`` "sequence<float32>",
    its counts are those of all its items, and ``first_mismatch_index`` starts with the item's
    index. An optional output without a value in both models is identical.
    """

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


def _perm_of(node: onnx.NodeProto) -> tuple[int, ...]:
    return next(tuple(int(a) for a in helper.get_attribute_value(a)) for a in node.attribute
                if a.name == "perm")


def _boundary_perms(model: onnx.ModelProto, original: onnx.ModelProto | None = None
                    ) -> tuple[dict[str, tuple[int, ...]], dict[str, tuple[int, ...]]]:
    """For each converted input, the perm that turns the converted model's input into the
    original's; for each converted output, the perm that turns the original's output into the
    converted model's.

    The boundary Transposes are the ``ort_layouts.convert/`` nodes ``model`` has and
    ``original`` lacks (all of them without ``original``); a chain of them at one input or
    output (a model converted more than once) composes into one perm, left out where it is
    the identity.
    """
    present = set() if original is None else {n.name for n in original.graph.node}
    added = [n for n in model.graph.node
             if n.op_type == "Transpose" and n.name.startswith(_NODE_PREFIX) and n.name not in present
             and len(n.input) == 1 and len(n.output) == 1]
    by_input = {n.input[0]: n for n in added}
    by_output = {n.output[0]: n for n in added}
    initializers = {t.name for t in model.graph.initializer}
    in_perms: dict[str, tuple[int, ...]] = {}
    out_perms: dict[str, tuple[int, ...]] = {}
    for v in model.graph.input:
        perm, name = None, v.name
        while v.name not in initializers and (node := by_input.get(name)) is not None:
            step = _perm_of(node)  # transpose(transpose(x, perm), step) == transpose(x, perm[step])
            perm = step if perm is None else tuple(perm[i] for i in step)
            name = node.output[0]
        if perm is not None and perm != tuple(range(len(perm))):
            in_perms[v.name] = perm
    for v in model.graph.output:
        steps, name = [], v.name
        while (node := by_output.get(name)) is not None:
            steps.append(_perm_of(node))
            name = node.input[0]
        perm = None
        for step in reversed(steps):  # from the original's output outwards
            perm = step if perm is None else tuple(perm[i] for i in step)
        if perm is not None and perm != tuple(range(len(perm))):
            out_perms[v.name] = perm
    return in_perms, out_perms


def _input_dtype(value: onnx.ValueInfoProto) -> np.dtype[Any]:
    """The numpy type of the check's random data for the graph input ``value``.

    Raises:
        ModelError: ``value`` is no tensor, or of an element type the check makes no data for.
    """
    if not value.type.HasField("tensor_type"):
        kind = (value.type.WhichOneof("value") or "no type").replace("_type", "")
        raise ModelError(f"input {value.name!r} is not a tensor ({kind}); the check makes random "
                         "data for tensor inputs only (valid: a model whose inputs are tensors)")
    elem_type = value.type.tensor_type.elem_type
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except KeyError:
        raise ModelError(f"input {value.name!r} has ONNX element type {elem_type}, which is no known "
                         "tensor element type; the check cannot make data for it") from None
    if dtype == np.bool_ or dtype.kind in "iu" or (dtype.kind == "f" and dtype.itemsize in (2, 4, 8)):
        return dtype
    name = onnx.TensorProto.DataType.Name(elem_type).lower()
    raise ModelError(f"input {value.name!r}: no random data for ONNX element type {elem_type} ({name}); "
                     "the check makes data for bool, integer and IEEE float inputs")


def check_limit_bytes(limit_bytes: object) -> int:
    """``limit_bytes`` (the bound of :func:`check_conversion`'s inputs) as an int.

    Raises:
        ArgumentError: it is no integer (a bool, a float, a str) or below 1, naming it and the
            valid values.
    """
    value: int | None = int(limit_bytes) if is_integer(limit_bytes) else None  # type: ignore[call-overload]
    if value is None or value < 1:
        shown = f"{limit_bytes!r:.80}" + ("" if value is not None else f" ({a_type(limit_bytes)})")
        raise ArgumentError(f"limit_bytes {shown} is not a number of bytes; valid: an integer >= 1 (default "
                            f"{CHECK_INPUT_LIMIT_IN_BYTES}, 1 GiB)")
    return value


def _size_text(size: int) -> str:
    """" (1 GiB)", " (64 MiB)": a size in whole GiB or MiB, as the bound's message adds it."""
    for unit, name in ((1 << 30, "GiB"), (_MIB, "MiB")):
        if size % unit == 0:
            return f" ({size // unit} {name})"
    return ""


def _check_input_size(shapes: dict[str, tuple[tuple[int, ...], np.dtype[Any]]], limit_bytes: int) -> None:
    """Refuse inputs whose random data would take over ``limit_bytes`` in all.

    Raises:
        ModelError: naming the input that takes the total over, its shape and type, and the bound.
    """
    total = 0
    for name, (shape, dtype) in shapes.items():
        size = math.prod(shape) * dtype.itemsize
        total += size
        if total > limit_bytes:
            before = f" ({total} with the inputs before it)" if total != size else ""
            raise ModelError(
                f"input {name!r} of shape {list(shape)} ({dtype}) takes {size} bytes of random data"
                f"{before}, over the check's bound of {limit_bytes} bytes{_size_text(limit_bytes)} for its "
                "inputs in all; valid: dims that keep the inputs within it (a symbolic dimension is 1 "
                "unless given), or a larger bound (limit_bytes; convert --check-limit-mib on the command "
                "line)")


def _random(rng: np.random.Generator, dtype: np.dtype[Any], shape: tuple[int, ...], name: str) -> np.ndarray:
    """Random data of ``dtype`` (:func:`_input_dtype`) for input ``name``, drawn in that type
    (float16 in float32): no float64 copy of the data.

    Raises:
        ModelError: the memory for it cannot be had (a bound raised past the machine's memory).
    """
    try:
        return _drawn(rng, dtype, shape)
    except MemoryError:
        raise ModelError(f"input {name!r} of shape {list(shape)} ({dtype}): the memory for its random data "
                         "cannot be had; valid: smaller dims, or a bound (limit_bytes, --check-limit-mib) "
                         "within the memory free") from None


def _drawn(rng: np.random.Generator, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
    if dtype == np.bool_:
        return rng.integers(0, 1, size=shape, dtype=np.bool_, endpoint=True)
    if dtype.kind == "f":
        if dtype.itemsize == 2:
            return rng.standard_normal(size=shape, dtype=np.float32).astype(dtype)
        return rng.standard_normal(size=shape, dtype=dtype.type)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, dtype=dtype, endpoint=True)


def _session(model: _ModelLike | bytes, proto: onnx.ModelProto, optimize: bool, what: str,
             beside: _ModelLike | None = None) -> Any:
    """An ONNX Runtime session of ``model``, ``proto`` being the model it is or holds or the
    bytes parse to: a file as it is (its external data read from its folder), a model's bytes
    as they are, a ModelProto serialized (the external data of those two read from the folder
    of ``beside``)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4  # ONNX Runtime's own error lines: its failures come as exceptions
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    path = None if isinstance(model, bytes) else model_path(model)
    folder = None if path is not None else _external_folder(proto, beside)
    if folder is not None:
        options.add_session_config_entry("session.model_external_initializers_file_folder_path", str(folder))
    try:
        source = str(path) if path is not None else model if isinstance(model, bytes) else \
            serialized_model(proto, what)
        return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    except ModelError:
        raise
    except Exception as e:
        raise ModelError(f"ONNX Runtime cannot load the {what}: {' '.join(str(e).split())}") from e


def serialized_model(model: onnx.ModelProto, what: str) -> bytes:
    """``model``'s bytes.

    Raises:
        ModelError: it is over protobuf's 2 GB (``what`` names it: "converted model").
    """
    try:
        data: bytes = model.SerializeToString()
    except Exception as e:  # protobuf's EncodeError: a message over 2 GB
        raise ModelError(f"the {what} cannot be serialized ({type(e).__name__}: {e}); a model over "
                         "protobuf's 2 GB must keep its weights in external data") from e
    return data


def _run(session: Any, feeds: dict[str, np.ndarray], what: str) -> list[Any]:
    try:
        return list(session.run(None, feeds))
    except Exception as e:  # onnxruntime's Fail, InvalidArgument, RuntimeException...
        raise ModelError(f"ONNX Runtime cannot run the {what} on the check's random data: "
                         f"{' '.join(str(e).split())}") from e


def _dtype_text(array: np.ndarray) -> str:
    """``array``'s element type as a comparison names it: numpy's name, "string" for strings."""
    return "string" if array.dtype == object else str(array.dtype)


def _compare(name: str, expected: np.ndarray, actual: np.ndarray) -> OutputComparison:
    """Two tensors compared byte for byte (NaN payloads included), strings element by element."""
    shape = tuple(int(n) for n in np.shape(actual))
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return OutputComparison(name, shape, _dtype_text(actual), int(np.size(actual)), int(np.size(actual)),
                                None, f"expected {_dtype_text(expected)} {list(expected.shape)}, got "
                                      f"{_dtype_text(actual)} {list(actual.shape)}")
    if expected.dtype == object:  # strings (ONNX Runtime gives str elements), compared one by one
        bad = np.asarray(expected != actual, dtype=np.bool_)
    else:
        item = expected.dtype.itemsize
        a = np.ascontiguousarray(expected).view(np.uint8).reshape(*expected.shape, item) if expected.size \
            else np.zeros((*expected.shape, item), np.uint8)
        b = np.ascontiguousarray(actual).view(np.uint8).reshape(*actual.shape, item) if actual.size \
            else np.zeros((*actual.shape, item), np.uint8)
        bad = np.any(a != b, axis=-1)
    count = int(bad.sum())
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if count else None
    return OutputComparison(name, shape, _dtype_text(actual), int(expected.size), count, first)


def _kind(value: object) -> str:
    """What ONNX Runtime gave for an output, as a comparison names it."""
    if value is None:
        return "an optional without a value"
    if isinstance(value, np.ndarray):
        return f"a tensor ({_dtype_text(value)} {list(value.shape)})"
    if isinstance(value, list):
        return f"a sequence of {len(value)}"
    return f"a map ({a_type(value)})" if isinstance(value, dict) else a_type(value)


def _compare_sequence(name: str, expected: list[Any], actual: list[Any]) -> OutputComparison:
    """Two sequences of tensors compared item by item, each as :func:`_compare` compares tensors."""
    for seq in (expected, actual):
        for k, item in enumerate(seq):
            if not isinstance(item, np.ndarray):
                raise ModelError(f"output {name!r}: item {k} of the sequence is {_kind(item)}, which the "
                                 "check cannot compare; valid: tensors of numbers, bool or strings, and "
                                 "sequences of them")
    types = list(dict.fromkeys(_dtype_text(item) for item in actual))
    dtype = f"sequence<{types[0]}>" if len(types) == 1 else "sequence"
    total = sum(int(item.size) for item in actual)
    if len(expected) != len(actual):
        return OutputComparison(name, (len(actual),), dtype, total, total, None,
                                f"expected a sequence of {len(expected)} tensors, got {len(actual)}")
    count, first, messages = 0, None, []
    for k, (e, a) in enumerate(zip(expected, actual, strict=True)):
        item = _compare(name, e, a)
        count += item.mismatch_count
        if first is None and item.first_mismatch_index is not None:
            first = (k, *item.first_mismatch_index)
        if item.message:
            messages.append(f"item {k}: {item.message}")
    return OutputComparison(name, (len(actual),), dtype, total, count, first, "; ".join(messages))


def _compare_output(name: str, expected: object, actual: object, perm: tuple[int, ...] | None
                    ) -> OutputComparison:
    """The original's output ``expected`` (transposed by ``perm`` where the output was
    converted) and the converted model's ``actual`` compared: tensors bit for bit (strings
    element by element), sequences item by item, optionals without a value alike.

    Raises:
        ModelError: an output the check cannot compare (a map, a sequence of maps), naming it,
            what it is, and what the check compares.
    """
    if isinstance(expected, np.ndarray) and isinstance(actual, np.ndarray):
        moved = np.ascontiguousarray(np.transpose(expected, perm)) if perm else expected
        return _compare(name, moved, actual)
    if isinstance(expected, list) and isinstance(actual, list):
        return _compare_sequence(name, expected, actual)
    if expected is None and actual is None:
        return OutputComparison(name, (), "optional without a value", 0, 0, None)
    for value in (expected, actual):
        if value is not None and not isinstance(value, (np.ndarray, list)):
            raise ModelError(f"output {name!r} is {_kind(value)}, which the check cannot compare; "
                             "valid: tensors of numbers, bool or strings, sequences of them, optionals")
    if isinstance(actual, np.ndarray):
        shape, dtype, size = tuple(int(n) for n in actual.shape), _dtype_text(actual), int(actual.size)
    elif isinstance(actual, list):
        shape, dtype, size = (len(actual),), "sequence", 0
    else:
        shape, dtype, size = (), "optional without a value", 0
    return OutputComparison(name, shape, dtype, size, size, None,
                            f"expected {_kind(expected)}, got {_kind(actual)}")


def _parsed(data: bytes, what: str) -> tuple[onnx.ModelProto, str]:
    """The ModelProto a model's bytes hold, and the name of its source (its graph's name).

    Raises:
        ModelError: bytes that are no ONNX model (no protobuf message, or one without an IR
            version, an opset import or a graph).
    """
    try:
        model = onnx.ModelProto.FromString(data)
    except Exception as e:  # protobuf's DecodeError
        raise ModelError(f"the {what} (its bytes) is not an ONNX model: {e}") from e
    check_is_model(model, f"the {what} (its bytes)")
    return model, model.graph.name or "<memory>"


def check_conversion(
    original: _ModelLike,
    converted: _ModelLike | bytes,
    *,
    seed: int = 0,
    dims: dict[str, int] | None = None,
    optimize: bool = False,
    limit_bytes: int = CHECK_INPUT_LIMIT_IN_BYTES,
) -> ConversionCheck:
    """Run both models on the CPU EP on the same random data and compare outputs bit for bit.

    The boundary Transposes (named ``ort_layouts.convert/...``) the converted model adds to the
    original say how its inputs map to the original's and how the original's outputs map to its
    own; those of an earlier conversion, which the original holds too, are part of both models.

    Args:
        original, converted: paths, or the :class:`~ort_layouts.models.extract.ModelFile` read
            from them (ONNX Runtime runs the file, its external data read from its folder), or
            ModelProtos (a converted one whose external data is not loaded, as
            :func:`convert_layout` leaves it, gets it from the folder of ``original``).
            ``converted`` may also be the converted model's bytes (:func:`serialized_model`,
            e.g. to write the very bytes that were checked): ONNX Runtime runs them and the
            check reads the model's inputs, outputs and boundary Transposes from them, so the
            model is not serialized again.
        seed: seed of the ``numpy.random.Generator`` that makes the inputs.
        dims: values for symbolic input dimensions (default 1 for each), integers >= 1; each
            must be a dim_param of the model's inputs.
        optimize: run with ONNX Runtime's graph optimizations (off by default, so each model
            runs exactly its own nodes).
        limit_bytes: the most bytes the random inputs take in all, each made in its own element
            type (default :data:`CHECK_INPUT_LIMIT_IN_BYTES`, 1 GiB); an integer >= 1.

    Raises:
        ArgumentError: ``limit_bytes`` is no integer >= 1 (before anything is read).
        ModelError: an input that is no tensor or has no random data (bfloat16, float8,
            string), inputs over ``limit_bytes`` in all (the message names the input that
            takes them over, its shape and the bound), memory for them that cannot be had,
            ``converted`` bytes that are no ONNX model, ONNX Runtime fails to load or to run
            either model (the message names the model and ONNX Runtime's reason), or an output
            the check cannot compare (a map, a sequence of maps: the message names it).
    """
    check_seed(seed)
    limit = check_limit_bytes(limit_bytes)
    pins = check_dims(dims)
    orig, orig_name = load_model(original)
    conv, conv_name = _parsed(converted, "converted model") if isinstance(converted, bytes) else \
        load_model(converted)
    in_perms, out_perms = _boundary_perms(conv, orig)
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
    inputs = {v.name: (tuple(int(d.dim_value) if d.HasField("dim_value") else int(pins.get(d.dim_param, 1))
                             for d in v.type.tensor_type.shape.dim), _input_dtype(v))
              for v in conv.graph.input if v.name not in initializers}
    _check_input_size(inputs, limit)  # before any is made
    for name, (shape, dtype) in inputs.items():  # in the graph's order, as the seed's data was drawn
        data = _random(rng, dtype, shape, name)
        feeds_conv[name] = data
        perm = in_perms.get(name)
        feeds_orig[name] = np.ascontiguousarray(np.transpose(data, perm)) if perm else data
    what_orig, what_conv = f"original model {orig_name!r}", f"converted model {conv_name!r}"
    got_orig = _run(_session(original, orig, optimize, what_orig), feeds_orig, what_orig)
    got_conv = _run(_session(converted, conv, optimize, what_conv, original), feeds_conv, what_conv)
    names = [o.name for o in conv.graph.output]
    results = []
    for name, a, b in zip(names, got_orig, got_conv, strict=True):
        results.append(_compare_output(name, a, b, out_perms.get(name)))
    return ConversionCheck(all(results), tuple(results), in_perms, out_perms)


def _external_folder(model: onnx.ModelProto, beside: _ModelLike | None) -> Path | None:
    """Where ONNX Runtime reads the external data of a ModelProto (or its bytes) whose external
    data is not loaded (as :func:`convert_layout` leaves it): the folder of ``beside`` (the
    original model that a converted one keeps the references of); None for a proto without
    external data, or no file to read beside. (A file's external data ONNX Runtime reads from
    its folder.)"""
    if not external_data_files(model):
        return None
    path = None if beside is None else model_path(beside)
    return None if path is None else path.resolve().parent
