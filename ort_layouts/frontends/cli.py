"""The ``ort-layouts`` command line (also ``python -m ort_layouts``).

Each subcommand is a :class:`Command`: a name, a help line, a function that adds its
arguments and a function that runs it and returns the exit status. Adding one is a matter of
writing those two functions and appending to :data:`COMMANDS`. Subcommands import the engine
lazily, so a piece that is missing or broken fails that subcommand alone.

Exit status: 0 success; 1 validation failures; 2 bad usage or setup (one line on stderr,
never a traceback); 130 interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn, TypeVar

from ort_layouts._errors import OrtLayoutsError

__all__ = ["COMMANDS", "Command", "bench_main", "build_parser", "main"]

PROG = "ort-layouts"
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
def comma_list(text: str, item: Callable[[str], T], **options: Any) -> tuple[T, ...]:
    """The one reading of a comma-separated argument: :func:`ort_layouts.engine.selection.parse_list`
    (``options`` are its keywords) with the element parser ``item``, its errors as argparse's
    (one line naming the argument)."""
    from ort_layouts.engine.selection import parse_list

    try:
        return parse_list(text, item, **options)
    except OrtLayoutsError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


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


def name_list(text: str) -> tuple[str, ...]:
    """``"a,b"``: one name or more."""
    return comma_list(text, str)


def optional_name_list(text: str) -> tuple[str, ...]:
    """``"a,b"``; an empty list selects nothing."""
    return comma_list(text, str, allow_empty=True)


def rank_list(text: str) -> tuple[int, ...]:
    """``"1,2,4"`` or ``"1-4"`` (ranks 1 to 8)."""
    from ort_layouts.engine.selection import parse_ranks

    try:
        return parse_ranks(text)
    except OrtLayoutsError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def plain_rank_list(text: str) -> tuple[int, ...]:
    """``"1,2,4"``: ranks as integers, without ranges; an empty list selects nothing."""
    return comma_list(text, int, what="ranks", example="1,2,4", allow_empty=True)


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


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def positive_int(text: str) -> int:
    value = non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not positive")
    return value


def number(text: str) -> float | int:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _out(text: str = "", *, stream: IO[str] | None = None) -> None:
    print(text, file=stream or sys.stdout)


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
    from ort_layouts.engine import providers as _providers
    infos = [_provider_dict(i) for i in _providers.list_providers()]
    default = _providers.default_provider()
    if args.json:
        for info in infos:
            info["default"] = info.get("name") == default
        _json_out({"default": default, "providers": infos})
        return 0
    rows = [("", "provider", "alias", "available", "GPU", "devices")]
    for info in infos:
        devices = "; ".join(_device_text(d) for d in info["devices"]) or "-"
        rows.append(("*" if info.get("name") == default else "", str(info.get("name", "")),
                     str(info.get("short_name", "")), "yes" if info.get("available") else "no",
                     "yes" if info.get("is_gpu") else "no", devices))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        _out("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=False)) + "  " + r[-1])
    _out(f"\n* validate runs on {default} unless --provider says otherwise")
    return 0


# ---- describe ------------------------------------------------------------------------------
def _add_describe(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dtype", default="float32",
                   help="data type, e.g. float32, float16, int64 (default float32)")
    p.add_argument("--shape", type=dims, required=True, help="logical sizes, e.g. 1,1,3,5")
    p.add_argument("--layout", default="NCHW",
                   help="memory layout: a name (NCHW, NHWC, NCDHW, NDHWC, HW, WH, DHW, WHD, ...) or an axis "
                        "order outermost first (e.g. 0,2,3,1); default NCHW (row-major)")
    p.add_argument("--strides", type=int_list, help="explicit strides in elements (instead of --layout)")
    t = p.add_mutually_exclusive_group()
    t.add_argument("--transpose", type=int_list, metavar="PERM",
                   help="the Transpose input as the DML EP builds it, e.g. 0,2,3,1")
    t.add_argument("--broadcast-to", type=dims, metavar="SHAPE",
                   help="the Expand input as the DML EP builds it (stride 0), e.g. 2,3,4")
    t.add_argument("--pad", type=int_list, metavar="PADS",
                   help="the Pad (PADDING1) operator for ONNX pads [x1_begin, ..., x1_end, ...]")
    p.add_argument("--mode", default="constant", choices=["constant", "edge", "reflect", "wrap"],
                   help="Pad mode (with --pad)")
    p.add_argument("--value", type=number, default=0, help="Pad constant value (with --pad)")
    p.add_argument("--axes", type=int_list, help="Pad axes (with --pad, opset 18)")
    o = p.add_mutually_exclusive_group()
    o.add_argument("--json", action="store_true", help="print JSON")
    o.add_argument("--svg", metavar="FILE", help="write the picture as SVG to FILE")
    o.add_argument("--cpp", action="store_true", help="print C++ DML_BUFFER_TENSOR_DESC initializers")


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

    dtype = DataType.from_name(args.dtype)
    if (args.mode != "constant" or args.axes is not None or args.value != 0) and args.pad is None:
        raise UsageError("--mode, --value and --axes go with --pad")
    if args.strides is not None:
        source = BufferTensorDesc(dtype, args.shape, args.strides)
    else:
        source = BufferTensorDesc.packed(dtype, args.shape, _layout_arg(args.layout))
    out: dict[str, Any] = {"operation": "none", "source": source, "descriptor": source}
    if args.transpose is not None:
        desc = source.transpose(args.transpose)
        out.update(operation="transpose", descriptor=desc, output=BufferTensorDesc(dtype, desc.sizes))
    elif args.broadcast_to is not None:
        desc = source.broadcast_to(args.broadcast_to)
        out.update(operation="broadcast", descriptor=desc, output=BufferTensorDesc(dtype, desc.sizes))
    elif args.pad is not None:
        from ort_layouts.operators.padding import PaddingOp

        op = PaddingOp.from_onnx(source, args.pad, mode=args.mode, value=args.value, axes=args.axes)
        out.update(operation="pad", descriptor=op.input, output=op.output, operator=op)
    return out


def _render_text(item: Any, title: str) -> str:
    """A descriptor (or PaddingOp) drawn as text under a title; the figures alone when the
    picture is too large to draw."""
    from ort_layouts._errors import OrtLayoutsError
    from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
    from ort_layouts.reports.render import render_text

    try:
        body = render_text(item)
    except OrtLayoutsError as e:
        descs = [item] if isinstance(item, BufferTensorDesc) else [item.input, item.output]
        body = "\n".join(
            f"{d.data_type.name} sizes {list(d.sizes)} strides {list(d.effective_strides)}, "
            f"{d.total_tensor_size_in_bytes} bytes" for d in descs) + f"\n(no picture: {e})"
    return f"{title}:\n{body}"


def _run_describe(args: argparse.Namespace) -> int:
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
        _out(desc.to_cpp("inputDesc" if output is not None else "tensorDesc"))
        if output is not None:
            _out(output.to_cpp("outputDesc"))
        if op is not None:
            start, end = ", ".join(map(str, op.start_padding)), ", ".join(map(str, op.end_padding))
            _out(f"// DML_PADDING1_OPERATOR_DESC: {op.mode.dml_name}, StartPadding {{{start}}}, "
                 f"EndPadding {{{end}}}")
    elif args.svg:
        from ort_layouts.reports.render import render_svg
        from ort_layouts.reports.report import atomic_write_text

        atomic_write_text(args.svg, str(render_svg(op if op is not None else desc)))
        _out(f"wrote {args.svg}")
    else:
        titles = {"none": "descriptor", "transpose": "Transpose input, as the DML EP reads it",
                  "broadcast": "Expand input, as the DML EP reads it"}
        if d["operation"] != "none":
            _out(_render_text(d["source"], "source") + "\n")
        if op is not None:
            _out(_render_text(op, f"Pad as DML_OPERATOR_PADDING1 ({op.mode.dml_name}, padding value "
                                  f"bytes 0x{op.padding_value_bytes.hex() or '0'})"))
        else:
            _out(_render_text(desc, titles[d["operation"]]))
            if output is not None:
                _out("\n" + _render_text(output, "output"))
    return 0


# ---- validate ------------------------------------------------------------------------------
def _add_selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ops", type=name_list, help="ops to run: Transpose,Expand,Pad (default all)")
    p.add_argument("--dtypes", type=name_list, help="data types, e.g. float32,float16,int64 (default all)")
    p.add_argument("--ranks", type=rank_list, help="ranks, e.g. 1,2,4 or 1-4 (default the suite's)")
    p.add_argument("--values", type=name_list,
                   help="keep the cases whose input values are of these kinds: random, special, iota")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the input data (default 0)")
    p.add_argument("--shard", type=shard, metavar="K/N", help="run the K-th of N shards of the cases")


def _add_validate(p: argparse.ArgumentParser) -> None:
    p.add_argument("--provider", default="auto",
                   help="execution provider: dml, webgpu, cuda, cpu, a full name, or auto (default)")
    p.add_argument("--device-id", type=non_negative_int, default=0, help="device index (default 0)")
    p.add_argument("--provider-option", type=key_value, action="append", default=[], metavar="KEY=VALUE",
                   help="an execution provider option, e.g. performance_preference=high_performance "
                        "(repeatable)")
    _add_selection(p)
    p.add_argument("--model", metavar="MODEL.onnx",
                   help="validate this model's Transpose/Expand/Pad nodes (real shapes and data types) "
                        "instead of the standard suite")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="pin a dynamic dimension of --model, e.g. --dim batch=1 (repeatable)")
    p.add_argument("--report", metavar="DIR", help="write results.jsonl, report.json, junit.xml, report.html")
    p.add_argument("--resume", action="store_true", help="continue the report in --report DIR")
    p.add_argument("--optimize", action="store_true", help="run with ONNX Runtime graph optimizations on")
    p.add_argument("--strict", action="store_true", help="unsupported cases fail the run")
    p.add_argument("--batch-size", type=positive_int, default=256, help="cases per session (default 256)")
    p.add_argument("--limit", type=positive_int, help="run at most this many cases (after sharding)")
    p.add_argument("--progress", choices=["auto", "bar", "lines", "none"], default="auto",
                   help="progress on stderr: a bar on a terminal, lines in CI (default auto)")


def _argument(flag: str, check: Callable[[Any], T], value: Any) -> T:
    """``check(value)``, its error as one line naming the argument."""
    try:
        return check(value)
    except OrtLayoutsError as e:
        raise UsageError(f"argument {flag}: {e}") from None


def _select_cases(args: argparse.Namespace) -> list[Any]:
    """The cases validate's selection names (:func:`ort_layouts.engine.selection.select_cases`)."""
    from ort_layouts.engine import selection

    ops = _argument("--ops", selection.resolve_ops, args.ops)
    dtypes = selection.resolve_dtypes(args.dtypes)
    values = _argument("--values", selection.resolve_value_kinds, args.values)
    model_dims = None
    reader = None
    if args.model:
        from ort_layouts.models.extract import model_cases, parse_dims

        model_dims, reader = parse_dims(args.dim), model_cases
    cases = selection.select_cases(ops=ops, dtypes=dtypes, ranks=args.ranks, values=values, seed=args.seed,
                                   shard=args.shard, limit=args.limit, model=args.model, dims=model_dims,
                                   model_cases=reader)
    if not cases and args.model:
        raise UsageError(f"the selection holds no cases: {args.model} has no Transpose/Expand/Pad with "
                         "static shapes left (see ort-layouts extract MODEL; pin dynamic dimensions "
                         "with --dim)")
    if not cases:
        raise UsageError("the selection holds no cases (check --ops, --dtypes, --ranks, --shard)")
    return cases


class Progress:
    """Progress on stderr: a redrawn bar on a terminal, plain lines otherwise (CI).

    Failing cases are always printed as a line of their own.
    """

    def __init__(self, total: int, *, mode: str = "auto", stream: IO[str] | None = None,
                 done: int = 0) -> None:
        import os

        self.stream = stream or sys.stderr
        if mode == "auto":
            tty = bool(getattr(self.stream, "isatty", lambda: False)())
            mode = "bar" if tty and not os.environ.get("CI") else "lines"
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
        if is_failure(result):
            self._clear()
            print(f"{status.upper()} {result.case.id}: {failure_text(result)}", file=self.stream, flush=True)
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


def _run_validate(args: argparse.Namespace) -> int:
    from ort_layouts.engine import providers
    from ort_layouts.engine.session import ValidationSession, validation_meta
    from ort_layouts.reports.report import Report, summary_line
    from ort_layouts.reports.writer import ReportWriter

    if args.resume and not args.report:
        raise UsageError("--resume needs --report DIR")
    cases = _select_cases(args)
    provider = providers.resolve_provider(args.provider)
    meta = validation_meta(
        provider=provider, device_id=args.device_id, command=shlex.join([PROG, *args.argv]), model=args.model,
        ops=args.ops, dtypes=args.dtypes, ranks=args.ranks, values=args.values, seed=args.seed,
        shard=args.shard, limit=args.limit, optimize=args.optimize,
        provider_options=dict(args.provider_option), strict=args.strict)
    writer = ReportWriter(args.report, meta=meta, planned=[c.id for c in cases], resume=args.resume,
                          strict=args.strict) if args.report else None
    session = ValidationSession(cases, provider=provider, device_id=args.device_id, optimize=args.optimize,
                                provider_options=dict(args.provider_option), batch_size=args.batch_size,
                                writer=writer, device=meta["device"])
    try:
        if writer and writer.resumed:
            print(f"{PROG}: resuming {args.report}: {session.done_count} of {len(cases)} cases "
                  "already run", file=sys.stderr)
        progress = Progress(len(cases), mode=args.progress, done=session.done_count)
        outcome = session.run(on_result=progress.update)
        progress.close()
    except KeyboardInterrupt:
        if writer:
            print(f"\n{PROG}: interrupted; {len(writer.results)} results kept in {args.report} "
                  "(--resume continues)", file=sys.stderr)
        raise
    report = outcome.summary
    if report is None:
        report = Report({**meta, "device": outcome.device}, outcome.results)
    _out(summary_line(report, strict=args.strict, seconds=outcome.seconds))
    if writer:
        _out(f"reports: {Path(args.report) / 'report.html'}, report.json, junit.xml, results.jsonl")
    failures = report.failures(strict=args.strict)
    return 1 if failures or not report.complete else 0


# ---- merge ---------------------------------------------------------------------------------
def _add_merge(p: argparse.ArgumentParser) -> None:
    p.add_argument("reports", nargs="+", metavar="REPORT", help="report directories or report.json files")
    p.add_argument("--out", metavar="DIR", help="write matrix.json and matrix.html into DIR")
    p.add_argument("--json", action="store_true", help="print the matrix as JSON instead of a table")


def _run_merge(args: argparse.Namespace) -> int:
    from ort_layouts.reports.merge import merge_reports, write_matrix

    matrix = merge_reports(args.reports)
    if args.json:
        _json_out(matrix.to_dict())
    else:
        sys.stdout.write(matrix.text_table())
    if args.out:
        paths = write_matrix(matrix, args.out)
        print(f"wrote {paths['json']} and {paths['html']}", file=sys.stderr)
    return 0


# ---- bench (ort_layouts.frontends.bench) ------------------------------------------------------
def _mib(text: str) -> int:
    from ort_layouts.frontends.bench import MIB

    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"size {text!r} must be > 0 (MiB)")
    return max(1, int(value * MIB))


def _sections(text: str) -> tuple[str, ...]:
    from ort_layouts.frontends.bench import SECTIONS

    names = optional_name_list(text)
    bad = [s for s in names if s not in SECTIONS]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"sections {bad or text!r} are not valid; valid: {','.join(SECTIONS)}")
    return names


def _bench_ranks(text: str) -> tuple[int, ...]:
    return comma_list(text, int, what="ranks", example="1,2,4", skip_blanks=False, allow_empty=True)


def _add_bench(p: argparse.ArgumentParser) -> None:
    try:
        from ort_layouts.frontends.bench import DEFAULT_SECTIONS, MIB
    except ImportError:  # reported when the command runs: the other commands still work
        return
    p.add_argument("--sections", type=_sections, default=DEFAULT_SECTIONS,
                   help=f"comma-separated sections to run (default: {','.join(DEFAULT_SECTIONS)})")
    p.add_argument("--provider", default="cpu", help="EP of the suite and memory sections (default: cpu)")
    p.add_argument("--gpu-provider", default="auto",
                   help="EP of the gpu section: auto, webgpu, dml, cuda (default: auto)")
    p.add_argument("--device-id", type=int, default=0, help="device of the gpu section (default: 0)")
    p.add_argument("--suite-sample", type=int, default=300,
                   help="cases timed batched and one session per case (default: 300)")
    p.add_argument("--suite-ranks", type=_bench_ranks, default=None,
                   help="comma-separated input ranks of the suite and memory sections' suite (default: all)")
    p.add_argument("--oracle-mb", type=_mib, default=256 * MIB,
                   help="oracle tensor size in MiB (default 256)")
    p.add_argument("--gpu-mb", type=_mib, default=64 * MIB, help="gpu tensor size in MiB (default 64)")
    p.add_argument("--gpu-iterations", type=int, default=200, help="runs per gpu timing loop (default 200)")
    p.add_argument("--memory-mb", type=_mib, default=256 * MIB,
                   help="size of the large memory-section case in MiB (default 256)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved repeats, best kept (default 3)")
    p.add_argument("--gpu-on-cpu", action="store_true",
                   help="run the gpu section on the CPU EP when no GPU EP is there (tests the code path)")
    p.add_argument("--json", metavar="FILE", default=None, help="also write the machine and figures as JSON")


def _run_bench(args: argparse.Namespace) -> int:
    """0 when it ran (missed targets are figures, not errors)."""
    from ort_layouts.frontends.bench import machine, run_benchmarks

    figures = run_benchmarks(
        args.sections, provider=args.provider, gpu_provider=args.gpu_provider, device_id=args.device_id,
        suite_sample=args.suite_sample, suite_ranks=args.suite_ranks or None, oracle_bytes=args.oracle_mb,
        gpu_bytes=args.gpu_mb, gpu_iterations=args.gpu_iterations, memory_bytes=args.memory_mb,
        repeats=args.repeats, allow_cpu_gpu_section=args.gpu_on_cpu)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": machine(), "figures": [x.to_dict() for x in figures]}, f, indent=2)
            f.write("\n")
    return 0


def bench_main(argv: Sequence[str] | None = None) -> int:
    """The bench subcommand as a program of its own (``scripts/bench.py``): argparse's usage
    and exit status 2 on a bad command line."""
    from ort_layouts.frontends import bench

    parser = argparse.ArgumentParser(prog="bench", description=(bench.__doc__ or "").splitlines()[0])
    _add_bench(parser)
    return _run_bench(parser.parse_args(argv))


# ---- extract (ort_layouts.models.extract) -----------------------------------------------------
def _layout_ops(text: str) -> tuple[str, ...]:
    from ort_layouts.models.extract import LAYOUT_OPS

    by_lower = {op.lower(): op for op in LAYOUT_OPS}
    names = optional_name_list(text)
    unknown = [n for n in names if n.lower() not in by_lower]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown op {(unknown or [text])[0]!r}; valid: {list(LAYOUT_OPS)}")
    return tuple(by_lower[n.lower()] for n in names)


def _add_extract(p: argparse.ArgumentParser) -> None:
    from ort_layouts.models.extract import LAYOUT_OPS

    p.add_argument("model", help="the .onnx model to read")
    p.add_argument("--json", action="store_true", help="print the layout ops as JSON")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="pin a dynamic dimension, e.g. --dim batch=1 (repeatable)")
    p.add_argument("--ops", type=_layout_ops, default=None,
                   help=f"only these op types, comma-separated (default all: {','.join(LAYOUT_OPS)})")


def _run_extract(args: argparse.Namespace) -> int:
    from ort_layouts.models.extract import extract, format_layout_op, parse_dims

    ops = extract(args.model, dims=parse_dims(args.dim), ops=args.ops)
    if args.json:
        _out(json.dumps([op.to_dict() for op in ops], indent=2))
        return 0
    for op in ops:
        _out(format_layout_op(op))
    flagged = sum(1 for op in ops if op.flags)
    cases = sum(1 for op in ops if op.to_case() is not None)
    _out(f"{len(ops)} layout ops, {flagged} flagged, {cases} validation cases")
    return 0


# ---- convert (ort_layouts.models.convert) -----------------------------------------------------
def _add_convert(p: argparse.ArgumentParser) -> None:
    from ort_layouts.models.convert import LAYOUTS

    p.add_argument("input", help="the .onnx model to convert")
    p.add_argument("output", help="where to write the converted model")
    p.add_argument("--to", default="nhwc", type=str.upper, choices=LAYOUTS,
                   help="layout of the converted inputs and outputs (default NHWC)")
    p.add_argument("--name", action="append", default=None,
                   help="convert this input or output (repeatable; default: every rank-4 one)")
    side = p.add_mutually_exclusive_group()
    side.add_argument("--inputs-only", action="store_true", help="convert inputs only")
    side.add_argument("--outputs-only", action="store_true", help="convert outputs only")
    p.add_argument("--check", action="store_true",
                   help="run both models on the CPU EP and compare outputs bit for bit")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="symbolic input dimension values for --check (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the --check input data")


def _run_convert(args: argparse.Namespace) -> int:
    """0 on success, 1 when --check finds a difference."""
    import onnx

    from ort_layouts.models.convert import check_conversion, convert_layout, converted_tensors
    from ort_layouts.models.extract import parse_dims

    converted = convert_layout(args.input, to=args.to, names=args.name,
                               inputs=not args.outputs_only, outputs=not args.inputs_only)
    onnx.save(converted, args.output)
    changed = converted_tensors(converted)
    _out(f"wrote {args.output}: {args.to} at {changed or 'no tensors (nothing matched)'}")
    if args.check:
        result = check_conversion(args.input, converted, seed=args.seed, dims=parse_dims(args.dim))
        _out(result.summary())
        return 0 if result else 1
    return 0


# ---- export (ort_layouts.models.testdata) -----------------------------------------------------
def _add_export(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="directory to write the test directories into")
    p.add_argument("--model", help="export the Transpose/Expand/Pad cases of this model instead "
                                   "of the standard suite")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="pin a dynamic dimension of --model (repeatable)")
    p.add_argument("--ops", type=optional_name_list, default=None,
                   help="suite filter: ops, e.g. Transpose,Pad")
    p.add_argument("--dtypes", type=optional_name_list, default=None,
                   help="suite filter: data types, e.g. float32,int64")
    p.add_argument("--ranks", type=plain_rank_list, default=None, help="suite filter: ranks, e.g. 1,2,4")
    p.add_argument("--seed", type=int, default=0, help="seed of the suite's input data")
    p.add_argument("--batched", action="store_true", help="one directory holding every case")


def _run_export(args: argparse.Namespace) -> int:
    from ort_layouts.engine.suite import standard_suite
    from ort_layouts.models.extract import parse_dims
    from ort_layouts.models.testdata import export_test_dir

    if args.model:
        source: Any = args.model
    else:
        source = standard_suite(ops=args.ops, dtypes=args.dtypes, ranks=args.ranks, seed=args.seed)
    dirs = export_test_dir(source, args.out, dims=parse_dims(args.dim), batched=args.batched)
    _out(f"wrote {len(dirs)} test directories under {args.out}; replay with: "
         f"onnx_test_runner -e dml {args.out}")
    return 0


def _add_setup(p: argparse.ArgumentParser) -> None:
    from ort_layouts.engine.dml.stack import MESA_VERSIONS

    p.add_argument("stack", choices=["dml"], help="what to set up: dml (DirectML under Wine on Linux)")
    p.add_argument("--home", help="where the private parts go (default $ORT_LAYOUTS_DML_HOME or "
                                  "~/.cache/ort_layouts/dml)")
    p.add_argument("--mesa", action="append", choices=sorted(MESA_VERSIONS),
                   help="the private lavapipe: 25 (default) or 22 (reproduces the silent zeros); repeatable")
    p.add_argument("--no-apt", action="store_true", help="do not install system packages")
    p.add_argument("--force", action="store_true", help="download the DLLs and compile the worker again")
    p.add_argument("--no-check", action="store_true", help="skip the final Transpose check")


def _run_setup(args: argparse.Namespace) -> int:
    from ort_layouts.engine.dml.install import setup_dml

    setup_dml(home=args.home, mesa=args.mesa or "25", log=lambda line: _out(line),
              apt=not args.no_apt, force=args.force, check=not args.no_check)
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
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)


def _join_negative_values(argv: list[str]) -> list[str]:
    """``--pad -1,0,0,0`` as ``--pad=-1,0,0,0``: argparse takes a value that starts with "-"
    for an option unless it is one plain number."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if (a.startswith("--") and "=" not in a and i + 1 < len(argv)
                and re.match(r"^-\d", argv[i + 1]) and not re.fullmatch(r"-\d+(\.\d*)?", argv[i + 1])):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        args = parser.parse_args(_join_negative_values(args_list))
        if args.command is None:
            raise UsageError(f"a command is required: {', '.join(c.name for c in COMMANDS)} "
                             f"(see {PROG} --help)")
        args.argv = args_list
        return int(args.run(args))
    except SystemExit as e:  # --help and --version
        return e.code if isinstance(e.code, int) else 0
    except UsageError as e:
        _error(str(e))
        return 2
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except (OrtLayoutsError, ValueError, OSError, ImportError) as e:
        _error(_describe_exception(e))
        return 2


def _describe_exception(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename is not None:
        return f"{e.strerror or e}: {e.filename!r}"
    if isinstance(e, ImportError):
        return f"a part of ort_layouts this command needs is missing: {e}"
    return str(e) or type(e).__name__
