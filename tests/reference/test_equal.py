"""The C kernel of views_equal (ort_layouts/reference/_equal.c) against numpy's np.array_equal:
every way through a block (memcmp rows, 4x4 transposed blocks with their remainders, one element
at a time), each item size, negative and zero strides, a difference anywhere; and views_equal
giving the same answers with the kernel and without it."""

from __future__ import annotations

import os
import platform

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ort_layouts.reference import compare as compare_module
from ort_layouts.reference.compare import views_equal

if os.environ.get("ORT_LAYOUTS_REQUIRE_C_KERNEL"):  # .ci/run installs a C compiler: no skipping
    from ort_layouts.reference import _equal
else:
    _equal = pytest.importorskip("ort_layouts.reference._equal")

UINTS = (np.uint8, np.uint16, np.uint32, np.uint64)


def differs(x: np.ndarray, y: np.ndarray) -> bool:
    return _equal.differs(x, y)


def random_bits(shape: tuple[int, ...], dtype: type, seed: int = 0) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.asarray(np.random.default_rng(seed).integers(0, int(info.max) + 1, size=shape, dtype=dtype))


def flipped(y: np.ndarray, flat_index: int, bit: int = 0) -> np.ndarray:
    z = np.array(y, order="C")  # a copy, 0-d kept (np.ascontiguousarray makes it 1-d)
    z.reshape(-1)[flat_index] ^= z.dtype.type(1 << bit)
    return z


def test_views_equal_uses_the_kernel_where_it_is_built() -> None:
    assert compare_module._c_differs is _equal.differs


@pytest.mark.parametrize("dtype", UINTS)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (4, 4), (9, 13), (2, 3, 17, 6)])
def test_equal_views_of_every_item_size_and_rank(dtype: type, shape: tuple[int, ...]) -> None:
    x = random_bits(shape, dtype)
    assert not differs(x, x.copy())
    for k in range(x.size):
        assert differs(x, flipped(x, k, bit=np.dtype(dtype).itemsize * 8 - 1))


@pytest.mark.parametrize("rows, cols", [(4, 4), (8, 12), (5, 4), (4, 7), (13, 9), (3, 3), (64, 3), (2, 64)])
def test_transposed_blocks_and_their_remainders(rows: int, cols: int) -> None:
    # x contiguous along the rows and y along the columns, 4-byte elements: the 4x4 SSE2 path,
    # then the columns past the last 4 and the rows past the last 4, one element at a time
    source = random_bits((cols, rows), np.uint32)
    x = source.T  # rows x cols, contiguous along the rows
    y = np.ascontiguousarray(x)
    assert x.strides == (4, 4 * rows) and y.strides == (4 * cols, 4)
    assert not differs(x, y)
    for r in range(rows):
        for c in range(cols):  # every position: the 4x4 area and both remainders
            assert differs(x, flipped(y, r * cols + c, bit=31))


def test_a_difference_in_any_outer_block_is_found() -> None:
    x = random_bits((3, 4, 8, 8), np.uint32).transpose(0, 1, 3, 2)
    y = np.ascontiguousarray(x)
    assert not differs(x, y)
    for k in (0, 63, 64, 5 * 64 + 17, y.size - 1):
        assert differs(x, flipped(y, k))


def test_negative_zero_and_empty_strides() -> None:
    x = random_bits((6, 10), np.uint16)
    assert not differs(x[::-1, ::-2], np.ascontiguousarray(x[::-1, ::-2]))
    row = random_bits((10,), np.uint16)
    broadcast = np.broadcast_to(row, (6, 10))
    assert broadcast.strides[0] == 0 and not differs(broadcast, np.tile(row, (6, 1)))
    assert differs(broadcast, flipped(np.tile(row, (6, 1)), 5 * 10 + 3))
    empty = np.zeros((3, 0, 4), np.uint8)
    assert not differs(empty, empty.copy())


def test_bad_arguments_name_the_valid_values() -> None:
    x = np.zeros((2, 2), np.uint32)
    with pytest.raises(ValueError, match=r"itemsize 16 is not valid; valid: 1, 2, 4, 8"):
        _equal.differs(np.zeros(2, "V16"), np.zeros(2, "V16"))
    with pytest.raises(ValueError, match=r"axis 1 is 2 long in x and 3 in y; valid: the same shape"):
        _equal.differs(x, np.zeros((2, 3), np.uint32))
    with pytest.raises(ValueError, match=r"x has 2 axes of 4-byte items, y 1 of 4-byte items; valid: the"):
        _equal.differs(x, np.zeros(4, np.uint32))
    with pytest.raises(ValueError, match=r"x has 2 axes of 4-byte items, y 2 of 2-byte items"):
        _equal.differs(x, np.zeros((2, 2), np.uint16))
    with pytest.raises(TypeError):
        _equal.differs([1, 2], [1, 2])  # no buffer
    with pytest.raises(ValueError, match=r"axis 1 is 3 long in x and 4 in y"):  # an empty axis first
        _equal.differs(np.zeros((0, 3), np.uint32), np.zeros((0, 4), np.uint32))
    assert _equal.differs(np.zeros((0, 3), np.uint32), np.zeros((0, 3), np.uint32)) is False


def test_any_alignment() -> None:
    raw = np.zeros(4 * 64 + 1, np.uint8)
    raw[1:] = random_bits((4 * 64,), np.uint8)
    odd = raw[1:].view(np.uint32).reshape(8, 8)  # addresses one past 4-byte alignment
    assert not odd.flags.aligned
    assert not differs(odd.T, np.ascontiguousarray(odd.T)) and not differs(odd, odd.copy())
    assert differs(odd.T, flipped(np.ascontiguousarray(odd.T), 9))


@st.composite
def view_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """A strided view of random bits (permuted, reversed, stepped or broadcast axes) and a
    C-contiguous copy of it, of any unsigned item size."""
    rank = draw(st.integers(0, 5))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    dtype = draw(st.sampled_from(UINTS))
    base = random_bits(tuple(2 * n for n in shape), dtype, seed=draw(st.integers(0, 2**16)))
    steps = tuple(draw(st.sampled_from((1, 2, -1, -2))) for _ in shape)
    view = np.asarray(base[tuple(slice(None, None, s) for s in steps)][tuple(slice(0, n) for n in shape)])
    perm = draw(st.permutations(range(rank)))
    view = view.transpose(perm)
    if rank and draw(st.booleans()):  # one broadcast axis
        axis = draw(st.integers(0, rank - 1))
        view = np.broadcast_to(view[tuple(slice(0, 1) if k == axis else slice(None) for k in range(rank))],
                               view.shape)
    return view, np.array(view, order="C")


@settings(max_examples=300, deadline=None)
@given(view_pairs(), st.data())
def test_property_the_kernel_agrees_with_numpy(pair: tuple[np.ndarray, np.ndarray],
                                               data: st.DataObject) -> None:
    x, y = pair
    assert differs(x, y) is (not np.array_equal(x, y))
    assert differs(y, x) is False
    k = data.draw(st.integers(0, y.size - 1))
    bit = data.draw(st.integers(0, y.itemsize * 8 - 1))
    z = flipped(y, k, bit)
    assert differs(x, z) is (not np.array_equal(x, z)) is True
    assert differs(z, x) is True


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "numpy"])
@pytest.mark.parametrize("perm", [(0, 2, 3, 1), (0, 3, 1, 2), (1, 0, 2, 3)])
def test_views_equal_same_answer_with_and_without_the_kernel(
        monkeypatch: pytest.MonkeyPatch, kernel: bool, perm: tuple[int, ...]) -> None:
    if not kernel:
        monkeypatch.setattr(compare_module, "_c_differs", None)
    x = random_bits((2, 24, 160, 200), np.uint32)  # 6 MiB: the tiled path
    view = x.transpose(perm)
    y = np.ascontiguousarray(view)
    assert views_equal(view, y, threads=2)
    for k in (0, y.size // 3, y.size - 1):
        assert not views_equal(view, flipped(y, k, bit=17), threads=2)
    pad = random_bits((3, 300, 1100), np.uint32)  # the slab path: rows contiguous in both
    inner = pad[:, 1:-1, 2:-2]
    assert views_equal(inner, np.ascontiguousarray(inner))
    assert not views_equal(inner, flipped(np.ascontiguousarray(inner), inner.size - 5))


def test_tiles_reach_the_kernel_in_its_transposing_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """views_equal hands the kernel each transposed tile with the scratch tile's rows and y's
    columns 4 bytes apart: the layout of its SSE2 4x4-block path."""
    seen: list[tuple[int, int]] = []
    real = _equal.differs

    def recorded(a: np.ndarray, b: np.ndarray) -> bool:
        seen.append((a.strides[-2], b.strides[-1]))
        return real(a, b)

    monkeypatch.setattr(compare_module, "_c_differs", recorded)
    x = random_bits((2, 24, 160, 200), np.uint32)
    view = x.transpose(0, 2, 3, 1)  # NCHW read as NHWC
    assert views_equal(view, np.ascontiguousarray(view), threads=1)
    assert len(seen) > 1 and set(seen) == {(4, 4)}


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "numpy"])
def test_large_views_on_two_threads(monkeypatch: pytest.MonkeyPatch, kernel: bool) -> None:
    """Views of 8 MiB or more are compared on several threads: tiles (transposed) and slabs
    (threads asked for), each finding a difference near either end."""
    if not kernel:
        monkeypatch.setattr(compare_module, "_c_differs", None)
    x = random_bits((2, 32, 200, 200), np.uint32)  # 10 MiB
    for view in (x.transpose(0, 2, 3, 1), x[:, :, 1:-1, 1:-1]):
        y = np.ascontiguousarray(view)
        assert views_equal(view, y, threads=2)
        for k in (3, y.size - 4):
            assert not views_equal(view, flipped(y, k, bit=30), threads=2)


def test_float_views_keep_numpy_semantics() -> None:
    # the kernel compares bits; float views keep np.array_equal's values (NaN differs from itself)
    nan = np.array([np.nan, 1.0], dtype=np.float32)
    assert compare_module._kernel_for(nan, nan) is None
    assert not views_equal(nan, nan.copy())
    big_endian = np.arange(4, dtype=">u4")
    assert compare_module._kernel_for(big_endian, big_endian) is None
    assert views_equal(big_endian, np.arange(4, dtype="<u4").astype(">u4"))


def test_comparison_kernel_names_what_compares(monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.engine.environment import environment

    x86 = platform.machine().lower() in ("x86_64", "amd64")
    assert compare_module.comparison_kernel() == ("C with SSE2" if x86 else "C")
    assert environment()["comparison_kernel"] == compare_module.comparison_kernel()
    monkeypatch.setattr(compare_module, "_c_differs", None)
    assert compare_module.comparison_kernel() == "numpy"


def test_numpy_comparison_leaves_the_kernel_aside_for_its_block(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = compare_module._c_differs

    def counting(*args: object) -> bool:
        calls.append(1)
        assert real is not None
        return real(*args)

    monkeypatch.setattr(compare_module, "_c_differs", counting)
    x = random_bits((40, 30), np.uint32).T
    with compare_module.numpy_comparison():
        assert compare_module.comparison_kernel() == "numpy"
        assert views_equal(x, np.ascontiguousarray(x)) and not calls
    assert views_equal(x, np.ascontiguousarray(x)) and calls == [1]


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "numpy"])
@pytest.mark.parametrize("dtype", UINTS)
def test_bits_equal_with_and_without_the_kernel(monkeypatch: pytest.MonkeyPatch, kernel: bool,
                                                dtype: type) -> None:
    """bits_equal (the diagnosis's and compare's test) gives np.array_equal's answer either way:
    sizes with a tail past whole 8-byte words, a flipped bit anywhere, a size that differs."""
    from ort_layouts.reference.compare import bits_equal

    if not kernel:
        monkeypatch.setattr(compare_module, "_c_differs", None)
    for size in (0, 1, 7, 333, 300_001):
        a = random_bits((size,), dtype, seed=size)
        assert bits_equal(a, a.copy())
        for k in {0, size // 2, size - 1} if size else set():
            b = flipped(a, k, bit=np.dtype(dtype).itemsize * 8 - 1)
            assert not bits_equal(a, b) and not np.array_equal(a, b)
        assert not bits_equal(a, random_bits((size + 1,), dtype))


def test_views_of_more_axes_than_the_kernel_takes_are_compared_in_numpy() -> None:
    """numpy allows 64 axes, the kernel 32: past that views_equal leaves the kernel aside."""
    x = random_bits((2,) * 10, np.uint8).reshape((1,) * 24 + (2,) * 10)  # 34 axes
    with pytest.raises(ValueError, match="the views have 34 axes; valid: at most 32"):
        differs(x, x.copy())
    assert views_equal(x, x.copy())
    assert not views_equal(x, flipped(x, 700))


def test_a_build_without_the_kernel_compares_in_numpy() -> None:
    """As an install without a C compiler imports it: the kernel's module cannot be imported,
    comparison_kernel says numpy, and views_equal still answers."""
    import subprocess
    import sys

    code = """
import sys
sys.modules["ort_layouts.reference._equal"] = None  # import raises ImportError
import numpy as np
from ort_layouts.reference.compare import comparison_kernel, views_equal
x = np.arange(24, dtype=np.uint32).reshape(2, 3, 4)
y = np.ascontiguousarray(x.transpose(2, 0, 1))
z = y.copy(); z[1, 1, 1] ^= 1
print(comparison_kernel(), views_equal(x.transpose(2, 0, 1), y), views_equal(x.transpose(2, 0, 1), z))
"""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.split() == ["numpy", "True", "False"]
