"""The public API: every name of ``ort_layouts.__all__`` imports, and the module docstring lists
exactly ``__all__`` (no more, no fewer)."""

from __future__ import annotations

import re

import ort_layouts


def _docstring_names() -> set[str]:
    doc = ort_layouts.__doc__ or ""
    listed = set()
    for line in doc.splitlines():
        if line.startswith("    "):  # the indented lines under each heading
            listed |= set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", line))
    return listed


def test_docstring_lists_exactly_all() -> None:
    names = set(ort_layouts.__all__)
    prose = {"each", "also", "a", "ValueError", "LookupError", "or", "RuntimeError", "TypeError"}
    listed = _docstring_names() - prose
    assert listed - names == set(), "listed in the docstring but not in __all__"
    assert names - listed == set(), "in __all__ but not listed in the docstring"


def test_all_names_import_and_are_unique() -> None:
    assert len(ort_layouts.__all__) == len(set(ort_layouts.__all__))
    for name in ort_layouts.__all__:
        assert getattr(ort_layouts, name) is not None


def test_new_operators_and_functions_are_public() -> None:
    from ort_layouts.models.extract import model_coverage
    from ort_layouts.operators.join_split import JoinOp
    from ort_layouts.reference.execute import execute_all, verify_all
    from ort_layouts.reports.merge import merge_shards

    assert ort_layouts.JoinOp is JoinOp and ort_layouts.merge_shards is merge_shards
    assert ort_layouts.execute_all is execute_all and ort_layouts.verify_all is verify_all
    assert ort_layouts.model_coverage is model_coverage
    for name in ("Slice1Op", "JoinOp", "SplitOp", "TileOp", "DepthToSpaceOp", "SpaceToDepthOp"):
        op_class = getattr(ort_layouts, name)
        assert callable(op_class.from_dict) and callable(op_class.to_dict)
