"""A validation session: the cases of a selection run on one provider, their results fed to a
writer as they arrive, a resumed run skipping what its writer already holds.

:func:`validation_meta` describes a run (where, how, which selection, the model by the
SHA-256 of its content) for a report; :class:`ValidationSession` runs it. The writer is anything
with the methods of :class:`ResultWriter` (the report writer of ``ort_layouts.reports.writer``
is one); the session prints nothing, so a front end says what it likes around it.

Before a run, :func:`resolve_validation_provider`, :func:`check_device_id` and
:func:`check_provider_options` refuse what would fail (or be ignored) only later: an execution
provider that has no operator kernels (``AzureExecutionProvider`` sends whole models to a remote
endpoint), a device index beyond the devices the provider lists, and provider options the
provider does not take (the CPU EP takes none; DirectML's are checked against its list; other
EPs' are left to ONNX Runtime, which checks them when it builds the session). Then
:func:`check_provider_start` checks that the provider starts (DirectML's canary cases, another
EP's one-node session), before a writer is made: a run that cannot start leaves the report
already in the writer's directory as it is, where a writer made first would have replaced it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Callable, Mapping, Sequence, Set
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from ort_layouts._errors import ArgumentError, ProviderError
from ort_layouts.descriptors.sequences import is_integer
from ort_layouts.engine import providers, runner
from ort_layouts.engine.environment import environment
from ort_layouts.engine.providers import check_device_id
from ort_layouts.engine.result import CaseResult
from ort_layouts.engine.runner import check_provider_start
from ort_layouts.engine.suite import SUITE_DTYPE_NAMES
from ort_layouts.operators.case import VALUE_KINDS, Case
from ort_layouts.operators.registry import CASE_OPS
from ort_layouts.operators.values import check_cases

__all__ = [
    "NOT_VALIDATABLE",
    "EncodingResultWriter",
    "ResultWriter",
    "SessionOutcome",
    "ValidationSession",
    "check_device_id",
    "check_provider_options",
    "check_provider_start",
    "device_of",
    "dml_stack",
    "file_sha256",
    "normalized_selection",
    "resolve_validation_provider",
    "selection_differences",
    "validation_meta",
]

# execution providers ONNX Runtime lists that cannot run a layout operator, and why
NOT_VALIDATABLE: dict[str, str] = {
    "AzureExecutionProvider": "it sends whole models to a remote endpoint and has no operator kernels",
}

# the data types' names as a selection holds them, in the suite's order

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class ResultWriter(Protocol[R_co]):
    """Where a session's results go, as they arrive.

    ``done_ids`` are the case ids it already holds (a resumed report); ``write_summaries``
    returns what the session hands back as :attr:`SessionOutcome.summary`.
    """

    @property
    def done_ids(self) -> Set[str]: ...

    def add(self, result: CaseResult) -> None: ...

    def update_meta(self, **values: Any) -> None: ...

    def write_summaries(self, *, finished: bool = False) -> R_co: ...

    def close(self) -> None: ...


@runtime_checkable
class EncodingResultWriter(ResultWriter[R_co], Protocol[R_co]):
    """A :class:`ResultWriter` that takes each result with what it makes of it, made where the
    result is made (in a worker process, in a run spread over several):
    ``add_encoded_all(list(zip(results, encode_results(results))))`` stands for
    ``add(result)`` of each, in turn. An ``encode_results`` that pickles runs in the workers;
    one that does not runs in the validating process."""

    @property
    def encode_results(self) -> Callable[[Sequence[CaseResult]], Sequence[Any]]: ...

    def add_encoded_all(self, pairs: Sequence[tuple[CaseResult, Any]]) -> None: ...


def device_of(provider: str, device_id: int = 0) -> tuple[str, str]:
    """The device name and driver the provider lists at ``device_id`` (its first device when
    it lists fewer; ("", "") when it lists none or cannot be asked)."""
    try:
        infos = providers.list_providers()
    except Exception:
        return "", ""
    for info in infos:
        if getattr(info, "name", None) == provider:
            devices = list(getattr(info, "devices", ()) or ())
            if devices:
                d = devices[device_id] if device_id < len(devices) else devices[0]
                name = " ".join(str(v) for v in (getattr(d, "vendor", ""), getattr(d, "device", "")) if v)
                return name, str(getattr(d, "driver", "") or "")
    return "", ""


def resolve_validation_provider(name: str) -> str:
    """The full name of the execution provider ``name`` names, for a validation run: an alias of
    :func:`~ort_layouts.engine.providers.resolve_provider` ("dml", "cpu", "auto"...), a full
    name, or the alias ``ort-layouts providers`` lists for any other provider ("azure").

    Raises:
        ProviderError: an unknown provider, or one of :data:`NOT_VALIDATABLE`; the message
            lists the providers a run can take here. Also "auto" where the DirectML stack an
            ``ORT_LAYOUTS_DML_*`` variable chose cannot run, and DirectML so chosen by name.
        ProviderUnavailableError: a provider this project knows that is not available here.
        ProviderOptionError: DirectML through the worker with a bad ``ORT_LAYOUTS_DML_TIMEOUT_S``.
    """
    key = str(name).strip()
    infos = providers.list_providers()
    full = next((i.name for i in infos if key.lower() in (i.name.lower(), i.short_name.lower())), key)
    if full in NOT_VALIDATABLE:
        valid = [i.short_name for i in infos if i.available and i.name not in NOT_VALIDATABLE]
        raise ProviderError(f"execution provider {full!r} cannot be validated: {NOT_VALIDATABLE[full]}; "
                            f"valid here: {['auto', *valid]}")
    return providers.resolve_provider(full)


def check_provider_options(
    provider: str, device_id: int, options: Sequence[tuple[str, str]]
) -> dict[str, str]:
    """The provider options as a dict, refused where the provider does not take them: a key
    given twice, any option for the CPU EP (it takes none), a DirectML option that does not
    exist or has a value outside its choices. Other providers' options are passed on as given;
    ONNX Runtime checks them when it builds the session.

    Raises:
        ProviderError: naming the option and the valid ones (:class:`ProviderConfig`'s checks).
    """
    pairs = tuple(options)
    providers.ProviderConfig(provider, device_id=device_id, options=pairs)
    return dict(pairs)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's content, in hex: a model named by what it holds, not where."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def validation_selection(*, provider: str, device_id: int = 0, model: str | None = None,
                         model_sha256: str | None = None, **fields: Any) -> dict[str, Any]:
    """The selection of :func:`validation_meta` (the meta's ``selection``), made without
    asking the provider or the machine anything: what a report resumes only with an equal one.
    ``fields``: the other selection arguments :func:`validation_meta` takes (``ops``,
    ``dtypes``, ``ranks``, ``values``, ``seed``, ``shard``, ``limit``, ``optimize``,
    ``provider_options``, ``dims``), each left out at its default there; ``model_sha256``, the
    model file's :func:`file_sha256` where the caller has it (several runs of one model). The model's pinned
    dimensions (``dims``) are in the selection only where some are pinned, as a report made
    with none holds no ``dims``.

    Raises:
        ArgumentError: a field that is none of those (named)."""
    unknown = sorted(set(fields) - _SELECTION_FIELDS)
    if unknown:
        raise ArgumentError(f"validation_selection got {unknown}; valid: {sorted(_SELECTION_FIELDS)}")
    shard = fields.get("shard")
    selection = {
        "provider": provider, "device_id": device_id,
        "suite": "model" if model else "standard",
        "model_sha256": (model_sha256 or file_sha256(model)) if model else "",
        "ops": list(fields.get("ops") or []), "dtypes": list(fields.get("dtypes") or []),
        "ranks": list(fields.get("ranks") or []), "values": list(fields.get("values") or []),
        "seed": fields.get("seed", 0), "shard": f"{shard[0]}/{shard[1]}" if shard else "",
        "limit": fields.get("limit") or 0, "optimize": fields.get("optimize", False),
        "provider_options": dict(fields.get("provider_options") or {}),
    }
    dims = fields.get("dims")
    if dims:  # the model's shapes: shards of other pins are no one run's
        selection["dims"] = {name: int(dims[name]) for name in sorted(dims)}
    return normalized_selection(selection)


_SELECTION_FIELDS = frozenset({"ops", "dtypes", "ranks", "values", "seed", "shard", "limit", "optimize",
                               "provider_options", "dims"})


def validation_meta(
    *,
    provider: str,
    device_id: int = 0,
    command: str = "",
    model: str | None = None,
    ops: Sequence[str] | None = None,
    dtypes: Sequence[str] | None = None,
    ranks: Sequence[int] | None = None,
    values: Sequence[str] | None = None,
    seed: int = 0,
    shard: tuple[int, int] | None = None,
    limit: int | None = None,
    optimize: bool = False,
    provider_options: Mapping[str, str] | None = None,
    strict: bool = False,
    dims: Mapping[str, int] | None = None,
    model_sha256: str | None = None,
) -> dict[str, Any]:
    """The meta of a validation run: provider, device and driver (as the provider lists them),
    the command, the machine (:func:`~ort_layouts.engine.environment.environment`), the selection
    as asked, its ops, data types, value kinds and ranks in one order
    (:func:`normalized_selection`; a report resumes only
    with an equal one) and ``strict``.

    A model is part of the selection by the SHA-256 of its content (``model_sha256``), not by
    its path: the same file by another path is the same selection, another file of the same
    name is not. Its path is kept in ``model`` (with the hash) for the reader; the dimensions
    pinned in it (``dims``, name to size) are in the selection. ``model_sha256``: the hash, where
    the caller has it (:func:`validation_selection`).
    """
    device, driver = device_of(provider, device_id)
    selection = validation_selection(
        provider=provider, device_id=device_id, model=model, model_sha256=model_sha256, ops=ops,
        dtypes=dtypes, ranks=ranks, values=values, seed=seed, shard=shard, limit=limit, optimize=optimize,
        provider_options=provider_options, dims=dims)
    model_sha256 = selection["model_sha256"]
    meta: dict[str, Any] = {
        "provider": provider, "device_id": device_id, "device": device, "driver": driver,
        "command": command, "environment": environment(), "selection": selection, "strict": strict}
    if model:
        meta["model"] = {"path": str(Path(model).resolve()), "sha256": model_sha256}
    stack = dml_stack(provider)
    if stack:
        meta["stack"] = stack
    return meta


def normalized_selection(selection: Mapping[str, Any]) -> dict[str, Any]:
    """A selection (a meta's ``selection``) with its ``ops`` in the suite's order, its
    ``dtypes`` in :data:`~ort_layouts.engine.suite.SUITE_DTYPES`' order, its ``values`` in
    :data:`~ort_layouts.operators.case.VALUE_KINDS`' order and its ``ranks`` sorted, each once:
    the order they are asked in, and a name asked twice, select no other case, so ``--ops
    Expand,Transpose`` makes the selection of ``--ops Transpose,Expand`` and ``--dtypes
    int8,float32,int8`` that of ``--dtypes float32,int8``. A report
    written before it was so stored compares equal through this too; a field of another kind
    (a damaged meta) is left as it is."""
    found = dict(selection)
    ranks = found.get("ranks")
    if isinstance(ranks, list) and all(map(is_integer, ranks)):
        found["ranks"] = sorted(set(ranks))
    for key, order in (("ops", CASE_OPS), ("dtypes", SUITE_DTYPE_NAMES), ("values", VALUE_KINDS)):
        names = found.get(key)
        if isinstance(names, list) and all(isinstance(name, str) for name in names):
            place = {name: i for i, name in enumerate(order)}
            found[key] = sorted(dict.fromkeys(names), key=lambda name: place.get(name, len(place)))
    return found


def selection_differences(
    old: Mapping[str, Any], new: Mapping[str, Any], *, ignore: Set[str] = frozenset(),
) -> list[tuple[str, Any, Any]]:
    """The fields of two selections that differ, by name, as ``(key, old value, new value)``
    ([] when they are equal): both taken through :func:`normalized_selection` first, so ops, data
    types, value kinds and ranks asked in another order are equal; a field one of them lacks has
    the value None there; the keys in ``ignore`` are not compared."""
    old, new = normalized_selection(old), normalized_selection(new)
    return [(key, old.get(key), new.get(key)) for key in sorted((set(old) | set(new)) - ignore)
            if old.get(key) != new.get(key)]


def dml_stack(provider: str) -> dict[str, Any]:
    """What a DirectML run through the worker runs on, field by field (DirectML and ONNX Runtime
    versions, the D3D12 implementation, Wine, the Vulkan driver and ICD, the adapter, the shader
    model and feature level DirectML got): {} for another provider or an in-process DML EP.
    Starts the worker (one Wine start) when it is not running."""
    if provider != providers.DML or not providers.dml_through_worker():
        return {}
    try:
        return dict(providers.dml_worker().stack_info().to_dict())
    except Exception as e:  # the run itself reports a broken stack, with its own message
        return {"error": f"{type(e).__name__}: {e}"}


@dataclasses.dataclass(frozen=True, slots=True)
class SessionOutcome(Generic[R]):
    """What a session ran.

    Attributes:
        results: this run's results (a resumed report's earlier ones are the writer's).
        device: the device named in the meta, else by the first result that names one.
        seconds: the wall time of the run.
        summary: what the writer's ``write_summaries(finished=True)`` returned; None without
            a writer.
    """

    results: tuple[CaseResult, ...]
    device: str
    seconds: float
    summary: R | None


class ValidationSession(Generic[R]):
    """Run cases on a provider and feed each result to ``writer`` as it arrives.

    Args:
        cases: the planned cases, in order.
        provider, device_id, optimize, provider_options, batch_size, jobs: as for
            :func:`~ort_layouts.engine.runner.run_cases`.
        writer: receives each result; cases whose ids it already holds (``done_ids``) are
            skipped. The session writes its summaries and closes it when the run ends, or stops.
        device: the device as the meta names it ("" when unknown: the first result that names
            one sets it, in the writer's meta too).
    """

    def __init__(
        self,
        cases: Sequence[Case],
        *,
        provider: str,
        device_id: int = 0,
        optimize: bool = False,
        provider_options: Mapping[str, str] | None = None,
        batch_size: int = 256,
        writer: ResultWriter[R] | None = None,
        device: str = "",
        jobs: int | None = None,
    ) -> None:
        """Raises: ArgumentError: ``cases`` is one Case or no iterable, or an item is no Case
        (as :func:`~ort_layouts.engine.runner.run_cases` refuses them, before any work)."""
        self.cases = check_cases(cases)
        self.provider = provider
        self.device_id = device_id
        self.optimize = optimize
        self.provider_options = dict(provider_options or {})
        self.batch_size = batch_size
        self.jobs = jobs
        self.writer = writer
        self.device = device
        done = writer.done_ids if writer is not None else frozenset()
        self.todo = [c for c in self.cases if c.id not in done]
        self.results: list[CaseResult] = []

    @property
    def done_count(self) -> int:
        """Planned cases that already have a result (resumed)."""
        return len(self.cases) - len(self.todo)

    def _add(self, result: CaseResult, on_result: Callable[[CaseResult], None] | None, *,
             written: bool = False) -> None:
        """Keep a result, hand it to the writer (unless ``written``: :meth:`_write_encoded` did),
        then to ``on_result``."""
        self.results.append(result)
        if not written:
            self._device_from(result)
            if self.writer is not None:
                self.writer.add(result)
        if on_result is not None:
            on_result(result)

    def _write_encoded(self, pairs: list[tuple[CaseResult, Any]]) -> None:
        """Hand results to an :class:`EncodingResultWriter` with what it made of them."""
        if not self.device:
            for result, _ in pairs:
                self._device_from(result)
        cast(EncodingResultWriter[R], self.writer).add_encoded_all(pairs)

    def _device_from(self, result: CaseResult) -> None:
        if result.device and not self.device:
            self.device = result.device
            if self.writer is not None:
                self.writer.update_meta(device=result.device)

    def run(self, on_result: Callable[[CaseResult], None] | None = None) -> SessionOutcome[R]:
        """Run the cases not yet done; ``on_result`` sees each result after the writer.

        The writer's summaries are written (``finished=True``) and the writer closed whether the
        run ends or stops (KeyboardInterrupt, an error), so what ran is kept.
        """
        started = time.monotonic()
        summary: R | None = None
        try:
            if self.todo:
                writer = self.writer
                routes: dict[str, Any] = {}
                if isinstance(writer, EncodingResultWriter):  # its lines made beside the results
                    routes = {"encode": writer.encode_results, "on_encoded": self._write_encoded}
                written = bool(routes)
                runner.run_cases(self.todo, provider=self.provider, device_id=self.device_id,
                                 optimize=self.optimize, provider_options=self.provider_options or None,
                                 batch_size=self.batch_size, jobs=self.jobs,
                                 on_result=lambda r: self._add(r, on_result, written=written), **routes)
            seconds = time.monotonic() - started
        finally:
            if self.writer is not None:
                try:
                    summary = self.writer.write_summaries(finished=True)
                finally:  # closed (results.jsonl synced, the directory let go) even when they fail
                    self.writer.close()
        return SessionOutcome(tuple(self.results), self.device, seconds, summary)
