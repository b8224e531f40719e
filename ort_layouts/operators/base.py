"""The contract of an operator module: everything ort_layouts knows about one ONNX operator.

Each module under :mod:`ort_layouts.operators` (``transpose``, ``expand``, ``pad``, ...) defines
one :class:`Operator` subclass and :mod:`~ort_layouts.operators.registry` maps its ONNX op types
to an instance. The engine, the reports and the model tools ask the registry, never test an op
type themselves.

An operator module answers, for a :class:`~ort_layouts.operators.case.Case` of its op:

- what DirectML operator the DML EP builds (``dml_operator``: descriptors and operator desc),
  and why it cannot build one at all (``inexpressible_reason``);
- the ONNX output shape and the ONNX result by numpy alone (``output_shape``,
  ``reference_output``), the cross-check of the reference executor;
- its tensors: one input and one output unless it says otherwise (``input_shapes``,
  ``output_shapes``, ``input_feeds``, ``dml_inputs``, ``reference_outputs``: Concat's inputs,
  Split's outputs);
- how its node is written into a test graph at an opset (``add_node``);
- its standard-suite cases (``suite_cases``) and the readable parts of a case id (``id_parts``);
- the alternatives a diagnosis tries when an EP's output mismatches (``diagnosis_candidates``);
- how a node of a real model reads (``describe_node``) and becomes a case (``case_from_node``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import as_strided

from ort_layouts.descriptors.buffer_tensor import MAX_DIMENSION_COUNT, MAX_ELEMENT_COUNT, BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.reference.buffers import buffer_elements, is_nibble, pack, unpack
from ort_layouts.reference.compare import bits_of
from ort_layouts.reference.execute import AnyDmlOperator, DmlOperator, execute, execute_all, is_multi_operator

if TYPE_CHECKING:
    import onnx

    from ort_layouts.operators.case import Case
    from ort_layouts.operators.onnx_nodes import Graph

__all__ = [
    "Candidate",
    "CandidateResult",
    "Described",
    "DiagnosisContext",
    "Operator",
    "fmt_ints",
    "input_name",
    "output_name",
]

# a candidate yields either the flat output bits, or (bits, mask of the elements read inside
# the input buffer), or None when it does not apply; its name is text, or what makes the text
# (called only for the candidate that matches: a diagnosis may try hundreds)
CandidateResult = np.ndarray | tuple[np.ndarray, np.ndarray] | None
Candidate = tuple[str | Callable[[], str], Callable[[], CandidateResult]]

# what describe_node gives: (output shape, operator dict, named descriptors, stride_view)
Described = tuple[tuple[int, ...] | None, dict[str, Any] | None, dict[str, BufferTensorDesc], bool]

_MASKED_LIMIT = 1 << 22  # elements: reads past the buffer are simulated only below this


def fmt_ints(values: Any) -> str:
    """``[1, 2, 3]``: integers as a diagnosis prints them (numpy integers as plain ints)."""
    return str([int(v) for v in values])


def input_name(index: int, k: int = 0) -> str:
    """The graph input of a test graph's case ``index``, its ``k``-th tensor: ``x{index}``, then
    ``x{index}_1``, ``x{index}_2``, ..."""
    return f"x{index}" if k == 0 else f"x{index}_{k}"


def output_name(index: int, k: int = 0) -> str:
    """The graph output of case ``index``, its ``k``-th tensor: ``y{index}``, ``y{index}_1``, ..."""
    return f"y{index}" if k == 0 else f"y{index}_{k}"


class DiagnosisContext:
    """What every diagnosis candidate needs: the case, its operator, the input buffer and
    elements, and ways to run an alternative operator or descriptor on them.

    For an operator with several tensors (a :class:`DmlMultiOperator`), ``feeds`` are the
    arrays it binds, in its input order (:meth:`Operator.dml_inputs`); ``input_buffers`` holds
    them packed by its input descriptors, and the output bits of :meth:`run` (and the EP's, in
    ``actual_bits``) are every output's flat bits one after another.
    """

    def __init__(self, case: Case, input_array: np.ndarray, op: AnyDmlOperator,
                 feeds: Sequence[np.ndarray] | None = None) -> None:
        self.case = case
        self.dtype: DataType = case.data_type
        #: the operator (a DmlOperator, or a DmlMultiOperator for Concat and Split)
        self.op: Any = op
        self.source = BufferTensorDesc(self.dtype, case.shape or (1,))
        self.buffer = pack(self.source, np.asarray(input_array))
        # only the tensor's own elements are real data; anything past them is unknown
        self.elements = buffer_elements(self.buffer, self.dtype)[: self.source.element_count]
        #: the buffers the operator reads, one per input (``[buffer]`` for one input)
        self.input_buffers: list[np.ndarray] = [self.buffer]
        if is_multi_operator(op):
            arrays = [np.asarray(input_array)] if feeds is None else [np.asarray(f) for f in feeds]
            self.input_buffers = [pack(d, a) for d, a in zip(op.inputs, arrays, strict=True)]
        #: the output the EP returned, as flat bits (set by the diagnosis before it asks for
        #: candidates; a candidate may read a value from it, e.g. the constant a Pad wrote)
        self.actual_bits: np.ndarray | None = None

    def canonical(self, bits: np.ndarray) -> np.ndarray:
        return bits & np.uint8(0x0F) if is_nibble(self.dtype) else bits

    def run(self, op: AnyDmlOperator, inputs: Sequence[np.ndarray] | None = None) -> np.ndarray:
        """The output bits of another operator on the case's input (on ``inputs``, buffers in
        the operator's input order, when given); every output's bits one after another."""
        if is_multi_operator(op):
            raws = execute_all(op, self.input_buffers if inputs is None else inputs)
            return np.concatenate([self.canonical(bits_of(unpack(d, raw)))
                                   for d, raw in zip(op.outputs, raws, strict=True)])
        single = cast(DmlOperator, op)
        if inputs is not None:
            (buffer,) = inputs
            return self.canonical(bits_of(unpack(single.output, execute(single, buffer))))
        return self.canonical(bits_of(unpack(single.output, execute(single, self.buffer))))

    def read(self, desc: BufferTensorDesc, offset_in_elements: int = 0) -> CandidateResult:
        """The values an identity with input ``desc`` writes (packed, logical order), the input
        read from ``offset_in_elements`` on."""
        sizes = desc.sizes
        strides = desc.effective_strides
        if offset_in_elements + desc.last_element_index < self.elements.size:
            item = self.elements.itemsize
            view = as_strided(self.elements[offset_in_elements:], sizes, [s * item for s in strides],
                              writeable=False)
            return self.canonical(np.ascontiguousarray(view).reshape(-1))
        if desc.element_count > _MASKED_LIMIT:
            return None
        offsets: npt.NDArray[np.int64] = np.full((), offset_in_elements, dtype=np.int64)
        for n, s in zip(sizes, strides, strict=True):
            offsets = offsets[..., None] + np.arange(n, dtype=np.int64) * s
        offsets = offsets.reshape(-1)
        inside = offsets < self.elements.size
        values = np.zeros(offsets.size, dtype=self.elements.dtype)
        values[inside] = self.elements[offsets[inside]]
        return self.canonical(values), inside


class Operator:
    """One ONNX operator family. Subclasses set ``op_types`` and override what applies."""

    #: the ONNX op types this module handles (first: the one its cases carry)
    op_types: ClassVar[tuple[str, ...]] = ()
    #: the lowest opset at which the operator exists
    min_opset: ClassVar[int] = 1
    #: the Case fields each op type takes ("mode" among them where it has modes); a Case
    #: refuses the others
    case_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    #: whether the engine can build, run and check cases of this operator
    validates: ClassVar[bool] = True
    #: whether the DirectML operator is one strided read of the input (an identity)
    stride_view: ClassVar[bool] = True
    #: the mode a case without one gets (``Case.mode == ""``)
    default_mode: ClassVar[str] = ""
    #: rank-0 and empty-tensor cases of the standard suite (:meth:`edge_cases`): Case fields
    #: without the data type; ``op`` defaults to :attr:`op_type`; ``pad_value_hex="one"`` is
    #: the value 1 in the case's type
    edge_specs: ClassVar[tuple[dict[str, Any], ...]] = ()

    @property
    def op_type(self) -> str:
        return self.op_types[0]

    # ---- cases ----------------------------------------------------------------------------
    def check_case(self, case: Case) -> None:
        """Raise ShapeError when the case lacks what the operator needs."""

    def opset_problem(self, case: Case, opset: int) -> str:
        """Why the case cannot be a node at ``opset`` ("" when it can): a feature of it that a
        later version of the op brought (a negative axis before 11, Pad's wrap before 19).
        Asked where a case of an opset of its own is made (``Case``: a ShapeError) and where a
        model is built at the run's (:func:`~ort_layouts.engine.graphs.build_model`: a
        ModelError)."""
        return ""

    def id_parts(self, case: Case) -> list[str]:
        """The operator's parts of a case id, after op, data type and shape."""
        return []

    def output_shape(self, case: Case) -> tuple[int, ...]:
        """The ONNX output shape of a case."""
        raise NotImplementedError(f"{self.op_type} cases cannot be run yet")

    def inexpressible_reason(self, case: Case) -> str:
        """Why DirectML cannot express the case at all ("" when it can): the DML EP cannot run
        it (or, when :meth:`ep_runs_inexpressible`, runs it anyway), and the EPs are compared
        with :meth:`reference_outputs`. By default: a tensor over DirectML's limits
        (:meth:`limits_reason`), or an empty tensor (:meth:`empty_reason`)."""
        return self.limits_reason(case) or self.empty_reason(case)

    def limits_reason(self, case: Case) -> str:
        """Why a tensor of the case is over DirectML's limits for any data-movement operator
        ("" when none is): a 4-bit data type (:meth:`data_type_reason`), more than 8
        dimensions (DML_TENSOR_DIMENSION_COUNT_MAX1) or more than 2^32 - 1 elements."""
        reason = self.data_type_reason(case)
        if reason:
            return reason
        inputs, outputs = self.tensor_shapes(case)
        for shape in (*inputs, *outputs):
            if len(shape) > MAX_DIMENSION_COUNT:
                return (f"a rank-{len(shape)} tensor {list(shape)} is over DirectML's {MAX_DIMENSION_COUNT} "
                        "dimensions")
            elements = math.prod(shape)
            if elements > MAX_ELEMENT_COUNT:
                return f"a tensor {list(shape)} of {elements} elements is over DirectML's 2^32 - 1"
        return ""

    def data_type_reason(self, case: Case) -> str:
        """Why no DirectML data-movement operator takes the case's data type ("" when one does):
        DML_TENSOR_DATA_TYPE_UINT4 and INT4 came with feature level 6_3 for
        DML_OPERATOR_QUANTIZE and DEQUANTIZE alone (DirectML's feature level history). Their
        descriptors (:meth:`dml_operator`) and the reference executor still hold 4-bit data."""
        if not is_nibble(case.data_type):
            return ""
        return (f"DirectML takes {case.data_type.name} tensors only in DML_OPERATOR_QUANTIZE and "
                f"DML_OPERATOR_DEQUANTIZE (feature level 6_3), in no data-movement operator: the DML EP "
                f"cannot run this {case.op}")

    def skips_dispatch(self, case: Case) -> bool:
        """Whether the DML EP runs the node but creates no DirectML operator and dispatches
        nothing because a tensor it binds is empty (``DmlOperator::SetDmlOperatorDesc`` returns
        when ``OperatorHelper::ContainsEmptyDimensions``, and
        ``ExecutionProviderImpl::ExecuteOperator`` when a bound tensor has a 0 dimension).
        ONNX Runtime still returns outputs of ONNX's shapes, which nothing has written: correct
        when they are empty, not when one holds elements (a Pad of an empty input)."""
        return self.has_empty_tensor(case)

    def ep_runs_inexpressible(self, case: Case) -> bool:
        """Whether the DML EP runs a case DirectML cannot express (:meth:`inexpressible_reason`)
        instead of refusing it; such a case runs on the DML EP too, and its outputs are compared
        with :meth:`reference_outputs`. By default: when it dispatches nothing
        (:meth:`skips_dispatch`)."""
        return self.skips_dispatch(case)

    def has_empty_tensor(self, case: Case) -> bool:
        """Whether an input or output of the case has a zero-sized dimension."""
        inputs, outputs = self.tensor_shapes(case)
        return any(0 in s for s in (*inputs, *outputs))

    def empty_reason(self, case: Case) -> str:
        """The :meth:`inexpressible_reason` of a case with an empty tensor ("" without one)."""
        if not self.skips_dispatch(case):
            return ""
        inputs, outputs = self.tensor_shapes(case)
        ins, outs = [list(s) for s in inputs], [list(s) for s in outputs]
        written = ("" if all(0 in s for s in outs) else
                   "; its non-empty output is left unwritten, while ONNX fills it")
        return (f"{case.op} of {ins[0] if len(ins) == 1 else ins} to "
                f"{outs[0] if len(outs) == 1 else outs} has an empty tensor: DirectML has no 0 size, "
                f"so the DML EP creates no operator and dispatches nothing{written}")

    def dml_operator(self, case: Case) -> AnyDmlOperator:
        """The DirectML operator the DML EP builds for the case."""
        raise NotImplementedError(f"{self.op_type} has no DirectML operator here")

    def reference_output(self, case: Case, input_array: np.ndarray) -> np.ndarray:
        """The ONNX result computed with numpy alone."""
        raise NotImplementedError(f"{self.op_type} has no numpy reference here")

    # ---- tensors --------------------------------------------------------------------------
    def input_shapes(self, case: Case) -> list[tuple[int, ...]]:
        """The ONNX shape of each data input of the node (one: ``case.shape``)."""
        return [case.shape]

    def output_shapes(self, case: Case) -> list[tuple[int, ...]]:
        """The ONNX shape of each output of the node (one: :meth:`output_shape`)."""
        return [self.output_shape(case)]

    def tensor_shapes(self, case: Case) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
        """(:meth:`input_shapes`, :meth:`output_shapes`) of the case, as tuples, computed once
        per case: a case is frozen, and a run asks for its shapes several times."""
        try:
            return case._shapes
        except AttributeError:
            pass
        shapes = (tuple(self.input_shapes(case)), tuple(self.output_shapes(case)))
        object.__setattr__(case, "_shapes", shapes)  # the fields are frozen; the shapes only follow them
        return shapes

    def input_feeds(self, case: Case, input_array: np.ndarray) -> list[np.ndarray]:
        """The node's data inputs made from the case's input (the whole tensor of
        ``case.shape``, as :func:`~ort_layouts.operators.values.make_input` makes it), in the
        order of :meth:`input_shapes` (one: the input itself)."""
        return [input_array]

    def dml_inputs(self, case: Case, feeds: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The feeds the DirectML operator binds, in its input order (all of them unless the
        EP leaves some out, as Concat's empty inputs)."""
        return list(feeds)

    def reference_outputs(self, case: Case, input_array: np.ndarray) -> list[np.ndarray]:
        """The ONNX results computed with numpy alone, one per output."""
        return [self.reference_output(case, input_array)]

    def add_node(self, graph: onnx.GraphProto, index: int, case: Case, opset: int) -> None:
        """Append the case's node ``n{index}_{op}`` (inputs ``x{index}``, ``x{index}_1``, ...,
        outputs ``y{index}``, ``y{index}_1``, ...: :func:`input_name`, :func:`output_name`) and
        its initializers to ``graph``."""
        raise NotImplementedError(f"{self.op_type} nodes cannot be built yet")

    def suite_cases(self, dtypes: Sequence[DataType], ranks: set[int], seed: int) -> list[Case]:
        """The operator's standard-suite cases (before their seeds are derived)."""
        return []

    def edge_cases(self, dtypes: Sequence[DataType]) -> list[Case]:
        """The operator's rank-0 and empty-tensor cases (:attr:`edge_specs`), each in the first
        data type and one more, rotating: ONNX results that DirectML gives another rank (sizes
        ``[1]``) or cannot hold (a 0 size)."""
        from ort_layouts.operators.case import Case

        out: list[Case] = []
        for k, spec in enumerate(self.edge_specs):
            for dt in dict.fromkeys([dtypes[0], dtypes[(k + 1) % len(dtypes)]]):
                fields = dict(spec)
                if fields.get("pad_value_hex") == "one":
                    fields["pad_value_hex"] = np.ones((), dt.to_numpy()).astype("<" + dt.to_numpy().str[1:]) \
                        .tobytes().hex()
                out.append(Case(fields.pop("op", self.op_type), dt, **fields))
        return out

    # ---- diagnosis ------------------------------------------------------------------------
    def diagnosis_candidates(self, ctx: DiagnosisContext) -> Iterator[Candidate]:
        """Alternatives that reproduce typical bugs of this operator, most telling first."""
        return iter(())

    def inexpressible_candidates(self, case: Case, input_array: np.ndarray) -> Iterator[
            tuple[str, Callable[[], np.ndarray]]]:
        """For a case DirectML cannot express that the DML EP runs all the same
        (:meth:`ep_runs_inexpressible`): readings the EP's descriptors may get, each a name and
        a function giving its output (one array), most telling first."""
        return iter(())

    # ---- real models ----------------------------------------------------------------------
    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        """The DirectML description of one node of a real model; fills ``params`` with what it
        read and ``flags`` with what DirectML cannot take."""
        raise NotImplementedError(f"{self.op_type} nodes cannot be described yet")

    def case_from_node(self, dtype: DataType, shape: tuple[int, ...], params: dict[str, Any], *,
                       values: str, seed: int, origin: str, opset: int | None = None) -> Case | None:
        """The validation case of a described node, built at ``opset`` (None: the builder's
        default), or None when it makes none."""
        return None
