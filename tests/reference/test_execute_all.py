"""execute_all / output_values_all / verify_all: operators with several input or output tensors
run from one buffer per tensor (numpy.concatenate and numpy.split as the reference), and the
single-tensor operators through the same functions exactly as through execute / verify."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import ArgumentError, DescriptorError
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import dml_operator
from ort_layouts.operators.join_split import JoinOp, SplitOp
from ort_layouts.reference.buffers import pack, unpack
from ort_layouts.reference.compare import compare
from ort_layouts.reference.execute import (
    execute,
    execute_all,
    input_descs,
    output_descs,
    output_values,
    output_values_all,
    verify,
    verify_all,
)

RNG = np.random.default_rng(42)
A = RNG.integers(-1000, 1000, (2, 3, 2)).astype(np.int32)
B = RNG.integers(-1000, 1000, (2, 3, 5)).astype(np.int32)
JOIN_2 = JoinOp.from_onnx("int32", [A.shape, B.shape], -1)
SPLIT_2 = SplitOp.from_onnx("int32", (2, 3, 7), (2, 5), 2)
WHOLE = np.zeros(42, np.int32)


def test_single_tensor_operators_run_as_before() -> None:
    case = Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1))
    op = dml_operator(case)
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    assert input_descs(op) == (op.input,) and output_descs(op) == (op.output,)  # type: ignore[union-attr]
    (raw,) = execute_all(op, [x])
    assert raw.tobytes() == execute(op, x).tobytes()  # type: ignore[arg-type]
    (values,) = output_values_all(op, [x])
    assert values.tobytes() == output_values(op, x).tobytes()  # type: ignore[arg-type]
    want = np.transpose(x, (2, 0, 1))
    assert [c.passed for c in verify_all(op, [x], [want])] == [verify(op, x, want).passed] == [True]  # type: ignore[arg-type]
    with pytest.raises(DescriptorError, match="1 input"):
        execute_all(op, [x, x])


def test_join_and_split_from_buffers_match_numpy() -> None:
    assert input_descs(JOIN_2) == JOIN_2.inputs and output_descs(SPLIT_2) == SPLIT_2.outputs
    (joined,) = output_values_all(JOIN_2, [A, B])
    want = np.concatenate([A, B], axis=-1)
    assert joined.reshape(want.shape).tobytes() == want.tobytes()
    parts = output_values_all(SPLIT_2, [want])
    got = [p.reshape(w.shape).tobytes() for p, w in zip(parts, (A, B), strict=True)]
    assert got == [A.tobytes(), B.tobytes()]
    # raw buffers: TotalTensorSizeInBytes long, the elements packed
    raws = execute_all(SPLIT_2, [want.tobytes()])
    assert [r.nbytes for r in raws] == [48, 120] and raws[0].view(np.int32).tobytes() == A.tobytes()


def test_outs_are_written_in_place_and_other_bytes_kept() -> None:
    outs = [np.full(60, 0xAB, np.uint8), np.full(128, 0xCD, np.uint8)]
    raws = execute_all(SPLIT_2, [np.concatenate([A, B], axis=-1)], outs=outs)
    assert np.shares_memory(raws[0], outs[0]) and np.shares_memory(raws[1], outs[1])
    assert outs[0][:48].view(np.int32).tobytes() == A.tobytes() and (outs[0][48:] == 0xAB).all()
    assert (outs[1][120:] == 0xCD).all()


@pytest.mark.parametrize(("call", "match"), [
    (lambda: execute_all(JOIN_2, [A]), "1 input buffers given; the operator has 2 inputs"),
    (lambda: execute_all(JOIN_2, [A, B[:, :, :4].copy()]), "input 1 buffer of 96 bytes is smaller"),
    (lambda: execute_all(SPLIT_2, [WHOLE], outs=[np.zeros(48, np.uint8)]), "1 output buffers"),
    (lambda: execute_all(SPLIT_2, [WHOLE], outs=[np.zeros(48, np.uint8), np.zeros(4, np.uint8)]),
     "output 1 buffer of 4 bytes"),
    (lambda: execute_all(SPLIT_2, [WHOLE], outs=[b"x" * 48, np.zeros(120, np.uint8)]), "writeable"),
    (lambda: verify_all(SPLIT_2, [np.zeros(42, np.int32)], [np.zeros(12, np.int32)]), "1 actual outputs"),
], ids=["too-few-inputs", "short-input", "too-few-outs", "short-out", "readonly-out", "actual-count"])
def test_bad_buffers_are_refused(call: object, match: str) -> None:
    with pytest.raises(DescriptorError, match=match):
        call()  # type: ignore[operator]


def test_a_non_operator_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="DirectML operator"):
        execute_all(object(), [A])  # type: ignore[arg-type]


def test_4_bit_join_matches_numpy() -> None:
    """UINT4 nibbles: packed two a byte, the low nibble first; JOIN moves values, not bytes."""
    a = RNG.integers(0, 16, (3, 3)).astype(np.uint8)
    b = RNG.integers(0, 16, (3, 2)).astype(np.uint8)
    op = JoinOp.from_onnx("uint4", [a.shape, b.shape], 1)
    buffers = [pack(d, v) for d, v in zip(op.inputs, (a, b), strict=True)]
    (raw,) = execute_all(op, buffers)
    assert unpack(op.output, raw).reshape(3, 5).tolist() == np.concatenate([a, b], axis=1).tolist()


def test_verify_all_is_compare_per_output() -> None:
    whole = np.concatenate([A, B], axis=-1)
    good = [A.copy(), B.copy()]
    assert [c.passed for c in verify_all(SPLIT_2, [whole], good)] == [True, True]
    bad = [A.copy(), B.copy()]
    bad[1][1, 2, 4] += 1
    got = verify_all(SPLIT_2, [whole], bad)
    assert got == [compare(A, bad[0]), compare(B, bad[1])]
    assert got[1].first_mismatch_index == (1, 2, 4) and got[1].mismatch_count == 1
    wrong_type = verify_all(SPLIT_2, [whole], [A.astype(np.float32), B])
    assert not wrong_type[0].passed and "element type" in wrong_type[0].message and wrong_type[1].passed


@pytest.mark.parametrize(("call", "args", "fragment"), [
    (execute, (JOIN_2, bytes(48)), "JoinOp has 2 inputs and 1 output; execute runs an operator of one input "
                                    "and one output: call execute_all(op, buffers), one buffer per input"),
    (execute, (SPLIT_2, bytes(168)), "SplitOp has 1 input and 2 outputs; execute runs"),
    (output_values, (SPLIT_2, bytes(168)), "call output_values_all(op, buffers)"),
    (verify, (JOIN_2, bytes(48), np.zeros((2, 3, 7), np.int32)), "call verify_all(op, buffers, actuals)"),
], ids=["execute-join", "execute-split", "output-values-split", "verify-join"])
def test_an_operator_of_several_tensors_is_sent_to_its_all_twin(call: Any, args: tuple[Any, ...],
                                                                fragment: str) -> None:
    with pytest.raises(DescriptorError) as raised:
        call(*args)
    assert fragment in str(raised.value) and raised.value.rule == "buffer-count"


class _HalfAnOperator:
    """Has an input descriptor and no output: no DirectML operator."""

    def __init__(self, op: Any) -> None:
        self.input = op.input


def test_what_is_no_operator_is_refused_each_time_whatever_ran_before() -> None:
    from ort_layouts.reference.execute import execute

    single = dml_operator(Case("Transpose", "float32", (2, 3), perm=(1, 0)))
    join = dml_operator(Case("Concat", "float32", (2, 3), axis=1, parts=(1, 2)))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):  # the second time after each type has been seen to be an operator
        assert np.array_equal(unpack(single.output, execute(single, x.tobytes())), x.T)  # the packed input
        assert len(execute_all(join, [pack(d, x[:, :1] if k == 0 else x[:, 1:])
                                      for k, d in enumerate(join.inputs)])) == 1
        for bad in ("no operator", _HalfAnOperator(single)):
            with pytest.raises(ArgumentError, match=r"is a (str|_HalfAnOperator), not a DirectML operator"):
                execute(bad, b"\0" * 64)  # type: ignore[arg-type]
        with pytest.raises(DescriptorError, match="call execute_all"):
            execute(join, b"\0" * 64)  # type: ignore[arg-type]
        with pytest.raises(ArgumentError, match="is a str, not a DirectML operator"):
            execute_all("no operator", [])  # type: ignore[arg-type]


@pytest.mark.parametrize("call", ["execute", "verify", "output_values", "execute_all", "verify_all",
                                  "output_values_all"])
def test_none_for_the_operator_is_an_argument_error_naming_its_type(call: str) -> None:
    """verify(None, ...) raised a bare TypeError; an ArgumentError is a TypeError still."""
    import ort_layouts.reference.execute as ex

    buffer = np.zeros(4, np.uint8)
    args: tuple[Any, ...] = {"execute": (buffer,), "verify": (buffer, buffer), "output_values": (buffer,),
                             "execute_all": ([buffer],), "verify_all": ([buffer], [buffer]),
                             "output_values_all": ([buffer],)}[call]
    with pytest.raises(ArgumentError) as info:
        getattr(ex, call)(None, *args)
    assert str(info.value).startswith("op None is a NoneType, not a DirectML operator; valid: ")
    assert "PaddingOp" in str(info.value) and "dml_operator(case)" in str(info.value)
    assert isinstance(info.value, TypeError)
