"""The counts README.md writes in words against the library: each "all nine releases" of the
DirectML release matrix is the number of releases :data:`DIRECTML_WHEELS` pins, and the matrix's
command lines name every one of them, so that adding or dropping a release cannot leave the README
behind; every release written after ``--dml-version`` is one it pins; and ``--max-elements``'
limit is :data:`MAX_DRAWN_ELEMENTS`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ort_layouts.engine.dml.stack import DIRECTML_WHEELS
from ort_layouts.reports.render import DEFAULT_MAX_ELEMENTS, MAX_DRAWN_ELEMENTS

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
SECTION = "### DirectML releases side by side"

NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
                "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20}
_COUNT = rf"({'|'.join(NUMBER_WORDS)}|\d+)"


def _number(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS[word.lower()]


def _section(text: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of any level."""
    start = text.index(heading) + len(heading)
    end = re.search(r"^#", text[start:], re.M)
    return text[start:start + end.start()] if end else text[start:]


def release_count_claims(text: str) -> list[tuple[str, int]]:
    """Each phrase of ``text`` that counts every DirectML release, with its number: "all N
    releases" anywhere, and in the release matrix's section "the N releases" and "all N" that
    ends a clause ("pass ... under all nine."). A count of some releases ("three releases", CI's
    subset) or of something else ("all three summaries") is no claim of all."""
    section = _section(text, SECTION)
    found = [*re.finditer(rf"\ball\s+{_COUNT}\s+(?:DirectML\s+)?releases\b", text, re.I),
             *re.finditer(rf"\bthe\s+{_COUNT}\s+releases\b", section, re.I),
             *re.finditer(rf"\ball\s+{_COUNT}(?=\s*[.,;:)]|\s*$)", section, re.I | re.M)]
    return [(" ".join(m.group(0).split()), _number(m.group(1))) for m in found]


def matrix_release_lists(text: str) -> list[list[str]]:
    """The releases each ``--dml-version`` of the matrix's command lines (the section's first
    ``sh`` block) names, commas or spaces between them."""
    block = re.search(r"```sh\n(.*?)```", _section(text, SECTION), re.S)
    assert block, f"no sh block under {SECTION!r}"
    return [re.split(r"[,\s]+", m.group(1).strip()) for m in
            re.finditer(r"--dml-version((?:[\s,]+\d+\.\d+\.\d+)+)", block.group(1))]


def release_wheels(text: str) -> dict[str, str]:
    """The section's "DirectML 1.9.1 from onnxruntime-directml 1.13.1" pairs ("1.9.1 from
    1.13.1, 1.10.1 from 1.14.1, ...")."""
    return dict(re.findall(r"(\d+\.\d+\.\d+)\s+from\s+(\d+\.\d+\.\d+)", _section(text, SECTION)))


# what may follow --dml-version: a release (digits and dots), or a placeholder (V, V1, V[,V...], ...)
_DML_VERSION_ARGS = re.compile(r"--dml-version((?:[\s,]+(?:\d[\d.]*\d|V\d*(?:\[,V\.\.\.\])?|\.\.\.))+)")


def dml_version_releases(text: str) -> list[str]:
    """Every release written after a ``--dml-version`` anywhere in ``text``, commas or spaces
    between them; placeholders (``V``, ``V1,V2,...``, ``V[,V...]``) are left out."""
    items = (item for m in _DML_VERSION_ARGS.finditer(text) for item in re.split(r"[\s,]+", m.group(1)))
    return [item for item in items if item[:1].isdigit()]


def max_elements_limits(text: str) -> list[tuple[int, int]]:
    """Each "drawn up to D elements; `--max-elements N` draws larger ones, up to M": (D, M)."""
    return [(int(d.replace(",", "")), int(m.replace(",", ""))) for d, m in re.findall(
        r"drawn up to (\d[\d,]*) elements;\s+`--max-elements N` draws larger ones,\s+up to (\d[\d,]*\d)",
        text)]


def _release_order(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_every_count_of_all_directml_releases_is_the_number_the_library_pins() -> None:
    claims = release_count_claims(README)
    # the README says it three times today ("of all nine releases", "The nine releases", "under
    # all nine"): a test that found none would check nothing
    assert len(claims) >= 3, claims
    wrong = [(phrase, n) for phrase, n in claims if n != len(DIRECTML_WHEELS)]
    assert not wrong, f"README.md counts {wrong}; the library pins {len(DIRECTML_WHEELS)} DirectML releases"


def test_the_release_matrix_commands_name_every_release_in_order() -> None:
    lists = matrix_release_lists(README)
    assert len(lists) >= 2, lists  # setup dml, and validate over them
    every = sorted(DIRECTML_WHEELS, key=_release_order)
    for releases in lists:
        assert releases == every


def test_the_wheel_each_release_comes_from_is_the_one_setup_takes_it_from() -> None:
    assert release_wheels(README) == DIRECTML_WHEELS


def test_every_release_written_after_dml_version_is_one_the_library_pins() -> None:
    releases = dml_version_releases(README)
    # the matrix's command lines name them all, and the prose names some: a reader that found
    # fewer than the matrix would check nothing
    assert len(releases) >= 2 * len(DIRECTML_WHEELS), releases
    unknown = sorted({r for r in releases if r not in DIRECTML_WHEELS}, key=_release_order)
    assert not unknown, f"README.md names --dml-version {unknown}; the library pins {sorted(DIRECTML_WHEELS)}"


def test_the_max_elements_limit_is_the_one_the_library_draws_up_to() -> None:
    assert max_elements_limits(README) == [(DEFAULT_MAX_ELEMENTS, MAX_DRAWN_ELEMENTS)]
    assert MAX_DRAWN_ELEMENTS == 65_536  # the README writes it "65,536"


def test_releases_and_limits_are_read_from_the_words_as_written() -> None:
    text = ("`ort-layouts setup dml --dml-version V[,V...]` and `--dml-version V1,V2,...` take\n"
            "(`--dml-version 1.12.0`); `setup dml --dml-version 1.9.1 1.13.1,1.15.4 --report r/`;\n"
            "--dml-version V --dml-version 1.12 and --dml-version 2.0.0,\n3.1.4 wrapped.\n"
            "Pictures are drawn up to 512 elements; `--max-elements N` draws larger ones, up to 65,536 (a\n")
    assert dml_version_releases(text) == ["1.12.0", "1.9.1", "1.13.1", "1.15.4", "1.12", "2.0.0",
                                          "3.1.4"]
    assert max_elements_limits(text) == [(512, 65536)]


def test_the_claims_are_read_from_the_words_as_written() -> None:
    """The reader itself, on a hand-written text: a drifted count is read as what it says."""
    text = ("Pins are compared for all eight releases.\n\n"
            f"{SECTION}\n\n"
            "Each DLL from its wheel (1.9.1 from 1.13.1, 1.10.1\nfrom 1.14.1); `--dml-version 1.12.0` "
            "alone.\n\n"
            "```sh\nort-layouts setup dml --dml-version 1.9.1 1.10.1\n"
            "ort-layouts validate --provider dml --dml-version 1.9.1,1.10.1 --report r/\n```\n\n"
            "The ten releases side by side; the six real models pass under all\nten. CI runs three "
            "releases,\nin all three summaries.\n\n## Next\n\nunder all four.\n")
    assert release_count_claims(text) == [("all eight releases", 8), ("The ten releases", 10),
                                          ("all ten", 10)]
    assert matrix_release_lists(text) == [["1.9.1", "1.10.1"], ["1.9.1", "1.10.1"]]
    assert release_wheels(text) == {"1.9.1": "1.13.1", "1.10.1": "1.14.1"}


@pytest.mark.parametrize(("word", "number"), [("nine", 9), ("Nine", 9), ("twelve", 12), ("9", 9)])
def test_number_words(word: str, number: int) -> None:
    assert _number(word) == number
