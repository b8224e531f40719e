"""make_input makes each case's input in bounded chunks; its values are exactly those of the
one-shot implementation it replaced (kept below as the independent reference), for every data
type and kind of values, across chunk boundaries, and for a sample of the standard suite."""

from __future__ import annotations

import functools
import math
import tracemalloc
from typing import Any

import numpy as np
import pytest

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.suite import standard_suite
from ort_layouts.operators import values
from ort_layouts.operators.case import VALUE_KINDS, Case
from ort_layouts.operators.values import make_input, special_values

WHOLE_BYTE_TYPES = tuple(t for t in DataType.known() if t.bitwidth >= 8)


@functools.cache
def _pool(data_type: DataType) -> np.ndarray:
    return special_values(data_type)


def reference_make_input(case: Case) -> np.ndarray:
    """The one-shot implementation make_input had before it worked in chunks: two float64
    temporaries for normal values, an int64 permutation for special values."""
    dtype = case.data_type.to_numpy()
    count = math.prod(case.shape)
    rng = np.random.default_rng(case.seed)
    flat: Any
    if case.values == "iota":
        if case.data_type.is_float:
            flat = np.arange(count).astype(dtype)
        else:
            flat = np.arange(count, dtype=np.uint64).astype(f"u{dtype.itemsize}").view(dtype)
    elif case.values == "special":
        pool = _pool(case.data_type)
        flat = pool[rng.permutation(np.resize(np.arange(pool.size), count))] if count else pool[:0]
    elif case.data_type.is_float:
        flat = (rng.standard_normal(count) * 100).astype(dtype)
    else:
        info = np.iinfo(dtype)
        flat = rng.integers(info.min, info.max, size=count, dtype=dtype, endpoint=True)
    return np.asarray(flat.reshape(case.shape), order="C")


def _same(case: Case) -> None:
    got = make_input(case)
    want = reference_make_input(case)
    assert got.dtype == want.dtype and got.shape == want.shape, case.id
    assert got.flags.c_contiguous and got.flags.writeable
    assert got.tobytes() == want.tobytes(), case.id


SHAPES = [(), (0,), (0, 3), (1,), (5,), (7, 3), (2, 3, 5, 2)]


@pytest.mark.parametrize("kind", VALUE_KINDS)
@pytest.mark.parametrize("data_type", WHOLE_BYTE_TYPES, ids=lambda t: t.name.lower())
def test_same_bytes_as_one_shot_reference(data_type: DataType, kind: str) -> None:
    for k, shape in enumerate(SHAPES):
        _same(Case("Transpose", data_type, shape, values=kind, seed=11 * k + 3))


@pytest.mark.parametrize("chunk", [4, 8, 12])
@pytest.mark.parametrize("kind", VALUE_KINDS)
def test_same_bytes_across_chunk_boundaries(monkeypatch: pytest.MonkeyPatch, chunk: int, kind: str) -> None:
    """Small chunks cut the tensor at many places (8- and 16-bit draws share 32-bit words)."""
    monkeypatch.setattr(values, "_CHUNK_IN_ELEMENTS", chunk)
    for data_type in WHOLE_BYTE_TYPES:
        for count in (chunk - 1, chunk, chunk + 1, 3 * chunk + 2, 41):
            _same(Case("Transpose", data_type, (count,), values=kind, seed=count + chunk))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # float16 iota counts past 65504
@pytest.mark.parametrize("data_type", [DataType.UINT8, DataType.INT16, DataType.FLOAT16,
                                       DataType.FLOAT32, DataType.INT64])
def test_same_bytes_past_the_real_chunk(data_type: DataType) -> None:
    count = values._CHUNK_IN_ELEMENTS + 6
    for kind in VALUE_KINDS:
        _same(Case("Transpose", data_type, (count,), values=kind, seed=5))


def test_same_bytes_for_a_sample_of_the_standard_suite() -> None:
    cases = standard_suite()
    sample = cases[::37]
    # the sample spans the suite's data types and kinds of values
    assert {c.values for c in sample} == {c.values for c in cases} == set(VALUE_KINDS)
    assert {c.data_type for c in sample} == {c.data_type for c in cases}
    for case in sample:
        _same(case)


def test_chunk_is_a_multiple_of_four() -> None:
    # Generator.integers draws four 8-bit or two 16-bit values per 32-bit word and drops a
    # call's leftover bits: a chunk that is not a multiple of 4 would change the values
    assert values._CHUNK_IN_ELEMENTS % 4 == 0


@pytest.mark.parametrize("kind", VALUE_KINDS)
def test_peak_memory_is_the_tensor_and_a_bounded_chunk(kind: str) -> None:
    """numpy reports its buffers to tracemalloc: making an input of 8M float32 elements (32 MiB)
    needs the tensor, one chunk of float64 or integer scratch, and for special values one byte
    per element for the shuffled positions; the one-shot reference needs far more."""
    case = Case("Transpose", DataType.FLOAT32, (8, 1 << 20), values=kind, seed=2)
    tensor_bytes = 4 * math.prod(case.shape)
    bound = tensor_bytes + 8 * values._CHUNK_IN_ELEMENTS + (tensor_bytes // 4 if kind == "special" else 0)
    bound += 1 << 20  # numpy's and tracemalloc's own small allocations

    def peak(make: Any) -> int:
        tracemalloc.start()
        try:
            make(case)
            return int(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()

    assert tensor_bytes <= peak(make_input) <= bound
    assert peak(reference_make_input) > bound  # the bound tells the two implementations apart
