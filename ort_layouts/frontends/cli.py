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
from typing import IO, Any, NoReturn

from ort_layouts._errors import OrtLayoutsError

__all__ = ["COMMANDS", "Command", "build_parser", "main"]

PROG = "ort-layouts"


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
def int_list(text: str) -> tuple[int, ...]:
    """``"1,1,3,5"`` (or ``"[1, 1, 3, 5]"``) as a tuple of ints."""
    body = text.strip().strip("[]()").replace(" ", "")
    try:
        return tuple(int(v) for v in body.split(",")) if body else ()
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of integers (e.g. 1,1,3,5)") from None


def dims(text: str) -> tuple[int, ...]:
    """A shape: a comma-separated list of one or more non-negative integers."""
    values = int_list(text)
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"{text!r} is not a shape of non-negative integers (e.g. 1,1,3,5)")
    return values


def name_list(text: str) -> tuple[str, ...]:
    values = tuple(v.strip() for v in text.split(",") if v.strip())
    if not values:
        raise argparse.ArgumentTypeError(f"{text!r} is an empty list")
    return values


def rank_list(text: str) -> tuple[int, ...]:
    """``"1,2,4"`` or ``"1-4"`` (ranks 1 to 8)."""
    ranks: list[int] = []
    for part in name_list(text):
        try:
            if "-" in part:
                lo, hi = (int(v) for v in part.split("-", 1))
                ranks.extend(range(lo, hi + 1))
            else:
                ranks.append(int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(f"rank {part!r} is not an integer or a range like 1-4") from None
    bad = [r for r in ranks if not 1 <= r <= 8]
    if bad or not ranks:
        raise argparse.ArgumentTypeError(f"ranks {text!r}: {bad or 'none'} not within 1..8")
    return tuple(dict.fromkeys(ranks))


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
    from ort_layouts.reports.render import render_text

    try:
        body = render_text(item)
    except OrtLayoutsError as e:
        descs = [item.input, item.output] if hasattr(item, "start_padding") else [item]
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


def select_cases(args: argparse.Namespace) -> list[Any]:
    """The cases a validate (or pytest) selection names: suite, filters, values, shard, limit."""
    from ort_layouts.descriptors.dtypes import DataType
    from ort_layouts.operators.case import VALUE_KINDS
    from ort_layouts.operators.registry import CASE_OPS as OPS

    ops = None
    if args.ops:
        by_lower = {op.lower(): op for op in OPS}
        unknown = [o for o in args.ops if o.lower() not in by_lower]
        if unknown:
            raise UsageError(f"argument --ops: unknown op {unknown[0]!r}; valid: {list(OPS)}")
        ops = [by_lower[o.lower()] for o in args.ops]
    dtypes = [DataType.from_name(d) for d in args.dtypes] if args.dtypes else None
    if args.values:
        unknown = [v for v in args.values if v not in VALUE_KINDS]
        if unknown:
            raise UsageError(f"argument --values: unknown kind {unknown[0]!r}; valid: {list(VALUE_KINDS)}")
    from ort_layouts.engine.suite import standard_suite

    if getattr(args, "model", None):
        from ort_layouts.models.extract import model_cases, parse_dims

        dims = parse_dims(getattr(args, "dim", None))
        cases = [c for kind in (args.values or ["random"])
                 for c in model_cases(args.model, dims=dims, values=kind, seed=args.seed)
                 if (ops is None or c.op in ops) and (dtypes is None or c.data_type in dtypes)
                 and (not args.ranks or c.rank in args.ranks)]
    else:
        cases = list(standard_suite(ops=ops, dtypes=dtypes, ranks=list(args.ranks) if args.ranks else None,
                                    seed=args.seed))
    if args.values:
        cases = [c for c in cases if c.values in args.values]
    if args.shard:
        k, n = args.shard
        cases = cases[k - 1::n]
    if getattr(args, "limit", None):
        cases = cases[: args.limit]
    if not cases and getattr(args, "model", None):
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
    from ort_layouts.engine import providers as _providers
    from ort_layouts.reports.report import Report as _Report
    from ort_layouts.reports.report import ReportWriter, environment, summary_line

    if args.resume and not args.report:
        raise UsageError("--resume needs --report DIR")
    cases = select_cases(args)
    provider = _providers.resolve_provider(args.provider)
    device, driver = _device_of(_providers, provider, args.device_id)
    selection = {
        "provider": provider, "device_id": args.device_id,
        "suite": f"model:{args.model}" if args.model else "standard",
        "ops": list(args.ops or []), "dtypes": list(args.dtypes or []), "ranks": list(args.ranks or []),
        "values": list(args.values or []), "seed": args.seed,
        "shard": f"{args.shard[0]}/{args.shard[1]}" if args.shard else "", "limit": args.limit or 0,
        "optimize": args.optimize, "provider_options": dict(args.provider_option),
    }
    meta = {"provider": provider, "device_id": args.device_id, "device": device, "driver": driver,
            "command": shlex.join([PROG, *args.argv]), "environment": environment(),
            "selection": selection, "strict": args.strict}
    writer = ReportWriter(args.report, meta=meta, planned=[c.id for c in cases], resume=args.resume,
                          strict=args.strict) if args.report else None
    results: list[Any] = []
    try:
        done = writer.done_ids if writer else frozenset()
        todo = [c for c in cases if c.id not in done]
        if writer and writer.resumed:
            print(f"{PROG}: resuming {args.report}: {len(cases) - len(todo)} of {len(cases)} cases "
                  "already run", file=sys.stderr)
        progress = Progress(len(cases), mode=args.progress, done=len(cases) - len(todo))
        started = time.monotonic()

        def on_result(result: Any) -> None:
            results.append(result)
            if writer:
                if result.device and not writer.meta.get("device"):
                    writer.update_meta(device=result.device)
                writer.add(result)
            progress.update(result)

        if todo:
            from ort_layouts.engine.runner import run_cases

            run_cases(todo, provider=provider, device_id=args.device_id, optimize=args.optimize,
                      provider_options=dict(args.provider_option) or None, batch_size=args.batch_size,
                      on_result=on_result)
        progress.close()
        seconds = time.monotonic() - started
    except KeyboardInterrupt:
        if writer:
            print(f"\n{PROG}: interrupted; {len(writer.results)} results kept in {args.report} "
                  "(--resume continues)", file=sys.stderr)
        raise
    finally:
        if writer:
            report = writer.write_summaries(finished=True)
            writer.close()
    if not writer:
        device = device or next((r.device for r in results if r.device), "")
        report = _Report({**meta, "device": device}, tuple(results))
    _out(summary_line(report, strict=args.strict, seconds=seconds))
    if writer:
        _out(f"reports: {Path(args.report) / 'report.html'}, report.json, junit.xml, results.jsonl")
    failures = report.failures(strict=args.strict)
    return 1 if failures or not report.complete else 0


def _device_of(providers: Any, provider: str, device_id: int) -> tuple[str, str]:
    """The device name and driver the provider lists at ``device_id`` ("" when it lists none)."""
    try:
        infos = providers.list_providers()
    except Exception:
        return "", ""
    for info in infos:
        if getattr(info, "name", None) == provider:
            devices = list(getattr(info, "devices", ()) or ())
            if devices:
                d = devices[device_id] if device_id < len(devices) else devices[0]
                name = " ".join(str(v) for v in (getattr(d, "vendor", ""), getattr(d, "device", "")) if v)
                return name, str(getattr(d, "driver", "") or "")
    return "", ""


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


# ---- bench (ort_layouts.frontends.bench) ------------------------------------------------------------
def _add_bench(p: argparse.ArgumentParser) -> None:
    try:
        from ort_layouts.frontends.bench import add_arguments
    except ImportError:  # reported when the command runs: the other commands still work
        return
    add_arguments(p)


def _run_bench(args: argparse.Namespace) -> int:
    from ort_layouts.frontends.bench import run

    return run(args)


COMMANDS: list[Command] = [
    Command("providers", "the execution providers and devices ONNX Runtime sees here",
            _add_providers, _run_providers),
    Command("describe", "the DirectML buffer tensor descriptor of a shape and layout",
            _add_describe, _run_describe),
    Command("validate", "run the layout suite on a provider and compare bit for bit",
            _add_validate, _run_validate),
    Command("merge", "merge reports into one compatibility matrix", _add_merge, _run_merge),
    Command("bench", "measure the engine, the oracle and the GPU path on this machine",
            _add_bench, _run_bench),
    Command("extract", "list a model's layout ops with their DirectML descriptors and what DirectML "
            "cannot take", lambda p: _models("extract").add_extract_arguments(p),
            lambda a: int(_models("extract").run_extract(a))),
    Command("convert", "change a model's image inputs and outputs between NCHW and NHWC",
            lambda p: _models("convert").add_convert_arguments(p),
            lambda a: int(_models("convert").run_convert(a))),
    Command("export", "write cases, the suite or a model's layout ops as ONNX test directories "
            "(onnx_test_runner -e dml DIR)", lambda p: _models("testdata").add_export_arguments(p),
            lambda a: int(_models("testdata").run_export(a))),
]


def _models(name: str) -> Any:
    """The model-conversion modules, imported when their subcommand is used."""
    import importlib

    return importlib.import_module(f"ort_layouts.models.{name}")


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
