"""convert_layout() and check_conversion(): boundary-only NCHW <-> NHWC, bit-identical on CPU."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_layouts import ModelError, ShapeError
from ort_layouts.models.convert import check_conversion, convert_layout

ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
PIXEL_SHUFFLE = ONNX_DATA / "pytorch-converted" / "test_PixelShuffle"
CONV2D = ONNX_DATA / "pytorch-converted" / "test_Conv2d"


def _conv_model() -> onnx.ModelProto:
    """NCHW conv + relu + residual with random weights, dynamic batch 'N', doc strings, metadata."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((3, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    nodes = [helper.make_node("Conv", ["image", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "image"], ["out"], name="add"),
             helper.make_node("ReduceMean", ["out"], ["pooled"], name="pool", axes=[2, 3], keepdims=0)]
    image = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 6, 5], doc_string="an image")
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", 3, 6, 5], doc_string="features")
    pooled = helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["N", 3])
    graph = helper.make_graph(nodes, "convnet", [image], [out, pooled], [w, b], doc_string="graph doc")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8,
                              producer_name="test", doc_string="model doc")
    helper.set_model_props(model, {"author": "tests", "license": "MIT"})
    return model


def _dims(value: onnx.ValueInfoProto) -> list[int | str]:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in value.type.tensor_type.shape.dim]


def test_boundary_only_and_metadata_kept():
    original = _conv_model()
    converted = convert_layout(original, to="NHWC")
    onnx.checker.check_model(converted, full_check=True)
    assert [v.name for v in converted.graph.input] == ["image"]
    assert [v.name for v in converted.graph.output] == ["out", "pooled"]
    assert _dims(converted.graph.input[0]) == ["N", 6, 5, 3]
    assert _dims(converted.graph.output[0]) == ["N", 6, 5, 3]
    assert _dims(converted.graph.output[1]) == ["N", 3]  # rank 2: untouched
    assert converted.graph.input[0].doc_string == "an image"
    assert converted.graph.output[0].doc_string == "features"
    assert converted.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    assert converted.doc_string == "model doc" and converted.graph.doc_string == "graph doc"
    assert {p.key: p.value for p in converted.metadata_props} == {"author": "tests", "license": "MIT"}
    assert converted.producer_name == "test" and converted.ir_version == 8
    assert list(converted.graph.initializer) == list(original.graph.initializer)
    # the original's nodes are all there, same op and attributes, only the boundary names moved
    inner = [n for n in converted.graph.node if n.name in {"conv", "relu", "add", "pool"}]
    assert [(n.op_type, list(n.attribute)) for n in inner] == \
        [(n.op_type, list(n.attribute)) for n in original.graph.node]
    transposes = [n for n in converted.graph.node if n.op_type == "Transpose"]
    assert len(converted.graph.node) == len(original.graph.node) + 2 and len(transposes) == 2
    assert original.graph.input[0].type.tensor_type.shape.dim[1].dim_value == 3  # input not modified


def test_converted_runs_bit_identical_by_hand():
    original, converted = _conv_model(), convert_layout(_conv_model(), to="NHWC")
    x_nhwc = np.random.default_rng(3).standard_normal((2, 6, 5, 3)).astype(np.float32)
    run = lambda m, x: ort.InferenceSession(m.SerializeToString(),  # noqa: E731
                                            providers=["CPUExecutionProvider"]).run(None, {"image": x})
    ref_out, ref_pooled = run(original, np.ascontiguousarray(x_nhwc.transpose(0, 3, 1, 2)))
    out, pooled = run(converted, x_nhwc)
    assert out.shape == (2, 6, 5, 3)
    expected = np.ascontiguousarray(ref_out.transpose(0, 2, 3, 1))
    assert np.array_equal(expected.view(np.uint32), out.view(np.uint32))
    assert np.array_equal(ref_pooled.view(np.uint32), pooled.view(np.uint32))
    assert np.unique(out).size > 50  # real data, not a constant


@pytest.mark.parametrize("optimize", [False, True], ids=["no-opt", "opt"])
def test_check_conversion_passes(optimize):
    original = _conv_model()
    result = check_conversion(original, convert_layout(original), seed=1, dims={"N": 2}, optimize=optimize)
    assert result and result.passed
    assert result.input_perms == {"image": (0, 3, 1, 2)} and result.output_perms == {"out": (0, 2, 3, 1)}
    assert [o.shape for o in result.outputs] == [(2, 6, 5, 3), (2, 3)]
    assert all(o.mismatch_count == 0 for o in result.outputs)


def test_check_conversion_catches_a_wrong_conversion():
    original = _conv_model()
    converted = convert_layout(original)
    w = converted.graph.initializer[0]  # sabotage: one weight changed in one bit
    changed = numpy_helper.to_array(w).copy()
    changed.view(np.uint32)[0, 0, 0, 0] ^= 1 << 20
    w.CopyFrom(numpy_helper.from_array(changed, w.name))
    result = check_conversion(original, converted)
    assert not result
    bad = result.outputs[0]
    assert not bad and bad.name == "out" and bad.mismatch_count > 0 and bad.first_mismatch_index is not None


def test_pixel_shuffle_against_shipped_data():
    """onnx's shipped PixelShuffle test: converted model on the NHWC input gives the NHWC output."""
    converted = convert_layout(PIXEL_SHUFFLE / "model.onnx", to="NHWC")
    x = numpy_helper.to_array(onnx.load_tensor(PIXEL_SHUFFLE / "test_data_set_0" / "input_0.pb"))
    y = numpy_helper.to_array(onnx.load_tensor(PIXEL_SHUFFLE / "test_data_set_0" / "output_0.pb"))
    sess = ort.InferenceSession(converted.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = sess.run(None, {converted.graph.input[0].name: np.ascontiguousarray(x.transpose(0, 2, 3, 1))})
    assert np.array_equal(got, y.transpose(0, 2, 3, 1))
    assert check_conversion(PIXEL_SHUFFLE / "model.onnx", converted)


def test_conv2d_real_weights_inputs_only():
    converted = convert_layout(CONV2D / "model.onnx", inputs=True, outputs=False)
    assert _dims(converted.graph.input[0]) == [2, 7, 5, 3]
    assert _dims(converted.graph.output[0]) == [2, 4, 5, 4]  # output left NCHW
    assert [v.name for v in converted.graph.input][1:] == ["1", "2"]  # weight inputs untouched
    result = check_conversion(CONV2D / "model.onnx", converted)
    assert result and result.output_perms == {}


def test_to_nchw_on_channels_last_model():
    # an NHWC-native model: mean over the channel (last) axis and a bias per channel
    bias = numpy_helper.from_array(np.arange(4, dtype=np.float32), "bias")
    nodes = [helper.make_node("Add", ["x", "bias"], ["y"]), helper.make_node("Neg", ["y"], ["z"])]
    graph = helper.make_graph(nodes, "nhwc",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 4])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 3, 5, 4])], [bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    converted = convert_layout(model, to="nchw")
    assert _dims(converted.graph.input[0]) == [1, 4, 3, 5]
    result = check_conversion(model, converted)
    assert result and result.input_perms == {"x": (0, 2, 3, 1)}


def test_named_and_errors():
    model = _conv_model()
    only_out = convert_layout(model, names=["out"])
    assert _dims(only_out.graph.input[0]) == ["N", 3, 6, 5]
    assert _dims(only_out.graph.output[0]) == ["N", 6, 5, 3]
    with pytest.raises(ModelError, match="valid"):
        convert_layout(model, names=["nope"])
    with pytest.raises(ModelError, match="NHWC"):
        convert_layout(model, to="NWHC")
    with pytest.raises(ShapeError, match="rank 2"):
        convert_layout(model, names=["pooled"])


def test_cli(tmp_path, capsys):
    src = tmp_path / "in.onnx"
    onnx.save(_conv_model(), src)
    from ort_layouts.frontends.cli import main

    code = main(["convert", str(src), str(tmp_path / "out.onnx"), "--to", "nhwc", "--check", "--dim", "N=2"])
    assert code == 0
    assert "bit-identical" in capsys.readouterr().out
    assert _dims(onnx.load(tmp_path / "out.onnx").graph.input[0]) == ["N", 6, 5, 3]


def test_command_line_convert_through_main(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ort_layouts.frontends.cli import main

    src = tmp_path / "in.onnx"
    onnx.save(_conv_model(), src)
    assert main(["convert", str(src), str(tmp_path / "out.onnx"), "--to", "NHWC", "--check"]) == 0
    assert "conversion check: passed (bit-identical)" in capsys.readouterr().out
    assert _dims(onnx.load(tmp_path / "out.onnx").graph.input[0])[1:] == [6, 5, 3]
    # a model that does not exist: one line naming it, exit 2, no traceback
    missing = tmp_path / "nope.onnx"
    assert main(["convert", str(missing), str(tmp_path / "x.onnx")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope.onnx" in err[0] and "Traceback" not in err[0]


def test_names_of_the_side_not_converted_are_refused():
    model = _conv_model()
    with pytest.raises(ModelError, match=r"names \['image'\] are not graph outputs \(outputs only are "
                                         r"converted\); valid: \['out', 'pooled'\]"):
        convert_layout(model, names=["image"], inputs=False)
    with pytest.raises(ModelError, match=r"names \['out'\] are not graph inputs \(inputs only are "
                                         r"converted\); valid: \['image'\]"):
        convert_layout(model, names=["out"], outputs=False)
    assert _dims(convert_layout(model, names=["out"], inputs=False).graph.output[0]) == ["N", 6, 5, 3]


def test_check_refuses_a_dimension_the_inputs_do_not_have():
    model = _conv_model()
    converted = convert_layout(model)
    with pytest.raises(ShapeError, match=r"dimensions \['Q'\] are not dim_params of the model's inputs; "
                                         r"its dim_params: \['N'\]"):
        check_conversion(model, converted, dims={"Q": 3})
    assert check_conversion(model, converted, dims={"N": 3})


@pytest.mark.parametrize("argv, fragment", [
    (["--outputs-only", "--name", "image"], "names ['image'] are not graph outputs"),
    (["--check", "--dim", "Q=3"], "dimensions ['Q'] are not dim_params"),
], ids=["input-named-with-outputs-only", "check-dim-the-model-lacks"])
def test_command_line_refusals_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             argv: list[str], fragment: str) -> None:
    from ort_layouts.frontends.cli import main

    src = tmp_path / "in.onnx"
    onnx.save(_conv_model(), src)
    assert main(["convert", str(src), str(tmp_path / "out.onnx"), *argv]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.onnx"]


# ---- a tensor that is both a graph input and a graph output ---------------------------------------
def _passthrough_model() -> onnx.ModelProto:
    """Input X is also output X (returned unchanged), beside R = Relu(X)."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 4, 5])
    r = helper.make_tensor_value_info("R", TensorProto.FLOAT, [1, 3, 4, 5])
    graph = helper.make_graph([helper.make_node("Relu", ["X"], ["R"])], "pass", [x], [r, x])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("sides", [dict(), dict(outputs=False), dict(inputs=False), dict(names=["X"])],
                         ids=["both", "inputs-only", "outputs-only", "named"])
def test_an_input_that_is_also_an_output_is_refused_on_either_side(sides: dict) -> None:
    with pytest.raises(ModelError, match=r"'X' is both a graph input and a graph output .*valid: the "
                                         r"model's other inputs and outputs"):
        convert_layout(_passthrough_model(), **sides)


def test_the_other_tensors_of_a_passthrough_model_convert() -> None:
    model = _passthrough_model()
    converted = convert_layout(model, names=["R"])
    onnx.checker.check_model(converted, full_check=True)
    x = np.random.default_rng(5).standard_normal((1, 3, 4, 5)).astype(np.float32)
    run = lambda m: ort.InferenceSession(m.SerializeToString(),  # noqa: E731
                                         providers=["CPUExecutionProvider"]).run(None, {"X": x})
    (_, x0), (r1, x1) = run(model), run(converted)
    assert x1.shape == (1, 3, 4, 5) and np.array_equal(x0, x1)  # X declared and returned NCHW
    assert np.array_equal(np.maximum(x, 0).transpose(0, 2, 3, 1).view(np.uint32), r1.view(np.uint32))


def test_command_line_inputs_only_refuses_a_passthrough_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ort_layouts.frontends.cli import main

    src = tmp_path / "in.onnx"
    onnx.save(_passthrough_model(), src)
    for side in ("--inputs-only", "--outputs-only"):
        assert main(["convert", str(src), str(tmp_path / "out.onnx"), side]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "'X' is both a graph input and a graph output" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.onnx"]


# ---- the converted model as its bytes: one model, read and run from the same bytes ------------------
def _sabotaged(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with its first weight changed in one bit."""
    w = model.graph.initializer[0]
    changed = numpy_helper.to_array(w).copy()
    changed.view(np.uint32)[0, 0, 0, 0] ^= 1 << 20
    w.CopyFrom(numpy_helper.from_array(changed, w.name))
    return model


def test_the_check_takes_one_converted_model_not_a_proto_with_the_bytes_of_another() -> None:
    """A ModelProto with the bytes of another model ran those bytes against the proto's boundary:
    a sabotaged conversion passed with a good one's bytes. The bytes alone are the model now."""
    original = _conv_model()
    good, bad = convert_layout(original), _sabotaged(convert_layout(original))
    with pytest.raises(TypeError, match="serialized"):
        check_conversion(original, bad, serialized=good.SerializeToString())  # type: ignore[call-arg]
    assert not check_conversion(original, bad.SerializeToString())
    assert not check_conversion(original, bad)


def test_the_converted_models_bytes_check_as_its_proto_does() -> None:
    original = _conv_model()
    converted = convert_layout(original)
    result = check_conversion(original, converted.SerializeToString(), seed=1, dims={"N": 2})
    assert result and result.input_perms == {"image": (0, 3, 1, 2)}
    assert result.output_perms == {"out": (0, 2, 3, 1)}
    assert [o.shape for o in result.outputs] == [(2, 6, 5, 3), (2, 3)]
    assert result == check_conversion(original, converted, seed=1, dims={"N": 2})


@pytest.mark.parametrize(("data", "message"), [
    (b"", "the converted model (its bytes) is not an ONNX model: it has no ir_version, opset_import, graph"),
    (b"\xff\xff\xff", "the converted model (its bytes) is not an ONNX model: "),
], ids=["empty", "no-protobuf"])
def test_bytes_that_are_no_model_are_refused_before_a_run(data: bytes, message: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def no_session(*args: object, **kwargs: object) -> None:
        raise AssertionError("a session was made")

    monkeypatch.setattr(ort, "InferenceSession", no_session)
    with pytest.raises(ModelError) as info:
        check_conversion(_conv_model(), data)
    assert str(info.value).startswith(message)


def test_command_line_check_that_fails_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import ort_layouts.models.convert as convert
    from ort_layouts.frontends.cli import main

    def sabotaged(*args: object, **kwargs: object) -> onnx.ModelProto:
        model = convert_layout(*args, **kwargs)  # type: ignore[arg-type]
        w = model.graph.initializer[0]  # one weight changed in one bit
        changed = numpy_helper.to_array(w).copy()
        changed.view(np.uint32)[0, 0, 0, 0] ^= 1 << 20
        w.CopyFrom(numpy_helper.from_array(changed, w.name))
        return model

    monkeypatch.setattr(convert, "convert_layout", sabotaged)
    src = tmp_path / "in.onnx"
    onnx.save(_conv_model(), src)
    assert main(["convert", str(src), str(tmp_path / "out.onnx"), "--check"]) == 1
    out, err = capsys.readouterr()
    assert "conversion check: FAILED" in out and "wrote" not in out
    assert err.strip().splitlines() == [f"ort-layouts: {tmp_path / 'out.onnx'} not written: the converted "
                                        "model's outputs differ from the original's"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.onnx"]


# ---- converting a converted model --------------------------------------------------------------
def _run_cpu(model: onnx.ModelProto | Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    source = str(model) if isinstance(model, Path) else model.SerializeToString()
    return ort.InferenceSession(source, providers=["CPUExecutionProvider"]).run(None, feeds)


def test_a_second_conversion_names_and_checks_only_its_own_tensors(tmp_path: Path) -> None:
    from ort_layouts.models.convert import converted_tensors

    original = _conv_model()
    inputs_nhwc = convert_layout(original, inputs=True, outputs=False)
    both = convert_layout(inputs_nhwc, inputs=False, outputs=True)
    assert converted_tensors(inputs_nhwc, original) == ["image"]
    assert converted_tensors(both, inputs_nhwc) == ["out"]  # not the input the first run converted
    result = check_conversion(inputs_nhwc, both)  # the image goes in NHWC to both
    assert result and result.input_perms == {} and result.output_perms == {"out": (0, 2, 3, 1)}
    # by hand: the same NHWC image into both models; 'out' of the second is the first's, NHWC
    x = np.random.default_rng(11).standard_normal((2, 6, 5, 3)).astype(np.float32)
    (a, pooled_a), (b, pooled_b) = _run_cpu(inputs_nhwc, {"image": x}), _run_cpu(both, {"image": x})
    assert np.array_equal(a.transpose(0, 2, 3, 1).view(np.uint32), b.view(np.uint32))
    assert np.array_equal(pooled_a.view(np.uint32), pooled_b.view(np.uint32))
    # back to NCHW: this run's two Transposes; against the first original, an identity boundary
    back = convert_layout(convert_layout(original), to="NCHW")
    assert converted_tensors(back, convert_layout(original)) == ["image", "out"]
    assert converted_tensors(back, original) == []
    assert check_conversion(original, back)


def test_command_line_second_conversion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ort_layouts.frontends.cli import main

    onnx.save(_conv_model(), tmp_path / "conv.onnx")
    assert main(["convert", str(tmp_path / "conv.onnx"), str(tmp_path / "in.onnx"), "--inputs-only"]) == 0
    capsys.readouterr()
    assert main(["convert", str(tmp_path / "in.onnx"), str(tmp_path / "both.onnx"), "--outputs-only",
                 "--check", "--dim", "N=2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"wrote {tmp_path / 'both.onnx'}: NHWC at ['out']"
    assert out[-1] == "conversion check: passed (bit-identical)"
    assert main(["convert", str(tmp_path / "both.onnx"), str(tmp_path / "back.onnx"), "--to", "NCHW"]) == 0
    assert capsys.readouterr().out == f"wrote {tmp_path / 'back.onnx'}: NCHW at ['image', 'out']\n"


# ---- ONNX Runtime failing, inputs the check cannot make ------------------------------------------
def test_check_names_the_model_onnx_runtime_cannot_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """Gather with indices from the random data: out of range, ONNX Runtime fails the run."""
    from ort_layouts.frontends.cli import main

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 4, 5])
    idx = helper.make_tensor_value_info("I", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 3, 4, 2])
    node = helper.make_node("Gather", ["X", "I"], ["Y"], axis=3)
    graph = helper.make_graph([node], "gather", [x, idx], [y])
    src = tmp_path / "gather.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), src)
    with pytest.raises(ModelError, match=r"ONNX Runtime cannot run the original model '.*gather.onnx' on "
                                         r"the check's random data: .*indices element out of data bounds"):
        check_conversion(src, convert_layout(src))
    assert main(["convert", str(src), str(tmp_path / "out.onnx"), "--check"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "cannot run the original model" in lines[0] and "Traceback" not in captured.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gather.onnx"]


def test_check_names_an_input_it_cannot_make_data_for() -> None:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 4, 5])
    s = helper.make_tensor_sequence_value_info("S", TensorProto.FLOAT, None)
    nodes = [helper.make_node("SequenceLength", ["S"], ["L"]), helper.make_node("Relu", ["X"], ["R"])]
    outputs = [helper.make_tensor_value_info("R", TensorProto.FLOAT, [1, 3, 4, 5]),
               helper.make_tensor_value_info("L", TensorProto.INT64, [])]
    graph = helper.make_graph(nodes, "seq", [x, s], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with pytest.raises(ModelError, match=r"input 'S' is not a tensor \(sequence\)"):
        check_conversion(model, convert_layout(model))
    bf16 = helper.make_tensor_value_info("B", TensorProto.BFLOAT16, [1, 3, 4, 5])
    graph = helper.make_graph([helper.make_node("Identity", ["B"], ["C"])], "bf16", [bf16],
                              [helper.make_tensor_value_info("C", TensorProto.BFLOAT16, [1, 3, 4, 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with pytest.raises(ModelError, match=r"input 'B': no random data for ONNX element type 16 \(bfloat16\)"):
        check_conversion(model, convert_layout(model))


# ---- external data -------------------------------------------------------------------------
def _external_model(folder: Path) -> Path:
    """Y = X + W (W [1, 3, 4, 5], stored in weights.bin beside the model)."""
    folder.mkdir(parents=True, exist_ok=True)
    w = numpy_helper.from_array(np.arange(60, dtype=np.float32).reshape(1, 3, 4, 5), "W")
    graph = helper.make_graph([helper.make_node("Add", ["X", "W"], ["Y"])], "ext",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 4, 5])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 3, 4, 5])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, folder / "model.onnx", save_as_external_data=True, location="weights.bin",
              size_threshold=0)
    return folder / "model.onnx"


def test_external_data_stays_external(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ort_layouts.frontends.cli import main
    from ort_layouts.models.convert import external_data_files

    src = _external_model(tmp_path / "m")
    data = (tmp_path / "m" / "weights.bin").read_bytes()
    converted = convert_layout(src)
    assert external_data_files(converted) == ["weights.bin"]
    assert check_conversion(src, converted)  # the proto's data read beside the original
    assert check_conversion(src, converted.SerializeToString())  # and its bytes' data
    out = tmp_path / "m" / "nhwc.onnx"
    assert main(["convert", str(src), str(out), "--check"]) == 0
    assert "passed (bit-identical)" in capsys.readouterr().out
    from ort_layouts.models.convert import external_data_files as files

    written = onnx.load(out, load_external_data=False)
    assert files(written) == ["weights.bin"] and not written.graph.initializer[0].raw_data  # a reference
    assert (tmp_path / "m" / "weights.bin").read_bytes() == data
    x = np.random.default_rng(2).standard_normal((1, 4, 5, 3)).astype(np.float32)
    (y,) = _run_cpu(out, {"X": x})
    expected = x + np.arange(60, dtype=np.float32).reshape(1, 3, 4, 5).transpose(0, 2, 3, 1)
    assert np.array_equal(y.view(np.uint32), expected.view(np.uint32))


def test_external_data_output_in_another_folder_is_refused(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from ort_layouts.frontends.cli import main

    src = _external_model(tmp_path / "m")
    (tmp_path / "other").mkdir()
    assert main(["convert", str(src), str(tmp_path / "other" / "out.onnx")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "external data ['weights.bin']" in err[0] and "folder of INPUT" in err[0]
    assert list((tmp_path / "other").iterdir()) == []


# ---- outputs that declare no shape -------------------------------------------------------------
def test_an_output_without_a_declared_shape_gets_its_rank_from_inference() -> None:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 4, 5])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "noshape", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    for converted in (convert_layout(model, names=["Y"]), convert_layout(model)):
        assert not converted.graph.output[0].type.tensor_type.HasField("shape")  # still undeclared
        xs = np.random.default_rng(4).standard_normal((1, 3, 4, 5)).astype(np.float32)
        feed = xs if converted.graph.input[0].type.tensor_type.shape.dim[1].dim_value == 3 \
            else np.ascontiguousarray(xs.transpose(0, 2, 3, 1))
        (got,) = _run_cpu(converted, {"X": feed})
        assert np.array_equal(got.view(np.uint32), np.maximum(xs, 0).transpose(0, 2, 3, 1).view(np.uint32))


def test_a_tensor_whose_rank_nothing_gives_is_named() -> None:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, None)
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "noshape", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with pytest.raises(ShapeError, match=r"the shape of 'Y' is not declared in the model and ONNX shape "
                                         r"inference cannot compute it"):
        convert_layout(model, names=["Y"])


def _branch_model() -> onnx.ModelProto:
    """X [1, 2, 3, 3] -> If(cond): then Identity(X) into a value named X__nchw, the name the
    conversion of X to NHWC would first choose for the value inside; else Neg(X)."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 3, 3])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 2, 3, 3])
    then_graph = helper.make_graph(
        [helper.make_node("Identity", ["X"], ["X__nchw"])], "then", [],
        [helper.make_tensor_value_info("X__nchw", TensorProto.FLOAT, [1, 2, 3, 3])])
    else_graph = helper.make_graph(
        [helper.make_node("Neg", ["X"], ["e"])], "else", [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 2, 3, 3])])
    graph = helper.make_graph([helper.make_node("If", ["cond"], ["Y"], then_branch=then_graph,
                                                else_branch=else_graph)], "g", [x, cond], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def test_new_names_are_new_to_the_graphs_inside_the_graph_too() -> None:
    converted = convert_layout(_branch_model(), to="NHWC", names=["X"])
    onnx.checker.check_model(converted, full_check=True)  # one definition of each value name
    head = converted.graph.node[0]
    assert head.op_type == "Transpose" and list(head.input) == ["X"]
    assert head.output[0] not in ("X", "X__nchw")
    x_nhwc = np.arange(18, dtype=np.float32).reshape(1, 3, 3, 2)
    x_nchw = np.ascontiguousarray(x_nhwc.transpose(0, 3, 1, 2))  # by hand: the graph's own layout
    for cond, expected in ((True, x_nchw), (False, -x_nchw)):
        (y,) = _run_cpu(converted, {"X": x_nhwc, "cond": np.array(cond)})
        assert y.tobytes() == expected.tobytes()


def test_external_data_of_a_model_local_function_is_found(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Y = AddW(X), a model-local function whose Constant W [1, 3, 4, 5] is kept in
    weights.bin: its file is named, and an output in another folder is refused as for an
    initializer's."""
    from ort_layouts.frontends.cli import main
    from ort_layouts.models.convert import external_data_files

    folder = tmp_path / "m"
    folder.mkdir()
    data = np.arange(60, dtype=np.float32).reshape(1, 3, 4, 5)
    (folder / "weights.bin").write_bytes(data.tobytes())
    w = onnx.TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[1, 3, 4, 5],
                         data_location=onnx.TensorProto.EXTERNAL)
    for key, value in (("location", "weights.bin"), ("offset", "0"), ("length", str(data.nbytes))):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    function = helper.make_function(
        "local", "AddW", ["x"], ["y"],
        [helper.make_node("Constant", [], ["w"], value=w), helper.make_node("Add", ["x", "w"], ["y"])],
        [helper.make_opsetid("", 17)])
    graph = helper.make_graph([helper.make_node("AddW", ["X"], ["Y"], domain="local")], "fn",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 4, 5])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 3, 4, 5])])
    model = helper.make_model(graph, functions=[function], ir_version=8,
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    onnx.save(model, folder / "model.onnx")
    x = np.random.default_rng(3).standard_normal((1, 3, 4, 5)).astype(np.float32)
    (y,) = _run_cpu(folder / "model.onnx", {"X": x})  # ONNX Runtime reads the function's data
    assert y.tobytes() == (x + data).tobytes()
    assert external_data_files(model) == ["weights.bin"]
    (tmp_path / "other").mkdir()
    assert main(["convert", str(folder / "model.onnx"), str(tmp_path / "other" / "out.onnx")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "external data ['weights.bin']" in err[0]
    assert list((tmp_path / "other").iterdir()) == []


def _shadowing_model(shadow: str) -> onnx.ModelProto:
    """X [1, 2, 2, 2] -> Y, through a subgraph that declares a value X of its own, which its
    nodes (and the graphs inside them) read instead of the outer X:

    - ``"input"``: Y = Loop(2 times, Neg(X)), whose body takes its loop-carried value as an input
      named X and doubles it in an If inside the body: Y = -4 X.
    - ``"initializer"``: Y = If(cond): then Neg of the branch's own initializer X (all 5s),
      else Neg(X): Y = -5 or -X.

    X's NHWC shape is its NCHW shape: ONNX's shape inference types a subgraph's initializer by
    the outer value it shadows, so the checker can judge the converted model only then.
    """
    shape = [1, 2, 2, 2]
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)
    if shadow == "input":
        then_g = helper.make_graph([helper.make_node("Add", ["X", "X"], ["t"])], "then", [],
                                   [helper.make_tensor_value_info("t", TensorProto.FLOAT, shape)])
        else_g = helper.make_graph([helper.make_node("Identity", ["X"], ["e"])], "else", [],
                                   [helper.make_tensor_value_info("e", TensorProto.FLOAT, shape)])
        body = helper.make_graph(
            [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("If", ["c_in"], ["x_out"], then_branch=then_g, else_branch=else_g)],
            "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                     helper.make_tensor_value_info("c_in", TensorProto.BOOL, []), x],
            [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("x_out", TensorProto.FLOAT, shape)])
        nodes = [helper.make_node("Neg", ["X"], ["xn"]),
                 helper.make_node("Loop", ["n", "", "xn"], ["Y"], body=body)]
        graph = helper.make_graph(nodes, "g", [x], [y], [numpy_helper.from_array(np.array(2, np.int64), "n")])
    else:
        own = numpy_helper.from_array(np.full(shape, 5, np.float32), "X")
        then_g = helper.make_graph([helper.make_node("Neg", ["X"], ["t"])], "then", [],
                                   [helper.make_tensor_value_info("t", TensorProto.FLOAT, shape)], [own])
        else_g = helper.make_graph([helper.make_node("Neg", ["X"], ["e"])], "else", [],
                                   [helper.make_tensor_value_info("e", TensorProto.FLOAT, shape)])
        graph = helper.make_graph(
            [helper.make_node("If", ["cond"], ["Y"], then_branch=then_g, else_branch=else_g)], "g",
            [x, helper.make_tensor_value_info("cond", TensorProto.BOOL, [])], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)  # a subgraph's input or initializer may shadow
    return model


@pytest.mark.parametrize("shadow", ["input", "initializer"])
def test_a_subgraph_value_that_shadows_a_converted_input_keeps_its_name(shadow: str) -> None:
    model = _shadowing_model(shadow)
    converted = convert_layout(model, to="NHWC", names=["X"])
    onnx.checker.check_model(converted, full_check=True)
    x_nhwc = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    x_nchw = np.ascontiguousarray(x_nhwc.transpose(0, 3, 1, 2))  # by hand: the graph's own layout
    if shadow == "input":
        runs = [({"X": x_nhwc}, -4 * x_nchw)]
    else:
        runs = [({"X": x_nhwc, "cond": np.array(True)}, np.full((1, 2, 2, 2), -5, np.float32)),
                ({"X": x_nhwc, "cond": np.array(False)}, -x_nchw)]
    for feeds, expected in runs:
        (y,) = _run_cpu(converted, feeds)
        assert y.tobytes() == expected.tobytes()


def test_a_subgraph_value_that_shadows_a_converted_output_keeps_its_name() -> None:
    """Z = Neg(Y) is converted while a Loop body names its loop-carried input Z: Y = -4 X as in
    the shadowing model, Z = 4 X."""
    model = _shadowing_model("input")
    z = helper.make_tensor_value_info("Z", TensorProto.FLOAT, [1, 2, 2, 2])
    loop = model.graph.node[1]
    loop.attribute[0].g.input[2].name = "Z"
    for branch in loop.attribute[0].g.node[1].attribute:
        for node in branch.g.node:
            node.input[:] = ["Z" if name == "X" else name for name in node.input]
    model.graph.node.append(helper.make_node("Neg", ["Y"], ["Z"]))
    model.graph.output.append(z)
    onnx.checker.check_model(model, full_check=True)
    converted = convert_layout(model, to="NHWC", names=["Z"])
    onnx.checker.check_model(converted, full_check=True)
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    y, z_nhwc = _run_cpu(converted, {"X": x})
    assert y.tobytes() == (-4 * x).tobytes()
    assert z_nhwc.tobytes() == np.ascontiguousarray((4 * x).transpose(0, 2, 3, 1)).tobytes()


def test_an_output_listed_twice_gets_one_transpose_and_runs() -> None:
    """ONNX Runtime takes a graph that lists one output twice; the converted model makes that
    output with one Transpose (two would define it twice, which ONNX Runtime refuses) and lists
    it twice, each entry declaring the converted shape."""
    relu = helper.make_node("Relu", ["x"], ["y"])
    vi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 5])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 5])
    model = helper.make_model(helper.make_graph([relu], "g", [vi], [out, out]),
                              opset_imports=[helper.make_opsetid("", 13)])
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 5)).astype(np.float32)
    assert len(_run_cpu(model, {"x": x})) == 2  # the original runs
    converted = convert_layout(model)
    assert [n.op_type for n in converted.graph.node] == ["Transpose", "Relu", "Transpose"]
    assert [(o.name, _dims(o)) for o in converted.graph.output] == [("y", [1, 4, 5, 3])] * 2
    want = np.ascontiguousarray(np.maximum(x, 0).transpose(0, 2, 3, 1))
    outs = _run_cpu(converted, {"x": np.ascontiguousarray(x.transpose(0, 2, 3, 1))})
    assert [o.tobytes() for o in outs] == [want.tobytes()] * 2
    assert check_conversion(model, converted)


def test_the_input_models_data_and_links_to_it_are_never_written(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """OUTPUT naming the input's external data, a hard link to the input or a symbolic one is
    refused and nothing changes (the external data was overwritten with the converted model, and
    through a hard link the input itself); any other OUTPUT gets a new file, so a file linked to
    the one it replaces keeps its bytes."""
    from ort_layouts.frontends.cli import main

    src = _external_model(tmp_path / "m")
    weights = tmp_path / "m" / "weights.bin"
    before = {p.name: p.read_bytes() for p in (src, weights)}
    hard, soft = tmp_path / "m" / "hard.onnx", tmp_path / "m" / "soft.onnx"
    os.link(src, hard)
    soft.symlink_to(src)
    for output, named in ((weights, "holds the input model's external data ('weights.bin')"),
                          (hard, "is the input model"), (soft, "is the input model")):
        assert main(["convert", str(src), str(output), "--check"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and named in err[0], err
        assert {p.name: p.read_bytes() for p in (src, weights)} == before
    other = tmp_path / "m" / "other.onnx"
    other.write_bytes(b"old")
    kept = tmp_path / "m" / "kept.onnx"
    os.link(other, kept)
    assert main(["convert", str(src), str(other)]) == 0
    assert kept.read_bytes() == b"old" and onnx.load(other).graph.input[0].name == "X"
    assert {p.name: p.read_bytes() for p in (src, weights)} == before


# ---- converting to the layout an earlier conversion already gave -------------------------------
def _relu_model(dims: list[int]) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Relu", ["img"], ["act"])], "relu",
                              [helper.make_tensor_value_info("img", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("act", TensorProto.FLOAT, dims)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_converting_to_the_layout_already_given_is_refused() -> None:
    once = convert_layout(_relu_model([1, 3, 8, 8]))  # img and act NHWC [1, 8, 8, 3]
    assert _dims(once.graph.input[0]) == [1, 8, 8, 3]
    with pytest.raises(ModelError) as e:
        convert_layout(once, to="NHWC")  # would make [1, 8, 3, 8]
    message = str(e.value)
    assert "['img', 'act'] are already NHWC" in message
    assert "'ort_layouts.convert/img'" in message and "'ort_layouts.convert/act'" in message
    assert "to='NCHW'" in message and "--to NCHW" in message
    with pytest.raises(ModelError, match=r"\['img'\] is already NHWC"):
        convert_layout(once, to="nhwc", names=["img"])
    # back to NCHW: the original's shapes, and the same outputs
    back = convert_layout(once, to="NCHW")
    assert _dims(back.graph.input[0]) == [1, 3, 8, 8] and _dims(back.graph.output[0]) == [1, 3, 8, 8]
    with pytest.raises(ModelError, match=r"\['img', 'act'\] are already NCHW"):
        convert_layout(back, to="NCHW")
    assert _dims(convert_layout(back).graph.input[0]) == [1, 8, 8, 3]  # and NHWC once more


def test_only_the_tensors_already_given_the_layout_are_refused() -> None:
    inputs_nhwc = convert_layout(_conv_model(), inputs=True, outputs=False)
    with pytest.raises(ModelError) as e:
        convert_layout(inputs_nhwc)  # every rank-4 tensor: 'image' (NHWC already) and 'out'
    message = str(e.value)
    assert "['image'] is already NHWC" in message and "name other tensors" in message
    assert message.endswith("['out']")  # the other tensors of rank >= 3 ('pooled' is [N, 3])
    both = convert_layout(inputs_nhwc, names=["out"])
    assert _dims(both.graph.input[0]) == ["N", 6, 5, 3] and _dims(both.graph.output[0]) == ["N", 6, 5, 3]
    assert check_conversion(inputs_nhwc, both)


def test_rank_3_is_told_by_the_doc_string_and_rank_4_by_the_perm_without_it() -> None:
    # at rank 3 both directions are perm (0, 2, 1): only the Transpose's doc string says NHWC
    once = convert_layout(_relu_model([2, 4, 5]), names=["img"])
    assert _dims(once.graph.input[0]) == [2, 5, 4]
    with pytest.raises(ModelError, match=r"\['img'\] is already NHWC"):
        convert_layout(once, names=["img"])
    assert _dims(convert_layout(once, to="NCHW", names=["img"]).graph.input[0]) == [2, 4, 5]
    # rank 4 with the doc strings gone: an input Transpose (0, 3, 1, 2) takes NHWC back to NCHW
    stripped = convert_layout(_relu_model([1, 3, 8, 8]))
    for node in stripped.graph.node:
        node.ClearField("doc_string")
    with pytest.raises(ModelError, match=r"\['img', 'act'\] are already NHWC"):
        convert_layout(stripped)


def test_command_line_refuses_a_second_conversion_to_the_same_layout(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ort_layouts.frontends.cli import main

    onnx.save(_relu_model([1, 3, 8, 8]), tmp_path / "img.onnx")
    assert main(["convert", str(tmp_path / "img.onnx"), str(tmp_path / "a.onnx"), "--check"]) == 0
    capsys.readouterr()
    assert main(["convert", str(tmp_path / "a.onnx"), str(tmp_path / "aa.onnx"), "--to", "NHWC",
                 "--check"]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith("ort-layouts: error: ['img', 'act'] are already NHWC")
    assert "--to NCHW" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.onnx", "img.onnx"]  # nothing written
    assert main(["convert", str(tmp_path / "a.onnx"), str(tmp_path / "b.onnx"), "--to", "NCHW",
                 "--check"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"wrote {tmp_path / 'b.onnx'}: NCHW at ['img', 'act']"


def test_convert_help_says_the_model_is_taken_to_be_in_the_other_layout(
        capsys: pytest.CaptureFixture[str]) -> None:
    from ort_layouts.frontends.cli import main

    assert main(["convert", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "taken to be in the other layout (NCHW for --to NHWC, NHWC for --to NCHW)" in text
