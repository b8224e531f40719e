"""pytest plugin: ``pytest --ort-provider=NAME`` runs the layout suite as test items.

pytest loads the entry point ``_ort_layouts_pytestplugin`` in every run wherever ort_layouts
is installed; it adds the ``--ort-*`` options and registers this module only when
``--ort-provider`` is given, so other test runs neither import ort_layouts nor change.

With ``--ort-provider``, one item per suite case is collected (node id
``ort_layouts::<case id>``, in the suite's deterministic order, so pytest-xdist workers agree).
An item passes when the provider's output matches the descriptors bit for bit; a mismatch or an
error fails it; an unsupported case is skipped and a mismatch that a known provider deviation
explains is an expected failure (xfail); with ``--ort-strict`` both fail. A provider that is
not available here skips every item (fails them with ``--ort-strict``); a provider name that
``ort-layouts validate`` refuses otherwise (unknown, or ``azure``: no operator kernels), a list
``validate`` refuses (``--ort-ops=Transpose,,Pad``), a device id the provider does not list and a
batch size below 1 are usage errors. Each
item records its figures (mismatch count, first index, offsets, expected/actual bits, diagnosis) as
``user_properties``, which ``--junitxml`` writes as the testcase's properties.

Cases run in batches: the item's neighbours of the same op and data type run in one session
and their results are cached for the process. Under pytest-xdist each item runs alone, unless
``--dist loadgroup`` keeps each op and data type on one worker (the items carry
``xdist_group`` marks), where a batch is again the group.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

__all__ = ["CaseItem"]

_STATE = pytest.StashKey["_State"]()


@dataclasses.dataclass
class _State:
    config: pytest.Config
    provider: str = ""
    unavailable: str = ""  # why the provider cannot run here, "" when it can
    items: list[CaseItem] = dataclasses.field(default_factory=list)
    results: dict[str, Any] = dataclasses.field(default_factory=dict)
    groups: dict[str, list[CaseItem]] = dataclasses.field(default_factory=dict)  # items by group, in order

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
        if item.case.id not in self.results:
            self._run_batch(item)
        return self.results[item.case.id]

    def _run_batch(self, item: CaseItem) -> None:
        from ort_layouts.engine.runner import run_cases

        if not self.groups:
            for i in self.items:
                self.groups.setdefault(i.group, []).append(i)
        group = self.groups[item.group]
        size = self.batch_size()
        start = group.index(item) // size * size
        batch = [i.case for i in group[start:start + size] if i.case.id not in self.results]
        if item.case not in batch:
            batch = [item.case]
        for result in run_cases(batch, provider=self.provider,
                                device_id=int(self.config.getoption("ort_device_id")),
                                optimize=bool(self.config.getoption("ort_optimize")),
                                batch_size=max(1, len(batch))):
            self.results[result.case.id] = result
        if item.case.id not in self.results:
            raise RuntimeError(f"the runner returned no result for {item.case.id}")


class CaseFailed(Exception):
    """A case that mismatched or errored (or was unsupported with --ort-strict)."""


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
        text = failure_text(result)
        if result.status is Status.UNSUPPORTED and not state.strict:
            pytest.skip(f"unsupported on {result.provider}: {result.message or 'no reason given'}")
        if result.status is Status.MISMATCH and result.known_issue and not state.strict:
            pytest.xfail(f"known issue: {text}")
        raise CaseFailed(text)

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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("ort_provider"):
        return
    from ort_layouts._errors import OrtLayoutsError
    from ort_layouts.engine.selection import select_cases

    state = _State(config)
    config.stash[_STATE] = state
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
    suite = _Suite.from_parent(session, name="ort_layouts", nodeid="ort_layouts", cases=cases, state=state)
    state.items = list(suite.collect())
    # tell the terminal (and anyone else listening) what was collected, as a file's collector would
    report = pytest.CollectReport(suite.nodeid, "passed", None, [*state.items])  # a list of Item | Collector
    config.hook.pytest_collectreport(report=report)
    if config.pluginmanager.hasplugin("xdist"):
        for item in state.items:
            item.add_marker(pytest.mark.xdist_group(name=item.group))
    items.extend(state.items)


def pytest_report_header(config: pytest.Config) -> str | None:
    if not config.getoption("ort_provider"):
        return None
    state = config.stash.get(_STATE, None)
    if state is None:
        return f"ort_layouts: provider {config.getoption('ort_provider')}"
    return f"ort_layouts: provider {state.provider or config.getoption('ort_provider')}" + (
        f" (unavailable: {state.unavailable})" if state.unavailable else "")
