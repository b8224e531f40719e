"""Shape inference of a model: ONNX's data propagation crashes the whole process (a
segmentation fault, or memory without bound) on a Slice whose constant step is 2^31 or more
(onnx 1.23), which plain inference and ONNX Runtime take; such a model is read without it.

Each model is read in a child process, so that a crash fails its test instead of the run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_layouts.models.extract import _crashes_data_propagation

I64_MAX = 2**63 - 1


def _slice_model(step: int, *, shape_input: bool = False, constant_node: bool = False) -> onnx.ModelProto:
    """y = Slice(x, starts=[0], ends=[10], axes=[0], steps=[step]) of a float x [10]; or, with
    ``shape_input``, of Shape(x) for an x [10, 3, 4, 5] (a tensor data propagation computes);
    with ``constant_node`` the steps come from a Constant node instead of an initializer."""
    nodes = []
    data = "x"
    if shape_input:
        nodes.append(helper.make_node("Shape", ["x"], ["sh"]))
        data = "sh"
    params = [numpy_helper.from_array(np.array([v], np.int64), n) for n, v in
              (("starts", 0), ("ends", 10), ("axes", 0))]
    steps = numpy_helper.from_array(np.array([step], np.int64), "steps")
    if constant_node:
        nodes.append(helper.make_node("Constant", [], ["steps"], value=steps))
    else:
        params.append(steps)
    nodes.append(helper.make_node("Slice", [data, "starts", "ends", "axes", "steps"], ["y"], name="s"))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [10, 3, 4, 5] if shape_input else [10])
    y = helper.make_tensor_value_info("y", TensorProto.INT64 if shape_input else TensorProto.FLOAT, None)
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y], params),
                             opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize(("step", "shape_input", "constant_node"), [
    (I64_MAX, False, False), (2**31, False, False), (2**31, True, False), (2**32, False, True),
], ids=["int64-max", "2^31", "2^31-of-a-shape", "2^32-constant-node"])
def test_a_slice_of_a_huge_step_is_read_not_a_crash(
        tmp_path: Path, step: int, shape_input: bool, constant_node: bool) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(_slice_model(step, shape_input=shape_input, constant_node=constant_node), str(path))
    done = subprocess.run([sys.executable, "-m", "ort_layouts", "extract", str(path), "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    (op,) = json.loads(done.stdout)
    # ONNX's Slice: a step past the end takes the first element alone
    assert op["output_shape"] == [1]


@pytest.mark.parametrize(("step", "crashes"), [
    (2**31 - 1, False), (2**31, True), (-(2**31), False), (-(2**31) - 1, True), (-(2**63), True), (1, False),
    (-1, False),
])
def test_the_crash_guard_takes_steps_from_two_to_the_31(step: int, crashes: bool) -> None:
    assert _crashes_data_propagation(_slice_model(step)) is crashes
    assert _crashes_data_propagation(_slice_model(step, constant_node=True)) is crashes


def test_the_crash_guard_takes_steps_that_other_nodes_compute() -> None:
    model = _slice_model(1, constant_node=True)
    model.graph.node[0].op_type = "Identity"  # steps = Identity(...): computed, not a constant
    model.graph.node[0].input.append("x")
    del model.graph.node[0].attribute[:]
    assert _crashes_data_propagation(model) is True


@pytest.mark.parametrize("step", [-(2**63), -(2**63) + 1, -(2**32)],
                         ids=["int64-min", "minus-int64-max", "minus-2^32"])
def test_a_shape_sliced_back_with_a_huge_negative_step_is_read_not_a_crash(tmp_path: Path, step: int) -> None:
    """onnx's data propagation took memory without bound (-2^63, -2^32) or crashed (-(2^63 - 1))."""
    def ints(name: str, values: list[int]) -> onnx.TensorProto:
        return numpy_helper.from_array(np.array(values, np.int64), name)

    graph = helper.make_graph([
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Slice", ["s", "starts", "ends", "axes", "steps"], ["last"]),  # [5]
        helper.make_node("Concat", ["m1", "last"], ["shape"], axis=0),  # [-1, 5]
        helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [ints("starts", [-1]), ints("ends", [-I64_MAX]), ints("axes", [0]), ints("steps", [step]),
         ints("m1", [-1])])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    done = subprocess.run([sys.executable, "-c", (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30)); "
        "from ort_layouts.frontends.cli import command_line; sys.argv = ['ort-layouts', 'extract', "
        f"{str(path)!r}, '--json']; command_line()")],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    reshape = next(op for op in json.loads(done.stdout) if op["op_type"] == "Reshape")
    # x [2,3,4,5] reshaped to [-1, 5]; without data propagation its shape input is not known
    assert reshape["output_shape"] in (None, [24, 5])
    slice_node = next(op for op in json.loads(done.stdout) if op["op_type"] == "Slice")
    assert slice_node["input_shape"] == [4]  # Shape(x), read as plain shape inference reads it


def test_the_crash_guard_reads_a_constant_node_s_value_ints_too() -> None:
    model = _slice_model(1, constant_node=True)
    constant = model.graph.node[0]
    del constant.attribute[:]
    constant.attribute.append(helper.make_attribute("value_ints", [1, 2**31]))
    assert _crashes_data_propagation(model) is True


@pytest.mark.parametrize("command", ["extract", "convert"])
def test_a_split_whose_num_outputs_is_not_its_outputs_count_is_refused_not_aborted(
        tmp_path: Path, command: str) -> None:
    """ONNX's shape inference aborted the process on it (a C++ assertion: exit -6, no error line);
    convert infers the ranks of outputs that declare no shape, extract every shape."""
    graph = helper.make_graph([helper.make_node("Split", ["x"], ["a", "b", "c"], num_outputs=1, axis=0)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.UINT8, [4, 1, 1, 1])],
                              [helper.make_tensor_value_info(n, TensorProto.UINT8, None) for n in "abc"])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(path))
    out = [str(tmp_path / "out.onnx")] if command == "convert" else []
    done = subprocess.run([sys.executable, "-m", "ort_layouts", command, str(path), *out],
                          capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert not (tmp_path / "out.onnx").exists()
    assert done.stderr.splitlines() == [
        f"ort-layouts: error: model {str(path)!r} cannot be read: Split node '(unnamed)' has num_outputs 1 "
        "and 3 outputs ['a', 'b', 'c']; valid: num_outputs equal to its number of outputs (ONNX's shape "
        "inference and ONNX Runtime abort on it)"]
