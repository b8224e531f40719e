"""main() turns an OverflowError or a MemoryError that no check caught into one error line and
exit status 2, as it does every other error, never a traceback."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ort_layouts.frontends import cli
from ort_layouts.frontends.cli import main

Cap = pytest.CaptureFixture[str]


def _numpy_allocation(args: Any) -> Any:
    """What describe does, replaced by an allocation no machine holds (numpy's own MemoryError)."""
    return np.empty(2**62, np.uint8)


def _index_overflow(args: Any) -> Any:
    """What describe does, replaced by a length past a C ssize_t (Python's own OverflowError)."""
    return len(range(2**70))


@pytest.mark.parametrize("work, line", [
    (_numpy_allocation, "ort-layouts: error: the input is too large for this machine's memory; use smaller "
                        "shapes or counts"),
    (_index_overflow, "ort-layouts: error: a number is too large to work with: Python int too large to "
                      "convert to C ssize_t"),
], ids=["MemoryError", "OverflowError"])
def test_an_uncaught_overflow_or_memory_error_is_one_line_and_exit_2(
        work: Any, line: str, monkeypatch: pytest.MonkeyPatch, capsys: Cap) -> None:
    with pytest.raises((MemoryError, OverflowError)):  # the errors are real ones
        work(None)
    monkeypatch.setattr(cli, "_describe_descriptors", work)
    assert main(["describe", "--shape", "3,4"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [line]
