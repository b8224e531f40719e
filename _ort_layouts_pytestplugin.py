"""The pytest entry point of ort_layouts: its options, and the plugin when asked for.

pytest loads this module in every run wherever ort_layouts is installed, so it lives outside the
package (importing ``ort_layouts`` pulls in numpy, onnx and onnxruntime) and imports nothing
but pytest: it adds the ``--ort-*`` options and registers :mod:`ort_layouts.frontends.pytest_plugin` only
when ``--ort-provider`` is given. Without it a pytest run is unchanged.
"""

from __future__ import annotations

import pytest

PLUGIN = "ort_layouts.frontends.pytest_plugin"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ort_layouts", "ort_layouts: validate layout ops on an execution provider")
    group.addoption("--ort-provider", default=None, metavar="NAME",
                    help="run the ort_layouts suite on this provider (dml, webgpu, cuda, cpu, auto or a "
                         "full name); without it ort_layouts does nothing")
    group.addoption("--ort-device-id", type=int, default=0, metavar="N", help="device index (default 0)")
    group.addoption("--ort-ops", default=None, metavar="LIST", help="ops, e.g. Transpose,Pad")
    group.addoption("--ort-dtypes", default=None, metavar="LIST", help="data types, e.g. float32,int64")
    group.addoption("--ort-ranks", default=None, metavar="LIST", help="ranks, e.g. 1,2,4 or 1-4")
    group.addoption("--ort-values", default=None, metavar="LIST", help="input values: random,special,iota")
    group.addoption("--ort-seed", type=int, default=0, metavar="N", help="input data seed (default 0)")
    group.addoption("--ort-optimize", action="store_true", help="graph optimizations on")
    group.addoption("--ort-strict", action="store_true",
                    help="a missing provider, unsupported cases and known issues fail instead of "
                         "skipping (xfail for known issues)")
    group.addoption("--ort-batch-size", type=int, default=64, metavar="N",
                    help="cases per session (default 64; 1 under pytest-xdist without --dist loadgroup)")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("ort_provider") and not config.pluginmanager.has_plugin(PLUGIN):
        from ort_layouts.frontends import pytest_plugin

        config.pluginmanager.register(pytest_plugin, PLUGIN)
