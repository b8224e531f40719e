"""The input values of a case: deterministic from its seed and its kind of values."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ort_layouts._errors import ArgumentError, DataTypeError, ShapeError, a_type
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.case import Case
from ort_layouts.reference.buffers import values_dtype

__all__ = ["check_case", "check_cases", "check_input", "draw_input", "make_input", "special_values"]


def check_case(case: object, name: str = "case") -> Case:
    """``case``, which must be a :class:`Case`.

    Raises:
        ArgumentError: ``case`` is anything else (None, an op name), naming the value, its type
            and what is valid.
    """
    if not isinstance(case, Case):
        raise ArgumentError(f"{name} {case!r:.80} is {a_type(case)}, not a Case; valid: a Case (e.g. from "
                            "standard_suite() or Case(op=..., data_type=..., shape=...))")
    return case


def check_cases(cases: object) -> list[Case]:
    """``cases`` as a list, read once (a generator too), each item a :class:`Case`.

    Raises:
        ArgumentError: ``cases`` is one Case, a str or no iterable, or an item is not a Case
            (named by its place, ``cases[3]``).
    """
    if isinstance(cases, (Case, str, bytes)) or not isinstance(cases, Iterable):
        given = f"one Case, {cases.id}" if isinstance(cases, Case) else f"{cases!r:.80}, {a_type(cases)}"
        raise ArgumentError(f"cases is {given}; valid: an iterable of Case values (e.g. [case], or "
                            "standard_suite())")
    case_list = list(cases)
    for index, case in enumerate(case_list):
        check_case(case, f"cases[{index}]")
    return case_list


def special_values(data_type: DataType) -> np.ndarray:
    """Bit patterns that catch conversions and lossy copies: NaNs with payloads, -0.0,
    denormals, infinities, integer extremes."""
    dtype = data_type.to_numpy()
    if data_type.is_float:
        bits = {
            DataType.FLOAT16: [0x7E00, 0x7C01, 0x7D55, 0xFE01, 0x8000, 0x0000, 0x0001, 0x03FF,
                               0x8001, 0x7C00, 0xFC00, 0x7BFF, 0x0400, 0x3C00, 0xBC00, 0x7FFF],
            DataType.FLOAT32: [0x7FC00000, 0x7F800001, 0x7FA5A5A5, 0xFFC00001, 0x80000000,
                               0x00000000, 0x00000001, 0x007FFFFF, 0x80000001, 0x7F800000,
                               0xFF800000, 0x7F7FFFFF, 0x00800000, 0x3F800000, 0xBF800000,
                               0x7FFFFFFF],
            DataType.FLOAT64: [0x7FF8000000000000, 0x7FF0000000000001, 0x7FF5A5A5A5A5A5A5,
                               0xFFF8000000000001, 0x8000000000000000, 0, 1, 0x000FFFFFFFFFFFFF,
                               0x8000000000000001, 0x7FF0000000000000, 0xFFF0000000000000,
                               0x7FEFFFFFFFFFFFFF, 0x0010000000000000, 0x3FF0000000000000,
                               0xBFF0000000000000, 0x7FFFFFFFFFFFFFFF],
        }[data_type]
        uint = np.dtype(f"<u{dtype.itemsize}")
        return np.array(bits, dtype=uint).view(dtype.newbyteorder("<")).astype(dtype)
    info = np.iinfo(dtype)
    values = {info.min, info.max, 0, 1, info.max - 1, info.min + 1, info.max // 2, info.max // 2 + 1}
    if info.min < 0:
        values |= {-1, -2, info.min // 2}
    if dtype.itemsize == 8:  # values a 32-bit emulation cannot keep
        values |= {2**32, 2**32 + 1, 2**31}
        if info.min < 0:
            values |= {-(2**32), -(2**31) - 1}
    return np.array(sorted(values), dtype=dtype)


@functools.cache
def _special_pool(data_type: DataType) -> np.ndarray:
    pool = special_values(data_type)
    pool.flags.writeable = False  # shared by every case of the type
    return pool


@functools.cache
def _iinfo(dtype: np.dtype[Any]) -> np.iinfo[Any]:
    return np.iinfo(dtype)


# elements made per step: the float64 and index temporaries stay this small, whatever the
# tensor's size (a multiple of 4, so that Generator.integers, which draws 8- and 16-bit values
# four and two to a 32-bit word and drops a call's leftover bits, gives the same values as in
# one call)
_CHUNK_IN_ELEMENTS = 1 << 20


def make_input(case: Case) -> np.ndarray:
    """The case's input data: deterministic from ``case.seed`` and ``case.values``.

    "random" covers each type's full range (integers) or normal values (floats); "iota" counts
    0, 1, 2, ... (wrapping in the type); "special" shuffles :func:`special_values`.

    The values are made straight into the result, a bounded chunk at a time, so a large input
    needs little more memory than itself; the values are those of one call over the whole
    tensor (``rng.standard_normal(count) * 100`` cast to the type, ``rng.integers`` over the
    type's range, ``pool[rng.permutation(np.resize(np.arange(pool.size), count))]``).

    Raises:
        ArgumentError: ``case`` is no :class:`Case` (:func:`check_case`).
    """
    return draw_input(case, np.random.default_rng(check_case(case).seed))


def draw_input(case: Case, rng: np.random.Generator) -> np.ndarray:
    """The case's input with its values drawn from ``rng`` (:func:`make_input` seeds it with
    ``case.seed``; a caller may set a generator to the state that seed gives, as
    :func:`~ort_layouts.engine.inputs.make_inputs` does for many cases at once)."""
    dtype = case.data_type.to_numpy()
    count = math.prod(case.shape)
    flat = np.empty(count, dtype=dtype)
    if case.values == "iota":
        _fill_iota(flat, case.data_type.is_float)
    elif case.values == "special":
        _fill_special(flat, _special_pool(case.data_type), rng)
    elif case.data_type.is_float:
        _fill_normal(flat, rng)
    else:
        _fill_integers(flat, _iinfo(dtype), rng)
    return flat.reshape(case.shape)  # a fresh C-ordered array; rank 0 stays rank 0


def _chunks(count: int) -> range:
    return range(0, count, _CHUNK_IN_ELEMENTS)


def _fill_iota(flat: np.ndarray, is_float: bool) -> None:
    """0, 1, 2, ...: floats by casting int64 counts; integers wrapping in the type's bits."""
    target = flat if is_float else flat.view(f"u{flat.itemsize}")
    count_type = np.int64 if is_float else np.uint64
    for start in _chunks(flat.size):
        stop = min(start + _CHUNK_IN_ELEMENTS, flat.size)
        target[start:stop] = np.arange(start, stop, dtype=count_type)  # an unsafe cast, as astype


def _fill_special(flat: np.ndarray, pool: np.ndarray, rng: np.random.Generator) -> None:
    """The pool's values in a shuffled cycle. ``Generator.shuffle`` draws the same swaps for
    any element size, so the pool's positions are shuffled as bytes, not as int64."""
    if not flat.size:
        return
    index_type: type[np.integer[Any]] = np.uint8 if pool.size <= 256 else np.intp
    cycle = np.arange(pool.size, dtype=index_type)
    # np.resize(cycle, count), without its copies
    positions: np.ndarray[Any, np.dtype[np.integer[Any]]] = np.empty(flat.size, dtype=index_type)
    whole = flat.size // cycle.size * cycle.size
    positions[:whole].reshape(-1, cycle.size)[...] = cycle
    positions[whole:] = cycle[: flat.size - whole]
    rng.shuffle(positions)
    for start in _chunks(flat.size):  # take converts its indices to intp: a chunk at a time
        stop = min(start + _CHUNK_IN_ELEMENTS, flat.size)
        part: np.ndarray = flat[start:stop]
        np.take(pool, positions[start:stop], out=part, mode="clip")  # mode "raise" copies out


def _fill_normal(flat: np.ndarray, rng: np.random.Generator) -> None:
    """``rng.standard_normal(count) * 100`` in float64, cast to the type, chunk by chunk (the
    generator's normal draws do not depend on how a run of them is cut)."""
    scratch = np.empty(min(flat.size, _CHUNK_IN_ELEMENTS), dtype=np.float64)
    for start in _chunks(flat.size):
        stop = min(start + _CHUNK_IN_ELEMENTS, flat.size)
        part = scratch[: stop - start]
        rng.standard_normal(out=part)
        np.multiply(part, 100, out=part)
        flat[start:stop] = part  # the float64 -> type cast of astype


def _fill_integers(flat: np.ndarray, info: np.iinfo[Any], rng: np.random.Generator) -> None:
    """``rng.integers(min, max, endpoint=True)`` over the type's full range, chunk by chunk."""
    for start in _chunks(flat.size):
        stop = min(start + _CHUNK_IN_ELEMENTS, flat.size)
        flat[start:stop] = rng.integers(info.min, info.max, size=stop - start, dtype=flat.dtype,
                                        endpoint=True)


def check_input(case: Case, array: Any, name: str) -> np.ndarray:
    """``array`` as the case's input, which it must be as it is: of the case's shape and of its
    values' numpy type (:func:`~ort_layouts.reference.buffers.values_dtype`), in either byte
    order (the other is swapped, bit for bit); it is never cast.

    Args:
        name: what the caller calls it, for the message (``"inputs['Transpose-...']"``).

    Raises:
        DataTypeError: another element type (its values would be cast: NaN payloads and -0.0
            lost, a float64 1e300 made infinite).
        ShapeError: another shape.
    """
    x = np.asarray(array)
    want = values_dtype(case.data_type)
    if x.dtype.newbyteorder("=") != want:
        raise DataTypeError(f"{name} is {x.dtype} of shape {list(x.shape)}; valid: {want}, the case's "
                            f"{case.data_type.name} values (an input is never cast)")
    if x.shape != tuple(case.shape):
        raise ShapeError(f"{name} has shape {list(x.shape)}; valid: the case's {list(case.shape)}")
    return x if x.dtype == want else x.astype(want)
