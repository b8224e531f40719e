"""The operators' methods refuse what they cannot take with the library's typed errors, before
any work: ``run`` and ``matches`` views that are not their descriptors' (an operator's own
strided view of a smaller array would write or read past its memory), indexes that are not an
output's, an ``output`` that numbers none, a C++ name that is a keyword."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ort_layouts import (
    ArgumentError,
    BufferTensorDesc,
    DepthToSpaceOp,
    DescriptorError,
    IdentityOp,
    JoinOp,
    PaddingOp,
    ShapeError,
    Slice1Op,
    SpaceToDepthOp,
    SplitOp,
    TileOp,
)

F32 = BufferTensorDesc("float32", (2, 3, 4))
IDENTITY = IdentityOp(F32, F32)
S2D = SpaceToDepthOp.from_onnx("float32", (1, 2, 4, 6), 2)  # output (1, 8, 2, 3)
D2S = DepthToSpaceOp.from_onnx("float32", (1, 8, 2, 3), 2)  # output (1, 2, 4, 6)
PAD = PaddingOp.from_onnx(BufferTensorDesc("float32", (1, 1, 2, 3)), [0, 0, 1, 1, 0, 0, 1, 1])  # (1, 1, 4, 5)
JOIN = JoinOp.from_onnx("float32", [(2, 3), (2, 2)], 1)  # descriptors [1, 1, 2, 3] + [1, 1, 2, 2], axis 3
SPLIT = SplitOp.from_onnx("float32", (6, 4), [2, 4], 0)  # descriptors [1, 1, 6, 4] -> [.., 2, 4], [.., 4, 4]
SINGLE = [IDENTITY, S2D, D2S, PAD, Slice1Op.from_onnx(BufferTensorDesc("float32", (4, 5)), [1], [3]),
          TileOp.from_onnx("float32", (2, 3), (2, 1))]


def _views(op: Any) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(op.output.sizes, np.uint32), np.zeros(op.input.sizes, np.uint32)


# ---- run and matches --------------------------------------------------------------------------
@pytest.mark.parametrize("op", [S2D, D2S], ids=["SpaceToDepth", "DepthToSpace"])
def test_a_source_of_another_shape_is_refused_before_anything_is_written(op: Any) -> None:
    # both views lie at the start of larger arrays: what a strided view of them reached past
    # their own elements would land in the guard words after them
    dst_memory = np.zeros(2000, np.uint32)
    dst = dst_memory[:48].reshape(op.output.sizes)  # both operators have 48 elements each side
    src_memory = np.ones(2000, np.uint32)
    src = src_memory[:48].reshape(op.output.sizes)  # the output's sizes, not the input's
    with pytest.raises(DescriptorError) as info:
        op.run(dst, src)
    assert str(info.value) == (f"src of shape {list(op.output.sizes)} does not fit its descriptor; valid: a "
                               f"numpy array of sizes {list(op.input.sizes)}, as the descriptor's view")
    assert info.value.rule == "view"
    assert not dst_memory.any()  # nothing written, inside dst or past it
    with pytest.raises(DescriptorError, match=r"^src of shape"):
        op.matches(src, dst)


@pytest.mark.parametrize("op", SINGLE, ids=lambda op: type(op).__name__)
@pytest.mark.parametrize(("call", "message"), [
    (lambda op, dst, src: op.run(None, src), "dst None is a NoneType; valid: a numpy array of sizes"),
    (lambda op, dst, src: op.run(dst, src.tolist()), "is a list; valid: a numpy array of sizes"),
    (lambda op, dst, src: op.run(dst, src.astype(np.float64)),
     "dst of dtype uint32 and src of dtype float64 differ; valid: views of one dtype"),
    (lambda op, dst, src: op.run(dst.reshape(-1), src), "dst of shape ["),
    (lambda op, dst, src: op.matches(src, dst.reshape(-1)), "got of shape ["),
    (lambda op, dst, src: op.matches(src, "x"), "got 'x' is a str; valid: a numpy array of sizes"),
], ids=["dst-none", "src-list", "src-float64", "dst-flat", "got-flat", "got-text"])
def test_views_that_are_not_the_descriptors_are_refused(op: Any, call: Callable[..., Any],
                                                        message: str) -> None:
    dst, src = _views(op)
    with pytest.raises(DescriptorError) as info:
        call(op, dst, src)
    assert message in str(info.value)


def test_a_read_only_destination_is_refused() -> None:
    dst, src = _views(IDENTITY)
    dst.flags.writeable = False
    with pytest.raises(DescriptorError, match=r"^dst is read-only; valid: a writeable view$"):
        IDENTITY.run(dst, src)
    assert IDENTITY.matches(src, dst)  # matches only reads it


@pytest.mark.parametrize("threads", ["2", 1.5, True, 0, -1, [2]], ids=repr)
def test_threads_that_are_no_count_are_refused(threads: Any) -> None:
    dst, src = _views(IDENTITY)
    with pytest.raises(ArgumentError, match=r"^threads .* is not valid; valid: an integer >= 1, or None"):
        IDENTITY.run(dst, src, threads=threads)
    with pytest.raises(ArgumentError, match=r"^threads"):
        IDENTITY.matches(src, dst, threads=threads)


def test_valid_views_and_threads_copy_as_before() -> None:
    src = np.arange(48, dtype=np.uint32).reshape(S2D.input.sizes)
    for threads in (None, 2, np.int64(3)):
        dst = np.zeros(S2D.output.sizes, np.uint32)
        S2D.run(dst, src, threads=threads)
        # out[0, (bh*2 + bw)*2 + c, y, x] = in[0, c, 2y + bh, 2x + bw]: out[0, 5, 1, 2] = in[0, 1, 3, 4]
        assert dst[0, 5, 1, 2] == src[0, 1, 3, 4] == 1 * 24 + 3 * 6 + 4
        assert S2D.matches(src, dst, threads=threads)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: JOIN.run_all([np.zeros(JOIN.output.sizes, np.uint32)],
                          [np.zeros(JOIN.inputs[0].sizes, np.uint32)]),
     DescriptorError, "srcs holds 1 views; valid: 2, one per descriptor"),
    (lambda: JOIN.run_all(None, []), DescriptorError,
     "dsts None is a NoneType; valid: a list of 1 numpy arrays, one per descriptor"),
    (lambda: JOIN.matches_all([np.zeros((2, 3), np.uint32), np.zeros((2, 2), np.uint32)],
                              [np.zeros(JOIN.output.sizes, np.uint32)]),
     DescriptorError, "srcs[0] of shape [2, 3] does not fit its descriptor; valid: a numpy array of sizes "
                      "[1, 1, 2, 3]"),
    (lambda: SPLIT.run_all([np.zeros(d.sizes, np.uint32) for d in SPLIT.outputs],
                           np.zeros((6, 4), np.uint32)),
     DescriptorError, "srcs array("),
    (lambda: SPLIT.matches_all([np.zeros(SPLIT.input.sizes, np.float32)],
                               [np.zeros(d.sizes, np.uint32) for d in SPLIT.outputs]),
     DescriptorError, "srcs[0] of dtype float32 differs from uint32"),
    (lambda: SPLIT.run_all([np.zeros(d.sizes, np.uint32) for d in SPLIT.outputs],
                           [np.zeros(SPLIT.input.sizes, np.uint32)], threads="all"),
     ArgumentError, "threads 'all' is not valid"),
], ids=["join-one-source", "join-dsts-none", "join-source-shape", "split-srcs-array", "split-dtypes",
        "split-threads"])
def test_view_lists_that_are_not_the_descriptors_are_refused(call: Callable[[], Any], error: type,
                                                             message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


# ---- indexes -----------------------------------------------------------------------------------
def test_offsets_of_valid_indexes_are_the_hand_worked_ones() -> None:
    # SpaceToDepth: output [0, 5, 1, 2] reads input [0, 1, 3, 4] (input strides 48, 24, 6, 1;
    # output strides 48, 6, 3, 1)
    assert S2D.source_index((0, 5, 1, 2)) == (0, 1, 3, 4)
    assert S2D.buffer_offsets_in_elements((0, 5, 1, 2)) == (46, 35)
    # DepthToSpace (DCR): output [0, 1, 3, 4] reads channel (1*2 + 0)*2 + 1 = 5 at [1, 2]
    assert D2S.source_index(np.array([0, 1, 3, 4])) == (0, 5, 1, 2)
    # Join: ONNX index [1, 4] is [0, 0, 1, 4]; column 4 is column 1 of the second input
    assert JOIN.source_of((1, 4)) == (1, (0, 0, 1, 1))
    assert JOIN.buffer_offsets_in_elements((1, 4)) == (1 * 2 + 1, 1 * 5 + 4)
    # Split: row 1 of output 1 is row 3 of the input
    assert SPLIT.buffer_offsets_in_elements((1, 3), 1) == (3 * 4 + 3, 1 * 4 + 3)
    assert SPLIT.buffer_offsets_in_elements((1, 3), np.int64(1)) == (15, 7)
    # Pad: output [1, 1] of the ONNX rank is inside the interior, input [0, 0]
    assert PAD.buffer_offsets_in_elements((1, 1)) == (0, 1 * 5 + 1)
    assert PAD.buffer_offsets_in_elements((0, 0)) == (None, 0)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: S2D.source_index((0, 8, 0, 0)),
     "index [0, 8, 0, 0] is out of range at axis 1 of sizes [1, 8, 2, 3]; valid: 0..7 there"),
    (lambda: S2D.source_index((0, 0, 0, -1)), "index [0, 0, 0, -1] is out of range at axis 3"),
    (lambda: D2S.source_index((0, 0, 0, 6)),
     "index [0, 0, 0, 6] is out of range at axis 3 of sizes [1, 2, 4, 6]"),
    (lambda: D2S.source_index((0, 0, 0)), "index [0, 0, 0] has 3 axes; valid: 4, for sizes [1, 2, 4, 6]"),
    (lambda: D2S.source_index((0, 0, 0, 0.5)), "index (0, 0, 0, 0.5) holds 0.5, which is not an integer"),
    (lambda: D2S.source_index(None), "index None is not a sequence of integers"),
    (lambda: PAD.buffer_offsets_in_elements("12"), "index '12' is not a sequence of integers"),
    (lambda: PAD.buffer_offsets_in_elements((0,) * 5),
     "index [0, 0, 0, 0, 0] has 5 axes; valid: 4 or fewer (the leading axes then 0)"),
    (lambda: PAD.buffer_offsets_in_elements((4, 0)),
     "index [4, 0] is out of range at axis 2 of sizes [1, 1, 4, 5]"),
    (lambda: JOIN.source_of({0: 1}), "index {0: 1} is not a sequence of integers"),
    (lambda: JOIN.source_of((0, 0, 1, 0, 0)), "index [0, 0, 1, 0, 0] has 5 axes"),
    (lambda: JOIN.source_of((2, 0)), "index [2, 0] is out of range at axis 2 of sizes [1, 1, 2, 5]"),
    (lambda: JOIN.buffer_offsets_in_elements((0, True)), "holds True, which is not an integer"),
    (lambda: JOIN.buffer_offsets_in_elements((0, 0), 1),
     "output 1 is not an output of the JOIN; valid: 0, its one"),
    (lambda: JOIN.buffer_offsets_in_elements((0, 0), None), "output None is not an output of the JOIN"),
    (lambda: SPLIT.buffer_offsets_in_elements((0, 0), -1),
     "output -1 is not an output of the SPLIT; valid: an integer 0..1"),
    (lambda: SPLIT.buffer_offsets_in_elements((0, 0), 2), "output 2 is not an output of the SPLIT"),
    (lambda: SPLIT.buffer_offsets_in_elements((0, 0), True), "output True is not an output of the SPLIT"),
    (lambda: SPLIT.buffer_offsets_in_elements((0, 0), "1"), "output '1' is not an output of the SPLIT"),
    (lambda: SPLIT.buffer_offsets_in_elements((2, 0), 0), "index [2, 0] is out of range at axis 2 of sizes "
                                                          "[1, 1, 2, 4]"),
    (lambda: SPLIT.buffer_offsets_in_elements([[0, 1]]),
     "index [[0, 1]] holds [0, 1], which is not an integer"),
], ids=["s2d-channel", "s2d-negative", "d2s-width", "d2s-short", "d2s-float", "d2s-none", "pad-text",
        "pad-long", "pad-row", "join-dict", "join-long", "join-row", "join-bool", "join-output-1",
        "join-output-none", "split-output-negative", "split-output-2", "split-output-bool",
        "split-output-text", "split-row", "split-nested"])
def test_indexes_and_outputs_that_are_not_the_operators_are_refused(call: Callable[[], Any],
                                                                    message: str) -> None:
    with pytest.raises(ShapeError) as info:
        call()
    assert message in str(info.value)


# ---- C++ ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [*SINGLE[1:], JOIN, SPLIT], ids=lambda op: type(op).__name__)
@pytest.mark.parametrize(("name", "message"), [
    ("class", "'class' is a C++ keyword, which cannot name a variable"),
    (None, "None is not a C++ identifier"),
    ("my op", "'my op' is not a C++ identifier"),
], ids=["keyword", "none", "space"])
def test_to_cpp_refuses_a_name_that_is_no_variable(op: Any, name: Any, message: str) -> None:
    with pytest.raises(DescriptorError) as info:
        op.to_cpp(name)
    assert info.value.rule == "cpp-name" and str(info.value).startswith(message)
