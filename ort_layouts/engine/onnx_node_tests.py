"""ONNX's own node tests for Transpose, Expand and Pad, read as cases.

ONNX ships each node test as a directory: ``model.onnx`` plus ``test_data_set_0/input_*.pb``
and ``output_*.pb``. Source checkouts hold them under ``onnx/backend/test/data/node``; wheels
do not, so :func:`onnx_node_tests` writes them out from ONNX's generators
(``onnx.backend.test.case.node.<op>``) in that same layout, then reads them back like any other.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TypedDict

import numpy as np
import onnx
from onnx import numpy_helper

from ort_layouts._errors import ModelError
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.case import Case

__all__ = ["NodeTest", "load_node_test", "materialize_node_tests", "onnx_node_tests"]

NODE_TEST_OPS: tuple[str, ...] = ("Transpose", "Expand", "Pad")
_MODULES = {"Transpose": "transpose", "Expand": "expand", "Pad": "pad"}


class _CaseParams(TypedDict, total=False):
    """The op-specific keyword arguments of :class:`Case` read from a node test."""

    perm: tuple[int, ...] | None
    target_shape: tuple[int, ...]
    mode: str
    pads: tuple[int, ...]
    pad_value_hex: str
    axes: tuple[int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class NodeTest:
    """One ONNX node test: its name, the case, its input data and ONNX's expected output."""

    name: str
    case: Case
    input: np.ndarray
    expected: np.ndarray


def installed_node_test_dir() -> Path | None:
    """``onnx/backend/test/data/node`` of the installed onnx, when it has one."""
    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"
    return path if path.is_dir() else None


def materialize_node_tests(dest: str | os.PathLike[str], ops: Iterable[str] = NODE_TEST_OPS) -> Path:
    """Write ONNX's node tests for ``ops`` under ``dest`` in ONNX's own directory layout."""
    from onnx.backend.test.case import node as node_cases

    wanted = set(ops)
    for op in wanted:
        importlib.import_module(f"onnx.backend.test.case.node.{_MODULES[op]}")
    root = Path(dest)
    for test in node_cases._NodeTestCases:  # filled by the generator modules on import
        if test.model is None or not any(n.op_type in wanted for n in test.model.graph.node):
            continue
        out = root / test.name
        data_dir = out / "test_data_set_0"
        data_dir.mkdir(parents=True, exist_ok=True)
        (out / "model.onnx").write_bytes(test.model.SerializeToString())
        inputs, outputs = test.data_sets[0]
        for kind, values, infos in (("input", inputs, test.model.graph.input),
                                    ("output", outputs, test.model.graph.output)):
            for j, (value, info) in enumerate(zip(values, infos, strict=False)):
                tensor = value if isinstance(value, onnx.TensorProto) else \
                    numpy_helper.from_array(np.asarray(value), info.name)
                (data_dir / f"{kind}_{j}.pb").write_bytes(tensor.SerializeToString())
    return root


def _read_tensor(path: Path) -> np.ndarray:
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def _value_hex(value: np.ndarray | float, data_type: DataType) -> str:
    dtype = data_type.to_numpy()
    arr = np.asarray(value)
    arr = arr.astype(dtype) if arr.dtype != dtype else arr
    return arr.reshape(-1)[:1].astype(dtype.newbyteorder("<")).tobytes().hex()


def load_node_test(path: str | os.PathLike[str], *, seed: int = 0) -> NodeTest:
    """Read one node test directory (``model.onnx`` + ``test_data_set_0``) as a case.

    Raises:
        ModelError: the model is not a single Transpose, Expand or Pad node.
    """
    root = Path(path)
    model = onnx.load(str(root / "model.onnx"))
    graph = model.graph
    if len(graph.node) != 1 or graph.node[0].op_type not in NODE_TEST_OPS:
        raise ModelError(f"{root.name}: not a single {'/'.join(NODE_TEST_OPS)} node "
                         f"({[n.op_type for n in graph.node]})")
    node = graph.node[0]
    data_dir = root / "test_data_set_0"
    values: dict[str, np.ndarray] = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for j, info in enumerate(graph.input):
        pb = data_dir / f"input_{j}.pb"
        if pb.exists():
            values[info.name] = _read_tensor(pb)
    expected = _read_tensor(data_dir / "output_0.pb")
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    x = values[node.input[0]]
    data_type = DataType.from_numpy(x.dtype)

    def arg(i: int) -> np.ndarray | None:
        return values.get(node.input[i]) if len(node.input) > i and node.input[i] else None

    fields: _CaseParams = {}
    if node.op_type == "Transpose":
        fields["perm"] = tuple(attrs["perm"]) if "perm" in attrs else None
    elif node.op_type == "Expand":
        fields["target_shape"] = tuple(int(v) for v in np.asarray(arg(1)).reshape(-1))
    else:
        mode = attrs.get("mode", b"constant")
        fields["mode"] = mode.decode() if isinstance(mode, bytes) else str(mode)
        pads = attrs.get("pads", attrs.get("paddings")) if opset is not None and opset < 11 else arg(1)
        fields["pads"] = tuple(int(v) for v in np.asarray(pads).reshape(-1))
        value = attrs.get("value") if opset is not None and opset < 11 else arg(2)
        if value is not None:
            fields["pad_value_hex"] = _value_hex(value, data_type)
        axes = arg(3)
        if axes is not None:
            fields["axes"] = tuple(int(v) for v in np.asarray(axes).reshape(-1))
    case = Case(node.op_type, data_type, tuple(x.shape), opset=opset, seed=seed,
                origin=f"onnx-node-test:{root.name}", **fields)
    return NodeTest(root.name, case, np.ascontiguousarray(x), expected)


def onnx_node_tests(root: str | os.PathLike[str] | None = None,
                    ops: Iterable[str] = NODE_TEST_OPS) -> list[NodeTest]:
    """Every node test for ``ops``, sorted by name, from ``root``, else the installed onnx's data
    directory, else written out once from ONNX's generators into a cache directory."""
    wanted = tuple(ops)
    if root is None:
        root = installed_node_test_dir()
    if root is None:
        root = Path(tempfile.gettempdir()) / f"ort_layouts_onnx_node_tests_{onnx.__version__}"
        if not (root / ".complete").exists():
            materialize_node_tests(root, wanted)
            (root / ".complete").write_text("")
    tests = []
    for seed, path in enumerate(sorted(p for p in Path(root).iterdir() if (p / "model.onnx").exists())):
        model = onnx.load(str(path / "model.onnx"), load_external_data=False)
        if len(model.graph.node) == 1 and model.graph.node[0].op_type in wanted:
            tests.append(load_node_test(path, seed=seed))
    return tests
