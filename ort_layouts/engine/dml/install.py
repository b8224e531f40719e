"""Set up the DirectML-on-Linux stack (Debian bookworm, x86_64): :func:`setup_dml`.

Idempotent: each step checks what is there and does only what is missing.

1. System packages (root, apt): wine, wine64, xvfb, xauth, libvulkan1, gcc-mingw-w64-x86-64,
   mingw-w64-x86-64-dev.
2. Mesa lavapipe, unpacked privately (never installed): ``apt-get download`` of the pinned
   ``mesa-vulkan-drivers`` through a private apt configuration (its own source list, lists and
   cache folders under ``home/apt``: the system's apt configuration is not touched), then
   ``dpkg-deb -x`` into ``home/mesa<N>/`` and an ICD json that points at the unpacked library.
   Mesa 25 (bookworm-backports) is the working stack; Mesa 22 (bookworm's own) reproduces the
   "silent zeros" stack bug on demand.
3. ``onnxruntime.dll`` and ``DirectML.dll`` from the pinned ``onnxruntime-directml`` win_amd64
   wheel (``pip download``), into ``home/bin/``.
4. The worker program, compiled from ``worker.c`` with ``x86_64-w64-mingw32-gcc``.
5. The Wine prefix (``wineboot -i``), with Wine's crash dialog turned off.
6. A check: one Transpose through the worker, compared bit for bit.
7. Older DirectML releases, on request (``--dml-version 1.9.1 1.12.0``): the
   ``onnxruntime-directml`` wheel that ships each (:data:`~ort_layouts.engine.dml.stack.DIRECTML_WHEELS`,
   below) is downloaded, only its ``onnxruntime/capi/DirectML.dll`` is kept, in
   ``home/directml/<version>/``, and its ``FileVersion`` must be that version. The check then runs
   the Transpose under each release with the newest ``onnxruntime.dll``; a release that ONNX
   Runtime cannot drive (a missing entry point such as ``DMLCreateDevice1``, or a feature level
   the EP asks for) is reported in one line; its DLL stays set up, and
   ``validate --dml-version V1,V2,...`` runs the same check (:func:`directml_release_problem`)
   before each release and skips one that fails it with one line saying why. Setup fails when
   none of the releases asked for passes the check.

   ========  ==============================  ========
   DirectML  onnxruntime-directml wheel      Python
   ========  ==============================  ========
   1.9.1     1.13.1                          cp310
   1.10.1    1.14.1                          cp310
   1.12.0    1.15.1                          cp310
   1.12.1    1.16.3                          cp310
   1.13.1    1.17.3                          cp310
   1.14.1    1.18.1                          cp310
   1.15.1    1.19.2                          cp310
   1.15.2    1.20.1                          cp310
   1.15.4    1.24.4 (``home/bin``'s)         cp312
   ========  ==============================  ========

Every download and every part taken from one is pinned by sha256
(:data:`~ort_layouts.engine.dml.stack.WHEEL_SHA256`, ``DIRECTML_DLL_SHA256``, ``ORT_DLL_SHA256``,
``MESA_SHA256``): another digest is refused and nothing of it kept, and a part found with another
digest is taken again. Everything is downloaded here; a run downloads nothing. Run it as
``ort-layouts setup dml [--mesa 22] [--home DIR] [--dml-version V ...]``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ort_layouts._errors import ProviderError
from ort_layouts.engine.dml.stack import (
    DIRECTML_DLL_SHA256,
    DIRECTML_WHEELS,
    MESA_SHA256,
    MESA_VERSIONS,
    ORT_DIRECTML_VERSION,
    ORT_DLL_SHA256,
    WHEEL_SHA256,
    DmlStack,
    available_directml_versions,
    check_directml_version,
    directml_file_version,
    dml_home,
    worker_source_digest,
    worker_timeout_s,
)

if TYPE_CHECKING:
    from ort_layouts.engine.dml.client import DmlWorker

__all__ = ["APT_PACKAGES", "DmlSetupError", "compile_worker", "directml_release_problem", "setup_directml",
           "setup_dml", "wheel_python"]

APT_PACKAGES = ("wine", "wine64", "xvfb", "xauth", "libvulkan1", "gcc-mingw-w64-x86-64",
                "mingw-w64-x86-64-dev")
DEBIAN_MIRROR = "http://deb.debian.org/debian"
DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
MINGW_GCC = "x86_64-w64-mingw32-gcc"
_ORT_DLL_MEMBER = "onnxruntime/capi/onnxruntime.dll"
_DIRECTML_DLL_MEMBER = "onnxruntime/capi/DirectML.dll"
_LVP_LIBRARY = "usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"  # in a Mesa folder
# the DirectML release of ORT_DIRECTML_VERSION's wheel (home/bin's DirectML.dll)
_BASE_DIRECTML = next(v for v, wheel in DIRECTML_WHEELS.items() if wheel == ORT_DIRECTML_VERSION)


class DmlSetupError(ProviderError):
    """A setup step failed; the message says which, in one line."""


Log = Callable[[str], None]


def _no_log(_: str) -> None:
    pass


def _run(cmd: Sequence[str], what: str, *, env: dict[str, str] | None = None, cwd: Path | None = None,
         timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(list(cmd), capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=timeout, check=False)
    except FileNotFoundError as e:
        raise DmlSetupError(f"{what}: {cmd[0]} is not installed") from e
    except subprocess.TimeoutExpired as e:
        raise DmlSetupError(f"{what}: `{' '.join(cmd)}` did not finish in {timeout:.0f} s") from e
    if done.returncode != 0:
        lines = [ln for ln in (done.stderr + "\n" + done.stdout).splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith(("E:", "ERROR", "error"))] or lines
        last = errors[-1].strip() if errors else f"exit status {done.returncode}"
        raise DmlSetupError(f"{what} failed: {last}")
    return done


@contextlib.contextmanager
def _step(log: Log, what: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    log(f"{what} ({time.perf_counter() - start:.1f} s)")


def _sha256(path: Path) -> str:
    """The sha256 of a file's bytes, in hex ("" when it cannot be read)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return ""
    return digest.hexdigest()


def _verify(path: Path, pinned: str, what: str) -> None:
    """Raises DmlSetupError: ``path``'s sha256 is not ``pinned`` (the file is removed: it is
    never taken)."""
    found = _sha256(path)
    if found != pinned:
        path.unlink(missing_ok=True)
        raise DmlSetupError(f"{what} has sha256 {found or '(unreadable)'}, not the pinned {pinned}: "
                            "refused (a changed or damaged download)")


def _pinned_present(path: Path, pinned: str, log: Log) -> bool:
    """Whether ``path`` is there with its pinned sha256; one that is there with another is said
    and taken again."""
    if not path.is_file():
        return False
    found = _sha256(path)
    if found == pinned:
        return True
    log(f"{path}: sha256 {found or '(unreadable)'} is not the pinned {pinned}: taking it again")
    return False


def wheel_python(version: str) -> str:
    """The Python whose win_amd64 wheel of onnxruntime-directml ``version`` setup takes (and
    :data:`~ort_layouts.engine.dml.stack.WHEEL_SHA256` pins): 3.12 for
    :data:`~ort_layouts.engine.dml.stack.ORT_DIRECTML_VERSION`, 3.10 for the older ones."""
    return "3.12" if version == ORT_DIRECTML_VERSION else "3.10"


def _wheel(version: str, folder: str) -> zipfile.ZipFile:
    """The onnxruntime-directml ``version`` win_amd64 wheel for :func:`wheel_python`, downloaded
    into ``folder`` (``pip download``) and checked against its pinned sha256, open."""
    python = wheel_python(version)
    spec = f"onnxruntime-directml=={version}"
    _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
          "--platform", "win_amd64", "--python-version", python, "--implementation", "cp",
          "--disable-pip-version-check", "-q", "-d", folder, spec], f"pip download {spec}")
    wheels = list(Path(folder).glob("onnxruntime_directml-*.whl"))
    if len(wheels) != 1:
        raise DmlSetupError(f"pip download {spec} left {len(wheels)} wheels")
    _verify(wheels[0], WHEEL_SHA256[version], wheels[0].name)
    return zipfile.ZipFile(wheels[0])


def _install_verified(target: Path, pinned: str, what: str, write: Callable[[Path], object]) -> None:
    """``write(part)`` into a ``.part`` file beside ``target``, which replaces ``target`` only
    once its sha256 is the pinned one; nothing of it is left after a failure or an interruption."""
    part = target.with_name(target.name + ".part")
    try:
        write(part)
        _verify(part, pinned, what)
        part.replace(target)
    finally:
        part.unlink(missing_ok=True)  # what a failure or an interruption left


def _extract(wheel: zipfile.ZipFile, member: str, target: Path, pinned: str) -> None:
    """``member`` of ``wheel`` written to ``target`` (:func:`_install_verified`)."""
    if member not in wheel.namelist():
        raise DmlSetupError(f"{Path(str(wheel.filename)).name} has no {member}")

    def write(part: Path) -> None:
        with wheel.open(member) as src, open(part, "wb") as dst:
            shutil.copyfileobj(src, dst)

    _install_verified(target, pinned, f"{member} of {Path(str(wheel.filename)).name}", write)


# ---- 1. system packages -----------------------------------------------------------------------
def _installed(package: str) -> bool:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                             capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return False
    return out.returncode == 0 and out.stdout.strip() == "install ok installed"


def _apt_packages(log: Log) -> None:
    missing = [p for p in APT_PACKAGES if not _installed(p)]
    if not missing:
        log("system packages: all present")
        return
    command = "apt-get install -y --no-install-recommends " + " ".join(missing)
    if shutil.which("apt-get") is None:
        raise DmlSetupError(f"packages {missing} are missing and there is no apt-get "
                            "(Debian bookworm is expected)")
    if os.geteuid() != 0:
        raise DmlSetupError(f"packages {missing} are missing; as root run: {command}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    with _step(log, f"system packages installed: {' '.join(missing)}"):
        _run(["apt-get", "update", "-qq"], "apt-get update", env=env)
        _run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], command, env=env)


# ---- 2. Mesa lavapipe, unpacked privately -----------------------------------------------------
def _private_apt(home: Path) -> list[str]:
    """apt options for a private configuration under ``home/apt`` (lists updated once)."""
    root = home / "apt"
    (root / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (root / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    sources = root / "sources.list"
    suites = sorted({suite for _, suite in MESA_VERSIONS.values()})
    sources.write_text("".join(f"deb [signed-by={DEBIAN_KEYRING}] {DEBIAN_MIRROR} {suite} main\n"
                               for suite in suites))
    return [
        "-o", f"Dir::Etc::SourceList={sources}",
        "-o", "Dir::Etc::SourceParts=/nonexistent",
        "-o", f"Dir::State::Lists={root / 'lists'}",
        "-o", f"Dir::Cache={root / 'cache'}",
        "-o", "Dir::Cache::pkgcache=",
        "-o", "Dir::Cache::srcpkgcache=",
        # as root, apt downloads as _apt, which cannot write a private temporary folder
        *(["-o", "APT::Sandbox::User=root"] if os.geteuid() == 0 else []),
    ]


def _write_icd(stack: DmlStack, mesa: str) -> None:
    root = stack.mesa_dir(mesa)
    library = root / _LVP_LIBRARY
    if not library.is_file():
        raise DmlSetupError(f"the Mesa {mesa} package has no {library.relative_to(root)}")
    api_version = "1.3.0"
    for shipped in sorted((root / "usr/share/vulkan/icd.d").glob("lvp_icd*.json")):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            api_version = str(json.loads(shipped.read_text())["ICD"]["api_version"])
    stack.mesa_icd(mesa).write_text(json.dumps(
        {"file_format_version": "1.0.0", "ICD": {"library_path": str(library), "api_version": api_version}},
        indent=2) + "\n")


def _mesa(stack: DmlStack, mesa: str, log: Log) -> None:
    version, suite = MESA_VERSIONS[mesa]
    deb_sha256, library_sha256 = MESA_SHA256[mesa]
    library = stack.mesa_dir(mesa) / _LVP_LIBRARY
    if stack.mesa_icd(mesa).is_file() and _pinned_present(library, library_sha256, log):
        log(f"Mesa {mesa} lavapipe: present ({stack.mesa_dir(mesa)})")
        return
    with _step(log, f"Mesa {mesa} lavapipe: mesa-vulkan-drivers {version} ({suite}) unpacked in "
                    f"{stack.mesa_dir(mesa)}"):
        options = _private_apt(stack.home)
        lists = stack.home / "apt" / "lists"
        if not any(lists.glob("*_Packages*")):
            _run(["apt-get", *options, "update", "-qq"], "apt-get update (private lists for Mesa)")
        with tempfile.TemporaryDirectory(dir=stack.home) as tmp:
            os.chmod(tmp, 0o755)
            try:
                _run(["apt-get", *options, "download", f"mesa-vulkan-drivers={version}"],
                     f"downloading mesa-vulkan-drivers={version}", cwd=Path(tmp))
            except DmlSetupError:
                # the lists may be stale: refresh them once and retry
                _run(["apt-get", *options, "update", "-qq"], "apt-get update (private lists for Mesa)")
                _run(["apt-get", *options, "download", f"mesa-vulkan-drivers={version}"],
                     f"downloading mesa-vulkan-drivers={version} from {suite}", cwd=Path(tmp))
            debs = list(Path(tmp).glob("mesa-vulkan-drivers_*.deb"))
            if len(debs) != 1:
                raise DmlSetupError(f"apt-get download left {len(debs)} mesa-vulkan-drivers packages")
            _verify(debs[0], deb_sha256, debs[0].name)
            staging = Path(tmp) / "root"
            _run(["dpkg-deb", "-x", str(debs[0]), str(staging)], f"unpacking {debs[0].name}")
            _verify(staging / _LVP_LIBRARY, library_sha256, f"{_LVP_LIBRARY} of {debs[0].name}")
            target = stack.mesa_dir(mesa)
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        _write_icd(stack, mesa)


# ---- 3. the DLLs from the wheel --------------------------------------------------------------
def _dlls(stack: DmlStack, log: Log, *, force: bool) -> None:
    base_sha256 = DIRECTML_DLL_SHA256[_BASE_DIRECTML]
    if (not force and _pinned_present(stack.ort_dll, ORT_DLL_SHA256, log)
            and _pinned_present(stack.directml_dll, base_sha256, log)):
        log(f"onnxruntime.dll, DirectML.dll: present ({stack.bin_dir})")
        return
    spec = f"onnxruntime-directml=={ORT_DIRECTML_VERSION}"
    with _step(log, f"onnxruntime.dll, DirectML.dll from {spec} (win_amd64) in {stack.bin_dir}"):
        stack.bin_dir.mkdir(parents=True, exist_ok=True)
        with (tempfile.TemporaryDirectory(dir=stack.home) as tmp,
              _wheel(ORT_DIRECTML_VERSION, tmp) as z):
            _extract(z, _ORT_DLL_MEMBER, stack.ort_dll, ORT_DLL_SHA256)
            _extract(z, _DIRECTML_DLL_MEMBER, stack.directml_dll, base_sha256)


# ---- 7. older DirectML releases -----------------------------------------------------------
def setup_directml(stack: DmlStack, version: str, log: Log = _no_log, *, force: bool = False) -> Path:
    """Put DirectML ``version``'s DirectML.dll in ``home/directml/<version>/`` (from the wheel
    :data:`~ort_layouts.engine.dml.stack.DIRECTML_WHEELS` names; 1.15.4 is copied from
    ``home/bin``) and return its path.

    Raises:
        DmlSetupError: an unknown version, a failed download, or a DLL of another version.
    """
    try:
        check_directml_version(version)
    except ProviderError as e:
        raise DmlSetupError(str(e)) from None
    versioned = dataclasses.replace(stack, directml_version=version)
    target = versioned.directml_dll

    def version_of(path: Path) -> str:
        return directml_file_version(path).split("+")[0].strip()

    pinned = DIRECTML_DLL_SHA256[version]
    if not force and version_of(target) == version and _pinned_present(target, pinned, log):
        log(f"DirectML {version}: present ({target})")
        return target
    wheel_version = DIRECTML_WHEELS[version]
    spec = f"onnxruntime-directml=={wheel_version}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with _step(log, f"DirectML {version}: DirectML.dll from {spec} in {target.parent}"):
        if wheel_version == ORT_DIRECTML_VERSION and _sha256(stack.base.directml_dll) == pinned:
            base = stack.base.directml_dll
            _install_verified(target, pinned, f"{base} copied", lambda part: shutil.copyfile(base, part))
        else:
            with (tempfile.TemporaryDirectory(dir=stack.home) as tmp,
                  _wheel(wheel_version, tmp) as z):
                _extract(z, _DIRECTML_DLL_MEMBER, target, pinned)
        found = version_of(target)
        if found != version:  # the pins and the table of wheels disagree
            target.unlink(missing_ok=True)
            raise DmlSetupError(f"the DirectML.dll of {spec} has FileVersion {found or '(none)'}, "
                                f"not {version}")
    versioned.link_version_dir()
    return target


# ---- 4. the worker ---------------------------------------------------------------------------
def compile_worker(stack: DmlStack) -> Path:
    """Compile ``worker.c`` into ``stack.worker_exe`` (with mingw-w64) and stamp it.

    Raises:
        DmlSetupError: the compiler is missing or the compilation failed.
    """
    from ort_layouts.engine.dml.stack import WORKER_SOURCE

    if shutil.which(MINGW_GCC) is None:
        raise DmlSetupError(f"{MINGW_GCC} is not installed: apt-get install -y gcc-mingw-w64-x86-64 "
                            "mingw-w64-x86-64-dev")
    stack.bin_dir.mkdir(parents=True, exist_ok=True)
    part = stack.worker_exe.with_suffix(".part.exe")
    _run([MINGW_GCC, "-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter",
          "-o", str(part), str(WORKER_SOURCE), "-static", "-ldxgi", "-lversion", "-lole32"],
         f"compiling {WORKER_SOURCE.name}")
    part.replace(stack.worker_exe)
    stack.worker_stamp.write_text(worker_source_digest() + "\n")
    return stack.worker_exe


def _worker(stack: DmlStack, log: Log, *, force: bool) -> None:
    if not force and stack.worker_current():
        log(f"worker: current ({stack.worker_exe})")
        return
    with _step(log, f"worker compiled: {stack.worker_exe}"):
        compile_worker(stack)


# ---- 5. the Wine prefix ----------------------------------------------------------------------
def _prefix(stack: DmlStack, log: Log) -> None:
    if (stack.prefix / "system.reg").is_file():
        log(f"Wine prefix: present ({stack.prefix})")
        return
    env = dict(os.environ, WINEPREFIX=str(stack.prefix), WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=")
    env.pop("DISPLAY", None)
    with _step(log, f"Wine prefix created: {stack.prefix}"):
        stack.prefix.parent.mkdir(parents=True, exist_ok=True)
        _run(["wineboot", "-i"], "wineboot -i (creating the Wine prefix)", env=env, timeout=600)
        # a crash must end the worker, never wait on a debugger dialog nobody sees
        _run(["wine", "reg", "add", r"HKCU\Software\Wine\WineDbg", "/v", "ShowCrashDialog",
              "/t", "REG_DWORD", "/d", "0", "/f"], "turning off Wine's crash dialog", env=env)
        _run(["wineserver", "-w"], "waiting for wineserver", env=env, timeout=120)
    if not (stack.prefix / "system.reg").is_file():
        raise DmlSetupError(f"wineboot -i left no {stack.prefix / 'system.reg'}")


# ---- 6. the check ----------------------------------------------------------------------------
def _check_directml(stack: DmlStack, log: Log) -> bool:
    """The check under one older DirectML release: one line saying it ran, or why ONNX Runtime
    cannot drive it (never raised: other releases go on)."""
    try:
        _check(stack, log)
    except Exception as e:  # the reason is the line
        text = " ".join(str(e).split())
        log(f"DirectML {stack.directml_version}: not usable with ONNX Runtime {ORT_DIRECTML_VERSION} "
            f"here: {type(e).__name__}: {text[:400]}")
        return False
    return True


def _check_transpose(worker: DmlWorker) -> tuple[Any, Any, str]:
    """The check's Transpose (perm [1, 0] of a float32 [2, 3] iota) in ``worker``: its input,
    its output and the EP ONNX Runtime placed it on."""
    import numpy as np
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["y"], name="check_transpose", perm=[1, 0])], "check",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    with worker.create_session(model.SerializeToString()) as session:
        (y,) = session.run(None, {"x": x})
        placement = session.node_assignment().get("check_transpose", "?")
    return x, y, placement


# onnxruntime.dll delay-loads DirectML.dll: the delay-load helper's exceptions (VcppException of
# ERROR_MOD_NOT_FOUND / ERROR_PROC_NOT_FOUND) end the worker with these codes
_DELAY_LOAD_FAILURES = {
    "0xc06d007e": "0xC06D007E: onnxruntime.dll's delay-load of DirectML.dll found no loadable module",
    "0xc06d007f": "0xC06D007F: an entry point onnxruntime.dll imports from DirectML.dll is missing",
}


def directml_release_problem(worker: DmlWorker) -> str:
    """Whether ONNX Runtime drives the DirectML release of ``worker``'s stack here: "" when the
    worker starts, has loaded that release's DirectML.dll
    (:meth:`~ort_layouts.engine.dml.stack.DmlStackInfo.from_worker`) and runs the check's
    Transpose on the DML EP bit for bit; else one line saying why not (a missing entry point
    such as ``DMLCreateDevice1``, a DLL that does not load, a feature level the EP needs, wrong
    bits). Never raises: the caller goes on with other releases."""
    import numpy as np

    try:
        worker.stack_info()
        x, y, placement = _check_transpose(worker)
    except Exception as e:  # the reason is the line
        text = " ".join(str(e).split())
        hints = [hint for code, hint in _DELAY_LOAD_FAILURES.items() if code in text.lower()]
        return f"{type(e).__name__}: {text[:400]}" + "".join(f" ({hint})" for hint in hints)
    if placement != "DmlExecutionProvider":
        return f"the check's Transpose ran on {placement}, not on the DML EP"
    if np.asarray(y).tobytes() != np.ascontiguousarray(x.T).tobytes():
        return (f"the check's Transpose returned {np.asarray(y).ravel().tolist()} instead of "
                f"{x.T.ravel().tolist()}")
    return ""


def _check(stack: DmlStack, log: Log) -> None:
    """One Transpose through the worker on ``stack``, compared bit for bit. Mesa 22 is expected
    to return zeros (the stack bug it is kept for): that is logged, not raised."""
    import numpy as np

    from ort_layouts.engine.dml.client import DmlWorker

    start = time.perf_counter()
    with DmlWorker(stack) as worker:
        info = worker.stack_info()
        x, y, placement = _check_transpose(worker)
    seconds = time.perf_counter() - start
    if y.tobytes() == np.ascontiguousarray(x.T).tobytes():
        dml = f", DirectML {stack.directml_version}" if stack.directml_version else ""
        log(f"check on Mesa {stack.mesa}{dml}: Transpose bit-exact on {placement} ({seconds:.1f} s): {info}")
        return
    got = f"the Transpose returned {y.ravel().tolist()} instead of {x.T.ravel().tolist()} on {info}"
    if stack.mesa == "22" and stack.vk_icd is None and not y.any():
        log(f"check on Mesa {stack.mesa}: {got} (the known silent-zeros stack bug, as expected there)")
        return
    raise DmlSetupError(f"check failed: {got}")


# ---- the whole setup -------------------------------------------------------------------------
def setup_dml(*, home: str | os.PathLike[str] | None = None, mesa: str | Sequence[str] = "25",
              log: Log = _no_log, apt: bool = True, force: bool = False, check: bool = True,
              directml_versions: Sequence[str] = ()) -> DmlStack:
    """Install whatever the DirectML-on-Linux stack is missing; return the stack.

    Args:
        home: where the private parts go (default :func:`~ort_layouts.engine.dml.stack.dml_home`).
        mesa: the private lavapipe(s) to unpack: "25" (works), "22" (silent zeros), or both.
            The returned stack uses the first.
        log: receives one line per step (this function prints nothing).
        apt: install missing system packages (needs root); False only checks them.
        force: download the DLLs and compile the worker again even when present.
        check: run one Transpose through the worker at the end (under each of
            ``directml_versions`` too).
        directml_versions: older DirectML releases to set up beside the stack's own (step 7).

    Raises:
        DmlSetupError: a step failed (one line naming it).
    """
    series = [mesa] if isinstance(mesa, str) else list(mesa) if isinstance(mesa, list | tuple) else []
    if not series:
        raise DmlSetupError(f"mesa {mesa!r} names no Mesa stack; valid: one of {sorted(MESA_VERSIONS)}, "
                            "or a list of them")
    for m in series:
        if m not in MESA_VERSIONS:
            raise DmlSetupError(f"Mesa {m!r} is not a known stack; choices: {sorted(MESA_VERSIONS)}")
    for v in directml_versions:
        try:
            check_directml_version(v)
        except ProviderError as e:
            raise DmlSetupError(str(e)) from None
    if check:
        try:  # the check's worker takes it: a bad value is said before any download
            worker_timeout_s()
        except ProviderError as e:
            raise DmlSetupError(str(e)) from None
    # the stack set up and checked is the private one: never the run-time choices of
    # ORT_LAYOUTS_DML_VK_ICD (another Vulkan driver) or ORT_LAYOUTS_DML_DIRECTML_VERSION (another
    # release's folder, which the base DLLs would overwrite)
    folder = dml_home(home)  # absolute, for Wine
    stack = DmlStack(folder, series[0], None, "")
    stack.home.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    if apt:
        _apt_packages(log)
    for m in series:
        _mesa(stack, m, log)
    _dlls(stack, log, force=force)
    _worker(stack, log, force=force)
    _prefix(stack, log)
    missing = stack.missing()
    if missing:
        raise DmlSetupError("setup finished but parts are missing: " + "; ".join(missing))
    for v in directml_versions:
        setup_directml(stack, v, log, force=force)
    if check:
        for m in series:
            _check(dataclasses.replace(stack, mesa=m), log)
        usable = [v for v in directml_versions
                  if _check_directml(dataclasses.replace(stack, directml_version=v), log)]
        if directml_versions:
            log(f"DirectML versions that ran the check: {', '.join(usable) or 'none'}")
            if not usable:
                asked = ", ".join(directml_versions)
                raise DmlSetupError(f"none of the DirectML versions asked for ({asked}) ran the check, so "
                                    "none can be validated here (see the lines above)")
    if directml_versions or available_directml_versions(stack.home):
        log(f"DirectML versions available (--dml-version): "
            f"{', '.join(available_directml_versions(stack.home)) or 'none'}")
    log(f"DirectML stack ready in {stack.home} ({time.perf_counter() - start:.1f} s)")
    return stack
