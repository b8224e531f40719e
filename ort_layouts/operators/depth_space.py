"""ONNX DepthToSpace and SpaceToDepth: DML_OPERATOR_DEPTH_TO_SPACE1 and DML_OPERATOR_SPACE_TO_DEPTH.

As ONNX Runtime's DML EP builds them (``DmlOperatorDepthToSpace`` in
``onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/DmlOperatorDepthToSpace.cpp``
and ``DmlOperatorSpaceToDepth`` in ``.../Operators/DmlOperatorSpaceToDepth.cpp``, with
``DepthToSpaceHelper`` / ``SpaceToDepthHelper`` in
``onnxruntime/core/providers/dml/OperatorAuthorHelper/OperatorHelper.cpp``): the input must be
4-D (``GetOutputShapes`` checks "Wrong number of dimensions"), both descriptors are the packed
4-D [N, C, H, W] tensors of ``DmlOperator::Initialize``, and ``BlockSize`` is the ``blocksize``
attribute (> 0).

- DepthToSpace-1/11/13 becomes ``DML_DEPTH_TO_SPACE1_OPERATOR_DESC {InputTensor, OutputTensor,
  BlockSize, Order}`` with output [N, C/(B*B), H*B, W*B]; ``Order`` is
  ``MapStringToDepthSpaceMode`` (``OperatorUtility.cpp``) of the ``mode`` attribute, default
  "DCR" (DepthToSpace-1 has none): DCR -> DML_DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW (0), CRD ->
  DML_DEPTH_SPACE_ORDER_COLUMN_ROW_DEPTH (1). The EP matches the name by prefix (``strncmp``
  over the attribute's length), so "" and "D" read as DCR, "C" as CRD. ONNX allows only "DCR"
  and "CRD", and ONNX Runtime's CPU kernel refuses any other mode (``ReadIsDCR`` in
  ``space_depth_ops.h``): a model's node with another mode is flagged "mode" and makes no case.
- SpaceToDepth-1/13 becomes the original ``DML_SPACE_TO_DEPTH_OPERATOR_DESC {InputTensor,
  OutputTensor, BlockSize}`` (no Order: DirectML's depth-column-row order, which is ONNX's)
  with output [N, C*B*B, H/B, W/B]. SpaceToDepth-28's ``mode`` is not modelled: a node whose
  mode is not "DCR" makes no case (flagged "mode"), rather than a DCR case under its name.
- The EP registers DepthToSpace-1, -11, -13 and SpaceToDepth-1, -13 only
  (``OperatorRegistration.cpp``: ``REG_INFO(7 | 11 | 13, DepthToSpace)``, ``REG_INFO(7 | 13,
  SpaceToDepth)``; :data:`~ort_layouts.operators.kernels.DML_KERNEL_VERSIONS`): a model's node
  of DepthToSpace-28 or SpaceToDepth-28 (opset 28 and up) is flagged "no-kernel", as a
  Transpose-23 node is; its description is what the EP builds for the same node at an opset
  it has a kernel for.

The EP divides without checking divisibility; DirectML's validation needs the output sizes
above exactly, so a channel count that is not a multiple of B*B (DepthToSpace) or a height or
width that is not a multiple of B (SpaceToDepth) is no valid operator
(``ns-directml-dml_depth_to_space1_operator_desc``, ``ns-directml-dml_space_to_depth_operator_desc``).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import onnx
from numpy.lib.stride_tricks import as_strided

from ort_layouts._errors import ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc, check_cpp_name, full_index
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import int_tuple
from ort_layouts.operators.base import (
    Candidate,
    CandidateResult,
    Described,
    DiagnosisContext,
    Operator,
)
from ort_layouts.operators.case import Case
from ort_layouts.operators.desc_fields import (
    check_tensor,
    read_desc_dict,
    read_enum,
    read_integer,
    read_tensor,
)
from ort_layouts.operators.kernels import flag_no_kernel
from ort_layouts.operators.onnx_nodes import Flagged, Graph, add_node, attrs, check_size
from ort_layouts.operators.shapes import rotating
from ort_layouts.reference.buffers import check_views
from ort_layouts.reference.compare import views_equal
from ort_layouts.reference.copy import strided_copy
from ort_layouts.reference.execute import DmlOperator

__all__ = [
    "DEPTH_TO_SPACE1",
    "SPACE_TO_DEPTH",
    "DepthSpace",
    "DepthSpaceOrder",
    "DepthToSpaceOp",
    "SpaceToDepthOp",
]

DEPTH_TO_SPACE1 = "DML_OPERATOR_DEPTH_TO_SPACE1"
SPACE_TO_DEPTH = "DML_OPERATOR_SPACE_TO_DEPTH"
MODE_OPSET = 11  # DepthToSpace-11: the mode attribute
S2D_MODE_OPSET = 28  # SpaceToDepth-28: the mode attribute (DCR or CRD)


class DepthSpaceOrder(enum.IntEnum):
    """DML_DEPTH_SPACE_ORDER, with DirectML's values."""

    DEPTH_COLUMN_ROW = 0  # depth laid out as (BlockHeight, BlockWidth, Channels): ONNX "DCR"
    COLUMN_ROW_DEPTH = 1  # depth laid out as (Channels, BlockHeight, BlockWidth): ONNX "CRD"

    @classmethod
    def _missing_(cls, value: object) -> DepthSpaceOrder:
        raise ShapeError(
            f"{value!r} is not a DML_DEPTH_SPACE_ORDER value; valid: { {m.name: m.value for m in cls} }")

    @property
    def dml_name(self) -> str:
        """The C++ enumerator, e.g. ``DML_DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW``."""
        return f"DML_DEPTH_SPACE_ORDER_{self.name}"

    @property
    def onnx_name(self) -> str:
        """The ONNX DepthToSpace mode: "DCR" or "CRD"."""
        return "DCR" if self is DepthSpaceOrder.DEPTH_COLUMN_ROW else "CRD"

    @classmethod
    def from_onnx(cls, mode: str | bytes) -> DepthSpaceOrder:
        """The order the DML EP maps a DepthToSpace ``mode`` to (``MapStringToDepthSpaceMode``):
        the first of "DCR", "CRD" that starts with ``mode``.

        >>> DepthSpaceOrder.from_onnx("CRD"), DepthSpaceOrder.from_onnx("")
        (<DepthSpaceOrder.COLUMN_ROW_DEPTH: 1>, <DepthSpaceOrder.DEPTH_COLUMN_ROW: 0>)
        """
        text = mode.decode() if isinstance(mode, bytes) else mode
        if isinstance(text, str):
            for order in cls:
                if order.onnx_name.startswith(text):
                    return order
        raise ShapeError(f"DepthToSpace mode {mode!r} is not valid; valid: ['DCR', 'CRD']")


def _positive(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < 1:
        raise ShapeError(f"{what} {value!r} must be an integer >= 1")
    return int(value)


def _check_4d(op: Any, name: str) -> None:
    for role, desc in (("input", op.input), ("output", op.output)):
        check_tensor(desc, f"{type(op).__name__} {role}")
        if desc.dimension_count != 4:
            raise ShapeError(f"{name} {role} has {desc.dimension_count} dimensions {list(desc.sizes)}; "
                             "DirectML needs 4 ([N, C, H, W])")
    if op.input.data_type != op.output.data_type:
        raise ShapeError(f"{name} input data type {op.input.data_type.name} differs from output "
                         f"{op.output.data_type.name}; DirectML needs the same type")


def _view(array: np.ndarray, shape: tuple[int, ...], element_strides: tuple[int, ...], *,
          writeable: bool) -> np.ndarray:
    item = array.itemsize
    return as_strided(array, shape, tuple(s * item for s in element_strides), writeable=writeable)


def _depth_to_space_views(dst: np.ndarray, src: np.ndarray, block: int, order: DepthSpaceOrder, *,
                          writeable: bool) -> tuple[np.ndarray, np.ndarray]:
    """(the output as [N, Co, H, B, W, B], the input as the same index space): ``out[n, c, y, bh,
    x, bw]`` reads input channel ``(bh*B + bw)*Co + c`` (DCR) or ``c*B*B + bh*B + bw`` (CRD) at
    [y, x]."""
    n, c, h, w = src.shape
    co = c // (block * block)
    sn, sc, sh, sw = (s // src.itemsize for s in src.strides)
    dn, dc, dh, dw = (s // dst.itemsize for s in dst.strides)
    out6 = _view(dst, (n, co, h, block, w, block), (dn, dc, block * dh, dh, block * dw, dw),
                 writeable=writeable)
    if order == DepthSpaceOrder.DEPTH_COLUMN_ROW:  # channel = (bh, bw, c)
        src6 = _view(src, (n, block, block, co, h, w), (sn, block * co * sc, co * sc, sc, sh, sw),
                     writeable=False).transpose(0, 3, 4, 1, 5, 2)
    else:  # channel = (c, bh, bw)
        src6 = _view(src, (n, co, block, block, h, w), (sn, block * block * sc, block * sc, sc, sh, sw),
                     writeable=False).transpose(0, 1, 4, 2, 5, 3)
    return out6, src6


def _space_to_depth_views(dst: np.ndarray, src: np.ndarray, block: int, *, writeable: bool,
                          order: DepthSpaceOrder = DepthSpaceOrder.DEPTH_COLUMN_ROW
                          ) -> tuple[np.ndarray, np.ndarray]:
    """(the output in its channel order's 6-D index space, the input as the same index space).
    Input channel c at [y*B + bh, x*B + bw] goes to output channel ``(bh*B + bw)*C + c``
    (DEPTH_COLUMN_ROW) or ``c*B*B + bh*B + bw`` (COLUMN_ROW_DEPTH) at [y, x]."""
    n, c, h, w = src.shape
    ho, wo = h // block, w // block
    sn, sc, sh, sw = (s // src.itemsize for s in src.strides)
    dn, dc, dh, dw = (s // dst.itemsize for s in dst.strides)
    src6 = _view(src, (n, c, ho, block, wo, block), (sn, sc, block * sh, sh, block * sw, sw), writeable=False)
    if order == DepthSpaceOrder.DEPTH_COLUMN_ROW:  # [N, B, B, C, Ho, Wo]
        out6 = _view(dst, (n, block, block, c, ho, wo), (dn, block * c * dc, c * dc, dc, dh, dw),
                     writeable=writeable)
        return out6, src6.transpose(0, 3, 5, 1, 2, 4)
    out6 = _view(dst, (n, c, block, block, ho, wo), (dn, block * block * dc, block * dc, dc, dh, dw),
                 writeable=writeable)  # [N, C, B, B, Ho, Wo]
    return out6, src6.transpose(0, 1, 3, 5, 2, 4)


@dataclasses.dataclass(frozen=True, slots=True)
class DepthToSpaceOp:
    """DML_DEPTH_TO_SPACE1_OPERATOR_DESC: depth moved into BlockSize x BlockSize spatial blocks.

    ``out[n, c, y, x] = in[n, ci, y // B, x // B]`` with ``bh = y % B``, ``bw = x % B`` and
    ``ci = (bh*B + bw)*Co + c`` (DEPTH_COLUMN_ROW) or ``c*B*B + bh*B + bw`` (COLUMN_ROW_DEPTH).

    Attributes:
        input: the 4-D input [N, C, H, W].
        output: the 4-D output [N, C/(B*B), H*B, W*B].
        block_size: BlockSize (>= 1).
        order: Order.
    """

    input: BufferTensorDesc
    output: BufferTensorDesc
    block_size: int
    order: DepthSpaceOrder = DepthSpaceOrder.DEPTH_COLUMN_ROW

    def __post_init__(self) -> None:
        object.__setattr__(self, "block_size", _positive(self.block_size, "BlockSize"))
        object.__setattr__(self, "order", DepthSpaceOrder(self.order))
        _check_4d(self, "DEPTH_TO_SPACE1")
        b = self.block_size
        n, c, h, w = self.input.sizes
        if c % (b * b):
            raise ShapeError(f"DEPTH_TO_SPACE1 input channels {c} are not a multiple of BlockSize^2 = "
                             f"{b * b} (input {list(self.input.sizes)})")
        expected = (n, c // (b * b), h * b, w * b)
        if self.output.sizes != expected:
            raise ShapeError(f"DEPTH_TO_SPACE1 output sizes {list(self.output.sizes)} are not "
                             f"{list(expected)} (input {list(self.input.sizes)}, BlockSize {b})")
        self.output.validate(is_output=True)

    @classmethod
    def from_onnx(cls, data_type: DataType | str, shape: Sequence[int], blocksize: int,
                  mode: str = "DCR") -> DepthToSpaceOp:
        """What the DML EP builds for ONNX ``DepthToSpace(blocksize, mode)``.

        >>> op = DepthToSpaceOp.from_onnx("float32", (1, 8, 2, 3), 2, "CRD")
        >>> op.output.sizes, op.order.name
        ((1, 2, 4, 6), 'COLUMN_ROW_DEPTH')
        """
        dtype = DataType.coerce(data_type)
        dims = int_tuple(shape, "DepthToSpace input shape")
        b = _positive(blocksize, "DepthToSpace blocksize")
        if len(dims) != 4:
            raise ShapeError(f"DepthToSpace needs a 4-D input, got {list(dims)} (rank {len(dims)})")
        n, c, h, w = dims
        return cls(BufferTensorDesc(dtype, dims), BufferTensorDesc(dtype, (n, c // (b * b), h * b, w * b)),
                   b, DepthSpaceOrder.from_onnx(mode))

    def run(self, dst: np.ndarray, src: np.ndarray, *, threads: int | None = None) -> None:
        check_views(dst, src, self.output, self.input, threads, writeable=True)
        out6, src6 = _depth_to_space_views(dst, src, self.block_size, self.order, writeable=True)
        strided_copy(out6, src6, threads=threads)

    def matches(self, src: np.ndarray, got: np.ndarray, *, threads: int | None = None) -> bool:
        check_views(got, src, self.output, self.input, threads, writeable=False, names=("got", "src"))
        out6, src6 = _depth_to_space_views(got, src, self.block_size, self.order, writeable=False)
        return views_equal(src6, out6, threads=threads)

    def source_index(self, index: Sequence[int]) -> tuple[int, int, int, int]:
        """The input index an output index [n, c, y, x] reads.

        Raises:
            ShapeError: ``index`` is not an index of the output (four integers within its sizes).
        """
        n, c, y, x = full_index(index, self.output.sizes)
        b = self.block_size
        co = self.output.sizes[1]
        bh, bw = y % b, x % b
        if self.order == DepthSpaceOrder.DEPTH_COLUMN_ROW:
            ci = (bh * b + bw) * co + c
        else:
            ci = c * b * b + bh * b + bw
        return n, ci, y // b, x // b

    def buffer_offsets_in_elements(self, index: Sequence[int]) -> tuple[int | None, int]:
        """(input buffer offset read for the output ``index``, output buffer offset), in elements."""
        out = self.output.offset_of(index)
        return self.input.offset_of(self.source_index(index)), out

    def to_dict(self) -> dict[str, Any]:
        """The DML desc's fields as a JSON-ready dict (:meth:`from_dict` inverts it)."""
        return {"operator": DEPTH_TO_SPACE1, "input": self.input.to_dict(), "output": self.output.to_dict(),
                "block_size": self.block_size, "order": self.order.name}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DepthToSpaceOp:
        """Inverse of :meth:`to_dict`.

        Raises:
            DescriptorError: ``data`` is no DEPTH_TO_SPACE1 dict, or a field is missing or not
                what it holds (``order`` a DML_DEPTH_SPACE_ORDER name).
            ShapeError: the operator is not valid (as the constructor checks it).
        """
        fields = read_desc_dict(data, DEPTH_TO_SPACE1, required=("input", "output", "block_size", "order"))
        return cls(read_tensor(fields, "input", DEPTH_TO_SPACE1),
                   read_tensor(fields, "output", DEPTH_TO_SPACE1),
                   read_integer(fields, "block_size", DEPTH_TO_SPACE1),
                   read_enum(fields, "order", DEPTH_TO_SPACE1, DepthSpaceOrder))

    def to_cpp(self, name: str = "depthToSpace") -> str:
        """C++ initializers of the descriptors and of DML_DEPTH_TO_SPACE1_OPERATOR_DESC."""
        return _cpp(self, name, "DML_DEPTH_TO_SPACE1_OPERATOR_DESC", DEPTH_TO_SPACE1,
                    f"{self.block_size}, {self.order.dml_name}")


@dataclasses.dataclass(frozen=True, slots=True)
class SpaceToDepthOp:
    """DML_SPACE_TO_DEPTH_OPERATOR_DESC: BlockSize x BlockSize spatial blocks moved into depth,
    in depth-column-row order.

    ``out[n, (bh*B + bw)*C + c, y, x] = in[n, c, y*B + bh, x*B + bw]``.

    Attributes:
        input: the 4-D input [N, C, H, W].
        output: the 4-D output [N, C*B*B, H/B, W/B].
        block_size: BlockSize (>= 1).
    """

    input: BufferTensorDesc
    output: BufferTensorDesc
    block_size: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "block_size", _positive(self.block_size, "BlockSize"))
        _check_4d(self, "SPACE_TO_DEPTH")
        b = self.block_size
        n, c, h, w = self.input.sizes
        if h % b or w % b:
            raise ShapeError(f"SPACE_TO_DEPTH input height {h} and width {w} must be multiples of "
                             f"BlockSize {b} (input {list(self.input.sizes)})")
        expected = (n, c * b * b, h // b, w // b)
        if self.output.sizes != expected:
            raise ShapeError(f"SPACE_TO_DEPTH output sizes {list(self.output.sizes)} are not "
                             f"{list(expected)} (input {list(self.input.sizes)}, BlockSize {b})")
        self.output.validate(is_output=True)

    @classmethod
    def from_onnx(cls, data_type: DataType | str, shape: Sequence[int], blocksize: int) -> SpaceToDepthOp:
        """What the DML EP builds for ONNX ``SpaceToDepth(blocksize)``.

        >>> SpaceToDepthOp.from_onnx("uint32", (1, 2, 4, 6), 2).output.sizes
        (1, 8, 2, 3)
        """
        dtype = DataType.coerce(data_type)
        dims = int_tuple(shape, "SpaceToDepth input shape")
        b = _positive(blocksize, "SpaceToDepth blocksize")
        if len(dims) != 4:
            raise ShapeError(f"SpaceToDepth needs a 4-D input, got {list(dims)} (rank {len(dims)})")
        n, c, h, w = dims
        return cls(BufferTensorDesc(dtype, dims), BufferTensorDesc(dtype, (n, c * b * b, h // b, w // b)), b)

    def run(self, dst: np.ndarray, src: np.ndarray, *, threads: int | None = None) -> None:
        check_views(dst, src, self.output, self.input, threads, writeable=True)
        out6, src6 = _space_to_depth_views(dst, src, self.block_size, writeable=True)
        strided_copy(out6, src6, threads=threads)

    def matches(self, src: np.ndarray, got: np.ndarray, *, threads: int | None = None) -> bool:
        check_views(got, src, self.output, self.input, threads, writeable=False, names=("got", "src"))
        out6, src6 = _space_to_depth_views(got, src, self.block_size, writeable=False)
        return views_equal(src6, out6, threads=threads)

    def source_index(self, index: Sequence[int]) -> tuple[int, int, int, int]:
        """The input index an output index [n, c, y, x] reads.

        Raises:
            ShapeError: ``index`` is not an index of the output (four integers within its sizes).
        """
        n, co, y, x = full_index(index, self.output.sizes)
        b = self.block_size
        c = self.input.sizes[1]
        block, ci = divmod(co, c)
        bh, bw = divmod(block, b)
        return n, ci, y * b + bh, x * b + bw

    def buffer_offsets_in_elements(self, index: Sequence[int]) -> tuple[int | None, int]:
        """(input buffer offset read for the output ``index``, output buffer offset), in elements."""
        out = self.output.offset_of(index)
        return self.input.offset_of(self.source_index(index)), out

    def to_dict(self) -> dict[str, Any]:
        """The DML desc's fields as a JSON-ready dict (:meth:`from_dict` inverts it)."""
        return {"operator": SPACE_TO_DEPTH, "input": self.input.to_dict(), "output": self.output.to_dict(),
                "block_size": self.block_size}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SpaceToDepthOp:
        """Inverse of :meth:`to_dict`.

        Raises:
            DescriptorError: ``data`` is no SPACE_TO_DEPTH dict, or a field is missing or not
                what it holds.
            ShapeError: the operator is not valid (as the constructor checks it).
        """
        fields = read_desc_dict(data, SPACE_TO_DEPTH, required=("input", "output", "block_size"))
        return cls(read_tensor(fields, "input", SPACE_TO_DEPTH),
                   read_tensor(fields, "output", SPACE_TO_DEPTH),
                   read_integer(fields, "block_size", SPACE_TO_DEPTH))

    def to_cpp(self, name: str = "spaceToDepth") -> str:
        """C++ initializers of the descriptors and of DML_SPACE_TO_DEPTH_OPERATOR_DESC."""
        return _cpp(self, name, "DML_SPACE_TO_DEPTH_OPERATOR_DESC", SPACE_TO_DEPTH, str(self.block_size))


def _cpp(op: DepthToSpaceOp | SpaceToDepthOp, name: str, desc_type: str, operator: str, fields: str) -> str:
    check_cpp_name(name)
    return "\n".join([
        op.input.to_cpp(f"{name}Input"), op.output.to_cpp(f"{name}Output"),
        f"{desc_type} {name}Desc = {{&{name}InputTensor, &{name}OutputTensor, {fields}}};",
        f"DML_OPERATOR_DESC {name}Op = {{{operator}, &{name}Desc}};",
    ])


# ---- the operator module -------------------------------------------------------------------
# DepthToSpace inputs by blocksize (channels a multiple of B*B), the DirectML example first
_D2S_SHAPES: dict[int, tuple[tuple[int, ...], ...]] = {
    2: ((1, 8, 2, 3), (2, 4, 3, 2), (1, 12, 2, 2), (2, 8, 1, 3)),
    3: ((1, 18, 2, 2), (2, 9, 2, 3), (1, 9, 1, 1)),
}
# SpaceToDepth inputs by blocksize (height and width multiples of B), the DirectML example first
_S2D_SHAPES: dict[int, tuple[tuple[int, ...], ...]] = {
    2: ((1, 2, 4, 6), (2, 3, 4, 4), (1, 1, 2, 8)),
    3: ((1, 1, 6, 6), (2, 2, 6, 3), (1, 4, 3, 3)),
}
_D2S_OPSETS = (10, 11)  # DepthToSpace-1 (no mode attribute) and DepthToSpace-11
_S2D_OPSET_1 = 12  # the last opset of SpaceToDepth-1


def _onnx_depth_to_space(x: np.ndarray, b: int, mode: str) -> np.ndarray:
    """The ONNX specification's reshape / transpose / reshape."""
    n, c, h, w = x.shape
    if mode == "DCR":
        tmp = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        tmp = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return np.ascontiguousarray(tmp.reshape(n, c // (b * b), h * b, w * b))


def _onnx_space_to_depth(x: np.ndarray, b: int) -> np.ndarray:
    """The ONNX specification's reshape / transpose / reshape."""
    n, c, h, w = x.shape
    tmp = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return np.ascontiguousarray(tmp.reshape(n, c * b * b, h // b, w // b))


class DepthSpace(Operator):
    """DepthToSpace and SpaceToDepth (one module: the same EP code path and index space)."""

    op_types = ("DepthToSpace", "SpaceToDepth")
    # SpaceToDepth's mode is its one order, DCR (check_case refuses another)
    case_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {"DepthToSpace": ("blocksize", "mode"),
                                                            "SpaceToDepth": ("blocksize", "mode")}
    edge_specs = ({"shape": (0, 4, 2, 2), "blocksize": 2},
                  {"op": "SpaceToDepth", "shape": (1, 2, 0, 2), "blocksize": 2})
    min_opset = 1
    stride_view = False
    default_mode = "DCR"  # DepthToSpace's default; SpaceToDepth's implicit (and only) order

    def check_case(self, case: Case) -> None:
        if case.blocksize is None:
            raise ShapeError(f"a {case.op} case needs blocksize")
        if case.blocksize < 1:
            raise ShapeError(f"{case.op} blocksize {case.blocksize} must be > 0")
        if case.rank != 4:
            raise ShapeError(f"{case.op} needs a 4-D input, got {list(case.shape)} (rank {case.rank})")
        b = case.blocksize
        _, c, h, w = case.shape
        if case.op == "DepthToSpace":
            if case.mode not in ("DCR", "CRD"):
                raise ShapeError(f"DepthToSpace mode {case.mode!r} is not valid; valid: ['DCR', 'CRD']")
            if c % (b * b):
                raise ShapeError(f"DepthToSpace channels {c} are not a multiple of blocksize^2 = {b * b} "
                                 f"(input {list(case.shape)})")
        else:
            if case.mode != "DCR":
                raise ShapeError(f"SpaceToDepth has no mode (its order is DCR), got {case.mode!r}")
            if h % b or w % b:
                raise ShapeError(f"SpaceToDepth height {h} and width {w} must be multiples of blocksize {b} "
                                 f"(input {list(case.shape)})")

    def opset_problem(self, case: Case, opset: int) -> str:
        """Why a DepthToSpace or SpaceToDepth case cannot be a node at ``opset`` ("" when it can):
        DepthToSpace's mode came with DepthToSpace-11 (DepthToSpace-1 is always DCR)."""
        if case.op == "DepthToSpace" and opset < MODE_OPSET and case.mode != "DCR":
            return (f"DepthToSpace mode {case.mode!r} needs opset >= {MODE_OPSET} (DepthToSpace-1 is always "
                    f"DCR), got {opset}; valid: mode 'DCR', or opset >= {MODE_OPSET}")
        return ""

    def id_parts(self, case: Case) -> list[str]:
        parts = [f"b{case.blocksize}"]
        if case.op == "DepthToSpace":
            parts.append(case.mode)
        return parts

    def output_shape(self, case: Case) -> tuple[int, ...]:
        n, c, h, w = case.shape
        b = case.blocksize or 1
        if case.op == "DepthToSpace":
            return (n, c // (b * b), h * b, w * b)
        return (n, c * b * b, h // b, w // b)

    def dml_operator(self, case: Case) -> DepthToSpaceOp | SpaceToDepthOp:
        if case.op == "DepthToSpace":
            return DepthToSpaceOp.from_onnx(case.data_type, case.shape, case.blocksize or 0, case.mode)
        return SpaceToDepthOp.from_onnx(case.data_type, case.shape, case.blocksize or 0)

    def reference_output(self, case: Case, input_array: np.ndarray) -> np.ndarray:
        x = np.asarray(input_array)
        if case.op == "DepthToSpace":
            return _onnx_depth_to_space(x, case.blocksize or 1, case.mode)
        return _onnx_space_to_depth(x, case.blocksize or 1)

    def add_node(self, graph: onnx.GraphProto, index: int, case: Case, opset: int) -> None:
        """The blocksize attribute; DepthToSpace's mode from opset 11 (DepthToSpace-1 has none,
        so a CRD case needs opset >= 11)."""
        node = add_node(graph, case.op, [f"x{index}"], f"y{index}", f"n{index}_{case.op}", case.id)
        attr = node.attribute.add()
        attr.name = "blocksize"
        attr.i = int(case.blocksize or 0)
        attr.type = onnx.AttributeProto.INT
        if case.op == "DepthToSpace" and opset >= MODE_OPSET:
            attr = node.attribute.add()
            attr.name = "mode"
            attr.s = case.mode.encode("utf-8")
            attr.type = onnx.AttributeProto.STRING

    def suite_cases(self, dtypes: Sequence[DataType], ranks: set[int], seed: int) -> list[Case]:
        """Rank 4 only. DepthToSpace in both modes with blocksizes 2 and 3, SpaceToDepth with 2
        and 3; every type on DirectML's example shapes, two types on the others; special values
        and iota on the examples; DepthToSpace-1 (opset 10), DepthToSpace-11 and SpaceToDepth-1
        (opset 12)."""
        out: list[Case] = []
        if 4 not in ranks:
            return out
        for b, shapes in _D2S_SHAPES.items():
            for s, shape in enumerate(shapes):
                for mode in ("DCR", "CRD"):
                    chosen = list(dtypes) if s == 0 else \
                        list(dict.fromkeys([dtypes[0], rotating(dtypes, s + (mode == "CRD") + b)]))
                    out += [Case("DepthToSpace", dt, shape, blocksize=b, mode=mode) for dt in chosen]
        for b, shapes in _S2D_SHAPES.items():
            for s, shape in enumerate(shapes):
                chosen = list(dtypes) if s == 0 else list(dict.fromkeys([dtypes[0], rotating(dtypes, s + b)]))
                out += [Case("SpaceToDepth", dt, shape, blocksize=b) for dt in chosen]
        d2s, s2d = _D2S_SHAPES[2][0], _S2D_SHAPES[2][0]
        for dt in dtypes:
            for values in ("special", "iota"):
                for mode in ("DCR", "CRD"):
                    out.append(Case("DepthToSpace", dt, d2s, blocksize=2, mode=mode, values=values))
                out.append(Case("SpaceToDepth", dt, s2d, blocksize=2, values=values))
            for opset in _D2S_OPSETS:
                for mode in ("DCR", "CRD") if opset >= MODE_OPSET else ("DCR",):
                    out.append(Case("DepthToSpace", dt, _D2S_SHAPES[3][1], blocksize=3, mode=mode,
                                    opset=opset))
            out.append(Case("SpaceToDepth", dt, _S2D_SHAPES[3][1], blocksize=3, opset=_S2D_OPSET_1))
        return out

    def diagnosis_candidates(self, ctx: DiagnosisContext) -> Iterator[Candidate]:
        """The input read packed; DCR read as CRD (and CRD as DCR); another blocksize; the
        inverse operator."""
        op = ctx.op
        assert isinstance(op, (DepthToSpaceOp, SpaceToDepthOp))
        dtype = ctx.dtype
        n, c, h, w = op.input.sizes
        b = op.block_size

        def running(make: Callable[[], DmlOperator]) -> Callable[[], CandidateResult]:
            return lambda: ctx.run(make())

        def d2s(block: int, order: DepthSpaceOrder) -> Callable[[], CandidateResult]:
            sizes = (n, c // (block * block), h * block, w * block)
            return running(lambda: DepthToSpaceOp(op.input, BufferTensorDesc(dtype, sizes), block, order))

        def s2d(block: int) -> Callable[[], CandidateResult]:
            return running(lambda: SpaceToDepthOp(
                op.input, BufferTensorDesc(dtype, (n, c * block * block, h // block, w // block)), block))

        yield ("the input read packed (a plain copy of the input buffer: no block moved)",
               lambda: ctx.read(BufferTensorDesc(dtype, op.output.sizes)))
        if isinstance(op, DepthToSpaceOp):
            right = f"{op.order.onnx_name} ({op.order.dml_name})"
            other = DepthSpaceOrder(1 - op.order)
            yield (f"mode {other.onnx_name} ({other.dml_name}) instead of {right}", d2s(b, other))
            for block in range(2, max(2, c) + 1):
                if block == b or c % (block * block):
                    continue
                for order in DepthSpaceOrder:
                    yield (f"blocksize {block} ({order.onnx_name}) instead of {b} ({op.order.onnx_name})",
                           d2s(block, order))
            if h % b == 0 and w % b == 0:
                yield (f"SpaceToDepth with blocksize {b} instead of DepthToSpace (the inverse direction)",
                       s2d(b))
        else:
            yield ("the column-row-depth order (CRD, DML_DEPTH_SPACE_ORDER_COLUMN_ROW_DEPTH) instead of "
                   "SPACE_TO_DEPTH's depth-column-row (DCR)",
                   running(lambda: _CrdSpaceToDepthOp(op.input, op.output, b)))
            for block in range(2, max(h, w, 2) + 1):
                if block == b or h % block or w % block:
                    continue
                yield f"blocksize {block} instead of {b}", s2d(block)
            if c % (b * b) == 0:
                yield (f"DepthToSpace with blocksize {b} instead of SpaceToDepth (the inverse direction)",
                       d2s(b, DepthSpaceOrder.DEPTH_COLUMN_ROW))

    def describe_node(self, node: onnx.NodeProto, graph: Graph, opset: int, dtype: DataType | None,
                      shape: tuple[int, ...] | None, inferred: Any, params: dict[str, Any],
                      flags: list[str]) -> Described:
        node_attrs = attrs(node, opset)
        if "blocksize" not in node_attrs:
            raise ShapeError(f"{node.op_type} needs a blocksize attribute")
        if node.op_type == "SpaceToDepth" and opset >= S2D_MODE_OPSET:
            given = node_attrs.get("mode", "DCR")
            if given != "DCR":  # no case: a SpaceToDepth case is DCR, the one order it describes
                raise Flagged(
                    f"mode: SpaceToDepth mode {given!r} (opset {opset}) makes no case; valid: 'DCR', the one "
                    "order a SpaceToDepth case describes (DmlOperatorSpaceToDepth builds DML_SPACE_TO_DEPTH, "
                    "whose order is DCR, for SpaceToDepth-1 and -13)")
        mode = "DCR"
        if node.op_type == "DepthToSpace" and opset >= MODE_OPSET:
            mode = node_attrs.get("mode", "DCR")
            if mode not in ("DCR", "CRD"):  # refused before any parameter is kept: no case
                raise Flagged(
                    f"mode: DepthToSpace mode {mode!r} (opset {opset}) is not valid; valid: 'DCR' or 'CRD' "
                    "(ONNX's DepthToSpace-11 and -13); ONNX Runtime refuses the model (its DepthToSpace "
                    "kernel supports only 'DCR' and 'CRD' modes); no case")
        flag_no_kernel(flags, node.op_type, opset)  # after the mode: a CRD node's one flag says why no case
        b = int(node_attrs["blocksize"])
        params["blocksize"] = b
        if node.op_type == "DepthToSpace":  # a "mode" names a DepthToSpace node (case_from_node)
            params["mode"] = mode
        if shape is None or dtype is None:
            return None, None, {}, False
        if len(shape) != 4:
            raise ShapeError(f"{node.op_type} needs a 4-D input, got {list(shape)} (rank {len(shape)})")
        check_size(shape, "input")
        op: DepthToSpaceOp | SpaceToDepthOp
        if node.op_type == "DepthToSpace":
            op = DepthToSpaceOp.from_onnx(dtype, shape, b, mode)
        else:
            op = SpaceToDepthOp.from_onnx(dtype, shape, b)
        return op.output.sizes, op.to_dict(), {"input": op.input, "output": op.output}, False

    def case_from_node(self, dtype: DataType, shape: tuple[int, ...], params: dict[str, Any], *,
                       values: str, seed: int, origin: str, opset: int | None = None) -> Case | None:
        """A DepthToSpace case where the node's reading kept a mode (describe_node keeps one for
        every DepthToSpace node it reads, and none for a SpaceToDepth node), a SpaceToDepth case
        otherwise; none where no blocksize was kept (a node whose mode is refused keeps nothing)."""
        if params.get("blocksize") is None:
            return None
        op_type = "DepthToSpace" if "mode" in params else "SpaceToDepth"
        return Case(op_type, dtype, shape, blocksize=params["blocksize"], mode=params.get("mode", ""),
                    values=values, seed=seed, origin=origin, opset=opset)


_CRD = DepthSpaceOrder.COLUMN_ROW_DEPTH


@dataclasses.dataclass(frozen=True, slots=True)
class _CrdSpaceToDepthOp:
    """DML_SPACE_TO_DEPTH1 with COLUMN_ROW_DEPTH: what SpaceToDepth would give in CRD order (a
    diagnosis alternative; the EP never builds it)."""

    input: BufferTensorDesc
    output: BufferTensorDesc
    block_size: int

    def run(self, dst: np.ndarray, src: np.ndarray, *, threads: int | None = None) -> None:
        check_views(dst, src, self.output, self.input, threads, writeable=True)
        out6, src6 = _space_to_depth_views(dst, src, self.block_size, writeable=True, order=_CRD)
        strided_copy(out6, src6, threads=threads)

    def matches(self, src: np.ndarray, got: np.ndarray, *, threads: int | None = None) -> bool:
        check_views(got, src, self.output, self.input, threads, writeable=False, names=("got", "src"))
        out6, src6 = _space_to_depth_views(got, src, self.block_size, writeable=False, order=_CRD)
        return views_equal(src6, out6, threads=threads)

    def to_dict(self) -> dict[str, Any]:
        return {"operator": "DML_OPERATOR_SPACE_TO_DEPTH1", "input": self.input.to_dict(),
                "output": self.output.to_dict(), "block_size": self.block_size,
                "order": DepthSpaceOrder.COLUMN_ROW_DEPTH.name}
