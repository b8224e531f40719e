"""Whether the onnxruntime-directml wheels ``ort-layouts setup dml`` pins are those PyPI
publishes: ``python scripts/check_pins.py [--index URL]``.

Setup checks a wheel's sha256 (:data:`~ort_layouts.engine.dml.stack.WHEEL_SHA256`) only when it
downloads it, and a run of the DirectML suite downloads three of the nine releases; a pin of
another release that is wrong (a typo, a file PyPI replaced) would first show on a user's
machine. This reads PyPI's simple index of onnxruntime-directml once (PEP 503: each file's link
ends in ``#sha256=<digest>``) and, for each pinned release, finds the win_amd64 wheel setup takes
(:func:`~ort_layouts.engine.dml.install.wheel_python`) and compares the digests.

Prints one line per pin (``ok``, ``MISMATCH`` with both digests, or ``MISSING``); exits 0 when
every pin matches, 1 when one does not, 2 when the index cannot be read. The DLLs inside the
wheels (``DIRECTML_DLL_SHA256``, ``ORT_DLL_SHA256``) are checked by setup as it extracts them.
"""

from __future__ import annotations

import argparse
import html.parser
import http.client
import sys
import urllib.parse
import urllib.request
from collections.abc import Mapping

from ort_layouts.engine.dml.install import wheel_python
from ort_layouts.engine.dml.stack import WHEEL_SHA256

PACKAGE = "onnxruntime-directml"
DEFAULT_INDEX = "https://pypi.org/simple/"


class _Links(html.parser.HTMLParser):
    """The ``href`` of each ``<a>`` of a PEP 503 project page."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [value for name, value in attrs if name == "href" and value]


def published_sha256(page: str) -> dict[str, str]:
    """File name -> sha256 of each file of a PEP 503 project page whose link carries one."""
    parser = _Links()
    parser.feed(page)
    digests = {}
    for href in parser.hrefs:
        url, _, fragment = href.partition("#")
        kind, _, digest = fragment.partition("=")
        if kind == "sha256" and digest:
            name = urllib.parse.unquote(url.rstrip("/").rsplit("/", 1)[-1])
            digests[name] = digest.lower()
    return digests


def wheel_name(version: str) -> str:
    """The win_amd64 wheel of onnxruntime-directml ``version`` that setup downloads."""
    tag = "cp" + wheel_python(version).replace(".", "")
    return f"onnxruntime_directml-{version}-{tag}-{tag}-win_amd64.whl"


def check(pins: Mapping[str, str], published: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(verdict, wheel name, detail) of each pinned release: "ok", "MISMATCH" or "MISSING"."""
    rows = []
    for version, pinned in pins.items():
        name = wheel_name(version)
        found = published.get(name)
        if found is None:
            rows.append(("MISSING", name, "not on the index"))
        elif found != pinned.lower():
            rows.append(("MISMATCH", name, f"pinned {pinned}, published {found}"))
        else:
            rows.append(("ok", name, pinned))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", default=DEFAULT_INDEX,
                        help=f"a PEP 503 simple index (default: {DEFAULT_INDEX})")
    args = parser.parse_args(argv)
    url = args.index.rstrip("/") + f"/{PACKAGE}/"
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            page = response.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException, ValueError) as e:  # URLError is an OSError
        print(f"check_pins: cannot read {url}: {e}", file=sys.stderr)
        return 2
    rows = check(WHEEL_SHA256, published_sha256(page))
    for verdict, name, detail in rows:
        print(f"{verdict:8} {name}  {detail}")
    return 0 if all(verdict == "ok" for verdict, _, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
