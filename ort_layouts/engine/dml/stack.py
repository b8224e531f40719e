"""The DirectML-on-Linux stack: where its parts live, which are missing, and how a run is set up.

The stack runs the real ONNX Runtime DirectML execution provider and the real ``DirectML.dll``
under Wine, whose Direct3D 12 (vkd3d) translates to Vulkan:

=====================  ==========================================================================
part                   where it lives (``home`` is :func:`dml_home`)
=====================  ==========================================================================
Wine, Xvfb, mingw-w64  system packages (``apt-get install wine wine64 xvfb xauth libvulkan1
                       gcc-mingw-w64-x86-64 mingw-w64-x86-64-dev``)
onnxruntime.dll,       ``home/bin/``, from the ``onnxruntime-directml`` win_amd64 wheel
DirectML.dll
the worker program     ``home/bin/ort_layouts_dml_worker.exe``, compiled from ``worker.c``
Vulkan driver          Mesa lavapipe unpacked privately: ``home/mesa25/`` (Mesa 25, the default)
                       or ``home/mesa22/`` (bookworm's Mesa 22: DirectML's outputs are silently
                       zero there), each with its own ICD json; or any ICD json named by
                       ``ORT_LAYOUTS_DML_VK_ICD`` (the NVIDIA one on a GPU machine)
Wine prefix            ``home/prefix/``
older DirectML.dll     ``home/directml/<version>/DirectML.dll`` (from the wheel of
                       :data:`DIRECTML_WHEELS`), beside links to ``home/bin``'s
                       ``onnxruntime.dll`` and worker: the run folder of that version
=====================  ==========================================================================

Older DirectML releases run under the newest DML EP: ONNX Runtime's ``onnxruntime.dll`` loads the
``DirectML.dll`` that sits beside the program (``dml_provider_factory.cc`` creates the device
through ``DMLCreateDevice1`` of the loaded ``DirectML.dll``), so a stack with
``directml_version`` set runs its worker from ``home/directml/<version>/``. The worker reports
the path and ``FileVersion`` of the ``DirectML.dll`` module actually loaded in its process
(``GetModuleHandleW``/``GetModuleFileNameW``), and :meth:`DmlStackInfo.from_worker` refuses a run
whose loaded DLL is not the version asked for.

``home`` is ``$ORT_LAYOUTS_DML_HOME`` when set, else ``${XDG_CACHE_HOME:-~/.cache}/ort_layouts/dml``.
:func:`ort_layouts.engine.dml.install.setup_dml` fills it; nothing here downloads anything.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ort_layouts._errors import ProviderError

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "DIRECTML_DLL_SHA256",
    "DIRECTML_WHEELS",
    "MESA_SHA256",
    "MESA_VERSIONS",
    "ORT_DIRECTML_VERSION",
    "ORT_DLL_SHA256",
    "SETUP_COMMAND",
    "WHEEL_SHA256",
    "WORKER_EXE",
    "DmlStack",
    "DmlStackInfo",
    "DmlStackMissingError",
    "available_directml_versions",
    "check_directml_version",
    "check_directml_versions",
    "dml_home",
    "directml_file_version",
    "run_environment",
    "vkd3d_version",
    "wine_version",
    "worker_timeout_s",
]

ORT_DIRECTML_VERSION = "1.24.4"  # the onnxruntime-directml wheel the DLLs come from
# Mesa series -> the exact mesa-vulkan-drivers package version and the suite that has it
MESA_VERSIONS: dict[str, tuple[str, str]] = {
    "25": ("25.0.7-2~bpo12+1", "bookworm-backports"),
    "22": ("22.3.6-1+deb12u2", "bookworm"),
}
# DirectML version -> the onnxruntime-directml win_amd64 wheel that ships its DirectML.dll (the
# wheels before 1.21 exist for cp310; they link ONNX Runtime into their .pyd and only their
# DirectML.dll is taken). 1.15.4 is the one beside onnxruntime.dll in home/bin.
DIRECTML_WHEELS: dict[str, str] = {
    "1.9.1": "1.13.1",
    "1.10.1": "1.14.1",
    "1.12.0": "1.15.1",
    "1.12.1": "1.16.3",
    "1.13.1": "1.17.3",
    "1.14.1": "1.18.1",
    "1.15.1": "1.19.2",
    "1.15.2": "1.20.1",
    "1.15.4": ORT_DIRECTML_VERSION,
}
# What setup downloads, pinned by sha256 (setup refuses anything else, and takes a part again
# when the one it finds does not match). The wheels' digests are those PyPI's simple index
# publishes for each file (onnxruntime-directml version -> its win_amd64 wheel: cp312 for
# ORT_DIRECTML_VERSION, cp310 for the others); the DLLs' are those of the files in these wheels.
WHEEL_SHA256: dict[str, str] = {
    "1.13.1": "4f02c2b84f70c352f6673dfa65c6656836057830b99eec8dc4c1c30fa11a0b96",
    "1.14.1": "ec135ef65b876a248a234b233e120b5275fb0247c64d74de202da6094e3adfe4",
    "1.15.1": "f9bbea900c5b77a8f06b50625e5c33e83ffe90b1c9347e12eee572c775c053f4",
    "1.16.3": "73ad27bd4781a6e9760a65ba177e9b679649f3e04f22fdaaea640997b3db1e3d",
    "1.17.3": "deba3da7cdceca3c984523877bd1c752bdbfbb99ee00995768c0a84655594900",
    "1.18.1": "97f20ad5fa432578eb3ad7a0ccf2cb7cef5006a9176b2135c29ddfe9f45781dc",
    "1.19.2": "49c30e59115333655eb7863293c55a318e755abfd4801f3e187a2bd66c63e22a",
    "1.20.1": "d4aa43694799559fb5570fdf0e96a154d4b4d0bb9b73c3e81744eb7fe0c0de8d",
    ORT_DIRECTML_VERSION: "f2ecb68b7b7b259d2ef3112ae760149f9b5a1e7c0fbb73d539da6250a648a614",
}
# DirectML version -> its DirectML.dll (from the wheel DIRECTML_WHEELS names)
DIRECTML_DLL_SHA256: dict[str, str] = {
    "1.9.1": "f343afb050c809816cc88c55a7fe556691553cacb09b2cfaf2b8b96070675486",
    "1.10.1": "7311ef80e8ba38cca79ea73068edb7cd8792dc95986f25db219f2e5f78a02096",
    "1.12.0": "cf07c89740f48ab8382f462f62c314c3d373356a95056e8da6438a5213df75cd",
    "1.12.1": "60a4a441a073abb7ebf2119e03dc4f0980802e791f6a99fe4f178e89db81095a",
    "1.13.1": "24299c14d56cf1c4ea753b156a8c48304a385712a8e894ae896c8c9dab2c046b",
    "1.14.1": "32014e3abb3904c73055f975531d72083d104b251fb9088ddf7b5370a39a1ff3",
    "1.15.1": "f6017ccb7ddc711926c14e172703bc6b9384c835053cb1b8ad80dc231908aa24",
    "1.15.2": "760b2438f3e6f7f6d428f00e29fa9fdbb6368905340031a83c30cd1d712ca02d",
    "1.15.4": "b73972115320e906a49602f2027a3266622881b0d325ba685e0f165a9482a8d7",
}
# the onnxruntime.dll of ORT_DIRECTML_VERSION's wheel
ORT_DLL_SHA256 = "302c69f9779d63ef4ab90316e59444c4acbaca7fe3455020d79d10bcfcb00715"
# Mesa series -> (the mesa-vulkan-drivers package, as Debian's signed Packages list gives it; its
# usr/lib/x86_64-linux-gnu/libvulkan_lvp.so)
MESA_SHA256: dict[str, tuple[str, str]] = {
    "25": ("3899f1800424c60a05df5d6913076a526ca8fdbabec43672cd397563d1ca3263",
           "ec746632947ef2ccb20930a674f026176ad00cc61a7d0f01f285dfc7e4104024"),
    "22": ("21f9ecf52886c88247d8ef92b635b8f670ab01fd7813c98f8200220aa138f4da",
           "997f1bcbac0da9ff4136b6f94117cc6f94ecc1649e5e7e983b4e5a1f1207d066"),
}
WORKER_EXE = "ort_layouts_dml_worker.exe"
WORKER_SOURCE = Path(__file__).with_name("worker.c")
SETUP_COMMAND = "ort-layouts setup dml"
ENV_HOME = "ORT_LAYOUTS_DML_HOME"
ENV_VK_ICD = "ORT_LAYOUTS_DML_VK_ICD"
ENV_DIRECTML_VERSION = "ORT_LAYOUTS_DML_DIRECTML_VERSION"
ENV_TIMEOUT = "ORT_LAYOUTS_DML_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 300.0  # how long the worker may take over one request before it counts as hung


def worker_timeout_s() -> float:
    """How long the worker may take over one request before it counts as hung:
    ``$ORT_LAYOUTS_DML_TIMEOUT_S`` seconds when set, else :data:`DEFAULT_TIMEOUT_S`. The one
    check of the variable: choosing DirectML
    (:func:`~ort_layouts.engine.providers.resolve_provider`), ``setup dml`` and a new
    :class:`~ort_layouts.engine.dml.client.DmlWorker` call it before any work.

    Raises:
        ProviderOptionError: the variable is not a finite number of seconds > 0 (the message
            names it, its value and the valid values).
    """
    text = os.environ.get(ENV_TIMEOUT, "").strip()
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (0 < seconds < math.inf):
        from ort_layouts.engine.providers import ProviderOptionError

        raise ProviderOptionError(f"{ENV_TIMEOUT}={text!r} is not valid; valid: a number of seconds > 0 "
                                  f"(unset: {DEFAULT_TIMEOUT_S:.0f})")
    return seconds


_LIBVULKAN = ("/usr/lib/x86_64-linux-gnu/libvulkan.so.1", "/usr/lib64/libvulkan.so.1",
              "/usr/lib/libvulkan.so.1")


class DmlStackMissingError(ProviderError):
    """A part of the DirectML-on-Linux stack is not there; the message names each part and the
    command that gets it (one line each)."""

    def __init__(self, missing: list[str]) -> None:
        super().__init__("the DirectML stack is not complete:\n" + "\n".join(f"  {m}" for m in missing))
        self.missing = missing


def dml_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The folder that holds the private parts of the stack: ``home`` when given, else
    ``$ORT_LAYOUTS_DML_HOME`` (either, when relative, from the working directory), else
    ``ort_layouts/dml`` in ``$XDG_CACHE_HOME`` (ignored when relative, as the XDG spec says) or
    ``~/.cache``. Always absolute: the worker runs in its own folder, and Wine takes no
    relative prefix."""
    if home is None and os.environ.get(ENV_HOME):
        home = os.environ[ENV_HOME]
    if home is not None:
        return Path(home).expanduser().absolute()
    cache = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache):
        cache = str(Path.home() / ".cache")
    return Path(cache) / "ort_layouts" / "dml"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(v) for v in re.findall(r"\d+", version))


def check_directml_version(version: str) -> str:
    """``version`` when it is a DirectML release of :data:`DIRECTML_WHEELS`.

    Raises:
        ProviderError: another version (the message lists the choices).
    """
    if version not in DIRECTML_WHEELS:
        raise ProviderError(f"DirectML {version!r} is not a known release; choices: "
                            f"{', '.join(sorted(DIRECTML_WHEELS, key=_version_key))}")
    return version


def check_directml_versions(versions: Sequence[str]) -> tuple[str, ...]:
    """``versions`` (each given once, in the order given) when every one is a DirectML release of
    :data:`DIRECTML_WHEELS`.

    Raises:
        ProviderError: none given, or unknown ones (the message names each and lists the choices).
    """
    if not versions:
        raise ProviderError("no DirectML release given; choices: "
                            f"{', '.join(sorted(DIRECTML_WHEELS, key=_version_key))}")
    unknown = [v for v in dict.fromkeys(versions) if v not in DIRECTML_WHEELS]
    if len(unknown) == 1:
        check_directml_version(unknown[0])
    if unknown:
        raise ProviderError(f"DirectML {', '.join(map(repr, unknown))} are not known releases; choices: "
                            f"{', '.join(sorted(DIRECTML_WHEELS, key=_version_key))}")
    return tuple(dict.fromkeys(versions))


def available_directml_versions(home: str | os.PathLike[str] | None = None) -> list[str]:
    """The DirectML versions set up under ``home`` (``home/directml/<version>/DirectML.dll`` whose
    FileVersion is that version), oldest first."""
    root = (Path(home).expanduser() if home is not None else dml_home()) / "directml"
    found = [v for v in DIRECTML_WHEELS
             if directml_file_version(root / v / "DirectML.dll").split("+")[0].strip() == v]
    return sorted(found, key=_version_key)


def worker_source_digest() -> str:
    """SHA-256 of ``worker.c``: a compiled worker is current when its stamp holds this."""
    return hashlib.sha256(WORKER_SOURCE.read_bytes()).hexdigest()


@dataclasses.dataclass(frozen=True, slots=True)
class DmlStack:
    """The paths of one stack. ``mesa`` picks the private lavapipe ("25" or "22"); ``vk_icd``,
    when given (or set in ``ORT_LAYOUTS_DML_VK_ICD``), names another Vulkan ICD json instead;
    ``directml_version``, when given (or set in ``ORT_LAYOUTS_DML_DIRECTML_VERSION``), runs the
    worker beside that release's ``DirectML.dll`` in ``home/directml/<version>/``."""

    home: Path
    mesa: str = "25"
    vk_icd: Path | None = None
    directml_version: str = ""

    @classmethod
    def default(cls, *, home: str | os.PathLike[str] | None = None, mesa: str = "25",
                vk_icd: str | os.PathLike[str] | None = None,
                directml_version: str | None = None) -> DmlStack:
        """The stack under ``home`` (default :func:`dml_home`), the ICD from ``vk_icd`` or
        ``ORT_LAYOUTS_DML_VK_ICD`` or else the private Mesa ``mesa`` lavapipe, the DirectML from
        ``directml_version`` or ``ORT_LAYOUTS_DML_DIRECTML_VERSION`` or else ``home/bin``'s."""
        if mesa not in MESA_VERSIONS:
            raise ProviderError(f"Mesa {mesa!r} is not a known stack; choices: {sorted(MESA_VERSIONS)}")
        icd = vk_icd if vk_icd is not None else os.environ.get(ENV_VK_ICD) or None
        version = (directml_version if directml_version is not None
                   else os.environ.get(ENV_DIRECTML_VERSION, ""))
        if version:
            check_directml_version(version)
        # absolute: the worker runs in the stack's folder, which a relative path is not read from
        return cls(dml_home(home), mesa,
                   Path(icd).expanduser().absolute() if icd is not None else None, version)

    @property
    def base(self) -> DmlStack:
        """This stack with ``home/bin``'s own DirectML.dll."""
        return dataclasses.replace(self, directml_version="")

    def directml_dir(self, version: str | None = None) -> Path:
        """The run folder of one DirectML release: its DirectML.dll, links to the worker and
        onnxruntime.dll."""
        return self.home / "directml" / (version or self.directml_version)

    @property
    def bin_dir(self) -> Path:
        return self.directml_dir() if self.directml_version else self.home / "bin"

    def link_version_dir(self) -> None:
        """Link (or copy) ``home/bin``'s onnxruntime.dll and worker into this version's folder
        where they are missing or differ; nothing is downloaded."""
        if not self.directml_version:
            return
        base = self.base
        for src, dst in ((base.ort_dll, self.ort_dll), (base.worker_exe, self.worker_exe),
                         (base.worker_stamp, self.worker_stamp)):
            if not src.is_file():
                continue
            if dst.is_file() and dst.stat().st_size == src.stat().st_size and (
                    os.path.samefile(src, dst) or dst.read_bytes() == src.read_bytes()):
                continue
            part = dst.with_name(dst.name + ".part")
            part.unlink(missing_ok=True)
            try:
                os.link(src, part)
            except OSError:
                shutil.copyfile(src, part)
            part.replace(dst)

    @property
    def worker_exe(self) -> Path:
        return self.bin_dir / WORKER_EXE

    @property
    def worker_stamp(self) -> Path:
        return self.bin_dir / (WORKER_EXE + ".sha256")

    @property
    def ort_dll(self) -> Path:
        return self.bin_dir / "onnxruntime.dll"

    @property
    def directml_dll(self) -> Path:
        return self.bin_dir / "DirectML.dll"

    @property
    def prefix(self) -> Path:
        return self.home / "prefix"

    def mesa_dir(self, mesa: str | None = None) -> Path:
        return self.home / f"mesa{mesa or self.mesa}"

    def mesa_icd(self, mesa: str | None = None) -> Path:
        return self.mesa_dir(mesa) / "lvp_icd.json"

    @property
    def icd_json(self) -> Path:
        """The Vulkan ICD json a run uses."""
        return self.vk_icd if self.vk_icd is not None else self.mesa_icd()

    def worker_current(self) -> bool:
        """The worker exists and was compiled from the present ``worker.c``."""
        try:
            return (self.worker_exe.is_file()
                    and self.worker_stamp.read_text().strip() == worker_source_digest())
        except OSError:
            return False

    def missing(self, *, need_compiler: bool = False) -> list[str]:
        """One line per missing part: what it is and the command that gets it ([] when complete).

        A stale worker is not missing when the mingw-w64 compiler is here (the client rebuilds
        it); ``need_compiler`` asks for the compiler anyway.
        """
        setup = SETUP_COMMAND + ("" if self.mesa == "25" else f" --mesa {self.mesa}")
        out = []
        if shutil.which("wine") is None:
            out.append("Wine (the `wine` command): apt-get install -y wine wine64")
        if shutil.which("Xvfb") is None and not os.environ.get("DISPLAY"):
            out.append("an X server for Wine's Vulkan (Xvfb): apt-get install -y xvfb xauth")
        if not any(os.path.exists(p) for p in _LIBVULKAN):
            out.append("the Vulkan loader (libvulkan.so.1): apt-get install -y libvulkan1")
        compiler = shutil.which("x86_64-w64-mingw32-gcc")
        if compiler is None and (need_compiler or not self.base.worker_current()):
            out.append("the mingw-w64 C compiler for the worker: "
                       "apt-get install -y gcc-mingw-w64-x86-64 mingw-w64-x86-64-dev")
        base = self.base
        if self.directml_version:  # noqa: SIM102
            if directml_file_version(self.directml_dll).split("+")[0].strip() != self.directml_version:
                out.append(f"DirectML.dll {self.directml_version} from onnxruntime-directml=="
                           f"{DIRECTML_WHEELS[self.directml_version]} ({self.directml_dll}): "
                           f"{setup} --dml-version {self.directml_version}")
        for dll in (base.ort_dll, base.directml_dll):
            if not dll.is_file():
                out.append(f"{dll.name} from onnxruntime-directml=={ORT_DIRECTML_VERSION} ({dll}): {setup}")
        if not base.worker_exe.is_file() and compiler is not None:
            out.append(f"the worker program ({base.worker_exe}): {setup}")
        if self.vk_icd is not None:
            if not self.vk_icd.is_file():
                out.append(f"the Vulkan ICD json {self.vk_icd} (from {ENV_VK_ICD}) does not exist")
        elif not self.mesa_icd().is_file():
            version, suite = MESA_VERSIONS[self.mesa]
            out.append(f"Mesa {self.mesa} lavapipe (mesa-vulkan-drivers {version} from {suite}, "
                       f"unpacked in {self.mesa_dir()}): {setup}")
        if not (self.prefix / "system.reg").is_file():
            out.append(f"the Wine prefix ({self.prefix}): {setup}")
        return out

    def require(self, *, need_compiler: bool = False) -> None:
        """Raise :class:`DmlStackMissingError` unless every part is here."""
        missing = self.missing(need_compiler=need_compiler)
        if missing:
            raise DmlStackMissingError(missing)


# variables of this process's environment that would change what vkd3d or the Vulkan loader do
# under the worker (vkd3d's own settings, the loader's driver and layer choices): a worker run
# goes without them, so that the stack a report names is the stack that ran
# (ORT_LAYOUTS_DML_VK_ICD picks the Vulkan driver, --device-id the adapter)
_DROPPED_PREFIXES = ("VKD3D_", "VK_LOADER_")
_DROPPED = frozenset({"VK_INSTANCE_LAYERS", "VK_LAYER_PATH", "VK_ADD_LAYER_PATH", "VK_ADD_DRIVER_FILES"})


def run_environment(stack: DmlStack, display: str | None) -> dict[str, str]:
    """The environment of a worker run: this process's, without the variables that would change
    what vkd3d or the Vulkan loader do (``VKD3D_*``, ``VK_LOADER_*``, the loader's layer and
    extra-driver variables), plus the stack's variables. Wine's own (``WINELOADER``,
    ``WINESERVER``, ``WINEDLLPATH``: a relocated Wine) and ``LD_LIBRARY_PATH`` are kept."""
    env = {name: value for name, value in os.environ.items()
           if name not in _DROPPED and not name.startswith(_DROPPED_PREFIXES)}
    icd = str(stack.icd_json)
    env.update({
        "WINEPREFIX": str(stack.prefix),
        "WINEDEBUG": "-all",
        "WINEDLLOVERRIDES": "mscoree,mshtml=",  # no Mono / Gecko prompts
        "VK_ICD_FILENAMES": icd,
        "VK_DRIVER_FILES": icd,
        "VKD3D_CONFIG": "virtual_heaps",  # without it every descriptor heap costs ~2 s
        "WINE_D3D_CONFIG": "renderer=vulkan",
    })
    if display is not None:
        env["DISPLAY"] = display
    return env


# ---- versions -------------------------------------------------------------------------------
def wine_version() -> str:
    """``wine --version`` (e.g. "wine-8.0 (Debian 8.0~repack-4)"), "" when Wine is absent."""
    if shutil.which("wine") is None:
        return ""
    try:
        out = subprocess.run(["wine", "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


def _wine_lib_dirs() -> list[Path]:
    """Where the libraries of the Wine that runs are: beside ``WINELOADER`` first (a relocated
    Wine, as on a GPU machine without Wine packages), then beside the ``wine`` on ``PATH`` (a
    Wine in /opt or /usr/local ahead of the system's), then the system's."""
    dirs = []
    loader = os.environ.get("WINELOADER")
    if loader:  # <root>/usr/lib/wine/wine64 -> <root>/usr/lib/x86_64-linux-gnu/wine
        dirs += [Path(loader).parent.parent / "x86_64-linux-gnu" / "wine", Path(loader).parent]
    wine = shutil.which("wine")
    if wine is not None:
        root = Path(os.path.realpath(wine)).parent.parent  # <root>/bin/wine
        dirs += [root / "lib" / "x86_64-linux-gnu" / "wine", root / "lib64" / "wine", root / "lib" / "wine"]
    dirs += [Path("/usr/lib/x86_64-linux-gnu/wine"), Path("/usr/lib/wine"), Path("/usr/local/lib/wine")]
    return list(dict.fromkeys(d for d in dirs if d.is_dir()))


def vkd3d_version() -> str:
    """The vkd3d version inside Wine's Direct3D 12 (e.g. "1.6"), "" when it cannot be read.

    Wine 8 builds vkd3d into its ``d3d12.dll``/``wined3d.dll``; the library carries the string
    ``vkd3d-shader <version>``. A Wine that uses a system libvkd3d is read from that library.
    """
    candidates: list[Path] = []
    for d in _wine_lib_dirs():
        for sub in ("x86_64-windows", "x86_64-unix", ""):
            for name in ("d3d12.dll", "wined3d.dll", "d3d12.so", "wined3d.so", "vkd3d.so"):
                p = d / sub / name
                if p.is_file():
                    candidates.append(p)
    for lib_dir in (Path("/usr/lib/x86_64-linux-gnu"),):
        candidates.extend(sorted(lib_dir.glob("libvkd3d-shader.so.*")))
    for path in candidates:
        found = _scanned(path, _vkd3d_in)
        if found:
            return found
    return ""


_VKD3D = re.compile(rb"vkd3d(?:-shader)? (\d+\.\d+(?:\.\d+)?)")


def _vkd3d_in(data: bytes) -> str:
    found = _VKD3D.search(data)
    return found.group(1).decode() if found else ""


def _scanned(path: str | os.PathLike[str], scan: Callable[[bytes], str]) -> str:
    """``scan`` of a file's bytes ("" when it cannot be read), read once per file version: the
    libraries are tens of MiB, and providers are listed several times a run."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return _scanned_once(os.fspath(path), st.st_mtime_ns, st.st_size, scan)


@functools.lru_cache(maxsize=64)
def _scanned_once(path: str, mtime_ns: int, size: int, scan: Callable[[bytes], str]) -> str:
    try:
        return scan(Path(path).read_bytes())
    except OSError:
        return ""


def directml_file_version(path: str | os.PathLike[str]) -> str:
    """The ``FileVersion`` string of a Windows DLL's version resource ("" when absent).

    Reads the UTF-16 ``StringFileInfo`` entry, as ``strings -el`` would show it.
    """
    return _scanned(path, _file_version_in)


def _file_version_in(data: bytes) -> str:
    key = "FileVersion".encode("utf-16-le") + b"\0\0"
    at = data.find(key)
    if at < 0:
        return ""
    at += len(key)
    at += (-at) % 4  # the value is 32-bit aligned
    end = at
    while end + 1 < len(data) and data[end:end + 2] != b"\0\0":
        end += 2
    return data[at:end].decode("utf-16-le", errors="replace").strip()


def _mesa_package_version(root: Path) -> str:
    """The Debian version of an unpacked mesa-vulkan-drivers ("25.0.7-2~bpo12+1")."""
    changelog = root / "usr/share/doc/mesa-vulkan-drivers/changelog.Debian.gz"
    try:
        with gzip.open(changelog, "rt", encoding="utf-8") as f:
            first = f.readline()
    except OSError:
        return ""
    found = re.match(r"\S+ \(([^)]+)\)", first)
    return found.group(1) if found else ""


def _icd_library(icd_json: Path) -> str:
    try:
        return str(json.loads(icd_json.read_text())["ICD"]["library_path"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def _nvidia_driver_version() -> str:
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
    except OSError:
        return ""
    found = re.search(r"Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)", text)
    return found.group(1) if found else ""


def vulkan_driver(stack: DmlStack) -> str:
    """The Vulkan driver a run uses, in words: "lavapipe (Mesa 25.0.7-2~bpo12+1)", "NVIDIA 580.x"."""
    library = _icd_library(stack.icd_json)
    name = os.path.basename(library)
    if "lvp" in name:
        path = Path(library)
        root = stack.mesa_dir() if stack.vk_icd is None else path.parents[min(3, len(path.parents) - 1)]
        version = _mesa_package_version(root)
        return f"lavapipe (Mesa {version})" if version else "lavapipe (Mesa)"
    if "nvidia" in name.lower():
        version = _nvidia_driver_version()
        return f"NVIDIA {version}".strip()
    return name or "unknown"


# ---- the report ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class DmlStackInfo:
    """What a DirectML run ran on, for reports. Empty strings / zeros mean "unknown"."""

    directml_version: str  # "1.15.4"
    ort_version: str
    d3d12: str
    wine_version: str
    vulkan_driver: str
    vulkan_icd: str
    adapter_name: str
    adapter_vendor_id: int
    adapter_device_id: int
    adapter_dedicated_memory_bytes: int
    shader_model: str = ""
    feature_level: str = ""
    typed_uav_load_additional_formats: bool | None = None
    directml_path: str = ""
    directml_file_version: str = ""  # the DLL's full FileVersion: "1.15.4+241025-1615.1.dml-1.15.fac7597"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        sm = f", shader model {self.shader_model}" if self.shader_model else ""
        return (f"DirectML {self.directml_version} under ONNX Runtime {self.ort_version}, "
                f"{self.d3d12} on {self.adapter_name} ({self.vulkan_driver}){sm}, {self.wine_version}")

    @classmethod
    def from_worker(cls, stack: DmlStack, info: Any) -> DmlStackInfo:
        """Combine a worker's INFO answer (:class:`~ort_layouts.engine.dml.client.WorkerInfo`)
        with what the stack's files say."""
        adapter = info.adapters[0] if info.adapters else None
        vkd3d = vkd3d_version()
        file_version = info.directml_version or directml_file_version(stack.directml_dll)
        loaded = file_version.split("+")[0].strip()
        if stack.directml_version and loaded != stack.directml_version:
            raise ProviderError(f"DirectML {stack.directml_version} was asked for, but the worker "
                                f"loaded {info.directml_path or '?'} (FileVersion {file_version or '?'})")
        return cls(
            directml_version=file_version.split("+")[0].strip(),
            ort_version=info.ort_version,
            d3d12=f"vkd3d {vkd3d}" if vkd3d else "vkd3d",
            wine_version=wine_version(),
            vulkan_driver=vulkan_driver(stack),
            vulkan_icd=str(stack.icd_json),
            adapter_name=adapter.description if adapter else "",
            adapter_vendor_id=adapter.vendor_id if adapter else 0,
            adapter_device_id=adapter.device_id if adapter else 0,
            adapter_dedicated_memory_bytes=adapter.dedicated_video_memory if adapter else 0,
            shader_model=info.shader_model,
            feature_level=info.feature_level,
            typed_uav_load_additional_formats=info.typed_uav_load_additional_formats,
            directml_path=info.directml_path,
            directml_file_version=file_version,
        )
