"""Execution providers: discovery, names, options, and session configuration (DML by mocks)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import onnxruntime as ort
import pytest

from ort_layouts._errors import ProviderError, ProviderUnavailableError
from ort_layouts.engine import providers as P
from ort_layouts.engine.graphs import build_model
from ort_layouts.operators.case import Case


def test_cpu_is_listed_and_available() -> None:
    infos = {p.name: p for p in P.list_providers()}
    assert infos["CPUExecutionProvider"].available
    assert infos["CPUExecutionProvider"].short_name == "cpu"
    assert not infos["CPUExecutionProvider"].is_gpu
    assert infos["DmlExecutionProvider"].is_gpu


@pytest.mark.parametrize("alias", ["cpu", "CPU", "CPUExecutionProvider", "cpuexecutionprovider"])
def test_resolve_aliases(alias: str) -> None:
    assert P.resolve_provider(alias) == "CPUExecutionProvider"


def test_unknown_provider_lists_choices() -> None:
    with pytest.raises(ProviderError, match=r"'Dmll' is unknown.*available here: \[.*CPUExecutionProvider"):
        P.resolve_provider("Dmll")


@pytest.mark.skipif("DmlExecutionProvider" in ort.get_available_providers(), reason="DML is present")
def test_unavailable_dml_names_what_is_available() -> None:
    with pytest.raises(ProviderError, match=r"'DmlExecutionProvider' is not available.*available: \[.*CPU"):
        P.resolve_provider("dml")


def test_a_known_provider_absent_here_is_unavailable_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Absence has its own type, so a caller tells it from an unknown name without reading the
    message; both remain ProviderErrors (and RuntimeErrors)."""
    monkeypatch.setattr(P, "_available_names", lambda: ["CPUExecutionProvider"])
    with pytest.raises(ProviderUnavailableError) as absent:
        P.resolve_provider("cuda")
    assert str(absent.value) == ("execution provider 'CUDAExecutionProvider' is not available; "
                                 "available: ['CPUExecutionProvider']")
    assert isinstance(absent.value, ProviderError) and isinstance(absent.value, RuntimeError)
    with pytest.raises(ProviderError, match="'cudaa' is unknown") as unknown:
        P.resolve_provider("cudaa")
    assert not isinstance(unknown.value, ProviderUnavailableError)


def test_auto_is_cpu_without_gpu_eps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CPUExecutionProvider"])
    monkeypatch.setattr(P, "_ep_devices", lambda name: [])
    assert P.default_provider() == "CPUExecutionProvider"
    assert P.resolve_provider("auto") == "CPUExecutionProvider"


@pytest.mark.parametrize(("available", "expected"), [
    (["DmlExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"], "DmlExecutionProvider"),
    (["CUDAExecutionProvider", "CPUExecutionProvider"], "CUDAExecutionProvider"),
], ids=["dml-first", "cuda"])
def test_default_provider_prefers_dml_then_gpu(monkeypatch: pytest.MonkeyPatch, available: list[str],
                                              expected: str) -> None:
    monkeypatch.setattr(ort, "get_available_providers", lambda: available)
    monkeypatch.setattr(P, "_ep_devices", lambda name: [])
    assert P.default_provider() == expected


@pytest.mark.parametrize(("options", "match"), [
    ({"performance_preference": "fast"}, r"'fast' is not valid; valid: \['default', 'high_performance', "),
    ({"device_filter": "cpu"}, r"valid: \['gpu', 'npu', 'any'\]"),
    ({"disable_metacommands": "yes"}, r"valid: \['true', 'false'\]"),
    ({"enable_dynamic_graph_fusion": "1"}, r"does not exist; valid: \['device_filter', 'device_id', "),
    ({"device_id": "1"}, r"provider option device_id=1 disagrees with the device id 0 .*valid: name the "
                         r"device by the device id alone \(--device-id 1\)"),
], ids=["preference", "filter", "metacommands", "unknown-key", "device-id-twice"])
def test_dml_option_validation(options: dict[str, str], match: str) -> None:
    with pytest.raises(P.ProviderOptionError, match=match) as info:
        P.ProviderConfig(P.DML, options=options)
    assert isinstance(info.value, ValueError) and isinstance(info.value, ProviderError)


def test_dml_options_normalised() -> None:
    config = P.ProviderConfig(P.DML, device_id=1, options={"disable_metacommands": True,
                                                             "performance_preference": "minimum_power"})
    assert config.provider_options() == {"device_id": 1, "disable_metacommands": "true",
                                         "performance_preference": "minimum_power"}
    with pytest.raises(P.ProviderOptionError, match="device_id"):
        P.ProviderConfig(P.DML, device_id=-1)


class _FakeSession:
    calls: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, data: bytes, sess_options: Any = None, providers: Any = None) -> None:
        _FakeSession.calls.append({"data": data, "so": sess_options, "providers": providers})


def test_dml_session_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    model = build_model([Case("Transpose", "float32", (2, 3))])  # probes the runtime before the mock
    _FakeSession.calls.clear()
    monkeypatch.setattr(ort, "InferenceSession", _FakeSession)
    config = P.ProviderConfig(P.DML, device_id=0, options={"performance_preference": "high_performance"})
    P.make_session(model, config)
    call = _FakeSession.calls[-1]
    assert call["providers"] == [("DmlExecutionProvider",
                                  {"device_id": 0, "performance_preference": "high_performance"})]
    so = call["so"]
    assert so.get_session_config_entry("ep.dml.disable_graph_fusion") == "1"
    assert so.get_session_config_entry("session.disable_cpu_ep_fallback") == "1"
    assert so.enable_mem_pattern is False
    assert so.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
    assert so.graph_optimization_level == ort.GraphOptimizationLevel.ORT_DISABLE_ALL


def test_optimize_turns_optimizations_on(monkeypatch: pytest.MonkeyPatch) -> None:
    model = build_model([Case("Transpose", "float32", (2, 3))])
    _FakeSession.calls.clear()
    monkeypatch.setattr(ort, "InferenceSession", _FakeSession)
    P.make_session(model, P.ProviderConfig(P.CUDA, optimize=True))
    call = _FakeSession.calls[-1]
    assert call["providers"] == [("CUDAExecutionProvider", {"device_id": 0})]
    assert call["so"].graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert call["so"].get_session_config_entry("session.disable_cpu_ep_fallback") == "1"


def test_cpu_session_runs_and_records_placement() -> None:
    session = P.make_session(build_model([Case("Transpose", "float32", (2, 3), perm=(1, 0))]),
                             P.ProviderConfig(P.CPU))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = session.run(None, {"x0": x})
    assert np.array_equal(y, x.T)
    placement = P.node_assignment(session)
    if hasattr(ort.InferenceSession, "get_provider_graph_assignment_info"):
        assert placement == {"n0_Transpose": "CPUExecutionProvider"}
    level = session.get_session_options().graph_optimization_level
    assert level == ort.GraphOptimizationLevel.ORT_DISABLE_ALL


def test_session_creation_error_is_typed() -> None:
    case = Case("Pad", "int16", (2, 3), pads=(1, 1, 1, 1))  # the CPU EP has no int16 Pad kernel
    with pytest.raises(P.SessionCreationError, match="CPUExecutionProvider could not create the session"):
        P.make_session(build_model([case]), P.ProviderConfig(P.CPU))


def _webgpu_package_dir() -> Path | None:
    spec = importlib.util.find_spec("onnxruntime_ep_webgpu")
    if spec is not None and spec.origin:
        return Path(spec.origin).parent
    unpacked = Path("/tmp/wgpu/onnxruntime_ep_webgpu")
    return unpacked if (unpacked / "__init__.py").exists() else None


@pytest.mark.skipif(_webgpu_package_dir() is None or not hasattr(ort, "register_execution_provider_library"),
                    reason="onnxruntime-ep-webgpu is not installed")
def test_webgpu_plugin_registers_and_reports_missing_device() -> None:
    libs = sorted(_webgpu_package_dir().glob("*onnxruntime_providers_webgpu*"))  # type: ignore[union-attr]
    assert libs, "the package holds its shared library"
    P.register_plugin_ep("webgpu", str(libs[0]))
    P.register_plugin_ep("webgpu", str(libs[0]))  # a second registration is a no-op
    devices = P._ep_devices(P.WEBGPU)
    info = {p.name: p for p in P.list_providers()}[P.WEBGPU]
    assert info.available == bool(devices)
    if not devices:
        with pytest.raises(ProviderError, match="WebGpuExecutionProvider' is not available"):
            P.resolve_provider("webgpu")
        with pytest.raises(ProviderError, match="has 0 device"):
            P.make_session(build_model([Case("Transpose", "float32", (2,))]), P.ProviderConfig(P.WEBGPU))


def test_profile_placement_parser(tmp_path: Path) -> None:
    import json

    events = [{"cat": "Node", "name": "n0_Transpose_kernel_time",
               "args": {"provider": "DmlExecutionProvider"}},
              {"cat": "Session", "name": "model_run", "args": {}}]
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(events))
    assert P.node_assignment_from_profile(path) == {"n0_Transpose": "DmlExecutionProvider"}


def test_device_without_vendor_name_is_named_by_pci_vendor_id() -> None:
    from types import SimpleNamespace

    from ort_layouts.engine.providers import _device_info

    hw = SimpleNamespace(vendor="", vendor_id=0x10DE, device_id=0x2335, metadata={},
                         type=SimpleNamespace(name="GPU"))
    info = _device_info(SimpleNamespace(device=hw, ep_name="WebGpuExecutionProvider"))
    assert (info.vendor, info.device, info.type) == ("NVIDIA", "10de:2335", "GPU")
    assert str(info) == "GPU NVIDIA 10de:2335"


def test_a_plugin_that_fails_to_register_says_why_when_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed plugin EP whose library does not register (an incompatible onnxruntime, say)
    is not available, and asking for it gives the registration's own error, not a bare 'no'."""
    import sys
    from types import SimpleNamespace

    monkeypatch.setitem(sys.modules, "fake_webgpu_plugin",
                        SimpleNamespace(get_library_path=lambda: "/opt/fake/libplugin.so"))
    monkeypatch.setattr(P, "PLUGIN_EPS", {"fake": ("fake_webgpu_plugin", P.WEBGPU)})
    monkeypatch.setattr(P, "_registered", {})
    monkeypatch.setattr(P, "_plugin_errors", {})

    def refuse(name: str, path: str) -> None:
        raise P.ProviderError(f"registering plugin EP {name!r} from {path} failed: "
                              "needs onnxruntime >= 1.24.4")

    monkeypatch.setattr(P, "register_plugin_ep", refuse)
    with pytest.raises(P.ProviderError) as caught:
        P.resolve_provider("webgpu")
    message = str(caught.value)
    assert "did not register" in message and "/opt/fake/libplugin.so" in message
    assert "needs onnxruntime >= 1.24.4" in message and "available:" in message


@pytest.mark.skipif(sys.platform == "win32", reason="DirectML through the worker is for Linux")
def test_a_bad_dml_variable_is_named_instead_of_asking_to_run_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORT_LAYOUTS_DML_DIRECTML_VERSION", "1.99")
    with pytest.raises(ProviderError, match=r"DirectML '1\.99' is not a known release; choices: 1\.9\.1.*"
                                            r"\(from .*ORT_LAYOUTS_DML_DIRECTML_VERSION='1\.99'\)") as caught:
        P.resolve_provider("dml")
    # a setting's bad value, not an absence: the pytest plugin fails on it instead of skipping
    assert not isinstance(caught.value, ProviderUnavailableError)


@pytest.mark.skipif(sys.platform == "win32", reason="DirectML through the worker is for Linux")
def test_a_dml_stack_the_environment_chose_that_cannot_run_is_not_passed_over_for_another(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With ORT_LAYOUTS_DML_VK_ICD naming a file that is not there, validate's default used to be
    the CPU EP, and a run meant for DirectML passed on the CPU."""
    monkeypatch.setenv("ORT_LAYOUTS_DML_VK_ICD", str(tmp_path / "absent_icd.json"))
    with pytest.raises(ProviderError, match=r"the DirectML stack chosen by the environment cannot run: .*"
                                            r"absent_icd\.json"):
        P.default_provider()
    monkeypatch.delenv("ORT_LAYOUTS_DML_VK_ICD")
    # without the variable: the best EP here, whichever it is
    assert P.default_provider() in [p.name for p in P.list_providers() if p.available]


_BAD_TIMEOUT = (r"ORT_LAYOUTS_DML_TIMEOUT_S='5 minutes' is not valid; valid: a number of seconds > 0 "
                r"\(unset: 300\)")


@pytest.mark.skipif(sys.platform == "win32", reason="DirectML through the worker is for Linux")
@pytest.mark.parametrize("name", ["dml", "auto"])
def test_a_bad_dml_hang_timeout_is_refused_as_input_when_directml_is_chosen(
        monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Where the DirectML stack is set up (stood in for), choosing DirectML, by name or as the
    default, refuses a bad timeout, named, before any worker starts: a bad value is the user's
    input, not a stack that cannot run (DirectML stays available)."""
    from ort_layouts.engine.dml import client

    monkeypatch.setattr(P, "_dml_stack_problem", lambda: "")
    monkeypatch.setattr(client, "DmlWorker", None)  # any start of a worker fails otherwise
    monkeypatch.setenv("ORT_LAYOUTS_DML_TIMEOUT_S", "5 minutes")
    assert P.DML in [p.name for p in P.list_providers() if p.available]
    with pytest.raises(P.ProviderOptionError, match=_BAD_TIMEOUT) as caught:
        P.resolve_provider(name)
    assert isinstance(caught.value, ValueError)
    with pytest.raises(P.ProviderOptionError, match=_BAD_TIMEOUT):
        P.default_provider()


@pytest.mark.skipif(sys.platform == "win32", reason="DirectML through the worker is for Linux")
def test_a_bad_dml_hang_timeout_does_not_stop_a_run_on_another_provider(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The variable is DirectML's alone: the CPU EP, named, never reads it."""
    monkeypatch.setattr(P, "_dml_stack_problem", lambda: "")
    monkeypatch.setenv("ORT_LAYOUTS_DML_TIMEOUT_S", "5 minutes")
    assert P.resolve_provider("cpu") == P.CPU


@pytest.mark.skipif(sys.platform == "win32", reason="DirectML through the worker is for Linux")
@pytest.mark.parametrize(("provider", "status"), [("dml", 2), ("cpu", 0)])
def test_validate_refuses_a_bad_dml_hang_timeout_in_one_line_before_any_work_only_for_directml(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        provider: str, status: int) -> None:
    from ort_layouts.engine.dml import client
    from ort_layouts.frontends.cli import main

    monkeypatch.setattr(P, "_dml_stack_problem", lambda: "")
    monkeypatch.setattr(client, "DmlWorker", None)
    monkeypatch.setenv("ORT_LAYOUTS_DML_TIMEOUT_S", "5 minutes")
    report = tmp_path / "report"
    argv = ["validate", "--provider", provider, "--ops", "Transpose", "--dtypes", "float32", "--ranks", "2",
            "--limit", "1", "--progress", "none", "--report", str(report)]
    assert main(argv) == status
    err = capsys.readouterr().err
    if provider == "dml":
        assert len(err.strip().splitlines()) == 1 and re.search(_BAD_TIMEOUT, err)
        assert not report.exists()
    else:
        assert "ORT_LAYOUTS_DML_TIMEOUT_S" not in err and (report / "results.jsonl").is_file()


@pytest.mark.skipif(sys.platform == "win32", reason="DirectML through the worker is for Linux")
@pytest.mark.parametrize("value", ["30", "  ", "5 minutes"])
def test_a_dml_hang_timeout_does_not_choose_directml_where_it_is_not_set_up(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str) -> None:
    """The timeout says how DirectML runs, not that it must: with no stack set up (an empty
    home), the default is the best other EP, as without the variable."""
    monkeypatch.setenv("ORT_LAYOUTS_DML_HOME", str(tmp_path))
    monkeypatch.delenv("ORT_LAYOUTS_DML_TIMEOUT_S", raising=False)
    without = P.default_provider()
    monkeypatch.setenv("ORT_LAYOUTS_DML_TIMEOUT_S", value)
    assert P.default_provider() == P.resolve_provider("auto") == without != P.DML


def test_runtime_version_through_the_worker_is_the_pinned_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    # the worker runs onnxruntime.dll of onnxruntime-directml 1.24.4 (the wheel `setup dml` pins),
    # whatever onnxruntime this process has, and says which once started; the in-process
    # providers run this process's
    class Worker:
        ort_version = ""

    monkeypatch.setattr(P, "dml_through_worker", lambda: True)
    monkeypatch.setattr(P, "dml_worker", lambda: Worker)
    assert P.runtime_version(P.DML) == "1.24.4"
    Worker.ort_version = "1.23.0"  # another onnxruntime.dll in the stack's folder
    assert P.runtime_version(P.DML) == "1.23.0"
    assert P.runtime_version(P.CPU) == ort.__version__
    monkeypatch.setattr(P, "dml_through_worker", lambda: False)
    assert P.runtime_version(P.DML) == ort.__version__


@pytest.mark.skipif(sys.platform == "win32", reason="DirectML through the worker is for Linux")
def test_a_known_release_whose_stack_is_not_set_up_is_unavailable(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    # a valid choice of release and an empty home: nothing is wrong with the setting, DirectML is
    # just not here (the pytest plugin skips), and the message names what is missing
    monkeypatch.setenv("ORT_LAYOUTS_DML_HOME", str(tmp_path))
    monkeypatch.setenv("ORT_LAYOUTS_DML_DIRECTML_VERSION", "1.15.4")
    with pytest.raises(ProviderUnavailableError, match=r"'DmlExecutionProvider' is not available \(.*"
                                                       r"setup dml"):
        P.resolve_provider("dml")
