"""bench checks every argument before any section runs: a bad value whatever the sections, an
argument that none of the sections asked for takes, a device id against the gpu section's EP;
and --gpu-on-cpu runs the gpu section on the CPU EP where DirectML runs only through its worker."""

from __future__ import annotations

import io
from typing import Any

import pytest

from ort_layouts._errors import ProviderError
from ort_layouts.engine import providers
from ort_layouts.frontends import bench
from ort_layouts.frontends.cli import main

Cap = pytest.CaptureFixture[str]
ORACLE = ["bench", "--sections", "oracle", "--oracle-mb", "1", "--repeats", "1"]
TINY_GPU = ["--gpu-mb", "0.25", "--gpu-iterations", "2", "--repeats", "1"]


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The run_benchmarks calls of the commands (none runs any section)."""
    calls: list[dict[str, Any]] = []

    def record(sections: Any, **kwargs: Any) -> list[Any]:
        calls.append({"sections": tuple(sections), **kwargs})
        return []

    monkeypatch.setattr(bench, "run_benchmarks", record)
    return calls


def _refused(argv: list[str], capsys: Cap) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ort-layouts: error: argument "), err
    return lines[0]


@pytest.mark.parametrize("extra, expected", [
    (["--provider", "nope"], "argument --provider: execution provider 'nope' is unknown; valid: ['auto'"),
    (["--device-id", "7"], "argument --device-id: only the gpu section takes it, and --sections oracle "
                           "does not run it; valid: add gpu to --sections, or leave --device-id out"),
    (["--provider", "cpu"], "argument --provider: only the suite, floor and memory sections take it, and "
                            "--sections oracle runs none of them; valid: add suite, floor or memory"),
    (["--gpu-on-cpu"], "argument --gpu-on-cpu: only the gpu section takes it"),
    (["--gpu-provider", "auto"], "argument --gpu-provider: only the gpu section takes it"),
    (["--jobs", "2"], "argument --jobs: only the floor section takes it"),
    (["--memory-mb", "1"], "argument --memory-mb: only the memory section takes it"),
    (["--suite-ranks", "1"], "argument --suite-ranks: only the suite, floor, diagnosis and memory sections"),
    (["--suite-sample", "5"], "argument --suite-sample: only the suite and dml sections take it"),
], ids=["provider-unknown", "device-id", "provider", "gpu-on-cpu", "gpu-provider", "jobs", "memory-mb",
        "suite-ranks", "suite-sample"])
def test_an_argument_no_section_takes_or_a_bad_value_is_refused_before_any_work(
        extra: list[str], expected: str, capsys: Cap, ran: list[dict[str, Any]]) -> None:
    assert expected in _refused([*ORACLE, *extra], capsys)
    assert ran == []


def test_the_arguments_the_sections_take_run_with_the_defaults_of_the_others(
        capsys: Cap, ran: list[dict[str, Any]]) -> None:
    assert bench.main(ORACLE[1:]) == 0  # scripts/bench.py: checked once, as the subcommand is
    assert main(ORACLE) == 0
    assert main(["bench", "--sections", "suite,gpu", "--provider", "cpu", "--device-id", "0",
                 "--suite-sample", "5", "--gpu-on-cpu"]) == 0
    assert [c["sections"] for c in ran] == [("oracle",), ("oracle",), ("suite", "gpu")]
    assert ran[0] == ran[1]
    oracle, suite_gpu = ran[1:]
    assert (oracle["oracle_bytes"], oracle["repeats"], oracle["provider"], oracle["device_id"]) == (
        bench.MIB, 1, "cpu", 0)
    assert (oracle["gpu_provider"], oracle["gpu_bytes"], oracle["memory_bytes"], oracle["jobs"]) == (
        "auto", 64 * bench.MIB, 256 * bench.MIB, None)
    assert oracle["allow_cpu_gpu_section"] is False and oracle["suite_ranks"] is None
    assert (suite_gpu["suite_sample"], suite_gpu["allow_cpu_gpu_section"], suite_gpu["repeats"]) == (
        5, True, 3)


@pytest.mark.usefixtures("two_cpu_devices")
def test_the_device_id_is_checked_against_the_gpu_section_s_ep(capsys: Cap,
                                                               ran: list[dict[str, Any]]) -> None:
    line = _refused(["bench", "--sections", "gpu", "--gpu-on-cpu", "--device-id", "7"], capsys)
    assert "argument --device-id: device id 7 is out of range: CPUExecutionProvider lists 2 device(s)" in line
    assert line.endswith("valid: 0..1") and ran == []
    assert main(["bench", "--sections", "gpu", "--gpu-on-cpu", "--device-id", "1"]) == 0
    assert ran[0]["device_id"] == 1


def _directml_through_its_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """"auto" picks DirectML, which runs here only through its worker process."""
    resolve = providers.resolve_provider
    monkeypatch.setattr(providers, "resolve_provider",
                        lambda name: providers.DML if name in ("auto", "dml") else resolve(name))
    monkeypatch.setattr(providers, "dml_through_worker", lambda: True)


def test_gpu_on_cpu_runs_the_gpu_section_on_the_cpu_ep_where_directml_runs_through_its_worker(
        monkeypatch: pytest.MonkeyPatch, capsys: Cap) -> None:
    _directml_through_its_worker(monkeypatch)
    assert main(["bench", "--sections", "gpu", "--gpu-on-cpu", *TINY_GPU]) == 0
    out = capsys.readouterr().out
    assert "skipped" not in out and "gpu    transpose NCHW->NHWC on CPUExecutionProvider" in out, out
    assert "output checked bit for bit: equal" in out
    assert bench.gpu_section_provider("auto", allow_cpu=True) == providers.CPU
    assert bench.gpu_section_provider("dml", allow_cpu=True) == providers.CPU
    with pytest.raises(ProviderError, match="DirectML runs here through its worker process "
                                            r"\(run the section on the CPU EP with --gpu-on-cpu\)"):
        bench.gpu_section_provider("auto")
    text = io.StringIO()
    assert bench.run_benchmarks(("gpu",), gpu_bytes=1 << 18, gpu_iterations=2, repeats=1, out=text) == []
    assert "gpu    skipped: the gpu section needs a GPU execution provider in this process" in text.getvalue()


@pytest.mark.parametrize("flag, value", [
    ("--oracle-mb", "1e308"), ("--gpu-mb", "1e308"), ("--memory-mb", "1e308"), ("--oracle-mb", "inf")])
def test_a_size_of_no_finite_byte_count_is_refused_naming_its_argument(
        flag: str, value: str, capsys: Cap, ran: list[dict[str, Any]]) -> None:
    # 1e308 MiB is a finite float, but 1e308 * 2**20 bytes is none
    section = {"--oracle-mb": "oracle", "--gpu-mb": "gpu", "--memory-mb": "memory"}[flag]
    line = _refused(["bench", "--sections", section, flag, value, "--repeats", "1"], capsys)
    assert line.startswith(f"ort-layouts: error: argument {flag}: size '{value}' must be a finite number")
    assert ran == []


def test_every_timed_section_takes_repeats_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """--repeats N is best of N for the suite, floor and dml sections too (as --help and README
    say), as for the oracle and gpu sections."""
    got: dict[str, int] = {}

    def recorder(name: str) -> Any:
        def section(**kwargs: Any) -> list[Any]:
            got[name] = kwargs["repeats"]
            return []
        return section

    for name in ("suite", "floor", "dml", "oracle"):
        monkeypatch.setattr(bench, f"bench_{name}", recorder(name))
    bench.run_benchmarks(("suite", "floor", "dml", "oracle"), repeats=3, out=io.StringIO())
    assert got == {"suite": 3, "floor": 3, "dml": 3, "oracle": 3}


@pytest.mark.parametrize("argv, expected", [
    (["bench", "--sections", "floor", "--jobs", "1000", "--repeats", "1"],
     "argument --jobs: jobs 1000 is more worker processes than this machine runs side by side; valid: 1.."),
    (["bench", "--sections", "oracle", "--oracle-mb", "1e300", "--repeats", "1"],
     "argument --oracle-mb: 1e+300 MiB needs an input and an output of that size"),
    (["bench", "--sections", "memory", "--memory-mb", "1e9"],
     "argument --memory-mb: 1e+09 MiB needs an input and an output of that size"),
])
def test_workers_and_sizes_past_the_machine_are_refused_before_any_section(
        argv: list[str], expected: str, ran: list[dict[str, Any]], capsys: Cap) -> None:
    """They were a section "skipped" with exit status 0, or numpy's error after the section began."""
    line = _refused(argv, capsys)
    assert expected in line and "valid:" in line, line
    assert ran == []



def test_sections_given_twice_are_refused_and_a_section_named_twice_runs_once(
        capsys: Cap, ran: list[dict[str, Any]]) -> None:
    """A second --sections replaced the first (--sections memory --sections oracle ran oracle
    alone), and --sections oracle,oracle ran the oracle section twice."""
    line = _refused(["bench", "--sections", "memory", "--sections", "oracle", "--oracle-mb", "1"], capsys)
    assert line == ("ort-layouts: error: argument --sections: given twice (memory, then oracle); valid: "
                    "once, comma-separated (--sections memory,oracle) (see ort-layouts bench --help)")
    assert ran == []
    assert main(["bench", "--sections", "oracle,memory,oracle", "--oracle-mb", "1", "--memory-mb", "1"]) == 0
    assert [call["sections"] for call in ran] == [("oracle", "memory")]
