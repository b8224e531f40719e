"""ONNX's own node tests for every operator of the registry, read as cases.

ONNX ships each node test as a directory: ``model.onnx`` plus ``test_data_set_0/input_*.pb``
and ``output_*.pb``. Source checkouts hold them under ``onnx/backend/test/data/node``; wheels
do not, so :func:`onnx_node_tests` writes them out from ONNX's generators
(``onnx.backend.test.case.node.<op>``) in that same layout, then reads them back like any other.

A test's node is read the way a node of a real model is (``models.extract``): the registry's
operator module describes it (``Operator.describe_node`` over an
:class:`~ort_layouts.operators.onnx_nodes.Graph` whose constants are the test's inputs, as the
DML EP reads shapes, pads, starts, ... on the CPU when it builds the graph) and makes its case
(``Operator.case_from_node``). The node's data inputs become the case's input (Concat's inputs
are put together along the axis, the inverse of ``Operator.input_feeds``); ONNX's expected
outputs stay as they are, an independent check of the reference executor and of the EPs.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from ort_layouts._errors import (
    DataTypeError,
    DescriptorError,
    ModelError,
    NotExpressibleError,
    ShapeError,
)
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.suite import list_argument
from ort_layouts.operators.base import Operator
from ort_layouts.operators.case import Case
from ort_layouts.operators.onnx_nodes import Flagged, Graph
from ort_layouts.operators.registry import CASE_OPS, operator_for_type

__all__ = ["NODE_TEST_OPS", "NodeTest", "load_node_test", "materialize_node_tests", "onnx_node_tests"]

#: the op types whose node tests are read: every op type that makes validation cases
NODE_TEST_OPS: tuple[str, ...] = CASE_OPS


@dataclasses.dataclass(frozen=True, slots=True)
class NodeTest:
    """One ONNX node test: its name, the case, its input data and ONNX's expected output(s).

    Attributes:
        name: the test directory's name (``test_slice_neg_steps``).
        case: the case the node makes (origin ``onnx-node-test:NAME``).
        input: the case's input: the node's data input, or Concat's inputs put together.
        expected: ONNX's expected first output.
        expected_outputs: ONNX's expected outputs, one per node output (Split has several).
    """

    name: str
    case: Case
    input: np.ndarray
    expected: np.ndarray
    expected_outputs: tuple[np.ndarray, ...] = ()


def installed_node_test_dir() -> Path | None:
    """``onnx/backend/test/data/node`` of the installed onnx, when it has one."""
    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"
    return path if path.is_dir() else None


def _check_ops(ops: Iterable[str]) -> tuple[str, ...]:
    """The op types asked for, each once; refused as a ModelError when one makes no case, and
    when ``ops`` is one str (its letters) or no iterable (:func:`list_argument`)."""
    listed = list_argument(ops, "ops", "op names", ModelError, example=repr(list(NODE_TEST_OPS[:2])),
                           of_str=True) or []
    unknown = [op for op in listed if not isinstance(op, str) or op not in NODE_TEST_OPS]
    if unknown:
        raise ModelError(f"op types {unknown} make no cases; valid: {list(NODE_TEST_OPS)}")
    return tuple(dict.fromkeys(listed))


def materialize_node_tests(dest: str | os.PathLike[str], ops: Iterable[str] = NODE_TEST_OPS) -> Path:
    """Write ONNX's node tests for ``ops`` under ``dest`` in ONNX's own directory layout."""
    from onnx.backend.test.case import node as node_cases

    wanted = set(_check_ops(ops))
    for op in wanted:
        importlib.import_module(f"onnx.backend.test.case.node.{op.lower()}")
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


def _whole_input(operator: Operator, case: Case, feeds: list[np.ndarray], name: str) -> np.ndarray:
    """The case's input that ``operator.input_feeds`` cuts into ``feeds``: each feed is placed
    where input_feeds takes it from (found by cutting the element indices of the whole)."""
    if len(feeds) == 1 and feeds[0].shape == case.shape:
        return np.ascontiguousarray(feeds[0])
    index = np.arange(math.prod(case.shape), dtype=np.int64).reshape(case.shape)
    cuts = operator.input_feeds(case, index)
    if [c.shape for c in cuts] != [f.shape for f in feeds]:
        raise ModelError(f"{name}: the node's data inputs {[list(f.shape) for f in feeds]} are not the "
                         f"case's inputs {[list(c.shape) for c in cuts]}")
    whole = np.zeros(case.shape, dtype=feeds[0].dtype)
    for cut, feed in zip(cuts, feeds, strict=True):
        whole.reshape(-1)[cut.reshape(-1)] = feed.reshape(-1)
    return whole


def load_node_test(path: str | os.PathLike[str], *, seed: int = 0) -> NodeTest:
    """Read one node test directory (``model.onnx`` + ``test_data_set_0``) as a case.

    Raises:
        ModelError: the directory has no ``model.onnx``, the model is not a single node of an op
            type that makes cases, or its node makes no case (a parameter input with no data, a
            data type DirectML has not, a SpaceToDepth of mode CRD, ...).
    """
    root = Path(path)
    if not (root / "model.onnx").is_file():
        raise ModelError(f"node test {str(root)!r} has no model.onnx; valid: a directory with model.onnx and "
                         "test_data_set_0")
    model = onnx.load(str(root / "model.onnx"))
    graph = model.graph
    if len(graph.node) != 1 or graph.node[0].op_type not in NODE_TEST_OPS:
        raise ModelError(f"{root.name}: not a single node of {list(NODE_TEST_OPS)} "
                         f"({[n.op_type for n in graph.node]})")
    node = graph.node[0]
    operator = operator_for_type(node.op_type)
    data_dir = root / "test_data_set_0"
    view = Graph.read(model.graph, {})
    for j, info in enumerate(graph.input):
        pb = data_dir / f"input_{j}.pb"
        if pb.exists():  # every input is known when the graph is built: the EP reads it on the CPU
            value = _read_tensor(pb)
            view.constants[info.name] = value
            view.shapes[info.name] = tuple(value.shape)
    expected = tuple(_read_tensor(data_dir / f"output_{j}.pb") for j in range(len(graph.output))
                     if (data_dir / f"output_{j}.pb").exists())
    if not expected:
        raise ModelError(f"{root.name}: test_data_set_0 has no output_0.pb")
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    x = view.value(node.input[0]) if node.input and node.input[0] else None
    if x is None:
        raise ModelError(f"{root.name}: the data input {node.input[0] if node.input else ''!r} has no data")
    try:
        data_type = DataType.from_numpy(x.dtype)
    except DataTypeError as e:
        raise ModelError(f"{root.name}: {e}") from None
    shape = tuple(int(n) for n in x.shape)
    params: dict[str, object] = {}
    flags: list[str] = []
    try:
        operator.describe_node(node, view, opset or 0, data_type, shape,
                               view.shape(node.output[0]), params, flags)
    except (Flagged, DescriptorError, ShapeError, NotExpressibleError) as e:
        flags.append(str(e))  # the DML EP cannot take it; the case is still made when it can be
    origin = f"onnx-node-test:{root.name}"
    try:
        case = operator.case_from_node(data_type, shape, dict(params), values="random", seed=seed,
                                       origin=origin, opset=opset)
    except (ShapeError, DataTypeError) as e:
        raise ModelError(f"{root.name}: makes no case: {e}") from None
    if case is None:
        raise ModelError(f"{root.name}: makes no case ({'; '.join(flags) or 'parameters not read'})")
    count = len(operator.input_shapes(case))
    feeds = [view.value(name) for name in node.input[:count]]
    if len(feeds) != count or any(f is None for f in feeds):
        raise ModelError(f"{root.name}: the node has not the {count} data inputs its case needs")
    x = _whole_input(operator, case, [np.asarray(f) for f in feeds if f is not None], root.name)
    return NodeTest(root.name, case, np.ascontiguousarray(x), expected[0], expected)


def _cache_root(wanted: tuple[str, ...]) -> Path:
    """The cache directory of ONNX's node tests for this onnx, with every op of ``wanted``
    written out once (``.complete-<op>`` marks an op done)."""
    root = Path(tempfile.gettempdir()) / f"ort_layouts_onnx_node_tests_{onnx.__version__}"
    missing = [op for op in wanted if not (root / f".complete-{op}").exists()]
    if missing:
        materialize_node_tests(root, missing)
        for op in missing:
            (root / f".complete-{op}").write_text("")
    return root


def onnx_node_tests(root: str | os.PathLike[str] | None = None,
                    ops: Iterable[str] = NODE_TEST_OPS, *,
                    skipped: list[tuple[str, str]] | None = None) -> list[NodeTest]:
    """Every node test for ``ops`` that makes a case, sorted by name, from ``root``, else the
    installed onnx's data directory, else written out once from ONNX's generators into a cache
    directory.

    Args:
        root: a directory of node test directories.
        ops: the op types to read (default: every op type that makes cases).
        skipped: when given, gets ``(test name, reason)`` for each test of ``ops`` that makes
            no case.

    A case's seed is its test's place among the tests of ``ops`` sorted by name, so the same
    ``ops`` give the same case ids.

    Raises:
        ModelError: ``root`` is not a directory, or ``ops`` names an op type that makes no cases.
    """
    wanted = _check_ops(ops)
    if root is not None and not Path(root).is_dir():
        raise ModelError(f"node test root {str(root)!r} is not a directory; valid: a directory of node test "
                         "directories (each with model.onnx and test_data_set_0), or None for ONNX's own")
    if root is None:
        root = installed_node_test_dir()
    if root is None:
        root = _cache_root(wanted)
    paths = []
    for path in sorted(p for p in Path(root).iterdir() if (p / "model.onnx").exists()):
        model = onnx.load(str(path / "model.onnx"), load_external_data=False)
        if len(model.graph.node) == 1 and model.graph.node[0].op_type in wanted:
            paths.append(path)
    tests = []
    for seed, path in enumerate(paths):  # the seed: the test's place among those of ``ops``
        try:
            tests.append(load_node_test(path, seed=seed))
        except ModelError as e:
            if skipped is not None:
                skipped.append((path.name, str(e)))
    return tests
