"""The selection's checks that guard the Python API as well as the command line: constants a
data type cannot hold, dynamic dimensions, empty list items, bool, seeds and limits."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import pytest

from ort_layouts._errors import ArgumentError, DataTypeError, ShapeError
from ort_layouts.engine.selection import (
    check_dims,
    check_value,
    parse_list,
    parse_names,
    parse_ranks,
    parse_selection_list,
    resolve_dtypes,
    select_cases,
)


# ---- check_value: refused, never rounded into another value -----------------------------------
@pytest.mark.parametrize("value, dtype, fragment", [
    (1e10, "float16", "would become inf"),          # float16's largest finite is 65504
    (65520.0, "float16", "would become inf"),       # rounds up past 65504 to inf in IEEE half
    (-1e39, "float32", "would become inf"),
    (10**400, "float64", "would become inf"),
    (1e-10, "float16", "would become 0"),           # below 2**-24, half's smallest subnormal
    (1e-50, "float32", "would become 0"),
    (1.5, "int8", "not a whole number"),
    (128, "int8", "does not fit"),
    (-129, "int8", "does not fit"),
    (-1, "uint8", "does not fit"),
    (2**64, "uint64", "does not fit"),
    (float("nan"), "int32", "not a whole number"),
    (float("inf"), "int64", "not a whole number"),
    (True, "float32", "not a number"),
    ("1", "float32", "not a number"),
], ids=lambda v: str(v)[:12])
def test_check_value_refuses(value: object, dtype: str, fragment: str) -> None:
    with pytest.raises(ShapeError, match=fragment):
        check_value(value, dtype, what="Pad value")  # type: ignore[arg-type]


@pytest.mark.parametrize("value, dtype, expected", [
    (65504.0, "float16", 65504.0),   # half's largest finite, exact
    (2.0**-24, "float16", 2.0**-24),  # half's smallest subnormal, exact
    (0.1, "float16", 0.1),           # a decimal: the type rounds it to the nearest half, as IEEE does
    (-0.0, "float32", -0.0),
    (3.0, "int8", 3),                # a whole float is its integer
    (127, "int8", 127),
    (-128, "int8", -128),
    (2**64 - 1, "uint64", 2**64 - 1),
    (np.int64(5), "int16", 5),
], ids=lambda v: str(v)[:12])
def test_check_value_takes(value: object, dtype: str, expected: float) -> None:
    got = check_value(value, dtype)  # type: ignore[arg-type]
    assert got == expected
    assert isinstance(got, int) == isinstance(expected, int)
    if isinstance(expected, float) and expected == 0:
        assert math.copysign(1, float(got)) == math.copysign(1, expected)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])
def test_check_value_keeps_nan_and_infinities_given_as_such(value: float) -> None:
    got = check_value(value, "float16")
    assert math.isnan(got) if math.isnan(value) else got == value


def test_check_value_message_quotes_the_text_as_written() -> None:
    with pytest.raises(ShapeError,
                       match=r"^Pad value 1e10 is out of float16's range \(largest finite 65504\)"):
        check_value(1e10, "float16", what="Pad value", text="1e10")


# ---- check_dims ------------------------------------------------------------------------------
@pytest.mark.parametrize("dims", [{"batch": 0}, {"batch": -3}, {"batch": 2.0}, {"batch": False}, {" ": 1},
                                  {1: 1}, [("batch", 1)]],
                         ids=["0", "-3", "float", "bool", "blank", "int-name", "list"])
def test_check_dims_refuses(dims: object) -> None:
    with pytest.raises(ShapeError):
        check_dims(dims)  # type: ignore[arg-type]


def test_check_dims_takes() -> None:
    assert check_dims(None) == {}
    assert check_dims({"batch": 1, " seq ": np.int32(8)}) == {"batch": 1, "seq": 8}


@pytest.mark.parametrize("value", [2**63, 10**30, np.uint64(2**63)],
                         ids=["int64-max-plus-1", "1e30", "uint64"])
def test_check_dims_refuses_sizes_beyond_int64(value: object) -> None:
    # an ONNX dimension's dim_value is an int64 (onnx.proto: TensorShapeProto.Dimension)
    with pytest.raises(ShapeError) as info:
        check_dims({"batch": value})  # type: ignore[dict-item]
    assert str(info.value) == (f"dimension batch={value!r} is not an integer >= 1 and <= 9223372036854775807 "
                               "(int64's largest, the most an ONNX dimension holds; e.g. {'batch': 1})")


def test_check_dims_takes_int64_max() -> None:
    assert check_dims({"batch": 2**63 - 1}) == {"batch": 9223372036854775807}


# ---- lists -----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["float32,,int8", "float32,", ",float32", " , "])
def test_empty_items_are_refused_without_skip_blanks(text: str) -> None:
    with pytest.raises(ShapeError, match=r"empty item|empty list"):
        parse_list(text, str, what="data types", skip_blanks=False)


def test_skip_blanks_still_skips() -> None:
    assert parse_list("a,,b,", str) == ("a", "b")


@pytest.mark.parametrize(("text", "ranks"), [
    ("2", (2,)),
    ("1,2,4", (1, 2, 4)),
    ("0-3", (0, 1, 2, 3)),
    (" 4 , 1-2 ", (4, 1, 2)),     # in the order given, blanks dropped
    ("2,1-3,2", (2, 1, 3)),       # without repeats, each where it first comes
    ("8-8", (8,)),
    ("0-8", (0, 1, 2, 3, 4, 5, 6, 7, 8)),  # every valid rank
    ("8,1-2,2", (8, 1, 2)),
])
def test_parse_ranks_takes(text: str, ranks: tuple[int, ...]) -> None:
    assert parse_ranks(text) == ranks


@pytest.mark.parametrize(("text", "names"), [
    ("Transpose", ("Transpose",)),
    (" Transpose , Pad ", ("Transpose", "Pad")),
    ("pad,PAD", ("pad", "PAD")),  # read, not resolved: resolve_ops checks and spells them
    ("floaty", ("floaty",)),
])
def test_parse_names_takes(text: str, names: tuple[str, ...]) -> None:
    assert parse_names(text) == names


@pytest.mark.parametrize(("option", "text", "parsed"), [
    ("ops", "Transpose, Pad", ("Transpose", "Pad")),
    ("dtypes", "float32,int8", ("float32", "int8")),
    ("values", "random,iota", ("random", "iota")),
    ("ranks", "1-3,6", (1, 2, 3, 6)),
    ("ops", "1-3", ("1-3",)),      # names are names, ranges are for ranks alone
])
def test_parse_selection_list_takes(option: str, text: str, parsed: tuple[object, ...]) -> None:
    assert parse_selection_list(option, text) == parsed


# each list parser, by name: parse_selection_list by the list it reads
PARSERS: dict[str, Callable[[str], tuple[object, ...]]] = {
    "names": parse_names,
    "ranks": parse_ranks,
    **{f"selection-{option}": functools.partial(parse_selection_list, option)
       for option in ("ranks", "dtypes", "values")},
}
NAMES_EMPTY = "separate names with single commas"
RANKS_EMPTY = "separate ranks with single commas (e.g. 1,2,4 or 1-4)"
REFUSED = [
    ("names", "Transpose,,Pad", f"'Transpose,,Pad' has an empty item (item 2); {NAMES_EMPTY}"),
    ("names", ",", f"',' has an empty item (item 1); {NAMES_EMPTY}"),
    ("names", "Pad,", f"'Pad,' has an empty item (item 2); {NAMES_EMPTY}"),
    ("names", "", "'' is an empty list"),
    ("names", "  ", "'  ' is an empty list"),
    ("selection-ranks", "x", "rank 'x' is not an integer or a range like 1-4"),
    ("selection-ranks", "4-1", "rank range '4-1' runs backwards; valid: low-high, e.g. 1-4"),
    ("selection-ranks", "1,9", "ranks '1,9': [9] is outside the valid ranks 0..8"),
    ("selection-ranks", "1,,2", f"'1,,2' has an empty item (item 2); {RANKS_EMPTY}"),
    ("selection-dtypes", "float32,", f"'float32,' has an empty item (item 2); {NAMES_EMPTY}"),
    ("selection-values", "", "'' is an empty list"),
    ("ranks", "1,,2", f"'1,,2' has an empty item (item 2); {RANKS_EMPTY}"),
    ("ranks", "1,", f"'1,' has an empty item (item 2); {RANKS_EMPTY}"),
    ("ranks", "3-1", "rank range '3-1' runs backwards; valid: low-high, e.g. 1-3"),
    # a negative rank is an integer out of range, and a range to one is no backwards range
    ("ranks", "-1", "ranks '-1': [-1] is outside the valid ranks 0..8"),
    ("ranks", "1--4", "ranks '1--4': [1--4] is outside the valid ranks 0..8"),
    ("ranks", "1-", "rank '1-' is not an integer or a range like 1-4"),
    ("ranks", "9", "ranks '9': [9] is outside the valid ranks 0..8"),
    ("ranks", "0-9", "ranks '0-9': [0-9] is outside the valid ranks 0..8"),
    # a range's ends are checked first: no range of billions of ranks is made, and the message
    # names the items given, not every rank they span
    ("ranks", "1-99999999999999999999",
     "ranks '1-99999999999999999999': [1-99999999999999999999] is outside the valid ranks 0..8"),
    ("ranks", "1-30000000", "ranks '1-30000000': [1-30000000] is outside the valid ranks 0..8"),
    ("ranks", "0-8,9-100000", "ranks '0-8,9-100000': [9-100000] is outside the valid ranks 0..8"),
    ("ranks", "9,10,11,12,13",
     "ranks '9,10,11,12,13': [9, 10, 11, ... (5 in all)] are outside the valid ranks 0..8"),
]


@pytest.mark.parametrize(("parser", "text", "message"), REFUSED,
                         ids=[f"{parser}[{text}]" for parser, text, _ in REFUSED])
def test_a_list_parser_refuses_with_its_message(parser: str, text: str, message: str) -> None:
    with pytest.raises(ShapeError) as info:
        PARSERS[parser](text)
    assert str(info.value) == message


def test_parse_selection_list_names_the_valid_lists() -> None:
    with pytest.raises(ArgumentError) as info:
        parse_selection_list("shard", "1/2")
    assert str(info.value) == ("selection list 'shard' is not one of the selection's lists; valid: "
                               "['ops', 'dtypes', 'ranks', 'values']")


def test_bool_is_refused_with_the_reason() -> None:
    with pytest.raises(DataTypeError, match=r"'bool' has no cases of its own.*UINT8"):
        resolve_dtypes(["float32", "bool"])
    assert resolve_dtypes(["uint8"]) is not None


@pytest.mark.parametrize("kwargs, fragment", [
    ({"seed": -1}, "seed -1"),
    ({"seed": 1.5}, "seed 1.5"),
    ({"limit": 0}, "limit 0"),
    ({"dims": {"batch": 0}}, "batch=0"),
    ({"shard": (3, 2)}, "3/2"),
    ({"dtypes": ["bool"]}, "bool"),
], ids=["seed-negative", "seed-float", "limit-zero", "dims-zero", "shard", "bool"])
def test_select_cases_refuses(kwargs: dict, fragment: str) -> None:
    with pytest.raises((ShapeError, DataTypeError), match=fragment):
        select_cases(ops=["Transpose"], ranks=[2], **kwargs)


@pytest.mark.parametrize(("kwargs", "error", "named"), [
    ({"ops": "Pad"}, ShapeError, "ops 'Pad' is one str"),
    ({"dtypes": "float32"}, DataTypeError, "dtypes 'float32' is one str"),
    ({"ranks": "12"}, ShapeError, r"ranks '12' is one str, not a list of integers; valid: a list or other "
                                  r"iterable of integers, e\.g\. \[1, 2\]"),
    ({"ranks": b"12"}, ShapeError, "ranks b'12' is a bytes object"),
    ({"values": "random"}, ShapeError,
     r"values 'random' is one str, not a list of value kinds; valid: a list or other iterable of value "
     r"kinds, e\.g\. \['random'\]"),
])
def test_one_str_for_a_list_is_refused_not_read_as_its_letters(
        kwargs: dict[str, str], error: type[Exception], named: str) -> None:
    with pytest.raises(error, match=named):
        select_cases(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kwargs", "error", "named"), [
    ({"ranks": 3}, ShapeError, r"ranks 3 is not a list of integers; valid: a list or other iterable of "
                               r"integers, e\.g\. \[1, 2\]"),
    ({"ops": 3}, ShapeError, r"ops 3 is not a list of op names; valid: .*e\.g\. \['Transpose', 'Pad'\]"),
    ({"dtypes": 3}, DataTypeError, r"dtypes 3 is not a list of data types; valid: .*e\.g\. \['float32', "),
    ({"values": 3}, ShapeError, r"values 3 is not a list of value kinds; valid: .*e\.g\. \['random', "),
])
def test_no_iterable_for_a_list_is_a_typed_error(kwargs: dict[str, int], error: type[Exception],
                                                 named: str) -> None:
    with pytest.raises(error, match=named):
        select_cases(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"ops": [3]}, "op 3 is not a layout op that makes cases here; valid: "),
    ({"ranks": [[1]]}, r"ranks \(\[1\],\) holds \[1\], which is not an integer"),
    ({"ranks": [1.5]}, r"holds 1\.5, which is not an integer"),
    ({"shard": "1/4"}, r"shard '1/4' is not a pair of integers \(K, N\); valid: 1 <= K <= N, "
                       r"e\.g\. \(1, 4\)"),
    ({"shard": (1,)}, r"shard \(1,\) is not a pair of integers"),
    ({"shard": (True, 2)}, r"shard \(True, 2\) is not a pair of integers"),
], ids=["op-int", "rank-list", "rank-float", "shard-str", "shard-one", "shard-bool"])
def test_bad_items_are_typed_errors(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(ShapeError, match=named):
        select_cases(**kwargs)  # type: ignore[arg-type]


def test_a_model_selection_checks_its_ranks_before_reading_the_model() -> None:
    def model_cases(*args: object, **kwargs: object) -> list[object]:
        raise AssertionError("the model was read")

    with pytest.raises(ShapeError, match=r"holds '2', which is not an integer"):
        select_cases(model="m.onnx", model_cases=model_cases, ranks=["2"])  # type: ignore[list-item,arg-type]


def test_any_iterable_is_a_list() -> None:
    by_list = select_cases(ops=["Tile"], dtypes=["int8"], ranks=[2], values=["iota"])
    assert by_list
    assert select_cases(ops=("Tile",), dtypes={"int8"}, ranks=(r for r in (2,)),
                        values=iter(["iota"])) == by_list
