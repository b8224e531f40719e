"""The input data of many cases at once: exactly :func:`~ort_layouts.operators.values.make_input`'s
values, made without building a random generator per case.

``make_input`` seeds ``numpy.random.default_rng(case.seed)`` for every case; building that
generator (a ``SeedSequence`` hashed into a ``PCG64`` state) costs several times drawing a
small case's values. Here the seeds of all the cases are hashed together, with numpy's
``SeedSequence`` algorithm vectorized over them, into the ``PCG64`` states ``default_rng``
would reach, and one generator is set to each state in turn. The draws that follow are
``make_input``'s own (:func:`~ort_layouts.operators.values.draw_input`), so every array is bit
for bit the one it returns (the tests compare both on every case of the standard suite). A
case with a seed outside ``[0, 2**32)`` or with more than :data:`LARGE_CASE_ELEMENTS` elements
is left to ``make_input`` itself.

The algorithms mirrored (numpy's ``bit_generator.pyx``, ``SeedSequence.mix_entropy`` and
``generate_state``; ``pcg64.c``, ``pcg64_set_seed``) are part of numpy's stream
compatibility promise (NEP 19): a seed gives the same stream in every release.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ort_layouts.operators.case import Case
from ort_layouts.operators.values import draw_input, make_input

__all__ = ["LARGE_CASE_ELEMENTS", "generator_states", "make_inputs", "pcg64_states"]

# above this many elements a case's input is make_input's (its own memory care applies)
LARGE_CASE_ELEMENTS = 1 << 16

# SeedSequence's constants (numpy/random/bit_generator.pyx)
_POOL_SIZE = 4
_INIT_A = 0x43B0D7E5
_MULT_A = 0x931E8875
_INIT_B = 0x8B51F9DD
_MULT_B = 0x58F38DED
_MIX_MULT_L = 0xCA01F9DD
_MIX_MULT_R = 0x4973F715
_XSHIFT = 16
_MASK32 = 0xFFFFFFFF
_MASK128 = (1 << 128) - 1
# PCG64's multiplier (numpy/random/src/pcg64/pcg64.h, PCG_DEFAULT_MULTIPLIER_128)
_PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341


def _hash_constants() -> tuple[list[int], list[int]]:
    """The running hash constants of ``mix_entropy`` (INIT_A times MULT_A, once per hashmix)
    and of ``generate_state`` (INIT_B times MULT_B, once per word): they never depend on the
    data, so they are computed once."""
    a, mix_consts = _INIT_A, []
    for _ in range(_POOL_SIZE + _POOL_SIZE * (_POOL_SIZE - 1)):
        mix_consts.append(a)
        a = (a * _MULT_A) & _MASK32
    b, state_consts = _INIT_B, []
    for _ in range(2 * _POOL_SIZE):  # generate_state(4, uint64): 8 words of 32 bits
        state_consts.append(b)
        b = (b * _MULT_B) & _MASK32
    return mix_consts, state_consts


_MIX_CONSTS, _STATE_CONSTS = _hash_constants()


def _hashmix(value: np.ndarray, const: int) -> np.ndarray:
    """SeedSequence's hashmix with the constant as it stands when it is called: the constant
    is multiplied by MULT_A *before* it multiplies the value."""
    value = value ^ np.uint32(const)
    value = value * np.uint32((const * _MULT_A) & _MASK32)
    return value ^ (value >> np.uint32(_XSHIFT))


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    left: np.ndarray = np.multiply(x, np.uint32(_MIX_MULT_L))
    result: np.ndarray = np.subtract(left, np.multiply(y, np.uint32(_MIX_MULT_R)))
    mixed: np.ndarray = result ^ (result >> np.uint32(_XSHIFT))
    return mixed


def pcg64_states(seeds: Sequence[int]) -> list[tuple[int, int]]:
    """(state, inc) of ``numpy.random.PCG64(seed)`` for each seed in ``[0, 2**32)``: numpy's
    ``SeedSequence(seed).generate_state(4, uint64)`` for all seeds at once, then
    ``pcg64_set_seed``'s two steps in 128-bit integers.

    Raises:
        ValueError: a seed outside ``[0, 2**32)`` (its entropy has another number of words).
    """
    if any(not 0 <= int(s) <= _MASK32 for s in seeds):
        bad = [s for s in seeds if not 0 <= int(s) <= _MASK32]
        raise ValueError(f"seeds must be in [0, 2**32); got {bad[:3]}")
    if not seeds:
        return []
    with np.errstate(over="ignore"):
        entropy = np.asarray(seeds, dtype=np.uint32)
        zero = np.zeros_like(entropy)
        consts = iter(_MIX_CONSTS)
        # one entropy word; the rest of the pool hashes zeros
        pool = [_hashmix(entropy if i == 0 else zero, next(consts)) for i in range(_POOL_SIZE)]
        for i_src in range(_POOL_SIZE):
            for i_dst in range(_POOL_SIZE):
                if i_src != i_dst:
                    pool[i_dst] = _mix(pool[i_dst], _hashmix(pool[i_src], next(consts)))
        words = []
        for i, const in enumerate(_STATE_CONSTS):
            value = pool[i % _POOL_SIZE] ^ np.uint32(const)
            value = value * np.uint32((const * _MULT_B) & _MASK32)
            words.append(value ^ (value >> np.uint32(_XSHIFT)))
    # uint64 word k is 32-bit words 2k (low) and 2k + 1 (high), little-endian
    w64 = [(words[2 * k].astype(np.uint64) | (words[2 * k + 1].astype(np.uint64) << np.uint64(32))).tolist()
           for k in range(4)]
    out = []
    for s0, s1, i0, i1 in zip(*w64, strict=True):
        init_state = (s0 << 64) | s1
        inc = ((((i0 << 64) | i1) << 1) | 1) & _MASK128
        state = inc  # 0 * mult + inc
        state = (state + init_state) & _MASK128
        state = (state * _PCG_MULT + inc) & _MASK128
        out.append((state, inc))
    return out


def generator_states(cases: Sequence[Case]) -> list[tuple[int, int] | None]:
    """Each case's ``PCG64`` state (:func:`pcg64_states`), or None for a case whose input is
    left to ``make_input`` (iota values draw nothing; a seed outside ``[0, 2**32)``; more than
    :data:`LARGE_CASE_ELEMENTS` elements). Computed for many cases at once, ahead of their
    batches."""
    fast = [k for k, c in enumerate(cases)
            if c.values != "iota" and 0 <= c.seed <= _MASK32 and math.prod(c.shape) <= LARGE_CASE_ELEMENTS]
    out: list[tuple[int, int] | None] = [None] * len(cases)
    for k, state in zip(fast, pcg64_states([cases[k].seed for k in fast]), strict=True):
        out[k] = state
    return out


def make_inputs(cases: Sequence[Case],
                states: Sequence[tuple[int, int] | None] | None = None) -> list[np.ndarray]:
    """``[make_input(c) for c in cases]``, bit for bit, made faster for many small cases.

    Args:
        cases: the cases.
        states: their :func:`generator_states`, when the caller computed them ahead.
    """
    if states is None:
        states = generator_states(cases)
    elif len(states) != len(cases):
        raise ValueError(f"{len(states)} generator states for {len(cases)} cases")
    bit_generator = np.random.PCG64(0)
    rng = np.random.Generator(bit_generator)
    out = []
    for case, state in zip(cases, states, strict=True):
        if state is None:
            out.append(make_input(case))
            continue
        bit_generator.state = {"bit_generator": "PCG64", "state": {"state": state[0], "inc": state[1]},
                               "has_uint32": 0, "uinteger": 0}
        out.append(draw_input(case, rng))
    return out
