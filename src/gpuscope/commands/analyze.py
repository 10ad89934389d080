"""`gpuscope analyze TRACE...`: where the GPU time goes, with findings and integrity flags."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from gpuscope.commands._output import stdout_wanted, write_report

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
    parser.add_argument(
        "--json",
        metavar="FILE",
        help="write the report as JSON (- : standard output, no terminal report)",
    )
    parser.add_argument("--md", metavar="FILE", help="write the report as Markdown (- : stdout)")
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
    parser.add_argument("--workers", type=int, metavar="N",
                        help="several traces: analyse them in N processes (1 per CPU)")  # fmt: skip
    parser.add_argument("--engine", choices=("local", "ray", "dask"), default="local",
                        help="where several traces are analysed: a local process pool "
                        "(default), a Ray or a Dask cluster (optional extras)")  # fmt: skip


def main(args: argparse.Namespace) -> int:
    from gpuscope.analysis.categories import load_rules
    from gpuscope.errors import GpuscopeError, InputError

    if args.top < 1:
        raise InputError(f"--top {args.top}: expected a positive number of kernels")
    args.quiet = args.quiet or stdout_wanted(args)  # stdout carries that output alone
    rules = load_rules(args.categories)
    several = _several(args)
    if several is not None:  # several traces: in parallel, and across ranks when of one job
        from gpuscope.ranks.command import analyze_sources

        found, ranks, broken = analyze_sources(several[0], args)
        _emit(found, args, ranks)
        return 2 if broken + several[1] else 0
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


def _several(args: argparse.Namespace) -> tuple[list[Any], int] | None:
    """(sources, paths that failed) when the arguments hold several traces; None for one."""
    from gpuscope.errors import GpuscopeError
    from gpuscope.ranks.api import forget_heads
    from gpuscope.trace.registry import find_sources

    if len(args.traces) == 1:
        try:
            found = find_sources(args.traces[0])
        except GpuscopeError:
            return None  # the one-trace path reports it
        return (found, 0) if len(found) > 1 else None
    sources, failed = [], 0
    for path in args.traces:
        try:
            sources += find_sources(path)
            forget_heads()  # the first MiB of each file, cached: the workers read them anyway
        except GpuscopeError as error:
            print(f"error: {error}", file=sys.stderr)
            failed += 1
    return sources, failed


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


def _emit(
    reports: list[dict[str, Any]], args: argparse.Namespace, ranks: dict[str, Any] | None = None
) -> None:
    """`ranks`: the cross-rank report (docs/ranks.md), under "ranks" and as the first section."""
    if not reports:
        return
    lead = _lead(ranks)
    if args.json:
        write_report(args.json, json_report(reports, ranks))
    if args.md:
        from gpuscope.report.markdown import render_markdown

        write_report(args.md, render_markdown(reports, lead).encode())
    if args.html:
        from gpuscope.report.html import render_html

        write_report(args.html, render_html(reports, lead).encode())
    if not args.quiet:
        from rich.console import Console

        from gpuscope.report.terminal import render_terminal

        if ranks is not None:
            from gpuscope.ranks.command import render_job

            render_job(reports, lead, Console(highlight=False))
        else:
            render_terminal(reports, Console(highlight=False))


def json_report(reports: list[dict[str, Any]], ranks: dict[str, Any] | None = None) -> bytes:
    """What `--json` writes: the one analysis (`gpuscope.analysis/1`), else an analysis-set of
    several, with the cross-rank report (`gpuscope.ranks/1`) under "ranks" when they are the
    ranks of one job. Schemas: `gpuscope.schemas.load(name)`."""
    import msgspec

    data: Any = reports[0] if len(reports) == 1 else {"schema": SET_SCHEMA, "reports": reports}
    if ranks is not None:
        data["ranks"] = ranks
    return msgspec.json.format(msgspec.json.encode(data), indent=1)


def _lead(ranks: dict[str, Any] | None) -> list[Any]:
    if ranks is None:
        return []
    from gpuscope.ranks.section import section

    return [section(ranks)]


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
