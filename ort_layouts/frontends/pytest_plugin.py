"""pytest plugin: ``pytest --ort-provider=NAME`` runs the layout suite as test items.

pytest loads the entry point ``_ort_layouts_pytestplugin`` in every run wherever ort_layouts
is installed; it adds the ``--ort-*`` options and registers this module only when
``--ort-provider`` is given, so other test runs neither import ort_layouts nor change.

With ``--ort-provider``, one item per suite case is collected (node id
``ort_layouts::<case id>``, in the suite's deterministic order, so pytest-xdist workers agree).
That node id given as an argument (``pytest --ort-provider=cpu ort_layouts::<case id>``, with
the ``--ort-*`` selection of the run that listed it) runs that case alone; an id the selection
does not hold is a usage error. An item passes when the provider's output matches the
descriptors bit for bit; a mismatch or an error fails it; an unsupported case is skipped and a
mismatch that a known provider deviation explains is an expected failure (xfail); with
``--ort-strict`` both fail. A provider that is not available here skips every item (fails them
with ``--ort-strict``); a provider name that ``ort-layouts validate`` refuses otherwise (unknown,
or ``azure``: no operator kernels), a list ``validate`` refuses (``--ort-ops=Transpose,,Pad``), a
device id the provider does not list and a batch size below 1 are usage errors. Each item
records its figures (mismatch count, first index, offsets, expected/actual bits, diagnosis) as
``user_properties``, which ``--junitxml`` writes as the testcase's properties; an item that does
not pass adds its DirectML operator and descriptors (``dml_operator``, ``descriptors``) and, on
the DirectML worker, the stack (``stack``); its failure text shows the provider, the device
(on the DirectML worker: its stack in short) and the operator and descriptors.

The provider runs the first batch once, before the first item (in pytest-xdist's controller:
the selection's first case, before the workers start): an error of the provider itself, such as
DirectML's stack check ("the DirectML stack is broken, so no case was run: ..."), stops the
session with that one line as a usage error, as ``validate`` stops; one that comes later fails
each remaining item with that line, without running it.

Cases run in batches: the item's neighbours of the same op and data type run in one session
and their results are cached for the process. Under pytest-xdist each item runs alone, unless
``--dist loadgroup`` keeps each op and data type on one worker (the items carry
``xdist_group`` marks), where a batch is again the group.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from _ort_layouts_pytestplugin import DEFAULTS, NODE_PREFIX

__all__ = ["CaseItem"]

_STATE = pytest.StashKey["_State"]()
_IDS = pytest.StashKey[list[str]]()  # the case ids given as ort_layouts::<case id> arguments

@dataclasses.dataclass
class _State:
    config: pytest.Config
    provider: str = ""
    unavailable: str = ""  # why the provider cannot run here, "" when it can
    broken: str = ""  # the provider's own error that stopped its runs, "" while none did
    items: list[CaseItem] = dataclasses.field(default_factory=list)
    results: dict[str, Any] = dataclasses.field(default_factory=dict)
    groups: dict[str, list[CaseItem]] = dataclasses.field(default_factory=dict)  # items by group, in order
    stack: dict[str, Any] | None = None  # the DirectML stack, once asked for

    @property
    def strict(self) -> bool:
        return bool(self.config.getoption("ort_strict"))

    def batch_size(self) -> int:
        size = int(self.config.getoption("ort_batch_size"))  # >= 1: checked at collection
        dist = getattr(self.config.option, "dist", "no")
        if dist not in (None, "no") and dist != "loadgroup":
            return 1
        return size

    def result_for(self, item: CaseItem) -> Any:
        """The item's result, its batch run when it has none yet.

        Raises:
            CaseFailed: the provider itself failed (this batch, or an earlier one): its message.
        """
        if self.broken:
            raise CaseFailed(self.broken)
        if item.case.id not in self.results:
            self._run_batch(item)
        return self.results[item.case.id]

    def run(self, cases: list[Any]) -> None:
        """Run ``cases`` and keep their results.

        Raises:
            CaseFailed: the provider itself failed (DirectML's stack check), before any case ran:
                its message, which every later item fails with (:attr:`broken`).
        """
        from ort_layouts._errors import ProviderError
        from ort_layouts.engine.runner import run_cases

        try:
            for result in run_cases(cases, provider=self.provider,
                                    device_id=int(self.config.getoption("ort_device_id")),
                                    optimize=bool(self.config.getoption("ort_optimize")),
                                    batch_size=max(1, len(cases))):
                self.results[result.case.id] = result
        except ProviderError as e:
            self.broken = " ".join(str(e).split())
            raise CaseFailed(self.broken) from None

    def start(self, first: CaseItem | list[Any]) -> None:
        """Run the first item's batch before any item runs (in pytest-xdist's controller, which
        has no items, the ``first`` cases).

        Raises:
            pytest.UsageError: the provider itself failed, with its message (validate's).
        """
        try:
            if isinstance(first, CaseItem):
                self.result_for(first)
            else:
                self.run(first)
        except CaseFailed:
            raise pytest.UsageError(f"ort_layouts: {self.broken}") from None

    def _run_batch(self, item: CaseItem) -> None:
        if not self.groups:
            for i in self.items:
                self.groups.setdefault(i.group, []).append(i)
        group = self.groups[item.group]
        size = self.batch_size()
        start = group.index(item) // size * size
        batch = [i.case for i in group[start:start + size] if i.case.id not in self.results]
        if item.case not in batch:
            batch = [item.case]
        self.run(batch)
        if item.case.id not in self.results:
            raise RuntimeError(f"the runner returned no result for {item.case.id}")

    def dml_stack(self) -> dict[str, Any]:
        """The DirectML stack the provider runs on ({} for another provider), asked once."""
        if self.stack is None:
            from ort_layouts.engine.session import dml_stack

            self.stack = dml_stack(self.provider)
        return self.stack


class CaseFailed(Exception):
    """A case that mismatched or errored (or was unsupported with --ort-strict)."""


def _compact(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _is_tensor(value: object) -> bool:
    return isinstance(value, Mapping) and "sizes" in value


def _tensor_text(desc: Mapping[str, Any]) -> str:
    strides = desc.get("strides")
    return (f"{desc.get('data_type', '?')} sizes {desc.get('sizes')} "
            f"strides {'packed' if strides is None else strides}, "
            f"{desc.get('total_tensor_size_in_bytes', '?')} bytes")


def descriptor_lines(descriptors: Mapping[str, Any]) -> list[str]:
    """A result's DirectML operator in a few lines: its name and fields other than tensors,
    then each tensor's data type, sizes, strides (in elements; ``packed`` when the descriptor
    gives none) and total bytes; [] for no descriptors.

    >>> descriptor_lines({"operator": "DML_OPERATOR_TILE", "repeats": [2],
    ...                   "input": {"data_type": "FLOAT32", "sizes": [3], "strides": [1],
    ...                             "total_tensor_size_in_bytes": 12},
    ...                   "output": {"data_type": "FLOAT32", "sizes": [6], "strides": None,
    ...                              "total_tensor_size_in_bytes": 24}})
    ['DML_OPERATOR_TILE repeats [2]', 'input: FLOAT32 sizes [3] strides [1], 12 bytes', \
'output: FLOAT32 sizes [6] strides packed, 24 bytes']
    """
    from ort_layouts.engine.result import operator_dict

    data = operator_dict(descriptors) or descriptors  # (an unnamed operator: its fields and tensors)
    if not data:
        return []
    fields, tensors = [], []
    for key, value in data.items():
        if key == "operator":
            continue
        if _is_tensor(value):
            tensors.append(f"{key}: {_tensor_text(value)}")
        elif isinstance(value, list) and value and all(map(_is_tensor, value)):
            tensors += [f"{key}[{i}]: {_tensor_text(v)}" for i, v in enumerate(value)]
        else:
            fields.append(f"{key} {value}")
    return [" ".join([str(data.get("operator", "DirectML operator")), ", ".join(fields)]).strip(), *tensors]


class CaseItem(pytest.Item):
    """One suite case as a pytest item."""

    def __init__(self, *, case: Any, state: _State, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.state = state
        self.group = f"{case.op}-{case.data_type.name.lower()}"

    def runtest(self) -> None:
        from ort_layouts.engine.result import Status
        from ort_layouts.reports.report import failure_text, result_figures

        state = self.state
        if state.unavailable:
            if state.strict:
                raise CaseFailed(state.unavailable)
            pytest.skip(state.unavailable)
        result = state.result_for(self)
        for name, value in result_figures(result).items():
            self.user_properties.append((name, value))
        if result.status is Status.PASS:
            return
        text = "\n".join([failure_text(result), *self._context(result)])
        if result.status is Status.UNSUPPORTED and not state.strict:
            pytest.skip(f"unsupported on {result.provider}: {result.message or 'no reason given'}")
        if result.status is Status.MISMATCH and result.known_issue and not state.strict:
            pytest.xfail(f"known issue: {failure_text(result)}")
        raise CaseFailed(text)

    def _context(self, result: Any) -> list[str]:
        """Where a result that did not pass ran and what DirectML was to do: lines for the
        failure text; the same as properties (``dml_operator``, ``descriptors``, ``stack``)."""
        lines = [f"  provider: {result.provider}" + (f" on {result.device}" if result.device else "")]
        stack = self.state.dml_stack()
        if stack:  # the device names it in short
            self.user_properties.append(("stack", _compact(stack)))
        descriptors = result.descriptors or {}
        if descriptors:
            operator, *tensors = descriptor_lines(descriptors)
            lines += [f"  {operator}", *(f"    {t}" for t in tensors)]
            from ort_layouts.engine.result import operator_dict

            operator = (operator_dict(descriptors) or {}).get("operator", "")
            self.user_properties.append(("dml_operator", str(operator)))
            self.user_properties.append(("descriptors", _compact(descriptors)))
        return lines

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            return f"{self.case.id}: {excinfo.value}"
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "ort_layouts", None, f"ort_layouts {self.case.id}"


class _Suite(pytest.Collector):
    def __init__(self, *, cases: list[Any], state: _State, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cases = cases
        self.state = state

    def collect(self) -> Iterator[CaseItem]:
        for case in self.cases:
            yield CaseItem.from_parent(self, name=case.id, case=case, state=self.state)


def _option_list(config: pytest.Config, option: str) -> tuple[Any, ...] | None:
    """``--ort-OPTION``'s comma list, read by the function that reads ``ort-layouts validate
    --OPTION`` (:func:`~ort_layouts.engine.selection.parse_selection_list`: one item or more, no
    empty item; ``ranks`` as ``1,2,4`` or ``1-4``); None when the option is not given.

    Raises:
        pytest.UsageError: a list ``validate`` refuses (``Transpose,,Pad``, ``,``, an empty
            value), naming the option.
    """
    from ort_layouts._errors import OrtLayoutsError
    from ort_layouts.engine.selection import parse_selection_list

    text = config.getoption(f"ort_{option}")
    if text is None:
        return None
    try:
        return parse_selection_list(option, text)
    except OrtLayoutsError as e:
        raise pytest.UsageError(f"ort_layouts: --ort-{option}: {e}") from e


def _provider(name: str) -> tuple[str, str]:
    """``(full name, "")`` for the provider ``--ort-provider`` names, resolved as
    ``ort-layouts validate --provider`` resolves it; ``("", why)`` for a provider this project
    knows that cannot run here (a :class:`~ort_layouts.ProviderUnavailableError`: its items are
    skipped, or fail with ``--ort-strict``).

    Raises:
        pytest.UsageError: a name ``validate`` refuses for any reason but the provider's absence
            here (an unknown name, a provider that cannot be validated such as ``azure``, a
            setting's bad value such as ``ORT_LAYOUTS_DML_TIMEOUT_S``).
    """
    from ort_layouts._errors import ProviderError, ProviderUnavailableError
    from ort_layouts.engine.session import resolve_validation_provider

    try:
        return resolve_validation_provider(name), ""
    except ProviderUnavailableError as e:
        return "", str(e)
    except ProviderError as e:
        raise pytest.UsageError(f"ort_layouts: --ort-provider: {e}") from e


def _given_selection(config: pytest.Config) -> str:
    """The selection options given other than at their defaults, as typed (``--ort-ops=Tile``)."""
    given = [f"--{dest.replace('_', '-')}={config.getoption(dest)}"
             for dest in ("ort_ops", "ort_dtypes", "ort_ranks", "ort_values", "ort_seed")
             if config.getoption(dest) != DEFAULTS[dest]]
    return " ".join(given) or "no --ort-ops, --ort-dtypes, --ort-ranks, --ort-values or --ort-seed"


def _named_cases(config: pytest.Config, cases: list[Any]) -> list[Any]:
    """The cases that ``ort_layouts::<case id>`` arguments name, in the suite's order; all of
    them when none is given.

    Raises:
        pytest.UsageError: an id the selection does not hold, with the ids closest to it.
    """
    wanted = config.stash.get(_IDS, [])
    if not wanted:
        return cases
    ids = [c.id for c in cases]
    known = set(ids)
    for name in wanted:
        if name not in known:
            close = difflib.get_close_matches(name, ids, n=3, cutoff=0.6)
            raise pytest.UsageError(
                f"ort_layouts: {NODE_PREFIX}{name} is no case of this selection ({len(ids)} cases of "
                f"{_given_selection(config)}); valid: a case id that --collect-only lists with the "
                "--ort-* options of the run that listed it" + (f", such as {close}" if close else ""))
    named = set(wanted)
    return [c for c in cases if c.id in named]


def _prepare(config: pytest.Config) -> tuple[_State, list[Any]]:
    """The run's state (its provider resolved) and its cases, each option checked.

    Raises:
        pytest.UsageError: an option's bad value, an empty selection, an
            ``ort_layouts::<case id>`` argument the selection does not hold.
    """
    from ort_layouts._errors import OrtLayoutsError
    from ort_layouts.engine.selection import select_cases

    state = _State(config)
    batch_size = config.getoption("ort_batch_size")
    if batch_size < 1:
        raise pytest.UsageError(
            f"ort_layouts: --ort-batch-size {batch_size} is not valid; valid: an integer >= 1")
    state.provider, state.unavailable = _provider(config.getoption("ort_provider"))  # a typo is no skip
    try:
        cases = select_cases(ops=_option_list(config, "ops"), dtypes=_option_list(config, "dtypes"),
                             ranks=_option_list(config, "ranks"), values=_option_list(config, "values"),
                             seed=config.getoption("ort_seed"))
    except OrtLayoutsError as e:
        raise pytest.UsageError(f"ort_layouts: {e}") from e
    if not cases:
        raise pytest.UsageError(
            "ort_layouts: the selection holds no cases (check --ort-ops, --ort-dtypes, --ort-ranks, "
            "--ort-values)")
    if not state.unavailable:
        from ort_layouts.engine.session import check_device_id

        try:
            check_device_id(state.provider, config.getoption("ort_device_id"))
        except OrtLayoutsError as e:
            raise pytest.UsageError(f"ort_layouts: --ort-device-id: {e}") from e
    return state, _named_cases(config, cases)


def _xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    """Take the ``ort_layouts::<case id>`` arguments out of pytest's (they name no file): the
    collection selects those cases. (pytest-xdist's workers read the command line again.)"""
    if not config.getoption("ort_provider"):
        return
    config.stash[_IDS] = [arg[len(NODE_PREFIX):] for arg in config.args if arg.startswith(NODE_PREFIX)]
    if config.stash[_IDS]:
        config.args[:] = [arg for arg in config.args if not arg.startswith(NODE_PREFIX)]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """In pytest-xdist's controller (which collects nothing): check the options and run the
    selection's first case once, before the workers start, so that a bad option or a broken
    provider is one usage error, not each worker's."""
    config = session.config
    if (not config.getoption("ort_provider") or not config.pluginmanager.hasplugin("dsession")
            or _xdist_worker(config)):
        return
    state, cases = _prepare(config)
    if state.unavailable or config.option.collectonly:
        return
    try:
        state.start(cases[:1])
    finally:
        from ort_layouts.engine import providers

        providers.close_dml_worker()  # the workers start their own


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("ort_provider"):
        return
    state, cases = _prepare(config)
    config.stash[_STATE] = state
    suite = _Suite.from_parent(session, name="ort_layouts", nodeid="ort_layouts", cases=cases, state=state)
    state.items = list(suite.collect())
    # tell the terminal (and anyone else listening) what was collected, as a file's collector would
    report = pytest.CollectReport(suite.nodeid, "passed", None, [*state.items])  # a list of Item | Collector
    config.hook.pytest_collectreport(report=report)
    if config.pluginmanager.hasplugin("xdist"):
        for item in state.items:
            item.add_marker(pytest.mark.xdist_group(name=item.group))
    items.extend(state.items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Run the first item's batch once before any item runs: a provider that fails itself
    (DirectML's stack check) stops the session with one usage error. (Under pytest-xdist the
    controller did this.)"""
    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None or state.unavailable or config.option.collectonly or _xdist_worker(config):
        return
    first = next((item for item in session.items if isinstance(item, CaseItem)), None)
    if first is not None:
        state.start(first)


def pytest_report_header(config: pytest.Config) -> str | None:
    """The provider as resolved (``auto``'s choice, a short name's full one), or why it cannot
    run here: the header comes before the collection, which resolves it again; a name it
    refuses is its usage error then, and the header names it as given."""
    name = config.getoption("ort_provider")
    if not name:
        return None
    state = config.stash.get(_STATE, None)
    if state is not None:
        provider, unavailable = state.provider, state.unavailable
    else:
        try:
            provider, unavailable = _provider(name)
        except pytest.UsageError:
            provider, unavailable = "", ""
    return f"ort_layouts: provider {provider or name}" + (
        f" (unavailable: {unavailable})" if unavailable else "")
