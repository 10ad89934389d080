"""`gpuscope analyze TRACE...`: where the GPU time goes, with findings and integrity flags."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

HELP = (
    "analyze profiler outputs: torch.profiler (Kineto) traces, rocprof, rocprofv3 (CSV, JSON, "
    "rocpd), rpd, Nsight Systems and Nsight Compute; files or whole output directories"
)
SET_SCHEMA = "gpuscope.analysis-set/1"
PROGRESS_MIN_BYTES = 16 << 20


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "traces",
        nargs="+",
        metavar="TRACE",
        help="a profiler output file, or a directory (every process's outputs in it)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--md", metavar="FILE", help="write the report as Markdown")
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    parser.add_argument(
        "--perfetto",
        metavar="FILE",
        help="also write one Chrome/Perfetto timeline of the inputs (.json or .json.gz)",
    )
    parser.add_argument("--top", type=int, default=15, metavar="N", help="top kernels (15)")
    parser.add_argument(
        "--categories", metavar="FILE", help="extra kernel category rules (JSON, tried first)"
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no terminal report (files only)"
    )


def main(args: argparse.Namespace) -> int:
    from gpuscope.analysis.categories import load_rules
    from gpuscope.errors import GpuscopeError, InputError

    if args.top < 1:
        raise InputError(f"--top {args.top}: expected a positive number of kernels")
    rules = load_rules(args.categories)
    reports: list[dict[str, Any]] = []
    failed = 0
    for path in args.traces:
        try:
            found, broken = _analyze_path(path, rules, args.top, several=len(args.traces) > 1)
            reports += found
            failed += broken
        except GpuscopeError as error:
            if len(args.traces) == 1:
                raise
            print(f"error: {error}", file=sys.stderr)
            failed += 1
    _emit(reports, args)
    if args.perfetto and reports:
        from gpuscope.commands.export import write_timeline

        write_timeline(args.traces, args.perfetto)
    return 2 if failed else 0


def _analyze_path(
    path: str, rules: Any, top: int, several: bool
) -> tuple[list[dict[str, Any]], int]:
    """Every trace in `path` and how many failed; in a directory, one that fails is reported
    (`error:` line) and the others are still analysed."""
    from gpuscope.errors import GpuscopeError, ReaderError
    from gpuscope.trace.registry import find_sources

    sources = find_sources(path)
    reports = []
    for source in sources:
        try:
            reports.append(_analyze_one(source, rules, top))
        except GpuscopeError as error:
            if len(sources) == 1 and not several:
                raise
            print(f"error: {error}", file=sys.stderr)
    if not reports:
        raise ReaderError(f"{path}: none of its {len(sources)} traces could be read")
    return reports, len(sources) - len(reports)


def _analyze_one(source: Any, rules: Any, top: int) -> dict[str, Any]:
    from gpuscope.analysis.report import analyze
    from gpuscope.trace.registry import read_source

    with _progress(source.paths[0]) as progress:
        trace = read_source(source, progress)
    for warning in trace.meta.warnings:
        print(f"warning: {source.path}: {warning}", file=sys.stderr)
    return analyze(trace, rules, top).to_dict()


def _emit(reports: list[dict[str, Any]], args: argparse.Namespace) -> None:
    if not reports:
        return
    if args.json:
        import msgspec

        data: Any = reports[0] if len(reports) == 1 else {"schema": SET_SCHEMA, "reports": reports}
        _write(args.json, msgspec.json.format(msgspec.json.encode(data), indent=1))
    if args.md:
        from gpuscope.report.markdown import render_markdown

        _write(args.md, render_markdown(reports).encode())
    if args.html:
        from gpuscope.report.html import render_html

        _write(args.html, render_html(reports).encode())
    if not args.quiet:
        from rich.console import Console

        from gpuscope.report.terminal import render_terminal

        render_terminal(reports, Console(highlight=False))


def _write(target: str, data: bytes) -> None:
    from gpuscope._atomic import write_atomic
    from gpuscope.errors import InputError

    try:
        write_atomic(Path(target), data)
    except OSError as error:
        raise InputError(f"{target}: cannot write ({error.strerror or error})") from None


class _progress:
    """A progress bar on stderr for large files when stderr is a terminal; else nothing."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.bar: Any = None

    def __enter__(self) -> Any:
        try:
            big = os.path.getsize(self.path) >= PROGRESS_MIN_BYTES
        except OSError:
            big = False
        if not (big and sys.stderr.isatty()):
            return None
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

        self.bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.bar.start()
        task = self.bar.add_task(f"reading {Path(self.path).name}", total=None)
        return lambda done, total: self.bar.update(task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
