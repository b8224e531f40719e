"""Which cases a run takes: the standard suite or a model's layout ops, filtered by op, data
type, rank and input values, then sharded and limited.

Front ends name a selection with comma lists (``Transpose,Pad``, ``1-4``); :func:`parse_list`
is the one way to read them, with the element parser as a parameter; :func:`parse_names` reads
the name lists and :func:`parse_ranks` the rank lists, and :func:`parse_selection_list` reads
each of the selection's lists (:data:`SELECTION_LISTS`) as every front end takes it. Bad values
raise :class:`~ort_layouts._errors.ShapeError` (or :class:`~ort_layouts._errors.DataTypeError`
for data types) naming the value and the valid choices; a front end maps them to its own error
lines. The same checks guard the Python API: :func:`check_dims` (dynamic dimensions are
integers >= 1) and :func:`check_value` (a constant that its data type cannot hold is refused,
never rounded to another value).

The engine does not read models: :func:`select_cases` takes the function that turns a model
into cases (``ort_layouts.models.extract.model_cases``) as ``model_cases``, and calls it once with
every value kind asked, so that a selection reads the model and extracts its layout ops once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from ort_layouts._errors import ArgumentError, DataTypeError, ModelError, OrtLayoutsError, ShapeError
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import INT64_MAX, is_integer
from ort_layouts.engine.suite import (
    MAX_RANK,
    SUITE_DTYPE_NAMES,
    SUITE_DTYPES,
    check_ranks,
    check_seed,
    list_argument,
    rank_bounds_error,
    standard_suite,
)
from ort_layouts.operators.case import VALUE_KINDS, Case
from ort_layouts.operators.padding import check_value
from ort_layouts.operators.registry import check_op_type

__all__ = [
    "SELECTION_LISTS",
    "ModelCases",
    "check_dims",
    "check_value",
    "parse_list",
    "parse_names",
    "parse_ranks",
    "parse_selection_list",
    "resolve_dtypes",
    "resolve_ops",
    "resolve_value_kinds",
    "select_cases",
]

T = TypeVar("T")


# ---- comma lists ---------------------------------------------------------------------------
def parse_list(
    text: str,
    item: Callable[[str], T],
    *,
    what: str = "values",
    example: str = "",
    brackets: bool = False,
    skip_blanks: bool = True,
    allow_empty: bool = False,
) -> tuple[T, ...]:
    """Read a comma-separated list, each element with ``item``.

    Args:
        text: the list, e.g. ``"1,1,3,5"`` or ``"Transpose, Pad"``.
        item: parses one element (stripped of blanks). An :class:`OrtLayoutsError` it raises
            keeps its message; any other ``ValueError`` becomes "TEXT is not a comma-separated
            list of WHAT (e.g. EXAMPLE)".
        what, example: name the elements and show a valid list in that message.
        brackets: also take the list in brackets or parentheses (``"[1, 1, 3, 5]"``); blanks
            inside it are dropped.
        skip_blanks: leave out empty elements (``"a,,b"``); without it an empty element is
            an error.
        allow_empty: an empty list is ``()``; without it, an error.

    Raises:
        ShapeError: an element ``item`` rejects, an empty element (without ``skip_blanks``),
            or an empty list where one is not allowed.
    """
    body = text.strip()
    if brackets:
        body = body.strip("[]()").replace(" ", "")
    parts = [p.strip() for p in body.split(",")] if body else []
    if skip_blanks:
        parts = [p for p in parts if p]
    if not parts:
        if allow_empty:
            return ()
        raise ShapeError(f"{text!r} is an empty list")
    example_text = f" (e.g. {example})" if example else ""
    values: list[T] = []
    for number, part in enumerate(parts, 1):
        if not part:
            raise ShapeError(f"{text!r} has an empty item (item {number}); separate {what} with single "
                             f"commas{example_text}")
        try:
            values.append(item(part))
        except OrtLayoutsError:
            raise
        except ValueError:
            raise ShapeError(f"{text!r} is not a comma-separated list of {what}{example_text}") from None
    return tuple(values)


def _rank_ends(part: str) -> tuple[str, int, int]:
    """``"3"`` as ("3", 3, 3), ``"1-4"`` as ("1-4", 1, 4): the item and its lowest and
    highest rank, not yet checked against 0..MAX_RANK."""
    try:
        return part, int(part), int(part)  # a negative one too: out of 0..MAX_RANK, said by the caller
    except ValueError:
        pass
    try:
        lo, hi = (int(v) for v in part.split("-", 1))
    except ValueError:
        raise ShapeError(f"rank {part!r} is not an integer or a range like 1-4") from None
    if lo < 0 or hi < 0:  # "1--4": an end out of 0..MAX_RANK, said by the caller
        return part, min(lo, hi), max(lo, hi)
    if lo > hi:
        raise ShapeError(f"rank range {part!r} runs backwards; valid: low-high, e.g. {hi}-{lo}")
    return part, lo, hi


def parse_ranks(text: str) -> tuple[int, ...]:
    """``"1,2,4"`` or ``"0-4"`` (ranks 0 to 8; 0 is ONNX's scalars), in the order given,
    without repeats. A range's ends are checked before it is expanded.

    Raises:
        ShapeError: an element that is not a rank or a range, a rank outside 0..8 (the
            message naming the given items, at most three of them), or no ranks.
    """
    items = parse_list(text, _rank_ends, what="ranks", example="1,2,4 or 1-4", skip_blanks=False)
    bad = [part for part, lo, hi in items if lo < 0 or hi > MAX_RANK]
    if bad:
        raise rank_bounds_error(repr(text), bad)
    return tuple(dict.fromkeys(r for _, lo, hi in items for r in range(lo, hi + 1)))


def parse_names(text: str) -> tuple[str, ...]:
    """``"Transpose,Pad"``: one name or more, each stripped of blanks, in the order given. The
    names are read, not checked: :func:`resolve_ops` and the others check them.

    Raises:
        ShapeError: an empty item (``"a,,b"``, ``"a,"``, a lone ``","``, which would otherwise
            select everything) or no name at all.
    """
    return parse_list(text, str, what="names", skip_blanks=False)


#: the selection's lists that a front end takes as comma lists (``--ops``, ``--ort-ops``...)
SELECTION_LISTS: tuple[str, ...] = ("ops", "dtypes", "ranks", "values")


def parse_selection_list(option: str, text: str) -> tuple[str, ...] | tuple[int, ...]:
    """The comma list given for one of the selection's lists, as every front end reads it:
    ``ranks`` with :func:`parse_ranks` (``"1,2,4"``, ``"1-4"``), ``ops``, ``dtypes`` and
    ``values`` with :func:`parse_names` (``"Transpose,Pad"``).

    Args:
        option: which list: one of :data:`SELECTION_LISTS`.
        text: the list as given.

    Raises:
        ShapeError: a list those functions refuse.
        ArgumentError: ``option`` is not one of :data:`SELECTION_LISTS`.
    """
    if option not in SELECTION_LISTS:
        raise ArgumentError(f"selection list {option!r} is not one of the selection's lists; valid: "
                            f"{list(SELECTION_LISTS)}")
    return parse_ranks(text) if option == "ranks" else parse_names(text)


# ---- the filters ---------------------------------------------------------------------------
def resolve_ops(names: Iterable[str] | None) -> list[str] | None:
    """Op names in any case (``"transpose"``) as the suite spells them; None (or an empty
    list) for every op.

    Raises:
        ShapeError: a name that is not one of the suite's ops (or no str), or one str or no
            iterable given for the list.
    """
    names = list_argument(names, "ops", "op names", ShapeError, example="['Transpose', 'Pad']", of_str=True)
    if not names:
        return None
    return [check_op_type(o, cases=True, any_case=True) for o in names]


def resolve_dtypes(names: Iterable[DataType | str] | None) -> list[DataType] | None:
    """Data types by name (``"float16"``, ``"half"``...) or as DataTypes; None (or an empty
    list) for every one.

    ``"bool"`` is refused: the DML EP runs ONNX bool tensors as DirectML UINT8, and the suite
    has no bool cases of its own, so taking it for ``uint8`` would run other cases than asked.

    Raises:
        DataTypeError: a name of no data type, ``"bool"``, or one str or no iterable given for
            the list.
    """
    names = list_argument(names, "dtypes", "data types", DataTypeError, example="['float32', 'int8']",
                          of_str=True)
    if not names:
        return None
    valid = list(SUITE_DTYPE_NAMES)
    found = []
    for d in names:
        if isinstance(d, str) and d.strip().lower() == "bool":
            raise DataTypeError(
                "data type 'bool' has no cases of its own: the DML EP runs ONNX bool tensors as DirectML "
                f"UINT8, so uint8 covers them; valid: {valid}")
        try:
            data_type = DataType.coerce(d)
        except DataTypeError:
            raise DataTypeError(f"unknown data type {d!r}; valid: {valid}") from None
        if data_type not in SUITE_DTYPES:
            raise DataTypeError(f"data type {data_type.name.lower()!r} has no cases (the suite makes no "
                                f"4-bit data); valid: {valid}")
        found.append(data_type)
    return found


def resolve_value_kinds(kinds: Iterable[str] | None) -> list[str] | None:
    """Input value kinds in any case (``"Random"``), as :data:`VALUE_KINDS` spells them
    (random, special, iota), as :func:`resolve_ops` and :func:`resolve_dtypes` take their
    names; None (or an empty list) for every one.

    Raises:
        ShapeError: an unknown kind, or one str or no iterable given for the list.
    """
    given = list_argument(kinds, "values", "value kinds", ShapeError, example="['random', 'special']",
                          of_str=True)
    if not given:
        return None
    found = []
    for v in given:
        kind = v.lower() if isinstance(v, str) else v
        if kind not in VALUE_KINDS:
            raise ShapeError(f"unknown kind {v!r}; valid: {list(VALUE_KINDS)}")
        found.append(kind)
    return found


# ---- values the Python API takes as well as the command line ---------------------------------
def check_dims(dims: Mapping[str, int] | None) -> dict[str, int]:
    """Values of a model's dynamic dimensions (``{"batch": 1}``): each name a non-empty string,
    each value an integer from 1 (ONNX Runtime's DML EP and DirectML have no zero sizes, and a
    dim_param stands for a real size) to 2**63 - 1 (an ONNX dimension is an int64).

    Raises:
        ShapeError: a value that is not an integer from 1 to 2**63 - 1, or a name that is not
            a string.
    """
    if dims is None:
        return {}
    if not isinstance(dims, Mapping):
        raise ShapeError(f"dims {dims!r} is not a mapping of dimension names to sizes (e.g. {{'batch': 1}})")
    checked: dict[str, int] = {}
    for name, value in dims.items():
        if not isinstance(name, str) or not name.strip():
            raise ShapeError(f"dimension name {name!r} is not a non-empty string (e.g. {{'batch': 1}})")
        if not is_integer(value) or not 1 <= int(value) <= INT64_MAX:
            raise ShapeError(f"dimension {name}={value!r} is not an integer >= 1 and <= {INT64_MAX} "
                             f"(int64's largest, the most an ONNX dimension holds; e.g. {{{name!r}: 1}})")
        checked[name.strip()] = int(value)
    return checked


class ModelCases(Protocol):
    """Turns a model into validation cases, as ``ort_layouts.models.extract.model_cases`` does:
    the cases of each value kind of ``values`` in turn, from one reading of the model."""

    def __call__(self, model: str | Path, *, dims: Mapping[str, int] | None = ...,
                 values: Sequence[str] = ..., seed: int = ...) -> Sequence[Case]: ...


# ---- the selection -------------------------------------------------------------------------
def select_cases(
    *,
    ops: Iterable[str] | None = None,
    dtypes: Iterable[DataType | str] | None = None,
    ranks: Iterable[int] | None = None,
    values: Iterable[str] | None = None,
    seed: int = 0,
    shard: tuple[int, int] | None = None,
    limit: int | None = None,
    model: str | Path | None = None,
    dims: Mapping[str, int] | None = None,
    model_cases: ModelCases | None = None,
) -> list[Case]:
    """The cases a selection names, in the suite's (or the model's) deterministic order.

    Args:
        ops: keep these ops (any case); None or empty: all.
        dtypes: keep these data types; None or empty: all.
        ranks: keep cases of these input ranks; None or empty: all.
        values: keep cases whose input values are of these kinds; None or empty: the suite's
            own (for a model: random). As with ``ops``, ``dtypes`` and ``ranks``, their order
            and repeats make no other case and no other order.
        seed: seed of the input data.
        shard: (K, N): the K-th (1-based) of N interleaved shards.
        limit: at most this many cases, after sharding.
        model: take the layout nodes (the data-movement ops) of this model instead of the standard suite.
        dims: values of the model's dynamic dimensions.
        model_cases: reads the model's cases (needed with ``model``); called once, with every
            value kind.

    Returns:
        The cases; an empty list when nothing matches (each front end words that itself).

    Raises:
        ShapeError: an unknown op or value kind, a rank that is not an integer 0..8, ``ops``,
            ``ranks`` or ``values`` given as one str or as no iterable (an int), a shard that
            is not a pair of integers 1 <= K <= N, a negative seed, a limit < 1, or a dynamic
            dimension that is not an integer from 1 to 2**63 - 1.
        DataTypeError: an unknown data type, or ``dtypes`` given as one str or as no iterable.
        ModelError: a model without ``model_cases``, or one that cannot be read.
    """
    seed = check_seed(seed)
    if limit is not None and (not is_integer(limit) or limit < 1):
        raise ShapeError(f"limit {limit!r} is not an integer >= 1 (None: no limit)")
    dims = check_dims(dims)
    op_names = resolve_ops(ops)
    data_types = resolve_dtypes(dtypes)
    kinds = resolve_value_kinds(values)
    if kinds:  # in VALUE_KINDS' order, each once: their order and repeats select no other case
        kinds = [k for k in VALUE_KINDS if k in kinds]
    rank_tuple = check_ranks(ranks)
    rank_set = set(rank_tuple) if rank_tuple else None
    if shard is not None:
        if (not isinstance(shard, Sequence) or isinstance(shard, (str, bytes)) or len(shard) != 2
                or not all(is_integer(v) for v in shard)):
            raise ShapeError(f"shard {shard!r} is not a pair of integers (K, N); valid: 1 <= K <= N, "
                             "e.g. (1, 4)")
        if not 1 <= shard[0] <= shard[1]:
            raise ShapeError(f"shard {shard[0]}/{shard[1]} needs 1 <= K <= N (e.g. 1/4)")
    cases: list[Case]
    if model is not None:
        if model_cases is None:
            raise ModelError(f"model {str(model)!r}: select_cases needs model_cases to read a model "
                             "(e.g. ort_layouts.models.extract.model_cases)")
        cases = [c for c in model_cases(model, dims=dims, values=tuple(kinds or ["random"]), seed=seed)
                 if (op_names is None or c.op in op_names)
                 and (data_types is None or c.data_type in data_types)
                 and (rank_set is None or c.rank in rank_set)]
    else:
        cases = list(standard_suite(ops=op_names, dtypes=data_types,
                                    ranks=sorted(rank_set) if rank_set else None, seed=seed))
    if kinds:
        cases = [c for c in cases if c.values in kinds]
    if shard:
        k, n = shard
        cases = cases[k - 1::n]
    if limit:
        cases = cases[:limit]
    return cases
