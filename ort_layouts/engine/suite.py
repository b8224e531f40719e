"""The standard suite: thousands of small cases covering every permutation of ranks 1 to 6,
broadcast patterns, Pad modes, opsets, data types and special values, each operator's cases
coming from its module (:mod:`ort_layouts.operators`).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Sequence
from typing import TypeVar

from ort_layouts._errors import DataTypeError, ShapeError, a_type
from ort_layouts.descriptors.buffer_tensor import MAX_DIMENSION_COUNT
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import TEXT_TYPES, int_tuple
from ort_layouts.operators.case import Case, check_seed
from ort_layouts.operators.registry import CASE_OPS, case_operators, check_op_type, operator_for_type

__all__ = ["MAX_RANK", "SUITE_DTYPES", "SUITE_DTYPE_NAMES", "check_ranks", "check_seed", "is_edge_case",
           "list_argument", "rank_bounds_error", "standard_suite"]

T = TypeVar("T")

#: the highest rank of a case (DirectML's dimension count, DML_TENSOR_DIMENSION_COUNT_MAX1);
#: rank 0 is ONNX's scalars
MAX_RANK = MAX_DIMENSION_COUNT

# Every DirectML data type the suite makes data for (BOOL data is UINT8; INT4 and UINT4 have no
# numpy dtype to make it with).
SUITE_DTYPES: tuple[DataType, ...] = (
    DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT64,
    DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64,
    DataType.UINT8, DataType.UINT16, DataType.UINT32, DataType.UINT64,
)
#: their names, as a selection writes them ("float32")
SUITE_DTYPE_NAMES: tuple[str, ...] = tuple(t.name.lower() for t in SUITE_DTYPES)


def list_argument(value: Iterable[T] | None, name: str, items: str, error: type[Exception], *,
                  example: str, of_str: bool = False) -> list[T] | None:
    """``value`` (a list, tuple, set, array or any other iterable of ``items``) as a list; None
    stays None.

    Args:
        value: the argument.
        name: the argument's name in the message ("ranks").
        items: what its items are ("integers", "op names").
        error: the exception to raise.
        example: a valid value for the message, e.g. ``"[1, 2]"``.
        of_str: the items are strs: one str given for the list is shown as the list of that
            one str instead of ``example`` (``ops 'Pad'``: ``['Pad']``).

    Raises:
        Exception: ``error``: ``value`` is one str (or bytes, a bytearray, a memoryview), which
            iterates as its characters (as its byte values), or is not iterable at all (an int),
            naming the value and what is valid.
    """
    if value is None:
        return None
    if isinstance(value, TEXT_TYPES):
        if isinstance(value, str) and of_str:
            example = f"[{value!r}]"
        kind = "one str" if isinstance(value, str) else f"{a_type(value)} object"
        raise error(f"{name} {value!r} is {kind}, not a list of {items}; "
                    f"valid: a list or other iterable of {items}, e.g. {example}")
    try:
        iterator = iter(value)
    except TypeError:
        raise error(f"{name} {value!r} is not a list of {items}; valid: a list or other iterable of {items}, "
                    f"e.g. {example}") from None
    return list(iterator)


def rank_bounds_error(given: str, bad: Sequence[str]) -> ShapeError:
    """The error of ranks ``given`` (as the caller got them: ``"'1,9'"``, ``"[9]"``) whose
    items ``bad`` (as given: ``"9"``, ``"1-100000"``) lie outside 0..MAX_RANK: the first three
    of them named, so that the message stays one short line however many there are."""
    named = ", ".join(bad[:3]) + (f", ... ({len(bad)} in all)" if len(bad) > 3 else "")
    verb = "is" if len(bad) == 1 else "are"
    return ShapeError(f"ranks {given}: [{named}] {verb} outside the valid ranks 0..{MAX_RANK}")


def check_ranks(ranks: Iterable[int] | None) -> tuple[int, ...] | None:
    """``ranks`` (an iterable of integers 0..MAX_RANK) as a tuple of ints; None stays None.

    Raises:
        ShapeError: ``ranks`` is one str or bytes, is not iterable, or holds an item that is
            not an integer or not within 0..MAX_RANK (the message :func:`rank_bounds_error` makes,
            as the command line's ``--ranks`` gives it).
    """
    rank_list = list_argument(ranks, "ranks", "integers", ShapeError, example="[1, 2]")
    if rank_list is None:
        return None
    found = int_tuple(tuple(rank_list), "ranks")
    bad = [str(r) for r in found if not 0 <= r <= MAX_RANK]
    if bad:
        raise rank_bounds_error(repr(list(found)), bad)
    return found


def standard_suite(
    *, ops: Iterable[str] | None = None, dtypes: Iterable[DataType | str] | None = None,
    ranks: Iterable[int] | None = None, seed: int = 0,
) -> list[Case]:
    """The standard suite: a deterministic list of small cases with unique ids.

    Transpose: every permutation of ranks 1 to 6 (and the default perm), a seeded sample for
    ranks 7 and 8. Expand: each subset of axes broadcast, rank increases by 1 and 2,
    multidirectional targets. Pad: constant (with and without a value), edge, reflect and wrap,
    pads up to and beyond the dimension where ONNX Runtime allows it (reflect: below it), the
    axes input, opsets 10/11/13/18/19, negative pads. Every data type; special values.

    Args:
        ops: keep only these ops (default: every op of ``CASE_OPS``; empty: no case).
        dtypes: the data types the suite is made in (empty: no case); ``"bool"`` is refused, as
            :func:`~ort_layouts.engine.selection.resolve_dtypes` refuses it. Not a filter, as
            ``ops`` and ``ranks`` are: the small shapes are made in every one of them, the larger
            ones (Transpose's rank-5 and rank-6 permutations, for one) in the first of them, in
            the suite's order, and one of the others in turn. So one data type alone gets every
            shape of the whole suite (``["float16"]``; an integer type all but a few float-only
            ones), and a run per data type is not the whole suite cut in parts (``--shard`` cuts
            it). Their order and repeats make no other case and no other order.
        ranks: keep only cases whose input rank is one of these integers (empty: no case).
        seed: an integer >= 0, mixed into every case's seed (and the rank-7/8 permutation
            sample).

    Raises:
        ShapeError: an op that is not a layout op, a rank that is not an integer 0..8, ``ops`` or
            ``ranks`` given as one str or as no iterable (an int), or a seed that is not an
            integer >= 0.
        DataTypeError: a data type that is unknown, has no cases (4-bit, ``"bool"``), or
            ``dtypes`` given as one str or as no iterable.
    """
    from ort_layouts.engine.selection import resolve_dtypes  # it imports this module

    seed = check_seed(seed)
    op_list = list_argument(ops, "ops", "op names", ShapeError, example="['Transpose', 'Pad']",
                            of_str=True)
    dtype_names = list_argument(dtypes, "dtypes", "data types", DataTypeError, example="['float32', 'int8']",
                                of_str=True)
    rank_tuple = check_ranks(ranks)
    op_set = set(CASE_OPS) if op_list is None else {check_op_type(op, cases=True) for op in op_list}
    # in the suite's order, each once: the order and repeats of those asked select no other case
    asked = None if dtype_names is None else set(resolve_dtypes(dtype_names) or ())
    dtype_list = [t for t in SUITE_DTYPES if asked is None or t in asked]
    rank_set = set(range(MAX_RANK + 1)) if rank_tuple is None else set(rank_tuple)
    if not (op_set and dtype_list and rank_set):
        return []
    cases: list[Case] = []
    for operator in case_operators():
        if op_set.intersection(operator.op_types):
            # the generated cases start at rank 1; rank 0 (and empty tensors) are edge cases
            cases += operator.suite_cases(dtype_list, rank_set - {0}, seed)
            cases += operator.edge_cases(dtype_list)
    cases = [c for c in cases if c.op in op_set and c.data_type in dtype_list and c.rank in rank_set]
    unique = list(dict.fromkeys(cases))
    return [_with_seed(c, seed) for c in unique]


def _with_seed(case: Case, suite_seed: int) -> Case:
    """The case with a seed derived from its own content and the suite seed, so a case keeps
    its id and its data whatever the selection (--ops, --dtypes, --ranks) around it."""
    digest = hashlib.blake2b(f"{suite_seed}|{case.id}".encode(), digest_size=4).digest()
    return dataclasses.replace(case, seed=int.from_bytes(digest, "little") & 0x7FFFFFFF)


def is_edge_case(case: Case) -> bool:
    """Whether a case has a rank-0 tensor or an empty one (the DML EP dispatches nothing for
    a node with an empty tensor): the runner gives such a case a session of its own."""
    return case.rank == 0 or operator_for_type(case.op).has_empty_tensor(case)
