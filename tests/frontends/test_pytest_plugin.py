"""The pytest plugin: nothing without --ort-provider; suite cases as items with it, under xdist too."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
SELECT = ["--ort-ops=Transpose", "--ort-dtypes=float32", "--ort-ranks=2,3"]


def _installed() -> bool:
    entry_points = importlib.metadata.entry_points(group="pytest11")
    return any(ep.value == "_ort_layouts_pytestplugin" for ep in entry_points)


# the entry point loads the plugin where the package is installed; else load it by name
PLUGIN = [] if _installed() else ["-p", "_ort_layouts_pytestplugin"]

ENGINE = ("engine.providers", "engine.runner", "engine.suite", "engine.selection")
needs_engine = pytest.mark.skipif(
    any(importlib.util.find_spec(f"ort_layouts.{m}") is None for m in ENGINE),
    reason="the validation engine is not installed")


def expected_ids() -> list[str]:
    from ort_layouts.engine.selection import select_cases

    return [c.id for c in select_cases(ops=("Transpose",), dtypes=("float32",), ranks=(2, 3), seed=0)]


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_does_nothing_without_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    result = pytester.runpytest_inprocess(*PLUGIN, "--collect-only", "-q")
    result.assert_outcomes()
    assert [line for line in result.outlines if "::" in line] == ["test_one.py::test_one"]
    result = pytester.runpytest_inprocess(*PLUGIN)
    result.assert_outcomes(passed=1)
    # no report header line and no items of ours ("plugins: ..., ort_layouts-0.1.0" names the entry point)
    assert not [line for line in result.outlines if line.startswith("ort_layouts")]


def test_a_run_without_the_option_does_not_import_the_package(pytester: pytest.Pytester, env: None) -> None:
    # the entry point imports only pytest: numpy, onnx and onnxruntime stay out of other test runs
    pytester.makepyfile(test_one="import sys\n\n\ndef test_one():\n"
                                 "    assert 'ort_layouts' not in sys.modules\n")
    result = pytester.runpytest_subprocess(*PLUGIN)
    result.assert_outcomes(passed=1)


def test_an_empty_provider_alone_does_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=")
    result.assert_outcomes(passed=1)
    assert not [line for line in result.outlines if line.startswith("ort_layouts")]


def test_an_empty_provider_with_options_at_their_defaults_does_nothing(pytester: pytest.Pytester) -> None:
    # an option given at its default value selects nothing else: it is taken as not given
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=", "--ort-seed=0", "--ort-batch-size=64",
                                          "--ort-device-id=0")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=1)
    assert not [line for line in result.outlines if line.startswith("ort_layouts")]


@pytest.mark.parametrize("options, given", [
    (["--ort-ops=Transpose"], "--ort-ops is given"),
    (["--ort-dtypes=float32", "--ort-strict"], "--ort-dtypes, --ort-strict are given"),
    (["--ort-batch-size=8"], "--ort-batch-size is given"),
    (["--ort-seed=1"], "--ort-seed is given"),
    (["--ort-seed=1", "--ort-batch-size=64", "--ort-device-id=0"], "--ort-seed is given"),
], ids=["ops", "dtypes-and-strict", "batch-size", "seed", "seed-with-others-at-default"])
def test_an_empty_provider_with_other_options_is_a_usage_error(pytester: pytest.Pytester,
                                                              options: list[str], given: str) -> None:
    """``--ort-provider=$EP`` with the variable unset must not turn the validation run into a
    plain (green) pytest run."""
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=", *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*ort_layouts: --ort-provider is empty (an unset variable?), yet {given}; "
                                 "valid: --ort-provider=NAME (dml, webgpu, cuda, cpu, auto or a full name), "
                                 "or no --ort-* option at all"])


def test_options_are_listed_in_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess(*PLUGIN, "--help")
    for option in ("--ort-provider", "--ort-ops", "--ort-dtypes", "--ort-ranks", "--ort-strict"):
        assert option in result.stdout.str()


@needs_engine
def test_suite_cases_become_items_with_readable_ids(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", *SELECT, "--collect-only", "-q")
    ids = [line.split("::", 1)[1] for line in result.outlines if line.startswith("ort_layouts::")]
    assert ids == expected_ids()
    assert len(ids) > 2


@needs_engine
def test_cpu_cases_pass_and_junit_carries_figures(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", *SELECT, "--junitxml=out.xml")
    result.assert_outcomes(passed=len(expected_ids()))
    root = ET.parse(pytester.path / "out.xml").getroot()
    cases = list(root.iter("testcase"))
    assert len(cases) == len(expected_ids())
    props = {p.get("name"): p.get("value") for p in cases[0].iter("property")}
    assert props["status"] == "pass"
    assert props["mismatch_count"] == "0"
    assert props["provider"] == "CPUExecutionProvider"
    assert props["case_id"] == cases[0].get("name")


@needs_engine
def test_k_selects_items(pytester: pytest.Pytester) -> None:
    first = expected_ids()[0]
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", *SELECT, "-k", first)
    result.assert_outcomes(passed=1)


BROKEN_CONFTEST = '''
import dataclasses
import ort_layouts.engine.runner as runner
from ort_layouts.engine.result import Status

real = runner.run_cases

def broken(cases, **kwargs):
    results = list(real(cases, **kwargs))
    out = []
    for r in results:
        if r.case.id == BROKEN_ID:
            r = dataclasses.replace(r, status=Status.MISMATCH, mismatch_count=5, first_mismatch_index=(0, 1),
                                    input_offset_in_elements=3, output_offset_in_elements=1,
                                    expected_hex="0000803f", actual_hex="00000040",
                                    diagnosis="output matches the input read packed")
        out.append(r)
    return out

runner.run_cases = broken


def pytest_unconfigure(config):
    runner.run_cases = real
'''


@needs_engine
def test_a_mismatch_fails_its_item_with_the_figures(pytester: pytest.Pytester) -> None:
    broken_id = next(i for i in expected_ids() if "-perm1.0-" in i)
    pytester.makeconftest(f"BROKEN_ID = {broken_id!r}\n" + BROKEN_CONFTEST)
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", *SELECT, "--junitxml=out.xml")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 1
    assert outcomes.get("passed") == len(expected_ids()) - 1
    result.stdout.fnmatch_lines([
        "*Transpose-float32-*-perm1.0-*: 5 of * elements differ; first at index [[]0, 1[]]*"
        "expected bytes 0000803f, got 00000040 (little-endian); "
        "diagnosis: output matches the input read packed*"])
    failed = [c for c in ET.parse(pytester.path / "out.xml").getroot().iter("testcase")
              if c.find("failure") is not None]
    assert len(failed) == 1
    props = {p.get("name"): p.get("value") for p in failed[0].iter("property")}
    assert props["mismatch_count"] == "5" and props["first_mismatch_index"] == "0,1"
    assert props["expected_hex"] == "0000803f" and props["actual_hex"] == "00000040"


@needs_engine
def test_missing_provider_skips_or_fails_with_strict(pytester: pytest.Pytester) -> None:
    import onnxruntime

    if "DmlExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("DirectML is available here")
    n = len(expected_ids())
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=dml", *SELECT, "-rs")
    result.assert_outcomes(skipped=n)
    result.stdout.fnmatch_lines(["*provider 'DmlExecutionProvider' is not available*"])
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=dml", *SELECT, "--ort-strict")
    result.assert_outcomes(failed=n)


@needs_engine
def test_a_known_provider_that_is_not_here_skips_every_item(pytester: pytest.Pytester) -> None:
    import onnxruntime

    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("CUDA is available here")
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cuda", *SELECT, "-rs")
    result.assert_outcomes(skipped=len(expected_ids()))
    result.stdout.fnmatch_lines(["*provider 'CUDAExecutionProvider' is not available*"])


@pytest.mark.parametrize("option, fragment", [
    ("--ort-provider=dlm", "*execution provider 'dlm' is unknown; valid: ['auto', 'dml',*"),
    ("--ort-batch-size=0", "*--ort-batch-size 0 is not valid; valid: an integer >= 1*"),
], ids=["provider-typo", "batch-size-zero"])
def test_bad_options_are_usage_errors_not_skips(pytester: pytest.Pytester, option: str,
                                                fragment: str) -> None:
    """A typo must not turn a validation run green by skipping every item."""
    args = [option] if option.startswith("--ort-provider") else ["--ort-provider=cpu", option]
    result = pytester.runpytest_inprocess(*PLUGIN, *args, *SELECT)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([fragment])


@needs_engine
def test_a_device_the_provider_does_not_list_is_a_usage_error(pytester: pytest.Pytester,
                                                             two_cpu_devices: None) -> None:
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", "--ort-device-id=7", *SELECT)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ort-device-id: device id 7 is out of range: CPUExecutionProvider "
                                 "lists 2 device(s) (0: CPU Example cpu-0; 1: CPU Example cpu-1); "
                                 "valid: 0..1"])


@needs_engine
def test_an_empty_selection_names_the_plugins_options(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", "--ort-ops=Concat", "--ort-ranks=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the selection holds no cases (check --ort-ops, --ort-dtypes, --ort-ranks, "
                                 "--ort-values)"])


def _azure_listed() -> bool:
    from ort_layouts.engine.providers import list_providers

    return any(i.name == "AzureExecutionProvider" and i.available for i in list_providers())


@needs_engine
@pytest.mark.parametrize("name", ["azure", "AzureExecutionProvider"])
def test_a_provider_validate_refuses_is_a_usage_error(pytester: pytest.Pytester, name: str) -> None:
    """The Azure EP has no operator kernels: every case would be 'unsupported' and the run green.
    The plugin refuses it as ``validate --provider`` does, by the alias ``providers`` lists too."""
    if not _azure_listed():
        pytest.skip("this onnxruntime lists no AzureExecutionProvider")
    result = pytester.runpytest_inprocess(*PLUGIN, f"--ort-provider={name}", *SELECT)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ort-provider: execution provider 'AzureExecutionProvider' cannot be "
                                 "validated: *remote endpoint*; valid here: [[]'auto', *'cpu'*"])


@needs_engine
@pytest.mark.parametrize("name", ["dml", "auto"])
def test_a_bad_dml_timeout_is_a_usage_error_not_a_skip(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A bad ORT_LAYOUTS_DML_TIMEOUT_S stops a DirectML run before any work, as validate's: it
    is no absence of DirectML, whose items would all be skipped and the run green. (DirectML
    through the worker stands as available here.)"""
    from ort_layouts.engine import providers
    from ort_layouts.frontends.pytest_plugin import _provider

    names = providers._available_names()
    monkeypatch.setattr(providers, "_available_names", lambda: [*names, providers.DML])
    monkeypatch.setattr(providers, "_dml_in_process", lambda: False)
    monkeypatch.setenv("ORT_LAYOUTS_DML_TIMEOUT_S", "abc")
    refused = "--ort-provider: ORT_LAYOUTS_DML_TIMEOUT_S='abc' is not valid"
    with pytest.raises(pytest.UsageError, match=refused):
        _provider(name)


@needs_engine
def test_a_known_provider_absent_here_is_a_skip_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.engine import providers
    from ort_layouts.frontends.pytest_plugin import _provider

    monkeypatch.setattr(providers, "_available_names", lambda: ["CPUExecutionProvider"])
    assert _provider("cuda") == ("", "execution provider 'CUDAExecutionProvider' is not available; "
                                     "available: ['CPUExecutionProvider']")


@needs_engine
def test_only_an_unavailable_provider_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin goes by the error's type: another refusal of a name this project knows (here
    "cuda") is a usage error, not a run whose every item is skipped."""
    from ort_layouts._errors import ProviderError, ProviderUnavailableError
    from ort_layouts.engine import session
    from ort_layouts.frontends.pytest_plugin import _provider

    def refusing(error: Exception) -> Any:
        def resolve(name: str) -> str:
            raise error
        return resolve

    monkeypatch.setattr(session, "resolve_validation_provider",
                        refusing(ProviderUnavailableError("CUDA is not here")))
    assert _provider("cuda") == ("", "CUDA is not here")
    monkeypatch.setattr(session, "resolve_validation_provider", refusing(ProviderError("CUDA is broken")))
    with pytest.raises(pytest.UsageError, match=r"^ort_layouts: --ort-provider: CUDA is broken$"):
        _provider("cuda")


@needs_engine
def test_the_header_names_the_provider_resolved_or_why_it_cannot_run(pytester: pytest.Pytester,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The header came before the collection resolved the provider: it named "auto" or "cpu" as
    given, and never said that a provider cannot run here (its items all skipped)."""
    from ort_layouts._errors import ProviderUnavailableError
    from ort_layouts.engine import session

    real = session.resolve_validation_provider

    def resolve(name: str) -> str:
        if name == "webgpu":
            raise ProviderUnavailableError("no WebGPU here")
        return real(name)

    monkeypatch.setattr(session, "resolve_validation_provider", resolve)
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", *SELECT, "--collect-only")
    assert "ort_layouts: provider CPUExecutionProvider" in result.stdout.lines
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=webgpu", *SELECT)
    assert "ort_layouts: provider webgpu (unavailable: no WebGPU here)" in result.stdout.lines
    result.assert_outcomes(skipped=len(expected_ids()))


def test_bad_selection_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", "--ort-dtypes=floaty")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*floaty*"])


@pytest.mark.parametrize("option, fragment", [
    ("--ort-ops=Transpose,,Pad", "*--ort-ops: 'Transpose,,Pad' has an empty item (item 2)*"),
    ("--ort-ops=,", "*--ort-ops: ',' has an empty item (item 1)*"),
    ("--ort-ops=", "*--ort-ops: '' is an empty list*"),
    ("--ort-dtypes=float32,", "*--ort-dtypes: 'float32,' has an empty item (item 2)*"),
    ("--ort-values=,random", "*--ort-values: ',random' has an empty item (item 1)*"),
    ("--ort-ranks=", "*--ort-ranks: '' is an empty list*"),
], ids=["empty-item", "only-a-comma", "empty", "dtypes-trailing-comma", "values-leading-comma",
        "ranks-empty"])
def test_a_list_with_an_empty_item_is_a_usage_error(pytester: pytest.Pytester, option: str,
                                                    fragment: str) -> None:
    """As ``validate --ops`` refuses them: ``,`` would otherwise select every op, ``a,,b`` hide a typo."""
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", option, "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([fragment])


class _Options:
    """A pytest.Config's getoption, with only the plugin's selection lists."""

    def __init__(self, **options: str) -> None:
        self.options = options

    def getoption(self, name: str) -> str | None:
        return self.options.get(name)


LISTS = ["Transpose", " Transpose , Pad ", "transpose,PAD", "floaty", "float32,int8", "random,iota",
         "Transpose,,Pad", ",", "", " ", "Pad,", ",random", "1-3", "2,1-3,2", "0,8", "1,9", "9", "3-1",
         "x", "1,,2", "1.5", "-1"]


@needs_engine
@pytest.mark.parametrize("option", ["ops", "dtypes", "ranks", "values"])
def test_the_plugin_reads_a_list_as_validate_does(option: str) -> None:
    """Each --ort-OPTION takes exactly the lists ``validate --OPTION`` takes, read to the same
    values, and refuses the others with the same reason."""
    from ort_layouts.frontends.cli import UsageError, parse_command_line
    from ort_layouts.frontends.pytest_plugin import _option_list

    for text in LISTS:
        try:
            cli: object = getattr(parse_command_line(["validate", f"--{option}={text}"]), option)
        except UsageError as e:
            prefix, suffix = f"argument --{option}: ", " (see ort-layouts validate --help)"
            assert str(e).startswith(prefix) and str(e).endswith(suffix), str(e)
            cli = str(e)[len(prefix):-len(suffix)]
        try:
            plugin: object = _option_list(_Options(**{f"ort_{option}": text}), option)  # type: ignore[arg-type]
        except pytest.UsageError as e:
            assert str(e).startswith(f"ort_layouts: --ort-{option}: "), str(e)
            plugin = str(e)[len(f"ort_layouts: --ort-{option}: "):]
        assert plugin == cli, text


@needs_engine
@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist is not installed")
@pytest.mark.parametrize("dist", ["load", "loadgroup"])
def test_under_xdist(pytester: pytest.Pytester, env: None, dist: str) -> None:
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "xdist", "-n", "2", f"--dist={dist}",
                                           "--ort-provider=cpu", *SELECT)
    result.assert_outcomes(passed=len(expected_ids()))


@needs_engine
def test_a_known_issue_is_an_expected_failure_unless_strict(pytester: pytest.Pytester) -> None:
    """ONNX Runtime's CPU Pad changes float16 NaN payloads (the known-issue table): those items
    are xfail, and fail with --ort-strict."""
    known = [*PLUGIN, "--ort-provider=cpu", "--ort-ops=Pad", "--ort-dtypes=float16", "--ort-ranks=1",
             "--ort-values=special"]
    result = pytester.runpytest_inprocess(*known, "-rx")
    result.assert_outcomes(xfailed=4)
    result.stdout.fnmatch_lines(["*known issue: *"])
    result = pytester.runpytest_inprocess(*known, "--ort-strict")
    result.assert_outcomes(failed=4)


PROVIDER_CHOICES = "--ort-provider=NAME (dml, webgpu, cuda, cpu, auto or a full name)"


@pytest.mark.parametrize("options, given", [
    (["--ort-ops=Pad", "--ort-strict"], "--ort-ops, --ort-strict are given"),
    (["--ort-seed=1"], "--ort-seed is given"),
    (["--ort-device-id=1", "--ort-dtypes=float32"], "--ort-device-id, --ort-dtypes are given"),
], ids=["ops-and-strict", "seed", "device-and-dtypes"])
def test_a_selection_without_a_provider_is_a_usage_error(pytester: pytest.Pytester, options: list[str],
                                                          given: str) -> None:
    """``pytest --ort-ops=Pad`` in a project with tests of its own must not pass as a plain run."""
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    result = pytester.runpytest_inprocess(*PLUGIN, *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (f"ERROR: ort_layouts: {given} without --ort-provider; valid: {PROVIDER_CHOICES}, "
            "or no --ort-* option at all") in result.stderr.lines
    assert "passed" not in result.stdout.str()


def test_a_case_id_argument_without_a_provider_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    result = pytester.runpytest_inprocess(*PLUGIN, "ort_layouts::Tile-float32-5-reps1-random-s1854759658")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert ("ERROR: ort_layouts: ort_layouts::Tile-float32-5-reps1-random-s1854759658 is given without "
            f"--ort-provider; valid: {PROVIDER_CHOICES}, or no --ort-* option and no "
            "ort_layouts::<case id> argument at all") in result.stderr.lines


def _pyproject_entry_point() -> str:
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return str(data["project"]["entry-points"]["pytest11"]["ort_layouts"])


def test_p_loads_the_plugin_where_autoload_is_disabled(pytester: pytest.Pytester,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """With PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 (common in CI) the entry point is not loaded and
    the options are unknown; ``-p`` with the entry point's module, as the README says, loads it."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    result = pytester.runpytest_inprocess("--ort-provider=cpu", "--ort-ops=Transpose")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unrecognized arguments: --ort-provider=cpu --ort-ops=Transpose" in result.stderr.str()
    module = _pyproject_entry_point()
    assert module == "_ort_layouts_pytestplugin"
    result = pytester.runpytest_inprocess("-p", module, "--ort-provider=cpu", "--ort-ops=Transpose",
                                          "--ort-dtypes=float32", "--ort-ranks=2,3", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    if importlib.util.find_spec("ort_layouts.engine.selection") is not None:
        ids = [line.split("::", 1)[1] for line in result.outlines if line.startswith("ort_layouts::")]
        assert ids == expected_ids()


def test_the_readme_says_how_to_load_the_plugin_without_autoload() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## pytest\n", 1)[1].split("\n## ", 1)[0]
    assert "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1" in section
    assert f"-p {_pyproject_entry_point()}" in section


@needs_engine
def test_a_node_id_argument_runs_that_case_alone(pytester: pytest.Pytester) -> None:
    """``ort_layouts::<case id>``, the node id pytest prints, selects the case (the project's own
    tests are not run, as with any node id given); several run in the suite's order."""
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    ids = expected_ids()
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", *SELECT, f"ort_layouts::{ids[2]}",
                                          f"ort_layouts::{ids[0]}", "-v")
    result.assert_outcomes(passed=2)
    ran = [line.split()[0] for line in result.outlines if " PASSED" in line]
    assert ran == [f"ort_layouts::{ids[0]}", f"ort_layouts::{ids[2]}"]


@needs_engine
def test_the_node_id_of_a_failed_line_runs_that_case_again(pytester: pytest.Pytester) -> None:
    broken_id = next(i for i in expected_ids() if "-perm1.0-" in i)
    pytester.makeconftest(f"BROKEN_ID = {broken_id!r}\n" + BROKEN_CONFTEST)
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", *SELECT)
    failed = [line.split()[1] for line in result.outlines if line.startswith("FAILED ")]
    assert failed == [f"ort_layouts::{broken_id}"]
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", *SELECT, failed[0])
    result.assert_outcomes(failed=1)
    assert [line.split()[1] for line in result.outlines if line.startswith("FAILED ")] == failed


@needs_engine
def test_a_node_id_the_selection_does_not_hold_is_a_usage_error(pytester: pytest.Pytester) -> None:
    first = expected_ids()[0]
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", *SELECT, f"ort_layouts::{first}9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.stderr.lines if line.startswith("ERROR: ")]
    assert len(lines) == 1
    assert lines[0].startswith(
        f"ERROR: ort_layouts: ort_layouts::{first}9 is no case of this selection "
        f"({len(expected_ids())} cases of --ort-ops=Transpose --ort-dtypes=float32 --ort-ranks=2,3); "
        "valid: a case id that --collect-only lists with the --ort-* options of the run that listed it, "
        "such as [")
    assert repr(first) in lines[0]


@needs_engine
@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist is not installed")
def test_a_node_id_argument_under_xdist(pytester: pytest.Pytester, env: None) -> None:
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "xdist", "-n", "2", "--ort-provider=cpu", *SELECT,
                                           f"ort_layouts::{expected_ids()[1]}")
    result.assert_outcomes(passed=1)


STOPPING_CONFTEST = '''
import ort_layouts.engine.runner as runner
from ort_layouts._errors import ProviderError

real = runner.run_cases

def stopping(cases, **kwargs):
    with open(CALLS, "a") as f:
        f.write(",".join(c.id for c in cases) + "\\n")
    if sum(1 for _ in open(CALLS)) > GOOD_CALLS:
        raise ProviderError(MESSAGE)
    return real(cases, **kwargs)

runner.run_cases = stopping


def pytest_unconfigure(config):
    runner.run_cases = real
'''

STOPPED = "the DirectML stack is broken, so no case was run: every output is zeros: use another driver"


def _stopping_conftest(pytester: pytest.Pytester, good_calls: int) -> Path:
    calls = pytester.path / "calls.txt"
    pytester.makeconftest(f"CALLS = {str(calls)!r}\nGOOD_CALLS = {good_calls}\nMESSAGE = {STOPPED!r}\n"
                          + STOPPING_CONFTEST)
    return calls


@needs_engine
def test_a_provider_that_fails_itself_stops_the_session_once(pytester: pytest.Pytester) -> None:
    """A broken stack (the runner's ProviderError before any case ran) is one usage error with
    its message, after one run: no item, no traceback."""
    calls = _stopping_conftest(pytester, 0)
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", *SELECT, "--ort-batch-size=2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"ERROR: ort_layouts: {STOPPED}" in result.stderr.lines
    assert "no tests ran" in result.stdout.str()
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "runner.py" not in output
    assert calls.read_text().splitlines() == [",".join(expected_ids()[:2])]


@needs_engine
@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist is not installed")
def test_a_provider_that_fails_itself_stops_an_xdist_session_before_its_workers(pytester: pytest.Pytester,
                                                                                env: None) -> None:
    calls = _stopping_conftest(pytester, 0)
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "xdist", "-n", "2", "--ort-provider=cpu", *SELECT)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"ERROR: ort_layouts: {STOPPED}" in result.stderr.lines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert calls.read_text().splitlines() == [expected_ids()[0]]


@needs_engine
def test_a_provider_that_fails_later_fails_the_rest_without_running_them(pytester: pytest.Pytester) -> None:
    calls = _stopping_conftest(pytester, 1)
    ids = expected_ids()
    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", *SELECT, "--ort-batch-size=2")
    result.assert_outcomes(passed=2, failed=len(ids) - 2)
    for case_id in ids[2:]:
        assert f"{case_id}: {STOPPED}" in result.outlines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert calls.read_text().splitlines() == [",".join(ids[:2]), ",".join(ids[2:4])]


PAD_DESCRIPTORS = {
    "operator": "DML_OPERATOR_PADDING1",
    "input": {"data_type": "FLOAT16", "sizes": [1, 1, 1, 5], "strides": None,
              "total_tensor_size_in_bytes": 12, "guaranteed_base_offset_alignment": 0, "flags": 0},
    "output": {"data_type": "FLOAT16", "sizes": [1, 1, 1, 7], "strides": None,
               "total_tensor_size_in_bytes": 16, "guaranteed_base_offset_alignment": 0, "flags": 0},
    "start_padding": [0, 0, 0, 1], "end_padding": [0, 0, 0, 1], "mode": "CONSTANT",
    "padding_value_hex": "017c",
}


@needs_engine
def test_a_failure_shows_the_provider_and_the_descriptors(pytester: pytest.Pytester) -> None:
    """A rank-1 float16 constant Pad whose NaN payloads the CPU EP changes (--ort-strict): the
    failure text and the testcase's properties carry the DirectML PADDING1 the EP builds (the
    rank padded to 4, no strides (the EP's TensorDesc of a packed tensor has none), sizes in
    bytes rounded up to 4), the provider and the device; a passing testcase carries none of it."""
    import json

    result = pytester.runpytest_inprocess(*PLUGIN, "--ort-provider=cpu", "--ort-ops=Pad",
                                          "--ort-dtypes=float16", "--ort-ranks=1", "--ort-strict",
                                          "--junitxml=out.xml")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 4 and outcomes["passed"] > 0
    lines = result.outlines
    at = next(i for i, line in enumerate(lines) if line.startswith("Pad-float16-5-constant-pads1.1-v017c-"))
    assert lines[at + 1].startswith("  provider: CPUExecutionProvider on CPU")
    assert lines[at + 2:at + 5] == [
        "  DML_OPERATOR_PADDING1 start_padding [0, 0, 0, 1], end_padding [0, 0, 0, 1], mode CONSTANT, "
        "padding_value_hex 017c",
        "    input: FLOAT16 sizes [1, 1, 1, 5] strides packed, 12 bytes",
        "    output: FLOAT16 sizes [1, 1, 1, 7] strides packed, 16 bytes"]
    cases = {c.get("name", ""): c for c in ET.parse(pytester.path / "out.xml").getroot().iter("testcase")}
    name = next(n for n in cases if n.startswith("Pad-float16-5-constant-pads1.1-v017c-"))
    props = {p.get("name"): p.get("value") for p in cases[name].iter("property")}
    assert props["dml_operator"] == "DML_OPERATOR_PADDING1"
    assert json.loads(props["descriptors"] or "") == PAD_DESCRIPTORS
    assert props["provider"] == "CPUExecutionProvider" and "stack" not in props
    passed = [c for c in cases.values() if c.find("failure") is None]
    assert passed
    for case in passed:
        assert not {"descriptors", "dml_operator"} & {p.get("name") for p in case.iter("property")}

