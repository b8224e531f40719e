"""Raw buffers: a buffer's bytes, its elements as unsigned integers of their width, and the
strided view a DirectML buffer tensor descriptor gives of them.

Elements are moved as unsigned integers of their width, so every bit pattern is kept (NaN
payloads, -0.0). UINT4/INT4 are packed nibbles, the low nibble first (element 2k in bits 0-3 of
byte k).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ort_layouts._errors import ArgumentError, DataTypeError, DescriptorError, ShapeError, a_type
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc, check_memoryview
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import TEXT_TYPES, is_integer
from ort_layouts.reference.compare import as_tensor
from ort_layouts.reference.copy import strided_copy

__all__ = [
    "UINT_OF_SIZE",
    "buffer_elements",
    "check_buffer_size",
    "check_threads",
    "check_view_lists",
    "check_views",
    "is_list",
    "is_nibble",
    "nibble_values",
    "pack",
    "raw_bytes",
    "store_nibbles",
    "strided_view",
    "unpack",
    "values_dtype",
]

# the unsigned integer type of each element size in bytes
UINT_OF_SIZE: dict[int, type[np.unsignedinteger[Any]]] = {
    1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def raw_bytes(buffer: Any) -> np.ndarray:
    """The bytes of ``buffer`` as a flat uint8 array (an array's bytes in C order)."""
    if isinstance(buffer, np.ndarray):
        if buffer.dtype.hasobject:  # references, not bytes
            raise DescriptorError("buffer", buffer.dtype.name,
                                  f"buffer array of dtype {buffer.dtype.name} holds Python objects; pass "
                                  "bytes, bytearray, memoryview or a numpy array of numbers")
        arr = buffer if buffer.flags.c_contiguous else np.ascontiguousarray(buffer)
        return arr.reshape(-1).view(np.uint8)
    check_memoryview(buffer)
    try:
        return np.frombuffer(buffer, dtype=np.uint8)
    except TypeError as e:
        raise DescriptorError(
            "buffer", type(buffer).__name__,
            f"buffer of type {type(buffer).__name__} is not bytes-like; pass bytes, bytearray, "
            "memoryview or a numpy array") from e


def check_buffer_size(raw: np.ndarray, desc: BufferTensorDesc, what: str, *, addressed: bool = False) -> None:
    """Check the buffer holds TotalTensorSizeInBytes, or with ``addressed`` only the bytes up to
    the last element (an input array need not carry the rounding to 4 bytes)."""
    if addressed:
        needed = -(-(desc.last_element_index + 1) * desc.data_type.bitwidth // 8)
        label = f"the {needed} bytes its descriptor addresses"
    else:
        needed = desc.total_tensor_size_in_bytes
        label = f"its descriptor's TotalTensorSizeInBytes {needed}"
    if raw.nbytes < needed:
        raise DescriptorError(
            "buffer-size", raw.nbytes, f"{what} buffer of {raw.nbytes} bytes is smaller than {label}")


def is_nibble(dtype: DataType) -> bool:
    """Whether elements of ``dtype`` are 4-bit nibbles."""
    return dtype.bitwidth == 4


def values_dtype(dtype: DataType) -> np.dtype[Any]:
    """The numpy dtype that holds a data type's logical values: its own, or for the 4-bit types
    the one :func:`unpack` gives (UINT4 uint8 0..15, INT4 int8 -8..7)."""
    if is_nibble(dtype):
        return np.dtype(np.int8 if dtype is DataType.INT4 else np.uint8)
    return dtype.to_numpy()


def nibble_values(nibbles: np.ndarray, dtype: DataType) -> np.ndarray:
    """The logical values of 4-bit elements held one per byte (uint8 0..15, as
    :func:`buffer_elements` gives them): UINT4's as they are, INT4's sign-extended to int8
    -8..7 (the dtype of :func:`values_dtype`)."""
    if dtype is DataType.INT4:
        return ((nibbles.astype(np.int8) << 4) >> 4).astype(np.int8)
    return nibbles


def buffer_elements(raw: np.ndarray, dtype: DataType) -> np.ndarray:
    """The buffer as a flat array of buffer elements, each an unsigned integer of its width
    (a view for whole-byte types; for 4-bit types a new uint8 array, one nibble each)."""
    if is_nibble(dtype):
        nibbles = np.empty(raw.size * 2, dtype=np.uint8)
        np.bitwise_and(raw, 0x0F, out=nibbles[0::2])
        np.right_shift(raw, 4, out=nibbles[1::2])
        return nibbles
    item = dtype.bitwidth // 8
    usable = raw.size - raw.size % item
    return raw[:usable].view(UINT_OF_SIZE[item])


def store_nibbles(nibbles: np.ndarray, raw: np.ndarray) -> None:
    """Write one-nibble-per-byte ``nibbles`` back into the packed bytes ``raw``."""
    np.left_shift(nibbles[1::2], 4, out=raw)
    np.bitwise_or(raw, nibbles[0::2] & 0x0F, out=raw)


def strided_view(elements: np.ndarray, desc: BufferTensorDesc, *, writeable: bool) -> np.ndarray:
    """``elements`` seen through ``desc``.

    Warning:
        Like ``numpy.lib.stride_tricks.as_strided`` this trusts the descriptor; the caller has
        checked the buffer holds every element it addresses (the ndarray constructor still
        refuses a view that would reach past ``elements``).
    """
    item = elements.itemsize
    # the ndarray constructor is ``as_strided`` without its per-call array-interface round trip
    view = np.ndarray(desc.sizes, elements.dtype, elements, 0,
                      tuple([s * item for s in desc.effective_strides]))
    if not writeable:
        view.flags.writeable = False
    return view


def _check_desc(desc: Any) -> None:
    """Refuse a ``desc`` that is no BufferTensorDesc (pack's and unpack's first argument)."""
    if not isinstance(desc, BufferTensorDesc):
        raise DescriptorError("tensor", desc, f"desc {desc!r:.80} is {a_type(desc)}; valid: a "
                                              "BufferTensorDesc (e.g. BufferTensorDesc('float32', (2, 3)))")


def _check_shape(desc: BufferTensorDesc, shape: tuple[int, ...]) -> None:
    if tuple(n for n in shape if n != 1) != tuple(n for n in desc.sizes if n != 1):
        raise ShapeError(
            f"array shape {list(shape)} does not fit descriptor sizes {list(desc.sizes)} "
            "(they must agree up to size-1 axes)")


def pack(desc: BufferTensorDesc, array: np.ndarray) -> np.ndarray:
    """The buffer (uint8, ``desc.total_tensor_size_in_bytes``) that holds ``array`` laid out by
    ``desc``: the inverse of ``desc.view`` for a descriptor without overlapping elements.

    Bytes that belong to no element are 0. ``array`` has the descriptor's sizes, up to size-1
    axes (a [3, 4] array fills a [1, 1, 3, 4] descriptor); a big-endian array's values are
    stored little-endian, as DirectML's buffers hold them. For UINT4/INT4 the low 4 bits of each
    value are stored, low nibble first.

    Raises:
        ShapeError: the shapes do not fit.
        DataTypeError: the array's dtype is not the descriptor's data type.
        DescriptorError: ``desc`` is no BufferTensorDesc ("tensor").
    """
    _check_desc(desc)
    arr = as_tensor(array, "array")
    if isinstance(arr, str):  # a ragged nested list
        raise ShapeError(arr)
    _check_shape(desc, arr.shape)
    raw = np.zeros(desc.total_tensor_size_in_bytes, dtype=np.uint8)
    if is_nibble(desc.data_type):
        if arr.dtype.kind not in "iub":
            raise DataTypeError(
                f"{desc.data_type.name} values must be integers, got dtype {arr.dtype.name}")
        nibbles = np.zeros(raw.size * 2, dtype=np.uint8)
        view = strided_view(nibbles, desc, writeable=True)
        np.copyto(view, (arr.astype(np.int64) & 0x0F).astype(np.uint8).reshape(desc.sizes))
        store_nibbles(nibbles, raw)
        return raw
    try:
        source_type = DataType.from_numpy(arr.dtype)
    except DataTypeError as e:
        raise DataTypeError(f"cannot pack dtype {arr.dtype} as {desc.data_type.name}: {e}") from e
    if source_type != desc.data_type:
        raise DataTypeError(
            f"array dtype {arr.dtype.name} is {source_type.name}, descriptor is "
            f"{desc.data_type.name}; cast the array first")
    item = desc.data_type.bitwidth // 8
    little = arr.dtype.newbyteorder("<")  # DirectML's buffers are little-endian
    if arr.dtype != little:
        arr = arr.astype(little)
    view = strided_view(buffer_elements(raw, desc.data_type), desc, writeable=True)
    strided_copy(view, arr.view(UINT_OF_SIZE[item]).reshape(desc.sizes))
    return raw


def unpack(desc: BufferTensorDesc, buffer: Any) -> np.ndarray:
    """The logical values of ``buffer`` read through ``desc`` (a C-ordered copy of ``desc.view``).

    UINT4 gives uint8 values 0..15, INT4 sign-extended int8 values -8..7.

    Raises:
        DescriptorError: ``desc`` is no BufferTensorDesc ("tensor"), or ``buffer`` is no
            bytes-like buffer ("buffer") or too small ("buffer-size").
    """
    _check_desc(desc)
    raw = raw_bytes(buffer)
    check_buffer_size(raw, desc, "the", addressed=True)
    dtype = desc.data_type
    if is_nibble(dtype):
        return nibble_values(np.ascontiguousarray(strided_view(buffer_elements(raw, dtype), desc,
                                                                writeable=False)), dtype)
    out = np.empty(desc.sizes, dtype=dtype.to_numpy())
    strided_copy(out.view(UINT_OF_SIZE[dtype.bitwidth // 8]),
                 strided_view(buffer_elements(raw, dtype), desc, writeable=False))
    return out


_SAME_DTYPE = "valid: views of one dtype (the unsigned integers of the element width)"


def is_list(items: Any) -> bool:
    """Whether ``items`` can be a list of buffers or views, one per tensor: a list, a tuple or
    another sequence, but not text or bytes (a sequence of characters or ints) nor an array (one
    buffer, not a list of them)."""
    return type(items) is list or type(items) is tuple or (
        not isinstance(items, (*TEXT_TYPES, np.ndarray)) and isinstance(items, Sequence))


def check_threads(threads: Any) -> None:
    """Refuse a ``threads`` argument that is neither None (one per CPU) nor an integer >= 1.

    Raises:
        ArgumentError: naming the value and what is valid.
    """
    if threads is not None and not (is_integer(threads) and threads >= 1):
        raise ArgumentError(f"threads {threads!r:.80} is not valid; valid: an integer >= 1, or None for one "
                            "per CPU (at most 8)")


def check_views(dst: Any, src: Any, dst_desc: BufferTensorDesc, src_desc: BufferTensorDesc, threads: Any, *,
                writeable: bool, names: tuple[str, str] = ("dst", "src")) -> None:
    """Refuse what an operator's ``run`` (``writeable``: it writes ``dst``) or ``matches`` cannot
    take: views that are no numpy arrays of their descriptors' sizes and of one dtype (an
    operator's own strided views of them would reach past their memory), a read-only ``dst``,
    or a bad ``threads`` (:func:`check_threads`). Views as the reference executor makes them
    pass at the cost of a few comparisons.

    Raises:
        DescriptorError: a view is not what its descriptor describes ("view"), naming it, its
            shape or dtype and the descriptor's sizes.
        ArgumentError: ``threads`` is not valid.
    """
    if (threads is None and type(dst) is np.ndarray and type(src) is np.ndarray
            and dst.shape == dst_desc.sizes and src.shape == src_desc.sizes and dst.dtype is src.dtype
            and (not writeable or dst.flags.writeable)):
        return  # the views the reference executor makes; anything else is looked at in full below
    _check_view(dst, dst_desc, names[0])
    _check_view(src, src_desc, names[1])
    if dst.dtype != src.dtype:
        raise DescriptorError("view", dst.dtype.name, f"{names[0]} of dtype {dst.dtype.name} and {names[1]} "
                                                      f"of dtype {src.dtype.name} differ; {_SAME_DTYPE}")
    if writeable and not dst.flags.writeable:
        raise DescriptorError("view", names[0], f"{names[0]} is read-only; valid: a writeable view")
    check_threads(threads)


def _check_view(view: Any, desc: BufferTensorDesc, name: str) -> None:
    """Refuse a ``view`` that is no numpy array of ``desc``'s sizes."""
    valid = f"valid: a numpy array of sizes {list(desc.sizes)}, as the descriptor's view"
    if not isinstance(view, np.ndarray):
        raise DescriptorError("view", view, f"{name} {view!r:.80} is {a_type(view)}; {valid}")
    if view.shape != desc.sizes:
        raise DescriptorError("view", list(view.shape),
                              f"{name} of shape {list(view.shape)} does not fit its descriptor; {valid}")


def check_view_lists(dsts: Any, srcs: Any, dst_descs: Sequence[BufferTensorDesc],
                     src_descs: Sequence[BufferTensorDesc], threads: Any, *, writeable: bool,
                     names: tuple[str, str] = ("dsts", "srcs")) -> None:
    """:func:`check_views` for an operator of several tensors (``run_all``, ``matches_all``): one
    view per descriptor in each list, each of its descriptor's sizes, all of one dtype.

    Raises:
        DescriptorError: a list is no sequence or holds another count of views ("view-count"),
            or a view is not valid ("view").
        ArgumentError: ``threads`` is not valid.
    """
    for views, descs, name in ((dsts, dst_descs, names[0]), (srcs, src_descs, names[1])):
        if not is_list(views):
            raise DescriptorError("view-count", views,
                                  f"{name} {views!r:.80} is {a_type(views)}; valid: a list of {len(descs)} "
                                  "numpy arrays, one per descriptor")
        if len(views) != len(descs):
            raise DescriptorError("view-count", len(views),
                                  f"{name} holds {len(views)} views; valid: {len(descs)}, one per descriptor")
        for k, (view, desc) in enumerate(zip(views, descs, strict=True)):
            if type(view) is not np.ndarray or view.shape != desc.sizes:
                _check_view(view, desc, f"{name}[{k}]")
    dtype = (dsts[0] if dsts else srcs[0]).dtype
    for views, name in ((dsts, names[0]), (srcs, names[1])):
        for k, view in enumerate(views):
            if view.dtype != dtype:
                raise DescriptorError("view", view.dtype.name, f"{name}[{k}] of dtype {view.dtype.name} "
                                                               f"differs from {dtype.name}; {_SAME_DTYPE}")
            if writeable and views is dsts and not view.flags.writeable:
                raise DescriptorError("view", f"{name}[{k}]",
                                      f"{name}[{k}] is read-only; valid: a writeable view")
    check_threads(threads)
