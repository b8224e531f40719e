"""BufferTensorDesc: DML_BUFFER_TENSOR_DESC as a frozen, validated value."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ort_layouts._errors import DataTypeError, DescriptorError, ShapeError, a_type
from ort_layouts.descriptors.broadcast import broadcast_conflict, broadcast_shape
from ort_layouts.descriptors.dtypes import DataType, TensorFlags
from ort_layouts.descriptors.layout import LayoutSpec, calculate_strides, layouts_for_rank
from ort_layouts.descriptors.sequences import int_tuple, is_integer
from ort_layouts.descriptors.size import (
    calc_buffer_tensor_size,
    check_sizes_strides,
    last_element_index,
    packed_strides,
)

__all__ = [
    "MAX_DIMENSION_COUNT",
    "MAX_ELEMENT_COUNT",
    "MINIMUM_BUFFER_ALIGNMENT_IN_BYTES",
    "BufferTensorDesc",
    "check_memoryview",
]

MAX_DIMENSION_COUNT = 8  # DML_TENSOR_DIMENSION_COUNT_MAX1
MAX_ELEMENT_COUNT = 2**32 - 1  # a buffer tensor may not exceed (2^32 - 1) elements
MINIMUM_BUFFER_ALIGNMENT_IN_BYTES = 16  # DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT
_UINT32_MAX = 2**32 - 1
_EXACT_OVERLAP_LIMIT = 1 << 24  # elements enumerated when the stride-order test is inconclusive
# bits per element of each data type that can describe a tensor, and the largest buffer of
# 2^32 - 1 elements of that width (the fast validation path's tables)
_BITWIDTH_OF: dict[DataType, int] = {t: t.bitwidth for t in DataType if t is not DataType.UNKNOWN}
# the largest TotalTensorSizeInBytes of each bit width: 2^32 - 1 elements, rounded up to 4 bytes
_SIZE_LIMIT: dict[int, int] = {
    bits: (-(-MAX_ELEMENT_COUNT * bits // 8) + 3) & ~3 for bits in set(_BITWIDTH_OF.values())}


# the fields of descriptors already validated (data type, sizes, strides, total, alignment and
# flags, each of its exact canonical type) -> their TotalTensorSizeInBytes: a run builds the same
# descriptors for many cases (the suite: 27,544 built, 7,379 distinct)
_VALID: dict[tuple[Any, ...], int] = {}
_VALID_LIMIT = 1 << 16


def _canonical_dims(sizes: Any, strides: Any) -> bool:
    """Whether sizes and strides are already tuples of Python ints, sizes >= 1, strides >= 0 and
    within a UINT field, of one length (then they need no normalising)."""
    if type(sizes) is not tuple or not sizes:
        return False
    for n in sizes:
        if type(n) is not int or n <= 0 or n > _UINT32_MAX:
            return False
    if strides is None:
        return True
    if type(strides) is not tuple or len(strides) != len(sizes):
        return False
    return all(type(s) is int and 0 <= s <= _UINT32_MAX for s in strides)


def _check_uint32(sizes: tuple[int, ...], strides: tuple[int, ...] | None) -> None:
    """Every size and stride must fit DirectML's UINT fields."""
    for what, values in (("sizes", sizes), ("strides", strides or ())):
        for v in values:
            if v > _UINT32_MAX:
                raise DescriptorError(
                    f"{what}-uint32", v, f"{what} {list(values)} holds {v}, over the UINT field's 2^32 - 1")


def _raise_range_error(sizes: tuple[int, ...], strides: tuple[int, ...] | None,
                       elements: int, span: int) -> None:
    """The precise error for sizes or strides out of DirectML's ranges."""
    if elements > MAX_ELEMENT_COUNT:
        raise DescriptorError(
            "element-count", elements,
            f"sizes {list(sizes)} hold {elements} elements, over DirectML's 2^32 - 1")
    raise DescriptorError(
        "element-count", span,
        f"sizes {list(sizes)} with strides {list(strides or packed_strides(sizes))} "
        f"address {span} buffer elements, over DirectML's 2^32 - 1")


def _raise_total_error(dtype: DataType, sizes: tuple[int, ...], strides: tuple[int, ...] | None,
                       total: int, minimum: int, limit: int) -> None:
    """The precise error for a TotalTensorSizeInBytes DirectML would reject."""
    if total < minimum:
        raise DescriptorError(
            "total-size", total,
            f"TotalTensorSizeInBytes {total} is below the minimum implied size {minimum} for "
            f"{dtype.name} sizes {list(sizes)} strides {list(strides or packed_strides(sizes))}")
    if total % 4:
        raise DescriptorError(
            "total-size-multiple-of-4", total,
            f"TotalTensorSizeInBytes {total} is not a multiple of 4 (next valid: {total + 4 - total % 4})")
    raise DescriptorError(
        "total-size", total,
        f"TotalTensorSizeInBytes {total} is over {limit}, the size of 2^32 - 1 "
        f"{dtype.name} elements (DirectML's limit for one buffer tensor)")


@dataclasses.dataclass(frozen=True, slots=True)
class BufferTensorDesc:
    """A DirectML buffer tensor descriptor (DML_BUFFER_TENSOR_DESC), validated at construction.

    Attributes:
        data_type: the element type.
        sizes: logical sizes, in elements, one per dimension (1..8 dimensions, none zero).
        strides: strides in elements (not bytes); 0 broadcasts; ``None`` means packed in
            descending order.
        total_tensor_size_in_bytes: the buffer size; defaults to the minimum implied size.
        guaranteed_base_offset_alignment: 0, or a power of two at least the element size.
        flags: DML_TENSOR_FLAGS.

    >>> d = BufferTensorDesc.packed("float32", [1, 1, 3, 5], layout="NHWC")
    >>> d.strides, d.total_tensor_size_in_bytes
    ((15, 1, 5, 1), 60)
    """

    data_type: DataType
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    total_tensor_size_in_bytes: int = None  # type: ignore[assignment]  # set in __post_init__
    guaranteed_base_offset_alignment: int = 0
    flags: TensorFlags = TensorFlags.NONE

    def __post_init__(self) -> None:
        """Validate once, as DirectML's validation would, normalising fields on the way (a name
        or numpy dtype becomes a DataType, sequences tuples of Python ints). Fields that are
        already canonical are taken as they are, so descriptors built by the library cost one
        pass over their sizes."""
        dtype = self.data_type
        if type(dtype) is not DataType:
            dtype = DataType.coerce(dtype)
            object.__setattr__(self, "data_type", dtype)
        bits = _BITWIDTH_OF.get(dtype)
        if bits is None:
            raise DataTypeError(f"DataType {dtype.name} has no element size; valid: "
                                f"{[t.name for t in _BITWIDTH_OF]}")
        sizes, strides = self.sizes, self.strides
        key = None
        if _canonical_dims(sizes, strides):
            total, align = self.total_tensor_size_in_bytes, self.guaranteed_base_offset_alignment
            flags = self.flags
            if (total is None or type(total) is int) and type(align) is int and type(flags) is TensorFlags:
                key = (dtype, sizes, strides, total, align, flags)  # exact types: equal only to itself
                valid = _VALID.get(key)
                if valid is not None:  # these very fields passed the checks below before
                    object.__setattr__(self, "total_tensor_size_in_bytes", valid)
                    return
        else:
            sizes, strides = check_sizes_strides(sizes, strides)
            _check_uint32(sizes, strides)
            object.__setattr__(self, "sizes", sizes)
            object.__setattr__(self, "strides", strides)
        if len(sizes) > MAX_DIMENSION_COUNT:
            raise DescriptorError(
                "dimension-count", len(sizes),
                f"DimensionCount {len(sizes)} (sizes {list(sizes)}) is over DirectML's maximum of "
                f"{MAX_DIMENSION_COUNT}; valid: 1..{MAX_DIMENSION_COUNT}")
        elements, last = 1, 0
        for n, s in zip(sizes, strides or packed_strides(sizes), strict=True):
            elements *= n
            last += (n - 1) * s
        if elements > MAX_ELEMENT_COUNT or last >= MAX_ELEMENT_COUNT:
            _raise_range_error(sizes, strides, elements, last + 1)
        minimum = (-(-(last + 1) * bits // 8) + 3) & ~3
        total = self.total_tensor_size_in_bytes
        if total is None:
            total = minimum
        elif type(total) is not int:
            if isinstance(total, bool) or not isinstance(total, (int, np.integer)):
                raise DescriptorError(
                    "total-size", total, f"TotalTensorSizeInBytes {total!r} is not an integer")
            total = int(total)
        if total < minimum or total % 4 or total > _SIZE_LIMIT[bits]:
            _raise_total_error(dtype, sizes, strides, total, minimum, _SIZE_LIMIT[bits])
        object.__setattr__(self, "total_tensor_size_in_bytes", total)
        align = self.guaranteed_base_offset_alignment
        if type(align) is not int:
            if isinstance(align, bool) or not isinstance(align, (int, np.integer)):
                raise DescriptorError(
                    "alignment", align,
                    f"GuaranteedBaseOffsetAlignment {align!r} must be an integer >= 0")
            align = int(align)
            object.__setattr__(self, "guaranteed_base_offset_alignment", align)
        element_bytes = max(1, bits // 8)
        if align < 0 or align > _UINT32_MAX or (align and (align & (align - 1) or align < element_bytes)):
            raise DescriptorError(
                "alignment", align,
                f"GuaranteedBaseOffsetAlignment {align} must be 0 or a power of two >= the element "
                f"size ({element_bytes} bytes for {dtype.name}) that fits its UINT field (at most 2^31); "
                "e.g. 16, 32, 64")
        flags = self.flags
        if flags is not TensorFlags.NONE and flags is not TensorFlags.OWNED_BY_DML:
            if (isinstance(flags, bool) or not isinstance(flags, (int, np.integer))
                    or int(flags) not in (0, 1)):
                raise DescriptorError(
                    "flags", flags,
                    f"flags {flags!r} is not a DML_TENSOR_FLAGS value; valid: 0 (NONE), 1 (OWNED_BY_DML)")
            object.__setattr__(self, "flags", TensorFlags(int(flags)))
        if key is not None:
            if len(_VALID) >= _VALID_LIMIT:
                _VALID.clear()
            _VALID[key] = total

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def packed(
        cls,
        data_type: DataType | str | Any,
        sizes: Sequence[int],
        layout: LayoutSpec = "NCHW",
        *,
        broadcast: Sequence[bool] | None = None,
        guaranteed_base_offset_alignment: int = 0,
    ) -> BufferTensorDesc:
        """A packed tensor in ``layout`` (sizes in logical order), strides given explicitly.

        For ranks that have no layout letters (6 to 8), ``layout`` is an axis order; the default
        "NCHW" then means the descending (row-major) order.
        """
        checked, _ = check_sizes_strides(sizes, None)  # a DescriptorError for no sequence of sizes
        rank = len(checked)
        if isinstance(layout, str) and layout.upper() == "NCHW" and rank != 4:
            layout = tuple(range(rank))
        strides = calculate_strides(layout, checked, broadcast)
        return cls(DataType.coerce(data_type), checked, strides,
                   guaranteed_base_offset_alignment=guaranteed_base_offset_alignment)

    @classmethod
    def from_onnx(cls, value: Any, *, dims: dict[str, int] | None = None) -> BufferTensorDesc:
        """The packed descriptor of an ONNX value info, type, tensor type or tensor.

        ``value`` is an ``onnx.ValueInfoProto``, ``TypeProto``, ``TypeProto.Tensor`` or
        ``TensorProto`` (read by its fields: this module does not import onnx). Symbolic
        dimensions are looked up in ``dims``; a rank-0 tensor becomes sizes ``(1,)``.

        Raises:
            ShapeError: ``value`` is none of those, is no tensor, or has a dimension that is
                neither fixed nor pinned by ``dims``; ``dims`` is no mapping of names to
                integers.
        """
        if dims is not None and (not isinstance(dims, Mapping)
                                 or not all(isinstance(k, str) and is_integer(v) for k, v in dims.items())):
            raise ShapeError(f"dims {dims!r:.80} is {a_type(dims)}; valid: a dict of dimension names to "
                             "integers (e.g. {'N': 1}), or None")
        kind = type(value).__name__
        if kind == "TensorProto":
            shape = tuple(int(d) for d in value.dims)
            return cls(DataType.from_onnx(value.data_type), shape or (1,), None)
        if kind in ("ValueInfoProto", "TypeProto"):
            name, type_proto = (value.name, value.type) if kind == "ValueInfoProto" else ("<type>", value)
            if type_proto.WhichOneof("value") != "tensor_type":
                raise ShapeError(
                    f"value {name!r} is a {type_proto.WhichOneof('value') or 'typeless value'}, not a tensor")
            ttype = type_proto.tensor_type
        elif kind == "Tensor" and hasattr(value, "elem_type"):  # TypeProto.Tensor
            name, ttype = "<type>", value
        else:
            raise ShapeError(
                f"from_onnx takes a ValueInfoProto, TypeProto or TensorProto, not {kind}")
        if not ttype.HasField("shape"):
            raise ShapeError(f"value {name!r} has no shape; infer shapes or pin its dimensions")
        shape_list = []
        for axis, d in enumerate(ttype.shape.dim):
            if d.HasField("dim_value"):
                shape_list.append(int(d.dim_value))
            elif d.dim_param and dims and d.dim_param in dims:
                shape_list.append(int(dims[d.dim_param]))
            else:
                label = d.dim_param or "?"
                raise ShapeError(
                    f"value {name!r} has dynamic dimension {label!r} at axis {axis}; pin it "
                    f"(e.g. dims={{{label!r}: 1}})")
        return cls(DataType.from_onnx(ttype.elem_type), tuple(shape_list) or (1,), None)

    @classmethod
    def from_numpy(cls, array: np.ndarray) -> BufferTensorDesc:
        """The descriptor of a numpy array's own layout (non-negative strides only).

        A C-contiguous array gives packed strides (``None``); otherwise size-1 axes get stride 0.

        >>> BufferTensorDesc.from_numpy(np.zeros((2, 3), np.float32).T).strides
        (1, 3)

        Raises:
            DescriptorError: ``array`` is not a numpy array (a list has no layout of its own:
                ``np.asarray`` makes one), or its strides are negative or not whole elements.
            DataTypeError: its dtype has no DirectML data type, or its elements are big-endian.
        """
        if not isinstance(array, np.ndarray):
            raise DescriptorError(
                "array", array,
                f"from_numpy needs a numpy array (its dtype, shape and strides), got {type(array).__name__} "
                f"{array!r:.60}; np.asarray(...) makes one")
        dtype = DataType.from_numpy(array.dtype)
        item = array.dtype.itemsize
        if item > 1 and array.dtype.newbyteorder("<") != array.dtype:  # (its bytes are not DirectML's)
            raise DataTypeError(
                f"from_numpy got an array of big-endian {array.dtype.str!r} elements; a DirectML buffer "
                f"holds little-endian ones; valid: a little-endian array, e.g. "
                f"array.astype(array.dtype.newbyteorder('<'))")
        sizes = tuple(array.shape) or (1,)
        byte_strides = tuple(array.strides) or (item,)
        if array.flags.c_contiguous:
            return cls(dtype, sizes, None)
        if any(s < 0 or s % item for s in byte_strides):
            raise DescriptorError(
                "strides", byte_strides,
                f"numpy strides {byte_strides} (bytes) are not non-negative multiples of {item}")
        strides = tuple(s // item if n > 1 else 0 for s, n in zip(byte_strides, sizes, strict=True))
        if all(n == 1 for n in sizes):
            strides = tuple(0 for _ in sizes)
        return cls(dtype, sizes, strides)

    # ---- queries -----------------------------------------------------------------------
    @property
    def dimension_count(self) -> int:
        """DimensionCount: the number of sizes."""
        return len(self.sizes)

    @property
    def element_count(self) -> int:
        """Logical elements: the product of the sizes."""
        return math.prod(self.sizes)

    @property
    def effective_strides(self) -> tuple[int, ...]:
        """Strides in elements, with the packed ones filled in when ``strides`` is None."""
        return self.strides if self.strides is not None else packed_strides(self.sizes)

    @property
    def byte_strides(self) -> tuple[int, ...]:
        """Strides in bytes, as numpy counts them (not defined for 4-bit types)."""
        if self.data_type.bitwidth % 8:
            raise DescriptorError(
                "byte-strides", self.data_type.name,
                f"{self.data_type.name} elements are {self.data_type.bitwidth} bits: no byte strides")
        item = self.data_type.bitwidth // 8
        return tuple(s * item for s in self.effective_strides)

    @property
    def minimum_implied_size_in_bytes(self) -> int:
        """DMLCalcBufferTensorSize of this descriptor (TotalTensorSizeInBytes may be larger)."""
        return calc_buffer_tensor_size(self.data_type, self.sizes, self.strides)

    @property
    def last_element_index(self) -> int:
        """Buffer index (elements) of the last addressed element."""
        return last_element_index(self.sizes, self.effective_strides)

    @property
    def broadcast_axes(self) -> tuple[int, ...]:
        """Axes of size > 1 whose stride is 0 (their elements repeat)."""
        return tuple(a for a, (n, s) in enumerate(zip(self.sizes, self.effective_strides, strict=True))
                     if s == 0 and n > 1)

    def offset_of(self, index: Sequence[int]) -> int:
        """Buffer offset, in elements, of a logical index: ``dot(index, strides)``.

        >>> BufferTensorDesc("uint8", (2, 2, 3)).offset_of((1, 0, 1))  # 'H' in the DHW example
        7
        """
        idx = full_index(index, self.sizes)
        return sum(i * s for i, s in zip(idx, self.effective_strides, strict=True))

    def overlaps(self) -> bool:
        """Whether two distinct logical elements share a buffer offset, broadcast axes aside.

        Exact: a stride-order test settles most descriptors; the rest (interleaved strides) are
        enumerated when they hold at most 2^24 elements, and reported as overlapping beyond that.
        """
        axes = [(s, n) for n, s in zip(self.sizes, self.effective_strides, strict=True)
                if n > 1 and s > 0]
        axes.sort()
        reach = 0
        for stride, size in axes:
            if stride <= reach:
                break
            reach += (size - 1) * stride
        else:
            return False
        count = math.prod(n for _, n in axes)
        if count > _EXACT_OVERLAP_LIMIT:
            return True
        offsets = np.zeros(1, dtype=np.int64)
        for stride, size in axes:
            offsets = (offsets[:, None] + np.arange(size, dtype=np.int64)[None, :] * stride).ravel()
        return bool(np.unique(offsets).size != offsets.size)

    @property
    def addressed_element_count(self) -> int:
        """Distinct buffer elements the descriptor reads or writes."""
        axes = [(s, n) for n, s in zip(self.sizes, self.effective_strides, strict=True)
                if n > 1 and s > 0]
        if not self.overlaps():
            return math.prod(n for _, n in axes)
        if math.prod(n for _, n in axes) > _EXACT_OVERLAP_LIMIT:
            raise DescriptorError(
                "overlap-too-large", list(self.effective_strides),
                f"strides {list(self.effective_strides)} overlap over more than 2^24 elements "
                f"(sizes {list(self.sizes)}): the addressed element count is not enumerated")
        offsets = np.zeros(1, dtype=np.int64)
        for stride, size in axes:
            offsets = (offsets[:, None] + np.arange(size, dtype=np.int64)[None, :] * stride).ravel()
        return int(np.unique(offsets).size)

    @property
    def padding_bytes(self) -> int:
        """Bytes of the buffer (TotalTensorSizeInBytes) that belong to no element."""
        used = -(-self.addressed_element_count * self.data_type.bitwidth // 8)
        return self.total_tensor_size_in_bytes - used

    @property
    def is_packed(self) -> bool:
        """Packed as the seeds define it: every element its own offset and no gap between them
        (in any axis order: a packed NHWC tensor is packed)."""
        return (not self.broadcast_axes and not self.overlaps()
                and self.last_element_index + 1 == self.element_count)

    def matching_layouts(self) -> tuple[str, ...]:
        """Every layout name (named ones first) whose packed strides these are.

        >>> BufferTensorDesc("float32", (2, 3, 1), (1, 2, 6)).matching_layouts()
        ('WHD', 'WCN')
        """
        strides = self.effective_strides
        return tuple(name for name in layouts_for_rank(self.dimension_count)
                     if calculate_strides(name, self.sizes) == strides)

    def layout(self) -> str | None:
        """The named layout whose packed strides these are (first match in NAMED_LAYOUTS order).

        Strides must match exactly, size-1 axes included: the seeds' packed NCHW {15,15,5,1} and
        packed NHWC {15,1,5,1} for sizes {1,1,3,5} are told apart. Where several names still
        match, the first wins (:meth:`matching_layouts` lists them all).
        """
        strides = self.effective_strides
        for name in layouts_for_rank(self.dimension_count):
            if calculate_strides(name, self.sizes) == strides:
                return name
        return None

    def memory_order(self) -> tuple[int, ...] | None:
        """The axis order (outermost first) whose packed strides these are, if any."""
        order = tuple(sorted(range(self.dimension_count),
                             key=lambda a: (-self.effective_strides[a], a)))
        return order if calculate_strides(order, self.sizes) == self.effective_strides else None

    # ---- transformations (each matches what the DML EP builds) ---------------------------
    def _replace_layout(self, sizes: tuple[int, ...], strides: tuple[int, ...]) -> BufferTensorDesc:
        """``dataclasses.replace(self, sizes=sizes, strides=strides)``, validated as always, with
        less overhead."""
        return type(self)(self.data_type, sizes, strides, self.total_tensor_size_in_bytes,
                          self.guaranteed_base_offset_alignment, self.flags)

    def with_strides(self, strides: Sequence[int] | None, *,
                     total_tensor_size_in_bytes: int | None = None) -> BufferTensorDesc:
        """The same descriptor with other strides (and by default the new minimum size)."""
        return type(self)(self.data_type, self.sizes, strides,  # type: ignore[arg-type]  # checked there
                          total_tensor_size_in_bytes,  # type: ignore[arg-type]  # None: the minimum
                          self.guaranteed_base_offset_alignment, self.flags)

    def transpose(self, perm: Sequence[int] | None = None) -> BufferTensorDesc:
        """The EP's Transpose input: ``sizes[i] = sizes[perm[i]]``, ``strides[i] = strides[perm[i]]``.

        Omitted ``perm`` reverses the axes (ONNX's default). The buffer size is unchanged.

        >>> d = BufferTensorDesc("float32", (2, 3, 4)).transpose((2, 0, 1))
        >>> d.sizes, d.strides, d.total_tensor_size_in_bytes
        ((4, 2, 3), (1, 12, 4), 96)
        """
        rank = self.dimension_count
        p = tuple(range(rank - 1, -1, -1)) if perm is None else normalize_perm(perm, rank)
        st = self.effective_strides
        return self._replace_layout(tuple([self.sizes[a] for a in p]), tuple([st[a] for a in p]))

    def broadcast_to(self, shape: Sequence[int]) -> BufferTensorDesc:
        """The EP's Expand input: ONNX multidirectional broadcasting, right-aligned, stride 0.

        The result has the broadcast of ``sizes`` and ``shape``; a source axis of size 1 (or a
        missing leading axis) that is stretched gets stride 0. The buffer size is unchanged.

        >>> BufferTensorDesc("float32", (2, 1, 4)).broadcast_to((2, 3, 4)).strides
        (4, 0, 1)
        """
        checked = int_tuple(shape, "broadcast shape")
        target = list(checked)
        if any(s < 0 for s in target):
            raise ShapeError(f"broadcast shape {target} has a negative dimension")
        sizes = broadcast_shape(self.sizes, checked)
        if sizes is None:  # a pair of sizes conflicts: which one, asked only now
            conflict = broadcast_conflict(self.sizes, checked)
            assert conflict is not None
            axis, a, b = conflict
            raise ShapeError(
                f"cannot broadcast sizes {list(self.sizes)} to shape {target}: axis {axis} "
                f"(right-aligned) has {a} and {b}; each pair must be equal or contain a 1")
        if 0 in sizes:
            raise ShapeError(f"broadcast of {list(self.sizes)} to {target} has a 0-sized axis, "
                             "which no DirectML descriptor can hold")
        extra = len(sizes) - self.dimension_count  # leading axes the source has not: stride 0
        strides = (0,) * extra + tuple([0 if a == 1 else s for a, s in
                                        zip(self.sizes, self.effective_strides, strict=True)])
        return self._replace_layout(sizes, strides)

    def coerce_rank(self, minimum: int = 4, maximum: int = MAX_DIMENSION_COUNT) -> BufferTensorDesc:
        """The EP's rank coercion: leading 1s (stride 0) up to ``minimum``, and adjacent
        collapsible axes folded (leftmost first) down to ``maximum``.

        >>> BufferTensorDesc("float32", (5,)).coerce_rank(4).sizes
        (1, 1, 1, 5)
        """
        if not (is_integer(minimum) and is_integer(maximum)
                and 1 <= minimum <= maximum <= MAX_DIMENSION_COUNT):
            raise DescriptorError(
                "dimension-count", (minimum, maximum),
                f"rank range minimum {minimum!r}, maximum {maximum!r} is not valid; need integers "
                f"1 <= minimum <= maximum <= {MAX_DIMENSION_COUNT}")
        sizes = list(self.sizes)
        strides = list(self.effective_strides)
        while len(sizes) > maximum:
            for i in range(len(sizes) - 1):
                if sizes[i] == 1 or sizes[i + 1] == 1 or strides[i] == sizes[i + 1] * strides[i + 1]:
                    keep = strides[i + 1] if sizes[i + 1] > 1 else strides[i]
                    sizes[i:i + 2] = [sizes[i] * sizes[i + 1]]
                    strides[i:i + 2] = [keep]
                    break
            else:
                raise DescriptorError(
                    "dimension-count", len(sizes),
                    f"sizes {sizes} strides {strides} cannot fold to {maximum} dimensions: "
                    "no adjacent axes are collapsible")
        pad = max(0, minimum - len(sizes))
        return self._replace_layout((1,) * pad + tuple(sizes), (0,) * pad + tuple(strides))

    def as_uint32_view(self) -> BufferTensorDesc:
        """The EP's legacy view of a 64-bit integer tensor on hardware without 64-bit support:
        UINT32 with every stride doubled (the low word of each little-endian element), and the
        64-bit tensor's own buffer size (4 bytes of end padding past the last low word)."""
        if not self.data_type.is_64bit_integer:
            raise DescriptorError(
                "data-type", self.data_type.name,
                f"the 32-bit view applies to INT64/UINT64, not {self.data_type.name}")
        return dataclasses.replace(
            self, data_type=DataType.UINT32,
            strides=tuple(2 * s for s in self.effective_strides),
            guaranteed_base_offset_alignment=self.guaranteed_base_offset_alignment)

    def validate(
        self, *, min_dimension_count: int = 1, max_dimension_count: int = MAX_DIMENSION_COUNT,
        is_output: bool = False,
    ) -> None:
        """Check the rules that depend on the operator: its dimension-count range, and for an
        output, that no two elements share an offset (broadcast included). Construction already
        checked the rest.

        Raises:
            DescriptorError: a rule is broken, naming it; or the arguments are not a range of
                integers ``1 <= min_dimension_count <= max_dimension_count <= 8`` and a bool
                ``is_output``.
        """
        n = self.dimension_count
        if (type(min_dimension_count) is not int or type(max_dimension_count) is not int
                or type(is_output) is not bool):
            for what, given in (("min_dimension_count", min_dimension_count),
                                ("max_dimension_count", max_dimension_count)):
                if not is_integer(given):
                    raise DescriptorError("dimension-count", given,
                                          f"{what} {given!r:.80} is {a_type(given)}; valid: an integer "
                                          f"1..{MAX_DIMENSION_COUNT}")
            if not isinstance(is_output, (bool, np.bool_)):  # "no" or [] would silently be taken by truth
                raise DescriptorError("is-output", is_output, f"is_output {is_output!r:.80} is "
                                                              f"{a_type(is_output)}; valid: True or False")
        if not 1 <= min_dimension_count <= n <= max_dimension_count <= MAX_DIMENSION_COUNT:
            if not 1 <= min_dimension_count <= max_dimension_count <= MAX_DIMENSION_COUNT:
                raise DescriptorError(
                    "dimension-count", (min_dimension_count, max_dimension_count),
                    f"operator range min_dimension_count {min_dimension_count}, max_dimension_count "
                    f"{max_dimension_count} is not valid; valid: integers 1 <= min_dimension_count <= "
                    f"max_dimension_count <= {MAX_DIMENSION_COUNT}")
            raise DescriptorError(
                "dimension-count", n,
                f"DimensionCount {n} (sizes {list(self.sizes)}) is outside the operator's range "
                f"{min_dimension_count}..{max_dimension_count}")
        # packed strides (None) give every element its own offset: nothing to check
        if is_output and self.strides is not None and (self.broadcast_axes or self.overlaps()):
            raise DescriptorError(
                "output-overlap", list(self.effective_strides),
                f"output strides {list(self.effective_strides)} for sizes {list(self.sizes)} make "
                "distinct elements share a buffer offset; an output must not overlap; valid: strides "
                f"that give each element its own offset, e.g. packed {list(packed_strides(self.sizes))}")

    # ---- numpy views -------------------------------------------------------------------
    def view(self, buffer: np.ndarray | bytes | bytearray | memoryview) -> np.ndarray:
        """A read-only numpy view of ``buffer`` through this descriptor.

        Warning:
            Like ``numpy.lib.stride_tricks.as_strided``, a wrong descriptor reads outside the
            buffer. This checks the buffer holds ``total_tensor_size_in_bytes`` first.
        """
        if not isinstance(buffer, (np.ndarray, bytes, bytearray, memoryview)):
            raise DescriptorError("buffer", buffer,
                                  f"buffer {buffer!r:.80} is {a_type(buffer)}; valid: a numpy array, bytes, "
                                  "bytearray or memoryview")
        if isinstance(buffer, np.ndarray) and (not buffer.flags.c_contiguous or buffer.dtype.hasobject):
            # its bytes are not one run of memory (a view of them would be a copy), or are references
            problem = "holds Python objects" if buffer.dtype.hasobject else \
                f"is not C-contiguous (strides {buffer.strides})"
            raise DescriptorError(
                "buffer", buffer,
                f"buffer array of dtype {buffer.dtype} and shape {list(buffer.shape)} {problem}; valid: a "
                "C-contiguous array of numbers (np.ascontiguousarray makes one), bytes, bytearray or "
                "memoryview")
        check_memoryview(buffer)
        raw = np.frombuffer(buffer, dtype=np.uint8) if not isinstance(buffer, np.ndarray) \
            else buffer.reshape(-1).view(np.uint8)
        if raw.nbytes < self.total_tensor_size_in_bytes:
            raise DescriptorError(
                "buffer-size", raw.nbytes,
                f"buffer of {raw.nbytes} bytes is smaller than TotalTensorSizeInBytes "
                f"{self.total_tensor_size_in_bytes}")
        dtype = self.data_type.to_numpy().newbyteorder("<")  # DirectML buffers are little-endian
        typed = raw[: raw.nbytes - raw.nbytes % dtype.itemsize].view(dtype)
        return np.lib.stride_tricks.as_strided(
            typed, shape=self.sizes, strides=self.byte_strides, writeable=False)

    # ---- export ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A plain dict (JSON-ready) that :meth:`from_dict` turns back into this descriptor."""
        return {
            "data_type": self.data_type.name,
            "sizes": list(self.sizes),
            "strides": None if self.strides is None else list(self.strides),
            "total_tensor_size_in_bytes": self.total_tensor_size_in_bytes,
            "guaranteed_base_offset_alignment": self.guaranteed_base_offset_alignment,
            "flags": int(self.flags),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BufferTensorDesc:
        """Inverse of :meth:`to_dict` (``data_type`` may be a name or a DirectML value; any
        mapping, sizes and strides as lists or tuples).

        Raises:
            DescriptorError: ``data`` is no mapping, lacks data_type or sizes, holds another key,
                or a field is not what the descriptor takes (as the constructor checks it).
            DataTypeError: ``data_type`` is neither a data type name nor a DML_TENSOR_DATA_TYPE
                value.
        """
        if not isinstance(data, Mapping):
            raise DescriptorError("dict-keys", data, f"a descriptor dict is needed, got {data!r}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known, key=str)
        if unknown:
            raise DescriptorError("dict-keys", unknown,
                                  f"unknown descriptor keys {unknown}; valid: {sorted(known)}")
        if "data_type" not in data or "sizes" not in data:
            raise DescriptorError("dict-keys", sorted(data, key=str),
                                  f"a descriptor needs data_type and sizes; got keys {sorted(data, key=str)}")
        d = dict(data)
        dt = d["data_type"]
        if isinstance(dt, bool) or not isinstance(dt, (int, str)):
            raise DataTypeError(f"descriptor data_type {dt!r} is neither a data type name nor a "
                                f"DML_TENSOR_DATA_TYPE value; valid: {[t.name for t in DataType.known()]}")
        d["data_type"] = DataType(dt) if isinstance(dt, int) else DataType.from_name(dt)
        for key in ("sizes", "strides"):  # JSON's arrays; the constructor checks anything else
            if type(d.get(key)) is list:
                d[key] = tuple(d[key])
        return cls(**d)

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> BufferTensorDesc:
        """Inverse of :meth:`to_json`.

        Raises:
            DescriptorError: ``text`` is not JSON text, or as :meth:`from_dict`.
            DataTypeError: as :meth:`from_dict`.
        """
        if not isinstance(text, (str, bytes, bytearray)):
            raise DescriptorError("json", text, f"descriptor JSON text is needed, got {type(text).__name__} "
                                                f"{text!r:.60}")
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as e:  # JSONDecodeError, bytes that are no UTF-8, or nesting
            raise DescriptorError("json", text, f"descriptor JSON {text!r:.60} does not parse: "
                                                f"{e if isinstance(e, ValueError) else 'nested too deeply'}"
                                  ) from None
        return cls.from_dict(data)

    def to_cpp(self, name: str = "tensorDesc") -> str:
        """A C++ initializer a native DirectML developer can paste.

        >>> print(BufferTensorDesc("float32", (2, 3), (0, 1)).to_cpp("x"))
        UINT xSizes[2] = {2, 3};
        UINT xStrides[2] = {0, 1};
        DML_BUFFER_TENSOR_DESC x = {
            DML_TENSOR_DATA_TYPE_FLOAT32,  // DataType
            DML_TENSOR_FLAG_NONE,  // Flags
            2,  // DimensionCount
            xSizes,  // Sizes
            xStrides,  // Strides
            12,  // TotalTensorSizeInBytes
            0,  // GuaranteedBaseOffsetAlignment
        };
        DML_TENSOR_DESC xTensor = {DML_TENSOR_TYPE_BUFFER, &x};
        """
        check_cpp_name(name)
        n = self.dimension_count
        lines = [f"UINT {name}Sizes[{n}] = {{{', '.join(map(str, self.sizes))}}};"]
        strides_ref = "nullptr"
        if self.strides is not None:
            lines.append(f"UINT {name}Strides[{n}] = {{{', '.join(map(str, self.strides))}}};")
            strides_ref = f"{name}Strides"
        flags = "DML_TENSOR_FLAG_OWNED_BY_DML" if self.flags else "DML_TENSOR_FLAG_NONE"
        fields = [
            (self.data_type.dml_name, "DataType"),
            (flags, "Flags"),
            (str(n), "DimensionCount"),
            (f"{name}Sizes", "Sizes"),
            (strides_ref, "Strides"),
            (str(self.total_tensor_size_in_bytes), "TotalTensorSizeInBytes"),
            (str(self.guaranteed_base_offset_alignment), "GuaranteedBaseOffsetAlignment"),
        ]
        lines += cpp_struct("DML_BUFFER_TENSOR_DESC", name, fields)
        lines.append(f"DML_TENSOR_DESC {name}Tensor = {{DML_TENSOR_TYPE_BUFFER, &{name}}};")
        return "\n".join(lines)


def full_index(index: Any, sizes: tuple[int, ...], *, leading: bool = False) -> tuple[int, ...]:
    """``index`` as a tuple of ints, one per axis of ``sizes``, each within its axis; with
    ``leading``, an index of fewer axes (an ONNX output's rank below the descriptors') gets its
    leading axes as 0.

    Raises:
        ShapeError: ``index`` is no sequence of integers, has another number of axes, or is out
            of range at an axis, naming it and what is valid.
    """
    given = idx = int_tuple(index, "index")
    rank = len(sizes)
    if len(idx) != rank:
        if not leading or len(idx) > rank:
            fewer = " or fewer (the leading axes then 0)" if leading else ""
            axes = "axis" if len(idx) == 1 else "axes"
            raise ShapeError(f"index {list(idx)} has {len(idx)} {axes}; valid: {rank}{fewer}, for sizes "
                             f"{list(sizes)}")
        idx = (0,) * (rank - len(idx)) + idx
    for axis, (i, n) in enumerate(zip(idx, sizes, strict=True)):
        if not 0 <= i < n:
            raise ShapeError(f"index {list(given)} is out of range at axis {axis} of sizes {list(sizes)}; "
                             f"valid: 0..{n - 1} there")
    return idx


def normalize_perm(perm: Sequence[int], rank: int) -> tuple[int, ...]:
    """Check that ``perm`` is a permutation of ``0..rank-1`` (negative axes are not allowed)."""
    p = int_tuple(perm, "perm")
    if sorted(p) != list(range(rank)):
        raise ShapeError(f"perm {list(p)} is not a permutation of 0..{rank - 1} (rank {rank})")
    return p


#: C++'s keywords and alternative tokens (C++23): no variable may be named by one
_CPP_KEYWORDS = frozenset((
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case",
    "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const",
    "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await", "co_return",
    "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
    "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int",
    "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return",
    "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch",
    "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"))


def check_cpp_name(name: object) -> None:
    """Raise DescriptorError ("cpp-name") unless ``name`` is an ASCII C++ identifier that is no
    keyword, the name ``to_cpp`` gives its initializers."""
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        raise DescriptorError("cpp-name", name, f"{name!r} is not a C++ identifier")
    if name in _CPP_KEYWORDS:
        raise DescriptorError("cpp-name", name, f"{name!r} is a C++ keyword, which cannot name a variable; "
                                                f"valid: any other identifier, e.g. {name + 'Desc'!r}")


def cpp_struct(type_name: str, name: str, fields: Sequence[tuple[str, str]]) -> list[str]:
    """The C++ lines of a struct initializer ``type_name name = {...};``, one field a line: its
    value, then its name in a comment (``fields``: (value, field name) pairs, in order)."""
    return [f"{type_name} {name} = {{", *(f"    {value},  // {field}" for value, field in fields), "};"]


def check_memoryview(buffer: object) -> None:
    """Refuse a memoryview whose bytes are not one run of memory (a strided slice), which numpy
    cannot read as a buffer; anything else passes.

    Raises:
        DescriptorError: ("buffer") the memoryview is not C-contiguous, naming its strides.
    """
    if isinstance(buffer, memoryview) and not buffer.c_contiguous:
        raise DescriptorError(
            "buffer", buffer,
            f"buffer memoryview of shape {list(buffer.shape or ())} and strides {list(buffer.strides or ())} "
            "is not C-contiguous; valid: a C-contiguous memoryview (its bytes one run of memory), bytes, "
            "bytearray or a numpy array")
