"""The checks a validation makes before it runs: the provider (one that has no kernels is
refused), its device index, its options; and the meta that names a model by its content."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from ort_layouts._errors import ProviderError
from ort_layouts.engine import providers
from ort_layouts.engine.session import (
    NOT_VALIDATABLE,
    check_device_id,
    check_provider_options,
    file_sha256,
    resolve_validation_provider,
    validation_meta,
)

AZURE = "AzureExecutionProvider"


def _azure_listed() -> bool:
    return any(i.name == AZURE and i.available for i in providers.list_providers())


def test_providers_without_kernels_are_refused_by_alias_and_name() -> None:
    if not _azure_listed():
        pytest.skip("this onnxruntime lists no AzureExecutionProvider")
    for name in ("azure", "Azure", AZURE):
        with pytest.raises(ProviderError,
                           match=f"'{AZURE}' cannot be validated: .*remote endpoint.*valid here"):
            resolve_validation_provider(name)
    assert AZURE in NOT_VALIDATABLE


@pytest.mark.parametrize("name", ["cpu", "CPU", "CPUExecutionProvider"])
def test_cpu_resolves(name: str) -> None:
    assert resolve_validation_provider(name) == providers.CPU


def test_unknown_provider_lists_the_valid_ones() -> None:
    with pytest.raises(ProviderError, match="'nonsense' is unknown; valid:"):
        resolve_validation_provider("nonsense")


def test_device_id_beyond_the_listed_devices(two_cpu_devices: None) -> None:
    check_device_id(providers.CPU, 1)
    with pytest.raises(ProviderError) as info:
        check_device_id(providers.CPU, 2)
    assert str(info.value) == (f"device id 2 is out of range: {providers.CPU} lists 2 device(s) (0: CPU "
                               "Example cpu-0; 1: CPU Example cpu-1); valid: 0..1")
    with pytest.raises(ProviderError, match="-1"):
        check_device_id(providers.CPU, -1)


def test_a_provider_that_lists_no_device_has_its_device_id_checked_by_its_runtime(
        monkeypatch: pytest.MonkeyPatch) -> None:
    listed = [providers.ProviderInfo(providers.CPU, "cpu", True, ())]
    monkeypatch.setattr(providers, "list_providers", lambda: listed)
    check_device_id(providers.CPU, 7)


def test_a_device_id_is_checked_as_the_provider_config_checks_it() -> None:
    check_device_id(providers.CPU, np.int64(0))  # a numpy integer, as ProviderConfig takes it
    for bad in (True, "0", 0.0, None):
        with pytest.raises(providers.ProviderOptionError, match="valid: a non-negative int"):
            check_device_id(providers.CPU, bad)
        with pytest.raises(providers.ProviderOptionError, match="valid: a non-negative int"):
            providers.ProviderConfig(providers.CPU, device_id=bad)


def test_provider_options() -> None:
    assert check_provider_options(providers.CPU, 0, []) == {}
    with pytest.raises(ProviderError, match="'intra_op_num_threads': CPUExecutionProvider takes no provider"):
        check_provider_options(providers.CPU, 0, [("intra_op_num_threads", "2")])
    with pytest.raises(ProviderError, match="'a' is given twice"):
        check_provider_options(providers.WEBGPU, 0, [("a", "1"), ("a", "2")])
    # DirectML's options are checked against its list, whether or not DirectML is here
    assert check_provider_options(providers.DML, 0, [("device_filter", "gpu")]) == {"device_filter": "gpu"}
    with pytest.raises(ProviderError, match="does not exist"):
        check_provider_options(providers.DML, 0, [("bogus", "1")])
    with pytest.raises(ProviderError, match="not valid"):
        check_provider_options(providers.DML, 0, [("device_filter", "tpu")])
    # other providers' options go to ONNX Runtime as given
    assert check_provider_options(providers.WEBGPU, 0, [("x", "y")]) == {"x": "y"}


def test_meta_names_the_model_by_content(tmp_path: Path) -> None:
    a, b = tmp_path / "a.onnx", tmp_path / "sub" / "a.onnx"
    b.parent.mkdir()
    a.write_bytes(b"\x08\x09one model")
    b.write_bytes(b"\x08\x09another model")
    assert file_sha256(a) == hashlib.sha256(b"\x08\x09one model").hexdigest()
    meta_a = validation_meta(provider=providers.CPU, model=str(a))
    meta_b = validation_meta(provider=providers.CPU, model=str(b))
    meta_a2 = validation_meta(provider=providers.CPU, model=str(tmp_path / "sub" / ".." / "a.onnx"))
    assert meta_a["selection"]["model_sha256"] == file_sha256(a) != meta_b["selection"]["model_sha256"]
    assert meta_a["selection"] == meta_a2["selection"]  # the same file by another path
    assert meta_a["selection"]["suite"] == "model" and meta_a["model"]["sha256"] == file_sha256(a)
    assert str(a) not in str(meta_a["selection"])  # the path is no part of the selection
    suite = validation_meta(provider=providers.CPU)
    assert suite["selection"]["suite"] == "standard" and suite["selection"]["model_sha256"] == ""


def test_a_session_whose_final_summaries_fail_still_lets_its_report_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk as the summaries are written: the error reaches the caller, and the writer
    is closed anyway (results.jsonl synced and closed, the directory unlocked for a resume)."""
    from ort_layouts.engine.session import ValidationSession
    from ort_layouts.operators.case import Case
    from ort_layouts.reports import writer as writer_module
    from ort_layouts.reports.writer import ReportWriter

    cases = [Case("Identity", "float32", (n,)) for n in (2, 3, 4)]
    meta = {"selection": {"provider": "cpu"}}
    writer = ReportWriter(tmp_path / "r", meta=meta, planned=[c.id for c in cases])

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    def on_result(result: object) -> None:
        monkeypatch.setattr(writer_module, "atomic_write_texts", full_disk)

    with pytest.raises(OSError, match="No space left on device"):
        ValidationSession(cases, provider="cpu", jobs=1, writer=writer).run(on_result)
    monkeypatch.undo()
    assert writer._file.closed
    resumed = ReportWriter(tmp_path / "r", meta=meta, planned=[c.id for c in cases], resume=True)
    try:
        assert resumed.done_ids == {c.id for c in cases}  # every result was kept
    finally:
        resumed.close()
