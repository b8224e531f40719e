"""What the front ends' tests share: a text stream that says it is a terminal."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal() -> Callable[[], io.StringIO]:
    """Makes a new text stream that keeps what is written and says it is a terminal (isatty)."""
    return _Terminal
