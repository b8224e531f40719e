"""Replayable test data: ONNX test directories that ONNX Runtime's own test runner executes.

Each case becomes a directory in the layout of the ONNX backend tests::

    OUT/<case id>/model.onnx
    OUT/<case id>/test_data_set_0/input_0.pb     TensorProto named after the graph input ("x0")
    OUT/<case id>/test_data_set_0/output_0.pb    TensorProto named after the graph output ("y0")

The expected outputs come from the descriptor oracle (what DirectML's descriptors say the
operator must produce), never from ONNX Runtime. ``OUT/cases.json`` maps each directory to its
case.

Replay them where Python is not available, for example with the DirectML execution provider on
Windows, with the ``onnx_test_runner`` program built with ONNX Runtime::

    onnx_test_runner -e dml OUT          # every case directory under OUT
    onnx_test_runner -e dml OUT/<case id>  # one case
    onnx_test_runner -e cpu OUT          # the CPU execution provider, as a baseline

``onnx_test_runner`` compares with a small tolerance; layout operations must match exactly, so a
case it passes may still differ in its last bits: ``ort-layouts validate`` compares bit for bit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_layouts._errors import (
    ArgumentError,
    DataTypeError,
    ModelError,
    ReportError,
    ShapeError,
    a_type,
    path_argument,
)
from ort_layouts.descriptors.sequences import is_integer
from ort_layouts.engine.environment import short_of_memory
from ort_layouts.engine.graphs import build_model, provider_opset
from ort_layouts.engine.suite import standard_suite
from ort_layouts.models.extract import ModelFile, load_model, model_cases
from ort_layouts.operators.base import input_name, output_name
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import expected_outputs, input_feeds
from ort_layouts.operators.onnx_nodes import OVERRIDABLE_IR_VERSION
from ort_layouts.operators.registry import case_refusal, operator_for_type
from ort_layouts.operators.values import check_case, check_cases, make_input
from ort_layouts.reports.lock import LOCK_FILE, DirectoryLock, made_directory
from ort_layouts.reports.report import now_iso

__all__ = [
    "TestData",
    "export_test_dir",
    "read_test_dir",
    "sanitize",
    "write_suite_models",
    "write_test_dir",
]

# Pinned, so the files do not depend on the installed ONNX Runtime. At opset 19 the DML EP's
# kernels serve Transpose, Expand and Pad (see graphs.provider_opset; 21 and 22 would too): from
# opset 23 those nodes would find no DirectML kernel and fall back to the CPU.
SUITE_MODELS_OPSET = 19
EXPORT_IR_VERSION = 9  # the IR version of opset 19; ONNX Runtime >= 1.15 loads it
SUITE_MODELS_IR_VERSION = EXPORT_IR_VERSION
_PRODUCER = ("ort_layouts.generate_models", "1")

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def sanitize(name: str, *, max_length: int = 150) -> str:
    """A directory name from a case id: only letters, digits, ``._-`` (others become ``_``)."""
    cleaned = _UNSAFE.sub("_", name).strip("._") or "case"
    return cleaned[:max_length]


@dataclasses.dataclass(frozen=True, slots=True)
class TestData:
    """One test directory read back: the model and its first data set, keyed by tensor name."""

    __test__ = False  # not a pytest test class

    model: onnx.ModelProto
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]


_MODEL = "model.onnx"


def _named(arrays: Sequence[np.ndarray] | Mapping[str, np.ndarray],
           names: Sequence[str], what: str) -> list[tuple[str, np.ndarray]]:
    if isinstance(arrays, Mapping):
        missing = [n for n in names if n not in arrays]
        extra = sorted(set(arrays) - set(names))
        if missing or extra:
            raise ModelError(f"{what} arrays {sorted(arrays)} do not match the graph's {what}s "
                             f"{list(names)} (missing {missing}, unknown {extra})")
        return [(n, np.asarray(arrays[n])) for n in names]
    if not isinstance(arrays, Sequence) or isinstance(arrays, (str, bytes)):
        raise ArgumentError(f"{what}s {arrays!r:.80} is {a_type(arrays)}; valid: a list of arrays, one per "
                            f"graph {what} in order, or a mapping of the graph's {what} names to arrays")
    if len(arrays) != len(names):
        raise ModelError(f"{len(arrays)} {what} arrays given; the graph has {len(names)}: {list(names)}")
    return [(n, np.asarray(a)) for n, a in zip(names, arrays, strict=True)]


def _checked_array(array: np.ndarray, name: str, what: str, elem_type: int) -> np.ndarray:
    """``array``, a graph tensor's data, in native byte order: of the tensor's element type
    ``elem_type`` (any when 0, a graph tensor without one), and one a TensorProto holds.

    Raises:
        DataTypeError: another element type (a replay would feed the model a tensor of a type it
            does not declare, or compare its output with one: the test could not pass; an array
            is never cast), a numpy type no ONNX type is, or an object array holding other
            things than strs and bytes.
    """
    if not array.dtype.isnative:  # the same values: from_array takes native byte order alone
        array = array.astype(array.dtype.newbyteorder("="))
    try:
        have = int(helper.np_dtype_to_tensor_dtype(array.dtype))
    except (KeyError, TypeError, ValueError):
        raise DataTypeError(f"{what} {name!r} is {array.dtype}, which no ONNX tensor type is; valid: an "
                            "array of an ONNX type (float32, int64, bool, str, ...)") from None
    if elem_type and have != elem_type:
        want = TensorProto.DataType.Name(elem_type)
        with contextlib.suppress(KeyError, TypeError, ValueError):  # a type numpy has no dtype for
            want += f" ({np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))})"
        raise DataTypeError(f"{what} {name!r} is {array.dtype} ({TensorProto.DataType.Name(have)}), and the "
                            f"graph's {what} {name!r} is {want}; valid: an array of the graph's type (an "
                            "array is never cast)")
    if array.dtype == object:
        for item in array.flat:
            if not isinstance(item, (str, bytes)):
                raise DataTypeError(f"{what} {name!r} is an object array holding {item!r:.40}, "
                                    f"{a_type(item)}; valid: an object array of strs or bytes (an ONNX "
                                    "string tensor), or an array of a numeric type")
            if isinstance(item, bytes):
                try:
                    item.decode("utf-8")
                except UnicodeDecodeError:  # ONNX's strings are UTF-8: no reader takes these back
                    raise DataTypeError(f"{what} {name!r} holds the bytes {item!r:.40}, which are not UTF-8; "
                                        "valid: strs, or bytes of UTF-8 text (an ONNX string tensor "
                                        "holds UTF-8)") from None
    return array


def _check_shape(array: np.ndarray, name: str, what: str, tensor_type: onnx.TypeProto.Tensor) -> None:
    """Refuse ``array``, a graph tensor's data, where its shape is not the one the graph
    declares for the tensor: its rank, and each dimension of a fixed size (a symbolic or unset
    one takes any size; a tensor of no declared shape, any shape).

    Raises:
        ShapeError: naming the tensor, the array's shape and the graph's.
    """
    if not tensor_type.HasField("shape"):
        return
    dims = tensor_type.shape.dim
    if len(dims) == array.ndim and all(not d.HasField("dim_value") or d.dim_value == n
                                       for d, n in zip(dims, array.shape, strict=True)):
        return
    declared = [d.dim_value if d.HasField("dim_value") else d.dim_param or "?" for d in dims]
    raise ShapeError(f"{what} {name!r} has shape {list(array.shape)}, and the graph's {what} {name!r} has "
                     f"shape {declared}; valid: an array of the graph's shape (a symbolic dimension takes "
                     "any size)")


def _declared(graph: onnx.GraphProto) -> dict[str, list[onnx.ValueInfoProto]]:
    """A graph's inputs a caller feeds (not initializers) and its outputs, in order, by "input"
    and "output": the tensors a test directory's input_N.pb and output_N.pb hold."""
    initializers = {t.name for t in graph.initializer}
    return {"input": [v for v in graph.input if v.name not in initializers], "output": list(graph.output)}


def _data_arrays(model: onnx.ModelProto, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
                 outputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
                 ) -> list[tuple[str, list[tuple[str, np.ndarray]]]]:
    """A data set's arrays matched to the graph's inputs (initializers excluded) and outputs,
    each checked against its tensor (:func:`_checked_array`, :func:`_check_shape`):
    ``[("input", [(name, array), ...]), ("output", [...])]``.

    Raises:
        ArgumentError: ``inputs`` or ``outputs`` is neither a sequence nor a mapping.
        ModelError: arrays that do not match the graph's tensors in number or in names.
        DataTypeError: an array of another type than its tensor's, or of none ONNX has.
        ShapeError: an array of another shape than its tensor's.
    """
    declared = _declared(model.graph)
    prepared = []
    for what, given in (("input", inputs), ("output", outputs)):
        values = declared[what]
        named = _named(given, [v.name for v in values], what)
        checked = []
        for (name, array), value in zip(named, values, strict=True):
            tensor_type = value.type.tensor_type
            checked.append((name, _checked_array(array, name, what, tensor_type.elem_type)))
            _check_shape(array, name, what, tensor_type)
        prepared.append((what, checked))
    return prepared


def _write_data(model: onnx.ModelProto, prepared: Sequence[tuple[str, Sequence[tuple[str, np.ndarray]]]],
                directory: Path, data_set: str) -> None:
    """Write ``model.onnx`` and ``<data_set>/{input,output}_<i>.pb`` (:func:`_data_arrays`'
    arrays) into ``directory``, made here with ``data_set``."""
    data = directory / data_set
    data.mkdir(parents=True)
    for prefix, named in prepared:
        for i, (name, array) in enumerate(named):
            tensor = numpy_helper.from_array(np.asarray(array, order="C"), name)
            (data / f"{prefix}_{i}.pb").write_bytes(tensor.SerializeToString())
    onnx.save(model, str(directory / _MODEL))


def _check_data_set(data_set: Any) -> str:
    """The folder name of data set ``data_set``, ``test_data_set_<data_set>``.

    Raises:
        ArgumentError: ``data_set`` is not an integer >= 0 (a bool, a str, a negative one).
    """
    valid = "an integer >= 0, the N of test_data_set_N"
    if not is_integer(data_set):
        raise ArgumentError(f"data_set {data_set!r:.80} is {a_type(data_set)}, not an integer; "
                            f"valid: {valid}")
    if data_set < 0:
        raise ArgumentError(f"data_set {data_set} is negative; valid: {valid}")
    return f"test_data_set_{int(data_set)}"


def write_test_dir(
    model: onnx.ModelProto,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    outputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    directory: str | Path,
    *,
    data_set: int = 0,
) -> Path:
    """Write ``model.onnx`` and ``test_data_set_<data_set>/{input,output}_<i>.pb``.

    Arrays are matched to the graph's inputs (initializers excluded) and outputs by position, or
    by name when given as a mapping; each TensorProto is named after its graph tensor. Each
    array must be of its tensor's element type and shape, as the graph declares them: it is
    never cast or reshaped (a symbolic dimension takes any size).

    Every argument is checked before anything is written. Into a directory that is there, the
    files are written into a hidden folder beside it (``.NAME.*.partial``) and moved into place
    once all are written, as :func:`export_test_dir` does: a failure or an interruption leaves
    the directory as it was. They replace its ``model.onnx`` and a data set of that number (the
    data set whole); its other data sets and files stay. A new directory is written in place,
    and removed on a failure or an interruption.

    Raises:
        ArgumentError: ``model`` is not a ModelProto, ``directory`` no str or os.PathLike,
            ``data_set`` not an integer >= 0, or ``inputs`` / ``outputs`` neither a sequence nor
            a mapping.
        ModelError: arrays that do not match the graph's inputs or outputs in number or names.
        DataTypeError: an array of another element type than its graph tensor's, or of none
            ONNX has (an object array of other things than strs and bytes).
        ShapeError: an array of another shape than its graph tensor's (its rank, or a fixed
            dimension's size), naming the tensor and both shapes.
        ReportError: ``directory`` is empty ('' would be the current directory: '.' names it)
            or is a file.
    """
    path = _directory(directory, "directory")
    if not isinstance(model, onnx.ModelProto):
        raise ArgumentError(f"model {model!r:.80} is {a_type(model)}, not an onnx.ModelProto; valid: a "
                            "ModelProto (e.g. onnx.load(path))")
    data_name = _check_data_set(data_set)
    prepared = _data_arrays(model, inputs, outputs)
    if path.exists() and not path.is_dir():
        raise ReportError(f"test directory {str(path)!r} is a file; valid: a directory, or a path where none "
                          "is yet")
    made = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    try:
        if made:  # nothing there to keep: written in place (an export's cases, in its staging folder)
            _write_data(model, prepared, path, data_name)
        else:
            with _staged(path) as staging:
                _write_data(model, prepared, staging, data_name)
                _put_in_place(staging, path, [data_name, _MODEL], [data_name, _MODEL])
    except BaseException:
        if made:  # a failure in a directory it made leaves none
            shutil.rmtree(path, ignore_errors=True)
        raise
    return path


def read_test_dir(directory: str | Path, *, data_set: int = 0) -> TestData:
    """Read a test directory back with onnx's own loaders (``onnx.load_tensor``).

    Raises:
        ArgumentError: ``directory`` is no str or os.PathLike, or ``data_set`` not an integer
            >= 0.
        ReportError: ``directory`` is empty ('' would be the current directory: '.' names it).
        ModelError: ``directory`` holds no ``model.onnx`` and data set ``data_set``, a
            model.onnx that is no ONNX model, or a data set with an ``input_*.pb`` or
            ``output_*.pb`` file not named ``input_<N>.pb`` / ``output_<N>.pb`` with N from 0
            without a gap (which the test runners cannot read either).
    """
    path = _directory(directory, "directory")
    data = path / _check_data_set(data_set)
    if not (path / _MODEL).is_file() or not data.is_dir():
        raise ModelError(f"{str(path)!r} is not an ONNX test directory ({_MODEL} and {data.name}/)")
    model = load_model(path / _MODEL, load_external_data=True)[0]  # refused when no ONNX model

    def load(prefix: str) -> dict[str, np.ndarray]:
        # No file of the data set's is skipped, as neither test runner skips one: ONNX's
        # (onnx/backend/test/runner/__init__.py) counts the input_*.pb files and reads
        # input_0.pb .. input_<count - 1>.pb, so a stray input_a.pb makes it look for a file that
        # is not there; ONNX Runtime's onnx_test_runner (onnxruntime/test/onnx/TestCase.cc,
        # SortFileNames) takes every input_*.pb and fails on a name without a number ("parse
        # file name failed") or numbers other than 0 .. count - 1 ("illegal input file name").
        names = sorted(f.name for f in data.glob(f"{prefix}_*.pb"))
        valid = [f"{prefix}_{i}.pb" for i in range(len(names))]
        stray = sorted(set(names) - set(valid))
        if stray:
            raise ModelError(f"test data file {str(data / stray[0])!r} is not named {prefix}_<N>.pb with N "
                             f"one of 0..{len(names) - 1}; valid: input_<N>.pb and output_<N>.pb numbered "
                             "from 0 without a gap, as ONNX's and ONNX Runtime's test runners read them")
        # an unnamed tensor is the graph's input or output at its position, as both runners match
        # them (a list, in order); a name given twice is refused, not one of them dropped
        declared = [v.name for v in _declared(model.graph)[prefix]]
        found: dict[str, np.ndarray] = {}
        for position, name in enumerate(valid):
            try:
                tensor = onnx.load_tensor(str(data / name))
            except OSError as e:
                raise ModelError(f"test data file {str(data / name)!r} cannot be read: "
                                 f"{e.strerror or e}") from None
            except Exception as e:  # protobuf's DecodeError
                raise ModelError(f"test data file {str(data / name)!r} is no ONNX TensorProto ({e}); valid: "
                                 "a tensor as onnx.save_tensor writes it") from None
            key = tensor.name
            if not key:
                if position >= len(declared):
                    raise ModelError(f"test data file {str(data / name)!r} holds an unnamed tensor, and the "
                                     f"model has {len(declared)} {prefix}s {declared} to match it by "
                                     "position; valid: a tensor named after one of them")
                key = declared[position]
            if key in found:
                raise ModelError(f"test data files {str(data / name)!r} and another of {str(data)!r} both "
                                 f"hold {prefix} {key!r}; valid: one file for each {prefix}")
            found[key] = numpy_helper.to_array(tensor)
        return found

    return TestData(model, load("input"), load("output"))


def _directory(value: object, name: str) -> Path:
    """``value``, the path of a directory, as a Path.

    Raises:
        ArgumentError: it is no str or os.PathLike (None, an int).
        ReportError: it is empty, which ``Path`` would take for the current directory (as
            ReportWriter refuses it: '.' names that one).
    """
    error = ReportError if isinstance(value, (str, os.PathLike)) else ArgumentError
    return path_argument(value, name, "the path of a directory, e.g. 'cases' (a str or os.PathLike)", error)


def _flag(value: object, name: str) -> bool:
    """``value``, a flag, as a bool.

    Raises:
        ArgumentError: it is no bool (a str such as 'no', None, a list), which would be taken
            by its truth.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentError(f"{name} {value!r:.80} is {a_type(value)}; valid: True or False")
    return bool(value)


def _as_cases(cases_or_model: Any, dims: dict[str, int] | None) -> list[Case]:
    """The cases to export: ``cases_or_model`` itself, its items, or the cases of a model.

    Raises:
        ArgumentError: ``cases_or_model`` is none of those (None, an int, bytes), or one of
            its items is not a Case, naming it.
        ModelError: a model that cannot be read (:func:`model_cases`).
    """
    if isinstance(cases_or_model, Case):
        return [cases_or_model]
    if isinstance(cases_or_model, (str, Path, onnx.ModelProto, ModelFile)):
        return model_cases(cases_or_model, dims=dims)  # read once; a missing file is a ModelError
    if isinstance(cases_or_model, (bytes, bytearray, memoryview)) or not isinstance(cases_or_model, Iterable):
        raise ArgumentError(f"cases_or_model {cases_or_model!r:.80} is {a_type(cases_or_model)}; valid: a "
                            "Case, an iterable of Cases (e.g. standard_suite()), or a model: the path of an "
                            ".onnx file (a str or Path), a ModelProto or a ModelFile")
    cases = list(cases_or_model)
    for index, case in enumerate(cases):
        check_case(case, f"cases_or_model[{index}]")
    return cases


def _check_opset(opset: Any) -> int:
    """``opset`` (an ai.onnx opset) as an int; None is the DML EP's (:func:`provider_opset`).

    Raises:
        ArgumentError: not an integer (a bool, a str), or an opset ONNX does not define: below 1
            or above the newest the installed onnx knows (``onnx.defs.onnx_opset_version()``),
            which ONNX Runtime cannot load.
    """
    if opset is None:
        return provider_opset("DmlExecutionProvider")
    newest = onnx.defs.onnx_opset_version()
    if not is_integer(opset):
        raise ArgumentError(f"opset {opset!r:.80} is {a_type(opset)}, not an integer; valid: an opset "
                            f"1..{newest}, or None (the DML EP's)")
    if not 1 <= opset <= newest:
        raise ArgumentError(f"opset {opset} is not an opset ONNX defines; valid: 1..{newest} (onnx "
                            f"{onnx.__version__}), or None (the DML EP's)")
    return int(opset)


def _check_ir_version(ir_version: Any) -> int:
    """``ir_version`` as an int; None is :data:`EXPORT_IR_VERSION`.

    Raises:
        ArgumentError: not an integer (a bool, a str), or an IR version the models cannot have:
            below :data:`OVERRIDABLE_IR_VERSION` (4), before which onnx.checker requires every
            initializer (a case's pads, shape, axes) to be a graph input too, or above the
            newest onnx writes (``onnx.IR_VERSION``).
    """
    if ir_version is None:
        return EXPORT_IR_VERSION
    newest = onnx.IR_VERSION
    first = OVERRIDABLE_IR_VERSION
    valid = (f"{first}..{newest} (from IR {first} on an initializer need not be a graph input, as a case's "
             f"parameters are not; onnx {onnx.__version__} writes up to {newest}), or None "
             f"({EXPORT_IR_VERSION})")
    if not is_integer(ir_version):
        raise ArgumentError(f"ir_version {ir_version!r:.80} is {a_type(ir_version)}, not an integer; "
                            f"valid: {valid}")
    if not first <= ir_version <= newest:
        raise ArgumentError(f"ir_version {ir_version} is not an IR version these models can have; "
                            f"valid: {valid}")
    return int(ir_version)


def _check_case_opsets(cases: Sequence[Case], opset: int) -> None:
    """Refuse a case whose opset (its own, else ``opset``) its operator does not have, ONNX does
    not define, or lacks a feature of the case for (:func:`case_refusal`), before any model is
    built.

    Raises:
        ModelError: naming the case, the opset and the valid ones.
    """
    for case in cases:
        refusal = case_refusal(case, case.opset or opset, "its own" if case.opset else "the export's")
        if refusal:
            raise ModelError(f"case {case.id}: {refusal}")


def export_test_dir(
    cases_or_model: Case | Sequence[Case] | str | Path | onnx.ModelProto | ModelFile,
    out_dir: str | Path,
    *,
    dims: dict[str, int] | None = None,
    batched: bool = False,
    opset: int | None = None,
    ir_version: int | None = None,
    replace: bool = False,
) -> list[Path]:
    """Write one ONNX test directory per case (or one for all of them with ``batched``).

    Args:
        cases_or_model: a Case, a sequence of Cases (e.g. ``standard_suite()``), or a model whose
            layout nodes become cases (:func:`model_cases`).
        out_dir: the directory to fill (created); ``cases.json`` there lists what was written.
        dims: dynamic dimensions of a model, as for :func:`extract`.
        batched: one directory ``batched`` whose graph holds every case (inputs ``x0``, ``x1``...).
        opset: the ai.onnx opset of cases that do not ask for their own, one ONNX defines
            (1 to ``onnx.defs.onnx_opset_version()``) and the cases' operators have; default: the
            DML EP's (19), at which it serves Transpose, Expand and Pad, so a replay runs them on
            DirectML.
        ir_version: the models' IR version, 4 (the first in which an initializer need not be a
            graph input) to ``onnx.IR_VERSION``; default (None): 9, the IR version of opset 19,
            which ONNX Runtime loads from 1.15 on. Not the installed runtime's newest: the one a
            replay runs on may be older (onnxruntime-directml 1.24 loads up to IR 11).
        replace: ``out_dir`` may hold an earlier export: the directories its ``cases.json``
            lists, and that file, are replaced (nothing else there is touched). Without it
            ``out_dir`` must be new or empty, so that a replay runs just these cases.

    The export is written into a hidden folder beside ``out_dir`` (``.NAME.*.partial``) and
    moved into place once every case is written, the earlier export only then moved out: a
    failure or an interruption leaves ``out_dir`` as it was, never half an export.

    Returns:
        The directories written.

    Every argument is checked before a model is read or anything is written.

    Raises:
        ArgumentError: ``cases_or_model`` is no Case, iterable of Cases or model, or holds an
            item that is not a Case; ``out_dir`` is no str or os.PathLike; ``batched`` or
            ``replace`` is no bool; ``opset`` or ``ir_version`` is not an integer, or out of
            those ranges.
        ModelError: a model that cannot be read, or a case's opset (its own, else ``opset``) is
            one its operator does not have.
        ReportError: ``out_dir`` is empty ('' would be the current directory: '.' names it), is
            a file, is not empty (and not an earlier export, with ``replace``), or holds a
            directory of the new export's names that its earlier export does not list.
    """
    out = _directory(out_dir, "out_dir")
    batched, replace = _flag(batched, "batched"), _flag(replace, "replace")
    opset = _check_opset(opset)
    ir_version = _check_ir_version(ir_version)
    cases = _as_cases(cases_or_model, dims)
    _check_case_opsets(cases, opset)
    _earlier_export(out, replace=replace)  # refused before anything is made
    _check_memory(cases)
    with made_directory(out):  # a failed export into a directory it made leaves none
        # another export into ``out`` is refused while this one runs; the lock's file goes with it,
        # so that the export holds only its own directories and cases.json
        lock = DirectoryLock(out, command="ort-layouts export", started=now_iso(), what="export directory")
        try:
            return _export_locked(cases, out, batched=batched, opset=opset, ir_version=ir_version,
                                  replace=replace)
        finally:
            with contextlib.suppress(OSError):
                (out / LOCK_FILE).unlink()
            lock.release()


def _export_locked(cases: Sequence[Case], out: Path, *, batched: bool, opset: int, ir_version: int,
                   replace: bool) -> list[Path]:
    """:func:`export_test_dir` into ``out``, which this process has locked (another export into
    it is refused until then): checked again under the lock, so that two exports never mix."""
    earlier = _earlier_export(out, replace=replace)
    if batched:  # one model has one opset: a directory per opset the cases ask for
        by_opset: dict[int | None, list[Case]] = {}
        for c in cases:
            by_opset.setdefault(c.opset, []).append(c)
        groups = [("batched" if k is None else f"batched_opset{k}", v)
                  for k, v in sorted(by_opset.items(), key=lambda kv: kv[0] or 0)]
    else:
        groups = [(sanitize(c.id), [c]) for c in cases]
    seen: dict[str, int] = {}
    named: list[tuple[str, list[Case]]] = []
    for base, group in groups:
        named.append((base if base not in seen else f"{base}_{seen[base] + 1}", group))
        seen[base] = seen.get(base, 0) + 1
    clash = [n for n, _ in named if n not in earlier and (out / n).exists()]
    if clash:
        raise ReportError(f"export directory {str(out)!r} holds {clash[:3]}, which are not of an earlier "
                          "export; valid: a new or empty directory")
    with _named_on_failure(out), _staged(out) as staging:
        manifest = []
        for name, group in named:
            model = build_model(group, opset=group[0].opset or opset, ir_version=ir_version)
            inputs: dict[str, np.ndarray] = {}
            outputs: dict[str, np.ndarray] = {}
            for i, case in enumerate(group):
                x = make_input(case)
                inputs.update((input_name(i, k), f) for k, f in enumerate(input_feeds(case, x)))
                outputs.update((output_name(i, k), y) for k, y in enumerate(expected_outputs(case, x)))
            write_test_dir(model, inputs, outputs, staging / name)
            manifest.append({"directory": name, "cases": [c.to_dict() | {"id": c.id} for c in group]})
        (staging / _MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        _put_in_place(staging, out, [*(n for n, _ in named), _MANIFEST], [*earlier, _MANIFEST])
    return [out / name for name, _ in named]


@contextlib.contextmanager
def _named_on_failure(out: Path) -> Iterator[None]:
    """A write that fails without naming its file (a full disk: ``write`` raises ENOSPC with no
    filename) is raised naming the export directory, so that the error says where it was."""
    try:
        yield
    except OSError as e:
        if e.filename is not None or e.errno is None:
            raise
        raise OSError(e.errno, e.strerror or str(e), str(out)) from e


def _check_memory(cases: Sequence[Case]) -> None:
    """Refuse a case whose input and expected outputs, which its export holds at once, need more
    memory than this machine has available (:func:`short_of_memory`, as a run checks a case),
    naming it, before any case is made.

    Raises:
        ShapeError: naming the case, its shape, the MiB it needs and the MiB available.
    """
    for case in cases:
        itemsize = max(1, case.data_type.bitwidth // 8)
        _, output_shapes = operator_for_type(case.op).tensor_shapes(case)
        needed = (math.prod(case.shape) + sum(math.prod(s) for s in output_shapes)) * itemsize
        available = short_of_memory(needed)
        if available is not None:
            raise ShapeError(
                f"case {case.id} (input {list(case.shape)}, {case.origin or 'the suite'}) needs "
                f"{-(-needed >> 20):,} MiB for its input and expected outputs, and this machine has "
                f"{available >> 20:,} MiB available; valid: smaller shapes (--dim), or a machine with more "
                "memory")


_MANIFEST = "cases.json"
_REPLACED = ".replaced"  # in the staging folder: the earlier export, until the new one is in place


def _earlier_export(out: Path, *, replace: bool) -> list[str]:
    """Check that ``out`` is new or empty, or with ``replace`` holds an earlier export: the
    directories its cases.json lists that are there (nothing is removed yet)."""
    if not out.is_dir() or not any(p.name != LOCK_FILE for p in out.iterdir()):
        if out.exists() and not out.is_dir():
            raise ReportError(f"export directory {str(out)!r} is a file; valid: a new or empty directory")
        return []
    manifest = out / _MANIFEST
    if not replace:
        what = "an earlier export (cases.json)" if manifest.is_file() else "files"
        raise ReportError(f"export directory {str(out)!r} already holds {what}; a replay of it would run "
                          "those too; valid: a new or empty directory, or replace it (--force)")
    try:
        listed = json.loads(manifest.read_text(encoding="utf-8"))
        names = [entry["directory"] for entry in listed]
    except (OSError, ValueError, TypeError, KeyError, RecursionError) as e:
        raise ReportError(f"export directory {str(out)!r} holds no earlier export to replace "
                          f"({manifest.name}: {e}); valid: a new or empty directory") from None
    bad = [n for n in names if not isinstance(n, str) or not n or Path(n).name != n or n in (".", "..")]
    if bad:
        raise ReportError(f"{manifest}: directories {bad[:3]} are not names of its own folders; "
                          "valid: a new or empty directory")
    return [n for n in dict.fromkeys(names) if n != _MANIFEST and (out / n).exists()]


def _staging_folder(out: Path) -> Path:
    """A new folder the export is written into before it is put in place: beside ``out``
    (a hidden ``.NAME.*.partial``), or in it where ``out``'s parent cannot be written."""
    parent = out.parent
    parent.mkdir(parents=True, exist_ok=True)
    try:
        return Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=parent))
    except PermissionError:
        if not out.is_dir():
            raise
        return Path(tempfile.mkdtemp(prefix=".export.", suffix=".partial", dir=out))


@contextlib.contextmanager
def _staged(out: Path) -> Iterator[Path]:
    """A new folder to write into before the files are put in ``out`` (:func:`_staging_folder`),
    removed on the way out, unless it holds what a failure could not move back into ``out``
    (in its ``.replaced``, :func:`_put_in_place`)."""
    staging = _staging_folder(out)
    done = False
    try:
        yield staging
        done = True
    finally:
        replaced = staging / _REPLACED
        if done or not replaced.is_dir() or not any(replaced.iterdir()):
            shutil.rmtree(staging, ignore_errors=True)  # else it holds what could not be moved back


def _put_in_place(staging: Path, out: Path, names: Sequence[str], earlier: Sequence[str]) -> None:
    """Move ``earlier`` (those of them in ``out``: an earlier export's directories and its
    cases.json) out of ``out`` into ``staging``'s ``.replaced``, then ``names`` from ``staging``
    in, in that order (an export's cases.json last), by renames; a failure moves everything
    back as it was."""
    old = [n for n in earlier if (out / n).exists()]
    trash = staging / _REPLACED
    moves: list[tuple[Path, Path]] = []
    try:
        if old:
            trash.mkdir()
        for n in old:
            moves.append((out / n, trash / n))
            os.replace(*moves[-1])
        for n in names:
            moves.append((staging / n, out / n))
            os.replace(*moves[-1])
    except BaseException:
        for source, target in reversed(moves):
            if target.exists() and not source.exists():
                with contextlib.suppress(OSError):
                    os.replace(target, source)
        raise


def write_suite_models(
    out_dir: str | Path,
    cases: Iterable[Case] | None = None,
    *,
    opset: int | None = SUITE_MODELS_OPSET,
    ir_version: int | None = SUITE_MODELS_IR_VERSION,
) -> dict[str, list[str]]:
    """Write the standard suite as ONNX models, one per op x data type (x opset where a case asks
    for its own), plus ``MANIFEST.json`` listing the case ids of each file.

    The output is reproducible byte for byte: fixed opset, IR version and producer, no
    timestamps, files and ids in a fixed order.

    ``opset`` and ``ir_version`` are checked as :func:`export_test_dir` checks them (None
    means export_test_dir's defaults: the DML EP's opset, and IR 9), and each case's opset
    (its own, else ``opset``) against its operator's, before anything is written.

    Returns:
        The manifest: file name -> case ids (graph input ``x{i}`` is the i-th id).

    Raises:
        ArgumentError: ``opset`` or ``ir_version`` is not an integer, or out of
            :func:`export_test_dir`'s ranges; an item of ``cases`` is not a Case, naming it.
        ModelError: a case's opset is one its operator does not have.
    """
    opset = _check_opset(opset)
    ir_version = _check_ir_version(ir_version)
    cases = standard_suite() if cases is None else check_cases(cases)  # checked, then grouped: read twice
    _check_case_opsets(cases, opset)
    groups: dict[str, list[Case]] = {}
    for c in cases:
        name = f"{c.op.lower()}_{c.data_type.name.lower()}"
        if c.opset is not None:
            name += f"_opset{c.opset}"
        groups.setdefault(name + ".onnx", []).append(c)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, list[str]] = {}
    for name in sorted(groups):
        group = groups[name]
        model = build_model(group, opset=group[0].opset or opset, ir_version=ir_version)
        model.producer_name, model.producer_version = _PRODUCER
        (out / name).write_bytes(model.SerializeToString())
        manifest[name] = [c.id for c in group]
    document = {"generator": "scripts/generate_models.py", "opset": opset, "ir_version": ir_version,
                "case_count": sum(len(v) for v in manifest.values()), "files": manifest}
    (out / "MANIFEST.json").write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return manifest
