"""Fast strided copies between numpy views: cache-tiled and spread over threads.

``np.copyto`` walks the destination in memory order. When the source's fastest axis is another
axis (a transpose), every element of the inner loop then comes from a different cache line,
and power-of-two strides make those lines collide in the same cache sets: a 4D transpose runs
10 to 50 times slower than a memcpy. :func:`strided_copy` cuts such copies into tiles that fit in
the L2 cache and moves each tile twice, through a scratch buffer whose rows are padded to a
non-power-of-two pitch: first in the source's order (long contiguous reads), then in the
destination's order (long contiguous writes). numpy releases the GIL while it copies, so tiles
are spread over a few threads.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
from numpy.lib.stride_tricks import as_strided

__all__ = ["TilePlan", "default_threads", "parallel_map", "strided_copy", "tile_plan", "transposing_axes"]

T = TypeVar("T")

_PARALLEL_MIN_BYTES = 8 << 20  # below this, one thread
_TILED_MIN_BYTES = 1 << 20  # below this, a plain np.copyto
_TILE_BYTES = 256 << 10  # scratch tile: fits L2 with room for the source and destination lines
_DST_RUN_BYTES = 256  # tile extent along the destination's fastest axis
_SRC_RUN_BYTES = 1024  # tile extent along the source's fastest axis
_FRIENDLY_STRIDE_BYTES = 64  # a source stride this small along the destination's fast axis is cheap
_MAX_THREADS = 8

_pool: ThreadPoolExecutor | None = None


@functools.cache
def default_threads() -> int:
    """Threads used for large copies: the CPU count, at most 8."""
    return max(1, min(_MAX_THREADS, os.cpu_count() or 1))


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=_MAX_THREADS, thread_name_prefix="ort_layouts_copy")
        atexit.register(_pool.shutdown, wait=False)
    return _pool


def _fastest_axis(shape: Sequence[int], byte_strides: Sequence[int], *, skip_zero: bool) -> int | None:
    best: int | None = None
    for axis, (n, s) in enumerate(zip(shape, byte_strides, strict=True)):
        if n == 1 or (skip_zero and s == 0):
            continue
        if best is None or abs(s) < abs(byte_strides[best]):
            best = axis
    return best


def strided_copy(dst: np.ndarray, src: np.ndarray, *, threads: int | None = None) -> None:
    """``np.copyto(dst, src)`` for two views of the same shape and dtype, only faster.

    Args:
        dst: the destination view (writeable; no two elements may share memory).
        src: the source view, any strides (0 included).
        threads: threads to use for large copies; None means :func:`default_threads`.
    """
    if dst.shape != src.shape:
        np.copyto(dst, src)  # broadcasting or a shape error, as numpy reports it
        return
    nbytes = dst.size * dst.itemsize
    nthreads = max(1, default_threads() if threads is None else int(threads))
    if nbytes < _PARALLEL_MIN_BYTES:
        nthreads = 1
    if nbytes < _TILED_MIN_BYTES or _fastest_axis(dst.shape, dst.strides, skip_zero=False) is None:
        np.copyto(dst, src)
        return
    axes = transposing_axes(dst, src)
    if axes is None:
        _split_copy(dst, src, nthreads)
    else:
        _tiled_copy(dst, src, *axes, nthreads)


def _split_copy(dst: np.ndarray, src: np.ndarray, nthreads: int) -> None:
    """Cache-friendly copy: split along the destination's slowest axis, one piece per thread."""
    if nthreads == 1:
        np.copyto(dst, src)
        return
    candidates = [i for i, n in enumerate(dst.shape) if n > 1]
    axis = max(candidates, key=lambda i: abs(dst.strides[i]))
    n = dst.shape[axis]
    pieces = min(nthreads, n)
    bounds = [n * k // pieces for k in range(pieces + 1)]

    def work(k: int) -> None:
        sl = (slice(None),) * axis + (slice(bounds[k], bounds[k + 1]),)
        np.copyto(dst[sl], src[sl])

    list(_executor().map(work, range(pieces)))


@dataclasses.dataclass(frozen=True, slots=True)
class TilePlan:
    """How to cut a transposing copy into L2-sized tiles.

    Attributes:
        extents: the tile's extent along each axis.
        scratch_strides: byte strides of the scratch tile (the source's fastest axis innermost,
            each of its runs padded by a cache line so that the pitch is not a power of two).
        scratch_elements: elements of the scratch buffer.
        starts: the first index of every tile.
    """

    extents: tuple[int, ...]
    scratch_strides: tuple[int, ...]
    scratch_elements: int
    starts: tuple[tuple[int, ...], ...]

    def scratch(self, dtype: np.dtype[Any]) -> np.ndarray:
        """A new scratch tile (full extents) for one worker."""
        buffer = np.empty(self.scratch_elements, dtype=dtype)
        return as_strided(buffer, self.extents, self.scratch_strides)

    def slices(self, starts: Sequence[int]) -> tuple[slice, ...]:
        return tuple(slice(s, s + e) for s, e in zip(starts, self.extents, strict=True))


def tile_plan(shape: Sequence[int], dst_byte_strides: Sequence[int], itemsize: int, a: int, b: int, *,
              dst_run_bytes: int = _DST_RUN_BYTES, src_run_bytes: int = _SRC_RUN_BYTES,
              tile_bytes: int = _TILE_BYTES) -> TilePlan:
    """The tiles of a transposing copy (``a``: the destination's fastest axis, ``b``: the
    source's)."""
    rank = len(shape)
    ext = [1] * rank
    ext[a] = min(shape[a], max(1, dst_run_bytes // itemsize))
    ext[b] = min(shape[b], max(1, src_run_bytes // itemsize))
    budget = max(1, (tile_bytes // itemsize) // (ext[a] * ext[b]))
    others = sorted((i for i in range(rank) if i not in (a, b)), key=lambda i: abs(dst_byte_strides[i]))
    for i in others:
        if budget <= 1:
            break
        ext[i] = min(shape[i], budget)
        budget //= ext[i]
    # scratch layout: the other axes (outermost first in destination order), then a, then b
    # innermost; each b-run padded by a cache line so that the pitch is not a power of two
    order = [*reversed(others), a, b]
    scratch_strides = [0] * rank
    step = itemsize
    for i in reversed(order):
        scratch_strides[i] = step
        step *= ext[i]
        if i == b:
            step += 64
    grids = [range(0, n, e) for n, e in zip(shape, ext, strict=True)]
    return TilePlan(tuple(ext), tuple(scratch_strides), step // itemsize + 1,
                    tuple(itertools.product(*grids)))


def transposing_axes(dst: np.ndarray, src: np.ndarray) -> tuple[int, int] | None:
    """(the destination's fastest axis, the source's) when a copy between the two views
    transposes, i.e. when reading the source in the destination's order jumps in memory;
    None when a plain element-order walk is cache friendly."""
    a = _fastest_axis(dst.shape, dst.strides, skip_zero=False)
    if a is None:
        return None
    b = _fastest_axis(src.shape, src.strides, skip_zero=True)
    if b is None or b == a or abs(src.strides[a]) <= _FRIENDLY_STRIDE_BYTES:
        return None
    return a, b


def parallel_map(work: Callable[[Sequence[T]], Any], items: Sequence[T], nthreads: int) -> list[Any]:
    """``work`` over ``nthreads`` contiguous parts of ``items`` (one call when nthreads is 1)."""
    pieces = min(nthreads, len(items))
    if pieces <= 1:
        return [work(items)]
    bounds = [len(items) * k // pieces for k in range(pieces + 1)]
    return list(_executor().map(work, [items[bounds[k]:bounds[k + 1]] for k in range(pieces)]))


def _tiled_copy(dst: np.ndarray, src: np.ndarray, a: int, b: int, nthreads: int) -> None:
    """Transposing copy through an L2-sized scratch tile (``a``: the destination's fastest axis,
    ``b``: the source's)."""
    plan = tile_plan(dst.shape, dst.strides, dst.itemsize, a, b)

    def work(part: Sequence[tuple[int, ...]]) -> None:
        tile = plan.scratch(dst.dtype)
        for starts in part:
            sl = plan.slices(starts)
            d = dst[sl]
            t = tile if d.shape == plan.extents else tile[tuple(slice(0, n) for n in d.shape)]
            np.copyto(t, src[sl])
            np.copyto(d, t)

    parallel_map(work, plan.starts, nthreads)
