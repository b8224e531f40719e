"""ONNX node protos, written and read: the helpers every operator module builds its test node
with, and the view of a real model's graph it reads a node from.

Writing: protos are filled in place, field by field, exactly as ``helper.make_node`` /
``numpy_helper.from_array`` fill them (copying each finished message into the graph would cost
as much again).

Reading (:class:`Graph`): a shape-inferred model's tensor shapes, element types and constant
values; ``static``, ``const_ints`` and ``attrs`` read what an operator needs, and record a
``flags`` line ("tag: explanation") for what keeps it from being described.

``attrs`` and ``const_ints`` are the one place a node's attributes and parameter inputs are
read, and they hold them to ONNX's schema of the operator at the model's opset as ONNX Runtime
does when it loads the model: an attribute the schema does not declare ("Unrecognized
attribute"), one of another type than the schema declares ("Mismatched attribute type"), and a
parameter input of an element type the schema does not allow ("Type Error") or of another rank
than ONNX Runtime's kernel reads (a 1-D tensor; "must be a 1-D array") end the reading with
:class:`Flagged`: ONNX Runtime refuses such a model, so its node makes no case (extract checks
every layout node's attributes so, whether or not its operator reads them).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from ort_layouts.descriptors.buffer_tensor import MAX_DIMENSION_COUNT, MAX_ELEMENT_COUNT
from ort_layouts.descriptors.dtypes import DataType

__all__ = [
    "OVERRIDABLE_IR_VERSION",
    "Dim",
    "Flagged",
    "Graph",
    "add_node",
    "attrs",
    "check_inputs_present",
    "check_size",
    "const_ints",
    "constant_value",
    "flag_overridable",
    "int64_initializer",
    "is_constant_node",
    "name_of",
    "schema_version",
    "static",
    "value_hex",
    "value_info",
]


# ---- writing -------------------------------------------------------------------------------
def add_node(graph: onnx.GraphProto, op_type: str, inputs: list[str], output: str, name: str,
             doc_string: str) -> onnx.NodeProto:
    """Append a node with one output to ``graph``."""
    node: onnx.NodeProto = graph.node.add()  # protobuf's containers are untyped here
    node.op_type = op_type
    node.input.extend(inputs)
    node.output.append(output)
    node.name = name
    node.doc_string = doc_string
    return node


def int64_initializer(graph: onnx.GraphProto, name: str, values: Sequence[int]) -> None:
    """``numpy_helper.from_array(np.array(values, np.int64), name)``, written in place."""
    tensor = graph.initializer.add()
    tensor.dims.append(len(values))
    tensor.name = name
    tensor.raw_data = np.array(values, dtype="<i8").tobytes()
    tensor.data_type = TensorProto.INT64


def value_info(values: Any, name: str, elem_type: int, shape: Sequence[int]) -> None:
    """``helper.make_tensor_value_info(name, elem_type, shape)``, appended to ``values`` in place."""
    info = values.add()
    info.name = name
    tensor_type = info.type.tensor_type
    tensor_type.elem_type = elem_type
    dims = tensor_type.shape.dim
    dims.extend([])  # an empty shape is still a shape (a scalar), as make_tensor_type_proto writes it
    for d in shape:
        dims.add().dim_value = d


# ---- reading -------------------------------------------------------------------------------
Dim = int | str | None  # a value, a dim_param, or unknown

# the IR version from which an initializer that is also a graph input is only its default, which
# a caller may override at run time (ONNX's IR.md; ONNX Runtime's Graph::CanOverrideInitializer)
OVERRIDABLE_IR_VERSION = 4


# what a flag of a shape that shape inference could not compute advises by default
PIN_ADVICE = "pin the model's input dimensions with --dim NAME=VALUE"


class Flagged(Exception):
    """A node that cannot be described; the message is its flag ("tag: explanation")."""


@dataclasses.dataclass
class Graph:
    """A shape-inferred model's graph as an operator sees it."""

    shapes: dict[str, tuple[Dim, ...] | None]
    elem_types: dict[str, int]
    constants: dict[str, np.ndarray | onnx.TensorProto]  # TensorProtos are converted on first use
    # tensors whose data is external and not loaded -> where it is, as a flag says it
    external: dict[str, str]
    dims: dict[str, int]
    # initializers that are also graph inputs in a model of IR version >= 4: only defaults, which
    # a caller may override (:func:`flag_overridable`)
    overridable: set[str] = dataclasses.field(default_factory=set)
    # what a flag of a shape shape inference could not compute advises (:func:`static`)
    advice: str = PIN_ADVICE
    # tensors whose shape is not known because of a node ONNX's shape inference has no schema
    # for (a com.microsoft op) upstream -> what a flag of such a shape advises (:meth:`advice_for`)
    unknown_origins: dict[str, str] = dataclasses.field(default_factory=dict)

    @classmethod
    def read(cls, g: onnx.GraphProto, dims: dict[str, int], *, ir_version: int = 0,
             unread: Mapping[str, str] | None = None, advice: str = PIN_ADVICE) -> Graph:
        """The tensors of graph ``g`` alone (a subgraph's outer tensors are added by its caller).

        ``ir_version`` is the model's: from :data:`OVERRIDABLE_IR_VERSION` on, an initializer
        that is also an input of ``g`` is only its default value (:attr:`overridable`); before,
        every initializer had to be listed as an input, and stayed a constant. ``unread`` says,
        by external data location, why a file could not be read (a flag names it); ``advice``
        is :attr:`advice`.
        """
        shapes: dict[str, tuple[Dim, ...] | None] = {}
        types: dict[str, int] = {}
        for v in (*g.input, *g.value_info, *g.output):
            tt = v.type.tensor_type
            if not v.type.HasField("tensor_type"):
                continue
            types[v.name] = tt.elem_type
            if tt.HasField("shape"):
                # a negative size (ONNX's inference of a node that crops past a dimension) is none
                shapes[v.name] = tuple(
                    (int(d.dim_value) if d.dim_value >= 0 else None) if d.HasField("dim_value")
                    else (d.dim_param or None) for d in tt.shape.dim)
            else:
                shapes.setdefault(v.name, None)
        constants: dict[str, np.ndarray | onnx.TensorProto] = {}
        external: dict[str, str] = {}
        for t in g.initializer:
            shapes[t.name] = tuple(int(d) for d in t.dims)
            types[t.name] = t.data_type
            if _is_external(t):
                external[t.name] = _where(t, unread or {})
            else:
                constants[t.name] = t
        for node in g.node:
            if is_constant_node(node):
                value = constant_value(node)
                if isinstance(value, onnx.TensorProto) and _is_external(value):
                    external[node.output[0]] = _where(value, unread or {})
                elif value is not None:
                    constants[node.output[0]] = value
        overridable: set[str] = set()
        if ir_version >= OVERRIDABLE_IR_VERSION:
            overridable = {v.name for v in g.input} & {t.name for t in g.initializer}
        return cls(shapes, types, constants, external, dims, overridable, advice, _unknown_origins(g, shapes))

    def advice_for(self, name: str) -> str:
        """What a flag of tensor ``name``'s shape, which shape inference could not compute,
        advises: where a node ONNX's shape inference has no schema for made it unknown, giving
        the model that shape; else :attr:`advice`."""
        return self.unknown_origins.get(name, self.advice)

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
        """The value of a constant tensor (initializer or Constant node), or None.

        Raises:
            Flagged: ("input: ...") the tensor's data cannot be read as its dims and type say
                (raw data of another size than its dims hold), which ONNX Runtime refuses too.
        """
        found = self.constants.get(name)
        if isinstance(found, onnx.TensorProto):
            try:
                array = numpy_helper.to_array(found)
            except Exception as e:  # numpy's or onnx's own words, for data its dims do not hold
                raise Flagged(f"input: the constant {name!r} (dims {list(found.dims)}) cannot be read: "
                              f"{e}; valid: data of as many values as its dims hold") from None
            found = self.constants[name] = array
        return found


def _unknown_origins(g: onnx.GraphProto, shapes: Mapping[str, tuple[Dim, ...] | None]) -> dict[str, str]:
    """For :attr:`Graph.unknown_origins`: each tensor of ``g`` (``shapes``: those it gives) whose
    shape is not wholly known and that a node ONNX's shape inference has no schema for made, or
    a node made of such a tensor, in graph order -> advice naming that first node."""
    origins: dict[str, str] = {}
    for index, node in enumerate(g.node):
        if node.domain in ("", "ai.onnx") or onnx.defs.has(node.op_type, node.domain):
            origin = next((origins[name] for name in node.input if name in origins), None)
        else:  # named as extract names a node
            origin = (f"it comes from node {node.name or f'{node.op_type}_{index}'!r} ({node.domain} "
                      f"{node.op_type}), which ONNX's shape inference has no schema for: give the model "
                      "that node's output shapes as value_info (onnxruntime.tools.symbolic_shape_infer "
                      "computes them for ONNX Runtime's com.microsoft operators) and read it again")
        if origin is None:
            continue
        for name in node.output:
            shape = shapes.get(name)
            if name and (shape is None or not all(isinstance(d, int) for d in shape)):
                origins[name] = origin
    return origins


def is_constant_node(node: onnx.NodeProto) -> bool:
    """Whether ``node`` is an ONNX Constant, whose value its first output names."""
    return node.op_type == "Constant" and node.domain in ("", "ai.onnx") and bool(node.output)


def external_location(tensor: onnx.TensorProto) -> str:
    """The file an external tensor's data is in, relative to its model's folder ("" if unnamed)."""
    return next((e.value for e in tensor.external_data if e.key == "location"), "")


def _where(tensor: onnx.TensorProto, unread: Mapping[str, str]) -> str:
    """Where an external tensor that was not loaded keeps its data, as a flag says it."""
    location = external_location(tensor)
    why = unread.get(location)
    return f"in {location!r}, which could not be read ({why})" if why else f"in {location!r}, not loaded"


def _is_external(value: object) -> bool:
    """Whether ``value`` is a tensor whose data is stored outside the model and not loaded."""
    return (isinstance(value, onnx.TensorProto) and value.data_location == onnx.TensorProto.EXTERNAL
            and not value.raw_data)


def constant_value(node: onnx.NodeProto) -> np.ndarray | onnx.TensorProto | None:
    """A Constant node's value: its ``value`` tensor as it is (the node's own message, not a copy,
    so external data loaded into it is the node's; :class:`Graph` converts it on first use, and
    never where its data is external and not loaded), or the array of its other value
    attributes. The node's first value attribute decides."""
    for a in node.attribute:
        if a.name == "value":
            tensor: onnx.TensorProto = a.t  # protobuf's fields are untyped here
            return tensor
        if a.name == "value_int":
            return np.array(a.i, dtype=np.int64)
        if a.name == "value_ints":
            return np.array(list(a.ints), dtype=np.int64)
        if a.name == "value_float":
            return np.array(a.f, dtype=np.float32)
        if a.name == "value_floats":
            return np.array(list(a.floats), dtype=np.float32)
    return None


@functools.lru_cache(maxsize=256)
def _schema(op_type: str, opset: int) -> onnx.defs.OpSchema | None:
    """ONNX's schema of ``op_type`` (default domain) at ``opset``; None where the opset is
    unknown (0) or the operator did not exist yet."""
    if opset <= 0:
        return None
    try:
        return onnx.defs.get_schema(op_type, opset, "")
    except onnx.defs.SchemaError:
        return None


def schema_version(op_type: str, opset: int) -> int | None:
    """The since-version of the schema ``opset`` resolves ``op_type`` (default domain) to; None
    where the opset is unknown (0 or less) or the operator did not exist yet."""
    schema = _schema(op_type, opset)
    return None if schema is None else int(schema.since_version)


_ATTRIBUTE_KINDS = {"INT": "an integer", "INTS": "a list of integers", "FLOAT": "a float",
                    "FLOATS": "a list of floats", "STRING": "a string", "STRINGS": "a list of strings"}


def _attribute_type(code: int) -> str:
    """"INTS", "FLOAT", ...: an AttributeProto type as ONNX names it."""
    known = code in onnx.AttributeProto.AttributeType.values()
    return str(onnx.AttributeProto.AttributeType.Name(code)) if known else str(code)


def attrs(node: onnx.NodeProto, opset: int) -> dict[str, Any]:
    """The node's attributes by name (strings decoded), each one the schema of its operator at
    ``opset`` declares, of the type it declares (not checked where the opset is unknown, 0).

    Raises:
        Flagged: ("attribute: ...") an attribute of another type than the schema declares
            (perm=[1.0, 0.0], blocksize="2"), or one it does not declare (a ``mode`` on
            SpaceToDepth): ONNX Runtime refuses to load the model.
    """
    schema = _schema(node.op_type, opset)
    out = {}
    for a in node.attribute:
        if schema is not None:
            declared = schema.attributes.get(a.name)
            if declared is None:
                raise Flagged(f"attribute: {node.op_type} has no attribute {a.name!r} at "
                              f"{node.op_type}-{schema.since_version}; valid: {sorted(schema.attributes)}; "
                              "ONNX Runtime refuses the model (unrecognized attribute)")
            want = str(declared.type).rsplit(".", 1)[-1]  # "AttrType.INTS"
            if _attribute_type(a.type) != want:
                version = f"{node.op_type}-{schema.since_version}"
                try:
                    shown = f" {_shown(onnx.helper.get_attribute_value(a))}"
                except Exception:  # an attribute of no type has no value to show
                    shown = ""
                raise Flagged(f"attribute: {node.op_type} attribute {a.name!r} is {_attribute_type(a.type)}"
                              f"{shown}; valid: {want} ({_ATTRIBUTE_KINDS.get(want, want.lower())}), as "
                              f"{version} declares it; ONNX Runtime refuses the model (mismatched "
                              "attribute type)")
        v = onnx.helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def check_inputs_present(node: onnx.NodeProto, opset: int) -> None:
    """Refuse a node whose inputs the schema of its operator at ``opset`` requires are absent:
    fewer inputs than it takes, or one named "" (absent) where it is no optional input; or that
    has more inputs or outputs than the schema takes (not checked where the opset is unknown, 0).

    Raises:
        Flagged: ("input: ...") ONNX Runtime refuses such a model when it loads it (an input
            "marked single but has an empty string", an input count out of the schema's range)
            or fails the node when it runs (an absent one of Concat's variadic inputs: "input
            count mismatch").
    """
    schema = _schema(node.op_type, opset)
    if schema is None or not schema.inputs:
        return
    version = f"{node.op_type}-{schema.since_version}"
    for what, count, most in (("inputs", len(node.input), schema.max_input),
                              ("outputs", len(node.output), schema.max_output)):
        if count > most:  # Split-11 given Split-13's split input, say: it would be read as another node
            raise Flagged(f"input: {node.op_type} has {count} {what}; valid: at most {most}, as {version} "
                          f"declares them; ONNX Runtime refuses the model (\"{what[:-1]} size {count} not in "
                          "range\")")
    if len(node.input) < schema.min_input:
        required = ", ".join(i.name for i in schema.inputs[:schema.min_input])
        raise Flagged(f"input: {node.op_type} has {len(node.input)} inputs {list(node.input)}; valid: at "
                      f"least {schema.min_input} ({required}), as {version} declares them; ONNX Runtime "
                      "refuses the model")
    optional = onnx.defs.OpSchema.FormalParameterOption.Optional
    variadic = onnx.defs.OpSchema.FormalParameterOption.Variadic
    for k, name in enumerate(node.input):
        formal = schema.inputs[min(k, len(schema.inputs) - 1)]
        if name or formal.option == optional:
            continue
        when = "fails the node when it runs (input count mismatch)" if formal.option == variadic else \
            "refuses the model (an input marked single that has an empty string)"
        raise Flagged(f"input: {node.op_type} input {k} ({formal.name}) is absent (named ''), which "
                      f"{version} requires; valid: a tensor's name; ONNX Runtime {when}")


def _shown(value: Any) -> str:
    """An attribute value as a flag shows it: lists as lists, bytes decoded where they can be."""
    if isinstance(value, bytes):
        try:
            return repr(value.decode())
        except UnicodeDecodeError:
            return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return repr(value)


def static(shape: tuple[Dim, ...] | None, name: str, flags: list[str],
           advice: str = PIN_ADVICE) -> tuple[int, ...] | None:
    """``shape`` as a tuple of ints, or None with a "dynamic" flag for each dimension it does
    not know: a dim_param it suggests pinning, a shape or dimension shape inference could not
    compute ``advice`` follows (:attr:`Graph.advice`)."""
    if shape is None:
        flags.append(f"dynamic: the shape of {name!r} is unknown (shape inference could not compute "
                     f"it); {advice}")
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
            unnamed = " (one that depends on the data has no name to pin)" if advice == PIN_ADVICE else ""
            flags.append(f"dynamic: {name!r} has a dimension shape inference could not compute "
                         f"{list(shape)}; {advice}{unnamed}")
    return None


def const_ints(graph: Graph, node: onnx.NodeProto, index: int, what: str, flags: list[str], opset: int,
               ranks: tuple[int, ...] | None = (1,)) -> tuple[int, ...] | None:
    """The values of the node's parameter input ``index`` (named ``what``): None where it is
    absent, or not a constant (flagged "runtime-input").

    Args:
        ranks: the ranks ONNX Runtime's kernel takes the input in (a 1-D tensor; Unsqueeze's axes
            may be a scalar); None: any (Expand reads its shape's values whatever the rank).

    Raises:
        Flagged: ("input: ...") the input's element type is not one the schema of the operator
            at ``opset`` allows, or not that of the inputs bound to the same type parameter
            (Slice's starts and ends), or its rank is not one of ``ranks``: ONNX Runtime refuses
            the model.
    """
    if index >= len(node.input) or not node.input[index]:
        return None
    name = node.input[index]
    value = graph.value(name)
    check_input(graph, node, index, what, opset, value, ranks)
    if value is None:
        where = graph.external.get(name)
        why = f"stored as external data {where}" if where else \
            "computed at runtime, not a constant initializer"
        flags.append(f"runtime-input: {what} input {name!r} is {why}; the DML EP reads {what} on the "
                     "CPU when the graph is built")
        return None
    flag_overridable(graph, name, what, value, flags)
    return tuple(int(v) for v in np.asarray(value).reshape(-1))


def flag_overridable(graph: Graph, name: str, what: str, value: np.ndarray, flags: list[str]) -> None:
    """Flag ``overridable-input`` where parameter input ``name`` (``what``: "shape", "pads") is
    an initializer that is also a graph input (:attr:`Graph.overridable`): its value is only the
    default, which the node is described with (and its case made from).

    ONNX Runtime holds no such initializer constant (``Graph::GetConstantInitializer`` returns
    none for it when ``CanOverrideInitializer()``, IR version >= 4, and the session state saves
    it as no constant initialized tensor), so ``OpKernelInfo::TryGetConstantInput`` finds no
    value and the DML EP's kernel, whose parameter inputs are required constant CPU inputs,
    is created when the node runs, from the value fed then.
    """
    if name not in graph.overridable:
        return
    values = np.asarray(value).reshape(-1).tolist()
    shown = str(values) if len(values) <= 16 else str(values[:16])[:-1] + ", ...]"
    flags.append(f"overridable-input: {what} input {name!r} is a graph input with an initializer, which is "
                 f"only its default (IR version >= {OVERRIDABLE_IR_VERSION}): a caller may feed another "
                 f"{what} at run time, and ONNX Runtime takes no such input as a constant; described with "
                 f"the default {shown}")


def _input_type(graph: Graph, name: str, value: np.ndarray | None) -> int | None:
    """The TensorProto element type of tensor ``name`` (its value's, where it is a constant)."""
    if value is not None:
        try:
            return int(onnx.helper.np_dtype_to_tensor_dtype(np.asarray(value).dtype))
        except (KeyError, ValueError, TypeError):
            return None
    return graph.elem_types.get(name)


def _type_name(elem_type: int) -> str:
    """"int64", "float32", ...: an element type as numpy names it (ONNX's name otherwise)."""
    try:
        return str(onnx.helper.tensor_dtype_to_np_dtype(elem_type).name)
    except (KeyError, ValueError, TypeError):
        return _onnx_type_name(elem_type)


def _allowed_types(schema: onnx.defs.OpSchema, type_str: str) -> list[str]:
    """The type strings (``tensor(int64)``) a formal input's ``type_str`` allows."""
    for constraint in schema.type_constraints:
        if constraint.type_param_str == type_str:
            return list(constraint.allowed_type_strs)
    return [type_str]


def check_input(graph: Graph, node: onnx.NodeProto, index: int, what: str, opset: int,
                value: np.ndarray | None, ranks: tuple[int, ...] | None) -> None:
    """:func:`const_ints`'s checks of input ``index`` (``value``: its constant, or None): its
    element type, then its rank.

    Raises:
        Flagged: ("input: ...") as :func:`const_ints`.
    """
    name = node.input[index]
    elem = _input_type(graph, name, value)
    schema = _schema(node.op_type, opset)
    if schema is not None and elem is not None and index < len(schema.inputs):
        version = f"{node.op_type}-{schema.since_version}"
        type_str = schema.inputs[index].type_str
        allowed = _allowed_types(schema, type_str)
        given = _type_name(elem)
        if f"tensor({_onnx_type_name(elem)})" not in allowed:
            valid = [_type_name(_onnx_type(t)) for t in allowed]
            raise Flagged(f"input: {node.op_type} input {index} ({what}) {name!r} is {given}; valid: {valid} "
                          f"({version} declares {type_str}); ONNX Runtime refuses the model (type error)")
        for j, other in enumerate(node.input):
            if j == index or not other or j >= len(schema.inputs) or schema.inputs[j].type_str != type_str:
                continue
            other_elem = _input_type(graph, other, graph.value(other))
            if other_elem is not None and other_elem != elem:
                raise Flagged(
                    f"input: {node.op_type} input {index} ({what}) {name!r} is {given} and input {j} "
                    f"({schema.inputs[j].name}) {other!r} is {_type_name(other_elem)}; valid: one type for "
                    f"both, as {version} binds them to {type_str}; ONNX Runtime refuses the model (type "
                    "error)")
    shape = np.shape(value) if value is not None else graph.shape(name)
    if ranks is not None and shape is not None and len(shape) not in ranks:
        valid_ranks = " or ".join({0: "a scalar", 1: "a 1-D tensor"}.get(r, f"rank {r}") for r in ranks)
        raise Flagged(f"input: {node.op_type} input {index} ({what}) {name!r} has rank {len(shape)} (shape "
                      f"{list(shape)}); valid: {valid_ranks}; ONNX Runtime refuses the model")


def _onnx_type_name(elem_type: int) -> str:
    """The name ONNX's type strings give an element type: "int64", "float", "float16"..."""
    return str(onnx.TensorProto.DataType.Name(elem_type)).lower() if \
        elem_type in onnx.TensorProto.DataType.values() else str(elem_type)


def _onnx_type(type_str: str) -> int:
    """The element type of an ONNX type string ("tensor(int64)" -> TensorProto.INT64)."""
    inner = type_str.removeprefix("tensor(").removesuffix(")")
    known = inner.upper() in onnx.TensorProto.DataType.keys()  # noqa: SIM118 (an enum wrapper, no dict)
    return int(onnx.TensorProto.DataType.Value(inner.upper())) if known else 0


def check_size(shape: tuple[int, ...], what: str) -> None:
    if len(shape) > MAX_DIMENSION_COUNT:
        raise Flagged(f"dimensions: {what} has {len(shape)} dimensions {list(shape)}, over DirectML's "
                       f"maximum of {MAX_DIMENSION_COUNT}")
    count = math.prod(shape)
    if count > MAX_ELEMENT_COUNT:
        raise Flagged(f"elements: {what} {list(shape)} holds {count} elements, over DirectML's "
                       "2^32 - 1")
    if count == 0:
        raise Flagged(f"empty: {what} {list(shape)} has a 0-sized dimension, which no DirectML "
                       "descriptor can hold (the EP skips empty tensors)")


def value_hex(value: Any, dtype: DataType | None) -> str | None:
    """The little-endian bytes of ``value`` in ``dtype``, as hex (Case.pad_value_hex); of a
    4-bit type, one byte: the value's low nibble (a 4-bit constant of a model, an integer the
    type holds)."""
    if dtype is None:
        return None
    if dtype.bitwidth == 4:  # numpy has no 4-bit type; Case takes the nibble in a byte
        return bytes([int(np.asarray(value).astype(np.int64)) & 0x0F]).hex()
    scalar = np.array(value).astype(dtype.to_numpy())
    return scalar.astype(scalar.dtype.newbyteorder("<")).tobytes().hex()


def name_of(node: onnx.NodeProto) -> str:
    return repr(node.name) if node.name else f"({node.op_type})"
