"""``setup dml``'s own choices, with its steps stood in for (no download, no Wine)."""

from __future__ import annotations

import hashlib
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from ort_layouts.engine.dml import install
from ort_layouts.engine.dml import stack as stack_module
from ort_layouts.engine.dml.stack import DmlStack, dml_home


def _steps_recorded(monkeypatch: pytest.MonkeyPatch, *, usable: bool = True) -> list[tuple[str, DmlStack]]:
    """Stand in for every step of setup_dml; record which stack each step was given."""
    seen: list[tuple[str, DmlStack]] = []

    def step(name: str, result: Any = None) -> Any:
        def record(stack: DmlStack, *args: Any, **kwargs: Any) -> Any:
            seen.append((name, stack))
            return result
        return record

    for name in ("_mesa", "_dlls", "_worker", "_prefix", "_check", "setup_directml"):
        monkeypatch.setattr(install, name, step(name))
    monkeypatch.setattr(install, "_check_directml", step("_check_directml", usable))
    monkeypatch.setattr(DmlStack, "missing", lambda self: [])
    return seen


def test_setup_works_on_the_private_stack_whatever_the_run_time_variables_say(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """ORT_LAYOUTS_DML_DIRECTML_VERSION pointed the base DLLs and the worker into a release's
    folder (DirectML 1.12.0's DLL was overwritten with 1.15.4's), and ORT_LAYOUTS_DML_VK_ICD made
    the Mesa 25 check run on another driver: setup ignores both."""
    monkeypatch.setenv("ORT_LAYOUTS_DML_DIRECTML_VERSION", "1.12.0")
    monkeypatch.setenv("ORT_LAYOUTS_DML_VK_ICD", str(tmp_path / "other_icd.json"))
    seen = _steps_recorded(monkeypatch)
    stack = install.setup_dml(home=tmp_path, apt=False, log=lambda line: None)
    assert [name for name, _ in seen] == ["_mesa", "_dlls", "_worker", "_prefix", "_check"]
    for _, given in [*seen, ("returned", stack)]:
        assert given.directml_version == "" and given.vk_icd is None and given.home == tmp_path
        assert given.bin_dir == tmp_path / "bin"


def test_a_relative_home_is_set_up_where_it_names_from_the_working_directory(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Wine refuses a relative prefix, and the worker runs in the stack's own folder: a relative
    --home is the folder it names from where setup was run, made absolute before any step."""
    monkeypatch.chdir(tmp_path)
    seen = _steps_recorded(monkeypatch)
    stack = install.setup_dml(home="rel/dml", apt=False, log=lambda line: None)
    assert stack.home == tmp_path / "rel" / "dml" and (tmp_path / "rel" / "dml").is_dir()
    assert {given.home for _, given in seen} == {tmp_path / "rel" / "dml"}


@pytest.mark.parametrize("mesa", [[], 25, None, ()])
def test_a_mesa_that_names_no_stack_is_refused_before_any_step(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path, mesa: Any) -> None:
    seen = _steps_recorded(monkeypatch)
    with pytest.raises(install.DmlSetupError, match=rf"mesa {re.escape(repr(mesa))} names no Mesa stack; "
                                                    r"valid: one of \['22', '25'\], or a list of them"):
        install.setup_dml(home=tmp_path / "h", mesa=mesa, apt=False, log=lambda line: None)
    assert seen == [] and not (tmp_path / "h").exists()


def test_setup_fails_when_no_release_asked_for_passes_the_check(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    _steps_recorded(monkeypatch, usable=False)
    with pytest.raises(install.DmlSetupError, match=r"none of the DirectML versions asked for \(1.9.1\)"):
        install.setup_dml(home=tmp_path, apt=False, log=lambda line: None, directml_versions=["1.9.1"])


# ---- what setup downloads is pinned by sha256 ---------------------------------------------------
def _hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fake_pip(monkeypatch: pytest.MonkeyPatch, members: dict[str, bytes]) -> list[list[str]]:
    """Stand in for ``pip download``: it leaves a wheel holding ``members`` in its ``-d`` folder.
    Returns the commands run."""
    commands: list[list[str]] = []

    def run(cmd: list[str], what: str, **kwargs: Any) -> Any:
        commands.append(list(cmd))
        folder = Path(cmd[cmd.index("-d") + 1])
        version = cmd[-1].split("==")[1]
        with zipfile.ZipFile(folder / f"onnxruntime_directml-{version}-cp310-cp310-win_amd64.whl", "w") as z:
            for name, data in members.items():
                z.writestr(name, data)
        return None

    monkeypatch.setattr(install, "_run", run)
    return commands


def _wheel_bytes(members: dict[str, bytes], tmp_path: Path) -> bytes:
    """The bytes _fake_pip's wheel of ``members`` has (zip output is the same for the same input)."""
    path = tmp_path / "probe" / "w.whl"
    path.parent.mkdir(exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path.read_bytes()


def _refused_1_12_0(home: Path, refused: str) -> None:
    """Setting up DirectML 1.12.0 in ``home`` fails with ``refused`` and leaves nothing."""
    with pytest.raises(install.DmlSetupError, match=refused):
        install.setup_directml(DmlStack(home, "25", None, ""), "1.12.0")
    assert not (home / "directml" / "1.12.0" / "DirectML.dll").exists()
    assert not list(home.rglob("*.part"))


def test_every_download_and_part_has_a_pin() -> None:
    assert set(stack_module.WHEEL_SHA256) == set(stack_module.DIRECTML_WHEELS.values())
    assert set(stack_module.DIRECTML_DLL_SHA256) == set(stack_module.DIRECTML_WHEELS)
    assert set(stack_module.MESA_SHA256) == set(stack_module.MESA_VERSIONS)
    pins = [*stack_module.WHEEL_SHA256.values(), *stack_module.DIRECTML_DLL_SHA256.values(),
            stack_module.ORT_DLL_SHA256, *(h for pair in stack_module.MESA_SHA256.values() for h in pair)]
    assert all(len(p) == 64 and int(p, 16) >= 0 for p in pins)
    assert len(set(pins)) == len(pins)  # no copy-paste slip gives two parts one digest


def test_a_wheel_that_is_not_the_pinned_one_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    _fake_pip(monkeypatch, {"onnxruntime/capi/DirectML.dll": b"not the real DLL"})
    _refused_1_12_0(tmp_path, r"onnxruntime_directml-1\.15\.1-.*\.whl has sha256 [0-9a-f]{64}, "
                              r"not the pinned f9bbea90")


def test_a_refused_file_is_removed(tmp_path: Path) -> None:
    download = tmp_path / "onnxruntime_directml-1.15.1-cp310-cp310-win_amd64.whl"
    download.write_bytes(b"not the wheel")
    with pytest.raises(install.DmlSetupError, match=rf"has sha256 {_hex(b'not the wheel')}, not the pinned"):
        install._verify(download, stack_module.WHEEL_SHA256["1.15.1"], download.name)
    assert not download.exists()
    kept = tmp_path / "kept.bin"
    kept.write_bytes(b"as pinned")
    install._verify(kept, _hex(b"as pinned"), kept.name)
    assert kept.read_bytes() == b"as pinned"


def test_an_interrupted_extraction_leaves_no_part_file(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    wheel_path = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel_path, "w") as z:
        z.writestr("onnxruntime/capi/DirectML.dll", b"MZ" * 1000)

    def interrupted(src: Any, dst: Any) -> None:
        dst.write(src.read(10))
        raise KeyboardInterrupt

    monkeypatch.setattr(install.shutil, "copyfileobj", interrupted)
    target = tmp_path / "bin" / "DirectML.dll"
    target.parent.mkdir()
    with zipfile.ZipFile(wheel_path) as z, pytest.raises(KeyboardInterrupt):
        install._extract(z, "onnxruntime/capi/DirectML.dll", target, _hex(b"MZ" * 1000))
    assert list(target.parent.iterdir()) == []


def test_a_bad_hang_timeout_fails_setup_before_any_step(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    seen = _steps_recorded(monkeypatch)
    monkeypatch.setenv("ORT_LAYOUTS_DML_TIMEOUT_S", "0")
    with pytest.raises(install.DmlSetupError, match=r"ORT_LAYOUTS_DML_TIMEOUT_S='0' is not valid"):
        install.setup_dml(home=tmp_path, apt=False, log=lambda line: None)
    assert seen == []


def test_a_dll_that_is_not_the_pinned_one_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    members = {"onnxruntime/capi/DirectML.dll": b"MZ a DLL of another build"}
    _fake_pip(monkeypatch, members)
    monkeypatch.setitem(install.WHEEL_SHA256, "1.15.1", _hex(_wheel_bytes(members, tmp_path)))
    _refused_1_12_0(tmp_path, r"onnxruntime/capi/DirectML.dll of .* not the pinned cf07c897")


def test_the_pinned_dll_is_taken_and_a_damaged_one_is_taken_again(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    dll = b"MZ DirectML 1.12.0 as pinned"
    members = {"onnxruntime/capi/DirectML.dll": dll}
    commands = _fake_pip(monkeypatch, members)
    monkeypatch.setitem(install.WHEEL_SHA256, "1.15.1", _hex(_wheel_bytes(members, tmp_path)))
    monkeypatch.setitem(install.DIRECTML_DLL_SHA256, "1.12.0", _hex(dll))
    monkeypatch.setattr(install, "directml_file_version",
                        lambda path: "1.12.0" if Path(path).is_file() else "")
    stack = DmlStack(tmp_path, "25", None, "")
    lines: list[str] = []
    target = install.setup_directml(stack, "1.12.0", lines.append)
    assert target.read_bytes() == dll and len(commands) == 1
    install.setup_directml(stack, "1.12.0", lines.append)  # present: nothing downloaded
    assert len(commands) == 1 and lines[-1].startswith("DirectML 1.12.0: present")
    target.write_bytes(dll[:-1] + b"!")  # damaged on disk, same FileVersion
    install.setup_directml(stack, "1.12.0", lines.append)
    assert len(commands) == 2 and target.read_bytes() == dll
    assert any("is not the pinned" in line and "taking it again" in line for line in lines)


def test_base_dlls_are_checked_by_sha256_not_only_found(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    ort, dml = b"MZ onnxruntime", b"MZ DirectML base"
    members = {"onnxruntime/capi/onnxruntime.dll": ort, "onnxruntime/capi/DirectML.dll": dml}
    commands = _fake_pip(monkeypatch, members)
    wheel_sha256 = _hex(_wheel_bytes(members, tmp_path))
    monkeypatch.setitem(install.WHEEL_SHA256, install.ORT_DIRECTML_VERSION, wheel_sha256)
    monkeypatch.setattr(install, "ORT_DLL_SHA256", _hex(ort))
    monkeypatch.setitem(install.DIRECTML_DLL_SHA256, "1.15.4", _hex(dml))
    stack = DmlStack(tmp_path, "25", None, "")
    stack.bin_dir.mkdir(parents=True)
    stack.ort_dll.write_bytes(ort)
    stack.directml_dll.write_bytes(b"MZ something else")  # there, but not the pinned file
    install._dlls(stack, lambda line: None, force=False)
    assert len(commands) == 1 and "--python-version" in commands[0] and commands[0][-1].endswith("==1.24.4")
    assert stack.ort_dll.read_bytes() == ort and stack.directml_dll.read_bytes() == dml
    install._dlls(stack, lambda line: None, force=False)  # both pinned now: nothing downloaded
    assert len(commands) == 1


def test_a_mesa_package_that_is_not_the_pinned_one_is_never_unpacked(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    commands: list[list[str]] = []

    def run(cmd: list[str], what: str, **kwargs: Any) -> Any:
        commands.append(list(cmd))
        if "download" in cmd:
            deb = Path(kwargs["cwd"]) / "mesa-vulkan-drivers_25.0.7-2~bpo12+1_amd64.deb"
            deb.write_bytes(b"!<arch> other")
        return None

    monkeypatch.setattr(install, "_run", run)
    (tmp_path / "apt" / "lists").mkdir(parents=True)
    (tmp_path / "apt" / "lists" / "x_Packages.lz4").write_bytes(b"")
    stack = DmlStack(tmp_path, "25", None, "")
    refused = (r"mesa-vulkan-drivers_25.0.7-2~bpo12\+1_amd64.deb has sha256 [0-9a-f]{64}, "
               r"not the pinned 3899f180")
    with pytest.raises(install.DmlSetupError, match=refused):
        install._mesa(stack, "25", lambda line: None)
    assert not any(cmd[0] == "dpkg-deb" for cmd in commands)
    assert not stack.mesa_icd("25").exists()


@pytest.mark.skipif(not (dml_home() / "bin" / "DirectML.dll").is_file(),
                    reason="the DirectML stack is not set up here")
def test_the_stack_set_up_here_holds_the_pinned_files() -> None:
    home = dml_home()
    assert install._sha256(home / "bin" / "DirectML.dll") == stack_module.DIRECTML_DLL_SHA256["1.15.4"]
    assert install._sha256(home / "bin" / "onnxruntime.dll") == stack_module.ORT_DLL_SHA256
    for version in stack_module.available_directml_versions(home):
        assert install._sha256(home / "directml" / version / "DirectML.dll") == \
            stack_module.DIRECTML_DLL_SHA256[version], version


@pytest.mark.parametrize("pinned_ok", [True, False])
def test_a_copy_is_installed_only_with_its_pinned_digest_and_leaves_no_part(tmp_path: Path,
                                                                             pinned_ok: bool) -> None:
    """A release's DirectML.dll copied from the base stack's goes through the same .part file
    and pin as one taken from a wheel: another digest leaves the target as it was."""
    source, target = tmp_path / "base.dll", tmp_path / "DirectML.dll"
    source.write_bytes(b"MZ new")
    target.write_bytes(b"MZ old")
    digest = hashlib.sha256(b"MZ new" if pinned_ok else b"other").hexdigest()
    copy = lambda part: part.write_bytes(source.read_bytes())  # noqa: E731
    if pinned_ok:
        install._install_verified(target, digest, "base.dll copied", copy)
        assert target.read_bytes() == b"MZ new"
    else:
        with pytest.raises(install.DmlSetupError, match=r"base\.dll copied"):
            install._install_verified(target, digest, "base.dll copied", copy)
        assert target.read_bytes() == b"MZ old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["DirectML.dll", "base.dll"]
