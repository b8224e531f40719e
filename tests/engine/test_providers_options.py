"""ProviderConfig's provider options and name as ONNX Runtime would see them: a value it would
take as its Python text ("None", "b'1'"), a name given twice, options for the CPU EP (whose
session is made with none) and a short provider name (which skipped the DML options' checks and
reached no EP) are refused before any session, named with what is valid."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ort_layouts.engine import providers as P
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.case import Case


@pytest.mark.parametrize(("options", "message"), [
    ({"gpu_mem_limit": None}, "provider option gpu_mem_limit=None is not valid; valid: a str, an int, "
                              "a float or a bool"),
    ({"gpu_mem_limit": b"1024"}, "provider option gpu_mem_limit=b'1024' is a bytes; valid: a str, an int"),
    ({"cudnn_conv_algo_search": ["DEFAULT"]}, "cudnn_conv_algo_search=['DEFAULT'] is a list; valid: a str"),
    ({1: "x"}, "provider option name 1 is an int; valid: a str, the option's name"),
    ({"": "x"}, "provider option name '' is blank; valid: a str"),
    ((("do_copy_in_default_stream", "1"), ("do_copy_in_default_stream", "0")),
     "provider option 'do_copy_in_default_stream' is given twice (do_copy_in_default_stream=1 and "
     "do_copy_in_default_stream=0); give each option once"),
], ids=["none", "bytes", "list", "int-name", "blank-name", "twice"])
@pytest.mark.parametrize("name", [P.CUDA, P.DML, P.WEBGPU])
def test_an_option_onnx_runtime_would_misread_is_refused(name: str, options: Any, message: str) -> None:
    with pytest.raises(P.ProviderOptionError) as caught:
        P.ProviderConfig(name, options=options)
    assert message in str(caught.value)


def test_the_cpu_ep_takes_no_options() -> None:
    with pytest.raises(P.ProviderOptionError, match=r"^provider option 'arena_extend_strategy': "
                                                     r"CPUExecutionProvider takes no provider options; "
                                                     r"valid: none$"):
        P.ProviderConfig(P.CPU, options={"arena_extend_strategy": "kSameAsRequested"})
    assert P.ProviderConfig(P.CPU, options={}).options == ()


@pytest.mark.parametrize(("name", "full"), [
    ("dml", "DmlExecutionProvider"), ("directml", "DmlExecutionProvider"), ("cpu", "CPUExecutionProvider"),
    ("CUDA", "CUDAExecutionProvider"), ("webgpu", "WebGpuExecutionProvider"),
    ("dmlexecutionprovider", "DmlExecutionProvider"), (" CPUExecutionProvider", "CPUExecutionProvider"),
])
def test_a_short_or_misspelt_name_is_refused_naming_the_full_name(name: str, full: str) -> None:
    with pytest.raises(P.ProviderOptionError) as caught:
        P.ProviderConfig(name)
    assert f"name {name!r} is not an execution provider's full name; valid: {full!r}" in str(caught.value)


def test_a_short_dml_name_no_longer_skips_the_dml_option_checks() -> None:
    # 'fast' is no performance_preference: under "dml" it went unchecked to ONNX Runtime
    with pytest.raises(P.ProviderOptionError, match="not an execution provider's full name"):
        P.ProviderConfig("dml", options={"performance_preference": "fast"})


def test_a_provider_the_project_does_not_know_keeps_its_name_and_options() -> None:
    config = P.ProviderConfig("OpenVINOExecutionProvider", options={"device_type": "CPU"})
    assert config.name == "OpenVINOExecutionProvider"
    assert config.options == (("device_type", "CPU"),)


def test_values_are_written_as_onnx_runtime_reads_them() -> None:
    config = P.ProviderConfig(P.CUDA, device_id=1, options={
        "gpu_mem_limit": np.int64(1024), "enable_cuda_graph": np.True_, "do_copy_in_default_stream": False,
        "tunable_op_max_tuning_duration_ms": 10, "cudnn_conv_algo_search": "HEURISTIC", "ratio": 0.5})
    assert config.provider_options() == {
        "cudnn_conv_algo_search": "HEURISTIC", "do_copy_in_default_stream": "false",
        "enable_cuda_graph": "true", "gpu_mem_limit": "1024", "ratio": "0.5",
        "tunable_op_max_tuning_duration_ms": "10", "device_id": 1}


def test_a_dml_device_id_option_that_int_cannot_read_is_a_typed_error() -> None:
    # a superscript two: str.isdigit says yes, int() raised a bare ValueError
    with pytest.raises(P.ProviderOptionError) as caught:
        P.ProviderConfig(P.DML, options={"device_id": "²"})
    assert "DML option device_id='²' is not valid; valid: an integer >= 0" in str(caught.value)


@pytest.mark.usefixtures("no_work")
def test_run_cases_refuses_a_bad_option_value_before_any_work() -> None:
    with pytest.raises(P.ProviderOptionError, match=r"CPUExecutionProvider takes no provider options"):
        run_cases([Case("Transpose", "float32", (2, 3), perm=(1, 0))], provider="cpu",
                  provider_options={"intra_op_num_threads": 2})
