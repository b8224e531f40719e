"""recover, property: wrong descriptors and parameters injected into random cases of every
registered operator are recovered and named whenever the output identifies them.

The buggy EP. Each trial takes a random case of one of ``CASE_OPS`` (in turn), the DirectML
operator the DML EP builds for it, and injects one bug:

- into an input descriptor (input ``k`` of a JOIN): random strides, its strides permuted, its
  strides multiplied by the element size (bytes for elements), or a base offset of a few
  elements (the buffer read from there on; bytes outside the buffer read as zeros);
- into the operator's parameters: SLICE1's window, PADDING1's start/end split, mode or
  constant, JOIN's input order, TILE's repeats, DEPTH_TO_SPACE1's order or block size,
  SPACE_TO_DEPTH's block size;
- a partial write: the right output zeroed from a flat index on (all outputs one after another).

Each of those is the reference executor's DirectML operator built with the injected parameters
and run on the case's input buffers. Three have no DirectML desc and are this file's own numpy
models: a JOIN input written (in order, later over earlier) or a SPLIT output read through the
whole tensor's packed strides from element ``offset * stride[axis]`` (writes outside the output
dropped, reads outside the input zero), and SPACE_TO_DEPTH in column-row-depth order. The same
simulation answers the recovery's re-runs, on whatever input it is given.

Identifiability is decided here from the simulation alone, never from the code under test. The
simulation is also run on INT64 tensors holding ``index + 1`` (0 then means "no input element",
and Pad's constant is 0): the map from each output element to the input element it holds.

- A bug is *visible* when that map differs from the right operator's (or, for a wrong Pad
  constant, when the output has a border), and *informative* when some output element holds an
  input element at all; a trial is *identifiable* when both hold. Everything that follows is
  asserted on every identifiable trial.
- The recovery *names* the bug when its parameters, run through the same kind of simulation
  (the recovered read, window, padding, offsets, repeats, block size and order, or the region
  right up to an element), give that map exactly (and the injected constant, for a Pad). Two
  parameter sets that give the same map on an input of distinct elements cannot be told apart
  from any output: that is what "modulo what is not identifiable" means here (e.g. the stride of
  a size-1 axis, a window's size past its last element read, EDGE against SYMMETRIC on a
  one-element border, repeats on a size-1 input axis).
- Where the test can also say the parameters are pinned, it compares them with the injected
  ones exactly: a read's strides and offset when the coordinates of the elements read inside the
  buffer, with a column of ones, have full column rank over the axes of size > 1; a window's
  first element and step on every axis (the step where the axis has more than one output);
  JOIN/SPLIT offsets of the tensors that show in the output; the flat index where a partial
  write breaks (the first element at or after the zeroed index whose right value is not zero).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import OrtLayoutsError, ReportError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import INT64_MIN
from ort_layouts.engine.recover import KINDS, Recovery, recover
from ort_layouts.operators.case import Case
from ort_layouts.operators.depth_space import DepthSpaceOrder, DepthToSpaceOp, SpaceToDepthOp
from ort_layouts.operators.identity import IDENTITY, IdentityOp
from ort_layouts.operators.join_split import JoinOp, SplitOp
from ort_layouts.operators.padding import PaddingMode, PaddingOp
from ort_layouts.operators.registry import CASE_OPS, operator_for_type
from ort_layouts.operators.slice import Slice1Op
from ort_layouts.operators.tile import TileOp
from ort_layouts.operators.values import make_input
from ort_layouts.reference.buffers import unpack
from ort_layouts.reference.compare import bits_of
from ort_layouts.reference.execute import execute_all

TRIALS = 700  # 50 per op type
SEED = 20240610
DTYPES = (DataType.FLOAT32, DataType.FLOAT16, DataType.INT32, DataType.INT64, DataType.UINT16,
          DataType.INT8, DataType.UINT8, DataType.FLOAT64)
I64 = DataType.INT64
DESC_BUGS = ("strides", "perm", "bytes", "offset")
OWN_BUGS = {
    "Slice": ("window", "window"), "Pad": ("pads", "mode", "constant"),
    "Concat": ("join-order", "join-offsets"),
    "Split": ("split-offsets", "split-offsets"), "Tile": ("repeats", "repeats"),
    "DepthToSpace": ("d2s-mode", "d2s-block"), "SpaceToDepth": ("s2d-block", "s2d-crd"),
}
IDENTITY_OPS = ("Transpose", "Expand", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity")


# ---- random cases ---------------------------------------------------------------------------
def _shape(rng: np.random.Generator, low: int, high: int, rank: int | None = None) -> tuple[int, ...]:
    rank = int(rng.integers(1, 4)) if rank is None else rank
    return tuple(int(n) for n in rng.integers(low, high + 1, size=rank))


def _slice_axis(n: int, rng: np.random.Generator) -> tuple[int, int, int]:
    """(start, end, step) of a non-empty ONNX slice of an axis of ``n``."""
    step = int(rng.choice([1, 1, 2, 3, -1, -2]))
    count = int(rng.integers(1, (n - 1) // abs(step) + 2))
    span = (count - 1) * abs(step)
    if step > 0:
        first = int(rng.integers(0, n - span))
        return first, first + span + 1, step
    first = int(rng.integers(span, n))
    end = first - span - 1
    return first, (end if end >= 0 else INT64_MIN), step


def random_case(op: str, rng: np.random.Generator) -> Case:
    dt = DTYPES[int(rng.integers(len(DTYPES)))]
    seed = int(rng.integers(1 << 16))
    if op == "Transpose":
        shape = _shape(rng, 1, 4, int(rng.integers(1, 5)))
        return Case(op, dt, shape, perm=tuple(int(p) for p in rng.permutation(len(shape))), seed=seed)
    if op == "Expand":
        shape = tuple(n if rng.random() < 0.5 else 1 for n in _shape(rng, 2, 4))
        target = tuple(n if n > 1 else int(rng.integers(1, 4)) for n in shape)
        target = (int(rng.integers(2, 4)),) * int(rng.integers(0, 2)) + target
        return Case(op, dt, shape, target_shape=target, seed=seed)
    if op == "Pad":
        shape = _shape(rng, 1, 4)
        mode = str(rng.choice(["constant", "constant", "edge", "reflect", "wrap"]))
        if mode == "reflect" and min(shape) < 2:
            mode = "edge"
        pads = tuple(int(p) for p in rng.integers(0, 4, size=2 * len(shape)))
        value = "" if dt.bitwidth == 8 or mode != "constant" else _far_constant(dt, rng).hex()
        return Case(op, dt, shape, pads=pads, mode=mode, pad_value_hex=value, seed=seed)
    if op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"):
        shape = _shape(rng, 1, 4)
        if op == "Reshape":
            return Case(op, dt, shape, target_shape=(math.prod(shape),) if rng.random() < 0.5
                        else tuple(reversed(shape)), seed=seed)
        if op == "Flatten":
            return Case(op, dt, shape, axis=int(rng.integers(0, len(shape) + 1)), seed=seed)
        if op == "Squeeze":
            shape = (1, *shape)
            return Case(op, dt, shape, axes=(0,), seed=seed)
        if op == "Unsqueeze":
            return Case(op, dt, shape, axes=(int(rng.integers(0, len(shape) + 1)),), seed=seed)
        return Case(op, dt, shape, seed=seed)
    if op == "DepthToSpace":
        b = int(rng.choice([2, 2, 3]))
        shape = (int(rng.integers(1, 3)), b * b * int(rng.integers(1, 4)), int(rng.integers(1, 4)),
                 int(rng.integers(1, 4)))
        return Case(op, dt, shape, blocksize=b, mode=str(rng.choice(["DCR", "CRD"])), seed=seed)
    if op == "SpaceToDepth":
        b = int(rng.choice([2, 2, 3]))
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), b * int(rng.integers(1, 3)),
                 b * int(rng.integers(1, 3)))
        return Case(op, dt, shape, blocksize=b, seed=seed)
    if op == "Slice":
        shape = _shape(rng, 2, 6)
        picked = [_slice_axis(n, rng) for n in shape]
        return Case(op, dt, shape, starts=tuple(p[0] for p in picked), ends=tuple(p[1] for p in picked),
                    axes=tuple(range(len(shape))), steps=tuple(p[2] for p in picked), seed=seed)
    if op == "Tile":
        shape = _shape(rng, 1, 3)
        return Case(op, dt, shape, repeats=tuple(int(r) for r in rng.integers(1, 4, size=len(shape))),
                    seed=seed)
    if op in ("Concat", "Split"):
        base = _shape(rng, 1, 3)
        axis = int(rng.integers(0, len(base)))
        parts = tuple(int(p) for p in rng.integers(1, 4, size=int(rng.integers(2, 4))))
        shape = tuple(sum(parts) if a == axis else n for a, n in enumerate(base))
        return Case(op, dt, shape, axis=axis, parts=parts, seed=seed)
    raise AssertionError(f"no random cases for {op}: every registered op needs them here")


def _far_constant(dt: DataType, rng: np.random.Generator) -> bytes:
    """A Pad constant (16 bits or more) whose top byte is >= 0x80: never the bit pattern of a
    small non-negative index, as the recovery's identifying inputs are."""
    item = dt.bitwidth // 8
    raw = bytearray(int(b) for b in rng.integers(0, 256, size=item))
    raw[-1] |= 0x80
    return bytes(raw)


# ---- the simulation -------------------------------------------------------------------------
@dataclasses.dataclass
class Bug:
    kind: str
    op: Any  # the DirectML operator that runs (the right one for own models and partial writes)
    tensor: int = 0  # the input whose descriptor or base offset is wrong
    offset: int = 0
    params: dict[str, Any] = dataclasses.field(default_factory=dict)


def _retyped(desc: BufferTensorDesc, dt: DataType) -> BufferTensorDesc:
    return BufferTensorDesc(dt, desc.sizes, desc.strides)


def _in_type(op: Any, dt: DataType, *, indices: bool = False) -> Any:
    """The operator with every tensor of type ``dt`` (strides kept); Pad's constant 0 when it
    runs on ``indices``."""
    if isinstance(op, JoinOp):
        return dataclasses.replace(op, inputs=tuple(_retyped(d, dt) for d in op.inputs),
                                   output=_retyped(op.output, dt))
    if isinstance(op, SplitOp):
        return dataclasses.replace(op, input=_retyped(op.input, dt),
                                   outputs=tuple(_retyped(d, dt) for d in op.outputs))
    if isinstance(op, PaddingOp):
        value = bytes(dt.bitwidth // 8) if indices else op.padding_value_bytes
        return dataclasses.replace(op, input=_retyped(op.input, dt), output=_retyped(op.output, dt),
                                   padding_value_bytes=value)
    return dataclasses.replace(op, input=_retyped(op.input, dt), output=_retyped(op.output, dt))


def _inputs(op: Any) -> tuple[BufferTensorDesc, ...]:
    return tuple(op.inputs) if isinstance(op, JoinOp) else (op.input,)


def _outputs(op: Any) -> tuple[BufferTensorDesc, ...]:
    return tuple(op.outputs) if isinstance(op, SplitOp) else (op.output,)


def _cut(case: Case, x: np.ndarray) -> list[np.ndarray]:
    """The node's inputs: Concat's cut from the whole tensor along the axis; else the input."""
    if case.op != "Concat":
        return [np.ascontiguousarray(x)]
    edges = list(itertools.accumulate(case.parts or ()))[:-1]
    return [np.ascontiguousarray(p) for p in np.split(x, edges, axis=(case.axis or 0) % case.rank)]


def _buffer(elements: np.ndarray, desc: BufferTensorDesc, offset: int) -> np.ndarray:
    """The elements as the GPU reads them through ``desc`` from base ``offset``: element ``e``
    of the view is ``elements[e + offset]``, zero outside."""
    flat = elements.reshape(-1)
    need = max(-(-desc.total_tensor_size_in_bytes // flat.itemsize), flat.size)
    source = np.arange(need) + offset
    inside = (source >= 0) & (source < flat.size)
    out = np.zeros(need, dtype=flat.dtype)
    out[inside] = flat[source[inside]]
    return out


def _packed(sizes: Sequence[int]) -> np.ndarray:
    return np.array([math.prod(sizes[k + 1:]) for k in range(len(sizes))], dtype=np.int64)


def _coords(count: int, sizes: Sequence[int]) -> np.ndarray:
    return np.stack(np.unravel_index(np.arange(count), tuple(sizes)), axis=1).astype(np.int64)


def _along(whole: Sequence[int], counts: Sequence[int], axis: int) -> list[tuple[int, ...]] | None:
    """The sizes of tensors of ``counts`` elements that share ``whole``'s sizes off ``axis``."""
    rest = math.prod(whole) // whole[axis]
    if any(c % rest for c in counts):
        return None
    return [tuple(c // rest if a == axis else n for a, n in enumerate(whole)) for c in counts]


def _join_model(out_sizes: Sequence[int], in_sizes: Sequence[Sequence[int]], offsets: Sequence[int],
                axis: int, feeds: Sequence[np.ndarray]) -> np.ndarray:
    strides = _packed(out_sizes)
    out = np.zeros(math.prod(out_sizes), dtype=feeds[0].dtype)
    for sizes, off, feed in zip(in_sizes, offsets, feeds, strict=True):
        flat = feed.reshape(-1)
        position = off * strides[axis] + _coords(flat.size, sizes) @ strides
        inside = (position >= 0) & (position < out.size)
        out[position[inside]] = flat[inside]
    return out


def _split_model(in_sizes: Sequence[int], out_sizes: Sequence[Sequence[int]], offsets: Sequence[int],
                 axis: int, x: np.ndarray) -> list[np.ndarray]:
    strides = _packed(in_sizes)
    flat = x.reshape(-1)
    outs = []
    for sizes, off in zip(out_sizes, offsets, strict=True):
        position = off * strides[axis] + _coords(math.prod(sizes), sizes) @ strides
        inside = (position >= 0) & (position < flat.size)
        out = np.zeros(position.size, dtype=flat.dtype)
        out[inside] = flat[position[inside]]
        outs.append(out)
    return outs


def _s2d_crd(x: np.ndarray, b: int) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // b, b, w // b, b).transpose(0, 1, 3, 5, 2, 4).reshape(-1)


def simulate(case: Case, bug: Bug, x: np.ndarray, dt: DataType | None = None, *,
             indices: bool = False) -> list[np.ndarray]:
    """The buggy EP's outputs (ONNX shapes) for the case's input ``x`` (its values' type is
    ``dt``, the case's by default; ``indices``: ``x`` holds index + 1, Pad's constant is 0)."""
    dt = dt or case.data_type
    shapes = operator_for_type(case.op).output_shapes(case)
    feeds = _cut(case, x)
    if bug.kind == "join-offsets":
        op = bug.op
        flat = [_join_model(op.output.sizes, [d.sizes for d in op.inputs], bug.params["offsets"], op.axis,
                            feeds)]
    elif bug.kind == "split-offsets":
        op = bug.op
        flat = _split_model(op.input.sizes, [d.sizes for d in op.outputs], bug.params["offsets"], op.axis, x)
    elif bug.kind == "s2d-crd":
        flat = [_s2d_crd(x, bug.params["block"])]
    else:
        op = _in_type(bug.op, dt, indices=indices)
        order = bug.params.get("order", range(len(feeds)))
        feeds = [feeds[j] for j in order]
        buffers = [_buffer(f, d, bug.offset if k == bug.tensor else 0)
                   for k, (f, d) in enumerate(zip(feeds, _inputs(op), strict=True))]
        raws = execute_all(op, [b.view(np.uint8) for b in buffers])
        flat = [unpack(d, raw).reshape(-1) for d, raw in zip(_outputs(op), raws, strict=True)]
        if bug.kind == "partial":
            whole = np.concatenate(flat)
            whole[bug.params["from"]:] = 0
            flat = np.split(whole, np.cumsum([f.size for f in flat])[:-1])
    return [np.asarray(f).reshape(s) for f, s in zip(flat, shapes, strict=True)]


def index_map(case: Case, bug: Bug) -> np.ndarray:
    """Which input element each output element holds (flat, -1: none), from INT64 index + 1."""
    x = np.arange(1, math.prod(case.shape) + 1, dtype=np.int64).reshape(case.shape)
    outs = simulate(case, bug, x, I64, indices=True)
    return np.concatenate([o.reshape(-1) for o in outs]).astype(np.int64) - 1


# ---- random bugs ----------------------------------------------------------------------------
def _desc_bug(kind: str, case: Case, op: Any, rng: np.random.Generator) -> Bug:
    k = int(rng.integers(len(_inputs(op))))
    desc = _inputs(op)[k]
    strides = list(desc.effective_strides)
    axes = [a for a, n in enumerate(desc.sizes) if n > 1]
    item = case.data_type.bitwidth // 8
    if kind == "bytes" and item > 1:
        strides = [s * item for s in strides]
    elif kind == "perm" and len(axes) > 1:
        order = list(rng.permutation(axes))
        strides = [strides[order[axes.index(a)]] if a in axes else s for a, s in enumerate(strides)]
    elif kind == "offset" or not axes:
        return Bug("offset", op, k, int(rng.choice([-3, -2, -1, 1, 2, 3])))
    else:
        kind = "strides"
        top = max(2, 2 * desc.element_count // max(desc.sizes))
        for a in axes:
            strides[a] = int(rng.integers(0, top))
    wrong = BufferTensorDesc(desc.data_type, desc.sizes, tuple(strides))
    if isinstance(op, JoinOp):
        inputs = list(op.inputs)
        inputs[k] = wrong
        return Bug(kind, dataclasses.replace(op, inputs=tuple(inputs)), k, params={"strides": strides})
    return Bug(kind, dataclasses.replace(op, input=wrong), k, params={"strides": strides})


def _own_bug(kind: str, case: Case, op: Any, rng: np.random.Generator) -> Bug | None:
    dt = case.data_type
    if kind == "window":
        offsets, sizes, strides = (list(v) for v in (op.input_window_offsets, op.input_window_sizes,
                                                     op.input_window_strides))
        for d in [a for a in range(len(sizes)) if rng.random() < 0.6] or [int(rng.integers(len(sizes)))]:
            n_in, n_out = op.input.sizes[d], op.output.sizes[d]
            steps = [s for s in (1, 2, 3, -1, -2, -3) if (n_out - 1) * abs(s) + 1 <= n_in]
            step = int(rng.choice(steps))
            size = (n_out - 1) * abs(step) + 1
            first = int(rng.integers(0, n_in - size + 1)) + (size - 1 if step < 0 else 0)
            offsets[d], sizes[d], strides[d] = (first if step > 0 else first - size + 1), size, step
        return Bug(kind, Slice1Op(op.input, op.output, tuple(offsets), tuple(sizes), tuple(strides)))
    if kind == "pads":
        totals = [s + e for s, e in zip(op.start_padding, op.end_padding, strict=True)]
        start = tuple(int(rng.integers(0, t + 1)) for t in totals)
        end = tuple(t - s for t, s in zip(totals, start, strict=True))
        return Bug(kind, dataclasses.replace(op, start_padding=start, end_padding=end))
    if kind == "mode":
        modes = [m for m in PaddingMode if m != op.mode]
        return Bug(kind, dataclasses.replace(op, mode=modes[int(rng.integers(len(modes)))]))
    if kind == "constant":
        if dt.bitwidth < 16 or op.mode != PaddingMode.CONSTANT:
            return None
        value = _far_constant(dt, rng)
        return Bug(kind, dataclasses.replace(op, padding_value_bytes=value), params={"constant": value.hex()})
    if kind == "join-order":
        order = list(rng.permutation(op.input_count))
        if order == sorted(order):
            order = order[1:] + order[:1]
        return Bug(kind, dataclasses.replace(op, inputs=tuple(op.inputs[j] for j in order)),
                   params={"order": order})
    if kind in ("join-offsets", "split-offsets"):
        offsets = list(op.offsets_along_axis)
        k = int(rng.integers(len(offsets)))
        whole = op.output if kind == "join-offsets" else op.input
        choices = [o for o in range(-2, whole.sizes[op.axis] + 2) if o != offsets[k]]
        offsets[k] = int(rng.choice(choices))
        return Bug(kind, op, params={"offsets": offsets})
    if kind == "repeats":
        reps = op.repeats
        vectors = [v for v in itertools.product(range(1, math.prod(reps) + 1), repeat=len(reps))
                   if math.prod(v) == math.prod(reps) and v != reps]
        if not vectors:
            return None
        wrong = vectors[int(rng.integers(len(vectors)))]
        out = BufferTensorDesc(dt, tuple(n * q for n, q in zip(op.input.sizes, wrong, strict=True)))
        return Bug(kind, TileOp(op.input, out, wrong), params={"repeats": list(wrong)})
    n, c, h, w = op.input.sizes
    if kind == "d2s-mode":
        return Bug(kind, dataclasses.replace(op, order=DepthSpaceOrder(1 - op.order)))
    if kind == "d2s-block":
        blocks = [b for b in range(1, c + 1) if c % (b * b) == 0 and b != op.block_size]
        if not blocks:
            return None
        b = int(rng.choice(blocks))
        out = BufferTensorDesc(dt, (n, c // (b * b), h * b, w * b))
        return Bug(kind, DepthToSpaceOp(op.input, out, b, DepthSpaceOrder(int(rng.integers(2)))))
    if kind == "s2d-block":
        blocks = [b for b in range(1, max(h, w) + 1) if h % b == 0 and w % b == 0 and b != op.block_size]
        if not blocks:
            return None
        b = int(rng.choice(blocks))
        return Bug(kind, SpaceToDepthOp(op.input, BufferTensorDesc(dt, (n, c * b * b, h // b, w // b)), b))
    if kind == "s2d-crd":
        return Bug(kind, op, params={"block": op.block_size})
    raise AssertionError(kind)


def random_bug(case: Case, op: Any, rng: np.random.Generator) -> Bug:
    """One bug: of the operator's own parameters half the time (where it has some), else a
    wrong input descriptor or a partial write."""
    own = OWN_BUGS.get(case.op, ())
    share = 0.75 if case.op == "Pad" else 0.5  # Pad's three bugs share its trials
    while True:
        kinds = own if own and rng.random() < share else (*DESC_BUGS, "partial")
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind == "partial":
            count = sum(d.element_count for d in _outputs(op))
            return Bug(kind, op, params={"from": int(rng.integers(0, count))})
        bug = _desc_bug(kind, case, op, rng) if kind in DESC_BUGS else _own_bug(kind, case, op, rng)
        if bug is not None:
            return bug


# ---- what a recovery reproduces ---------------------------------------------------------------
def _gather(count: int, sizes: Sequence[int], strides: Sequence[int], offset: int) -> np.ndarray:
    position = offset + _coords(math.prod(sizes), sizes) @ np.array(strides, dtype=np.int64)
    return np.where((position >= 0) & (position < count), position, -1)


def recovered_map(r: Recovery, case: Case, op: Any, right: np.ndarray) -> np.ndarray | None:
    """The map the recovered parameters give, by the same simulation (None: not a naming, or
    parameters no DirectML operator takes)."""
    try:
        return _recovered_map(r, case, op, right)
    except (OrtLayoutsError, ValueError):  # parameters that build no operator, or another size
        return None


def _recovered_map(r: Recovery, case: Case, op: Any, right: np.ndarray) -> np.ndarray | None:
    a = r.applied
    count = math.prod(case.shape)
    if r.kind == "read" and r.operator == IDENTITY:
        return _gather(count, a["sizes"], a["strides_in_elements"], a["offset_in_elements"])
    if r.kind == "read":
        k = a["input_index"]
        wrong = BufferTensorDesc(case.data_type, tuple(a["sizes"]), tuple(a["strides_in_elements"]))
        if isinstance(op, JoinOp):
            inputs = list(op.inputs)
            inputs[k] = wrong
            return index_map(case, Bug("read", dataclasses.replace(op, inputs=tuple(inputs)), k,
                                       a["offset_in_elements"]))
        return index_map(case, Bug("read", dataclasses.replace(op, input=wrong), 0, a["offset_in_elements"]))
    if r.kind == "padding":
        pad = dataclasses.replace(op, start_padding=tuple(a["start_padding"]),
                                  end_padding=tuple(a["end_padding"]), mode=PaddingMode[a["mode"]])
        return index_map(case, Bug("padding", pad))
    if r.kind == "slice":
        window = Slice1Op(op.input, op.output, tuple(a["input_window_offsets"]),
                          tuple(a["input_window_sizes"]), tuple(a["input_window_strides"]))
        return index_map(case, Bug("slice", window))
    if r.kind in ("join", "split"):
        axis = a["axis"]
        whole = op.output if r.kind == "join" else op.input
        tensors = op.inputs if r.kind == "join" else op.outputs
        sizes = _along(whole.sizes, [d.element_count for d in tensors], axis)
        if sizes is None:
            return None
        x = np.arange(1, count + 1, dtype=np.int64).reshape(case.shape)
        if r.kind == "join":
            flat = [_join_model(whole.sizes, sizes, a["offsets_along_axis"], axis, _cut(case, x))]
        else:
            flat = _split_model(whole.sizes, sizes, a["offsets_along_axis"], axis, x)
        return np.concatenate(flat) - 1
    if r.kind == "tile":
        reps = tuple(a["repeats"])
        out = BufferTensorDesc(
            case.data_type, tuple(n * q for n, q in zip(op.input.sizes, reps, strict=True)))
        return index_map(case, Bug("tile", TileOp(op.input, out, reps)))
    if r.kind in ("depth_to_space", "space_to_depth"):
        n, c, h, w = op.input.sizes
        b, mode = a["block_size"], a["mode"]
        if r.kind == "depth_to_space":
            out = BufferTensorDesc(case.data_type, (n, c // (b * b), h * b, w * b))
            order = DepthSpaceOrder.DEPTH_COLUMN_ROW if mode == "DCR" else DepthSpaceOrder.COLUMN_ROW_DEPTH
            return index_map(case, Bug("d2s", DepthToSpaceOp(op.input, out, b, order)))
        if mode == "CRD":
            return index_map(case, Bug("s2d-crd", op, params={"block": b}))
        out = BufferTensorDesc(case.data_type, (n, c * b * b, h // b, w // b))
        return index_map(case, Bug("s2d", SpaceToDepthOp(op.input, out, b)))
    if r.kind == "region":
        z = a["right_until_element"]
        if a["after"] == "nothing from the input":
            return np.concatenate([right[:z], np.full(right.size - z, -1)])
        if a["after"] == "read":
            tail = a["after_read"]
            return np.concatenate([right[:z], _gather(count, tail["sizes"], tail["strides_in_elements"],
                                                      tail["offset_in_elements"])])
    return None


def _pinned(coords: np.ndarray, sizes: Sequence[int]) -> bool:
    """Whether the coordinates of the elements read inside the buffer pin an affine map."""
    axes = [a for a, n in enumerate(sizes) if n > 1]
    design = np.concatenate([np.ones((coords.shape[0], 1)), coords[:, axes]], axis=1)
    return coords.shape[0] > 0 and int(np.linalg.matrix_rank(design)) == len(axes) + 1


def _logical_coords(case: Case, op: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(which output elements read input ``k``, the coordinate in input ``k``'s sizes each
    reads): the right operator on INT64 packed inputs holding ``1 + base + local index``."""
    descs = _inputs(op)
    counts = [d.element_count for d in descs]
    base = [sum(counts[:j]) for j in range(len(counts))]
    packed = [BufferTensorDesc(I64, d.sizes) for d in descs]
    typed = _in_type(op, I64, indices=True)
    plain = dataclasses.replace(typed, inputs=tuple(packed)) if isinstance(op, JoinOp) else \
        dataclasses.replace(typed, input=packed[0])
    raws = execute_all(plain, [np.arange(c, dtype=np.int64) + 1 + b
                               for c, b in zip(counts, base, strict=True)])
    values = np.concatenate([unpack(d, raw).reshape(-1)
                             for d, raw in zip(_outputs(plain), raws, strict=True)]) - 1
    mine = (values >= base[k]) & (values < base[k] + counts[k])
    local = values[mine] - base[k]
    return mine, np.stack(np.unravel_index(local, descs[k].sizes), axis=1)


def exact_mismatches(r: Recovery, case: Case, op: Any, bug: Bug, buggy: np.ndarray,
                     right: np.ndarray) -> tuple[bool, list[str]]:
    """(whether the test can say the injected parameters are pinned, how the recovered ones
    differ from them)."""
    a = r.applied
    out: list[str] = []
    checked = False
    if r.kind == "read" and bug.kind in DESC_BUGS:
        desc = _inputs(bug.op)[bug.tensor]
        strides = list(desc.effective_strides)
        if r.operator == IDENTITY and case.op in IDENTITY_OPS:
            coords = _coords(buggy.size, desc.sizes)[buggy >= 0]
        elif r.operator != IDENTITY:
            mine, local = _logical_coords(case, op, bug.tensor)
            coords = local[buggy[mine] >= 0]
            if a["input_index"] != bug.tensor:
                out.append(f"input {a['input_index']} instead of {bug.tensor}")
        else:
            return checked, out
        if _pinned(coords, desc.sizes):
            checked = True
            axes = [i for i, n in enumerate(desc.sizes) if n > 1]
            got = [a["strides_in_elements"][i] for i in axes]
            if got != [strides[i] for i in axes] or a["offset_in_elements"] != bug.offset:
                out.append(f"read strides {got} offset {a['offset_in_elements']}, injected "
                           f"{[strides[i] for i in axes]} offset {bug.offset}")
    if r.kind == "slice" and bug.kind == "window":
        checked = True
        injected = bug.op
        for d, n in enumerate(op.output.sizes):
            read = _first_and_step(a["input_window_offsets"][d], a["input_window_sizes"][d],
                                   a["input_window_strides"][d], n)
            want = _first_and_step(injected.input_window_offsets[d], injected.input_window_sizes[d],
                                   injected.input_window_strides[d], n)
            if read != want:
                out.append(f"axis {d}: first/step {read}, injected {want}")
    if r.kind in ("join", "split") and bug.kind in ("join-offsets", "split-offsets"):
        tensors = op.inputs if r.kind == "join" else op.outputs
        shows = _shown_tensors(case, r.kind, tensors, buggy)
        checked = bool(shows)
        injected = bug.params["offsets"]
        for k in shows:
            if a["offsets_along_axis"][k] != injected[k] or a["axis"] != op.axis:
                out.append(f"tensor {k}: axis {a['axis']} offset {a['offsets_along_axis'][k]}, injected "
                           f"{op.axis} / {injected[k]}")
    if r.kind == "region" and bug.kind == "partial":
        checked = True
        z = bug.params["from"]
        nonzero = np.flatnonzero(right[z:] >= 0)
        if not nonzero.size or a["right_until_element"] != z + int(nonzero[0]):
            out.append(f"breaks at {a['right_until_element']}, injected {z}")
    return checked, out


def _first_and_step(offset: int, size: int, stride: int, count: int) -> tuple[int, int]:
    """The first input element a SLICE1 window reads on an axis, and its step (0 when the axis
    has one output element: no step to see)."""
    return offset + (size - 1 if stride < 0 else 0), (stride if count > 1 else 0)


def _shown_tensors(case: Case, kind: str, tensors: Sequence[BufferTensorDesc],
                   buggy: np.ndarray) -> list[int]:
    """The JOIN inputs whose elements show in the output (an input is the case input's slab
    along the axis), or the SPLIT outputs holding an input element."""
    counts = [d.element_count for d in tensors]
    if kind == "split":
        return [k for k, seg in enumerate(np.split(buggy, np.cumsum(counts)[:-1])) if (seg >= 0).any()]
    axis = (case.axis or 0) % case.rank
    along = np.unravel_index(buggy[buggy >= 0], case.shape)[axis]
    owners = np.searchsorted(np.cumsum(case.parts or ()), along, side="right")
    return sorted({int(o) for o in owners})


# ---- the property ---------------------------------------------------------------------------
@dataclasses.dataclass
class Trial:
    case: Case
    bug: Bug
    identifiable: bool
    recovery: Recovery | None
    named: bool
    problems: list[str]
    exact: bool  # the recovered parameters were also compared with the injected ones


def run_trial(op_type: str, rng: np.random.Generator) -> Trial:
    case = random_case(op_type, rng)
    operator = operator_for_type(case.op)
    assert not operator.inexpressible_reason(case), case
    op = operator.dml_operator(case)
    bug = random_bug(case, op, rng)
    right_bug = Bug("right", op)
    buggy, right = index_map(case, bug), index_map(case, right_bug)
    constant_shows = bug.kind == "constant" and bool((right < 0).any())
    identifiable = (not np.array_equal(buggy, right) or constant_shows) and bool((buggy >= 0).any())
    x = make_input(case)
    actual = simulate(case, bug, x)
    expected = simulate(case, right_bug, x)

    def rerun(arr: np.ndarray) -> list[np.ndarray]:
        return simulate(case, bug, np.asarray(arr))

    r = recover(case, x, actual, np.concatenate([bits_of(e).reshape(-1) for e in expected]),
                np.concatenate([bits_of(a).reshape(-1) for a in actual]), rerun)
    problems: list[str] = []
    exact = False
    if r is None:
        problems.append("nothing recovered")
    else:
        model = recovered_map(r, case, op, right)
        if model is None or not np.array_equal(model, buggy):
            problems.append(f"the recovered {r.kind} does not reproduce the output")
        constant = r.applied.get("constant_hex")
        if r.kind == "padding" and bug.kind == "constant" and constant != bug.params["constant"]:
            problems.append(f"constant {r.applied['constant_hex']}, injected {bug.params['constant']}")
        exact, differ = exact_mismatches(r, case, op, bug, buggy, right)
        problems += differ
    return Trial(case, bug, identifiable, r, not problems, problems, exact)


@functools.cache
def trials() -> tuple[Trial, ...]:
    rng = np.random.default_rng(SEED)
    return tuple(run_trial(CASE_OPS[t % len(CASE_OPS)], rng) for t in range(TRIALS))


def test_every_identifiable_injected_bug_is_named() -> None:
    done = trials()
    identifiable = [t for t in done if t.identifiable]
    named = [t for t in identifiable if t.named]
    failures = [(t.case.id, t.bug.kind, t.problems, t.recovery.text if t.recovery else "")
                for t in identifiable if not t.named]
    assert not failures, failures[:5]
    by_op = {op: sum(t.case.op == op for t in identifiable) for op in CASE_OPS}
    assert all(n >= 10 for n in by_op.values()), by_op  # every registered op, bugs of every kind
    kinds = {t.bug.kind for t in identifiable}
    assert kinds >= {*DESC_BUGS, "partial", *itertools.chain(*OWN_BUGS.values())}, kinds
    exact = sum(t.exact for t in named)
    assert exact >= len(identifiable) // 2, exact  # most namings are also compared parameter by parameter
    print(f"trials {len(done)}, identifiable {len(identifiable)}, named {len(named)} "
          f"({exact} also equal to the injected parameters where pinned)")


def test_every_recovery_round_trips_through_json() -> None:
    recoveries = [t.recovery for t in trials() if t.recovery is not None]
    kinds = {r.kind for r in recoveries}
    assert kinds >= set(KINDS) - {"values"}, kinds
    # a value transform, for the last kind: a Transpose whose -0.0 became +0.0
    case = Case("Transpose", DataType.FLOAT32, (2, 2), perm=(1, 0))
    x = np.array([[-0.0, 1.5], [2.5, 3.5]], dtype=np.float32)
    right = np.ascontiguousarray(x.T)
    wrong = np.abs(right)
    values = recover(case, x, [wrong], bits_of(right).reshape(-1), bits_of(wrong).reshape(-1))
    assert values is not None and values.kind == "values" and values.applied == {"transform": "-0.0 lost"}
    for r in [*recoveries, values]:
        data = json.loads(json.dumps(r.to_dict()))
        back = Recovery.from_dict(data)
        assert back == r
        assert back.to_dict() == r.to_dict() == data
        assert set(r.applied) == set(r.expected)


def test_a_recovery_refuses_what_json_or_its_kind_cannot_hold() -> None:
    with pytest.raises(ReportError, match="valid:"):
        Recovery("strides", "X", {}, {}, (), "")
    with pytest.raises(ReportError, match="same keys"):
        Recovery("read", "X", {"sizes": [1]}, {}, (), "")
    with pytest.raises(ReportError, match="JSON"):
        Recovery("read", "X", {"sizes": object()}, {"sizes": [1]}, (), "")
    with pytest.raises(ReportError, match="valid fields"):
        Recovery.from_dict({"kind": "read"})
    names: Any = ["x"]  # a list, as JSON gives it back
    tupled = Recovery("tile", "DML_OPERATOR_TILE", {"repeats": (np.int64(2), 1)}, {"repeats": [1, 2]},
                      names, "t")
    assert tupled.applied == {"repeats": [2, 1]} and tupled.names == ("x",)


def test_identity_family_reads_are_reads_of_the_identity_input() -> None:
    """A wrong input descriptor of an identity (Transpose, Expand, the Reshape family) is
    recovered as a read over the identity's input sizes: DirectML's input descriptor, as the
    DML EP builds it (a Reshape's right-aligned to 4-D)."""
    checked = 0
    for t in trials():
        if not (t.identifiable and t.case.op in IDENTITY_OPS and t.bug.kind in DESC_BUGS):
            continue
        assert t.recovery is not None and t.recovery.kind in ("read", "region"), t.case.id
        if t.recovery.kind == "read":
            op = operator_for_type(t.case.op).dml_operator(t.case)
            assert isinstance(op, IdentityOp)
            assert t.recovery.operator == IDENTITY
            assert t.recovery.applied["sizes"] == t.recovery.expected["sizes"] == list(op.input.sizes)
            big = [i for i, n in enumerate(op.input.sizes) if n > 1]  # a size-1 axis has no stride to see
            assert [t.recovery.expected["strides_in_elements"][i] for i in big] == \
                [op.input.effective_strides[i] for i in big]
            checked += 1
    assert checked >= 50, checked
