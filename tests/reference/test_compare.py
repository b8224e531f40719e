"""compare: bit for bit, NaN payloads and -0.0 included; shape and type differences reported."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.operators.identity import IdentityOp
from ort_layouts.reference import compare as compare_module
from ort_layouts.reference.buffers import unpack
from ort_layouts.reference.compare import Comparison, compare
from ort_layouts.reference.execute import execute


def f32(*words: int) -> np.ndarray:
    return np.array(words, dtype=np.uint32).view(np.float32)


def test_equal_arrays_pass_and_are_truthy() -> None:
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    result = compare(a, a.copy())
    assert result and result.passed
    assert (result.element_count, result.mismatch_count, result.first_mismatch_index) == (24, 0, None)


def test_identical_nan_payloads_pass() -> None:
    a = f32(0x7FC00001, 0xFFA00000, 0x80000000)
    assert compare(a, a.copy())


def test_one_flipped_bit_in_a_nan_payload_is_caught() -> None:
    expected = f32(0x3F800000, 0x7FC00001, 0xFFA00000)
    actual = f32(0x3F800000, 0x7FC00003, 0xFFA00000)
    result = compare(expected, actual)
    assert not result
    assert result.mismatch_count == 1
    assert result.first_mismatch_index == (1,)
    assert result.expected_hex == "0100c07f"  # 0x7fc00001 little-endian
    assert result.actual_hex == "0300c07f"
    assert result.expected_value == result.actual_value == "nan"


def test_negative_zero_differs_from_zero() -> None:
    result = compare(np.zeros((2, 2), np.float16), np.array([[0.0, 0.0], [-0.0, 0.0]], np.float16))
    assert not result
    assert result.first_mismatch_index == (1, 0)
    assert (result.expected_hex, result.actual_hex) == ("0000", "0080")
    assert (result.expected_value, result.actual_value) == ("0.0", "-0.0")


def test_mismatch_statistics_and_first_index_in_c_order() -> None:
    expected = np.arange(60, dtype=np.int64).reshape(3, 4, 5)
    actual = expected.copy()
    actual[2, 0, 1] = -1
    actual[1, 3, 4] = 7
    result = compare(expected, actual)
    assert (result.mismatch_count, result.first_mismatch_index) == (2, (1, 3, 4))
    assert result.expected_value == "39" and result.actual_value == "7"
    assert result.expected_hex == "2700000000000000"
    assert "2 of 60" in result.message


@pytest.mark.parametrize("expected,actual,words", [
    (np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32), "shape"),
    (np.zeros(4, np.float32), np.zeros(4, np.int32), "element type"),
    (np.zeros(4, np.float32), np.zeros(4, np.float64), "element type"),
], ids=["shape", "float32-vs-int32", "float32-vs-float64"])
def test_shape_or_type_difference_is_a_mismatch_with_a_message(
        expected: np.ndarray, actual: np.ndarray, words: str) -> None:
    result = compare(expected, actual)
    assert isinstance(result, Comparison) and not result
    assert words in result.message


def test_bool_and_uint8_are_the_same_dml_type() -> None:
    assert compare(np.array([1, 0], np.uint8), np.array([True, False]))
    assert not compare(np.array([2, 0], np.uint8), np.array([True, False]))


def test_non_contiguous_actual_is_compared_in_logical_order() -> None:
    x = np.arange(12, dtype=np.uint16).reshape(3, 4)
    assert compare(np.ascontiguousarray(x.T), x.T)
    assert not compare(x.reshape(4, 3), x.T)


def test_bytes_past_the_elements_are_never_compared() -> None:
    # a uint8 [2,3] output with row pitch 4: bytes 3 and 7 belong to no element
    desc = BufferTensorDesc("uint8", (2, 3), (4, 1))
    op = IdentityOp(BufferTensorDesc("uint8", (2, 3)), desc)
    x = np.arange(6, dtype=np.uint8).reshape(2, 3)
    expected = unpack(desc, execute(op, x))
    garbage = execute(op, x, out=np.full(8, 0xAB, dtype=np.uint8))
    assert garbage[3] == 0xAB and garbage[7] == 0xAB
    assert compare(expected, unpack(desc, garbage))


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 63), st.integers(0, 31), st.sampled_from([np.float32, np.uint32, np.int32]))
def test_property_any_single_bit_flip_is_caught(index: int, bit: int, dtype: type) -> None:
    rng = np.random.default_rng(index)
    expected = rng.integers(0, 2**32, size=64, dtype=np.uint32).view(dtype).reshape(4, 16)
    actual = expected.copy()
    actual.view(np.uint32).reshape(-1)[index] ^= np.uint32(1 << bit)
    result = compare(expected, actual)
    assert not result
    assert result.mismatch_count == 1
    assert result.first_mismatch_index == (index // 16, index % 16)


def test_mismatch_past_the_first_chunk_and_in_the_odd_tail_bytes() -> None:
    expected = np.arange(300_001, dtype=np.uint8)  # 300001 bytes: word chunks plus a 1-byte tail
    actual = expected.copy()
    actual[-1] ^= 1
    assert compare(expected, expected.copy())
    assert compare(expected, actual).first_mismatch_index == (300_000,)
    big = np.arange(400_000, dtype=np.uint64)
    other = big.copy()
    other[350_000] += 1
    assert compare(big, other).first_mismatch_index == (350_000,)


@pytest.mark.parametrize("expected,actual,passed", [
    (np.array([1.0, -0.0], ">f4"), np.array([1.0, -0.0], "<f4"), True),
    (np.array([1.0, 2.0], ">f4"), np.array([1.0, 2.0], ">f4"), True),
    (np.zeros(3, np.complex64), np.zeros(3, np.complex64), False),
    (np.arange(40000, dtype=np.uint16), np.arange(40000, dtype=np.uint16), True),
    (np.uint32([1, 2, 3]), np.uint32([1, 2, 3]).reshape(3, 1), False),
], ids=["big-vs-little-endian", "both-big-endian", "no-dml-type", "above-the-bytes-first-size",
        "same-bytes-other-shape"])
def test_equal_bytes_are_not_enough(expected: np.ndarray, actual: np.ndarray, passed: bool) -> None:
    """Small same-typed tensors are compared as bytes first; byte order, a type DirectML does not
    have and the shape still decide as before."""
    assert bool(compare(expected, actual)) is passed


# ---- which comparison kernel is loaded --------------------------------------------------------
def _fake_kernel(**names: object) -> types.ModuleType:
    module = types.ModuleType(compare_module._KERNEL_MODULE)
    for name, value in names.items():
        setattr(module, name, value)
    return module


def _never(x: np.ndarray, y: np.ndarray) -> bool:
    raise AssertionError("not called")


@pytest.mark.parametrize(("names", "want"), [
    ({"differs": _never, "MAX_DIMS": 32, "SSE2": 1}, (_never, 32, "C with SSE2")),
    ({"differs": _never, "MAX_DIMS": 16, "SSE2": 0}, (_never, 16, "C")),
    ({"differs": _never, "MAX_DIMS": 32}, (_never, 32, "C")),  # SSE2 only names it
    ({"MAX_DIMS": 32, "SSE2": 1}, (None, 0, "numpy")),  # nothing to call
    ({"differs": _never, "SSE2": 1}, (None, 0, "numpy")),  # its axis limit unknown
    ({"differs": _never, "MAX_DIMS": "32", "SSE2": 1}, (None, 0, "numpy")),
], ids=["sse2", "plain", "no-sse2-name", "no-differs", "no-max-dims", "text-max-dims"])
def test_the_kernel_is_taken_by_each_of_its_names(monkeypatch: pytest.MonkeyPatch, names: dict[str, object],
                                                  want: tuple[object, int, str]) -> None:
    monkeypatch.setitem(sys.modules, compare_module._KERNEL_MODULE, _fake_kernel(**names))
    assert compare_module._load_kernel() == want


def test_without_a_built_kernel_views_equal_compares_in_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, compare_module._KERNEL_MODULE, None)  # import raises ImportError
    loaded = compare_module._load_kernel()
    assert loaded == (None, 0, "numpy")
    for name, value in zip(("_c_differs", "_KERNEL_MAX_DIMS", "_KERNEL"), loaded, strict=True):
        monkeypatch.setattr(compare_module, name, value)
    assert compare_module.comparison_kernel() == "numpy"
    x = np.arange(4 * 300 * 300, dtype=np.uint32).reshape(4, 300, 300)
    y = np.ascontiguousarray(x.transpose(0, 2, 1)).transpose(0, 2, 1)  # equal values, other layout
    assert compare_module.views_equal(x, y)
    z = y.copy()
    z[3, 299, 1] ^= 1
    assert not compare_module.views_equal(x, z)


def test_one_numpy_type_of_no_directml_type_is_refused_by_name() -> None:
    """bfloat16 (ml_dtypes) and complex64 are no DirectML data types: two arrays of one of them
    are a mismatch that says so, where the message read "bfloat16 differs from bfloat16"."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dtype in (ml_dtypes.bfloat16, np.complex64, np.dtype("V2")):
        a = np.zeros(3, dtype=dtype)
        got = compare(a, a.copy())
        assert not got.passed
        assert got.message.startswith(f"element type {a.dtype.name} has no DirectML data type")
        assert "'float32'" in got.message and "differs" not in got.message
    other = compare(np.zeros(3, np.float32), np.zeros(3, np.int32))
    assert other.message == "element type int32 differs from the expected float32"


def test_a_missing_output_mismatches_every_element_of_the_other() -> None:
    """No tensor produced (None) on either side: a 2x3 tensor has 6 elements, all 6 mismatched
    (the mismatch count was 6 of 1 element for a missing expected tensor: None's own size)."""
    tensor = np.arange(6, dtype=np.float32).reshape(2, 3)
    for expected, actual, missing in ((tensor, None, "actual"), (None, tensor, "expected")):
        got = compare(expected, actual)
        assert not got.passed
        assert (got.element_count, got.mismatch_count, got.first_mismatch_index) == (6, 6, None)
        assert got.message.startswith(f"no {missing} tensor was produced") and "[2, 3]" in got.message
    both = compare(None, None)
    assert not both.passed and (both.element_count, both.mismatch_count) == (0, 0)


def test_a_larger_actual_shape_mismatches_at_most_the_expected_elements() -> None:
    """A 3x3 actual against a 2x3 expected: the 6 expected elements are compared and all 6
    mismatch (the count was 9 of 6: more mismatches than elements)."""
    got = compare(np.zeros((2, 3), np.float32), np.zeros((3, 3), np.float32))
    assert (got.passed, got.element_count, got.mismatch_count) == (False, 6, 6)
    smaller = compare(np.zeros((3, 3), np.float32), np.zeros((2, 3), np.float32))
    assert (smaller.element_count, smaller.mismatch_count) == (9, 9)
