"""`gpuscope analyze TRACE...`: where the GPU time goes, with findings and integrity flags."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuscope.commands import _tables
from gpuscope.commands._output import (
    check,
    json_bytes,
    shown_as,
    stdout_wanted,
    write,
)
from gpuscope.commands._record import add_options
from gpuscope.commands._say import say, warn
from gpuscope.errors import ReaderError
from gpuscope.formats import formats_help

HELP = "where the GPU time goes, from any profiler's output (formats: analyze --help)"
DESCRIPTION = (  # every format the reader registry knows (gpuscope/formats.py)
    f"analyze profiler outputs — {formats_help()}: files or whole output directories (the "
    "format is found by content)"
)
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
    parser.add_argument("--full", action="store_true",
                        help="print every section in the terminal (default: a one-screen "
                        "summary; --md / --html always hold every section)")  # fmt: skip
    parser.add_argument("--workers", type=int, metavar="N",
                        help="several traces: analyse them in N processes (1 per CPU)")  # fmt: skip
    parser.add_argument("--skip-bad", action="store_true",
                        help="leave out inputs that cannot be read, with a warning (default: "
                        "an error naming each, exit 2)")  # fmt: skip
    parser.add_argument("--engine", choices=("local", "ray", "dask"), default="local",
                        help="where several traces are analysed: a local process pool "
                        "(default), a Ray or a Dask cluster (optional extras)")  # fmt: skip
    parser.add_argument("--engine-timeout", type=float, metavar="SECONDS",
                        help="how long the cluster at RAY_ADDRESS / DASK_SCHEDULER_ADDRESS may "
                        "take to answer (default: $GPUSCOPE_ENGINE_TIMEOUT, else 30)")  # fmt: skip
    _tables.add_options(parser, png=True)
    add_options(parser)


def main(args: argparse.Namespace) -> int:
    from gpuscope.analysis.categories import load_rules
    from gpuscope.commands import _record
    from gpuscope.errors import InputError

    if args.top < 1:
        raise InputError(f"--top {args.top}: expected a positive number of kernels")
    _check_engine(args)
    args.quiet = args.quiet or stdout_wanted(args, *OUTPUTS)  # stdout carries that output alone
    rules = load_rules(args.categories)
    found = _find(args)
    outputs = {"--perfetto": args.perfetto, **_record.db_output(args)}
    check(args, [*args.traces, args.categories, *found.files()], outputs)
    _record.checked(args)
    _tables.check_folders(args, [*args.traces, args.categories, *found.files()])
    analysis = None
    if len(found.sources) == 1 and len(args.traces) == 1 and not found.failed:
        analysis = _analysis_of(found.sources[0], rules, args.top)
        reports, ranks = [analysis.to_dict()], None
    elif found.sources:
        reports, ranks, failed = _analyze_sources(found.sources, args)
        found.failed += failed
    else:
        reports, ranks = [], None
    _say_failed(found.failed, args.skip_bad)
    if not reports:
        raise ReaderError(_none_read(args, found))
    broken = bool(found.failed) and not args.skip_bad
    if args.perfetto:  # first: a timeline that cannot be made stops the command before any report
        _timeline(args, found, broken)
    _emit(reports, args, ranks, found.failed)
    _tables_and_figures(args, reports, ranks, found.failed, analysis)
    if not broken:  # last: a result is kept once every output asked for is written
        from gpuscope.ranks.api import analysis_set

        _keep(args, analysis_set(reports, ranks, found.failed))
    return 2 if broken else 0


OUTPUTS = ("json", "md", "html", "perfetto")


def _keep(args: argparse.Namespace, data: dict[str, Any]) -> None:
    """--record: the report's metrics under --workload (default: the first trace's name)."""
    from gpuscope.commands._record import record
    from gpuscope.history.metrics import workload_from_path

    artefacts = args.json if args.json and not _output_is_stdout(args.json) else args.traces[0]
    record(args, data, workload_from_path(args.traces[0]), os.path.abspath(artefacts))


def _output_is_stdout(target: str) -> bool:
    from gpuscope.output import is_stdout

    return is_stdout(target)


@dataclass
class _Found:
    """The sources of every path given, and the inputs that could not be found or read
    (path, one-line error)."""

    sources: list[Any] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)

    def files(self) -> list[str]:
        return [path for source in self.sources for path in source.paths]


def _check_engine(args: argparse.Namespace) -> None:
    """--workers and --engine-timeout checked before any work, whatever the number of traces
    (one trace never reaches the engine: --workers 0 was accepted there)."""
    from gpuscope.ranks.engine import check_workers, connect_timeout

    check_workers(args.workers)
    if args.engine != "local" or args.engine_timeout is not None:
        connect_timeout(args.engine_timeout)


def _find(args: argparse.Namespace) -> _Found:
    """Every path's sources; one path that fails raises, several are recorded and go on."""
    from gpuscope.trace.registry import sources

    found = _Found()
    bad = found.failed if args.skip_bad else None  # unreadable files in a folder
    failed = found.failed if len(args.traces) > 1 else None  # one path that fails raises
    found.sources = sources(args.traces, bad, failed)
    return found


def _analyze_sources(
    sources: list[Any], args: argparse.Namespace
) -> tuple[list[dict[str, Any]], dict[str, Any] | None, list[tuple[str, str]]]:
    """Several traces, each analysed on the chosen engine (`--engine`, `--workers`), then across
    ranks when they are the ranks of one job: (reports, the cross-rank part or None, the traces
    that failed: (path, error))."""
    from gpuscope.ranks.api import analyze_outcomes, run_tasks
    from gpuscope.ranks.work import task_of

    tasks = [task_of(s, args.categories, args.top) for s in sources]
    timeout_s = getattr(args, "engine_timeout", None)  # callers may build args by hand
    outcomes = run_tasks(tasks, engine=args.engine, workers=args.workers, timeout_s=timeout_s)
    result = analyze_outcomes(_counted(outcomes, len(tasks)))
    for warning in result.warnings:
        warn(warning)
    return result.reports, result.ranks, result.failed


def _counted(items: Iterator[Any], total: int) -> Iterator[Any]:
    """`items`, with a bar on stderr (a terminal only) counting them: many traces take a while."""
    if total < 2 or not sys.stderr.isatty():
        yield from items
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    bar = Progress("analysing traces", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=Console(stderr=True), transient=True)  # fmt: skip
    with bar:
        task = bar.add_task("traces", total=total)
        for item in items:
            bar.advance(task)
            yield item


def _say_failed(failed: list[tuple[str, str]], skip_bad: bool) -> None:
    for _, message in failed:
        say(f"{'warning' if skip_bad else 'error'}: {message}")


def _none_read(args: argparse.Namespace, found: _Found) -> str:
    where = args.traces[0] if len(args.traces) == 1 else "the arguments"
    total = len(found.sources) + sum(1 for path, _ in found.failed if path in args.traces)
    return f"{where}: none of its {total} traces could be read"


def _analyze_one(source: Any, rules: Any, top: int) -> dict[str, Any]:
    result: dict[str, Any] = _analysis_of(source, rules, top).to_dict()
    return result


def _analysis_of(source: Any, rules: Any, top: int) -> Any:
    from gpuscope.analysis.pipeline import analyze
    from gpuscope.trace.registry import read_source

    with _progress(source.paths[0]) as progress:
        trace = read_source(source, progress)
    for warning in trace.meta.warnings:
        warn(f"{source.path}: {warning}")
    return analyze(trace, rules, top)


def _tables_and_figures(
    args: argparse.Namespace,
    reports: list[dict[str, Any]],
    ranks: dict[str, Any] | None,
    failed: list[tuple[str, str]],
    analysis: Any,
) -> None:
    """--csv / --parquet: the report's tables; --png: its figures (one trace: timeline,
    breakdown, gaps; several: the per-rank chart)."""
    if not _tables.folders(args):
        return
    if analysis is not None:
        from gpuscope.frames.results import AnalysisResult

        result = AnalysisResult(analysis)
        _tables.write_tables(args, result._rows())
        if args.png:
            _tables.write_figures(args, result.plot)
        return
    from gpuscope.frames.tables import set_tables

    _tables.write_tables(args, set_tables(reports, ranks, failed))
    if args.png:
        from gpuscope.frames.plot import SetPlots

        _tables.write_figures(args, SetPlots(reports, ranks))


def json_report(
    reports: list[dict[str, Any]],
    ranks: dict[str, Any] | None = None,
    failed: list[tuple[str, str]] | None = None,
) -> bytes:
    """What `--json` writes, encoded (schemas: `gpuscope.schemas.load(name)`)."""
    from gpuscope.ranks.api import analysis_set

    return json_bytes(analysis_set(reports, ranks, failed))


def _emit(
    reports: list[dict[str, Any]],
    args: argparse.Namespace,
    ranks: dict[str, Any] | None = None,
    failed: list[tuple[str, str]] | None = None,
) -> None:
    """`ranks`: the cross-rank report (docs/ranks.md), under "ranks" and as the first section;
    `failed`: inputs not read, recorded in every output."""
    from gpuscope.analysis import layout
    from gpuscope.text import printable_data

    if args.json:
        write(args.json, json_report(reports, ranks, failed))
    if not (args.md or args.html or not args.quiet):
        return
    shown = printable_data(reports)  # every view: names with control characters escaped
    lead = _lead(printable_data(ranks), printable_data(failed or []))
    full = layout.analysis_document(shown, lead)
    from gpuscope.commands._render import show, write_html, write_markdown

    if args.md:
        write_markdown(args.md, full, args.traces)
    if args.html:
        write_html(args.html, full)
    if not args.quiet:
        show(full if args.full else _screen(shown, lead, printable_data(ranks)))


def _screen(reports: list[dict[str, Any]], lead: list[Any], job: dict[str, Any] | None) -> Any:
    """The terminal's default view: one trace's summary, or many traces' overview."""
    from gpuscope.analysis import layout

    if len(reports) == 1 and not lead:
        return layout.summary_document(reports[0])
    return layout.overview_document(reports, lead, job)


def _timeline(args: argparse.Namespace, found: _Found, broken: bool) -> None:
    if broken:
        print(f"warning: --perfetto {shown_as(args.perfetto)} not written: "
              f"{len(found.failed)} inputs could not be read (--skip-bad leaves them out)",
              file=sys.stderr)  # fmt: skip
        return
    from gpuscope.commands.export import write_timeline

    write_timeline(args.traces, args.perfetto, skip_bad=args.skip_bad)


def _lead(ranks: dict[str, Any] | None, failed: list[tuple[str, str]]) -> list[Any]:
    lead = []
    if ranks is not None:
        from gpuscope.ranks.section import section

        lead.append(section(ranks))
    if failed:
        from gpuscope.analysis.layout import failed_section

        lead.append(failed_section(failed))
    return lead


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
