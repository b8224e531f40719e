"""The runner's batch inputs: ``make_inputs`` gives ``make_input``'s arrays bit for bit, and the
generator states it computes for many seeds at once are numpy's own ``PCG64(seed)`` states."""

from __future__ import annotations

import numpy as np
import pytest

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.inputs import LARGE_CASE_ELEMENTS, generator_states, make_inputs, pcg64_states
from ort_layouts.engine.suite import SUITE_DTYPES, standard_suite
from ort_layouts.operators.case import Case
from ort_layouts.operators.values import make_input


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_states_are_numpys_pcg64_states() -> None:
    rng = np.random.default_rng(20261123)
    seeds = [0, 1, 2, 3, 255, 256, 65535, 2**31 - 1, 2**31, 2**32 - 1,
             *(int(s) for s in rng.integers(0, 2**32, size=200, dtype=np.uint64))]
    for seed, (state, inc) in zip(seeds, pcg64_states(seeds), strict=True):
        want = np.random.PCG64(seed).state["state"]
        assert (state, inc) == (want["state"], want["inc"]), seed
    assert pcg64_states([]) == []
    with pytest.raises(ValueError, match=r"\[0, 2\*\*32\)"):
        pcg64_states([2**32])
    with pytest.raises(ValueError, match=r"\[0, 2\*\*32\)"):
        pcg64_states([-1])


def test_every_suite_case_gets_make_inputs_values() -> None:
    cases = standard_suite()
    got = make_inputs(cases)
    assert len(got) == len(cases)
    bad = [c.id for c, x in zip(cases, got, strict=True) if not _same(x, make_input(c))]
    assert not bad, bad[:5]


def test_every_type_and_value_kind_and_odd_seeds_and_shapes() -> None:
    cases = [Case("Transpose", dt, shape, values=kind, seed=seed)
             for dt in SUITE_DTYPES for kind in ("random", "special", "iota")
             for shape, seed in (((2, 3), 0), ((), 7), ((0, 4), 9), ((17,), 2**32 - 1), ((3, 5), 2**32),
                                 ((2, 2), 2**40 + 3))]
    states = generator_states(cases)
    # iota draws nothing, and a seed of more than 32 bits is left to make_input
    for c, s in zip(cases, states, strict=True):
        assert (s is None) == (c.values == "iota" or c.seed >= 2**32), c.id
    for c, x in zip(cases, make_inputs(cases, states), strict=True):
        assert _same(x, make_input(c)), c.id
        assert x.flags.c_contiguous and x.shape == c.shape


def test_a_large_case_is_left_to_make_input() -> None:
    large = Case("Transpose", DataType.FLOAT32, (LARGE_CASE_ELEMENTS + 1,), seed=5)
    small = Case("Transpose", DataType.FLOAT32, (LARGE_CASE_ELEMENTS,), seed=5)
    assert generator_states([large, small])[0] is None and generator_states([small])[0] is not None
    for c, x in zip([large, small], make_inputs([large, small]), strict=True):
        assert _same(x, make_input(c))


def test_states_must_match_the_cases() -> None:
    case = Case("Transpose", DataType.FLOAT32, (2, 3))
    with pytest.raises(ValueError, match="2 generator states for 1 cases"):
        make_inputs([case], [None, None])
