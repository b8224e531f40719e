"""Bit-exact comparison of two tensors: raw bits of every element, never a tolerance."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import itertools
from collections.abc import Callable, Iterator
from typing import Any, cast

import numpy as np

from ort_layouts._errors import DataTypeError
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.reference.copy import default_threads, parallel_map, tile_plan, transposing_axes

_KERNEL_MODULE = "ort_layouts.reference._equal"


def _load_kernel() -> tuple[Callable[..., bool] | None, int, str]:
    """The optional C kernel (setup.py): its ``differs``, the most axes it takes (its
    ``MAX_DIMS``) and its name for :func:`comparison_kernel`; ``(None, 0, "numpy")`` where it is
    not built, or lacks ``differs`` or ``MAX_DIMS`` (a kernel of unknown axis limit is left
    aside: views_equal then compares in numpy). ``SSE2`` only names it: a kernel without it is
    "C"."""
    try:
        kernel = importlib.import_module(_KERNEL_MODULE)
    except ImportError:  # a build without a C compiler
        return None, 0, "numpy"
    differs = getattr(kernel, "differs", None)
    max_dims = getattr(kernel, "MAX_DIMS", None)
    if not callable(differs) or type(max_dims) is not int or max_dims < 1:
        return None, 0, "numpy"
    return differs, max_dims, "C with SSE2" if getattr(kernel, "SSE2", 0) else "C"


# the most axes the kernel takes (numpy allows 64); without the kernel views_equal compares in numpy
_c_differs, _KERNEL_MAX_DIMS, _KERNEL = _load_kernel()

__all__ = ["Comparison", "as_tensor", "bits_equal", "bits_of", "compare", "comparison_kernel",
           "numpy_comparison", "views_equal"]

_UINT: dict[int, type[np.unsignedinteger[Any]]] = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_CHUNK_BYTES = 1 << 20  # equality is tested chunk by chunk so the temporary stays in cache
_SLAB_BYTES = 1 << 20  # views_equal: bytes compared per step (their flags stay in L2)
_VIEWS_SMALL_BYTES = 1 << 20  # below this, views_equal is one np.array_equal
_VIEWS_PARALLEL_BYTES = 8 << 20  # below this, views_equal uses one thread
# views_equal's transposed tiles: long runs along the source's fastest axis (few, long streams)
_TILE_DST_RUN_BYTES = 512
_TILE_SRC_RUN_BYTES = 8192
_TILE_BYTES = 1 << 20
# small tensors of one native-order DirectML type are compared as bytes first
_BYTES_FIRST_LIMIT = 64 << 10
_NATIVE_DTYPES: frozenset[np.dtype[Any]] = frozenset(
    np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                          np.uint8, np.uint16, np.uint32, np.uint64, np.bool_))


@dataclasses.dataclass(frozen=True, slots=True)
class Comparison:
    """The outcome of :func:`compare`; truthy when every element's bits are equal.

    Attributes:
        passed: shapes, element types and every element's bits agree.
        element_count: elements compared (the expected tensor's, when shapes differ; the one
            produced, when the other is missing).
        mismatch_count: elements whose bits differ (all of them when shapes or types differ, or
            a tensor is missing).
        first_mismatch_index: logical index (C order) of the first differing element, or None.
        expected_hex: raw bits of that element in ``expected``, little-endian bytes in hex.
        actual_hex: raw bits of that element in ``actual``.
        expected_value: ``repr`` of that element's value in ``expected``.
        actual_value: ``repr`` of that element's value in ``actual``.
        message: "" when passed, else a one-line explanation.
    """

    passed: bool
    element_count: int
    mismatch_count: int = 0
    first_mismatch_index: tuple[int, ...] | None = None
    expected_hex: str = ""
    actual_hex: str = ""
    expected_value: str = ""
    actual_value: str = ""
    message: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if self.first_mismatch_index is not None:
            d["first_mismatch_index"] = list(self.first_mismatch_index)
        return d


def _element_type(dtype: np.dtype[Any]) -> DataType | None:
    try:
        return DataType.from_numpy(dtype)
    except DataTypeError:
        return None


def bits_of(array: np.ndarray) -> np.ndarray:
    """C-contiguous flat view of the elements as unsigned integers of their width, little-endian."""
    arr = np.ascontiguousarray(array)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr.reshape(-1).view(_UINT[arr.dtype.itemsize])


def bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two flat unsigned arrays of the same size hold the same bits (by the C kernel
    where it is built, else chunked, so no full-size temporary is made)."""
    if a.size != b.size or a.nbytes != b.nbytes:  # elements of another width are other bits
        return False
    kernel = _kernel_for(a, b) if a.dtype == b.dtype else None
    if kernel is not None:
        return not kernel(a, b)
    raw_a = a.view(np.uint8)
    raw_b = b.view(np.uint8)
    words = raw_a.size // 8
    if words:
        wa = raw_a[: words * 8].view(np.uint64)
        wb = raw_b[: words * 8].view(np.uint64)
        chunk = _CHUNK_BYTES // 8
        scratch = np.empty(min(chunk, words), dtype=np.bool_)
        for start in range(0, words, chunk):
            stop = min(start + chunk, words)
            if _numpy_differs(wa[start:stop], wb[start:stop], scratch[: stop - start]):
                return False
    return bool(np.array_equal(raw_a[words * 8:], raw_b[words * 8:]))


def views_equal(x: np.ndarray, y: np.ndarray, *, threads: int | None = None) -> bool:
    """Whether two views of the same shape and dtype hold the same elements, any strides (0
    included), without a full-size temporary: ``np.array_equal(x, y)`` for integer views, only
    faster on large ones.

    When reading ``x`` in ``y``'s order jumps in memory (a transposed view), each 1 MiB
    tile (``_TILE_BYTES``) of ``x`` is first copied into a scratch tile in its own order, then compared with
    ``y``'s tile; otherwise ``y`` is walked in slabs of its outer axes. Integer views are
    compared by the C kernel ``_equal`` where it was built (``setup.py``; it transposes 4x4
    blocks of 4-byte elements in SSE2 registers and compares contiguous rows with memcmp), in
    numpy otherwise, with the same result. Large transposed views
    are spread over threads (numpy releases the GIL): moving elements one at a time is work for
    the CPU. Slabs are compared on one thread unless ``threads`` asks for more: that walk is
    bound by memory bandwidth, which a second thread did not raise on a 2-vCPU machine (and cut
    by a third while another process kept the other vCPU busy).

    Args:
        x: one view (compare integer views: floats would make NaN differ from itself).
        y: the other, ideally C-contiguous.
        threads: threads for large views; None means one per CPU (at most 8) for transposed
            views and one for slabs.
    """
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    kernel = _kernel_for(x, y)
    nbytes = y.size * y.itemsize
    if nbytes < _VIEWS_SMALL_BYTES:
        return not kernel(x, y) if kernel is not None else bool(np.array_equal(x, y))
    nthreads = max(1, default_threads() if threads is None else int(threads))
    if nbytes < _VIEWS_PARALLEL_BYTES:
        nthreads = 1
    differ: list[bool] = []  # set by the first worker that finds a difference; the others stop
    axes = transposing_axes(y, x)
    if axes is not None:
        plan = tile_plan(y.shape, y.strides, y.itemsize, *axes, dst_run_bytes=_TILE_DST_RUN_BYTES,
                         src_run_bytes=_TILE_SRC_RUN_BYTES, tile_bytes=_TILE_BYTES)
        # the kernel walks the source's fastest axis (contiguous in the scratch tile) as rows and
        # the destination's (contiguous in y) as columns: its transposing path
        a, b = axes
        order = [*(i for i in range(y.ndim) if i not in axes), b, a]

        def tiles(part: Any) -> None:
            tile = plan.scratch(y.dtype)
            flags = np.empty(plan.extents, dtype=np.bool_) if kernel is None else None
            for starts in part:
                if differ:
                    return
                sl = plan.slices(starts)
                got = y[sl]
                whole = got.shape == plan.extents
                part_of = tuple(slice(0, n) for n in got.shape)
                t = tile if whole else tile[part_of]
                np.copyto(t, x[sl])
                if kernel is not None:
                    found = kernel(t.transpose(order), got.transpose(order))
                else:
                    assert flags is not None
                    found = _numpy_differs(t, got, flags if whole else flags[part_of])
                if found:
                    differ.append(True)
                    return

        parallel_map(tiles, plan.starts, nthreads)
        return not differ
    slab_threads = 1 if threads is None else nthreads
    if kernel is not None and slab_threads == 1:
        return not kernel(x, y)
    slabs = _slabs(y.shape, max(1, _SLAB_BYTES // y.itemsize))
    flags_size = max(1, _SLAB_BYTES // y.itemsize)

    def compare_slabs(part: Any) -> None:
        scratch = np.empty(flags_size, dtype=np.bool_) if kernel is None else None
        for sl in part:
            if differ:
                return
            a, b = x[sl], y[sl]
            if (kernel(a, b) if kernel is not None
                    else _numpy_differs(a, b, cast(np.ndarray, scratch)[: b.size].reshape(b.shape))):
                differ.append(True)
                return

    parallel_map(compare_slabs, slabs, slab_threads)
    return not differ


def comparison_kernel() -> str:
    """What compares integer views in :func:`views_equal` here: "C with SSE2" or "C" (the
    optional kernel ``_equal``, built by ``pip install`` where a C compiler is), else "numpy"."""
    return _KERNEL if _c_differs is not None else "numpy"


@contextlib.contextmanager
def numpy_comparison() -> Iterator[None]:
    """Inside this block :func:`views_equal` compares in numpy, the C kernel left aside (for
    measuring what the kernel earns, side by side; not for use while other threads compare)."""
    global _c_differs
    saved, _c_differs = _c_differs, None
    try:
        yield
    finally:
        _c_differs = saved


def _kernel_for(x: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray, np.ndarray], bool] | None:
    """The C kernel's test of whether two views differ, when it is built and their elements are
    native-order integers of one type (whose bits are equal exactly when their values are, as
    numpy compares them) of at most the kernel's ``_KERNEL_MAX_DIMS`` axes; None otherwise."""
    if (_c_differs is None or not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray)
            or x.dtype.kind not in "ui" or not x.dtype.isnative or x.itemsize not in _UINT
            or x.ndim > _KERNEL_MAX_DIMS):
        return None
    return _c_differs


def _numpy_differs(a: np.ndarray, b: np.ndarray, flags: np.ndarray) -> bool:
    """Whether two views of one shape differ anywhere, numpy's way (``flags``: a scratch of their
    shape)."""
    np.not_equal(a, b, out=flags)
    return bool(flags.any())


def _slabs(shape: tuple[int, ...], elements: int) -> list[tuple[slice | int, ...]]:
    """Index tuples cutting a C-ordered shape into pieces of at most ``elements`` elements (or
    one innermost row, if that is longer)."""
    inner = 1
    k = len(shape)
    while k > 0 and inner * shape[k - 1] <= elements:
        k -= 1
        inner *= shape[k]
    if k == 0:
        return [()]
    axis = k - 1
    step = max(1, elements // inner)
    out: list[tuple[slice | int, ...]] = []
    for outer in itertools.product(*(range(n) for n in shape[:axis])):
        for start in range(0, shape[axis], step):
            out.append((*outer, slice(start, start + step)))
    return out


def _value_repr(array: np.ndarray, flat_index: int) -> str:
    return repr(array.reshape(-1)[flat_index].item())


def compare(expected: np.ndarray | None, actual: np.ndarray | None) -> Comparison:
    """Compare two tensors bit for bit (NaN payloads and the sign of zero included).

    Shapes must be equal and the element types must be the same DirectML data type (bool and
    uint8 are both UINT8); otherwise the result is a mismatch with a message, not an exception.
    A missing tensor (None: no output was produced) is a mismatch of every element of the other.
    The mismatch count is never above the element count (every element when they differ in
    shape or type). Mismatch details are computed only when the bits differ.

    >>> bool(compare(np.float32([0.0]), np.float32([-0.0])))
    False
    """
    if expected is None or actual is None:
        return _missing(expected, actual)
    exp = as_tensor(expected)
    if isinstance(exp, str):
        return Comparison(False, 0, 0, message=f"the expected {exp}")
    act = as_tensor(actual)
    count = int(exp.size)
    if isinstance(act, str):
        return Comparison(False, count, count, message=f"the actual {act}")
    if (exp.dtype == act.dtype and exp.dtype in _NATIVE_DTYPES and exp.shape == act.shape
            and exp.nbytes <= _BYTES_FIRST_LIMIT and exp.tobytes() == act.tobytes()):
        return Comparison(True, count)  # one data type, native order: equal bytes are equal bits
    if exp.shape != act.shape:
        return Comparison(False, count, count, message=(
            f"shape {list(act.shape)} differs from the expected {list(exp.shape)}"))
    exp_type, act_type = _element_type(exp.dtype), _element_type(act.dtype)
    if exp.dtype.itemsize != act.dtype.itemsize or exp_type is None or exp_type != act_type:
        if exp_type is None and exp.dtype.newbyteorder("=") == act.dtype.newbyteorder("="):
            problem = (f"element type {exp.dtype.name} has no DirectML data type, so no bits to compare; "
                       f"valid: {sorted(t.name for t in _NATIVE_DTYPES)}")
        else:
            problem = f"element type {act.dtype.name} differs from the expected {exp.dtype.name}"
        return Comparison(False, count, count, message=problem)
    a = bits_of(exp)
    b = bits_of(act)
    if bits_equal(a, b):
        return Comparison(True, count)
    differ = a != b
    mismatches = int(np.count_nonzero(differ))
    first = int(np.argmax(differ))
    index = tuple(int(i) for i in np.unravel_index(first, exp.shape)) if exp.ndim else ()
    exp_le = exp.astype(exp.dtype.newbyteorder("<"), copy=False)
    act_le = act.astype(act.dtype.newbyteorder("<"), copy=False)
    exp_hex = np.ascontiguousarray(exp_le).reshape(-1)[first:first + 1].tobytes().hex()
    act_hex = np.ascontiguousarray(act_le).reshape(-1)[first:first + 1].tobytes().hex()
    exp_value = _value_repr(exp, first)
    act_value = _value_repr(act, first)
    return Comparison(
        False, count, mismatches, index, exp_hex, act_hex, exp_value, act_value,
        f"{mismatches} of {count} elements differ; first at {list(index)}: expected "
        f"{exp_value} (0x{exp_hex}) got {act_value} (0x{act_hex})")


def as_tensor(value: Any, what: str = "tensor") -> np.ndarray | str:
    """``np.asarray(value)``, or what keeps ``value`` from being a tensor (a ragged nested
    list), as :func:`compare`'s message says it after "the expected" or "the actual" (``what``
    names the value: "array" to :func:`~ort_layouts.reference.buffers.pack`)."""
    try:
        return np.asarray(value)
    except (ValueError, TypeError) as e:
        return (f"{what} {value!r:.60} is no array ({type(e).__name__}: {e}); valid: a numpy array, "
                "or a nested list of one length along each axis")


def _missing(expected: np.ndarray | None, actual: np.ndarray | None) -> Comparison:
    """:func:`compare` where a tensor is None (none was produced): every element of the other
    one mismatched (none where both are missing)."""
    if expected is None and actual is None:
        return Comparison(False, 0, 0, message="neither the expected nor the actual tensor was produced")
    present = np.asarray(expected if actual is None else actual)
    count = int(present.size)
    side, other = ("actual", "expected") if actual is None else ("expected", "actual")
    return Comparison(False, count, count, message=(
        f"no {side} tensor was produced; the {other} one has shape {list(present.shape)} "
        f"({count} elements)"))
