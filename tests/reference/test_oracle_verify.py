"""verify (fused expected-output and comparison) and views_equal, against numpy as the reference:
np.transpose, np.broadcast_to and np.pad give the expected tensors, and verify must return exactly
what compare returns for them, passing or not."""

from __future__ import annotations

import numpy as np
import pytest

from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import dml_operator as operator_for
from ort_layouts.operators.identity import IdentityOp
from ort_layouts.reference.compare import compare, views_equal
from ort_layouts.reference.execute import verify

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def random_values(dtype: DataType, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    npt = dtype.to_numpy()
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * npt.itemsize, dtype=np.uint8)
    return raw.view(npt).reshape(shape)


def flip(a: np.ndarray, flat_index: int, bit: int = 0) -> np.ndarray:
    """A copy of ``a`` with one bit of one element flipped."""
    out = np.ascontiguousarray(a).copy()
    words = out.reshape(-1).view(UINT[out.itemsize])
    words[flat_index] ^= UINT[out.itemsize](1 << bit)
    return out


# (case, numpy reference of the ONNX output)
def _transpose(dt: str, shape: tuple[int, ...], perm: tuple[int, ...]) -> tuple[Case, object]:
    return Case("Transpose", dt, shape, perm=perm), lambda x: np.transpose(x, perm)


def _expand(dt: str, shape: tuple[int, ...], target: tuple[int, ...]) -> tuple[Case, object]:
    return Case("Expand", dt, shape, target_shape=target), lambda x: np.broadcast_to(x, target)


def _pad(dt: str, shape: tuple[int, ...], pads: tuple[int, ...], mode: str) -> tuple[Case, object]:
    rank = len(shape)
    width = list(zip(pads[:rank], pads[rank:], strict=True))
    np_mode = {"edge": "edge", "reflect": "reflect", "wrap": "wrap", "constant": "constant"}[mode]
    return Case("Pad", dt, shape, pads=pads, mode=mode), lambda x: np.pad(x, width, mode=np_mode)


CASES = {
    # small: one np.array_equal
    "transpose-small-f32": _transpose("float32", (2, 3, 4, 5), (0, 2, 3, 1)),
    "expand-small-i64": _expand("int64", (3, 1), (2, 3, 4)),
    "pad-small-reflect-u8": _pad("uint8", (3, 4), (1, 2, 2, 1), "reflect"),
    # > 1 MB: the tiled (transposing) and slab paths, ragged tiles
    "transpose-nchw-nhwc-f32": _transpose("float32", (1, 37, 61, 129), (0, 2, 3, 1)),
    "transpose-reverse-u16": _transpose("uint16", (3, 37, 70, 129), (3, 2, 1, 0)),
    "transpose-last-two-f64": _transpose("float64", (5, 130, 257), (0, 2, 1)),
    "transpose-outer-u8": _transpose("uint8", (9, 300, 700), (1, 0, 2)),
    "expand-channels-f32": _expand("float32", (1, 1, 200, 300), (2, 5, 200, 300)),
    "expand-rows-u16": _expand("uint16", (700, 1), (3, 700, 400)),
    "pad-reflect-f32": _pad("float32", (2, 3, 300, 301), (0, 0, 5, 1, 0, 0, 2, 7), "reflect"),
    "pad-edge-u16": _pad("uint16", (600, 900), (3, 4, 2, 1), "edge"),
    "pad-wrap-i32": _pad("int32", (3, 400, 500), (1, 2, 3, 0, 3, 2), "wrap"),
    "pad-constant-f32": _pad("float32", (2, 500, 600), (0, 1, 2, 1, 3, 4), "constant"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_verify_passes_on_numpy_reference_and_catches_one_flipped_bit(name: str) -> None:
    case, reference = CASES[name]
    x = random_values(case.data_type, case.shape, seed=3)
    expected = np.ascontiguousarray(reference(x))  # type: ignore[operator]
    op = operator_for(case)
    result = verify(op, x, expected)
    assert result and result.mismatch_count == 0 and result.element_count == expected.size
    for where in (0, expected.size // 2 + 7, expected.size - 1):
        actual = flip(expected, where, bit=expected.itemsize * 8 - 1)
        got = verify(op, x, actual)
        assert not got
        assert got == compare(expected, actual)
        assert got.first_mismatch_index == tuple(int(i) for i in np.unravel_index(where, expected.shape))


@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
def test_verify_equals_compare_with_many_mismatches(threads: int) -> None:
    case, reference = CASES["transpose-reverse-u16"]
    x = random_values(case.data_type, case.shape, seed=4)
    expected = np.ascontiguousarray(reference(x))  # type: ignore[operator]
    actual = expected.copy()
    actual.reshape(-1)[::1000] ^= np.uint16(0x8000)
    got = verify(operator_for(case), x, actual, threads=threads)
    assert got == compare(expected, actual)
    assert got.mismatch_count == len(range(0, expected.size, 1000))


def test_verify_reports_shape_and_type_differences_as_compare_does() -> None:
    case, reference = CASES["transpose-small-f32"]
    x = random_values(case.data_type, case.shape)
    expected = np.ascontiguousarray(reference(x))  # type: ignore[operator]
    op = operator_for(case)
    wrong_type = expected.view(np.int32)
    assert verify(op, x, wrong_type) == compare(expected, wrong_type)
    assert "element type int32" in verify(op, x, wrong_type).message
    wrong_shape = expected[:1]
    assert verify(op, x, wrong_shape) == compare(expected, wrong_shape)
    assert "shape [1, 4, 5, 3] differs" in verify(op, x, wrong_shape).message


def test_verify_nan_payloads_and_negative_zero_are_bits() -> None:
    x = np.array([[0x7FC00001, 0x80000000], [0x00000000, 0xFFA00000]], dtype=np.uint32).view(np.float32)
    op = operator_for(Case("Transpose", "float32", (2, 2), perm=(1, 0)))
    assert verify(op, x, np.ascontiguousarray(x.T))
    quieted = np.ascontiguousarray(x.T).copy()
    quieted.view(np.uint32)[0, 0] = 0x7FC00000  # another NaN: equal as a float, not as bits
    assert not verify(op, x, quieted)
    signless = np.ascontiguousarray(x.T).copy()
    signless.view(np.uint32)[1, 0] = 0  # -0.0 -> 0.0
    assert not verify(op, x, signless)


def test_verify_four_bit_types_fall_back_to_the_full_comparison() -> None:
    op = IdentityOp(BufferTensorDesc("uint4", (2, 3)).transpose((1, 0)), BufferTensorDesc("uint4", (3, 2)))
    raw = np.array([0x21, 0x43, 0x65], dtype=np.uint8)  # values 1..6, low nibble first
    values = np.arange(1, 7, dtype=np.uint8).reshape(2, 3)
    assert verify(op, raw, np.ascontiguousarray(values.T))
    assert not verify(op, raw, values.reshape(3, 2))


# ---- views_equal against np.array_equal -------------------------------------------------------
@pytest.mark.parametrize("perm", [(0, 2, 3, 1), (3, 2, 1, 0), (1, 0, 2, 3)],
                         ids=lambda p: "perm" + "".join(map(str, p)))
@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
def test_views_equal_matches_array_equal(perm: tuple[int, ...], threads: int) -> None:
    x = random_values(DataType.UINT32, (2, 37, 71, 129), seed=5)  # ~2.7 MB
    view = np.transpose(x, perm)
    y = np.ascontiguousarray(view)
    assert views_equal(view, y, threads=threads)
    for where in (0, y.size // 3, y.size - 1):
        z = flip(y, where, bit=31)
        assert not views_equal(view, z, threads=threads)
        assert not np.array_equal(view, z)


def test_views_equal_broadcast_and_mismatched_shapes() -> None:
    row = random_values(DataType.UINT16, (1, 1000), seed=6)
    view = np.broadcast_to(row, (900, 1000))
    y = np.ascontiguousarray(view)
    assert views_equal(view, y)
    assert not views_equal(view, flip(y, 899 * 1000 + 999))
    assert not views_equal(view, y[:10])
    assert not views_equal(view, y.view(np.int16))
