"""The ``ort-layouts`` command line (also ``python -m ort_layouts``).

Each subcommand is a :class:`Command`: a name, a help line, a function that adds its
arguments and a function that runs it and returns the exit status. Adding one is a matter of
writing those two functions and appending to :data:`COMMANDS`. Subcommands import the engine
lazily, so a piece that is missing or broken fails that subcommand alone.

Every argument is checked before any work is done and before any file is written: values,
their combinations, model files (present, not empty, ONNX), output paths (writable), the
provider, its device index and its options. A bad one is one line on stderr,
``ort-layouts: error: ...``, naming the value and the valid choices, and exit status 2.

Exit status: 0 success; 1 validation failures (or an incomplete report); 2 bad usage or setup
(one line on stderr, never a traceback); 3 nothing to do (the selection or the model holds no
case; one line on stderr, nothing written); 130 interrupted.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import dataclasses
import functools
import io
import json
import os
import re
import shlex
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar

from ort_layouts._errors import OrtLayoutsError, ProviderError, ReportError
from ort_layouts._startup import (
    PROG,
    STOP_SIGNALS,
    exit_now,
    hurry,
    is_python_default,
    is_start_guard,
    stop_text,
)

if TYPE_CHECKING:  # the models (and onnx) are imported by the commands that read one
    from ort_layouts.descriptors.dtypes import DataType
    from ort_layouts.models.extract import ModelFile

__all__ = ["COMMANDS", "EXIT_NOTHING", "Command", "UsageError", "bench_main", "build_parser", "command_line",
           "main", "parse_command_line"]

EXIT_NOTHING = 3  # the selection or the model holds nothing to do
T = TypeVar("T")


class UsageError(Exception):
    """A bad command line (exit status 2)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Command:
    """One subcommand.

    Attributes:
        name: the subcommand, e.g. "validate".
        help: one line for ``ort-layouts --help``.
        add_arguments: adds the subcommand's arguments to its parser.
        run: runs it and returns the exit status.
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors raise UsageError (one line, exit status 2) instead of
    printing the usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


# ---- argument types ------------------------------------------------------------------------
def _argument_type(parse: Callable[..., T], *args: Any, **options: Any) -> T:
    """``parse(*args, **options)``, a library function's :class:`OrtLayoutsError` as argparse's
    error (one line naming the argument)."""
    try:
        return parse(*args, **options)
    except OrtLayoutsError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def comma_list(text: str, item: Callable[[str], T], **options: Any) -> tuple[T, ...]:
    """The one reading of a comma-separated argument: :func:`ort_layouts.engine.selection.parse_list`
    (``options`` are its keywords) with the element parser ``item``, its errors as argparse's
    (one line naming the argument)."""
    from ort_layouts.engine.selection import parse_list

    return _argument_type(parse_list, text, item, **options)


def int_list(text: str) -> tuple[int, ...]:
    """``"1,1,3,5"`` (or ``"[1, 1, 3, 5]"``) as a tuple of ints."""
    return comma_list(text, int, what="integers", example="1,1,3,5", brackets=True, skip_blanks=False,
                      allow_empty=True)


def dims(text: str) -> tuple[int, ...]:
    """A shape: a comma-separated list of one or more non-negative integers."""
    values = int_list(text)
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"{text!r} is not a shape of non-negative integers (e.g. 1,1,3,5)")
    return values


def path_text(text: str) -> str:
    """A file or directory path: not empty (an empty one would mean the current directory to
    some calls and "not given" to others)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is an empty path; valid: a file or directory path")
    return text


def release_list(text: str) -> tuple[str, ...]:
    """``"1.9.1,1.15.4"``: DirectML releases, one or more, no empty item (``"1.15.4,,"`` is an
    error that lists the releases there are); which releases they are is checked once every
    ``--dml-version`` is read (:func:`ort_layouts.engine.dml.stack.check_directml_versions`)."""
    from ort_layouts.engine.dml.stack import DIRECTML_WHEELS

    return comma_list(text, str, what="DirectML releases", example=",".join(DIRECTML_WHEELS),
                      skip_blanks=False)


def selection_list(option: str) -> Callable[[str], tuple[Any, ...]]:
    """The argument type of the selection's list ``option`` (``"ops"``, ``"dtypes"``,
    ``"ranks"``, ``"values"``): :func:`ort_layouts.engine.selection.parse_selection_list`, which
    the pytest plugin's ``--ort-OPTION`` reads with too."""

    def parse(text: str) -> tuple[Any, ...]:
        from ort_layouts.engine.selection import parse_selection_list

        return _argument_type(parse_selection_list, option, text)

    parse.__name__ = f"{option}_list"
    return parse


class _Once(argparse.Action):
    """An option given at most once: a list option's second value would replace its first
    (``--ops Transpose --ops Pad`` ran Pad alone), so it is refused, naming both. Given before
    is the namespace holding a value other than the default (a parsed value is never it)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        earlier = getattr(namespace, self.dest, self.default)
        if earlier is not self.default:
            first, then = _shown_value(earlier), _shown_value(values)
            how = f", comma-separated ({option_string} {first},{then})" if isinstance(values, tuple) else ""
            raise argparse.ArgumentError(self, f"given twice ({first}, then {then}); valid: once{how}")
        setattr(namespace, self.dest, values)


def _shown_value(values: Any) -> str:
    return ",".join(map(str, values)) if isinstance(values, tuple) else str(values)


def shard(text: str) -> tuple[int, int]:
    """``"K/N"``: the K-th (1-based) of N shards."""
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shard {text!r} is not K/N (e.g. 1/4)") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"shard {text!r} needs 1 <= K <= N (e.g. 1/4)")
    return k, n


def key_value(text: str) -> tuple[str, str]:
    """``"KEY=VALUE"`` as a pair."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (e.g. device_filter=gpu)")
    return key.strip(), value.strip()


def _int_at_least(text: str, low: int, below: str) -> int:
    """An integer >= ``low``; ``below`` says what a smaller one is ("is negative")."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; valid: an integer >= {low}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"{text!r} {below}; valid: an integer >= {low}")
    return value


def non_negative_int(text: str) -> int:
    """An integer >= 0."""
    return _int_at_least(text, 0, "is negative")


def positive_int(text: str) -> int:
    """An integer >= 1."""
    return _int_at_least(text, 1, "is not positive")


def number(text: str) -> float | int:
    """An integer or a float (``nan``, ``inf`` and ``-inf`` as written; a decimal too large for
    any float is refused, not taken for infinity; ``-0`` is the float -0.0, whose sign an
    integer would lose)."""
    try:
        whole = int(text)
    except ValueError:
        pass
    else:
        return -0.0 if whole == 0 and text.strip().startswith("-") else whole
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (e.g. 0, 1.5, -2, nan, inf)") from None
    if value in (float("inf"), float("-inf")) and "inf" not in text.lower():
        raise argparse.ArgumentTypeError(f"{text!r} is too large for any float (largest finite 1.8e308)")
    return value


# characters a terminal acts on rather than shows: C0 controls but tab and newline, DEL, C1
# controls (ESC starts escape sequences that retitle, recolour or rewrite the screen; a model's node
# and tensor names are free text), and the bidirectional overrides that reorder what is shown
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on written as its escape (``\\x1b``,
    ``\\u202e``), so that what the command line prints from a model (node, tensor and graph
    names, paths) is shown as it is and cannot drive the terminal."""
    if _TERMINAL_UNSAFE.search(text) is None:
        return text
    return _TERMINAL_UNSAFE.sub(lambda m: ascii(m.group())[1:-1], text)


def _out(text: str = "", *, stream: IO[str] | None = None) -> None:
    print(terminal_safe(text), file=stream or sys.stdout)


def _note(text: str) -> None:
    """One line on stderr that is not an error (``ort-layouts: nothing to validate: ...``)."""
    print(terminal_safe(f"{PROG}: {' '.join(text.split())}"), file=sys.stderr)


# ---- checks made before any work -------------------------------------------------------------
def _writable(directory: Path) -> bool:
    """Whether a file can be made in the existing ``directory``: an unnamed temporary file
    (O_TMPFILE where the system has it) tells, also for root and on read-only or virtual file
    systems, where permission bits alone do not; nothing stays behind."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError:
        return False


def _nearest_existing(path: Path) -> Path:
    """The first of ``path`` and its parents that is there: a symbolic link to nothing counts
    (a directory cannot be made where it is)."""
    p = path.absolute()
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    return p


def _link_target(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:  # pragma: no cover - it was a link a moment ago
        return "?"


def check_output_dir(path: str, flag: str) -> Path:
    """A directory the command will write into (made if missing): refused now, before any work,
    when it is a file, lies under a file, is (or lies under) a symbolic link to nothing, or
    cannot be written."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"argument {flag}: {path!r} is a file, not a directory")
    base = _nearest_existing(p)
    if not base.exists():  # a symbolic link to nothing
        where = f"{path!r} is" if base == p.absolute() else f"{path!r} lies under {str(base)!r},"
        raise UsageError(f"argument {flag}: {where} a symbolic link to {_link_target(base)!r}, which does "
                         "not exist; valid: a directory (or a link to one), or a path where nothing is yet "
                         "(the directory is made)")
    if not base.is_dir():
        raise UsageError(f"argument {flag}: {path!r} lies under {str(base)!r}, which is a file")
    if not _writable(base):
        raise UsageError(f"argument {flag}: {path!r} cannot be written ({str(base)!r} is not writable)")
    return p


def check_output_file(path: str, flag: str) -> Path:
    """A file the command will write: refused now when it is a directory, or its directory is
    missing or cannot be written."""
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"argument {flag}: {path!r} is a directory, not a file")
    if path.endswith(("/", os.sep)):  # Path drops the slash: 'new/' would be written as a file 'new'
        raise UsageError(f"argument {flag}: {path!r} names a directory (it ends with a slash), not a file; "
                         f"valid: a file's path, e.g. {path.rstrip('/' + os.sep) or '.'}/model.onnx")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        what = "is a file" if parent.exists() else "does not exist"
        raise UsageError(f"argument {flag}: the directory of {path!r} ({str(parent)!r}) {what}")
    if not _writable(parent):
        raise UsageError(f"argument {flag}: {path!r} cannot be written ({str(parent)!r} is not writable)")
    return p


def check_model(path: str, flag: str) -> ModelFile:
    """A model file that exists, is not empty and reads as an ONNX model (its graph is read,
    its external weights are not): the file read, for the command to work on without reading
    it again."""
    from ort_layouts.models.extract import read_model

    return _argument(flag, read_model, path)


def _dim_without_model(dims: Sequence[str]) -> UsageError:
    return UsageError(f"argument --dim: {dims[0]!r} pins a dimension of --model, and no --model is given")


def _parse_dims(flag: str, items: Sequence[str]) -> dict[str, int]:
    from ort_layouts.models.extract import parse_dims

    return _argument(flag, parse_dims, items)


_SCALAR = r"(?:-?\d[\d.eE+-]*|null|true|false)"
_SCALAR_LIST = re.compile(rf"\[\s*({_SCALAR}(?:,\s*{_SCALAR})*)\s*\]")


def json_text(data: Any) -> str:
    """Indented JSON with lists of numbers on one line (``"sizes": [1, 1, 3, 5]``)."""
    text = json.dumps(data, indent=2)
    return _SCALAR_LIST.sub(lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]", text)


def _json_out(data: Any) -> None:
    _out(json_text(data))


def _provider_dict(info: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(info) and not isinstance(info, type):
        data = dataclasses.asdict(info)
    else:  # pragma: no cover - the engine's ProviderInfo is a dataclass
        data = {k: getattr(info, k) for k in ("name", "short_name", "available", "is_gpu", "devices")
                if hasattr(info, k)}
        data["devices"] = [
            dataclasses.asdict(d) if dataclasses.is_dataclass(d) and not isinstance(d, type) else vars(d)
            for d in data.get("devices", ())]
    data["devices"] = [dict(d) for d in data.get("devices", ())]
    return data


def _device_text(device: dict[str, Any]) -> str:
    kind = device.get("type") or ""
    name = " ".join(str(v) for v in (device.get("vendor"), device.get("device")) if v)
    text = f"{kind}: {name}" if kind and name else (kind or name or "device")
    if device.get("driver"):
        text += f" (driver {device['driver']})"
    return text


# ---- providers -----------------------------------------------------------------------------
def _add_providers(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON")


def _run_providers(args: argparse.Namespace) -> int:
    """Every provider, with the alias ``validate --provider`` takes and whether it can validate
    at all (``validate`` refuses the ones that cannot, with the same reason)."""
    from ort_layouts.engine import providers as _providers
    from ort_layouts.engine.session import NOT_VALIDATABLE

    infos = [_provider_dict(i) for i in _providers.list_providers()]
    try:
        default, refused = _providers.default_provider(), ""
    except ProviderError as e:  # a DirectML stack the environment chose cannot run: say so, list all
        default, refused = "", str(e)
    for info in infos:
        info["validates"] = bool(info.get("available")) and info.get("name") not in NOT_VALIDATABLE
    if args.json:
        for info in infos:
            info["default"] = info.get("name") == default
            if info.get("name") in NOT_VALIDATABLE:
                info["not_validated_because"] = NOT_VALIDATABLE[str(info["name"])]
        _json_out({"default": default or None, "providers": infos, **({"error": refused} if refused else {})})
        return 2 if refused else 0
    rows = [("", "provider", "alias", "available", "validate", "GPU", "devices")]
    for info in infos:
        devices = "; ".join(_device_text(d) for d in info["devices"]) or "-"
        rows.append(("*" if info.get("name") == default else "", str(info.get("name", "")),
                     str(info.get("short_name", "")), "yes" if info.get("available") else "no",
                     "yes" if info["validates"] else "no",
                     "yes" if info.get("is_gpu") else "no", devices))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        _out("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=False)) + "  " + r[-1])
    _out()
    for info in infos:
        if info.get("available") and info.get("name") in NOT_VALIDATABLE:
            _out(f"{info['name']} ({info.get('short_name')}) cannot be validated: "
                 f"{NOT_VALIDATABLE[str(info['name'])]}")
    if refused:
        _out(f"validate refuses to pick a provider: {refused}")
        return 2
    _out(f"* validate runs on {default} unless --provider says otherwise")
    return 0


# ---- describe ------------------------------------------------------------------------------
def _add_describe(p: argparse.ArgumentParser) -> None:
    from ort_layouts.operators.pad import PAD_MODES
    from ort_layouts.reports.render import DEFAULT_MAX_ELEMENTS, MAX_DRAWN_ELEMENTS

    p.add_argument("--dtype", default="float32",
                   help="data type, e.g. float32, float16, int64 (default float32)")
    p.add_argument("--shape", type=dims, required=True, help="logical sizes, e.g. 1,1,3,5")
    memory = p.add_mutually_exclusive_group()
    memory.add_argument("--layout",
                        help="memory layout: a name (NCHW, NHWC, NCDHW, NDHWC, HW, WH, DHW, WHD, ...) or an "
                             "axis order outermost first (e.g. 0,2,3,1); default NCHW (row-major); not with "
                             "--op, whose input is a packed ONNX tensor")
    memory.add_argument("--strides", type=int_list,
                        help="explicit strides in elements (instead of --layout); not with --op")
    t = p.add_mutually_exclusive_group()
    t.add_argument("--transpose", type=int_list, metavar="PERM",
                   help="the Transpose input as the DML EP builds it, e.g. 0,2,3,1")
    t.add_argument("--broadcast-to", type=dims, metavar="SHAPE",
                   help="the Expand input as the DML EP builds it (stride 0), e.g. 2,3,4")
    t.add_argument("--pad", type=int_list, metavar="PADS",
                   help="the Pad (PADDING1) operator for ONNX pads [x1_begin, ..., x1_end, ...]")
    t.add_argument("--op", metavar="OP",
                   help="any data-movement op as the DML EP builds it, with its --param values: Slice, "
                        "Concat, Split, Tile, DepthToSpace, SpaceToDepth, Reshape, Flatten, Squeeze, "
                        "Unsqueeze, Identity, Transpose, Expand, Pad")
    p.add_argument("--param", type=key_value, action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of --op (repeatable): " + ", ".join(
                       f"{k}=..." for k in _OP_PARAMS) + "; e.g. --op Slice --param starts=1 "
                        "--param ends=-1 --param axes=1 --param steps=2")
    p.add_argument("--mode", choices=list(PAD_MODES),
                   help="Pad mode (with --pad or --op Pad; default constant)")
    p.add_argument("--value",
                   help="Pad constant value (with --pad or --op Pad; default 0); refused when the data type "
                        "cannot hold it")
    p.add_argument("--axes", type=int_list, help="Pad axes (with --pad or --op Pad, opset 18)")
    o = p.add_mutually_exclusive_group()
    o.add_argument("--json", action="store_true", help="print JSON")
    o.add_argument("--svg", type=path_text, metavar="FILE", help="write the picture as SVG to FILE")
    o.add_argument("--cpp", action="store_true", help="print C++ DML_BUFFER_TENSOR_DESC initializers")
    p.add_argument("--max-elements", type=_max_elements, default=DEFAULT_MAX_ELEMENTS, metavar="N",
                   help=f"draw pictures of up to N elements (default {DEFAULT_MAX_ELEMENTS}, as render_text "
                        f"and render_svg; at most {MAX_DRAWN_ELEMENTS}, a 256 x 256 picture); larger ones "
                        "are described only")


def _max_elements(text: str) -> int:
    """--max-elements: an integer in 1..MAX_DRAWN_ELEMENTS (a picture never draws more)."""
    from ort_layouts.reports.render import MAX_DRAWN_ELEMENTS

    valid = f"valid: an integer in 1..{MAX_DRAWN_ELEMENTS}, the most elements a picture draws"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; {valid}") from None
    if not 1 <= value <= MAX_DRAWN_ELEMENTS:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range; {valid}")
    return value


# describe --op: the parameters a --param may set, and how its value reads: each a Case field,
# but for value, Pad's constant, which becomes the Case's pad_value_hex
_OP_PARAMS: dict[str, str] = {
    "perm": "ints", "target_shape": "ints", "pads": "ints", "axes": "ints", "starts": "ints",
    "ends": "ints", "steps": "ints", "parts": "ints", "repeats": "ints", "axis": "int",
    "num_outputs": "int", "blocksize": "int", "opset": "int", "mode": "text", "value": "number",
}
# describe's Pad options (--mode, --value, --axes), which describe --op Pad takes as these parameters
_PAD_OPTIONS: tuple[str, ...] = ("mode", "value", "axes")


def _pad_value(parsed: float | int, text: str, dtype: DataType, flag: str, dtype_text: str) -> float | int:
    """The Pad value ``parsed`` (read from ``text``) checked against ``dtype``
    (:func:`ort_layouts.operators.padding.check_value`): an error names ``--dtype`` when the data
    type has no numpy element, else ``flag``. ``--dtype bool`` (``dtype_text``; DirectML holds
    it as UINT8, as the DML EP does) takes 0 or 1 alone, as ONNX's bool constant holds."""
    from ort_layouts.operators.padding import check_value

    _argument("--dtype", lambda t: t.to_numpy(), dtype)  # a pad's value is one element of numpy's
    if dtype_text.strip().lower() == "bool" and parsed not in (0, 1):
        raise UsageError(f"argument {flag}: Pad value {text!r} is not a bool; valid: 0 or 1 (false, true), "
                         "the values of a bool tensor (held as UINT8)")
    return _argument(flag, lambda v: check_value(v, dtype, what="Pad value", text=text), parsed)


def _op_case(args: argparse.Namespace) -> Any:
    """The Case that ``describe --op`` names (every value checked before any work)."""
    from ort_layouts.descriptors.dtypes import DataType
    from ort_layouts.operators.case import Case
    from ort_layouts.operators.registry import case_opsets, check_op_type, operator_for_type

    op = _argument("--op", lambda name: check_op_type(name, cases=True, any_case=True), args.op)
    takes = operator_for_type(op).case_fields.get(op, ())
    fields: dict[str, Any] = {}
    given: dict[str, str] = {}  # each --param's value as written, for the message of one given twice
    for key, value in args.param:
        if key not in _OP_PARAMS:
            raise UsageError(f"argument --param: {key!r} is not a parameter; valid: {list(_OP_PARAMS)}")
        if key in given:
            raise UsageError(f"argument --param: {key} is given twice ({key}={value!r} after an earlier "
                             f"{key}={given[key]!r}); valid: each parameter once")
        given[key] = value
        kind = _OP_PARAMS[key]
        try:
            fields[key] = (int_list(value) if kind == "ints" else int(value) if kind == "int"
                           else number(value) if kind == "number" else value)
        except (ValueError, argparse.ArgumentTypeError):
            what = {"ints": "integers", "int": "an integer", "number": "a number"}[kind]
            raise UsageError(f"argument --param: {key}={value!r} is not {what}") from None
    pad = "pad_value_hex" in takes  # Pad: --mode, --value and --axes are its parameters
    for key in _PAD_OPTIONS:
        flag = f"--{key}"
        option = getattr(args, key)
        if option is None:
            continue
        if not pad:
            instead = f"with --op {op} use --param {key}=..." if key in takes else f"{op} takes no {key}"
            raise UsageError(f"{flag} goes with --pad or --op Pad; {instead}")
        text = option if isinstance(option, str) else ",".join(map(str, option))
        if key in given:
            raise UsageError(f"argument {flag}: the Pad {key} is given twice ({flag} {text} and --param "
                             f"{key}={given[key]!r}); valid: one of the two")
        given[key] = text
        try:
            fields[key] = number(option) if key == "value" else option
        except argparse.ArgumentTypeError as e:
            raise UsageError(f"argument {flag}: {e}") from None
    dtype = _argument("--dtype", DataType.from_name, args.dtype)
    if "value" in fields:
        if not pad:
            raise UsageError(f"argument --param: value={given['value']!r} is Pad's constant; {op} takes no "
                             "value")
        from ort_layouts.operators.onnx_nodes import value_hex

        value = _pad_value(fields.pop("value"), given["value"], dtype,
                           "--value" if args.value is not None else "--param", args.dtype)
        fields["pad_value_hex"] = value_hex(value, dtype)
    if "opset" in fields:
        opsets = case_opsets(op)
        if fields["opset"] not in opsets:
            raise UsageError(f"argument --param: opset={fields['opset']} is not an opset of {op}; "
                             f"valid: {opsets.start}..{opsets[-1]}")
    return Case(op, dtype, args.shape, **fields)


def _describe_op(args: argparse.Namespace) -> int:
    """``describe --op``: the DirectML operator the DML EP builds for one node."""
    from ort_layouts.operators.registry import operator_for_type

    if args.svg:
        raise UsageError("--svg goes with --transpose, --broadcast-to, --pad or a descriptor; with --op use "
                         "--json or --cpp")
    if args.pad is not None or args.transpose is not None or args.broadcast_to is not None:
        raise UsageError("--op takes its parameters from --param")
    for flag, option in (("--strides", args.strides), ("--layout", args.layout)):
        if option is not None:
            raise UsageError(f"{flag} does not go with --op: the DML EP reads a node's input as a packed "
                             f"ONNX tensor (row-major); leave {flag} out, or use it with --transpose, "
                             "--broadcast-to, --pad or a descriptor")
    case = _op_case(args)
    operator = operator_for_type(case.op)
    reason = operator.inexpressible_reason(case)
    if reason:
        raise UsageError(f"{case.op} on {list(case.shape)}: {reason}")
    op = operator.dml_operator(case)
    data = op.to_dict()
    if args.json:
        _json_out({"operation": case.op, "case": case.to_dict(), "operator": data})
    elif args.cpp:
        to_cpp = getattr(op, "to_cpp", None)
        if to_cpp is not None:
            _out(to_cpp())
        else:
            for role in ("input", "inputs", "output", "outputs"):  # one tensor, or JOIN's / SPLIT's lists
                if not role.endswith("s") and getattr(op, role + "s", None) is not None:
                    continue  # the list names it
                found = getattr(op, role, None)
                descs = [] if found is None else list(found) if isinstance(found, (list, tuple)) else [found]
                for k, desc in enumerate(descs):
                    _out(desc.to_cpp(f"{role.rstrip('s')}{k if role.endswith('s') else ''}Desc"))
            _out(f"// {data.get('operator', type(op).__name__)}")
    else:
        _out(f"{case.op} {case.data_type.name.lower()} {list(case.shape)} -> "
             f"{[list(s) for s in operator.output_shapes(case)]}: {data.get('operator', type(op).__name__)}")
        for key, value in data.items():
            if key != "operator":
                _out(f"  {key}: {json.dumps(value)}")
    return 0


def _layout_arg(text: str) -> str | tuple[int, ...]:
    if any(ch.isdigit() for ch in text):
        try:
            return int_list(text)
        except argparse.ArgumentTypeError as e:
            raise UsageError(f"argument --layout: {e}") from None
    return text


def _describe_descriptors(args: argparse.Namespace) -> dict[str, Any]:
    """{"source", "descriptor", "output"?, "operator"?, "operation"} for the describe options."""
    from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
    from ort_layouts.descriptors.dtypes import DataType

    dtype = _argument("--dtype", DataType.from_name, args.dtype)
    text = "0" if args.value is None else args.value
    try:
        number_value = number(text)
    except argparse.ArgumentTypeError as e:
        raise UsageError(f"argument --value: {e}") from None
    if (args.mode is not None or args.axes is not None or args.value is not None) and args.pad is None:
        raise UsageError("--mode, --value and --axes go with --pad or --op Pad")
    value = None  # the Pad value, checked against the data type only for a pad
    if args.pad is not None:
        value = _pad_value(number_value, text, dtype, "--value", args.dtype)
    if args.strides is not None:
        source = BufferTensorDesc(dtype, args.shape, args.strides)
    else:
        layout = "NCHW" if args.layout is None else args.layout  # an empty one is refused, not the default
        source = BufferTensorDesc.packed(dtype, args.shape, _layout_arg(layout))
    out: dict[str, Any] = {"operation": "none", "source": source, "descriptor": source}
    if args.transpose is not None:
        desc = source.transpose(args.transpose)
        out.update(operation="transpose", descriptor=desc, output=BufferTensorDesc(dtype, desc.sizes))
    elif args.broadcast_to is not None:
        from ort_layouts.descriptors.size import packed_strides
        from ort_layouts.operators.ep_tensor import MIN_DIMENSION_COUNT, padded_desc
        from ort_layouts.operators.expand import expand_operator

        if source.effective_strides == packed_strides(source.sizes):  # as the EP's input is: its Expand
            desc = expand_operator(dtype, source.sizes, args.broadcast_to).input
        else:  # another layout: padded to 4 dimensions as the EP pads, then broadcast
            target = padded_desc(dtype, args.broadcast_to).sizes
            desc = source.coerce_rank(MIN_DIMENSION_COUNT).broadcast_to(target)
        out.update(operation="broadcast", descriptor=desc, output=BufferTensorDesc(dtype, desc.sizes))
    elif args.pad is not None:
        from ort_layouts.operators.padding import PaddingOp

        op = PaddingOp.from_onnx(source, args.pad, mode=args.mode or "constant", value=value, axes=args.axes)
        out.update(operation="pad", descriptor=op.input, output=op.output, operator=op)
    return out


def _render_text(item: Any, title: str, args: argparse.Namespace) -> str:
    """A descriptor (or PaddingOp) drawn as text under a title; the figures alone when the
    picture is too large to draw."""
    from ort_layouts._errors import OrtLayoutsError
    from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
    from ort_layouts.reports.render import MAX_DRAWN_ELEMENTS, render_text

    try:
        body = render_text(item, max_elements=args.max_elements)
    except OrtLayoutsError as e:
        descs = [item] if isinstance(item, BufferTensorDesc) else [item.input, item.output]
        body = "\n".join(
            f"{d.data_type.name} sizes {list(d.sizes)} strides {list(d.effective_strides)}, "
            f"{d.total_tensor_size_in_bytes} bytes" for d in descs)
        drawable = all(d.element_count <= MAX_DRAWN_ELEMENTS for d in descs)  # by a larger --max-elements
        larger = "; on this command line: --max-elements N" if drawable else ""
        body += f"\n(no picture: {e}{larger})"
    return f"{title}:\n{body}"


def _run_describe(args: argparse.Namespace) -> int:
    if args.op is not None:
        return _describe_op(args)
    if args.param:
        raise UsageError("--param goes with --op")
    if args.svg:
        check_output_file(args.svg, "--svg")
    d = _describe_descriptors(args)
    desc, output, op = d["descriptor"], d.get("output"), d.get("operator")
    if args.json:
        data: dict[str, Any] = {"operation": d["operation"], "descriptor": desc.to_dict()}
        if d["operation"] != "none":
            data["source"] = d["source"].to_dict()
        if output is not None:
            data["output"] = output.to_dict()
        if op is not None:
            data["operator"] = op.to_dict()
        _json_out(data)
    elif args.cpp:
        if op is not None:  # the PADDING1 operator: its descriptors, padding and value
            _out(op.to_cpp())
        elif output is not None:  # --transpose, --broadcast-to: the EP's identity copy
            from ort_layouts.operators.identity import IdentityOp

            _out(IdentityOp(desc, output).to_cpp())
        else:  # the descriptor alone
            _out(desc.to_cpp("tensorDesc"))
    elif args.svg:
        from ort_layouts.reports.render import render_svg
        from ort_layouts.reports.report import atomic_write_text

        svg = _argument("--max-elements", lambda item: render_svg(item, max_elements=args.max_elements),
                        op if op is not None else desc)
        atomic_write_text(args.svg, str(svg))
        _out(f"wrote {args.svg}")
    else:
        titles = {"none": "descriptor", "transpose": "Transpose input, as the DML EP reads it",
                  "broadcast": "Expand input, as the DML EP reads it"}
        if d["operation"] != "none":
            _out(_render_text(d["source"], "source", args) + "\n")
        if op is not None:
            _out(_render_text(op, f"Pad as DML_OPERATOR_PADDING1 ({op.mode.dml_name}, padding value "
                                  f"bytes 0x{op.padding_value_bytes.hex() or '0'})", args))
        else:
            _out(_render_text(desc, titles[d["operation"]], args))
            if output is not None:
                _out("\n" + _render_text(output, "output", args))
    return 0


# ---- validate ------------------------------------------------------------------------------
def _add_selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ops", action=_Once, type=selection_list("ops"),
                   help="ops to run, e.g. Transpose,Slice,Concat (default all; see describe --op)")
    p.add_argument("--dtypes", action=_Once, type=selection_list("dtypes"),
                   help="data types to make the suite in, e.g. float32,float16,int64 (default all): the "
                        "large shapes go to the first (in the suite's order) and one other in turn, so "
                        "one type alone gets every shape; to cut a run in parts use --shard")
    p.add_argument("--ranks", action=_Once, type=selection_list("ranks"),
                   help="ranks, e.g. 1,2,4 or 1-4 (default the suite's)")
    p.add_argument("--values", action=_Once, type=selection_list("values"),
                   help="keep the cases whose input values are of these kinds: random, special, iota "
                        "(default all; with --model: random)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the input data (default 0)")
    p.add_argument("--shard", type=shard, metavar="K/N",
                   help="run the K-th of N shards of the cases; with --report DIR its report goes to "
                        "DIR/shard-K-of-N (merge the shards with: ort-layouts merge --shards DIR)")


def _add_validate(p: argparse.ArgumentParser) -> None:
    from ort_layouts.engine.parallel import MAX_JOBS
    from ort_layouts.engine.runner import PROCESS_MIN_CASES

    p.add_argument("--provider", default="auto",
                   help="execution provider: dml, webgpu, cuda, cpu, a full name, or auto (default)")
    p.add_argument("--device-id", type=non_negative_int, default=0, help="device index (default 0)")
    p.add_argument("--provider-option", type=key_value, action="append", default=[], metavar="KEY=VALUE",
                   help="an execution provider option, e.g. performance_preference=high_performance "
                        "(repeatable)")
    _add_selection(p)
    p.add_argument("--model", type=path_text, metavar="MODEL.onnx",
                   help="validate this model's layout nodes (the 14 data-movement ops; real shapes and data "
                        "types) "
                        "instead of the standard suite")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="pin a dynamic dimension of --model, e.g. --dim batch=1 (repeatable)")
    p.add_argument("--report", action=_Once, type=path_text, metavar="DIR",
                   help="write results.jsonl, report.json, junit.xml, report.html")
    p.add_argument("--resume", action="store_true", help="continue the report in --report DIR")
    p.add_argument("--force", action="store_true",
                   help="replace a report of another selection in --report DIR")
    p.add_argument("--optimize", action="store_true", help="run with ONNX Runtime graph optimizations on")
    p.add_argument("--strict", action="store_true",
                   help="known issues and unsupported cases fail the run (in every report too)")
    p.add_argument("--batch-size", type=positive_int, default=256, help="cases per session (default 256)")
    p.add_argument("--jobs", type=positive_int, default=None,
                   help="worker processes that share the batches (default: on the CPU and WebGPU "
                        f"EPs, for {PROCESS_MIN_CASES:,} cases or more, one a usable processor up to "
                        f"{MAX_JOBS}; else 1: the run stays in this process)")
    p.add_argument("--dml-version", type=release_list, action="append", metavar="V[,V...]",
                   help="DirectML only: run under this DirectML release, set up with `setup dml "
                        "--dml-version V` (default the stack's own); several (comma-separated or "
                        "repeated) run one after the other, each into --report DIR/dml-V/, with the "
                        "release matrix and its bisect summary in DIR/matrix.txt, matrix.json and "
                        "matrix.html; exit status: the worst of the releases'")
    p.add_argument("--limit", type=positive_int, help="run at most this many cases (after sharding)")
    p.add_argument("--progress", choices=["auto", "bar", "lines", "none"], default="auto",
                   help="progress on stderr: a bar on a terminal, lines in CI (default auto)")


def _argument(flag: str, check: Callable[[Any], T], value: Any) -> T:
    """``check(value)``, its error as one line naming the argument."""
    try:
        return check(value)
    except OrtLayoutsError as e:
        raise UsageError(f"argument {flag}: {e}") from None


def _resolve_selection(args: argparse.Namespace) -> dict[str, Any]:
    """--ops, --dtypes and --values as the engine names them (errors name the argument)."""
    from ort_layouts.engine import selection

    return {"ops": _argument("--ops", selection.resolve_ops, args.ops),
            "dtypes": _argument("--dtypes", selection.resolve_dtypes, args.dtypes),
            "values": _argument("--values", selection.resolve_value_kinds, args.values)}


@dataclasses.dataclass(frozen=True, slots=True)
class _ValidateSetup:
    """What validate's arguments resolve to, before any work."""

    provider: str
    provider_options: dict[str, str]
    dims: dict[str, int]
    selection: dict[str, Any]
    report_dir: Path | None
    model: ModelFile | None  # --model, read once


def _check_validate(args: argparse.Namespace, model: ModelFile | None = None) -> _ValidateSetup:
    """Every check of validate's arguments that needs no case: their combinations, the model
    file (read here, unless ``model`` is --model read before), the report directory, the
    provider, its device index and its options."""
    from ort_layouts.engine.runner import resolve_jobs
    from ort_layouts.engine.session import (
        check_device_id,
        check_provider_options,
        resolve_validation_provider,
    )
    from ort_layouts.reports.lock import check_lock_file
    from ort_layouts.reports.merge import shard_directory

    if args.resume and not args.report:
        raise UsageError("--resume needs --report DIR")
    if args.force and not args.report:
        raise UsageError("--force needs --report DIR")
    if args.resume and args.force:
        raise UsageError("--resume and --force contradict each other: --resume continues the report in "
                         "--report DIR, --force replaces it")
    if args.dim and not args.model:
        raise _dim_without_model(args.dim)
    selection = _resolve_selection(args)
    dims = _parse_dims("--dim", args.dim)
    if args.model and model is None:
        model = check_model(args.model, "--model")
    report_dir = None
    if args.report:
        check_output_dir(args.report, "--report")
        report_dir = shard_directory(args.report, args.shard) if args.shard else Path(args.report)
        if args.shard:  # the shard's own directory: a file, or a link to nothing, there too
            check_output_dir(str(report_dir), "--report")
        _argument("--report", check_lock_file, report_dir)  # a lock file that is a directory, say
    provider = _argument("--provider", resolve_validation_provider, args.provider)
    _argument("--device-id", lambda d: check_device_id(provider, d), args.device_id)
    _argument("--jobs", lambda j: resolve_jobs(j, provider, 0), args.jobs)
    options = _argument("--provider-option",
                        lambda o: check_provider_options(provider, args.device_id, o), args.provider_option)
    return _ValidateSetup(provider, options, dims, selection, report_dir, model if args.model else None)


def _select_cases(args: argparse.Namespace, setup: _ValidateSetup) -> tuple[list[Any], list[Any] | None]:
    """The cases validate's selection names (:func:`ort_layouts.engine.selection.select_cases`),
    and the layout ops of --model they come from (None without --model)."""
    from ort_layouts.engine import selection

    layout = reader = None
    if setup.model is not None:
        from ort_layouts.models.extract import cases_of, extract
        from ort_layouts.operators.registry import CASE_OPS

        layout = extract(setup.model, dims=setup.dims, ops=CASE_OPS)  # the coverage notes read it too

        def reader(model: str | Path, *, dims: Mapping[str, int] | None = None,
                   values: Sequence[str] = ("random",), seed: int = 0) -> list[Any]:
            """model_cases of --model (``model``): the cases of its layout ops extracted above."""
            return cases_of(layout, values=values, seed=seed)

    cases = selection.select_cases(**setup.selection, ranks=args.ranks, seed=args.seed, shard=args.shard,
                                   limit=args.limit, model=args.model, dims=setup.dims or None,
                                   model_cases=reader)
    return cases, layout


def _model_coverage_notes(loaded: ModelFile, layout: Sequence[Any], ops: Sequence[str] | None) -> str:
    """Print how a model's layout nodes (``layout``: its layout ops of the validating operators,
    as extracted for its cases) become cases (a line each on stderr, as validate does); return
    why it makes none, for the "nothing to do" line."""
    from ort_layouts.models.extract import coverage_of, format_coverage, layout_nodes_in_functions

    coverage = coverage_of(layout, ops=ops)
    in_functions = layout_nodes_in_functions(loaded, ops=ops)
    model = loaded.path
    if coverage:
        for line in format_coverage(coverage, in_functions=in_functions):
            print(terminal_safe(f"{PROG}: {model}: {line.strip()}"), file=sys.stderr)
    if any(c.with_case for c in coverage):
        return f"{model}'s cases are all outside this selection"
    if coverage:
        return f"no layout node of {model} makes a case (the reasons above; see {PROG} extract MODEL)"
    where = "in its main graph or subgraphs" + (
        f" ({in_functions} in model-local functions, not examined)" if in_functions else "")
    return f"{model} has no layout node{' of the ops selected' if ops else ''} {where}"


def _unsharded_count(args: argparse.Namespace, setup: _ValidateSetup) -> int:
    """How many cases the selection holds without --shard and --limit (a limit is at least 1
    and applies after sharding, so it never empties a shard): shard K of N holds none exactly
    when that is fewer than K."""
    whole = argparse.Namespace(**{**vars(args), "shard": None, "limit": None})
    return len(_select_cases(whole, setup)[0])


def _empty_shard(args: argparse.Namespace, setup: _ValidateSetup, layout: Sequence[Any] | None,
                 meta: dict[str, Any], total: int, *, quiet: bool) -> tuple[int, Any, float]:
    """A shard whose share of a selection of ``total`` cases is empty (its K > ``total``): its
    report, empty and passing, so that ``merge --shards`` finds every shard of the run; one line
    says so. A fixed CI matrix of N shards over a selection of fewer cases makes such shards."""
    from ort_layouts.reports.report import META_FILE, Report
    from ort_layouts.reports.writer import ReportWriter

    k, n = args.shard
    report_dir = setup.report_dir
    if report_dir is None:
        report = Report(meta, ())
    else:
        with _stop_says_what_was_written(report_dir / META_FILE,
                                         lambda begun: _opening_kept_text(report_dir, [], begun)):
            writer = ReportWriter(report_dir, meta=meta, planned=[], resume=args.resume, force=args.force,
                                  strict=args.strict)
            try:
                report = writer.write_summaries(finished=True)
            finally:
                writer.close()
        args.kept = _kept_text(writer, [])  # what a stop from here on keeps: the report, complete
    if setup.model is not None and layout is not None:  # how its layout nodes became the selection's cases
        _model_coverage_notes(setup.model, layout, setup.selection["ops"])
    if not quiet:
        held = f"the selection's {total} cases go to shards 1 to {total} of {n}" if total > 1 else (
            f"the selection's one case goes to shard 1 of {n}")
        written = "" if report_dir is None else f"; its report, empty: {report_dir} ({_merge_hint(args)})"
        _out(f"shard {k}/{n} holds no cases: {held}{written}")
    return (0 if report.verdict(strict=args.strict) == "pass" else 1), report, 0.0


def _nothing_to_validate(setup: _ValidateSetup, layout: Sequence[Any] | None) -> int:
    if setup.model is not None and layout is not None:
        notes = _model_coverage_notes(setup.model, layout, setup.selection["ops"])
        _note(f"nothing to validate: {notes}; nothing written")
    else:
        _note("nothing to validate: the selection holds no cases (check --ops, --dtypes, --ranks, --values); "
              "nothing written")
    return EXIT_NOTHING


# values of CI that say it is not CI (in any case, blanks around ignored): CI=false, CI=0, CI=
_NOT_CI = frozenset({"", "0", "false", "no", "off"})


def in_ci(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``environ`` (default ``os.environ``) says the command runs in CI: ``CI`` set to a
    true-ish value (``true``, ``1``, ``yes``; any but empty, ``0``, ``false``, ``no``, ``off``)."""
    value = (os.environ if environ is None else environ).get("CI")
    return value is not None and value.strip().lower() not in _NOT_CI


class Progress:
    """Progress on stderr: a redrawn bar on a terminal, plain lines otherwise or in CI
    (:func:`in_ci`).

    Failing cases are always printed as a line of their own (in every mode but "none"), as the
    run counts them: with ``strict`` (``--strict``) the known issues and the unsupported cases too.
    The lines name the case only: the run's summary line names where it ran (the provider, the
    device and, on DirectML, the stack and the ONNX Runtime of its DML EP) once for all of them.
    """

    def __init__(self, total: int, *, mode: str = "auto", stream: IO[str] | None = None,
                 done: int = 0, strict: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.strict = strict
        if mode == "auto":
            tty = bool(getattr(self.stream, "isatty", lambda: False)())
            mode = "bar" if tty and not in_ci() else "lines"
        self.mode = mode
        self.total = total
        self.done = done
        self.counts: dict[str, int] = {}
        self.started = time.monotonic()
        self._last_draw = 0.0
        self._next_line = 0

    def _status(self) -> str:
        counts = " ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        return f"{self.done}/{self.total} ({100 * self.done // max(self.total, 1)}%) {counts}".rstrip()

    def update(self, result: Any) -> None:
        from ort_layouts.reports.report import failure_text, is_failure

        self.done += 1
        status = result.status.value
        self.counts[status] = self.counts.get(status, 0) + 1
        if self.mode == "none":
            return
        if is_failure(result, strict=self.strict):
            self._clear()
            line = terminal_safe(f"{status.upper()} {result.case.id}: {failure_text(result)}")
            print(line, file=self.stream, flush=True)
        now = time.monotonic()
        if self.mode == "bar":
            if now - self._last_draw > 0.1 or self.done == self.total:
                width = 30
                filled = width * self.done // max(self.total, 1)
                print(f"\r[{'#' * filled}{'.' * (width - filled)}] {self._status()}", end="",
                      file=self.stream, flush=True)
                self._last_draw = now
        elif self.done >= self._next_line or self.done == self.total:
            print(f"[{now - self.started:6.1f} s] {self._status()}", file=self.stream, flush=True)
            self._next_line = self.done + max(1, self.total // 10)

    def _clear(self) -> None:
        if self.mode == "bar":
            print("\r\033[K", end="", file=self.stream)

    def close(self) -> None:
        if self.mode == "bar":
            print(file=self.stream, flush=True)


def _dml_versions(args: argparse.Namespace) -> tuple[str, ...]:
    """Every ``--dml-version`` (each one or more releases) as one tuple of known DirectML
    releases (:func:`ort_layouts.engine.dml.stack.check_directml_versions`), errors naming the
    argument."""
    from ort_layouts.engine.dml.stack import check_directml_versions

    return _argument("--dml-version", check_directml_versions, [v for item in args.dml_version for v in item])


def _run_validate_dml_version(args: argparse.Namespace) -> int:
    """validate under the DirectML releases ``--dml-version`` names (each release's DmlStack is
    the default one while its run lasts): one release as validate runs, several as
    :func:`_run_release_matrix`. Every release must be known and set up before any work."""
    from ort_layouts.engine.dml.stack import available_directml_versions
    from ort_layouts.engine.providers import DML
    from ort_layouts.engine.session import resolve_validation_provider

    versions = _dml_versions(args)
    if _argument("--provider", resolve_validation_provider, args.provider) != DML:
        raise UsageError("--dml-version needs --provider dml")
    available = available_directml_versions()
    missing = [v for v in versions if v not in available]
    if missing:
        raise UsageError(f"argument --dml-version: DirectML {', '.join(missing)} "
                         f"{'is' if len(missing) == 1 else 'are'} not set up (available: "
                         f"{', '.join(available) or 'none'}); get {'it' if len(missing) == 1 else 'them'} "
                         f"with: {PROG} setup dml --dml-version {' '.join(missing)}")
    if len(versions) > 1:
        return _run_release_matrix(args, versions)
    with _directml_release(versions[0]):
        return _run_validate(argparse.Namespace(**{**vars(args), "dml_version": None}))


@contextlib.contextmanager
def _directml_release(version: str) -> Iterator[None]:
    """DirectML ``version``'s stack is the default one inside (``ORT_LAYOUTS_DML_DIRECTML_VERSION``)."""
    from ort_layouts.engine.dml.stack import ENV_DIRECTML_VERSION

    before = os.environ.get(ENV_DIRECTML_VERSION)
    os.environ[ENV_DIRECTML_VERSION] = version
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV_DIRECTML_VERSION, None)
        else:
            os.environ[ENV_DIRECTML_VERSION] = before


RELEASE_DIR = "dml-{version}"  # validate --dml-version V1,V2 --report DIR: release V's report directory


def _run_release_matrix(args: argparse.Namespace, versions: Sequence[str]) -> int:
    """The same selection under several DirectML releases, one after the other in one worker
    process at a time: each release's report in ``--report DIR/dml-<V>/``, one summary line per
    release, then the release matrix (``merge``'s columns and bisect summary) into ``DIR``.

    Before each release the worker runs setup's check under it
    (:func:`~ort_layouts.engine.dml.install.directml_release_problem`): a release that ONNX
    Runtime cannot drive here gets one line saying why and the others still run. Exit status:
    the worst of the releases' (2 for one that could not run).
    """
    from ort_layouts.engine import providers
    from ort_layouts.engine.dml.install import directml_release_problem
    from ort_layouts.engine.dml.stack import ORT_DIRECTML_VERSION
    from ort_layouts.reports.merge import merge_reports, write_matrix
    from ort_layouts.reports.report import summary_line

    if args.shard:
        raise UsageError("--shard goes with one --dml-version (shard each release's run on its own, "
                         f"merge its shards with {PROG} merge --shards, then merge the releases)")
    from ort_layouts.engine.session import file_sha256

    # the model hashed once for every release's selection
    model_sha256 = file_sha256(args.model) if args.model else None
    plain = argparse.Namespace(**{**vars(args), "dml_version": None, "model_sha256": model_sha256})
    setup = _check_validate(plain)  # every argument, before any work
    cases, layout = _select_cases(plain, setup)
    if not cases:
        return _nothing_to_validate(setup, layout)
    report_root = Path(args.report) if args.report else None
    if report_root is not None:  # each release's report directory, before the first release runs
        _check_release_reports(plain, setup, versions, report_root, [c.id for c in cases])
        _clear_release_root(report_root, force=args.force, command=shlex.join([PROG, *args.argv]))
    codes: list[int] = []
    ran: list[Any] = []  # a report directory, or a Report without --report
    for i, version in enumerate(versions):
        _note(f"DirectML {version} ({i + 1} of {len(versions)})")
        with _directml_release(version):
            worker = providers.dml_worker()
            problem = directml_release_problem(worker)
            if problem:
                providers.close_dml_worker()
                _out(f"DirectML {version}: not run: not usable with ONNX Runtime "
                     f"{worker.ort_version or ORT_DIRECTML_VERSION} here: {problem}")
                codes.append(2)
                continue
            report_dir = report_root / RELEASE_DIR.format(version=version) if report_root else None
            run = argparse.Namespace(**{**vars(plain), "report": str(report_dir) if report_dir else None})
            try:
                code, report, seconds = _validate(run, quiet=True, model=setup.model,
                                                  selected=(cases, layout))
            except ProviderError as e:  # the stack broke under this release (the canary, a crash)
                providers.close_dml_worker()
                _out(f"DirectML {version}: not run: {' '.join(str(e).split())}")
                codes.append(2)
                continue
        codes.append(code)
        assert report is not None  # the selection holds cases
        _out(f"DirectML {version}: {summary_line(report, strict=args.strict, seconds=seconds)}")
        ran.append(report_dir if report_dir is not None else report)
    providers.close_dml_worker()
    if ran:
        matrix = merge_reports(ran)
        for line in matrix.bisect_lines(cases=0):
            _out(line)
        if report_root is not None:
            paths = write_matrix(matrix, report_root, text=True)
            _out(f"reports: {report_root / RELEASE_DIR.format(version='<V>')}/ for each release; the release "
                 f"matrix: {paths['text']}, {paths['json'].name}, {paths['html'].name}")
    return max(codes)


def _run_validate(args: argparse.Namespace) -> int:
    if getattr(args, "dml_version", None):
        return _run_validate_dml_version(args)
    return _validate(args)[0]


class _ReportedInterrupt(KeyboardInterrupt):
    """An interrupt whose line (what was kept) is already printed; ``args[0]``: the signal."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a CI job cancelled, a terminal hung up; ``args[0]``), raised in the main
    thread as Ctrl-C is, so that a run stops the same way: its results kept and its directory
    unlocked, its worker processes, DirectML worker and X server stopped, exit status 128 + N."""


def _stop_error(signum: int) -> KeyboardInterrupt:
    """What a stop by ``signum`` raises: KeyboardInterrupt (Ctrl-C) or :class:`_Terminated`
    (:func:`_signal_of` reads the signal back)."""
    return KeyboardInterrupt() if signum == signal.SIGINT else _Terminated(signum)


class _StopSignals:
    """How a command (:func:`main`) takes Ctrl-C, SIGTERM and SIGHUP, in the main thread: the
    first raises (KeyboardInterrupt, :class:`_Terminated`) where the command is, and stops it;
    one that comes while that stop unwinds (a second Ctrl-C) is noted, not raised, so that the
    stop's own work (the summaries, the lock, the worker processes) is not cut short.

    One raised where Python cannot pass it on (a finalizer, a weakref callback: Python only
    notes it as unraisable) is noted too, and the next stop raises again; a command that
    returns with a stop noted is stopped then (:meth:`raise_noted`).
    """

    def __init__(self) -> None:
        self.came: list[int] = []
        self.raised = False  # the first raised: its stop is under way

    def handle(self, signum: int, frame: Any) -> None:
        self.came.append(signum)
        if self.raised:  # again while the stop is under way: it hurries (a child that hangs is killed)
            hurry()
            return
        self.raised = True
        raise _stop_error(signum)

    def unraisable(self, previous: Callable[[Any], object]) -> Callable[[Any], object]:
        """A ``sys.unraisablehook`` that takes a stop this raised and Python could not pass on."""
        def hook(unraisable: Any) -> object:
            if isinstance(unraisable.exc_value, KeyboardInterrupt) and self.raised:
                self.raised = False  # lost: the stop never began
                return None
            return previous(unraisable)
        return hook

    def raise_noted(self) -> None:
        """Stop now if a signal came that did not stop the command (it returned all the same)."""
        if self.came:
            raise _stop_error(self.came[0])


@contextlib.contextmanager
def _stop_signals() -> Iterator[_StopSignals]:
    """For a command: Ctrl-C, SIGTERM and SIGHUP as :class:`_StopSignals` says, where they would
    otherwise end the process at once (SIGTERM, SIGHUP) and leave its children (an X server in a
    session of its own outlives it), or raise again in the middle of a stop (a second Ctrl-C).
    Handlers set by another (a program that calls :func:`main`) are kept; the command line's
    own while it starts (:func:`ort_layouts._startup.guard_start`) are taken over."""
    stops = _StopSignals()
    if threading.current_thread() is not threading.main_thread():
        yield stops
        return
    previous = {}
    for sig in STOP_SIGNALS:
        handler = signal.getsignal(sig)
        if is_start_guard(handler) or is_python_default(sig, handler):
            previous[sig] = signal.signal(sig, stops.handle)
    hook = sys.unraisablehook
    if previous:
        sys.unraisablehook = stops.unraisable(hook)
    try:
        yield stops
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sys.unraisablehook = hook


def _selection_fields(args: argparse.Namespace, setup: _ValidateSetup) -> dict[str, Any]:
    """The selection arguments of a validation (:func:`~ort_layouts.engine.session.validation_selection`'s
    fields) as the command line gives them."""
    return {"ops": setup.selection["ops"], "ranks": args.ranks, "values": setup.selection["values"],
            "dtypes": [d.name.lower() for d in setup.selection["dtypes"] or []], "seed": args.seed,
            "shard": args.shard, "limit": args.limit, "optimize": args.optimize,
            "provider_options": setup.provider_options, "dims": setup.dims}


def _check_release_reports(args: argparse.Namespace, setup: _ValidateSetup, versions: Sequence[str],
                           root: Path, planned: list[str]) -> None:
    """Refuse, before any release runs, a release's report directory (``root/dml-V``) that its
    run would refuse (a file, a lock file that is a directory, a report of another selection
    without --force, one --resume cannot continue), as --report DIR itself is checked."""
    from ort_layouts.engine.session import validation_selection
    from ort_layouts.reports.lock import check_lock_file
    from ort_layouts.reports.writer import check_report_directory

    found = _release_root_report(root)
    if found and not args.force:
        names = ", ".join(p.name for p in found)
        raise UsageError(
            f"argument --report: {str(root)!r} holds the report of one run ({names}); a run of several "
            f"DirectML releases writes each release's report into {RELEASE_DIR.format(version='V')}/ there "
            "and the release matrix beside them, which would leave that report to be read as this run's: "
            "use another directory, or --force to remove it")
    selection = validation_selection(provider=setup.provider, device_id=args.device_id, model=args.model,
                                     model_sha256=args.model_sha256, **_selection_fields(args, setup))
    for version in versions:
        directory = root / RELEASE_DIR.format(version=version)
        check_output_dir(str(directory), "--report")
        _argument("--report", check_lock_file, directory)
        _argument("--report", lambda d: check_report_directory(d, selection=selection, planned=planned,
                                                               resume=args.resume, force=args.force),
                  directory)


def _release_root_report(root: Path) -> list[Path]:
    """The files of one run's report in ``root`` (``--report DIR`` of several DirectML releases,
    where only the releases' directories and the matrix belong)."""
    from ort_layouts.reports import report

    if not (root / report.META_FILE).exists() and not (root / report.RESULTS_FILE).exists():
        return []
    return [root / name for name in (*report.REPORT_FILES, report.SHARDS_FILE) if (root / name).exists()]


def _clear_release_root(root: Path, *, force: bool, command: str) -> None:
    """Remove, with ``force``, the report of one run that ``root`` holds (refused without, by
    :func:`_check_release_reports`): the release matrix written beside it would leave its
    summaries there to be read as this run's. Refused while another run holds ``root``."""
    from ort_layouts.reports.lock import DirectoryLock

    found = _release_root_report(root)
    if found and force:
        with DirectoryLock(root, command=command):
            for path in found:
                path.unlink(missing_ok=True)


def _validate(args: argparse.Namespace, *, quiet: bool = False, model: ModelFile | None = None,
              selected: tuple[list[Any], list[Any] | None] | None = None) -> tuple[int, Any, float]:
    """One validation run: its exit status, its report (None when the selection is empty) and
    its wall time. ``quiet``: no summary and reports lines (the caller prints its own);
    ``model`` and ``selected``: --model as read and :func:`_select_cases`' cases and layout ops,
    made before (by the run of several DirectML releases, once for all of them)."""
    from ort_layouts.engine.session import ValidationSession, check_provider_start, validation_meta
    from ort_layouts.reports.report import META_FILE, RESULTS_FILE, Report, summary_line
    from ort_layouts.reports.writer import ReportWriter, check_report_directory

    setup = _check_validate(args, model)
    cases, layout = _select_cases(args, setup) if selected is None else selected
    total = _unsharded_count(args, setup) if not cases and args.shard else 0
    if not cases and not total:
        return _nothing_to_validate(setup, layout), None, 0.0
    provider = setup.provider
    meta = validation_meta(
        provider=provider, device_id=args.device_id, command=shlex.join([PROG, *args.argv]), model=args.model,
        model_sha256=getattr(args, "model_sha256", None), strict=args.strict,
        **_selection_fields(args, setup))
    if not cases:  # a shard whose share of the selection is empty
        return _empty_shard(args, setup, layout, meta, total, quiet=quiet)
    report_dir = setup.report_dir
    if report_dir is not None:  # what the writer refuses of DIR's files, which needs no provider, first
        check_report_directory(report_dir, selection=meta["selection"], planned=[c.id for c in cases],
                               resume=args.resume, force=args.force)
    # the provider starts (DirectML's canary) before a report is replaced or resumed: a run that
    # cannot start stops here, the report already in --report DIR kept as it is
    check_provider_start(provider, device_id=args.device_id, provider_options=setup.provider_options,
                         optimize=args.optimize)
    begun = _file_stamp(report_dir / META_FILE) if report_dir is not None else None  # as it was
    writer: ReportWriter | None = None
    progress: Progress | None = None
    try:  # from here a stop, or an error, closes the writer (its directory let go) and says what it kept
        if report_dir is not None:
            writer = ReportWriter(report_dir, meta=meta, planned=[c.id for c in cases], resume=args.resume,
                                  force=args.force, strict=args.strict)
        if setup.model is not None and layout is not None:  # how its layout nodes became these cases
            _model_coverage_notes(setup.model, layout, setup.selection["ops"])
        session = ValidationSession(cases, provider=provider, device_id=args.device_id,
                                    optimize=args.optimize, provider_options=setup.provider_options,
                                    batch_size=args.batch_size, writer=writer, device=meta["device"],
                                    jobs=args.jobs)
        if writer and writer.resumed:
            print(terminal_safe(f"{PROG}: resuming {report_dir}: {session.done_count} of {len(cases)} cases "
                                "already run"), file=sys.stderr)
        progress = Progress(len(cases), mode=args.progress, done=session.done_count, strict=args.strict)
        outcome = session.run(on_result=progress.update)
        progress.close()
    except BaseException as e:
        if writer:
            writer.close()  # (the session's run closes it as it stops; a stop before the run did not)
            if isinstance(e, KeyboardInterrupt):
                _stopped(e, _kept_text(writer, cases),
                         mid_line=progress is not None and progress.mode == "bar")
            elif isinstance(e, OSError):  # a full disk, say: what results.jsonl holds is kept
                raise ReportError(f"{_describe_exception(e)}; {len(writer.results)} results kept in "
                                  f"{writer.directory / RESULTS_FILE} (--resume continues, and writes the "
                                  "summaries)") from e
        elif report_dir is not None and isinstance(e, KeyboardInterrupt):
            # a stop while the writer opened the directory (it let the directory go as it stopped)
            _stopped(e, _opening_kept_text(report_dir, cases, _file_stamp(report_dir / META_FILE) != begun))
        raise
    if writer:  # written and closed: what a stop from here on keeps
        args.kept = _kept_text(writer, cases)
    report = outcome.summary
    if report is None:
        report = Report({**meta, "device": outcome.device}, outcome.results)
    if not quiet:
        _out(summary_line(report, strict=args.strict, seconds=outcome.seconds))
    if report_dir is not None and not quiet:
        _out(f"reports: {report_dir / 'report.html'}, report.json, junit.xml, results.jsonl")
        if args.shard:
            _out(f"shard {args.shard[0]}/{args.shard[1]}; {_merge_hint(args)}")
    return (0 if report.verdict(strict=args.strict) == "pass" else 1), report, outcome.seconds


def _merge_hint(args: argparse.Namespace) -> str:
    """How a shard's report becomes the run's: ``merge --shards``, which refuses shards run with
    --limit (each shard's limit: no run has their union)."""
    if args.limit:
        return "shards run with --limit are not merged into one report: run them without --limit to merge"
    return f"once every shard has run: {shlex.join([PROG, 'merge', '--shards', args.report])}"


def _kept_text(writer: Any, cases: Sequence[Any]) -> str:
    """What a stopped run with a report keeps (its writer's summaries written, the writer closed)."""
    return _results_kept_text(writer.directory, len(writer.results), writer.done_ids, cases)


def _results_kept_text(directory: Path, count: int, done: Iterable[str], cases: Sequence[Any]) -> str:
    """"N results kept in DIR", and whether the report is complete or --resume continues it."""
    ids = set(done)
    complete = all(c.id in ids for c in cases)
    return (f"{count} results kept in {directory} "
            f"({'the report is complete' if complete else '--resume continues'})")


def _opening_kept_text(directory: Path, cases: Sequence[Any], begun: bool) -> str:
    """What a run stopped while its report writer opened ``directory`` keeps, as
    :func:`_kept_text` says it: ``begun``, the directory holds this run's report (the writer
    writes its start whole, or not at all: meta.json is written with it), with the results
    in its results.jsonl (none; a resumed report's); else nothing of this run is written there."""
    from ort_layouts.reports.report import RESULTS_FILE, read_results

    if not begun:
        return f"nothing written in {directory} (this run's report not begun)"
    try:
        results = read_results(directory / RESULTS_FILE)
    except (OSError, ValueError):  # unreadable now: what it holds is kept all the same
        return f"the results so far kept in {directory} (--resume continues)"
    return _results_kept_text(directory, len(results), (r.case.id for r in results), cases)


# ---- merge ---------------------------------------------------------------------------------
def _add_merge(p: argparse.ArgumentParser) -> None:
    p.add_argument("reports", nargs="+", type=path_text, metavar="REPORT",
                   help="report directories, report.json or results.jsonl files; with --shards: shard "
                        "report directories, or the report directory holding shard-K-of-N directories")
    p.add_argument("--shards", action="store_true",
                   help="merge the N shards of one run into the one report of the unsharded run "
                        "(into --out, or into the one REPORT directory holding them)")
    p.add_argument("--out", type=path_text, metavar="DIR",
                   help="write matrix.json and matrix.html into DIR (with --shards: the merged report)")
    p.add_argument("--json", action="store_true",
                   help="print the matrix as JSON instead of a table (not with --shards)")
    p.add_argument("--force", action="store_true", help="with --shards: replace a report of another "
                                                        "selection in the output directory")
    # refused with the reason (see _check_merge): each report is judged by its own run's --strict
    p.add_argument("--strict", action="store_true", help=argparse.SUPPRESS)


def _check_merge(args: argparse.Namespace) -> Path | None:
    if args.strict:
        raise UsageError("merge takes no --strict: each report is judged by its own run's --strict "
                         "(validate --strict), in a matrix column marked (strict) as in its summaries; "
                         "merge --shards takes the shards' (they must agree)")
    for source in args.reports:
        if not Path(source).exists():
            raise UsageError(f"argument REPORT: report {source!r} does not exist")
    if not args.shards:
        if args.force:
            raise UsageError("--force goes with --shards (a matrix is always rewritten)")
        return check_output_dir(args.out, "--out") if args.out else None
    if args.json:
        raise UsageError("--json goes without --shards (the merged report is written as report.json)")
    if args.out:
        return check_output_dir(args.out, "--out")
    if len(args.reports) != 1 or not Path(args.reports[0]).is_dir():
        raise UsageError("merge --shards needs --out DIR, unless one REPORT directory holds the shards "
                         "(it then gets the merged report)")
    return check_output_dir(args.reports[0], "REPORT")


def _run_merge(args: argparse.Namespace) -> int:
    """The matrix: 0. --shards: the merged report's verdict, as validate's (0, or 1 for a
    failing or incomplete report)."""
    from ort_layouts.reports.merge import merge_reports, merge_shards, write_matrix
    from ort_layouts.reports.report import summary_line

    out = _check_merge(args)
    if args.shards:
        assert out is not None
        argv = getattr(args, "argv", None)  # main's: the merge's locks name its command line
        with _stop_says_what_was_written(out / "meta.json", lambda merged: _merged_kept_text(out, merged)):
            report = merge_shards(args.reports, out, force=args.force,
                                  command=shlex.join([PROG, *argv]) if argv is not None else None)
        _out(summary_line(report, strict=report.strict))
        _out(f"reports: {out / 'report.html'}, report.json, junit.xml, results.jsonl, shards.json")
        return 0 if report.verdict() == "pass" else 1
    matrix = merge_reports(args.reports)
    if args.json:
        _json_out(matrix.to_dict())
    else:
        sys.stdout.write(terminal_safe(matrix.text_table()))  # labels hold device and host names
    if out is not None:
        with _stop_says_what_was_written(out / "matrix.json", lambda written: (
                f"wrote {out / 'matrix.json'} and matrix.html" if written
                else f"the matrix was not written ({out} as it was)")):
            paths = write_matrix(matrix, out)  # both files, or neither
        print(terminal_safe(f"wrote {paths['json']} and {paths['html']}"), file=sys.stderr)
    return 0


def _file_stamp(path: Path) -> tuple[int, int] | None:
    """A file's inode and modification time (None: none there): a file replaced (written atomically)
    since has another."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def _stop_line(text: str, *, mid_line: bool = False) -> None:
    """Print a stop's line on stderr: on a new line on a terminal (after its ``^C`` echo) or
    ``mid_line`` (a progress bar drawn); elsewhere (a log) after what was written, with no blank
    line."""
    start = "\n" if mid_line or sys.stderr.isatty() else ""
    print(f"{start}{PROG}: {text}", file=sys.stderr)


def _stopped(e: KeyboardInterrupt, kept: str, *, mid_line: bool = False) -> NoReturn:
    """Say that a stop signal stopped the command, and what it kept (:func:`_stop_line`); then
    stop."""
    _stop_line(f"{_interrupted_text(e)}; {kept}", mid_line=mid_line)
    raise _ReportedInterrupt(_signal_of(e)) from None


@contextlib.contextmanager
def _stop_says_what_was_written(path: Path, kept: Callable[[bool], str]) -> Iterator[None]:
    """A stop signal in the block stops the command (:func:`_stopped`) saying what it kept:
    ``kept(True)`` where ``path`` was written (replaced: :func:`_file_stamp`) since the block
    began, ``kept(False)`` where it is as it was."""
    before = _file_stamp(path)
    try:
        yield
    except KeyboardInterrupt as e:
        _stopped(e, kept(_file_stamp(path) != before))


def _merged_kept_text(out: Path, merged: bool) -> str:
    """What a merge of shards stopped midway left in ``out`` (``merged``: its meta.json was
    written)."""
    if not merged:
        return f"nothing merged ({out} as it was)"
    try:
        data = json.loads((out / "report.json").read_text(encoding="utf-8"))
        complete, count, planned = data["complete"] is True, len(data["results"]), data["planned_count"]
    except (OSError, ValueError, TypeError, KeyError):
        return f"the merged report in {out} is incomplete: merge again"
    if complete:
        return f"the merged report in {out} is complete ({count} results)"
    return f"the merged report in {out} is incomplete ({count} of {planned} results): merge again"


# ---- bench (ort_layouts.frontends.bench) ------------------------------------------------------
GPU_PROVIDERS = ("auto", "webgpu", "dml", "cuda")


def _mib(text: str) -> int:
    from ort_layouts.frontends.bench import MIB

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"size {text!r} is not a number of MiB (e.g. 64, 0.5)") from None
    if not value > 0 or value * MIB == float("inf"):  # 1e308 MiB is a finite number but no byte count
        raise argparse.ArgumentTypeError(f"size {text!r} must be a finite number of MiB > 0 (e.g. 64, 0.5)")
    return max(1, int(value * MIB))


def _sections(text: str) -> tuple[str, ...]:
    from ort_layouts.frontends.bench import SECTIONS

    names = comma_list(text, str, what="sections", example=",".join(SECTIONS), skip_blanks=False)
    bad = [s for s in names if s not in SECTIONS]
    if bad:
        raise argparse.ArgumentTypeError(f"sections {bad} are not valid; valid: {','.join(SECTIONS)}")
    return tuple(dict.fromkeys(names))  # a section named twice runs once


# each section-bound argument of bench: its flag, the sections that take it, its default
_BENCH_ARGUMENTS: dict[str, tuple[str, tuple[str, ...], Any]] = {
    "provider": ("--provider", ("suite", "floor", "memory"), "cpu"),
    "gpu_provider": ("--gpu-provider", ("gpu",), "auto"),
    "device_id": ("--device-id", ("gpu",), 0),
    "suite_sample": ("--suite-sample", ("suite", "dml"), 300),
    "suite_ranks": ("--suite-ranks", ("suite", "floor", "diagnosis", "memory"), None),
    "oracle_mb": ("--oracle-mb", ("oracle",), 256),
    "gpu_mb": ("--gpu-mb", ("gpu",), 64),
    "gpu_iterations": ("--gpu-iterations", ("gpu",), 200),
    "memory_mb": ("--memory-mb", ("memory",), 256),
    "repeats": ("--repeats", ("suite", "floor", "oracle", "gpu", "dml"), 3),
    "jobs": ("--jobs", ("floor",), None),
    "gpu_on_cpu": ("--gpu-on-cpu", ("gpu",), False),
}


def _add_bench(p: argparse.ArgumentParser) -> None:
    try:
        from ort_layouts.frontends.bench import DEFAULT_SECTIONS
    except ImportError:  # reported when the command runs: the other commands still work
        return
    p.epilog = ("Every argument is checked before any section runs: a bad value is refused, naming it and "
                "the valid ones, whatever the sections; so is an argument given to sections none of which "
                "takes it (--device-id with --sections oracle, say).")
    p.add_argument("--sections", type=_sections, default=DEFAULT_SECTIONS, action=_Once,
                   help=f"comma-separated sections to run (default: {','.join(DEFAULT_SECTIONS)})")
    section = functools.partial(_add_section_argument, p)
    section("provider", help="EP of the suite, floor and memory sections (default: {default})")
    section("gpu_provider", choices=GPU_PROVIDERS,
            help="EP of the gpu section: auto, webgpu, dml, cuda (default: {default})")
    section("device_id", type=non_negative_int,
            help="device of the gpu section's EP, checked against the devices it lists (default: {default})")
    section("suite_sample", type=positive_int,
            help="cases timed batched and one session per case by the suite section; the dml "
                 "section times at least 1000 (default: {default})")
    section("suite_ranks", action=_Once, type=selection_list("ranks"),
            help="comma-separated input ranks of the standard suite that the suite, floor, "
                 "diagnosis and memory sections take (default: all)")
    section("oracle_mb", type=_mib, help="oracle section's tensor size in MiB (default {default})")
    section("gpu_mb", type=_mib, help="gpu section's tensor size in MiB (default {default})")
    section("gpu_iterations", type=positive_int, help="runs per gpu section timing loop (default {default})")
    section("memory_mb", type=_mib, help="size of the memory section's large case in MiB (default {default})")
    section("repeats", type=positive_int,
            help="interleaved repeats, best kept, of the suite, floor, oracle, gpu and dml sections "
                 "(default {default})")
    section("jobs", type=positive_int,
            help="worker processes of the floor section's runs (default: the runner's choice)")
    section("gpu_on_cpu", action="store_true",
            help="run the gpu section on the CPU EP when no GPU EP runs in this process (none "
                 "here, or DirectML only through its worker): tests the code path")
    p.add_argument("--json", type=path_text, metavar="FILE", default=None,
                   help="also write the machine and figures as JSON")


def _add_section_argument(p: argparse.ArgumentParser, dest: str, *, help: str, **kwargs: Any) -> None:
    """A section-bound argument of bench, by its entry in :data:`_BENCH_ARGUMENTS`: its flag, None
    unless given (given or not is known: _check_bench fills the default in), and its help with
    ``{default}`` written as that default."""
    flag, _, default = _BENCH_ARGUMENTS[dest]
    p.add_argument(flag, default=None, help=help.format(default=default), **kwargs)


def _check_bench(args: argparse.Namespace) -> None:
    """Every argument before any section runs: its value, and that a section asked for takes it
    (one line each); then the defaults of those not given."""
    from ort_layouts._errors import OrtLayoutsError
    from ort_layouts.engine.environment import short_of_memory
    from ort_layouts.engine.providers import check_device_id, resolve_provider
    from ort_layouts.engine.runner import resolve_jobs
    from ort_layouts.engine.session import resolve_validation_provider
    from ort_layouts.frontends.bench import MIB, gpu_section_provider

    if args.json:
        check_output_file(args.json, "--json")
    given = {dest for dest in _BENCH_ARGUMENTS if getattr(args, dest, None) is not None}
    floor = "CPUExecutionProvider"  # the default, always there
    if "provider" in given:
        floor = _argument("--provider", resolve_validation_provider, args.provider)
    if "gpu_provider" in given:
        _argument("--gpu-provider", resolve_provider, args.gpu_provider)
    sections = set(args.sections)
    for dest in sorted(given, key=list(_BENCH_ARGUMENTS).index):
        flag, takers, _ = _BENCH_ARGUMENTS[dest]
        if not sections & set(takers):
            one = len(takers) == 1
            names = takers[0] if one else f"{', '.join(takers[:-1])} and {takers[-1]}"
            raise UsageError(
                f"argument {flag}: only the {names} section{'' if one else 's'} take{'s' if one else ''} "
                f"it, and --sections {','.join(args.sections)} "
                f"{'does not run it' if one else 'runs none of them'}; "
                f"valid: add {names.replace(' and ', ' or ')} to --sections, or leave {flag} out")
    if "jobs" in given:  # the floor section's workers, on its provider
        _argument("--jobs", lambda j: resolve_jobs(j, floor, 0), args.jobs)
    for dest in ("oracle_mb", "memory_mb", "gpu_mb"):  # an input and an output of the size at least
        size = getattr(args, dest, None)
        available = None if size is None else short_of_memory(2 * size)
        if size is not None and available is not None:
            flag = _BENCH_ARGUMENTS[dest][0]
            raise UsageError(f"argument {flag}: {size / MIB:g} MiB needs an input and an output of that "
                             f"size, {2 * size / MIB:g} MiB, and this machine has {available / MIB:.0f} MiB "
                             f"available; valid: a size > 0 up to {available / 2 / MIB:.0f} MiB")
    for dest, (_, _, default) in _BENCH_ARGUMENTS.items():
        if getattr(args, dest, None) is None:
            setattr(args, dest, default * MIB if dest.endswith("_mb") else default)
    if "gpu" in sections and "device_id" in given:
        try:  # the EP the section runs on; where it cannot run (skipped, saying why), the one asked for
            gpu = gpu_section_provider(args.gpu_provider, allow_cpu=args.gpu_on_cpu)
        except OrtLayoutsError:
            gpu = _argument("--gpu-provider", resolve_provider, args.gpu_provider)
        _argument("--device-id", lambda d: check_device_id(gpu, d), args.device_id)


def _run_bench(args: argparse.Namespace) -> int:
    """0 when it ran (missed targets are figures, not errors)."""
    _check_bench(args)
    return _bench(args)


def _bench(args: argparse.Namespace) -> int:
    """The sections of arguments _check_bench checked (and gave their defaults)."""
    from ort_layouts.frontends.bench import machine, run_benchmarks

    figures = run_benchmarks(
        args.sections, provider=args.provider, gpu_provider=args.gpu_provider, device_id=args.device_id,
        suite_sample=args.suite_sample, suite_ranks=args.suite_ranks or None, oracle_bytes=args.oracle_mb,
        gpu_bytes=args.gpu_mb, gpu_iterations=args.gpu_iterations, memory_bytes=args.memory_mb,
        repeats=args.repeats, allow_cpu_gpu_section=args.gpu_on_cpu, jobs=args.jobs)
    if args.json:
        from ort_layouts.reports.report import atomic_write_text

        atomic_write_text(args.json, json.dumps(
            {"machine": machine(), "figures": [x.to_dict() for x in figures]}, indent=2) + "\n")
    return 0


def bench_main(argv: Sequence[str] | None = None) -> int:
    """The bench subcommand as a program of its own (``scripts/bench.py``): argparse's usage
    and exit status 2 on a bad command line, checked before any section runs."""
    from ort_layouts.frontends import bench

    parser = argparse.ArgumentParser(prog="bench", description=(bench.__doc__ or "").splitlines()[0])
    _add_bench(parser)
    args = parser.parse_args(argv)
    try:
        _check_bench(args)
    except UsageError as e:
        parser.error(str(e))
    return _bench(args)


# ---- extract (ort_layouts.models.extract) -----------------------------------------------------
def _layout_ops(text: str) -> tuple[str, ...]:
    from ort_layouts.operators.registry import check_op_type

    names = comma_list(text, str, what="op types", example="Transpose,Pad", skip_blanks=False)
    return tuple(_argument_type(check_op_type, n, any_case=True) for n in names)


def _add_extract(p: argparse.ArgumentParser) -> None:
    from ort_layouts.models.extract import LAYOUT_OPS

    p.add_argument("model", type=path_text, help="the .onnx model to read")
    p.add_argument("--json", action="store_true", help="print the layout ops as JSON")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="pin a dynamic dimension, e.g. --dim batch=1 (repeatable)")
    p.add_argument("--ops", action=_Once, type=_layout_ops, default=None,
                   help=f"only these op types, comma-separated (default all: {','.join(LAYOUT_OPS)})")


def _run_extract(args: argparse.Namespace) -> int:
    from ort_layouts.models.extract import (
        extract,
        format_layout_op,
        functions_line,
        layout_nodes_in_functions,
    )

    dims = _parse_dims("--dim", args.dim)
    model = check_model(args.model, "MODEL")
    ops = extract(model, dims=dims, ops=args.ops)
    if args.json:
        _out(json.dumps([op.to_dict() for op in ops], indent=2))
        return 0
    in_functions = layout_nodes_in_functions(model, ops=args.ops)  # for the text's last line
    for op in ops:
        _out(format_layout_op(op))
    flagged = sum(1 for op in ops if op.flags)
    cases = [c for op in ops if (c := op.to_case()) is not None]
    distinct = len({c.id for c in cases})  # as validate --model counts them: nodes of one case share it
    _out(f"{len(ops)} layout ops, {flagged} flagged; {len(cases)} make validation cases, "
         f"{distinct} distinct (validate --model runs those)")
    if in_functions:
        _out(functions_line(in_functions))
    return 0


# ---- convert (ort_layouts.models.convert) -----------------------------------------------------
def _check_limit_mib(text: str) -> int:
    """--check-limit-mib: a whole number of MiB >= 1, as bytes."""
    try:
        mib = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of MiB; valid: an integer >= 1 "
                                         "(e.g. 4096 for 4 GiB; default 1024)") from None
    if mib < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is below 1 MiB; valid: an integer >= 1 (e.g. 4096 for "
                                         "4 GiB; default 1024)")
    return mib << 20


def _add_convert(p: argparse.ArgumentParser) -> None:
    from ort_layouts.models.convert import LAYOUTS

    p.add_argument("input", type=path_text, help="the .onnx model to convert")
    p.add_argument("output", type=path_text, help="where to write the converted model")
    p.add_argument("--to", default="nhwc", type=str.upper, choices=LAYOUTS,
                   help="layout of the converted inputs and outputs (default NHWC); the model's inputs "
                        "and outputs are taken to be in the other layout (NCHW for --to NHWC, NHWC for "
                        "--to NCHW), and one an earlier conversion already put in the --to layout is "
                        "refused")
    p.add_argument("--name", action="append", default=None,
                   help="convert this input or output (repeatable; default: every rank-4 one)")
    side = p.add_mutually_exclusive_group()
    side.add_argument("--inputs-only", action="store_true", help="convert inputs only")
    side.add_argument("--outputs-only", action="store_true", help="convert outputs only")
    p.add_argument("--check", action="store_true",
                   help="run both models on the CPU EP and compare outputs bit for bit")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="symbolic input dimension values for --check (default 1)")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of the --check input data (default 0)")
    p.add_argument("--check-limit-mib", type=_check_limit_mib, default=None, metavar="MIB",
                   help="the most MiB (1 MiB = 2^20 bytes) of random input data --check makes, all inputs "
                        "together (default 1024, 1 GiB); inputs over it are refused before any is made")


def _run_convert(args: argparse.Namespace) -> int:
    """0 on success, 1 when --check finds a difference (nothing written), 3 when nothing matched
    (nothing written)."""
    from ort_layouts.models.convert import (
        CHECK_INPUT_LIMIT_IN_BYTES,
        check_conversion,
        convert_layout,
        converted_tensors,
        external_data_files,
        serialized_model,
    )

    if (args.dim or args.seed or args.check_limit_mib) and not args.check:
        given = "--dim" if args.dim else "--seed" if args.seed else "--check-limit-mib"
        raise UsageError(f"{given} goes with --check (the data of the check)")
    dims = _parse_dims("--dim", args.dim)
    for name in args.name or ():
        if not name.strip():
            raise UsageError("argument --name: an empty name; give an input or output name of the model")
    model = check_model(args.input, "INPUT")
    output = check_output_file(args.output, "OUTPUT")
    if output.exists() and _same_file(output, Path(args.input)):  # a link to it too
        raise UsageError(f"argument OUTPUT: {args.output!r} is the input model; write the converted model "
                         "to another file")
    converted = convert_layout(model, to=args.to, names=args.name,
                               inputs=not args.outputs_only, outputs=not args.inputs_only)
    changed = converted_tensors(converted, model)
    if not changed:
        side = "inputs" if args.inputs_only else "outputs" if args.outputs_only else "inputs or outputs"
        _note(f"nothing to convert: {args.input} has no rank-4 {side} (name others with --name); "
              f"{args.output} not written")
        return EXIT_NOTHING
    folder = Path(args.input).resolve().parent
    files = external_data_files(converted)
    for name in files:
        if output.exists() and _same_file(output, folder / name):
            raise UsageError(f"argument OUTPUT: {args.output!r} holds the input model's external data "
                             f"({name!r}), which the converted model refers to; write it to another file")
    if files and output.resolve().parent != folder:
        raise UsageError(f"argument OUTPUT: {args.input!r} keeps tensors in external data "
                         f"{files[:3]}, which the converted model refers to by paths relative to its "
                         f"own folder; valid: an OUTPUT in the folder of INPUT ({str(folder)!r})")
    data = serialized_model(converted, "converted model")  # over protobuf's 2 GB: refused, nothing written
    # the bytes written are the bytes checked, before they are written: a check that cannot run
    # or that fails writes nothing
    limit = args.check_limit_mib or CHECK_INPUT_LIMIT_IN_BYTES
    result = check_conversion(model, data, seed=args.seed, dims=dims, limit_bytes=limit) if args.check else \
        None
    if result is not None and not result:
        _out(result.summary())
        _note(f"{args.output} not written: the converted model's outputs differ from the original's")
        return 1
    from ort_layouts.reports.report import atomic_write_bytes

    atomic_write_bytes(output, data)  # a new file: another link to the one there keeps its bytes
    _out(f"wrote {args.output}: {args.to} at {changed}")
    if result is not None:
        _out(result.summary())
    return 0


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (one path, a symbolic or a hard link)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them is missing or unreadable
        return False


# ---- export (ort_layouts.models.testdata) -----------------------------------------------------
def _add_export(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=path_text, required=True,
                   help="directory to write the test directories into")
    p.add_argument("--model", type=path_text, help="export the cases of this model's layout nodes "
                        "(the 14 data-movement ops) instead of the standard suite")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="pin a dynamic dimension of --model (repeatable)")
    p.add_argument("--ops", action=_Once, type=selection_list("ops"), default=None,
                   help="suite filter: ops, e.g. Transpose,Pad")
    p.add_argument("--dtypes", action=_Once, type=selection_list("dtypes"), default=None,
                   help="data types to make the suite in, e.g. float32,int64 (as validate --dtypes)")
    p.add_argument("--ranks", action=_Once, type=selection_list("ranks"), default=None,
                   help="suite filter: ranks, e.g. 1,2,4 or 1-4")
    p.add_argument("--seed", type=non_negative_int, default=None,
                   help="seed of the cases' input data, of the suite or of --model's nodes: the cases "
                        "validate runs with the same --seed (default 0)")
    p.add_argument("--batched", action="store_true",
                   help="one directory, batched, whose graph holds every case (one per opset where the "
                        "cases ask for several: batched_opsetN)")
    p.add_argument("--force", action="store_true",
                   help="replace an earlier export in --out (the directories its cases.json lists)")


def _run_export(args: argparse.Namespace) -> int:
    """0 when it wrote the directories, 3 when the selection holds no case (nothing written)."""
    from ort_layouts.engine import selection
    from ort_layouts.models.testdata import export_test_dir
    from ort_layouts.reports.lock import holding_as
    from ort_layouts.reports.report import now_iso

    filters = [f for f, v in (("--ops", args.ops), ("--dtypes", args.dtypes), ("--ranks", args.ranks))
               if v is not None]
    if args.model and filters:
        raise UsageError(f"{filters[0]} filters the standard suite; it does not go with --model (a model's "
                         "cases are its own nodes)")
    if args.dim and not args.model:
        raise _dim_without_model(args.dim)
    dims = _parse_dims("--dim", args.dim)
    ops = _argument("--ops", selection.resolve_ops, args.ops)
    dtypes = _argument("--dtypes", selection.resolve_dtypes, args.dtypes)
    check_output_dir(args.out, "--out")
    model, layout = None, []
    if args.model:
        from ort_layouts.models.extract import cases_of, extract
        from ort_layouts.operators.registry import CASE_OPS

        model = check_model(args.model, "--model")
        layout = extract(model, dims=dims, ops=CASE_OPS)  # once, for the cases and the notes
        cases = cases_of(layout, seed=args.seed or 0)  # validate --model's: model_cases(model, seed=S)
    else:
        cases = selection.select_cases(ops=ops, dtypes=dtypes, ranks=args.ranks, seed=args.seed or 0)
    if not cases:
        what = _model_coverage_notes(model, layout, None) if model is not None else \
            "the selection holds no cases (check --ops, --dtypes, --ranks)"
        _note(f"nothing to export: {what}; nothing written")
        return EXIT_NOTHING
    if model is not None:  # how its layout nodes became these cases, as validate --model says it
        _model_coverage_notes(model, layout, None)
    with _stop_says_what_was_written(Path(args.out) / "cases.json", lambda written: (  # whole, or not at all
            f"the export in {args.out} is complete" if written
            else f"nothing exported ({args.out} as it was)")), holding_as(shlex.join([PROG, *args.argv]),
                                                                           now_iso()):  # the lock's holder
        dirs = export_test_dir(cases, args.out, batched=args.batched, replace=args.force)
    _out(f"wrote {len(dirs)} test directories under {args.out}; replay with: "
         f"onnx_test_runner -e dml {args.out}")
    return 0


def _add_setup(p: argparse.ArgumentParser) -> None:
    from ort_layouts.engine.dml.stack import MESA_VERSIONS

    p.add_argument("stack", choices=["dml"], help="what to set up: dml (DirectML under Wine on Linux)")
    p.add_argument("--home", type=path_text,
                   help="where the private parts go (default $ORT_LAYOUTS_DML_HOME, else "
                        "${XDG_CACHE_HOME:-~/.cache}/ort_layouts/dml)")
    p.add_argument("--mesa", action="append", choices=sorted(MESA_VERSIONS),
                   help="the private lavapipe: 25 (default) or 22 (reproduces the silent zeros); repeatable")
    p.add_argument("--no-apt", action="store_true", help="do not install system packages")
    p.add_argument("--force", action="store_true",
                   help="download the DLLs (those of --dml-version too) and compile the worker again")
    p.add_argument("--no-check", action="store_true",
                   help="skip the final Transpose checks (one under each --mesa and each --dml-version)")
    p.add_argument("--dml-version", type=release_list, nargs="+", default=[], metavar="V[,V...]",
                   help="also set up these older DirectML releases (e.g. 1.9.1 1.12.0, or "
                        "1.9.1,1.12.0) for validate --dml-version")


def _run_setup(args: argparse.Namespace) -> int:
    from ort_layouts.engine.dml.install import setup_dml

    versions = _dml_versions(args) if args.dml_version else ()
    if args.home:
        check_output_dir(args.home, "--home")
    setup_dml(home=args.home, mesa=args.mesa or "25", log=lambda line: _out(line),
              apt=not args.no_apt, force=args.force, check=not args.no_check,
              directml_versions=versions)
    return 0


COMMANDS: list[Command] = [
    Command("providers", "the execution providers and devices ONNX Runtime sees here",
            _add_providers, _run_providers),
    Command("describe", "the DirectML buffer tensor descriptor of a shape and layout",
            _add_describe, _run_describe),
    Command("validate", "run the layout suite on a provider and compare bit for bit",
            _add_validate, _run_validate),
    Command("merge", "merge reports into one compatibility matrix", _add_merge, _run_merge),
    Command("setup", "set up DirectML on Linux: Wine, vkd3d, Mesa lavapipe, the DML EP and its worker",
            _add_setup, _run_setup),
    Command("bench", "measure the engine, the oracle and the GPU path on this machine",
            _add_bench, _run_bench),
    Command("extract", "list a model's layout ops with their DirectML descriptors and what DirectML "
            "cannot take", _add_extract, _run_extract),
    Command("convert", "change a model's image inputs and outputs between NCHW and NHWC",
            _add_convert, _run_convert),
    Command("export", "write cases, the suite or a model's layout ops as ONNX test directories "
            "(onnx_test_runner -e dml DIR)", _add_export, _run_export),
]


def build_parser() -> argparse.ArgumentParser:
    from ort_layouts import __version__

    parser = _Parser(prog=PROG, description="DirectML buffer tensor descriptors for ONNX layout operations, "
                                            "validated bit for bit on ONNX Runtime execution providers.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(p)
        p.set_defaults(run=command.run)
    return parser


def _error(message: str) -> None:
    print(terminal_safe(f"{PROG}: error: {' '.join(message.split())}"), file=sys.stderr)


# a value that starts with "-" but is no option: a negative number or list, -inf, -nan
_NEGATIVE_VALUE = re.compile(r"-(\d|\.\d|inf(inity)?$|nan$)", re.IGNORECASE)


def _join_negative_values(argv: list[str]) -> list[str]:
    """``--pad -1,0,0,0`` as ``--pad=-1,0,0,0`` (``--value -inf`` as ``--value=-inf``): argparse
    takes a value that starts with "-" for an option unless it is one plain number. After
    ``--``, the end of the options, every argument is left as it is (``extract -- -1.onnx``)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return out + argv[i:]
        if (a.startswith("--") and "=" not in a and i + 1 < len(argv)
                and _NEGATIVE_VALUE.match(argv[i + 1]) and not re.fullmatch(r"-\d+(\.\d*)?", argv[i + 1])):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def parse_command_line(argv: Sequence[str]) -> argparse.Namespace:
    """The arguments of a command line (without the program name), as ``main`` reads them.

    Raises:
        UsageError: a bad command line.
    """
    return build_parser().parse_args(_join_negative_values(list(argv)))


def _escaped_or_replaced(error: UnicodeError) -> tuple[str | bytes, int]:
    """A stream's error handler: surrogateescape's bytes where it has them (a file name's bytes
    that are not UTF-8, written back as they were), else backslashreplace's escapes (a lone
    surrogate of a label, ``\\ud800``)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    try:
        return codecs.lookup_error("surrogateescape")(error)
    except UnicodeError:
        return codecs.lookup_error("backslashreplace")(error)


_ESCAPED_OR_REPLACED = "ort_layouts.escaped_or_replaced"
codecs.register_error(_ESCAPED_OR_REPLACED, _escaped_or_replaced)


def _printable_streams() -> None:
    """Standard output and error write what they cannot encode as escapes (``\\udcff``) instead
    of failing: a path or name that is not UTF-8 (decoded with surrogateescape) must not turn
    a finished run into an error at its last line. Python's standard error already does so. A
    stream that writes surrogateescape's bytes (under the C or C.UTF-8 locale) keeps writing
    them, and escapes what they are not (a lone surrogate, ``\\ud800``)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            if stream.errors == "strict":
                stream.reconfigure(errors="backslashreplace")
            elif stream.errors == "surrogateescape":
                stream.reconfigure(errors=_ESCAPED_OR_REPLACED)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    return _main(argv)[0]


def command_line() -> NoReturn:
    """The ``ort-layouts`` program (its script, ``python -m ort_layouts``): :func:`main` on
    ``sys.argv``, then the process ends (:func:`ort_layouts._startup.exit_now`), a stop signal
    that comes as it exits said in one line too. Standard output and error that nobody reads
    any longer (a pipe whose reader quit, as ``| head`` does; a closed descriptor) drop what is
    written to them: the run goes on to its report and its exit status."""
    _printable_streams()
    sys.stdout = _Unread.of(sys.stdout)
    sys.stderr = _Unread.of(sys.stderr)
    code, kept, stopped = _main(None)
    exit_now(code, kept, stopped=stopped)


class _Unread:
    """A standard stream that drops what is written once its reader is gone (a broken pipe, a
    closed stream) or when there is none (a descriptor closed when the program started:
    Python's stream is then None), where writing would end a run that its report outlives."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._gone = stream is None

    @classmethod
    def of(cls, stream: Any) -> Any:
        return stream if isinstance(stream, cls) else cls(stream)

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return int(self._stream.write(text))
            except BrokenPipeError:  # the reader quit
                self._gone = True
            except ValueError as e:  # the stream was closed (an encoding error is the caller's)
                if isinstance(e, UnicodeError):
                    raise
                self._gone = True
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except (BrokenPipeError, ValueError):
                self._gone = True

    def isatty(self) -> bool:
        return not self._gone and bool(self._stream.isatty())

    def __getattr__(self, name: str) -> Any:  # encoding, errors, fileno, reconfigure, ...
        if self._stream is None:
            raise AttributeError(f"standard stream is closed: no {name}")
        return getattr(self._stream, name)


def _main(argv: Sequence[str] | None) -> tuple[int, str | None, bool]:
    """:func:`main`'s exit status, what the command kept for a stop after it (None: nothing
    to say), and whether a stop signal stopped it (its line said)."""
    _printable_streams()
    args_list = list(sys.argv[1:] if argv is None else argv)
    args: argparse.Namespace | None = None
    with _stop_signals() as stops:
        try:
            args = parse_command_line(args_list)
            if args.command is None:
                raise UsageError(f"a command is required: {', '.join(c.name for c in COMMANDS)} "
                                 f"(see {PROG} --help)")
            args.argv = args_list
            args.kept = None
            code = int(args.run(args))
            stops.raise_noted()  # a stop that Python could not raise where it came
            return code, args.kept, False
        except SystemExit as e:  # --help and --version
            return (e.code if isinstance(e.code, int) else 0), None, False
        except UsageError as e:
            _error(str(e))
            return 2, None, False
        except KeyboardInterrupt as e:
            if not isinstance(e, _ReportedInterrupt):
                kept = getattr(args, "kept", None)
                _stop_line(_interrupted_text(e) + (f"; {kept}" if kept else ""))
            return 128 + _signal_of(e), None, True
        except BrokenPipeError:
            return 1, None, False
        except (OrtLayoutsError, ValueError, OSError, ImportError) as e:
            _error(_describe_exception(e))
            return 2, None, False
        except OverflowError as e:  # the last resort: a number past what a check above caught
            _error(f"a number is too large to work with: {e}")
            return 2, None, False
        except MemoryError:  # the last resort: an allocation past what a check above caught
            _error("the input is too large for this machine's memory; use smaller shapes or counts")
            return 2, None, False


def _signal_of(e: KeyboardInterrupt) -> int:
    """The signal behind an interrupt: SIGINT (Ctrl-C), or the one :class:`_Terminated` names."""
    if isinstance(e, (_Terminated, _ReportedInterrupt)) and e.args and isinstance(e.args[0], int):
        return int(e.args[0])
    return int(signal.SIGINT)


def _interrupted_text(e: KeyboardInterrupt) -> str:
    return stop_text(_signal_of(e))


def _describe_exception(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename is not None:
        return f"{e.strerror or e}: {e.filename!r}"
    if isinstance(e, ImportError):
        return f"a part of ort_layouts this command needs is missing: {e}"
    return str(e) or type(e).__name__
