"""Find the layout operations of a real ONNX model and describe each one as DirectML sees it.

:func:`extract` loads a model, infers its shapes (with dynamic dimensions pinned by the
caller), and lists every layout operation of its main graph and subgraphs (model-local
functions are counted, :func:`layout_nodes_in_functions`, not read) with the DirectML buffer
tensor descriptors the DML execution provider builds for it:

- Transpose: ELEMENT_WISE_IDENTITY, input descriptor with permuted strides, packed output.
- Expand: ELEMENT_WISE_IDENTITY, input broadcast with stride 0, packed output.
- Pad: PADDING1 after the EP's coercion to 4 dimensions (:meth:`PaddingOp.from_onnx`).
- Reshape, Flatten, Squeeze, Unsqueeze: the same buffer read with new sizes, packed.
- DepthToSpace, SpaceToDepth: a reshape + transpose + reshape chain; the middle step is one
  6-dimensional strided view of the input.
- Slice: SLICE1 over the input window the EP computes (offsets and sizes in input elements,
  signed strides), rank kept; windows that differ from ONNX's result are flagged.

Concat, Split and Tile are read too (JOIN, SPLIT and TILE), and Identity with the reshapes.
Each :class:`LayoutOp` carries flags for what DirectML cannot take as is. A node of any of these
ops (``CASE_OPS``) with static shapes and constant parameters turns into a validation case
(:meth:`LayoutOp.to_case`, :func:`model_cases`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference
from onnx.external_data_helper import load_external_data_for_tensor, uses_external_data

from ort_layouts._errors import (
    ArgumentError,
    DataTypeError,
    DescriptorError,
    ModelError,
    NotExpressibleError,
    ShapeError,
    a_type,
    path_argument,
)
from ort_layouts.descriptors.buffer_tensor import (
    BufferTensorDesc,
)
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import INT64_MAX
from ort_layouts.engine.providers import CPU, cpu_kernel_versions, runtime_version
from ort_layouts.engine.selection import check_dims, resolve_value_kinds
from ort_layouts.engine.suite import list_argument
from ort_layouts.models.walk import Body, node_name, walk
from ort_layouts.operators.case import VALUE_KINDS, Case, check_seed, check_value_kind
from ort_layouts.operators.onnx_nodes import (
    PIN_ADVICE,
    Flagged,
    Graph,
    attrs,
    check_inputs_present,
    constant_value,
    external_location,
    is_constant_node,
    schema_version,
    static,
)
from ort_layouts.operators.registry import CASE_OPS, LAYOUT_OPS, case_opsets, check_op_type, operator_for_type
from ort_layouts.reference.buffers import is_nibble

__all__ = [
    "LAYOUT_OPS",
    "LayoutOp",
    "ModelFile",
    "OpCoverage",
    "cases_of",
    "check_is_model",
    "check_model_file",
    "coverage_of",
    "extract",
    "format_layout_op",
    "functions_line",
    "layout_nodes_in_functions",
    "load_model",
    "format_coverage",
    "model_cases",
    "model_coverage",
    "model_path",
    "parse_dims",
    "read_model",
]

# ---- loading -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class ModelFile:
    """A model file read once (:func:`read_model`): its ModelProto, external data not loaded, and
    its path as given. Every function here that takes a model path takes one instead, and reads
    nothing again: the path still names the model in case origins and messages, and its folder
    is still where external data is read from (ONNX Runtime runs the file itself).

    ``proto`` is shared, not copied: the functions that take a ModelFile leave it as it is.
    """

    proto: onnx.ModelProto
    path: str


_ModelLike = str | Path | onnx.ModelProto | ModelFile


def read_model(path: str | Path) -> ModelFile:
    """Read a model file once, external data left where it is (:func:`load_model`).

    Raises:
        ModelError: as :func:`load_model`.
    """
    proto, source = load_model(path)
    return ModelFile(proto, source)


def model_path(model: _ModelLike) -> Path | None:
    """The file a model was read from (its external data is read from the file's folder); None
    for a ModelProto."""
    if isinstance(model, onnx.ModelProto):
        return None
    return Path(model.path if isinstance(model, ModelFile) else model)


def load_model(model: _ModelLike, *, load_external_data: bool = False) -> tuple[onnx.ModelProto, str]:
    """Load a model from a path (or take a ModelProto or a :class:`ModelFile`, read before) and
    name its source for case origins.

    Weights stored as external data are left unloaded unless asked: layouts only need shapes and
    the small constant inputs (perm, shape, pads).

    Returns:
        (model, source): source is the path as given, or the graph name for a ModelProto.

    Raises:
        ModelError: ``model`` is none of these (None, an int), or its file cannot be read or
            holds no ONNX model (:func:`check_model_file`).
    """
    if isinstance(model, onnx.ModelProto):
        source = model.graph.name or "<memory>"
        check_is_model(model, f"the ModelProto {source!r}")
        return model, source
    if isinstance(model, ModelFile):
        return model.proto, model.path
    path = check_model_file(model)
    try:
        loaded = onnx.load(str(path), load_external_data=load_external_data)
    except Exception as e:  # onnx raises DecodeError, OSError, ValueError...
        raise ModelError(f"cannot load ONNX model {str(path)!r}: {e}") from e
    check_is_model(loaded, repr(str(path)))
    return loaded, str(model)


def check_model_file(model: str | Path) -> Path:
    """The path of a model file that exists, is a regular file and is not empty (0 bytes).

    A file whose size is 0 is read before it is called empty: one of ``/proc`` has content
    all the same.

    Raises:
        ModelError: ``model`` is no path (None, an int: naming its type and what is valid),
            names no such file, naming the path and what it is instead, or a file over
            protobuf's 2 GiB limit (:data:`PROTOBUF_LIMIT_BYTES`).
    """
    path = path_argument(model, "model", "the path of an .onnx file (a str or os.PathLike), a ModelFile "
                         "(read_model) or an onnx.ModelProto", ModelError)
    if path.is_dir():
        raise ModelError(f"model {str(path)!r} is a directory, not an .onnx file")
    if not path.exists():
        raise ModelError(f"model file {str(path)!r} does not exist")
    if not path.is_file():
        raise ModelError(f"model {str(path)!r} is not a regular file")
    size = path.stat().st_size
    if size == 0 and not _has_content(path):
        raise ModelError(f"model file {str(path)!r} is empty (0 bytes), not an ONNX model")
    if size > PROTOBUF_LIMIT_BYTES:  # protobuf would read a part of it, as a "corrupt" message
        raise ModelError(
            f"model file {str(path)!r} is {size} bytes, over protobuf's limit of {PROTOBUF_LIMIT_BYTES} "
            "(2 GiB - 1) for one ModelProto, so it is no ONNX model as saved; valid: a model whose "
            "large tensors are external data (onnx.save(model, path, save_as_external_data=True))")
    return path


# the most bytes protobuf reads as one message (ONNX saves larger tensors as external data)
PROTOBUF_LIMIT_BYTES = (1 << 31) - 1


def _has_content(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return bool(f.read(1))
    except OSError as e:
        raise ModelError(f"cannot read model file {str(path)!r}: {e.strerror or e}") from e


def check_is_model(model: onnx.ModelProto, source: str) -> None:
    """Refuse bytes that parsed as a protobuf message but are no ONNX model: one has an IR
    version, an opset import and a graph (protobuf reads many non-ONNX files as a message of
    unknown or default fields).

    Raises:
        ModelError: "``source`` is not an ONNX model: it has no ..." (``source`` as the message
            names it: a quoted path, "the converted model (its bytes)").
    """
    missing = [what for what, present in (("ir_version", model.ir_version > 0),
                                          ("opset_import", len(model.opset_import) > 0),
                                          ("graph", model.HasField("graph"))) if not present]
    if missing:
        raise ModelError(f"{source} is not an ONNX model: it has no {', '.join(missing)}")


def parse_dims(items: Sequence[str] | None) -> dict[str, int]:
    """Parse ``["batch=1", "seq=8"]`` into ``{"batch": 1, "seq": 8}``.

    Raises:
        ShapeError: an item that is not NAME=VALUE with an integer VALUE from 1 to int64's
            largest, or a name given twice.
    """
    dims: dict[str, int] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        try:
            number = int(value)
        except ValueError:
            number = -1
        if not sep or not name.strip() or not 1 <= number <= INT64_MAX:
            raise ShapeError(f"dimension {item!r} is not NAME=VALUE with 1 <= VALUE <= {INT64_MAX} (an "
                             "ONNX dimension is an int64; e.g. batch=1)")
        key = name.strip()
        if key in dims:
            raise ShapeError(f"dimension {key!r} is given twice ({key}={dims[key]} and {item}); give each "
                             "dimension once")
        dims[key] = number
    return dims


def _pin_inputs(model: onnx.ModelProto, dims: dict[str, int]) -> onnx.ModelProto:
    pinned = onnx.ModelProto()
    pinned.CopyFrom(model)
    for value in pinned.graph.input:
        for d in value.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in dims:
                d.dim_value = dims[d.dim_param]
    return pinned


def _dim_params(model: onnx.ModelProto) -> set[str]:
    """The dim_params of the tensors the main graph and its subgraphs declare (a Scan body's
    input names dimensions of its own, which a flag of a node there suggests pinning)."""
    return {d.dim_param for step in walk(model.graph) if step.node is None
            for v in (*step.graph.input, *step.graph.output, *step.graph.value_info)
            for d in v.type.tensor_type.shape.dim if d.HasField("dim_param")}


def _forget_dims(inferred: onnx.ModelProto, invented: set[str]) -> None:
    """Make the dimensions shape inference named itself (``unk__0``, for one it could not
    compute: the length of a NonZero's output) unknown in ``inferred``: they are no dim_params
    of the model, and a value pinned to such a name would stand for nothing the model says."""
    if not invented:
        return
    for step in walk(inferred.graph):
        if step.node is None:
            for v in (*step.graph.input, *step.graph.output, *step.graph.value_info):
                for d in v.type.tensor_type.shape.dim:
                    if d.HasField("dim_param") and d.dim_param in invented:
                        d.ClearField("dim_param")


# the Slice steps ONNX's data propagation survives: onnx 1.23's crashes the process (a
# segmentation fault, or its memory without bound) on a step of 2^31 or more, or of -2^31 - 1 or
# less (-2^32 takes its memory without bound, -(2^63 - 1) is a segmentation fault), which plain
# shape inference and ONNX Runtime take
_DATA_PROP_MAX_STEP = (1 << 31) - 1
_DATA_PROP_MIN_STEP = -(1 << 31)


def _crashes_data_propagation(model: onnx.ModelProto) -> bool:
    """Whether ``model`` holds a Slice whose steps data propagation may crash on: constant
    steps (an initializer, or a Constant node's value, in its graph or an outer one) outside
    ``_DATA_PROP_MIN_STEP`` .. ``_DATA_PROP_MAX_STEP``, or steps computed by other nodes (a Shape's
    dimension of 2^31, say), whose values only the propagation itself would know."""
    constants: dict[str, np.ndarray | onnx.TensorProto | None] = {}
    inputs: set[str] = set()
    slices: list[str] = []
    for step in walk(model.graph):
        node = step.node
        if node is None:
            constants.update((t.name, t) for t in step.graph.initializer)
            inputs.update(v.name for v in step.graph.input)
        elif is_constant_node(node):
            constants[node.output[0]] = constant_value(node)
        elif node.op_type == "Slice" and node.domain in ("", "ai.onnx") and len(node.input) > 4:
            slices.append(node.input[4])
    for name in slices:
        if name and name not in constants and name not in inputs:  # computed: its values are not known here
            return True
        value = constants.get(name)
        if isinstance(value, onnx.TensorProto):
            if value.data_location == onnx.TensorProto.EXTERNAL:
                continue
            try:
                value = numpy_helper.to_array(value)
            except Exception:  # a tensor that cannot be read: the readers say so
                continue
        if (value is not None and value.dtype.kind in "iu" and value.size
                and (int(value.max()) > _DATA_PROP_MAX_STEP or int(value.min()) < _DATA_PROP_MIN_STEP)):
            return True
    return False


def _aborts_inference(model: onnx.ModelProto) -> str:
    """What of ``model`` would abort ONNX's shape inference, and the process with it (a C++
    assertion, no exception): a Split whose ``num_outputs`` is not its number of outputs (onnx
    1.23 reads past its list of sizes; ONNX Runtime aborts on such a model too); "" for none."""
    for step in walk(model.graph):
        node = step.node
        if node is None or node.op_type != "Split" or node.domain not in ("", "ai.onnx"):
            continue
        count = next((a.i for a in node.attribute  # (one of another type is flagged "attribute:")
                      if a.name == "num_outputs" and a.type == onnx.AttributeProto.INT), None)
        if count is not None and count != len(node.output):
            return (f"Split node {node.name or '(unnamed)'!r} has num_outputs {count} and {len(node.output)} "
                    f"outputs {list(node.output)}; valid: num_outputs equal to its number of outputs")
    return ""


def refuse_aborting_inference(model: onnx.ModelProto, source: str) -> None:
    """Refuse, before any ONNX shape inference runs on it, a model that would abort it, and the
    process with it (:func:`_aborts_inference`); ``source`` (the path as given) names it.

    Raises:
        ModelError: naming the node and what is valid."""
    aborts = _aborts_inference(model)
    if aborts:
        raise ModelError(f"model {source!r} cannot be read: {aborts} (ONNX's shape inference and ONNX "
                         "Runtime abort on it)")


def _infer(model: onnx.ModelProto, source: str) -> onnx.ModelProto:
    """``model`` with its shapes inferred; ``source`` (the path as given) names it in the error.
    Data propagation (shapes computed from Shape nodes) is left out of a model it would crash
    (:func:`_crashes_data_propagation`); a model that would abort the inference itself
    (:func:`_aborts_inference`) is refused.

    A shape the model declares for a tensor inside a graph (its ``value_info``) is a hint: where
    inference without those declarations gives the tensor a whole shape, that shape is the
    one kept (a stale declaration would otherwise win, and every shape after it follow it;
    ONNX Runtime infers too, and warns). A declaration stays where inference alone gives
    nothing whole (after a node it has no schema for).

    Raises:
        ModelError: the inference failed, or would abort the process."""
    refuse_aborting_inference(model, source)
    _refuse_names_defined_twice(model, source)
    inferred = _infer_as_declared(model, source)
    if not any(step.graph.value_info for step in walk(model.graph) if step.node is None):
        return inferred
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    for step in walk(bare.graph):
        if step.node is None:
            del step.graph.value_info[:]
    try:
        fresh = _infer_as_declared(bare, source)
    except ModelError:
        return inferred
    named = _dim_params(model)
    graphs = [step.graph for step in walk(inferred.graph) if step.node is None]
    fresh_graphs = [step.graph for step in walk(fresh.graph) if step.node is None]
    for graph, fresh_graph in zip(graphs, fresh_graphs, strict=True):
        whole = {v.name: v for v in fresh_graph.value_info if _whole_shape(v, named)}
        for value in graph.value_info:
            found = whole.pop(value.name, None)
            if found is not None:
                value.CopyFrom(found)
        graph.value_info.extend(whole.values())
    return inferred


def _refuse_names_defined_twice(model: onnx.ModelProto, source: str) -> None:
    """Refuse a graph in which a tensor is written twice: by two nodes, or by a node and as a
    graph input or initializer (ONNX graphs are single assignment; ONNX Runtime refuses such a
    model, "Duplicate definition of name").

    Raises:
        ModelError: naming the tensor, the graph and what writes it."""
    for step in walk(model.graph):
        if step.node is not None:
            continue
        writers: dict[str, str] = {v.name: "a graph input" for v in step.graph.input}
        writers.update((t.name, "an initializer") for t in step.graph.initializer if t.name not in writers)
        for index, node in enumerate(step.graph.node):
            here = f"node {step.path}{node_name(node, index)}"
            for name in node.output:
                if not name:
                    continue
                if name in writers:
                    raise ModelError(
                        f"model {source!r} is not valid: tensor {name!r} is written by {writers[name]} and "
                        f"by {here}; each tensor of an ONNX graph is written once (ONNX Runtime "
                        "refuses it: \"Duplicate definition of name\")")
                writers[name] = here


def _whole_shape(value: onnx.ValueInfoProto, named: set[str]) -> bool:
    """Whether ``value`` has a shape whose every dimension is a value or one of the model's
    dim_params ``named`` (not a name the inference made up for a dimension it could not
    compute)."""
    tensor = value.type.tensor_type
    return tensor.HasField("shape") and all(
        d.HasField("dim_value") or (d.dim_param != "" and d.dim_param in named) for d in tensor.shape.dim)


def _infer_as_declared(model: onnx.ModelProto, source: str) -> onnx.ModelProto:
    """:func:`_infer`'s inference of ``model`` as it is, declared shapes included."""
    try:
        if _crashes_data_propagation(model):
            return shape_inference.infer_shapes(model)
        return shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # data propagation is stricter on some old models: fall back to plain
        try:
            return shape_inference.infer_shapes(model)
        except Exception as e:
            raise ModelError(f"shape inference failed on model {source!r}: {e}") from e


# ---- the result ----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class LayoutOp:
    """One layout operation of a model, with its DirectML description.

    Attributes:
        node_name: the node's name (``"<op_type>_<index>"`` when the node has none).
        op_type: the ONNX operator ("Transpose", "Expand", "Pad", "Reshape", ...).
        inputs, outputs: the node's input and output tensor names.
        data_type: DirectML data type of the data tensor; None when it has none.
        input_shape, output_shape: static shapes; None when a dimension is left dynamic.
        params: the operator's parameters as read (perm, target_shape, pads, mode, axes, ...).
        dml_operator: the DirectML operator description (``to_dict`` of the operator); None
            when the op could not be described (see ``flags``).
        descriptors: named buffer tensor descriptors ("input", "output", and for chains the
            intermediate steps).
        flags: what DirectML cannot take as is, each ``"tag: explanation"``.
        stride_view: whether the op is one strided read of its input (Transpose, Expand and the
            reshapes; not Pad, Slice, Concat, Split, Tile, DepthToSpace or SpaceToDepth).
        origin: ``"model:PATH#NODE"``.
        opset: the model's ONNX opset (its ``ai.onnx`` import; 0 when it has none): the node's
            case is built at it, so that a run resolves the node to the version the model does.

    ``params``, ``dml_operator`` and ``descriptors`` are read-only: mappings are
    ``MappingProxyType`` and lists tuples, all the way down (an op compares equal by them, so
    a change would make another op of it); :meth:`to_dict` gives them back as JSON-ready dicts
    and lists, and a pickled op unpickles equal.
    """

    node_name: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    data_type: DataType | None
    input_shape: tuple[int, ...] | None
    output_shape: tuple[int, ...] | None
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict, hash=False)
    dml_operator: Mapping[str, Any] | None = dataclasses.field(default=None, hash=False)
    descriptors: Mapping[str, BufferTensorDesc] = dataclasses.field(default_factory=dict, hash=False)
    flags: tuple[str, ...] = ()
    stride_view: bool = True
    origin: str = ""
    opset: int = 0

    def __post_init__(self) -> None:
        for name in _FROZEN_FIELDS:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _frozen(value))

    def __getstate__(self) -> list[Any]:
        """The fields, mappings as plain dicts (a MappingProxyType does not pickle)."""
        return [_thawed(getattr(self, f.name)) if f.name in _FROZEN_FIELDS else getattr(self, f.name)
                for f in dataclasses.fields(self)]

    def __setstate__(self, state: list[Any]) -> None:
        for f, value in zip(dataclasses.fields(self), state, strict=True):
            object.__setattr__(self, f.name, value)
        self.__post_init__()

    def to_case(self, *, values: str = "random", seed: int = 0) -> Case | None:
        """The validation case of a node of a validating operator (``CASE_OPS``) with static
        shapes and constant parameters (real shape and data type; rank 0 too, where the
        operator takes it), built at the model's opset; None for anything else, for a node ONNX
        Runtime refuses (``REFUSED_TAGS``), and for one whose case cannot be built at the
        model's opset (flagged ``opset``). A parameter read from an overridable graph input
        (flagged ``overridable-input``) makes the case with its default.

        Raises:
            ShapeError: ``values`` is not a value kind, or ``seed`` not an integer >= 0.
        """
        values, seed = check_value_kind(values), check_seed(seed)
        if self.op_type not in CASE_OPS or self.data_type is None or self.input_shape is None:
            return None
        if any(f.startswith(_NO_CASE_TAGS) for f in self.flags):
            return None
        if self.output_shape is None:
            return None
        try:
            return operator_for_type(self.op_type).case_from_node(
                self.data_type, self.input_shape, dict(self.params), values=values, seed=seed,
                origin=self.origin, opset=self.opset or None)
        except (ShapeError, DataTypeError):
            return None

    @property
    def ok(self) -> bool:
        """True when nothing was flagged."""
        return not self.flags

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node_name, "op_type": self.op_type,
            "inputs": list(self.inputs), "outputs": list(self.outputs),
            "data_type": None if self.data_type is None else self.data_type.name,
            "input_shape": None if self.input_shape is None else list(self.input_shape),
            "output_shape": None if self.output_shape is None else list(self.output_shape),
            "params": _jsonable(self.params),
            "dml_operator": _jsonable(self.dml_operator),
            "descriptors": {k: d.to_dict() for k, d in self.descriptors.items()},
            "flags": list(self.flags), "stride_view": self.stride_view, "origin": self.origin,
            "opset": self.opset,
        }


_FROZEN_FIELDS = ("params", "dml_operator", "descriptors")


def _frozen(value: Any) -> Any:
    """A read-only copy: mappings as MappingProxyType, lists as tuples, all the way down."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _thawed(value: Any) -> Any:
    """:func:`_frozen`'s mappings as dicts again (tuples kept), for pickling."""
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_thawed(v) for v in value)
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


# ---- one node ------------------------------------------------------------------------------
def _describe_node(node: onnx.NodeProto, index: int, graph: Graph, opset: int) -> dict[str, Any]:
    """The LayoutOp fields of one node (all but ``origin``)."""
    name = node_name(node, index)
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
    if data_type is not None and is_nibble(data_type):  # Operator.data_type_reason's rule
        flags.append(f"{data_type.name.lower()}: DirectML takes 4-bit tensors only in QUANTIZE and "
                     "DEQUANTIZE (feature level 6_3), in no data-movement operator")
    if data_type is not None and data_type.is_64bit_integer:
        low = "int32" if data_type is DataType.INT64 else "uint32"
        flags.append(f"{data_type.name.lower()}: needs DirectML 64-bit support or the 32-bit emulation "
                     f"(values outside {low} not preserved)")
    # an absent input is flagged "input:"
    in_shape = static(graph.shape(data), data, flags if data else [], graph.advice_for(data))
    inferred_out = graph.shape(out)
    params: dict[str, Any] = {}
    operator = operator_for_type(node.op_type)
    try:
        attrs(node, opset)  # an attribute ONNX Runtime refuses, whether or not the operator reads it
        check_inputs_present(node, opset)  # a required input left out, which ONNX Runtime refuses
        out_shape, dml, descs, stride_view = operator.describe_node(
            node, graph, opset, data_type, in_shape, inferred_out, params, flags)
    except Flagged as e:
        flags.append(str(e))
        out_shape, dml, descs, stride_view = None, None, {}, operator.stride_view
    except DescriptorError as e:
        flags.append(f"{_rule_tag(e.rule)}: {e}")
        out_shape, dml, descs, stride_view = static(inferred_out, out, []), None, {}, True
    except (ShapeError, NotExpressibleError) as e:
        flags.append(f"shape: {e}")
        out_shape, dml, descs, stride_view = static(inferred_out, out, []), None, {}, True
    no_kernel = _no_cpu_kernel(node.op_type, opset) or _opset_reason(node.op_type, opset)
    if no_kernel:
        flags.append(no_kernel)
    # a node ONNX Runtime refuses, or ONNX does not define, has no output shape to pin dimensions for
    if out_shape is None and not any(f.startswith(_SHAPE_KNOWN_TAGS) for f in flags) and in_shape is not None:
        out_shape = static(inferred_out, out, flags, graph.advice_for(out))
    if data_type is not None and data_type.is_64bit_integer and "input" in descs:
        descs = {**descs, "input_uint32_view": descs["input"].as_uint32_view()}
    refused = _refused_at_opset(node.op_type, data_type, in_shape, out_shape, params, opset, flags)
    if refused:
        flags.append(refused)
    return {"node_name": name, "op_type": node.op_type, "inputs": tuple(node.input),
            "outputs": tuple(node.output), "data_type": data_type, "input_shape": in_shape,
            "output_shape": out_shape, "params": params, "dml_operator": dml, "descriptors": descs,
            "flags": tuple(dict.fromkeys(flags)), "stride_view": stride_view}


def _refused_at_opset(op_type: str, data_type: DataType | None, in_shape: tuple[int, ...] | None,
                      out_shape: tuple[int, ...] | None, params: Mapping[str, Any], opset: int,
                      flags: Sequence[str]) -> str:
    """The ``opset`` flag of a node whose case its operator refuses at the model's opset only (a
    feature that opset has not: Unsqueeze's negative axes before 11, Pad's wrap before 19),
    naming why; "" for any other node, flagged already or not a case's."""
    if (op_type not in CASE_OPS or data_type is None or in_shape is None or out_shape is None or opset <= 0
            or any(f.startswith(_NO_CASE_TAGS) for f in flags)):
        return ""
    operator = operator_for_type(op_type)

    def build(at: int | None) -> None:
        operator.case_from_node(data_type, in_shape, dict(params), values="random", seed=0, origin="model",
                                opset=at)

    try:
        build(opset)
    except (ShapeError, DataTypeError) as e:
        try:
            build(None)
        except (ShapeError, DataTypeError):
            return ""  # refused at any opset: not the opset's doing
        return f"opset: the model's opset {opset} makes no case of the node: {e}"
    return ""


def _opset_reason(op_type: str, opset: int) -> str:
    """The ``opset`` flag of a node whose case cannot be built at the model's opset: ONNX
    defines no ``op_type`` there (ONNX Runtime refuses the model), the operator's cases start
    at a later opset (:attr:`~ort_layouts.operators.base.Operator.min_opset`), or the opset is
    after the newest the installed onnx defines (out of
    :func:`~ort_layouts.operators.registry.case_opsets` either way); "" otherwise, and where
    the opset is unknown (0)."""
    if opset <= 0:
        return ""
    opsets = case_opsets(op_type)
    if opset > opsets[-1]:
        return (f"opset: the model's opset {opset} is after opset {opsets[-1]}, the newest the installed "
                "onnx defines: no case is built at it")
    version = schema_version(op_type, opset)
    if version is None:
        return (f"opset: ONNX defines no {op_type} at opset {opset}, the model's: ONNX Runtime refuses the "
                "model")
    first = opsets.start
    if opset < first:
        return (f"opset: {op_type} cases start at opset {first}; the model's opset {opset} makes no case "
                f"(its {op_type}-{version} takes other inputs)")
    return ""


def _no_cpu_kernel(op_type: str, opset: int) -> str:
    """The ``no-cpu-kernel`` flag of a node whose version (the one ``opset`` resolves
    ``op_type`` to) the installed ONNX Runtime's CPU EP has no kernel for (Concat-1, Pad-1,
    Split-1, Tile-1: "Could not find an implementation"); "" where it has one, or where the opset
    is unknown (0)."""
    version = schema_version(op_type, opset)
    if version is None:
        return ""
    ranges = cpu_kernel_versions(op_type)
    if any(first <= version <= last for first, last in ranges):
        return ""
    have = f"versions {ranges[0][0]} and up" if ranges else "no version"
    return (f"no-cpu-kernel: opset {opset} resolves to {op_type}-{version}, and ONNX Runtime "
                  f"{runtime_version(CPU)}'s CPU EP has kernels for {op_type} {have}: ONNX Runtime refuses "
                  "the model when the node is placed on the CPU EP (could not find an implementation)")


# flags of a node that ONNX Runtime refuses to load or run: such a node makes no case
REFUSED_TAGS = ("attribute:", "input:", "no-cpu-kernel:")
# ... nor does a node whose case cannot be built at the model's opset
_NO_CASE_TAGS = (*REFUSED_TAGS, "opset:")
# flags after which an unknown output shape is not flagged "dynamic" again: it is, or the node is
# refused (by ONNX Runtime: REFUSED_TAGS but no-cpu-kernel, which leaves the node described) or no
# ONNX node at all (a rank-0 Slice): no pinned dimension would make a case of it
_SHAPE_KNOWN_TAGS = ("dynamic", "shape:", "attribute:", "input:")
# the flag of a parameter read from an initializer that is also a graph input (its default,
# which a caller may override): the node makes its case from the default, and says so
OVERRIDABLE_TAG = "overridable-input:"


def _rule_tag(rule: str) -> str:
    return {"dimension-count": "dimensions", "element-count": "elements"}.get(rule, rule)


# ---- extraction ----------------------------------------------------------------------------
_PARAMETER_ELEMENTS = 4096  # the most elements of an external tensor that extract reads (pads, shape...)


def _is_layout(node: onnx.NodeProto, wanted: Sequence[str]) -> bool:
    return node.op_type in wanted and node.domain in ("", "ai.onnx")


def _layout_nodes(body: Body, wanted: Sequence[str]) -> Iterator[onnx.NodeProto]:
    """The layout nodes of ``body`` and of its subgraphs, in :func:`walk`'s order."""
    return (step.node for step in walk(body) if step.node is not None and _is_layout(step.node, wanted))


def _load_parameters(model: onnx.ModelProto, folder: Path, wanted: Sequence[str]) -> dict[str, str]:
    """Read, from ``folder``, the external data of the small initializers and Constant values
    that layout nodes take (pads, shapes, axes: constants ONNX Runtime reads when it builds the
    graph); a tensor that cannot be read stays as it is (its node is flagged). Returns why each
    external data file that could not be read was not, by its location."""
    unread: dict[str, str] = {}
    used = {name for node in _layout_nodes(model.graph, wanted) for name in node.input}
    for step in walk(model.graph):
        if step.node is None:
            tensors = [t for t in step.graph.initializer if t.name in used]
        elif is_constant_node(step.node) and step.node.output[0] in used:
            value = constant_value(step.node)  # the tensor Graph.read takes as the node's value
            tensors = [value] if isinstance(value, onnx.TensorProto) else []
        else:
            continue
        for t in tensors:
            if uses_external_data(t) and math.prod(t.dims) <= _PARAMETER_ELEMENTS:
                try:
                    load_external_data_for_tensor(t, str(folder))
                except Exception as e:  # a missing file, a location outside the folder: flagged as unread
                    location = external_location(t)
                    file = folder / location
                    unread.setdefault(location, f"there is no file {str(file)!r}" if not file.exists() else
                                      f"{str(file)!r} is not a file" if not file.is_file() else
                                      f"{type(e).__name__}: {e}")
    return unread


def _unknown_shape_advice(model: onnx.ModelProto, unread: Mapping[str, str]) -> str:
    """What a flag of a shape that shape inference could not compute advises for ``model``
    (its inputs pinned): naming the external data that could not be read, pinning a dimension
    where an input has one that is not static, and where neither, that no pin can help."""
    parts = [f"the external data {location!r} could not be read ({why})" for location, why in unread.items()]
    initializers = {t.name for t in model.graph.initializer}
    if any(not d.HasField("dim_value") for v in model.graph.input if v.name not in initializers
           for d in v.type.tensor_type.shape.dim):
        parts.append(PIN_ADVICE)
    elif not parts:
        parts.append("no --dim can pin it: every input dimension of the model is static (the shape "
                     "depends on data, or on a Loop or Scan body's state)")
    return "; ".join(parts)


def _scope(outer: Graph, sub: onnx.GraphProto, dims: dict[str, int], ir_version: int,
           unread: Mapping[str, str]) -> Graph:
    """A subgraph as its nodes see it: its own tensors, and the outer graph's that it does not
    define again."""
    # the subgraph itself, not a copy
    inner = Graph.read(sub, dims, ir_version=ir_version, unread=unread, advice=outer.advice)
    defined = {v.name for v in sub.input} | {o for n in sub.node for o in n.output} | {
        t.name for t in sub.initializer}
    def outside(values: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in values.items() if k not in defined}

    return Graph({**outside(outer.shapes), **inner.shapes}, {**outside(outer.elem_types), **inner.elem_types},
                 {**outside(outer.constants), **inner.constants},
                 {**outside(outer.external), **inner.external},
                 dims, (outer.overridable - defined) | inner.overridable, outer.advice,
                 {**outside(outer.unknown_origins), **inner.unknown_origins})


def extract(model: _ModelLike, *, dims: Mapping[str, int] | None = None,
            ops: Sequence[str] | None = None) -> list[LayoutOp]:
    """List the layout operations of a model's main graph and of its subgraphs (the branches
    of If, the bodies of Loop and Scan) with their DirectML descriptors.

    A node of a subgraph is named after the nodes and attributes that hold it
    (``If_3/then_branch/Transpose_0``); it sees the tensors of the graphs around it. The nodes
    of model-local functions are not read (:func:`layout_nodes_in_functions` counts them).
    External data is not loaded, but for the small initializers that layout nodes take (pads,
    shapes, axes), read from the model's folder.

    Args:
        model: a path to an .onnx file, a :class:`ModelFile` read from one, or a ModelProto.
        dims: values for dynamic dimensions (dim_params): set on the graph inputs before shape
            inference and used for any dim_param that remains after it, a subgraph's too; each
            an integer >= 1.
        ops: restrict to these op types (default: all of :data:`LAYOUT_OPS`).

    Raises:
        ShapeError: ``ops`` given as one str or no iterable, or naming an op that is not a
            layout op (the message lists them); a ``dims`` name that is no dim_param.
        ModelError: the model cannot be read (:func:`load_model`).

    Returns:
        One :class:`LayoutOp` per layout node, in graph order (a subgraph's after the node
        that holds it).
    """
    wanted = _wanted(ops)
    pins = check_dims(dims)
    proto, source = load_model(model)
    pinned = _pin_inputs(proto, pins)
    path = model_path(model)
    unread = _load_parameters(pinned, path.parent, wanted) if path is not None else {}
    advice = _unknown_shape_advice(pinned, unread)
    inferred = _infer(pinned, source)
    known = _dim_params(proto)
    _forget_dims(inferred, _dim_params(inferred) - known)
    unknown_dims = sorted(set(pins) - known)
    if unknown_dims:
        raise ShapeError(f"dimensions {unknown_dims} are not dim_params of the model; "
                         + (f"its dim_params: {sorted(known)}" if known else "it has none"))
    opset = next((o.version for o in inferred.opset_import if o.domain in ("", "ai.onnx")), 0)
    result: list[LayoutOp] = []
    scopes: dict[str, Graph] = {}  # by path; a graph's is made as it is entered, from its outer graph's
    for step in walk(inferred.graph):
        node = step.node
        if node is None:
            if step.outer is None:
                scopes[step.path] = Graph.read(inferred.graph, pins, ir_version=inferred.ir_version,
                                               unread=unread, advice=advice)
            else:
                scopes[step.path] = _scope(scopes[step.outer], step.graph, pins, inferred.ir_version, unread)
        elif _is_layout(node, wanted):
            scope = scopes[step.path]
            fields = _describe_node(node, step.index, scope, opset)
            fields["node_name"] = step.path + fields["node_name"]
            _learn_output_shape(scope, node, fields["output_shape"])
            result.append(LayoutOp(**fields, origin=f"model:{source}#{fields['node_name']}", opset=opset))
    return result


def _learn_output_shape(graph: Graph, node: onnx.NodeProto, shape: tuple[int, ...] | None) -> None:
    """Give ``graph`` the static output shape a layout node's description computed, where shape
    inference left that tensor's shape not wholly known (a Reshape in an If branch whose target
    is an outer constant), so that the layout nodes after it read it; a subgraph entered later
    sees it too (its scope is made from this one)."""
    if shape is None or len(node.output) != 1 or not node.output[0]:
        return
    known = graph.shapes.get(node.output[0])
    if known is None or not all(isinstance(d, int) for d in known):
        graph.shapes[node.output[0]] = tuple(shape)
        graph.unknown_origins.pop(node.output[0], None)


def _wanted(ops: Sequence[str] | None) -> tuple[str, ...]:
    """The op types ``ops`` names (default every layout op), checked as ``standard_suite``
    checks its own (a ShapeError for one str, no iterable, or a name that is no layout op; each
    spelt exactly, as a model spells its op types)."""
    if ops is None:
        return tuple(LAYOUT_OPS)
    names = list_argument(ops, "ops", "op names", ShapeError, example="['Transpose', 'Pad']", of_str=True)
    return tuple(check_op_type(op) for op in names or ())


def _case_ops(ops: Sequence[str] | None) -> list[str]:
    """The validating op types of :func:`_wanted` ``(ops)``, in the registry's order (an unknown
    or misspelt name is refused, not left out)."""
    named = None if ops is None else _wanted(ops)
    return [op for op in CASE_OPS if named is None or op in named]


def layout_nodes_in_functions(model: _ModelLike, *, ops: Sequence[str] | None = None) -> int:
    """How many layout nodes the model-local functions hold (their subgraphs included): nodes
    :func:`extract` does not read, reported beside what it lists."""
    wanted = _wanted(ops)
    proto, _ = load_model(model)
    return sum(1 for f in proto.functions for _ in _layout_nodes(f, wanted))


@dataclasses.dataclass(frozen=True, slots=True)
class OpCoverage:
    """How the layout nodes of one op type in a model become validation cases."""

    op_type: str
    nodes: int  # layout nodes of this type
    with_case: int  # nodes that make a case
    distinct_cases: int  # cases once nodes that make the same case share it
    without_case: tuple[tuple[str, str], ...]  # (node, reason) for each node that makes none
    # (node, flag) for each node whose case takes a parameter from an overridable graph input's
    # default (its "overridable-input" flag): the case holds for that default only
    from_defaults: tuple[tuple[str, str], ...] = ()


def _no_case_reason(op: LayoutOp) -> str:
    refused = [f for f in op.flags if f.startswith((*_NO_CASE_TAGS, "shape:", "rank-0:"))]
    if refused:  # a node ONNX Runtime refuses, ONNX or DirectML does not define: no pin would make a case
        return refused[0]
    if op.input_shape is None or op.output_shape is None:
        dynamic = [f for f in op.flags if f.startswith("dynamic")]
        return dynamic[0] if dynamic else "a shape is not static (pin it with --dim NAME=VALUE)"
    if op.data_type is None:  # the flag says why: bfloat16, float8 and strings have no DirectML type
        return next((f for f in op.flags if f.startswith("data-type")), "no data type")
    return op.flags[0] if op.flags else "the node's parameters are not constant"


def model_coverage(model: _ModelLike, *, dims: Mapping[str, int] | None = None,
                   ops: Sequence[str] | None = None) -> list[OpCoverage]:
    """Per op type (in the registry's order): layout nodes, those that make a validation case,
    the distinct cases, and the reason for each node that makes none."""
    wanted = _case_ops(ops)
    return coverage_of(extract(model, dims=dims, ops=wanted), ops=wanted)


def _layout_argument(layout: object) -> list[LayoutOp]:
    """``layout`` (layout ops extracted before) as a list.

    Raises:
        ArgumentError: ``layout`` is one LayoutOp, a str or no iterable, or holds an item that
            is no LayoutOp.
    """
    if isinstance(layout, (LayoutOp, str, bytes)) or not isinstance(layout, Iterable):
        raise ArgumentError(f"layout {layout!r:.80} is {a_type(layout)}; valid: a list of LayoutOp values "
                            "(e.g. extract(model))")
    ops = list(layout)
    for k, op in enumerate(ops):
        if not isinstance(op, LayoutOp):
            raise ArgumentError(f"layout[{k}] {op!r:.80} is {a_type(op)}, not a LayoutOp; valid: the values "
                                "extract(model) gives")
    return ops


def coverage_of(layout: Sequence[LayoutOp], *, ops: Sequence[str] | None = None) -> list[OpCoverage]:
    """:func:`model_coverage` of layout ops extracted before (those of the op types ``ops``, in
    the registry's order, default every validating one)."""
    wanted = _case_ops(ops)
    layout = _layout_argument(layout)
    out = []
    for op_type in wanted:
        nodes = [op for op in layout if op.op_type == op_type]
        if not nodes:
            continue
        cases = [(op, op.to_case()) for op in nodes]
        made = [c for _, c in cases if c is not None]
        out.append(OpCoverage(op_type, len(nodes), len(made), len({c.id for c in made}),
                              tuple((op.node_name, _no_case_reason(op)) for op, c in cases if c is None),
                              tuple((op.node_name, flag) for op, c in cases if c is not None
                                    for flag in op.flags if flag.startswith(OVERRIDABLE_TAG))))
    return out


def format_coverage(coverage: Sequence[OpCoverage], *, in_functions: int = 0) -> list[str]:
    """Lines for :func:`model_coverage`: a total, one line per op, one per node without a case,
    one per node whose case takes a parameter's default from an overridable graph input; with
    ``in_functions`` (:func:`layout_nodes_in_functions`), a line saying those nodes were
    not examined."""
    nodes = sum(c.nodes for c in coverage)
    distinct = sum(c.distinct_cases for c in coverage)
    if coverage:
        lines = [f"{nodes} layout nodes make {distinct} distinct cases: " + ", ".join(
            f"{c.op_type} {c.with_case}/{c.nodes} nodes -> {c.distinct_cases}" for c in coverage)]
    else:
        lines = ["no layout node in the main graph or its subgraphs"]
    lines += [f"  {node} ({c.op_type}) makes no case: {reason}"
              for c in coverage for node, reason in c.without_case]
    lines += [f"  {node} ({c.op_type}) makes its case from a default: {flag}"
              for c in coverage for node, flag in c.from_defaults]
    if in_functions:
        lines.append(functions_line(in_functions))
    return lines


def functions_line(count: int) -> str:
    """What :func:`extract` says of the layout nodes of model-local functions it does not read."""
    return (f"{count} layout node{'s' if count != 1 else ''} in model-local functions not examined "
            "(extract reads the main graph and its subgraphs)")


def model_cases(model: _ModelLike, *, dims: Mapping[str, int] | None = None,
                values: str | Sequence[str] = "random", seed: int = 0, unique: bool = True) -> list[Case]:
    """The validation cases of a model: one per layout node of a validating operator (``CASE_OPS``)
    with static shapes and constant parameters.

    ``values`` is a value kind or several (``("random", "iota")``): the cases of each in turn,
    from one extraction. With ``unique``, nodes that make the same case share it; its origin
    then lists every node (``model:PATH#n8+n21``).
    """
    _value_kinds(values, seed)  # before the model is read
    return cases_of(extract(model, dims=dims, ops=CASE_OPS), values=values, seed=seed, unique=unique)


def _value_kinds(values: object, seed: object) -> list[str]:
    """``values`` (a value kind or several) as a list, ``seed`` checked.

    Raises:
        ShapeError: ``values`` is no value kind and no iterable of them, holds none, or holds
            one that is not a value kind; ``seed`` is not an integer >= 0.
    """
    kinds = [check_value_kind(values)] if isinstance(values, str) else resolve_value_kinds(values)  # type: ignore[arg-type]
    if not kinds:
        raise ShapeError(f"values {values!r} holds no value kind; valid: one of {list(VALUE_KINDS)}, or "
                         "several (e.g. ('random', 'iota'))")
    check_seed(seed)
    return kinds


def cases_of(layout: Sequence[LayoutOp], *, values: str | Sequence[str] = "random", seed: int = 0,
             unique: bool = True) -> list[Case]:
    """:func:`model_cases` of layout ops extracted before (:meth:`LayoutOp.to_case` of each, for
    each value kind of ``values``).

    Raises:
        ShapeError: ``values`` is no value kind and no iterable of them, holds none, or holds
            one that is not a value kind; ``seed`` is not an integer >= 0 (before any case is
            made).
    """
    layout = _layout_argument(layout)
    kinds = _value_kinds(values, seed)
    cases = [c for kind in kinds for op in layout if (c := op.to_case(values=kind, seed=seed)) is not None]
    if not unique:
        return cases
    merged: dict[str, Case] = {}  # a case's id names its value kind: kinds never merge
    for c in cases:
        key = c.id
        if key in merged:
            merged[key] = dataclasses.replace(
                merged[key], origin=merged[key].origin + "+" + c.origin.rpartition("#")[2])
        else:
            merged[key] = c
    return list(merged.values())


# ---- text ----------------------------------------------------------------------------------
def _fmt_desc(d: BufferTensorDesc) -> str:
    return (f"{d.data_type.name} sizes {list(d.sizes)} strides {list(d.effective_strides)} "
            f"{d.total_tensor_size_in_bytes} bytes")


def format_layout_op(op: LayoutOp) -> str:
    """A few human-readable lines describing one layout op."""
    shape_in = "?" if op.input_shape is None else list(op.input_shape)
    shape_out = "?" if op.output_shape is None else list(op.output_shape)
    dtype = "?" if op.data_type is None else op.data_type.name.lower()
    params = ", ".join(f"{k}={list(v) if isinstance(v, tuple) else v}"
                       for k, v in op.params.items() if v is not None and v != "")
    head = f"{op.node_name}: {op.op_type} {dtype} {shape_in} -> {shape_out}"
    lines = [head + (f" ({params})" if params else "")]
    if op.dml_operator:
        lines.append(f"  operator {op.dml_operator['operator']}")
    for role, d in op.descriptors.items():
        lines.append(f"  {role:<18} {_fmt_desc(d)}")
    if op.dml_operator and "input_window_offsets" in op.dml_operator:
        w = op.dml_operator
        lines.append(f"  input window       offsets {list(w['input_window_offsets'])} "
                     f"sizes {list(w['input_window_sizes'])} strides {list(w['input_window_strides'])}")
    if op.dml_operator and "fits_in_8_dims" in op.dml_operator:
        lines.append(f"  6-D view fits in 8 dimensions: {op.dml_operator['fits_in_8_dims']}")
    lines.extend(f"  ! {f}" for f in op.flags)
    return "\n".join(lines)
