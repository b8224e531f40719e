"""The operator registry: ONNX op type -> the module that knows everything about it.

Adding an operator is writing its module (an :class:`~ort_layouts.operators.base.Operator`
subclass) and adding one line to ``_MODULES`` below.
"""

from __future__ import annotations

import onnx

from ort_layouts._errors import ShapeError
from ort_layouts.operators.base import Operator
from ort_layouts.operators.case import Case
from ort_layouts.operators.concat import Concat
from ort_layouts.operators.depth_space import DepthSpace
from ort_layouts.operators.expand import Expand
from ort_layouts.operators.pad import Pad
from ort_layouts.operators.reshape import ReshapeLike
from ort_layouts.operators.slice import Slice
from ort_layouts.operators.split import Split
from ort_layouts.operators.tile import Tile
from ort_layouts.operators.transpose import Transpose

__all__ = ["CASE_OPS", "LAYOUT_OPS", "case_operators", "case_opsets", "case_refusal", "check_op_type",
           "operator_for_type", "opset_refusal"]

# one line per operator module, in the order of the standard suite and of reports
_MODULES: tuple[Operator, ...] = (
    Transpose(),
    Expand(),
    Pad(),
    ReshapeLike(),
    DepthSpace(),
    Slice(),
    Tile(),
    Concat(),
    Split(),
)

_BY_TYPE: dict[str, Operator] = {t: m for m in _MODULES for t in m.op_types}

#: every ONNX op type ort_layouts describes (``extract``)
LAYOUT_OPS: tuple[str, ...] = tuple(_BY_TYPE)
#: the op types that make validation cases (suite, ``validate --model``)
CASE_OPS: tuple[str, ...] = tuple(t for m in _MODULES if m.validates for t in m.op_types)
_CASE_OP_SET = frozenset(CASE_OPS)


def case_operators() -> tuple[Operator, ...]:
    """The operator modules that make validation cases, in the order of the standard suite."""
    return tuple(m for m in _MODULES if m.validates)


def check_op_type(name: object, *, cases: bool = False, any_case: bool = False) -> str:
    """The op type ``name`` names, as ort_layouts spells it: the one check of an op name, for
    every caller (the registry, :class:`~ort_layouts.operators.case.Case`, the selection, the
    command line).

    Args:
        name: the op type asked for.
        cases: one of :data:`CASE_OPS` (the op types that make validation cases); else one of
            :data:`LAYOUT_OPS`.
        any_case: ``name`` in any letter case ("transpose": what a user types); else exactly
            (a model's op type, which ONNX matches exactly).

    Raises:
        ShapeError: another name, or no str: "op 'Conv' is not a layout op here; valid: [...]"
            (with ``cases``: "... is not a layout op that makes cases here; ...").
    """
    known = CASE_OPS if cases else LAYOUT_OPS
    if isinstance(name, str):
        if not any_case and name in (_CASE_OP_SET if cases else _BY_TYPE):  # every case asks: a lookup
            return name
        key = name.lower() if any_case else name
        found = next((op for op in known if (op.lower() if any_case else op) == key), None)
        if found is not None:
            return found
    what = "a layout op that makes cases here" if cases else "a layout op here"
    raise ShapeError(f"op {name!r} is not {what}; valid: {list(known)}")


def operator_for_type(op_type: str) -> Operator:
    """The operator module of an ONNX op type (exactly as spelt).

    Raises:
        ShapeError: ort_layouts does not know the op type (:func:`check_op_type`'s message,
            which lists those it knows).
    """
    found = _BY_TYPE.get(op_type) if isinstance(op_type, str) else None
    return found if found is not None else _BY_TYPE[check_op_type(op_type)]


def case_opsets(op_type: str) -> range:
    """The ai.onnx opsets at which cases of ``op_type`` are built: from its operator's first
    (:attr:`~ort_layouts.operators.base.Operator.min_opset`) to the newest the installed onnx
    defines (``onnx.defs.onnx_opset_version()``; ONNX Runtime loads no model of a later one).
    The one range every check of a case's opset takes: a Case's own (from its start; a case
    may ask for a later opset than this onnx knows, refused where a model is made of it),
    :func:`~ort_layouts.engine.graphs.build_model`, an export and a model's nodes.

    Raises:
        ShapeError: ort_layouts does not know the op type (:func:`operator_for_type`).
    """
    return range(operator_for_type(op_type).min_opset, onnx.defs.onnx_opset_version() + 1)


def opset_refusal(op_type: str, opset: int, whose: str = "") -> str:
    """Why a model of ``op_type`` cannot be built at ``opset`` (out of :func:`case_opsets`):
    before the operator's first (ONNX may define an older version of the op there, whose
    inputs the cases do not take) or after the newest onnx defines, naming the valid ones; ""
    where it can. ``whose`` says whose opset it is ("its own").

    Raises:
        ShapeError: ort_layouts does not know the op type (:func:`operator_for_type`).
    """
    opsets = case_opsets(op_type)
    if opset in opsets:
        return ""
    said = f" ({whose})" if whose else ""
    if opset < opsets.start:
        why = f"before opset {opsets.start}, the first {op_type} cases are built at"
    else:
        why = f"after opset {opsets[-1]}, the newest the installed onnx defines"
    return f"opset {opset}{said} is {why}; valid: {opsets.start}..{opsets[-1]}"


def case_refusal(case: Case, opset: int, whose: str = "") -> str:
    """Why ``case`` cannot be a node at ``opset`` ("" where it can): its op's cases are not built
    there (:func:`opset_refusal`), or the case has a feature that opset's op lacks
    (:meth:`~ort_layouts.operators.base.Operator.opset_problem`: Pad's wrap before 19)."""
    return opset_refusal(case.op, opset, whose) or operator_for_type(case.op).opset_problem(case, opset)
