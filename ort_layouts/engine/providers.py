"""Execution providers: which exist here, how to ask for one, and how to build a session on it.

One module knows them all:

- DirectML (``DmlExecutionProvider``, Windows, package onnxruntime-directml): options
  ``device_id``, ``performance_preference``, ``device_filter``, ``disable_metacommands``;
  memory patterns off, sequential execution, and ``ep.dml.disable_graph_fusion`` so every node
  runs as its own DirectML operator.
- WebGPU (``WebGpuExecutionProvider``), a plugin EP from package onnxruntime-ep-webgpu: its
  library is registered with ``onnxruntime.register_execution_provider_library`` and a device
  from ``onnxruntime.get_ep_devices()`` is added with ``SessionOptions.add_provider_for_devices``.
- CUDA (``CUDAExecutionProvider``) and the CPU EP.

Every non-CPU session sets ``session.disable_cpu_ep_fallback`` so a node the EP cannot take
fails session creation instead of running silently on the CPU, and records which EP got each
node (``session.record_ep_graph_assignment_info``) where ONNX Runtime offers it. Graph
optimizations are off unless asked for: they could remove the very node under test.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import json
import os
import sys
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx

from ort_layouts._errors import OrtLayoutsError, ProviderError, ProviderUnavailableError, a_type
from ort_layouts.descriptors.sequences import is_integer
from ort_layouts.engine.session_process import apply_settings, graph_assignment

__all__ = [
    "DML",
    "WEBGPU",
    "CUDA",
    "CPU",
    "DeviceInfo",
    "ProviderConfig",
    "ProviderInfo",
    "ProviderOptionError",
    "SessionCreationError",
    "check_device_id",
    "cpu_kernel_versions",
    "default_provider",
    "device_description",
    "list_providers",
    "make_session",
    "node_assignment",
    "register_plugin_ep",
    "resolve_provider",
    "runtime_version",
    "session_options",
    "session_settings",
]

DML = "DmlExecutionProvider"
WEBGPU = "WebGpuExecutionProvider"
CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"

# full name -> (short name, is_gpu); the order is default_provider's preference
_KNOWN: dict[str, tuple[str, bool]] = {
    DML: ("dml", True),
    WEBGPU: ("webgpu", True),
    CUDA: ("cuda", True),
    CPU: ("cpu", False),
}
_ALIASES: dict[str, str] = {
    "dml": DML, "directml": DML, "webgpu": WEBGPU, "cuda": CUDA, "cpu": CPU,
}

# DML EP provider options and their valid values (None: any non-negative integer).
DML_OPTIONS: dict[str, tuple[str, ...] | None] = {
    "device_id": None,
    "performance_preference": ("default", "high_performance", "minimum_power"),
    "device_filter": ("gpu", "npu", "any"),
    "disable_metacommands": ("true", "false"),
}

# Plugin EPs: registration name -> (python module, EP name).
PLUGIN_EPS: dict[str, tuple[str, str]] = {"webgpu": ("onnxruntime_ep_webgpu", WEBGPU)}

_CONFIG_DISABLE_FALLBACK = "session.disable_cpu_ep_fallback"
_CONFIG_RECORD_ASSIGNMENT = "session.record_ep_graph_assignment_info"
_CONFIG_DML_NO_FUSION = "ep.dml.disable_graph_fusion"

_registered: dict[str, str] = {}  # plugin registration name -> library path
_plugin_errors: dict[str, str] = {}  # EP name -> why its installed plugin library did not register
_lock = threading.Lock()


class ProviderOptionError(ProviderError, ValueError):
    """A provider option that does not exist or has a value outside its valid choices, or a
    :class:`ProviderConfig` field of the wrong type."""


class SessionCreationError(ProviderError):
    """ONNX Runtime refused to create the session (an unsupported node with CPU fallback off,
    a kernel missing for a data type, a bad model)."""


@dataclasses.dataclass(frozen=True, slots=True)
class DeviceInfo:
    """One device an EP can run on.

    Attributes:
        vendor: e.g. "NVIDIA", "AMD".
        device: the device, in words or as "vendor_id:device_id" in hex.
        driver: driver version, "" when unknown.
        type: "CPU", "GPU" or "NPU".
        ep: the execution provider name.
    """

    vendor: str
    device: str
    driver: str = ""
    type: str = ""
    ep: str = ""

    def __str__(self) -> str:
        text = f"{self.type} {self.vendor} {self.device}".strip()
        return f"{text} (driver {self.driver})" if self.driver else text


@dataclasses.dataclass(frozen=True, slots=True)
class ProviderInfo:
    """An execution provider as this installation sees it."""

    name: str
    short_name: str
    available: bool
    devices: tuple[DeviceInfo, ...] = ()
    is_gpu: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class ProviderConfig:
    """How to build a session.

    Attributes:
        name: the execution provider's full name (see :func:`resolve_provider`); a short name
            ("dml") or another spelling of a known one is refused, naming the full name.
        device_id: the device index (DML/CUDA ``device_id``; WebGPU: index among its EP devices),
            a non-negative int (a numpy integer is taken as its int; a bool, a str or a float is
            refused).
        options: provider options as sorted (key, string value) pairs, validated for DML. A
            mapping is accepted too. Each name is a str and is given once; a value is a str, an
            int, a float or a bool, converted to a string (booleans to "true"/"false"); another
            (None, bytes, a list) is refused. The CPU EP takes none.
        optimize: run ONNX Runtime's graph optimizations (off: ORT_DISABLE_ALL).
        disable_cpu_fallback: fail session creation when a node would run on the CPU EP;
            None means on for every EP but the CPU EP.
        per_node: DML only: ``ep.dml.disable_graph_fusion`` so each node is its own operator.
        record_assignment: record which EP got each node, where ONNX Runtime can.

    ``optimize``, ``per_node`` and ``record_assignment`` are True or False, and
    ``disable_cpu_fallback`` True, False or None: a truthy value of another type ("yes", 1) is
    refused, not taken for True.

    Raises:
        ProviderOptionError: a field of the wrong type or out of range (the message names the
            value and what is valid), or a DML option that is not valid.
    """

    name: str
    device_id: int = 0
    options: tuple[tuple[str, str], ...] = ()
    optimize: bool = False
    disable_cpu_fallback: bool | None = None
    per_node: bool = True
    record_assignment: bool = True

    def __post_init__(self) -> None:
        # every field is the caller's input: one of the wrong type is refused here, before any
        # session, instead of being taken as something else ("0" as device 0, "yes" as True)
        name = self.name
        if not isinstance(name, str) or not name.strip():
            wrong = "is blank" if isinstance(name, str) else _kind(name)
            raise ProviderOptionError(
                f"name {name!r} {wrong}; valid: an execution provider's full name, e.g. {list(_KNOWN)} "
                "(resolve_provider gives it for a short name)")
        full = _known_spelling(name) or name
        if full != name:  # "dml" would skip the DML options' checks and reach no EP
            raise ProviderOptionError(
                f"name {name!r} is not an execution provider's full name; valid: {full!r} "
                f"(resolve_provider({name.strip()!r}) gives it)")
        object.__setattr__(self, "device_id", _device_index(self.device_id))
        for flag in ("optimize", "per_node", "record_assignment", "disable_cpu_fallback"):
            value = getattr(self, flag)
            if isinstance(value, bool) or (value is None and flag == "disable_cpu_fallback"):
                continue
            valid = "True or False, or None (on for every EP but the CPU EP)" \
                if flag == "disable_cpu_fallback" else "True or False"
            raise ProviderOptionError(f"{flag} {value!r} {_kind(value)}; valid: {valid}")
        texts: dict[str, str] = {}
        for key, value in _option_pairs(self.options):
            if not isinstance(key, str) or not key.strip():
                raise ProviderOptionError(
                    f"provider option name {key!r} {'is blank' if isinstance(key, str) else _kind(key)}; "
                    "valid: a str, the option's name")
            text = _option_text(key, value)
            if key in texts:
                raise ProviderOptionError(f"provider option {key!r} is given twice ({key}={texts[key]} and "
                                          f"{key}={text}); give each option once")
            texts[key] = text
        if name == CPU and texts:  # the CPU EP's session is made with no options: they would be lost
            raise ProviderOptionError(f"provider option {next(iter(texts))!r}: {CPU} takes no provider "
                                      "options; valid: none")
        pairs = tuple(sorted(texts.items()))
        if name == DML:
            pairs = _validate_dml_options(dict(pairs), self.device_id)
        object.__setattr__(self, "options", pairs)

    @property
    def fallback_disabled(self) -> bool:
        return self.name != CPU if self.disable_cpu_fallback is None else self.disable_cpu_fallback

    def provider_options(self) -> dict[str, Any]:
        """The options dict passed to ONNX Runtime (``device_id`` as an int)."""
        opts: dict[str, Any] = dict(self.options)
        if self.name in (DML, CUDA):
            opts["device_id"] = self.device_id
        return opts


def _option_pairs(options: object) -> tuple[tuple[Any, Any], ...]:
    """``options``, a mapping or a sequence of (name, value) pairs, as pairs.

    Raises:
        ProviderOptionError: ``options`` is neither (a str, None, an item that is no pair).
    """
    if isinstance(options, Mapping):
        return tuple(options.items())
    if isinstance(options, (tuple, list)) and all(isinstance(p, (tuple, list)) and len(p) == 2
                                                  for p in options):
        return tuple((k, v) for k, v in options)
    raise ProviderOptionError(f"options {options!r:.80} {_kind(options)}; valid: a mapping of option names "
                              "to values, or a tuple of (name, value) pairs")


def _kind(value: object) -> str:
    """What is wrong with ``value``, of the wrong type, for a message: "is a str", "is an int",
    "is not valid" (None)."""
    if value is None:
        return "is not valid"
    return f"is {a_type(value)}"


def _option_text(key: str, value: Any) -> str:
    """An option's value as ONNX Runtime takes it: a str as it is, a bool as "true"/"false", a
    number as its digits.

    Raises:
        ProviderOptionError: a value of another type (None, bytes, a list), which ONNX Runtime
            would take as its Python text ("None", "b'1'", "[1]").
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if is_integer(value):
        return str(int(value))
    if isinstance(value, float):
        return str(float(value))
    raise ProviderOptionError(f"provider option {key}={value!r:.80} {_kind(value)}; valid: a str, an int, "
                              "a float or a bool")


def _validate_dml_options(options: dict[str, str], device_id: int) -> tuple[tuple[str, str], ...]:
    for key, value in options.items():
        if key not in DML_OPTIONS:
            raise ProviderOptionError(
                f"DML provider option {key!r} does not exist; valid: {sorted(DML_OPTIONS)}")
        choices = DML_OPTIONS[key]
        if choices is None:
            if not (value.isascii() and value.isdigit()):  # "²" is a digit that int() refuses
                raise ProviderOptionError(f"DML option {key}={value!r} is not valid; valid: an integer >= 0")
            if key == "device_id" and int(value) != device_id:
                raise ProviderOptionError(
                    f"provider option device_id={value} disagrees with the device id {device_id} (the "
                    f"run's device_id, --device-id on the command line; 0 unless given); valid: name the "
                    f"device by the device id alone (--device-id {value})")
        elif value not in choices:
            raise ProviderOptionError(
                f"DML option {key}={value!r} is not valid; valid: {list(choices)}")
    options.pop("device_id", None)
    return tuple(sorted(options.items()))


# ---- discovery ------------------------------------------------------------------------------
def register_plugin_ep(registration_name: str, library_path: str) -> None:
    """Register a plugin EP's shared library once (``ort.register_execution_provider_library``).

    Raises:
        ProviderError: this onnxruntime has no plugin EP API, or registration failed.
    """
    import onnxruntime as ort

    with _lock:
        if _registered.get(registration_name) == library_path:
            return
        register = getattr(ort, "register_execution_provider_library", None)
        if register is None:
            raise ProviderError(
                f"onnxruntime {ort.__version__} cannot load plugin execution providers "
                "(register_execution_provider_library needs onnxruntime >= 1.22)")
        try:
            register(registration_name, library_path)
        except Exception as e:
            if "already registered" not in str(e):
                raise ProviderError(
                    f"registering plugin EP {registration_name!r} from {library_path} failed: {e}"
                ) from e
        _registered[registration_name] = library_path


def _register_installed_plugins() -> None:
    """Register every known plugin EP whose package is installed; silently skip the rest."""
    import importlib

    for registration_name, (module_name, ep_name) in PLUGIN_EPS.items():
        if registration_name in _registered:
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # not installed
            continue
        try:
            register_plugin_ep(registration_name, module.get_library_path())
        except (RuntimeError, OSError, AttributeError) as e:
            # installed, but no library for this platform or an incompatible onnxruntime: kept
            # so that asking for this EP says why it is not available
            _plugin_errors[ep_name] = str(e)
        else:
            _plugin_errors.pop(ep_name, None)


def ep_devices(ep_name: str) -> list[Any]:
    """The ``OrtEpDevice``s of an EP, after registering the installed plugin EPs."""
    _register_installed_plugins()
    return _ep_devices(ep_name)


def _ep_devices(ep_name: str) -> list[Any]:
    import onnxruntime as ort

    get = getattr(ort, "get_ep_devices", None)
    if get is None:
        return []
    return [d for d in get() if d.ep_name == ep_name]


# PCI vendor ids, for devices that report an id but no vendor name
_PCI_VENDORS = {0x10DE: "NVIDIA", 0x1002: "AMD", 0x1022: "AMD", 0x8086: "Intel", 0x1414: "Microsoft",
                0x5143: "Qualcomm", 0x106B: "Apple", 0x13B5: "ARM"}


def _device_info(ep_device: Any) -> DeviceInfo:
    hw = ep_device.device
    meta = dict(getattr(hw, "metadata", {}) or {})
    kind = getattr(hw.type, "name", str(hw.type))
    name = meta.get("Description") or meta.get("description") or \
        f"{int(getattr(hw, 'vendor_id', 0)):04x}:{int(getattr(hw, 'device_id', 0)):04x}"
    driver = meta.get("DriverVersion") or meta.get("driver_version") or ""
    vendor = str(hw.vendor or "") or _PCI_VENDORS.get(int(getattr(hw, "vendor_id", 0) or 0), "")
    return DeviceInfo(vendor, str(name), str(driver), str(kind), str(ep_device.ep_name))


# ---- DirectML through the worker (any OS but Windows) -----------------------------------------
_dml_worker_lock = threading.Lock()
_dml_worker: Any = None


def dml_through_worker() -> bool:
    """Whether DirectML runs here through the worker process (Wine) rather than in-process: the
    installed onnxruntime has no DML EP, and ``ort-layouts setup dml`` has set the stack up."""
    return not _dml_in_process() and not _dml_stack_problem()


def cpu_kernel_versions(op_type: str) -> tuple[tuple[int, int], ...]:
    """The ONNX schema versions the installed ONNX Runtime's CPU EP has a kernel for, of an
    operator of the default domain: (first, last) ranges, in order, as its kernel registry
    says (``get_all_opkernel_def``); () where it has none."""
    return _cpu_kernels().get(op_type, ())


@functools.cache
def _cpu_kernels() -> dict[str, tuple[tuple[int, int], ...]]:
    import onnxruntime.capi.onnxruntime_pybind11_state as state

    found: dict[str, set[tuple[int, int]]] = {}
    for k in state.get_all_opkernel_def():
        if k.provider == CPU and k.domain in ("", "ai.onnx"):
            found.setdefault(k.op_name, set()).add((int(k.version_range[0]), int(k.version_range[1])))
    return {op: tuple(sorted(ranges)) for op, ranges in found.items()}


def runtime_version(provider: str) -> str:
    """The version of the ONNX Runtime that runs ``provider`` (full name): where DirectML runs
    through the worker process, the one the worker reported once started, else the pinned
    onnxruntime-directml's (:data:`~ort_layouts.engine.dml.stack.ORT_DIRECTML_VERSION`, whichever
    DirectML.dll it loads); the installed onnxruntime's for the others."""
    if provider == DML and dml_through_worker():
        from ort_layouts.engine.dml.stack import ORT_DIRECTML_VERSION

        return str(dml_worker().ort_version or ORT_DIRECTML_VERSION)
    import onnxruntime as ort

    return str(ort.__version__)


def _dml_in_process() -> bool:
    """Whether DirectML is the installed onnxruntime's own (onnxruntime-directml, Windows)."""
    import onnxruntime as ort

    return DML in ort.get_available_providers() or sys.platform == "win32"


def _dml_stack_problem() -> str:
    """Why the DirectML stack of ``ort-layouts setup dml`` cannot run here ("" when it can): the
    parts it lacks, each with the command that gets it, or the bad value of a variable that
    chooses them (naming the variable). ``ORT_LAYOUTS_DML_TIMEOUT_S`` is no part of it: it says
    how the stack runs, and choosing DirectML refuses a bad value of it as the user's input
    (:func:`_chosen`)."""
    from ort_layouts.engine.dml.stack import DmlStack

    bad = _dml_setting_error()
    return bad or "; ".join(DmlStack.default().missing())


def _dml_setting_error() -> str:
    """The bad value of a variable that chooses the DirectML stack (an unknown release, say),
    naming the variable; "" when the variables name a stack, whether or not it is set up."""
    from ort_layouts.engine.dml.stack import ENV_DIRECTML_VERSION, ENV_HOME, ENV_VK_ICD, DmlStack

    try:
        DmlStack.default()
    except OrtLayoutsError as e:
        chosen = [f"{name}={os.environ[name]!r}" for name in (ENV_HOME, ENV_VK_ICD, ENV_DIRECTML_VERSION)
                  if os.environ.get(name)]
        return f"{e} (from {', '.join(chosen)})" if chosen else str(e)
    return ""


def _dml_chosen_but_unusable() -> str:
    """The problem of a DirectML stack that ``ORT_LAYOUTS_DML_VK_ICD`` or
    ``ORT_LAYOUTS_DML_DIRECTML_VERSION`` chose and that cannot run; "" when neither chose one,
    or it can run. (``ORT_LAYOUTS_DML_HOME`` alone says where a stack would be, not that one
    must run.)"""
    from ort_layouts.engine.dml.stack import ENV_DIRECTML_VERSION, ENV_VK_ICD

    if _dml_in_process() or not (os.environ.get(ENV_VK_ICD) or os.environ.get(ENV_DIRECTML_VERSION)):
        return ""
    return _dml_stack_problem()


def dml_worker() -> Any:
    """The one DirectML worker of this process (started on first use, closed at exit; replaced
    when the default stack changed, e.g. another ``ORT_LAYOUTS_DML_DIRECTML_VERSION``)."""
    global _dml_worker
    from ort_layouts.engine.dml.stack import DmlStack

    with _dml_worker_lock:
        if _dml_worker is not None and _dml_worker.stack is not None \
                and _dml_worker.stack != DmlStack.default():
            _dml_worker.close()
            _dml_worker = None
        if _dml_worker is None:
            from ort_layouts.engine.dml.client import DmlWorker

            _dml_worker = DmlWorker()
            atexit.register(close_dml_worker)
        return _dml_worker


def interrupt_sessions(config: ProviderConfig) -> None:
    """Give up, at once, the session work that another thread waits on for a run that stops
    (Ctrl-C, SIGTERM): on the DirectML worker, the worker is killed (:meth:`DmlWorker.interrupt
    <ort_layouts.engine.dml.client.DmlWorker.interrupt>`), since one that stopped answering
    keeps its request waiting until its timeout. Another provider's session work ends by itself."""
    worker = _dml_worker  # (not under its lock: the waiting thread may hold it)
    if config.name == DML and worker is not None:
        worker.interrupt()


def close_dml_worker() -> None:
    """Stop the DirectML worker (and its display), if one runs."""
    global _dml_worker
    with _dml_worker_lock:
        worker, _dml_worker = _dml_worker, None
    if worker is not None:
        worker.close()


def _dml_worker_device() -> DeviceInfo:
    """The DirectML worker's device, from the stack's files (no Wine start)."""
    from ort_layouts.engine.dml.stack import DmlStack, directml_file_version, vkd3d_version, vulkan_driver

    stack = DmlStack.default()
    directml = directml_file_version(stack.directml_dll).split("+")[0].strip()
    vkd3d = vkd3d_version()
    return DeviceInfo("", f"DirectML {directml or '?'} via Wine/vkd3d {vkd3d or '?'} on Vulkan "
                          f"{vulkan_driver(stack)}", type="GPU", ep=DML)


def list_providers() -> list[ProviderInfo]:
    """Every EP this project knows, plus any other the runtime reports, with availability.

    A plugin EP is available when its library registered and it enumerates at least one device.
    """
    import onnxruntime as ort

    _register_installed_plugins()
    built_in = list(ort.get_available_providers())
    infos = []
    for name, (short, is_gpu) in _KNOWN.items():
        devices = tuple(_device_info(d) for d in _ep_devices(name))
        available = bool(devices) if name == WEBGPU else name in built_in
        if name == DML and not available and dml_through_worker():
            available, devices = True, (_dml_worker_device(),)
        infos.append(ProviderInfo(name, short, available, devices, is_gpu))
    for name in built_in:
        if name not in _KNOWN:
            infos.append(ProviderInfo(name, name.removesuffix("ExecutionProvider").lower(), True,
                                      tuple(_device_info(d) for d in _ep_devices(name)), False))
    return infos


def _available_names() -> list[str]:
    return [p.name for p in list_providers() if p.available]


def default_provider() -> str:
    """DirectML if present, else another GPU EP (WebGPU with a device, CUDA), else the CPU EP.

    Raises:
        ProviderError: ``ORT_LAYOUTS_DML_VK_ICD`` or ``ORT_LAYOUTS_DML_DIRECTML_VERSION``
            chose a DirectML stack that cannot run (a bad value, a missing part): the run
            would otherwise go to another EP unnoticed.
        ProviderOptionError: the choice is DirectML through the worker, and
            ``ORT_LAYOUTS_DML_TIMEOUT_S`` is bad (:func:`_chosen`).
    """
    from ort_layouts.engine.dml.stack import ENV_DIRECTML_VERSION, ENV_VK_ICD

    problem = _dml_chosen_but_unusable()
    if problem:
        chosen = "/".join(name for name in (ENV_VK_ICD, ENV_DIRECTML_VERSION)
                          if os.environ.get(name, "").strip())
        raise ProviderError(f"the DirectML stack chosen by the environment cannot run: {problem}; fix or "
                            f"unset {chosen}, or name a provider with --provider")
    available = set(_available_names())
    for name, (_, is_gpu) in _KNOWN.items():
        if is_gpu and name in available:
            return _chosen(name)
    return CPU


def _chosen(full: str) -> str:
    """``full``, chosen for a run, once its settings from the environment are checked: DirectML
    through the worker reads ``ORT_LAYOUTS_DML_TIMEOUT_S``, whose bad value is the user's input
    and is refused here, before any work (another EP never reads it, and is not stopped by it).

    Raises:
        ProviderOptionError: that bad value, named with the valid ones.
    """
    if full == DML and not _dml_in_process():
        from ort_layouts.engine.dml.stack import worker_timeout_s

        worker_timeout_s()
    return full


def _known_spelling(name: str) -> str | None:
    """The full name of a provider this project knows, for its alias ("dml") or its full name
    in any case; None for another name."""
    key = name.strip().lower()
    full = _ALIASES.get(key, key)
    return next((known for known in _KNOWN if known.lower() == full.lower()), None)


def provider_full_name(name: str) -> str:
    """The full EP name for ``name`` ("dml", "webgpu", "cuda", "cpu", "auto" or a full name, in
    any case), whether or not the EP is available here.

    Raises:
        ProviderError: an unknown name; the message lists the valid names.
    """
    key = str(name).strip()
    if key.lower() == "auto":
        return default_provider()
    known = _known_spelling(key)
    if known is not None:
        return known
    matches = [n for n in _available_names() if n.lower() == key.lower()]
    if not matches:
        raise ProviderError(
            f"execution provider {name!r} is unknown; valid: {['auto', *_ALIASES]} or a full name; "
            f"available here: {_available_names()}")
    return matches[0]


def resolve_provider(name: str) -> str:
    """The full EP name for ``name`` (:func:`provider_full_name`), available here.

    Raises:
        ProviderError: an unknown name; the message lists the valid names.
        ProviderUnavailableError: an EP this project knows that is not available here; the
            message lists the available EPs. (DirectML whose ``ORT_LAYOUTS_DML_*`` variable has
            a bad value, such as an unknown release, is a ProviderError naming the variable; a
            stack the variables choose that is not set up here is unavailable.)
        ProviderOptionError: DirectML through the worker, with a bad ``ORT_LAYOUTS_DML_TIMEOUT_S``
            (the message names the variable, its value and the valid ones): the run would use it.
    """
    if str(name).strip().lower() == "auto":
        return default_provider()  # available, and its settings checked
    full = provider_full_name(name)
    available = _available_names()
    if full not in available:
        hint = ""
        if full == DML and sys.platform == "win32":
            hint = " (DirectML needs the onnxruntime-directml package)"
        elif full == DML:
            bad = _dml_setting_error()
            if bad:  # a variable's bad value: the user's setting is wrong, no absence to skip over
                raise ProviderError(f"execution provider {full!r} cannot run: {bad}; available: {available}")
            problem = _dml_chosen_but_unusable()  # the parts a stack the variables chose lacks, named
            hint = f" ({problem})" if problem else " (set it up with: ort-layouts setup dml)"
        elif full in _plugin_errors:
            hint = f" (its plugin library is installed but did not register: {_plugin_errors[full]})"
        elif full == WEBGPU:
            hint = (" (install onnxruntime-ep-webgpu; it needs onnxruntime >= 1.24.4 and a GPU "
                    "with Vulkan, D3D12 or Metal)")
        raise ProviderUnavailableError(
            f"execution provider {full!r} is not available{hint}; available: {available}")
    return _chosen(full)


# ---- sessions -------------------------------------------------------------------------------
def session_settings(config: ProviderConfig) -> dict[str, Any]:
    """The session options of ``config`` as data (what
    :func:`~ort_layouts.engine.session_process.apply_settings` sets): the settings every
    session on ``config`` is created with, in this process or in the CPU EP's session process.

    The CPU EP runs each node on the calling thread (``intra_op_num_threads`` 1): a layout
    node is far too small to share out, and the default pool of one thread per core spins
    between nodes, which slows session creation, runs and teardown alike on a loaded
    machine."""
    import onnxruntime as ort

    entries = []
    if config.fallback_disabled:
        entries.append((_CONFIG_DISABLE_FALLBACK, "1"))
    if config.record_assignment and hasattr(ort.InferenceSession, "get_provider_graph_assignment_info"):
        entries.append((_CONFIG_RECORD_ASSIGNMENT, "1"))
    if config.name == DML and config.per_node:
        entries.append((_CONFIG_DML_NO_FUSION, "1"))
    return {
        "log_severity_level": 4,  # failures surface as exceptions with the same text
        "optimize": config.optimize,
        "intra_op_num_threads": 1 if config.name == CPU else 0,
        "config_entries": entries,
    }


def session_options(config: ProviderConfig) -> Any:
    """The ``onnxruntime.SessionOptions`` every in-process session on ``config`` is created
    with (:func:`make_session`), from :func:`session_settings`."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    apply_settings(so, session_settings(config))
    return so


def make_session(model: bytes | onnx.ModelProto, config: ProviderConfig) -> Any:
    """An ``onnxruntime.InferenceSession`` for ``model`` on ``config``'s EP.

    Raises:
        ProviderError: the EP is not available, or (WebGPU) has no device ``config.device_id``.
        SessionCreationError: ONNX Runtime refused the model on this EP.
    """
    import onnxruntime as ort

    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else bytes(model)
    if config.name == DML and dml_through_worker():
        return _dml_worker_session(data, config)
    so = session_options(config)
    providers: list[Any] | None
    if config.name == WEBGPU:
        devices = ep_devices(WEBGPU)
        if config.device_id >= len(devices):
            raise ProviderError(
                f"{WEBGPU} has {len(devices)} device(s); device_id {config.device_id} does not exist")
        so.add_provider_for_devices([devices[config.device_id]], dict(config.options))
        providers = None
    elif config.name == CPU:
        providers = [CPU]
    else:
        providers = [(config.name, config.provider_options())]
    try:
        if providers is None:
            return ort.InferenceSession(data, sess_options=so)
        return ort.InferenceSession(data, sess_options=so, providers=providers)
    except Exception as e:
        raise SessionCreationError(f"{config.name} could not create the session: {e}") from e


# where the DML EP creates its Direct3D 12 and DirectML devices: a failure there is the device,
# not the model
_DEVICE_CREATION = "dml_provider_factory.cc"


def _dml_worker_session(data: bytes, config: ProviderConfig) -> Any:
    """A session in the DirectML worker, with the settings of an in-process DML session.

    Each session makes its own Direct3D 12 device. On vkd3d over NVIDIA's Vulkan driver, after
    some dozens of sessions in one worker process the DML EP can no longer create one (E_FAIL
    in ``dml_provider_factory.cc``) although every session was released: then the worker is
    restarted (a new process frees what the old one held) and the session created again, once.
    When that fails too, the error stands (and no more restarts are tried for it)."""
    from ort_layouts.engine.dml.client import DmlSessionCreationError

    worker = dml_worker()
    for attempt in (0, 1):
        try:
            return worker.create_session(
                data, provider="DML", provider_options=config.provider_options(),
                graph_optimization_level=99 if config.optimize else 0,
                allow_cpu_fallback=not config.fallback_disabled, record_placement=config.record_assignment,
                graph_fusion=not config.per_node)
        except DmlSessionCreationError as e:
            device_failed = _DEVICE_CREATION in str(e)
            if attempt == 0 and device_failed and worker.device_restarts_help:
                worker.restart()
                continue
            if attempt == 1 and device_failed:
                worker.device_restarts_help = False
            raise SessionCreationError(f"{config.name} could not create the session: {e}") from e
    raise AssertionError("unreachable")


def node_assignment(session: Any) -> dict[str, str]:
    """{node name: EP name} as ONNX Runtime recorded it; {} when this runtime cannot say."""
    recorded = getattr(session, "node_assignment", None)
    if recorded is not None:  # a DirectML worker session
        return dict(recorded())
    return graph_assignment(session)


def node_assignment_from_profile(path: str | os.PathLike[str]) -> dict[str, str]:
    """{node name: EP name} from an ONNX Runtime profile (its per-node ``provider`` field)."""
    with open(path, encoding="utf-8") as f:
        events = json.load(f)
    out = {}
    for event in events:
        args = event.get("args") or {}
        if event.get("cat") == "Node" and "provider" in args:
            out[event["name"].removesuffix("_kernel_time").removesuffix("_fence_before")
                .removesuffix("_fence_after")] = args["provider"]
    return out


def check_device_id(provider: str, device_id: Any) -> None:
    """Refuse a device index that is no integer >= 0 (as :class:`ProviderConfig` does), or one
    beyond the devices ``provider`` lists (nothing more is checked for a provider that lists
    none: its devices are known only to its own runtime).

    Raises:
        ProviderOptionError: naming the index and the devices there are.
    """
    device_id = _device_index(device_id)
    if device_id == 0:  # the first device is within any list of them: no need to ask the runtime
        return
    devices: list[Any] = []
    for info in list_providers():
        if info.name == provider:
            devices = list(info.devices)
    if devices and device_id >= len(devices):
        listed = "; ".join(f"{i}: {d}" for i, d in enumerate(devices))
        raise ProviderOptionError(f"device id {device_id} is out of range: {provider} lists {len(devices)} "
                                  f"device(s) ({listed}); valid: 0..{len(devices) - 1}")


def _device_index(device_id: Any) -> int:
    """``device_id`` as an int, refused unless it is an integer >= 0 (a Python or numpy integer;
    a bool, a float or a str is no device index)."""
    if not is_integer(device_id) or device_id < 0:
        shown, wrong = (int(device_id), "is negative") if is_integer(device_id) \
            else (device_id, _kind(device_id))
        raise ProviderOptionError(f"device_id {shown!r} {wrong}; valid: a non-negative int (a Python or "
                                  "numpy integer, not a bool)")
    return int(device_id)


def device_description(config: ProviderConfig) -> str:
    """The device a config runs on, in words ("" when unknown)."""
    if config.name == DML and dml_through_worker():
        return str(dml_worker().stack_info())
    devices = _ep_devices(config.name)
    if config.name == CPU:
        return str(_device_info(devices[0])) if devices else "CPU"
    if config.device_id < len(devices):
        return str(_device_info(devices[config.device_id]))
    return f"{_KNOWN.get(config.name, (config.name,))[0]} device {config.device_id}"
