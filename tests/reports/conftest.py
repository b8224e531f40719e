"""Fixtures of the reports' tests."""

from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ort_layouts.reports.merge import MATRIX_HTML


class MatrixPage(HTMLParser):
    """A matrix.html as the tests read it.

    Attributes:
        cells: the class of each matrix cell (a ``td`` of class ``cell ...``), in order.
        titles: the title of each ``th`` that has one (the columns' headers).
        legend: the text of each column legend item (an ``li``).
        overlap: the lines (split at ``br``) of the element of class ``overlap``.
    """

    def __init__(self, page: str) -> None:
        super().__init__()
        self.cells: list[str] = []
        self.titles: list[str] = []
        self.legend: list[str] = []
        self.overlap: list[str] = []
        self._in_li = self._in_overlap = False
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "td" and "cell" in (found.get("class") or "").split():
            self.cells.append(found.get("class") or "")
        if tag == "th" and found.get("title"):
            self.titles.append(found["title"] or "")
        if tag == "li":
            self._in_li = True
            self.legend.append("")
        if ("class", "overlap") in attrs:
            self._in_overlap = True
            self.overlap.append("")
        elif tag == "br" and self._in_overlap:
            self.overlap.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "li":
            self._in_li = False
        if tag == "p":
            self._in_overlap = False

    def handle_data(self, data: str) -> None:
        if self._in_li:
            self.legend[-1] += data
        if self._in_overlap:
            self.overlap[-1] += data


@pytest.fixture
def matrix_page() -> Callable[[Path], MatrixPage]:
    """read(directory): the matrix.html that a merge wrote into ``directory``, parsed
    (:class:`MatrixPage`)."""
    return lambda directory: MatrixPage((directory / MATRIX_HTML).read_text(encoding="utf-8"))
