"""`gpuscope libperf`: replay the library configs of a library_trace.csv on this GPU and rank
them (library_perf.csv + a report).

gpuscope libperf gpuscope-runs/20261122-025042-28b9/
gpuscope libperf library_trace.csv --budget-s 120 --json perf.json --md perf.md
gpuscope libperf library_trace.csv --backends vendor --timeout-s 60
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gpuscope.commands import _record, _tables
from gpuscope.commands._output import check, shown_as, write_text
from gpuscope.commands._say import warn
from gpuscope.output import is_stdout

HELP = "replay library_trace.csv configs (GEMM, conv, collectives) on this GPU; rank them"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "trace", metavar="LIBRARY_TRACE_CSV_OR_RUN_DIR",
        help="a library_trace.csv, or a `gpuscope run` directory holding one",
    )  # fmt: skip
    parser.add_argument(
        "-o", "--output", type=Path, metavar="CSV",
        help="library_perf.csv to write (default: beside the input)",
    )  # fmt: skip
    parser.add_argument(
        "--backends", default="torch,vendor", metavar="LIST",
        help="torch (PyTorch, timed by gpuscope.bench) and/or vendor (rocblas-bench, "
        "hipblaslt-bench, MIOpenDriver, nccl-tests); default torch,vendor",
    )  # fmt: skip
    parser.add_argument("--limit", type=int, metavar="N",
                        help="replay only the N configs with the most estimated time")  # fmt: skip
    parser.add_argument(
        "--budget-s", type=float, metavar="S",
        help="stop replaying after S seconds; the rest are marked 'not replayed: budget'",
    )  # fmt: skip
    parser.add_argument("--config-budget-s", type=float, default=0.5, metavar="S",
                        help="gpuscope.bench sampling budget per config (default 0.5)")  # fmt: skip
    parser.add_argument(
        "--allocations", type=int, default=5, metavar="N",
        help="time each GEMM/convolution on N fresh operand allocations and report the median "
        "(a µs-scale kernel's time moves by up to ~8%% with where its operands lie; default 5)",
    )  # fmt: skip
    parser.add_argument("--timeout-s", type=float, default=120.0, metavar="S",
                        help="end a vendor binary after S seconds (default 120)")  # fmt: skip
    parser.add_argument(
        "--state", choices=("burst", "sustained", "both"), default="burst",
        help="gpuscope.bench power state per config: burst (default, a short run each) or "
        "sustained (load a power-limited GPU until it settles: 0.5-15 s more per config)",
    )  # fmt: skip
    parser.add_argument("--triton", action="store_true",
                        help="also A/B each GEMM against a Triton kernel")  # fmt: skip
    parser.add_argument(
        "--under", type=float, default=0.5, metavar="FRACTION",
        help="report configs under this fraction of their roofline (default 0.5)",
    )  # fmt: skip
    parser.add_argument("--no-measure-peaks", action="store_true",
                        help="datasheet ceilings only (no 8192³ matmul / 1 GiB copy)")  # fmt: skip
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="write the report (schema gpuscope.libperf/1)")  # fmt: skip
    parser.add_argument("--md", type=Path, metavar="FILE", help="write the report as Markdown")
    parser.add_argument("--jobid", help="jobid column (default: the trace's)")
    parser.add_argument("--model", help="model column (default: the trace's)")
    _tables.add_options(parser)
    _record.add_options(parser)


def main(args: argparse.Namespace) -> int:
    import datetime as dt
    import sys

    from rich.console import Console

    from gpuscope.commands._render import show, write_markdown
    from gpuscope.libperf import output, report, session
    from gpuscope.libperf.replay import Options
    from gpuscope.text import printable_data

    source = _trace_path(Path(args.trace))
    options = Options(
        backends=tuple(b.strip() for b in args.backends.split(",") if b.strip()),
        limit=args.limit, budget_s=args.budget_s, config_budget_s=args.config_budget_s,
        timeout_s=args.timeout_s, triton=args.triton, state=args.state,
        allocations=args.allocations,
    )  # fmt: skip
    options.validate()
    target = args.output or source.with_name("library_perf.csv")
    check(args, [source], {"-o": target, **_record.db_output(args)})  # before any replay
    _tables.check_folders(args, [source, target])
    _record.checked(args)
    with _progress() as progress:
        done = session.run(source, options, measure_peaks=not args.no_measure_peaks,
                           under=args.under, progress=progress)  # fmt: skip
    for warning in done.warnings:
        warn(warning)
    if done.rank != 0:
        return 0
    jobid = args.jobid if args.jobid is not None else done.trace.jobid
    model = args.model if args.model is not None else done.trace.model
    now = dt.datetime.now(dt.timezone.utc)
    output.write_csv(target, done.rows, jobid=jobid, model=model, now=now)
    piped = any(map(is_stdout, (target, args.json, args.md)))  # then the report goes to stderr
    console = Console(width=None if sys.stdout.isatty() else 150, stderr=piped)  # logs: no wrap
    doc = report.libperf_document(printable_data(done.report))
    show(doc, console)
    console.print(f"wrote {shown_as(target)}")
    if args.json:
        write_text(args.json, report.to_json(done.report))
    if args.md:
        write_markdown(args.md, doc, [source, target])
    if _tables.folders(args):
        from gpuscope.frames.tables import report_tables

        _tables.write_tables(args, report_tables(done.report))
    _record.record(args, done.report, model or source.parent.name, str(target.resolve()))
    return 0


def _trace_path(path: Path) -> Path:
    from gpuscope.errors import InputError

    if path.is_dir():
        found = path / "library_trace.csv"
        if not found.is_file():
            raise InputError(f"{path}: no library_trace.csv in this directory (expected a "
                             "`gpuscope run` directory with a library tracer)")  # fmt: skip
        return found
    if not path.is_file():
        raise InputError(f"{path}: no such file (expected a library_trace.csv or a run dir)")
    return path


class _progress:
    """A bar on stderr while configs replay, when stderr is a terminal; else nothing."""

    def __init__(self) -> None:
        self.bar: Any = None

    def __enter__(self) -> Any:
        import sys

        if not sys.stderr.isatty():
            return None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self.bar = Progress(
            "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=Console(stderr=True), transient=True,
        )  # fmt: skip
        self.bar.start()
        task = self.bar.add_task("replaying", total=None)

        def update(done: int, total: int, label: str) -> None:
            self.bar.update(task, completed=done, total=total, description=label or "done")

        return update

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
