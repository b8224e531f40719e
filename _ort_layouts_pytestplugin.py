"""The pytest entry point of ort_layouts: its options, and the plugin when asked for.

pytest loads this module in every run wherever ort_layouts is installed, so it lives outside the
package (importing ``ort_layouts`` pulls in numpy, onnx and onnxruntime) and imports nothing
but pytest: it adds the ``--ort-*`` options and registers :mod:`ort_layouts.frontends.pytest_plugin` only
when ``--ort-provider`` is given. Without it a pytest run is unchanged. An empty
``--ort-provider=`` (an unset variable) alone is the same as none; another ``--ort-*`` option,
or an ``ort_layouts::<case id>`` argument, without a provider (or with an empty one) is a usage
error, so a run that asked for a selection never passes without it.

Where plugins are not loaded on their own (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``),
``-p _ort_layouts_pytestplugin`` loads this module.
"""

from __future__ import annotations

import pytest

PLUGIN = "ort_layouts.frontends.pytest_plugin"

# the start of an item's node id, which also selects it as a pytest argument
NODE_PREFIX = "ort_layouts::"

# the --ort-* options besides --ort-provider, by dest, with their defaults (their values when not given)
DEFAULTS: dict[str, object] = {
    "ort_device_id": 0, "ort_ops": None, "ort_dtypes": None, "ort_ranks": None, "ort_values": None,
    "ort_seed": 0, "ort_optimize": False, "ort_strict": False, "ort_batch_size": 64,
}

PROVIDER_CHOICES = "--ort-provider=NAME (dml, webgpu, cuda, cpu, auto or a full name)"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ort_layouts", "ort_layouts: validate layout ops on an execution provider")
    group.addoption("--ort-provider", default=None, metavar="NAME",
                    help="run the ort_layouts suite on this provider (dml, webgpu, cuda, cpu, auto or a "
                         "full name); without it ort_layouts does nothing, and the other --ort-* "
                         "options are usage errors")
    group.addoption("--ort-device-id", type=int, default=DEFAULTS["ort_device_id"], metavar="N",
                    help="device index (default 0)")
    group.addoption("--ort-ops", default=DEFAULTS["ort_ops"], metavar="LIST", help="ops, e.g. Transpose,Pad")
    group.addoption("--ort-dtypes", default=DEFAULTS["ort_dtypes"], metavar="LIST",
                    help="data types, e.g. float32,int64")
    group.addoption("--ort-ranks", default=DEFAULTS["ort_ranks"], metavar="LIST",
                    help="ranks, e.g. 1,2,4 or 1-4")
    group.addoption("--ort-values", default=DEFAULTS["ort_values"], metavar="LIST",
                    help="input values: random,special,iota")
    group.addoption("--ort-seed", type=int, default=DEFAULTS["ort_seed"], metavar="N",
                    help="input data seed (default 0)")
    group.addoption("--ort-optimize", action="store_true", default=DEFAULTS["ort_optimize"],
                    help="graph optimizations on")
    group.addoption("--ort-strict", action="store_true", default=DEFAULTS["ort_strict"],
                    help="a missing provider, unsupported cases and known issues fail instead of "
                         "skipping (xfail for known issues)")
    group.addoption("--ort-batch-size", type=int, default=DEFAULTS["ort_batch_size"], metavar="N",
                    help="cases per session (default 64; 1 under pytest-xdist without --dist loadgroup)")


def pytest_configure(config: pytest.Config) -> None:
    provider = config.getoption("ort_provider")
    if not provider:
        given = ["--" + dest.replace("_", "-") for dest, default in DEFAULTS.items()
                 if config.getoption(dest) != default]
        given += [arg for arg in config.args if arg.startswith(NODE_PREFIX)]
        if given:
            what = f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} given"
            nothing = "no --ort-* option" + (f" and no {NODE_PREFIX}<case id> argument"
                                             if any(g.startswith(NODE_PREFIX) for g in given) else "")
            raise pytest.UsageError(
                ("ort_layouts: --ort-provider is empty (an unset variable?), yet " + what if provider == ""
                 else f"ort_layouts: {what} without --ort-provider")
                + f"; valid: {PROVIDER_CHOICES}, or {nothing} at all")
    if provider and not config.pluginmanager.has_plugin(PLUGIN):
        from ort_layouts.frontends import pytest_plugin

        config.pluginmanager.register(pytest_plugin, PLUGIN)
