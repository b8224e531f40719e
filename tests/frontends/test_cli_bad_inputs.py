"""A catalogue of bad command lines: each one is refused before any work and before any file is
written, with one line ``ort-layouts: error: ...`` naming the bad value, exit status 2 and no
traceback. "Nothing to do" is not an error: exit status 3 and one note line.

The command line runs in-process (``main([...])``) in a directory holding the fixture files; the
directory's listing is compared before and after each command. The functions that do a
command's work (running cases, benchmarks, merging, converting, exporting) are replaced by ones
that fail the test, so a check made only after the work started is caught too.
"""

from __future__ import annotations

import os
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from ort_layouts.frontends.cli import EXIT_NOTHING, main

Cap = pytest.CaptureFixture[str]
PROC = "/proc/ort-layouts-no-such-dir"  # a directory nothing can be made in, root included


def _transpose_model(path: Path, *, doc: str = "") -> None:
    """X[batch, 3, 4, 5] -> Transpose(perm 0,2,3,1) -> Y: rank-4 input and output, a dynamic dim."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 3, 4, 5])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 4, 5, 3])
    node = helper.make_node("Transpose", ["X"], ["Y"], perm=[0, 2, 3, 1], name="t")
    graph = helper.make_graph([node], "g", [x], [y], doc_string=doc)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9), str(path))


def _add_model(path: Path) -> None:
    """A model without any layout operator: Y = A + B on [2, 3]."""
    a = helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3])
    b = helper.make_tensor_value_info("B", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Add", ["A", "B"], ["Y"])], "add", [a, b], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9), str(path))


def _foreign_op_model(path: Path) -> None:
    """X -> Transpose -> a node of a domain the model imports no opset of: shape inference fails;
    the graph's name ("g") is not the file's."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 2])
    nodes = [helper.make_node("Transpose", ["X"], ["T"], perm=[1, 0]),
             helper.make_node("Foo", ["T"], ["Y"], domain="com.example")]
    graph = helper.make_graph(nodes, "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9), str(path))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("bad-inputs")
    (d / "empty.onnx").write_bytes(b"")
    (d / "garbage.onnx").write_text("this is not an ONNX model\n")
    (d / "data.json").write_text('{"a": 1}\n')
    (d / "dir.onnx").mkdir()
    (d / "afile").write_text("a file, not a directory\n")
    _transpose_model(d / "good.onnx")
    _add_model(d / "add.onnx")
    _foreign_op_model(d / "foreign.onnx")
    from ort_layouts.engine.result import CaseResult, Status
    from ort_layouts.operators.case import Case
    from ort_layouts.reports.writer import ReportWriter

    case = Case("Transpose", "float32", (2, 3), perm=(1, 0))
    meta = {"provider": "CPUExecutionProvider", "command": "ort-layouts validate",
            "selection": {"provider": "CPUExecutionProvider", "shard": ""}}
    with ReportWriter(d / "rep", meta=meta, planned=[case.id]) as w:
        w.add(CaseResult(case, Status.PASS, "CPUExecutionProvider"))
        w.write_summaries(finished=True)
    return d


def _listing(root: Path) -> list[tuple[str, int]]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            out.append((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1))
    return sorted(out)


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """The functions that do each command's work fail the test if they are reached."""
    import ort_layouts.engine.dml.install as install
    import ort_layouts.engine.runner as runner
    import ort_layouts.frontends.bench as bench
    import ort_layouts.models.convert as convert
    import ort_layouts.models.testdata as testdata
    import ort_layouts.reports.merge as merge

    def work(*args: object, **kwargs: object) -> None:
        raise AssertionError("the command started its work before refusing a bad argument")

    monkeypatch.setattr(runner, "run_cases", work)
    monkeypatch.setattr(bench, "run_benchmarks", work)
    monkeypatch.setattr(merge, "merge_reports", work)
    monkeypatch.setattr(convert, "convert_layout", work)
    monkeypatch.setattr(testdata, "export_test_dir", work)
    monkeypatch.setattr(install, "setup_dml", work)


SMALL = ["--provider", "cpu", "--ops", "Transpose", "--dtypes", "float32", "--ranks", "2"]
V = ["validate", "--provider", "cpu"]
M = [*V, "--model"]
PAD = ["describe", "--shape", "3,4", "--pad", "1,1,1,1"]

# name: (argv, a fragment the error line must hold: the bad value, or what is wrong)
BAD: dict[str, tuple[list[str], str]] = {
    # ---- validate: the selection
    "validate-dtypes-empty-item": (["validate", *SMALL[:4], "--dtypes", "float32,,int8"], "'float32,,int8'"),
    "validate-dtypes-bool": (["validate", *SMALL[:4], "--dtypes", "bool"], "'bool'"),
    "validate-dtypes-unknown": (["validate", *SMALL[:4], "--dtypes", "floaty"], "'floaty'"),
    "validate-dtypes-trailing-comma": (["validate", *SMALL[:4], "--dtypes", "float32,"], "'float32,'"),
    "validate-ops-empty-item": ([*V, "--ops", "Transpose,,Pad"], "'Transpose,,Pad'"),
    # a list option given twice ran its last value alone; --report twice wrote the last
    "validate-ops-twice": ([*V, "--ops", "Transpose", "--ops", "Pad"],
                           "argument --ops: given twice (Transpose, then Pad); valid: once, comma-separated "
                           "(--ops Transpose,Pad)"),
    "validate-ranks-twice": ([*V, "--ranks", "1", "--ranks", "2-3"],
                             "argument --ranks: given twice (1, then 2,3); valid: once, comma-separated "
                             "(--ranks 1,2,3)"),
    "validate-dtypes-twice": ([*V, "--dtypes", "int8", "--dtypes", "int8"],
                              "argument --dtypes: given twice (int8, then int8)"),
    "validate-values-twice": ([*V, "--values", "iota", "--values", "random"],
                              "argument --values: given twice (iota, then random)"),
    "validate-report-twice": ([*V, "--report", "a", "--report", "b"],
                              "argument --report: given twice (a, then b); valid: once"),
    "export-ops-twice": (["export", "--ops", "Transpose", "--ops", "Pad", "--out", "e"],
                         "argument --ops: given twice (Transpose, then Pad)"),
    "export-dtypes-twice": (["export", "--dtypes", "int8", "--dtypes", "float16", "--out", "e"],
                            "argument --dtypes: given twice (int8, then float16)"),
    "export-ranks-twice": (["export", "--ranks", "1", "--ranks", "2", "--out", "e"],
                           "argument --ranks: given twice (1, then 2)"),
    "bench-suite-ranks-twice": (["bench", "--suite-ranks", "1", "--suite-ranks", "2"],
                                "argument --suite-ranks: given twice (1, then 2); valid: once, "
                                "comma-separated (--suite-ranks 1,2)"),
    "validate-ops-empty": ([*V, "--ops", ""], "empty"),
    "validate-ops-unknown": ([*V, "--ops", "Conv"], "'Conv'"),
    "validate-ranks-ten": ([*V, "--ranks", "10"], "[10]"),
    "validate-ranks-nine": ([*V, "--ranks", "1,9"], "[9]"),
    "validate-ranks-empty-item": ([*V, "--ranks", "1,,2"], "'1,,2'"),
    "validate-ranks-backwards": ([*V, "--ranks", "3-1"], "'3-1'"),
    "validate-values-unknown": (["validate", *SMALL, "--values", "zeros"], "'zeros'"),
    "validate-values-trailing-comma": (["validate", *SMALL, "--values", "random,"], "'random,'"),
    "validate-seed-negative": (["validate", *SMALL, "--seed=-4"], "'-4'"),
    "validate-seed-negative-spaced": (["validate", *SMALL, "--seed", "-4"], "'-4'"),
    "validate-seed-text": (["validate", *SMALL, "--seed", "x"], "'x'"),
    "validate-shard-zero": (["validate", *SMALL, "--shard", "0/4"], "'0/4'"),
    "validate-shard-over": (["validate", *SMALL, "--shard", "5/4"], "'5/4'"),
    "validate-shard-of-zero": (["validate", *SMALL, "--shard", "1/0"], "'1/0'"),
    "validate-shard-text": (["validate", *SMALL, "--shard", "a/b"], "'a/b'"),
    "validate-limit-zero": (["validate", *SMALL, "--limit", "0"], "'0'"),
    "validate-limit-negative": (["validate", *SMALL, "--limit=-1"], "'-1'"),
    "validate-batch-zero": (["validate", *SMALL, "--batch-size", "0"], "'0'"),
    "validate-progress": (["validate", *SMALL, "--progress", "sometimes"], "'sometimes'"),
    "validate-unknown-flag": (["validate", *SMALL, "--bogus"], "--bogus"),
    # ---- validate: the provider
    "validate-provider-azure": (["validate", *SMALL[2:], "--provider", "azure"], "AzureExecutionProvider"),
    "validate-provider-azure-full": (["validate", *SMALL[2:], "--provider", "AzureExecutionProvider"],
                                     "cannot be validated"),
    "validate-provider-unknown": (["validate", *SMALL[2:], "--provider", "nonsense"], "'nonsense'"),
    "validate-device-negative": (["validate", *SMALL, "--device-id", "-1"], "'-1'"),
    "validate-device-out-of-range": (["validate", *SMALL, "--device-id", "99"], "99"),
    "validate-provider-option-no-value": (["validate", *SMALL, "--provider-option", "novalue"], "'novalue'"),
    "validate-provider-option-no-key": (["validate", *SMALL, "--provider-option", "=x"], "'=x'"),
    "validate-provider-option-cpu": (["validate", *SMALL, "--provider-option", "foo=bar"], "'foo'"),
    "validate-provider-option-twice": (["validate", *SMALL, "--provider-option", "a=1", "--provider-option",
                                        "a=2"], "'a' is given twice"),
    # ---- validate: the report and the model
    "validate-resume-no-report": (["validate", *SMALL, "--resume"], "--report"),
    "validate-force-no-report": (["validate", *SMALL, "--force"], "--report"),
    "validate-resume-and-force": (["validate", *SMALL, "--report", "r", "--resume", "--force"], "--force"),
    "validate-report-is-a-file": (["validate", *SMALL, "--report", "afile"], "'afile'"),
    "validate-report-under-a-file": (["validate", *SMALL, "--report", "afile/sub"], "'afile/sub'"),
    "validate-report-unwritable": (["validate", *SMALL, "--report", PROC], PROC),
    "validate-dim-without-model": (["validate", *SMALL, "--dim", "batch=1"], "'batch=1'"),
    "validate-model-empty": ([*M, "empty.onnx"], "'empty.onnx'"),
    "validate-model-garbage": ([*M, "garbage.onnx"], "'garbage.onnx'"),
    "validate-model-directory": ([*M, "dir.onnx"], "is a directory"),
    "validate-model-missing": ([*M, "missing.onnx"], "'missing.onnx'"),
    "validate-model-json": ([*M, "data.json"], "'data.json'"),
    "validate-model-shape-inference": ([*M, "foreign.onnx", "--report", "r"],
                                       "shape inference failed on model 'foreign.onnx'"),
    "validate-model-dim-zero": ([*M, "good.onnx", "--dim", "batch=0"],
                                "'batch=0'"),
    "validate-model-dim-no-value": ([*M, "good.onnx", "--dim", "batch"],
                                    "'batch'"),
    "validate-model-dim-twice": ([*M, "good.onnx", "--dim", "batch=1",
                                  "--dim", "batch=2"], "'batch'"),
    "validate-model-dim-unknown": ([*M, "good.onnx", "--dim", "seq=1"],
                                   "'seq'"),
    # ---- describe
    "describe-float16-value-overflow": ([*PAD, "--dtype", "float16",
                                         "--value", "1e10"], "1e10"),
    "describe-float16-value-underflow": ([*PAD, "--dtype",
                                          "float16", "--value", "1e-10"], "1e-10"),
    "describe-int8-value-fraction": ([*PAD, "--dtype", "int8",
                                      "--value", "1.5"], "1.5"),
    "describe-int8-value-range": ([*PAD, "--dtype", "int8",
                                   "--value", "300"], "300"),
    "describe-uint8-value-negative": ([*PAD, "--dtype", "uint8",
                                       "--value=-1"], "-1"),
    "describe-int32-value-nan": ([*PAD, "--dtype", "int32",
                                  "--value", "nan"], "nan"),
    # bool is held as UINT8 (as the DML EP holds it), yet its constant is false or true alone
    "describe-bool-value-200": ([*PAD, "--dtype", "bool", "--value", "200"],
                                "Pad value '200' is not a bool; valid: 0 or 1 (false, true)"),
    "describe-op-bool-value-7": (["describe", "--op", "Pad", "--shape", "2,3", "--param", "pads=1,1,1,1",
                                  "--dtype", "bool", "--param", "value=7"], "Pad value '7' is not a bool"),
    "describe-float32-value-huge": ([*PAD, "--value", "1e400"],
                                    "'1e400'"),
    "describe-shape-empty-item": (["describe", "--shape", "1,,3"], "'1,,3'"),
    "describe-shape-zero": (["describe", "--shape", "0,3"], "[0, 3]"),
    "describe-svg-directory": (["describe", "--shape", "2,3", "--svg", "dir.onnx"], "'dir.onnx'"),
    "describe-svg-unwritable": (["describe", "--shape", "2,3", "--svg", f"{PROC}/x.svg"], PROC),
    "describe-dtype-unknown": (["describe", "--shape", "2,3", "--dtype", "complex64"], "'complex64'"),
    # ---- merge
    "merge-nothing": (["merge"], "REPORT"),
    "merge-missing": (["merge", "missing-report"], "'missing-report'"),
    "merge-out-is-a-file": (["merge", "rep", "--out", "afile"], "'afile'"),
    "merge-out-unwritable": (["merge", "rep", "--out", PROC], PROC),
    "merge-force-without-shards": (["merge", "rep", "--force"], "--force"),
    "merge-shards-not-shards": (["merge", "--shards", "rep"], "'rep'"),
    "merge-shards-two-without-out": (["merge", "--shards", "rep", "dir.onnx"], "--out"),
    "merge-shards-json": (["merge", "--shards", "rep", "--json"], "--json"),
    "merge-shards-out-unwritable": (["merge", "--shards", "rep", "--out", PROC], PROC),
    # ---- bench
    "bench-repeats-zero": (["bench", "--repeats", "0"], "'0'"),
    "bench-repeats-negative": (["bench", "--repeats=-1"], "'-1'"),
    "bench-suite-sample-zero": (["bench", "--suite-sample", "0"], "'0'"),
    "bench-gpu-iterations-zero": (["bench", "--gpu-iterations", "0"], "'0'"),
    "bench-device-negative": (["bench", "--device-id=-1"], "'-1'"),
    "bench-gpu-provider-unknown": (["bench", "--gpu-provider", "opencl"], "'opencl'"),
    "bench-sections-empty-item": (["bench", "--sections", "oracle,,gpu"], "'oracle,,gpu'"),
    "bench-sections-unknown": (["bench", "--sections", "bogus"], "bogus"),
    "bench-json-unwritable": (["bench", "--sections", "oracle", "--json", f"{PROC}/b.json"], PROC),
    "bench-json-directory": (["bench", "--sections", "oracle", "--json", "dir.onnx"], "'dir.onnx'"),
    "bench-oracle-mb-zero": (["bench", "--oracle-mb", "0"], "'0'"),
    "bench-suite-ranks-nine": (["bench", "--suite-ranks", "9"], "[9]"),
    "bench-provider-azure": (["bench", "--sections", "suite", "--provider", "azure"],
                             "AzureExecutionProvider"),
    # ---- extract
    "extract-empty": (["extract", "empty.onnx"], "'empty.onnx'"),
    "extract-garbage": (["extract", "garbage.onnx"], "'garbage.onnx'"),
    "extract-directory": (["extract", "dir.onnx"], "is a directory"),
    "extract-json": (["extract", "data.json"], "'data.json'"),
    "extract-missing": (["extract", "missing.onnx"], "'missing.onnx'"),
    "extract-ops-twice": (["extract", "model.onnx", "--ops", "Transpose", "--ops", "Pad"],
                          "argument --ops: given twice (Transpose, then Pad); valid: once, comma-separated "
                          "(--ops Transpose,Pad)"),
    "extract-shape-inference": (["extract", "foreign.onnx"],
                                "shape inference failed on model 'foreign.onnx'"),
    "export-model-shape-inference": (["export", "--out", "e", "--model", "foreign.onnx"],
                                     "shape inference failed on model 'foreign.onnx'"),
    "extract-dim-zero": (["extract", "good.onnx", "--dim", "batch=0"], "'batch=0'"),
    "extract-dim-negative": (["extract", "good.onnx", "--dim=batch=-3"], "'batch=-3'"),
    "extract-dim-over-int64": (["extract", "good.onnx", "--dim", "batch=9223372036854775808"],
                               "argument --dim: dimension 'batch=9223372036854775808' is not NAME=VALUE "
                               "with 1 <= VALUE <= 9223372036854775807"),
    "extract-ops-unknown": (["extract", "good.onnx", "--ops", "transpose,Conv"],
                            "argument --ops: op 'Conv' is not a layout op here; valid: ['Transpose', "),
    "describe-op-unknown": (["describe", "--shape", "2,3", "--op", "Conv"],
                            "argument --op: op 'Conv' is not a layout op that makes cases here; valid: "
                            "['Transpose', "),
    "extract-ops-empty-item": (["extract", "good.onnx", "--ops", "Transpose,,Pad"], "'Transpose,,Pad'"),
    # ---- convert
    "convert-seed-negative": (["convert", "good.onnx", "out.onnx", "--check", "--seed=-4"], "'-4'"),
    "convert-input-empty": (["convert", "empty.onnx", "out.onnx"], "'empty.onnx'"),
    "convert-input-garbage": (["convert", "garbage.onnx", "out.onnx"], "'garbage.onnx'"),
    "convert-input-directory": (["convert", "dir.onnx", "out.onnx"], "is a directory"),
    "convert-output-directory": (["convert", "good.onnx", "dir.onnx"], "'dir.onnx'"),
    "convert-output-under-a-file": (["convert", "good.onnx", "afile/out.onnx"], "'afile/out.onnx'"),
    "convert-output-new-directory": (["convert", "good.onnx", "newdir/"],  # was written as a file 'newdir'
                                     "'newdir/' names a directory (it ends with a slash), not a file"),
    "convert-output-unwritable": (["convert", "good.onnx", f"{PROC}/out.onnx"], PROC),
    "convert-output-is-input": (["convert", "good.onnx", "good.onnx"], "'good.onnx'"),
    "convert-dim-without-check": (["convert", "good.onnx", "out.onnx", "--dim", "batch=1"], "--check"),
    "convert-check-dim-zero": (["convert", "good.onnx", "out.onnx", "--check", "--dim", "batch=0"],
                               "'batch=0'"),
    "convert-layout-unknown": (["convert", "good.onnx", "out.onnx", "--to", "ncdhw"], "'NCDHW'"),
    "convert-name-unknown": (["convert", "good.onnx", "out.onnx", "--name", ""], "--name"),
    # ---- export
    "export-ranks-nine": (["export", "--out", "e", "--ranks", "9"], "[9]"),
    "export-seed-negative": (["export", "--out", "e", "--seed=-3"], "'-3'"),
    "export-dtypes-empty-item": (["export", "--out", "e", "--dtypes", "float32,,int8"], "'float32,,int8'"),
    "export-dtypes-bool": (["export", "--out", "e", "--dtypes", "bool"], "'bool'"),
    "export-ops-unknown": (["export", "--out", "e", "--ops", "Conv"], "'Conv'"),
    "export-dim-without-model": (["export", "--out", "e", "--dim", "batch=1"], "'batch=1'"),
    "export-model-with-suite-filter": (["export", "--out", "e", "--model", "good.onnx", "--ops", "Pad"],
                                       "--ops"),
    "export-out-is-a-file": (["export", "--out", "afile"], "'afile'"),
    "export-out-unwritable": (["export", "--out", PROC], PROC),
    "export-model-empty": (["export", "--out", "e", "--model", "empty.onnx"], "'empty.onnx'"),
    "export-no-out": (["export"], "--out"),
    # ---- empty paths: never "not given", nor the current directory
    "validate-model-empty-path": ([*M, ""], "'' is an empty path"),
    "validate-report-empty-path": (["validate", *SMALL, "--report", ""], "'' is an empty path"),
    "describe-svg-empty-path": (["describe", "--shape", "2,3", "--svg", ""], "'' is an empty path"),
    "merge-empty-path": (["merge", ""], "'' is an empty path"),
    "merge-out-empty-path": (["merge", "rep", "--out", " "], "' ' is an empty path"),
    "bench-json-empty-path": (["bench", "--sections", "oracle", "--json", ""], "'' is an empty path"),
    "extract-empty-path": (["extract", ""], "'' is an empty path"),
    "convert-input-empty-path": (["convert", "", "out.onnx"], "'' is an empty path"),
    "convert-output-empty-path": (["convert", "good.onnx", ""], "'' is an empty path"),
    "export-out-empty-path": (["export", "--out", ""], "'' is an empty path"),
    "export-model-empty-path": (["export", "--out", "e", "--model", ""], "'' is an empty path"),
    "setup-home-empty-path": (["setup", "dml", "--home", "", "--no-apt"], "'' is an empty path"),
    # ---- data types the suite has no cases of, ranges written backwards
    "validate-dtypes-int4": (["validate", *SMALL[:4], "--dtypes", "int4"], "'int4' has no cases"),
    "export-dtypes-uint4": (["export", "--out", "e", "--dtypes", "uint4"], "'uint4' has no cases"),
    "describe-pad-int4": ([*PAD, "--dtype", "int4"], "argument --dtype: data type INT4 has no numpy dtype"),
    "validate-ranks-range-backwards": ([*V, "--ranks", "4-1"], "rank range '4-1' runs backwards"),
    # ---- describe --op
    "describe-op-perm-longer-than-shape": (["describe", "--shape", "2,3", "--op", "Transpose", "--param",
                                            "perm=1,0,2"], "perm [1, 0, 2] is not a permutation of 0..1"),
    "describe-op-opset-zero": (["describe", "--shape", "2,3", "--op", "Transpose", "--param", "opset=0"],
                               "opset=0 is not an opset of Transpose; valid: 1.."),
    "describe-op-opset-too-new": (["describe", "--shape", "2,3", "--op", "Pad", "--param", "pads=0,1,0,1",
                                   "--param", "opset=1000"], "opset=1000"),
    "describe-op-param-twice": (["describe", "--shape", "2,3", "--op", "Transpose", "--param", "perm=1,0",
                                 "--param", "perm=0,1"],
                                "perm is given twice (perm='0,1' after an earlier perm='1,0')"),
    "describe-op-param-twice-same": (["describe", "--shape", "3,4", "--op", "Slice", "--param", "starts=0",
                                      "--param", "starts=1", "--param", "ends=3"],
                                     "starts is given twice (starts='1' after an earlier starts='0'); "
                                     "valid: each parameter once"),
    "describe-layout-empty": (["describe", "--shape", "2,3", "--layout", ""], "layout '' is not an ordering"),
    "describe-layout-and-strides": (["describe", "--shape", "2,3", "--strides", "1,1", "--layout", "NHWC"],
                                    "not allowed with argument"),
    # ---- setup and the program
    "setup-home-is-a-file": (["setup", "dml", "--home", "afile", "--no-apt"], "'afile'"),
    "setup-unknown-stack": (["setup", "cuda"], "'cuda'"),
    "setup-dml-version-blank-item": (["setup", "dml", "--no-apt", "--dml-version", "1.15.4,,"],
                                     "argument --dml-version: '1.15.4,,' has an empty item (item 2); "
                                     "separate DirectML releases with single commas (e.g. 1.9.1,1.10.1,"
                                     "1.12.0,1.12.1,1.13.1,1.14.1,1.15.1,1.15.2,1.15.4)"),
    "setup-dml-version-blank-first": (["setup", "dml", "--no-apt", "--dml-version", "1.9.1", ",1.15.4"],
                                      "argument --dml-version: ',1.15.4' has an empty item (item 1)"),
    "setup-dml-version-empty": (["setup", "dml", "--no-apt", "--dml-version", ""],
                                "argument --dml-version: '' is an empty list"),
    "setup-dml-version-unknown": (["setup", "dml", "--no-apt", "--dml-version", "1.9.1,1.11.0"],
                                  "argument --dml-version: DirectML '1.11.0' is not a known release; "
                                  "choices: 1.9.1, 1.10.1, 1.12.0"),
    "no-command": ([], "a command is required"),
    "unknown-command": (["frobnicate"], "'frobnicate'"),
}


def test_the_catalogue_is_large() -> None:
    assert len(BAD) >= 60
    assert len({c for argv, _ in BAD.values() for c in argv[:1]}) >= 8  # every command has bad lines


@pytest.mark.parametrize("argv, fragment", list(BAD.values()), ids=list(BAD))
def test_bad_command_line(argv: list[str], fragment: str, workdir: Path, no_work: None,
                          monkeypatch: pytest.MonkeyPatch, capsys: Cap) -> None:
    monkeypatch.chdir(workdir)
    before = _listing(workdir)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ort-layouts: error: "), err
    assert fragment in lines[0], lines[0]
    assert "Traceback" not in err
    assert _listing(workdir) == before


STATUS = "/proc/self/status"  # a regular file of size 0 in stat that holds text when read


@pytest.mark.skipif(not Path(STATUS).is_file(), reason="no /proc (Linux only)")
@pytest.mark.parametrize("argv, line", [
    (["extract", STATUS], f"argument MODEL: cannot load ONNX model {STATUS!r}: "),
    (["convert", STATUS, "out.onnx"], f"argument INPUT: cannot load ONNX model {STATUS!r}: "),
    ([*M, STATUS], f"argument --model: cannot load ONNX model {STATUS!r}: "),
    (["merge", STATUS], f"{STATUS!r} is not a report (it is not JSON); valid: a report directory, a "
                        "report.json or a results.jsonl"),
    (["extract", "empty.onnx"], "argument MODEL: model file 'empty.onnx' is empty (0 bytes), not an ONNX "
                                "model"),
], ids=["extract", "convert", "validate", "merge", "extract-empty"])
def test_a_file_is_empty_by_what_it_holds_not_by_its_size(argv: list[str], line: str, workdir: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: Cap) -> None:
    """A /proc file (size 0, content all the same) was called empty as a model."""
    monkeypatch.chdir(workdir)
    before = _listing(workdir)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    (error,) = err.splitlines()
    assert out == "" and error.startswith(f"ort-layouts: error: {line}"), err
    assert ("empty" in error) == ("empty.onnx" in argv)
    assert _listing(workdir) == before


def test_the_provider_azure_agrees_between_providers_and_validate(
        workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: Cap) -> None:
    """What ``providers`` lists as available either validates or is refused by ``validate`` with
    the reason ``providers`` gives."""
    import json

    from ort_layouts.engine.session import resolve_validation_provider

    monkeypatch.chdir(workdir)
    assert main(["providers", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    azure = [p for p in data["providers"] if p["name"] == "AzureExecutionProvider"]
    for info in data["providers"]:
        if not info["available"]:
            continue
        if info["validates"]:
            assert resolve_validation_provider(info["short_name"]) == info["name"]
            continue
        code = main(["validate", "--provider", info["short_name"], "--ops", "Transpose", "--ranks", "2"])
        err = capsys.readouterr().err
        assert code == 2 and len(err.splitlines()) == 1
        assert info["not_validated_because"] in err
    if azure and azure[0]["available"]:
        assert azure[0]["validates"] is False
    assert main(["providers"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split()[:5] == ["provider", "alias", "available", "validate", "GPU"]


# ---- nothing to do: exit status 3, one line, nothing written -----------------------------------
@pytest.mark.parametrize("argv, what", [
    ([*M, "add.onnx", "--report", "r3"], "nothing to validate"),
    ([*V, "--ops", "Expand", "--ranks", "8", "--report", "r3"],
     "nothing to validate"),
    (["convert", "add.onnx", "out3.onnx"], "nothing to convert"),
    (["export", "--out", "e3", "--model", "add.onnx"], "nothing to export"),
], ids=["validate-model", "validate-selection", "convert", "export"])
def test_nothing_to_do_exits_3(argv: list[str], what: str, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: Cap) -> None:
    monkeypatch.chdir(workdir)
    before = _listing(workdir)
    assert main(argv) == EXIT_NOTHING == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [err.strip()] and err.startswith(f"ort-layouts: {what}: ")
    assert "error" not in err
    assert _listing(workdir) == before


@pytest.mark.parametrize("command", [[*V, "--model"], ["export", "--out", "e3", "--model"]],
                         ids=["validate", "export"])
def test_nothing_to_do_for_a_model_gives_each_node_s_reason(command: list[str], workdir: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: Cap) -> None:
    """A bfloat16 Transpose (DirectML has no bfloat16) and a Pad of pads computed at run time
    (its output declared): each node's own reason, not the advice to pin dimensions."""
    x = helper.make_tensor_value_info("X", TensorProto.BFLOAT16, [1, 3, 4, 5])
    f = helper.make_tensor_value_info("F", TensorProto.FLOAT, [2, 3])
    p = helper.make_tensor_value_info("P", TensorProto.INT64, [4])
    nodes = [helper.make_node("Transpose", ["X"], ["Y"], perm=[0, 2, 3, 1], name="t"),
             helper.make_node("Pad", ["F", "P"], ["G"], name="pad")]
    outputs = [helper.make_tensor_value_info("Y", TensorProto.BFLOAT16, None),
               helper.make_tensor_value_info("G", TensorProto.FLOAT, [3, 4])]
    graph = helper.make_graph(nodes, "bf16", [x, f, p], outputs)
    model = workdir / "nodes_without_cases.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9), model)
    monkeypatch.chdir(workdir)
    before = _listing(workdir)
    assert main([*command, model.name]) == EXIT_NOTHING
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and "--dim" not in err and "static shapes" not in err
    head = f"ort-layouts: {model.name}: "
    assert lines[0] == head + "2 layout nodes make 0 distinct cases: Transpose 0/1 nodes -> 0, " \
                              "Pad 0/1 nodes -> 0"
    assert lines[1].startswith(head + "t (Transpose) makes no case: data-type: ONNX element type BFLOAT16 "
                               "(16) has no DirectML data type")
    assert lines[2].startswith(head + "pad (Pad) makes no case: runtime-input: pads input 'P' is computed at "
                               "runtime")
    assert lines[3] == f"ort-layouts: nothing to {command[0]}: no layout node of {model.name} makes a case " \
                       "(the reasons above; see ort-layouts extract MODEL); nothing written"
    assert len(lines) == 4
    assert _listing(workdir) == before


# ---- the Python API refuses what the command line refuses -----------------------------------------
@pytest.mark.parametrize("dims", [{"batch": 0}, {"batch": -3}, {"batch": 1.5}, {"batch": True}, {"": 1}],
                         ids=["zero", "negative", "float", "bool", "no-name"])
def test_python_api_refuses_bad_dims(dims: dict, workdir: Path) -> None:
    from ort_layouts._errors import ShapeError
    from ort_layouts.engine.selection import select_cases
    from ort_layouts.models.convert import check_conversion
    from ort_layouts.models.extract import extract, model_cases

    model = workdir / "good.onnx"
    with pytest.raises(ShapeError, match=r"integer >= 1|non-empty string"):
        extract(model, dims=dims)
    with pytest.raises(ShapeError, match=r"integer >= 1|non-empty string"):
        model_cases(model, dims=dims)
    with pytest.raises(ShapeError, match=r"integer >= 1|non-empty string"):
        select_cases(model=model, dims=dims, model_cases=model_cases)
    with pytest.raises(ShapeError, match=r"integer >= 1|non-empty string"):
        check_conversion(model, model, dims=dims)


def test_python_api_takes_good_dims(workdir: Path) -> None:
    from ort_layouts.models.extract import model_cases

    cases = model_cases(workdir / "good.onnx", dims={"batch": 2})
    assert [(c.op, c.shape, c.perm) for c in cases] == [("Transpose", (2, 3, 4, 5), (0, 2, 3, 1))]


@pytest.mark.parametrize("command", [["extract"], ["validate", "--provider", "cpu", "--model"],
                                     ["export", "--out", "x", "--model"], ["convert"]])
def test_a_model_file_over_protobuf_s_2_gib_is_named_so_before_it_is_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        command: list[str]) -> None:
    """It was read whole (2.2 GB resident) and called corrupt ("Wire format was corrupt")."""
    big = tmp_path / "big.onnx"
    with big.open("wb") as f:  # sparse: 2 GiB of holes
        f.truncate((1 << 31) + 1)
    monkeypatch.chdir(tmp_path)
    argv = [*command, str(big), *(["out.onnx"] if command == ["convert"] else [])]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"model file {str(big)!r} is 2147483649 bytes, over protobuf's limit of 2147483647" in err, err
    assert "external data" in err and err.count("\n") == 1 and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.onnx"]
