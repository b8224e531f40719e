"""The examples in the package's docstrings run as written: every module is searched, and each
example passes with doctest's default options, as ``pytest --doctest-modules ort_layouts`` runs
it (a flag an example needs, such as NORMALIZE_WHITESPACE for a wrapped message, is written on
the example itself)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ort_layouts

MODULES = sorted(m.name for m in pkgutil.walk_packages(ort_layouts.__path__, "ort_layouts.")
                 if not m.name.endswith("__main__"))
# modules whose docstrings hold examples (any other module may gain some: it is searched too)
WITH_EXAMPLES = {"ort_layouts.descriptors.broadcast", "ort_layouts.descriptors.buffer_tensor",
                 "ort_layouts.descriptors.dtypes", "ort_layouts.descriptors.layout",
                 "ort_layouts.descriptors.sequences", "ort_layouts.descriptors.size",
                 "ort_layouts.frontends.pytest_plugin", "ort_layouts.operators.depth_space",
                 "ort_layouts.operators.join_split", "ort_layouts.operators.padding",
                 "ort_layouts.operators.reshape", "ort_layouts.operators.slice",
                 "ort_layouts.operators.split", "ort_layouts.operators.tile", "ort_layouts.reference.compare",
                 "ort_layouts.reference.nans", "ort_layouts.reports.render"}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run_as_written(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=0, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} fail"
    if name in WITH_EXAMPLES:
        assert result.attempted > 0, f"{name} lost its examples"
