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
import itertools
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.lib.stride_tricks import as_strided

__all__ = ["default_threads", "strided_copy"]

_PARALLEL_MIN_BYTES = 8 << 20  # below this, one thread
_TILED_MIN_BYTES = 1 << 20  # below this, a plain np.copyto
_TILE_BYTES = 256 << 10  # scratch tile: fits L2 with room for the source and destination lines
_DST_RUN_BYTES = 256  # tile extent along the destination's fastest axis
_SRC_RUN_BYTES = 1024  # tile extent along the source's fastest axis
_FRIENDLY_STRIDE_BYTES = 64  # a source stride this small along the destination's fast axis is cheap
_MAX_THREADS = 8

_pool: ThreadPoolExecutor | None = None


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
    a = _fastest_axis(dst.shape, dst.strides, skip_zero=False)
    if a is None or nbytes < _TILED_MIN_BYTES:
        np.copyto(dst, src)
        return
    b = _fastest_axis(src.shape, src.strides, skip_zero=True)
    if b is None or b == a or abs(src.strides[a]) <= _FRIENDLY_STRIDE_BYTES:
        _split_copy(dst, src, nthreads)
    else:
        _tiled_copy(dst, src, a, b, nthreads)


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


def _tiled_copy(dst: np.ndarray, src: np.ndarray, a: int, b: int, nthreads: int) -> None:
    """Transposing copy through an L2-sized scratch tile (``a``: the destination's fastest axis,
    ``b``: the source's)."""
    shape = dst.shape
    rank = len(shape)
    item = dst.itemsize
    ext = [1] * rank
    ext[a] = min(shape[a], max(1, _DST_RUN_BYTES // item))
    ext[b] = min(shape[b], max(1, _SRC_RUN_BYTES // item))
    budget = max(1, (_TILE_BYTES // item) // (ext[a] * ext[b]))
    others = sorted((i for i in range(rank) if i not in (a, b)), key=lambda i: abs(dst.strides[i]))
    for i in others:
        if budget <= 1:
            break
        ext[i] = min(shape[i], budget)
        budget //= ext[i]
    # scratch layout: the other axes (outermost first in destination order), then a, then b
    # innermost; each b-run padded by a cache line so that the pitch is not a power of two
    order = [*reversed(others), a, b]
    scratch_strides = [0] * rank
    step = item
    for i in reversed(order):
        scratch_strides[i] = step
        step *= ext[i]
        if i == b:
            step += 64
    scratch_elements = step // item + 1
    grids = [range(0, n, e) for n, e in zip(shape, ext, strict=True)]
    tiles = list(itertools.product(*grids))
    full = tuple(ext)

    def work(part: Sequence[tuple[int, ...]]) -> None:
        scratch = np.empty(scratch_elements, dtype=dst.dtype)
        tile = as_strided(scratch, full, scratch_strides)
        for starts in part:
            sl = tuple(slice(s, s + e) for s, e in zip(starts, ext, strict=True))
            d = dst[sl]
            t = tile if d.shape == full else tile[tuple(slice(0, n) for n in d.shape)]
            np.copyto(t, src[sl])
            np.copyto(d, t)

    pieces = min(nthreads, len(tiles))
    if pieces == 1:
        work(tiles)
        return
    bounds = [len(tiles) * k // pieces for k in range(pieces + 1)]
    list(_executor().map(work, [tiles[bounds[k]:bounds[k + 1]] for k in range(pieces)]))
