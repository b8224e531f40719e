"""README.md (and the pages of docs/ it links to) against the code: its command table, its option
reference, its command lines, its case ids, its Python example's output, its error lines and what
it says of report directories. Each test fails when the README drifts from the code."""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import re
import shlex
from functools import cache
from pathlib import Path

import pytest

from ort_layouts.frontends.cli import COMMANDS, EXIT_NOTHING, build_parser, main, parse_command_line

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# README and the pages of docs/ it links to: their command lines and case ids are checked alike
DOCS = "\n".join([README, *(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))])
Cap = pytest.CaptureFixture[str]


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOCS, re.S)


def _console_commands() -> list[tuple[str, list[str]]]:
    """Each ``$ ort-layouts ...`` line of the console blocks with the output lines under it."""
    found = []
    for block in _blocks("console"):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ ort-layouts "):
                output = []
                for later in lines[i + 1:]:
                    if later.startswith("$ "):
                        break
                    output.append(later)
                found.append((line[2:].rstrip(" &"), output))
    return found


# the program as a command line names it: its script, or the package run as a module
PROGRAM = r"(?:ort-layouts|python3? -m ort_layouts)"


def _as_script(line: str) -> str:
    """``python -m ort_layouts ARGS`` as ``ort-layouts ARGS`` (the same program)."""
    return re.sub(rf"^{PROGRAM}(?= )", "ort-layouts", line)


def _all_command_lines() -> list[str]:
    """Every ort-layouts command line in README and docs/: console blocks, sh blocks and inline code,
    those that run it as ``python -m ort_layouts`` too."""
    # the error examples are bad on purpose: test_console_examples_print_what_they_show runs them
    lines = [c for c, out in _console_commands() if not (out and out[0].startswith("ort-layouts: error:"))]
    for block in _blocks("sh") + [b.replace("\\", "/") for b in _blocks("bat")]:
        for line in block.splitlines():
            for part in line.split("&&"):
                part = part.split("#")[0].strip()
                if re.match(rf"{PROGRAM} ", part):
                    lines.append(_as_script(part))
    for span in re.findall(rf"`({PROGRAM} [^`]+)`", DOCS):
        lines.append(_as_script(" ".join(span.split())))
    return lines


@cache
def _suite_ids() -> frozenset[str]:
    from ort_layouts.engine.suite import standard_suite

    return frozenset(c.id for c in standard_suite())


def test_the_command_table_lists_every_command() -> None:
    table = README.split("| command | what it does |")[1].split("\n\n")[0]
    names = {row.split("|")[1].strip().strip("`").split()[0] for row in table.strip().splitlines()[1:]}
    assert names == {c.name for c in COMMANDS}


@pytest.mark.parametrize("line", sorted(set(_all_command_lines())))
def test_each_command_line_parses(line: str) -> None:
    """Every command line README shows is one the parser takes (its arguments exist and their
    values have the right form); ``--help`` and ``--version`` print and end as argparse has them."""
    argv = shlex.split(line)[1:]
    if {"--help", "-h", "--version"} & set(argv):
        with pytest.raises(SystemExit) as ended, contextlib.redirect_stdout(io.StringIO()):
            parse_command_line(argv)
        assert ended.value.code == 0
        return
    parse_command_line(argv)


def test_readme_shows_many_command_lines() -> None:
    assert len(set(_all_command_lines())) >= 25


def test_command_lines_run_as_a_module_are_checked_too() -> None:
    """``python3 -m ort_layouts validate ...`` (the GPU carry's command) is read as the script's."""
    assert "ort-layouts validate --provider dml --report reports-dml/" in _all_command_lines()
    assert _as_script("python -m ort_layouts describe --shape 3") == "ort-layouts describe --shape 3"
    assert _as_script("python -m ort_layoutsx describe") == "python -m ort_layoutsx describe"


CASE_ID = re.compile(r"\b(?:Transpose|Expand|Pad)-(?:float|int|uint)\d+-[0-9x]+-[A-Za-z0-9.\-]*[A-Za-z0-9]")


def test_case_ids_are_real() -> None:
    """A case id with a seed (``-s<digits>``) is one of the standard suite; one without names the
    cases whose ids it begins (the seed is derived from the case's content, so README cannot
    show one of its own making)."""
    ids = sorted(set(CASE_ID.findall(DOCS)))
    assert len(ids) >= 4
    suite = _suite_ids()
    for cid in ids:
        if re.search(r"-s\d+$", cid):
            assert cid in suite, f"README names {cid}, which the standard suite does not have"
        else:
            assert any(s.startswith(cid + "-") for s in suite), f"README names {cid}, which no case has"


def test_python_api_example_prints_what_it_says() -> None:
    block = README.split("## Python API")[1]
    code = _blocks("python")[[b in block for b in _blocks("python")].index(True)]
    comments = [line for line in code.splitlines() if line.startswith("#")]
    expected = [line[2:] if line.startswith("# ") else "" for line in comments]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().splitlines() == expected


def _run(line: str, capsys: Cap) -> tuple[int, list[str]]:
    code = main(shlex.split(line)[1:])
    out, err = capsys.readouterr()
    return code, (out + err).splitlines()


DETERMINISTIC = ("ort-layouts describe ", "ort-layouts validate --dtypes float32,,int8",
                 "ort-layouts validate --provider cpu --ops Expand --ranks 8")


@pytest.mark.parametrize("line, shown", [c for c in _console_commands() if c[0].startswith(DETERMINISTIC)],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_console_examples_print_what_they_show(line: str, shown: list[str], capsys: Cap) -> None:
    """The examples that do not depend on the machine: every line shown ("..." skips some) is
    printed, in that order; an error example is the one line printed."""
    code, actual = _run(line, capsys)
    lines = [x for x in shown if x.strip() and x.strip() != "..."]
    if any(x.startswith("ort-layouts: error:") for x in lines):
        assert code == 2 and actual == lines
        return
    if any(x.startswith("ort-layouts: nothing to") for x in lines):
        assert code == EXIT_NOTHING and actual == lines
        return
    assert code == 0
    position = 0
    for expected in lines:
        assert expected.rstrip() in [a.rstrip() for a in actual[position:]], expected
        position = [a.rstrip() for a in actual].index(expected.rstrip(), position) + 1


def test_unavailable_provider_example(capsys: Cap) -> None:
    """The DirectML example as a machine without DirectML prints it (tests run without it)."""
    shown = next(out for c, out in _console_commands() if c == "ort-layouts validate --provider dml"
                 and out[0].startswith("ort-layouts: error: argument"))
    code, actual = _run("ort-layouts validate --provider dml", capsys)
    assert code == 2 and len(actual) == 1
    assert actual[0].split("; available:")[0] == shown[0].split("; available:")[0]


def test_exit_statuses_are_documented() -> None:
    table = README.split("Exit status:")[1].split("\n\n", 2)[1]
    import signal

    statuses = [[int(n) for n in row.split("|")[1].split(",")] for row in table.splitlines()[2:]]
    assert statuses == [[0], [1], [2], [EXIT_NOTHING], [128 + signal.SIGINT],
                        [128 + signal.SIGTERM, 128 + signal.SIGHUP]]


def test_what_readme_says_of_report_directories() -> None:
    from ort_layouts.reports.lock import LOCK_FILE
    from ort_layouts.reports.merge import SHARDS_FILE, shard_directory
    from ort_layouts.reports.writer import ReportWriter

    interval = inspect.signature(ReportWriter).parameters["interval_s"].default
    assert f"rewritten at most every {interval:g} s" in " ".join(README.split())
    assert "while the run goes and when it ends" not in " ".join(README.split())
    assert f"| `{LOCK_FILE}` |" in README and f"`{SHARDS_FILE}`" in README
    assert f"`DIR/{shard_directory('', (1, 2)).name.replace('1-of-2', 'K-of-N')}/`" in README
    import tempfile

    from ort_layouts import ReportError
    from ort_layouts.reports.lock import DirectoryLock

    with tempfile.TemporaryDirectory() as directory, DirectoryLock(directory), \
            pytest.raises(ReportError) as refused:
        DirectoryLock(directory)
    for phrase in ("is in use by another run: ", "wait for it to end, or use another report directory"):
        assert phrase in str(refused.value) and phrase in " ".join(README.split())


def test_the_real_models_table_counts_what_validate_model_makes() -> None:
    """Each row of README's real-models table: layout nodes, distinct cases and the per-op
    nodes / cases are what ``model_coverage`` counts for that file of models/real/."""
    from ort_layouts.models.extract import model_coverage

    rows = re.findall(r"^\| [^|]+\(`(\w+)\.onnx`\) \| (\d+) \| (\d+) \| ([^|]+) \|", README, re.M)
    files = {p.stem: p for p in (Path(__file__).resolve().parents[1] / "models" / "real").glob("*.onnx")}
    shown = {name: row for name, *row in rows}
    assert sorted(shown) == sorted(files) and len(files) == 6
    for name, (nodes, distinct, per_op) in shown.items():
        coverage = {c.op_type: c for c in model_coverage(files[name])}
        assert sum(c.nodes for c in coverage.values()) == int(nodes), name
        assert sum(c.distinct_cases for c in coverage.values()) == int(distinct), name
        for op, n, k in re.findall(r"(\w+) (\d+)/(\d+)", per_op):
            assert (coverage[op].nodes, coverage[op].distinct_cases) == (int(n), int(k)), (name, op)


def test_the_validate_model_example_prints_its_coverage_line(capsys: Cap) -> None:
    line, shown = next((c, out) for c, out in _console_commands()
                       if c.startswith("ort-layouts validate --model"))
    assert main(shlex.split(line)[1:]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == shown[0]
    assert shown[1].startswith("22 cases on CPUExecutionProvider") and "22 passed" in shown[1]


def _shown(command_start: str) -> list[str]:
    (output,) = [out for line, out in _console_commands() if line.startswith(command_start)]
    return output


def test_the_case_counts_shown_are_the_selections() -> None:
    """The validate, shard and export examples show machine-dependent timings, but their case
    counts are the selection's: each is counted here from the suite."""
    from ort_layouts.engine.selection import select_cases

    suite = len(select_cases())
    three = len(select_cases(ops=("Transpose", "Expand", "Pad")))
    assert f"{suite} cases on " in "\n".join(_shown("ort-layouts validate --provider cpu --report reports/"))
    shard = "\n".join(_shown("ort-layouts validate --provider cpu --ops Transpose,Expand,Pad "
                             "--report reports --shard 2/2"))
    assert f"{three // 2} cases on " in shard  # shard 2 of an even count: half of it
    assert f"{three} cases on " in "\n".join(_shown("ort-layouts merge --shards reports"))
    exported = len(select_cases(ops=("Transpose",), dtypes=("float16",), ranks=(3,)))
    assert f"wrote {exported} test directories" in "\n".join(_shown("ort-layouts export --out cases/"))


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_to_docs_name_pages_and_headings_that_exist() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)(?:#([^)]+))?\)", README)
    assert len(links) >= 4
    for page, anchor in links:
        path = ROOT / page
        assert path.is_file(), f"README links to {page}, which does not exist"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.M)
            assert anchor in {_slug(h) for h in headings}, f"{page} has no heading #{anchor}"
    back = re.findall(r"\]\(\.\./([^)#]+)", (ROOT / "docs" / "results.md").read_text(encoding="utf-8"))
    assert back and all((ROOT / target).is_file() for target in back)


# ---- the option reference: README's tables of every command's options, held to the parser ----
REFERENCE_HEADING = "### Option reference"


def _option_reference(text: str = README) -> str:
    """The option reference: the text under its heading up to the next heading of its level or above."""
    start = text.index(f"\n{REFERENCE_HEADING}\n") + len(REFERENCE_HEADING) + 2
    end = re.search(r"^#{1,3} ", text[start:], re.M)
    return text[start:start + end.start()] if end else text[start:]


def _reference_blocks(section: str) -> dict[str, tuple[str, list[list[str]]]]:
    """Each command's part of the option reference (``**`name`** ...`` and its table): its lead
    line (what follows the name, up to the table) and the table's rows, as lists of cells."""
    parts = re.split(r"^\*\*`([\w-]+)`\*\*", section, flags=re.M)
    blocks: dict[str, tuple[str, list[list[str]]]] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        assert name not in blocks, f"the option reference has two parts for {name}"
        lead, _, table = body.partition("\n| option | default | meaning |\n| --- | --- | --- |\n")
        rows = [[cell.strip() for cell in line.strip()[1:-1].split("|")]
                for line in table.splitlines() if line.startswith("|")]
        blocks[name] = (" ".join(lead.split()), rows)
    return blocks


def _row_option(row: list[str]) -> str:
    """The option a row of the reference is about: the first ``--name`` of its first cell."""
    found = re.match(r"`(--[a-z][a-z0-9-]*)( [^`]+)?`$", row[0])
    assert found, f"a row of the option reference names no option first: {row[0]!r}"
    return found.group(1)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _documented_options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """A parser's long options with their actions, but ``--help`` (every command has it) and those
    ``--help`` does not show (``merge --strict``, refused with its reason)."""
    return {s: a for a in parser._actions if a.help != argparse.SUPPRESS
            for s in a.option_strings if s.startswith("--") and s != "--help"}


def _default_shown(command: str, action: argparse.Action) -> str | None:
    """The default an option's row must show, as the code has it; None where it has none to show
    (a flag, an option off or empty unless given)."""
    from ort_layouts.frontends.cli import _BENCH_ARGUMENTS

    default = action.default
    if command == "bench" and action.dest in _BENCH_ARGUMENTS:  # filled in when the command runs
        default = _BENCH_ARGUMENTS[action.dest][2]
    if default is None or isinstance(default, bool) or default == []:
        return None
    return ",".join(default) if isinstance(default, tuple) else str(default)


PARSER = build_parser()
COMMAND_PARSERS = _subparsers(PARSER)
REFERENCE = _reference_blocks(_option_reference())


def test_the_option_reference_has_a_part_for_every_command() -> None:
    assert list(REFERENCE) == [c.name for c in COMMANDS]


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_the_option_reference_names_every_option_of_the_command_and_no_other(command: str) -> None:
    """Every long option the command's parser takes has its row, and every row names an option the
    parser takes, once: an option added, renamed or removed fails here until README says so."""
    options = _documented_options(COMMAND_PARSERS[command])
    rows = [_row_option(row) for row in REFERENCE[command][1]]
    assert len(rows) == len(set(rows)), f"README's {command} reference names an option twice: {rows}"
    missing = sorted(set(options) - set(rows))
    unknown = sorted(set(rows) - set(options))
    assert not missing and not unknown, (f"README's option reference of {command} lacks {missing} and names "
                                         f"{unknown}, which its parser does not take")


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_each_option_row_shows_its_argument_and_its_default(command: str) -> None:
    """A row writes an option that takes a value with its argument (``--seed N``) and a flag
    alone; its default cell shows the default the code gives it."""
    options = _documented_options(COMMAND_PARSERS[command])
    for row in REFERENCE[command][1]:
        assert len(row) == 3, row
        action = options[_row_option(row)]
        takes_value = action.nargs != 0
        assert (" " in row[0]) == takes_value, (
            f"{command} {row[0]}: its argument is {'missing' if takes_value else 'extra'}")
        if action.required:
            assert row[1] == "required", row
        default = _default_shown(command, action)
        if default is not None:
            assert re.search(rf"(?<![\w.]){re.escape(default)}(?![\w.])", row[1], re.I), (
                f"{command} {row[0]}: the default is {default!r}, README says {row[1]!r}")


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_the_option_reference_names_the_command_s_positional_arguments(command: str) -> None:
    lead = REFERENCE[command][0]
    for action in COMMAND_PARSERS[command]._actions:
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
            names = list(action.choices) if action.choices else [action.metavar or action.dest]
            for name in names:
                shown = re.search(rf"(?<![\w-]){re.escape(str(name))}(?![\w-])", lead, re.I)
                assert shown, f"README's option reference of {command} does not name {name}: {lead!r}"


def test_every_option_the_option_reference_writes_is_one_the_program_takes() -> None:
    """The options in the reference's prose and meanings too (``validate --dtypes``, ``--version``):
    each is the program's or one of its commands'."""
    known = set(_documented_options(PARSER)) | {"--help"}
    for p in COMMAND_PARSERS.values():
        known |= set(_documented_options(p))
    written = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", _option_reference()))
    assert not written - known, f"README's option reference writes {sorted(written - known)}, no option"
    assert set(_documented_options(PARSER)) <= written  # --version


def test_the_option_reference_links_to_headings_that_exist() -> None:
    anchors = re.findall(r"\]\(#([^)]+)\)", _option_reference())
    assert len(anchors) >= 5
    headings = {_slug(h) for h in re.findall(r"^#+ (.+)$", README, re.M)}
    assert sorted(set(anchors) - headings) == []


def test_the_option_reference_is_read_as_written() -> None:
    """The reader on a hand-written reference: a row left out, or one the parser lacks, is seen."""
    text = ("intro\n\n### Option reference\n\nEvery option; `--version`.\n\n**`merge`** `REPORT...`\n\n"
            "| option | default | meaning |\n| --- | --- | --- |\n| `--out DIR` | print only | where |\n"
            "| `--json` | table | as JSON |\n\n**`setup`** `dml`\n\n"
            "| option | default | meaning |\n| --- | --- | --- |\n| `--mesa {22,25}` | 25 | lavapipe |\n\n"
            "## Next\n\n**`export`**\n")
    blocks = _reference_blocks(_option_reference(text))
    assert list(blocks) == ["merge", "setup"]
    assert blocks["merge"][0] == "`REPORT...`" and blocks["setup"][0] == "`dml`"
    assert [_row_option(r) for r in blocks["merge"][1]] == ["--out", "--json"]
    assert blocks["setup"][1] == [["`--mesa {22,25}`", "25", "lavapipe"]]
    merge = set(_documented_options(COMMAND_PARSERS["merge"]))
    assert merge - {"--out", "--json"} == {"--shards", "--force"}  # what the test above would name


def test_the_webgpu_extra_installs_nothing_on_windows() -> None:
    """README: the WebGPU extra installs the plugin EP on Linux and macOS, and nothing on Windows,
    where the package takes onnxruntime-directml, which cannot sit beside the plugin EP's
    onnxruntime (both install the ``onnxruntime`` module)."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def installed(requirements: list[str], platform: str) -> list[str]:
        return [r.name for r in map(Requirement, requirements)
                if r.marker is None or r.marker.evaluate({"sys_platform": platform})]

    webgpu = project["optional-dependencies"]["webgpu"]
    assert installed(webgpu, "win32") == []
    for platform in ("linux", "darwin"):
        assert "onnxruntime-ep-webgpu" in installed(webgpu, platform)
    assert "onnxruntime-directml" in installed(project["dependencies"], "win32")
    text = " ".join(README.split())
    assert "The WebGPU plugin EP (Vulkan on Linux, Metal on macOS) comes with an extra. On Windows the " \
           "extra installs nothing" in text
