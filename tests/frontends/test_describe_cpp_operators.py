"""``describe --cpp`` for Pad, Concat and Split: the whole DML_*_OPERATOR_DESC, as for Slice.

The expected fields follow DirectML's documentation (directml.h):
DML_PADDING1_OPERATOR_DESC {InputTensor, OutputTensor, PaddingMode, PaddingValueDataType,
PaddingValue (DML_SCALAR_UNION), DimensionCount, StartPadding, EndPadding};
DML_JOIN_OPERATOR_DESC {InputCount, InputTensors, OutputTensor, Axis};
DML_SPLIT_OPERATOR_DESC {InputTensor, OutputCount, OutputTensors, Axis}. The DML EP coerces
each tensor to 4-D with leading 1s, so an axis moves by 4 - rank.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from ort_layouts.frontends.cli import main

Cap = pytest.CaptureFixture[str]

# a [2, 3] float32 Pad with ONNX pads [1, 1, 1, 1] (begin 1, 1; end 1, 1), coerced to 4-D:
# start {0, 0, 1, 1}, end {0, 0, 1, 1}, output [1, 1, 4, 5]; the constant 3.0 as float32 is
# 0x40400000, little-endian 00 00 40 40
PAD_3_BYTES = "0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x00, 0x00"
PAD_DESC = """\
DML_PADDING1_OPERATOR_DESC padding = {
    &paddingInputTensor,  // InputTensor
    &paddingOutputTensor,  // OutputTensor
    DML_PADDING_MODE_CONSTANT,  // PaddingMode
    DML_TENSOR_DATA_TYPE_FLOAT32,  // PaddingValueDataType
    paddingValue,  // PaddingValue
    4,  // DimensionCount
    paddingStartPadding,  // StartPadding
    paddingEndPadding,  // EndPadding
};
DML_OPERATOR_DESC paddingOp = {DML_OPERATOR_PADDING1, &padding};"""


def _cpp(argv: list[str], capsys: Cap) -> str:
    assert main(["describe", *argv, "--cpp"]) == 0
    return capsys.readouterr().out


def test_hand_bytes_are_float32_three() -> None:
    assert struct.pack("<f", 3.0) + bytes(4) == bytes(int(b, 16) for b in PAD_3_BYTES.split(", "))


@pytest.mark.parametrize("argv", [
    ["--shape", "2,3", "--pad", "1,1,1,1", "--value", "3"],
    ["--shape", "2,3", "--op", "Pad", "--param", "pads=1,1,1,1", "--value", "3"],
], ids=["pad", "op-pad"])
def test_pad_prints_the_padding1_desc_with_its_value(argv: list[str], capsys: Cap) -> None:
    out = _cpp(argv, capsys)
    assert out.rstrip("\n").endswith(PAD_DESC)
    assert "UINT paddingStartPadding[4] = {0, 0, 1, 1};" in out
    assert "UINT paddingEndPadding[4] = {0, 0, 1, 1};" in out
    assert f"DML_SCALAR_UNION paddingValue = {{{{{PAD_3_BYTES}}}}};  // Float32 = 3.0f" in out
    assert "UINT paddingInputSizes[4] = {1, 1, 2, 3};" in out
    assert "UINT paddingOutputSizes[4] = {1, 1, 4, 5};" in out


def test_pad_value_of_an_int_tensor_and_a_mode(capsys: Cap) -> None:
    # int32 -2 is 0xfffffffe: fe ff ff ff; reflect is DML_PADDING_MODE_REFLECTION
    out = _cpp(["--shape", "3", "--dtype", "int32", "--pad", "0,2", "--value", "-2"], capsys)
    assert ("DML_SCALAR_UNION paddingValue = {{0xfe, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00}};"
            "  // Int32 = -2") in out
    assert "    DML_TENSOR_DATA_TYPE_INT32,  // PaddingValueDataType" in out
    assert "UINT paddingEndPadding[4] = {0, 0, 0, 2};" in out
    out = _cpp(["--shape", "3", "--pad", "1,1", "--mode", "reflect"], capsys)
    assert "    DML_PADDING_MODE_REFLECTION,  // PaddingMode" in out


def test_concat_prints_the_join_desc(capsys: Cap) -> None:
    # float32 [2, 3] + [2, 5] on axis 1 -> 4-D [1, 1, 2, 3] + [1, 1, 2, 5] -> [1, 1, 2, 8], Axis 3
    out = _cpp(["--op", "Concat", "--shape", "2,8", "--param", "axis=1", "--param", "parts=3,5"], capsys)
    assert out.rstrip("\n").endswith("""\
DML_TENSOR_DESC joinInputTensors[2] = {joinInput0Tensor, joinInput1Tensor};
DML_JOIN_OPERATOR_DESC join = {
    2,  // InputCount
    joinInputTensors,  // InputTensors
    &joinOutputTensor,  // OutputTensor
    3,  // Axis
};
DML_OPERATOR_DESC joinOp = {DML_OPERATOR_JOIN, &join};""")
    for line in ("UINT joinInput0Sizes[4] = {1, 1, 2, 3};", "UINT joinInput1Sizes[4] = {1, 1, 2, 5};",
                 "UINT joinOutputSizes[4] = {1, 1, 2, 8};",
                 "DML_TENSOR_DESC joinInput1Tensor = {DML_TENSOR_TYPE_BUFFER, &joinInput1};"):
        assert line in out


def test_split_prints_the_split_desc(capsys: Cap) -> None:
    # float32 [6, 4] into 2 + 4 on axis 0 -> 4-D [1, 1, 6, 4] into [1, 1, 2, 4] + [1, 1, 4, 4], Axis 2
    out = _cpp(["--op", "Split", "--shape", "6,4", "--param", "axis=0", "--param", "parts=2,4"], capsys)
    assert out.rstrip("\n").endswith("""\
DML_TENSOR_DESC splitOutputTensors[2] = {splitOutput0Tensor, splitOutput1Tensor};
DML_SPLIT_OPERATOR_DESC split = {
    &splitInputTensor,  // InputTensor
    2,  // OutputCount
    splitOutputTensors,  // OutputTensors
    2,  // Axis
};
DML_OPERATOR_DESC splitOp = {DML_OPERATOR_SPLIT, &split};""")
    for line in ("UINT splitInputSizes[4] = {1, 1, 6, 4};", "UINT splitOutput0Sizes[4] = {1, 1, 2, 4};",
                 "UINT splitOutput1Sizes[4] = {1, 1, 4, 4};"):
        assert line in out


# the directml.h types these initializers use, as DirectML's documentation declares them
# (enumerator values from directml.h: FLOAT32 = 1, INT32 = 6)
STUB = """
#include <cstdio>
#include <cstdint>
typedef unsigned int UINT; typedef unsigned long long UINT64; typedef unsigned char BYTE;
enum DML_TENSOR_DATA_TYPE { DML_TENSOR_DATA_TYPE_UNKNOWN, DML_TENSOR_DATA_TYPE_FLOAT32,
    DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_UINT32, DML_TENSOR_DATA_TYPE_UINT16,
    DML_TENSOR_DATA_TYPE_UINT8, DML_TENSOR_DATA_TYPE_INT32 };
enum DML_TENSOR_FLAGS { DML_TENSOR_FLAG_NONE = 0, DML_TENSOR_FLAG_OWNED_BY_DML = 1 };
enum DML_TENSOR_TYPE { DML_TENSOR_TYPE_INVALID, DML_TENSOR_TYPE_BUFFER };
struct DML_BUFFER_TENSOR_DESC { DML_TENSOR_DATA_TYPE DataType; DML_TENSOR_FLAGS Flags;
    UINT DimensionCount; const UINT* Sizes; const UINT* Strides; UINT64 TotalTensorSizeInBytes;
    UINT GuaranteedBaseOffsetAlignment; };
struct DML_TENSOR_DESC { DML_TENSOR_TYPE Type; const void* Desc; };
enum DML_OPERATOR_TYPE { DML_OPERATOR_JOIN = 1, DML_OPERATOR_SPLIT, DML_OPERATOR_PADDING1,
    DML_OPERATOR_ELEMENT_WISE_IDENTITY };
struct DML_OPERATOR_DESC { DML_OPERATOR_TYPE Type; const void* Desc; };
enum DML_PADDING_MODE { DML_PADDING_MODE_CONSTANT, DML_PADDING_MODE_EDGE, DML_PADDING_MODE_REFLECTION,
    DML_PADDING_MODE_SYMMETRIC, DML_PADDING_MODE_WRAP };
union DML_SCALAR_UNION { BYTE Bytes[8]; int8_t Int8; uint8_t UInt8; int16_t Int16; uint16_t UInt16;
    int32_t Int32; uint32_t UInt32; int64_t Int64; uint64_t UInt64; float Float32; double Float64; };
struct DML_PADDING1_OPERATOR_DESC { const DML_TENSOR_DESC* InputTensor; const DML_TENSOR_DESC* OutputTensor;
    DML_PADDING_MODE PaddingMode; DML_TENSOR_DATA_TYPE PaddingValueDataType; DML_SCALAR_UNION PaddingValue;
    UINT DimensionCount; const UINT* StartPadding; const UINT* EndPadding; };
struct DML_JOIN_OPERATOR_DESC { UINT InputCount; const DML_TENSOR_DESC* InputTensors;
    const DML_TENSOR_DESC* OutputTensor; UINT Axis; };
struct DML_SPLIT_OPERATOR_DESC { const DML_TENSOR_DESC* InputTensor; UINT OutputCount;
    const DML_TENSOR_DESC* OutputTensors; UINT Axis; };
struct DML_SCALE_BIAS { float Scale; float Bias; };
struct DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC { const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor; const DML_SCALE_BIAS* ScaleBias; };
"""

CHECKS = """
int main() {
    const DML_BUFFER_TENSOR_DESC* in = (const DML_BUFFER_TENSOR_DESC*)padding.InputTensor->Desc;
    printf("%d %d %g %u %u %u %u %u\\n", padding.PaddingMode, padding.PaddingValueDataType,
           padding.PaddingValue.Float32, padding.DimensionCount, padding.StartPadding[2],
           padding.EndPadding[3], in->Sizes[3], paddingOp.Type == DML_OPERATOR_PADDING1);
    const DML_BUFFER_TENSOR_DESC* j1 = (const DML_BUFFER_TENSOR_DESC*)join.InputTensors[1].Desc;
    printf("%u %u %u %d\\n", join.InputCount, join.Axis, j1->Sizes[3], joinOp.Desc == &join);
    const DML_BUFFER_TENSOR_DESC* s1 = (const DML_BUFFER_TENSOR_DESC*)split.OutputTensors[1].Desc;
    printf("%u %u %u %d\\n", split.OutputCount, split.Axis, s1->Sizes[2], splitOp.Type == DML_OPERATOR_SPLIT);
    const DML_BUFFER_TENSOR_DESC* t = (const DML_BUFFER_TENSOR_DESC*)identity.InputTensor->Desc;
    printf("%u %u %u %u %d %d\\n", t->Strides[0], t->Strides[1], t->Strides[2], t->Strides[3],
           identity.ScaleBias == nullptr, identityOp.Type == DML_OPERATOR_ELEMENT_WISE_IDENTITY);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_the_printed_initializers_compile_and_hold_the_values(tmp_path: Path, capsys: Cap) -> None:
    body = "\n".join([
        _cpp(["--shape", "2,3", "--pad", "1,1,1,1", "--value", "3"], capsys),
        _cpp(["--op", "Concat", "--shape", "2,8", "--param", "axis=1", "--param", "parts=3,5"], capsys),
        _cpp(["--op", "Split", "--shape", "6,4", "--param", "axis=0", "--param", "parts=2,4"], capsys),
        _cpp(["--shape", "1,3,2,2", "--transpose", "0,2,3,1"], capsys),
    ])
    source = tmp_path / "ops.cpp"
    source.write_text(STUB + body + CHECKS)
    exe = tmp_path / "ops"
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-o", str(exe), str(source)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    # CONSTANT = 0, FLOAT32 = 1, 3.0, 4-D, start 1 at axis 2, end 1 at axis 3, input width 3
    assert out[0] == "0 1 3 4 1 1 3 1"
    assert out[1] == "2 3 5 1"  # two inputs, Axis 3, the second 5 wide
    assert out[2] == "2 2 4 1"  # two outputs, Axis 2, the second 4 high
    # NCHW [1, 3, 2, 2] read as [1, 2, 2, 3] (N, H, W, C): strides 12, 2, 1 and C's 4; no scale/bias
    assert out[3] == "12 2 1 4 1 1"


@pytest.mark.parametrize("argv", [["--shape", "2,3", "--op", "Expand", "--param", "target_shape=4,2,3"],
                                  ["--shape", "2,3", "--broadcast-to", "4,2,3"]])
def test_an_identity_prints_its_operator_desc(argv: list[str], capsys: Cap) -> None:
    """It printed the two tensor descs and a comment naming the operator: nothing to create it with."""
    out = _cpp(argv, capsys)
    assert out.rstrip("\n").endswith("""\
DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC identity = {
    &identityInputTensor,  // InputTensor
    &identityOutputTensor,  // OutputTensor
    nullptr,  // ScaleBias
};
DML_OPERATOR_DESC identityOp = {DML_OPERATOR_ELEMENT_WISE_IDENTITY, &identity};""")
    # 4-D, as DmlOperator::Initialize pads: [2,3] in [4,2,3] is [1,1,2,3] in [1,4,2,3]
    assert "UINT identityInputSizes[4] = {1, 4, 2, 3};" in out
    assert "UINT identityInputStrides[4] = {0, 0, 3, 1};" in out
