"""`gpuscope history list|show|trend|export|import`: the results kept by `--record`.

gpuscope history list                          # workloads: results, first, last, metrics
gpuscope history list resnet50 --json -        # its results
gpuscope history show resnet50                 # its latest result in full (or a result id)
gpuscope history trend resnet50 --metric samples_per_second --html trend.html
gpuscope history trend bert                    # a workload of one metric needs no --metric
gpuscope history export -o history.parquet     # CSV, Parquet or madengine perf.csv
gpuscope history import perf.csv report.json   # madengine perf.csv, gpuscope JSON reports
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuscope.commands._record import DB_HELP
from gpuscope.schemas import HISTORY_LIST as LIST_SCHEMA
from gpuscope.schemas import HISTORY_RESULT as RESULT_SCHEMA

if TYPE_CHECKING:
    from gpuscope.history.model import Result
    from gpuscope.history.store import Store

HELP = "the history of recorded results: list, show, trend, export, import"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = __doc__.split("\n", 2)[2] if __doc__ else None
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", metavar="URL", help=DB_HELP)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks on errors"
    )
    listing = sub.add_parser("list", parents=[common], help="workloads, or one's results")
    listing.add_argument("workload", nargs="?", help="list this workload's results")
    listing.add_argument(
        "--limit",
        type=int,
        default=50,
        metavar="N",
        help="results shown, newest first (default 50)",
    )
    listing.add_argument("--tag", metavar="TAG", help="only results with this tag")
    listing.add_argument("--json", metavar="FILE", help=f"write {LIST_SCHEMA} (- : stdout)")
    show = sub.add_parser("show", parents=[common], help="one result in full")
    show.add_argument("which", metavar="ID|WORKLOAD", help="a result id, or a workload (latest)")
    show.add_argument("--json", metavar="FILE", help=f"write {RESULT_SCHEMA} (- : stdout)")
    trend = sub.add_parser("trend", parents=[common], help="a metric over time")
    trend.add_argument("workload")
    trend.add_argument("--metric", metavar="NAME",
                       help="the metric drawn (default: the workload's one metric)")  # fmt: skip
    trend.add_argument(
        "--limit", type=int, default=200, metavar="N", help="the last N results (default 200)"
    )
    trend.add_argument("--html", metavar="FILE", help="write a page with an inline SVG plot")
    trend.add_argument("--png", metavar="FILE", help="write a PNG plot (needs matplotlib)")
    export = sub.add_parser("export", parents=[common], help="every metric as CSV / Parquet")
    export.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="CSV (- : stdout), .parquet (needs pyarrow) or perf.csv",
    )
    export.add_argument(
        "--format",
        choices=("csv", "parquet", "perf.csv"),
        help="default: from the file name (.parquet, perf.csv), else csv",
    )
    export.add_argument("only", nargs="?", metavar="WORKLOAD",
                        help="only this workload (as with list / show / trend)")  # fmt: skip
    export.add_argument("--workload", metavar="NAME", help="only this workload")
    imported = sub.add_parser(
        "import", parents=[common], help="madengine perf.csv or gpuscope JSON reports"
    )
    imported.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="perf.csv, a report (analysis, bench, libperf, counters) or a "
        "run directory / its manifest.json",
    )
    imported.add_argument("--workload", metavar="NAME", help="the workload (default: per row)")
    imported.add_argument("--commit", metavar="SHA", help="the commit they measured")
    imported.add_argument("--tag", action="append", default=[], metavar="TAG")


def main(args: argparse.Namespace) -> int:
    from gpuscope.errors import ConfigError

    if args.action is None:
        raise ConfigError("give an action: list, show, trend, export or import")
    return int(_ACTIONS[args.action](args))


def _open(args: argparse.Namespace, create: bool = False) -> Store:
    """The store; a SQLite file that does not exist is an error unless `create` (import): a
    command that only reads does not leave an empty database behind."""
    from gpuscope.history.sql import default_url, sqlite_path
    from gpuscope.history.store import Store

    url = str(args.db or default_url())
    path = sqlite_path(url)
    if not create and path is not None and not path.is_file():
        from gpuscope.errors import InputError

        raise InputError(f"--db {url}: no such database (record results with --record first)")
    return Store.open(url)


def _db_file(args: argparse.Namespace) -> list[str]:
    """The SQLite file, an input no output may overwrite."""
    from gpuscope.history.sql import default_url, sqlite_path

    path = sqlite_path(str(args.db or default_url()))
    return [str(path)] if path is not None else []


# -- list / show ---------------------------------------------------------------------------


def _list(args: argparse.Namespace) -> int:
    from gpuscope.commands._output import check, stdout_wanted, write_json
    from gpuscope.history import layout

    check(args, _db_file(args))
    quiet = stdout_wanted(args, "json")
    with _open(args) as store:
        if args.workload:
            results = store.latest(args.workload, limit=args.limit, tag=args.tag)
            if not results and not store.has_workload(args.workload):
                from gpuscope.errors import InputError

                raise InputError(f"no workload {args.workload!r} in {store.url}")
            data: dict[str, Any] = {
                "schema": LIST_SCHEMA,
                "db": store.url,
                "workload": args.workload,
                "results": [r.to_dict() for r in results],
            }
            document = layout.results_document(args.workload, results, store.url)
        else:
            workloads = store.workloads()
            data = {
                "schema": LIST_SCHEMA,
                "db": store.url,
                "workloads": [w.to_dict() for w in workloads],
            }
            document = layout.workloads_document(workloads, store.url)
    if args.json:
        write_json(args.json, data)
    if not quiet:
        _show_document(document)
    return 0


def _show(args: argparse.Namespace) -> int:
    from gpuscope.commands._output import check, stdout_wanted, write_json
    from gpuscope.errors import InputError

    check(args, _db_file(args))
    quiet = stdout_wanted(args, "json")
    with _open(args) as store:
        if args.which.isdigit():
            result = store.get(int(args.which))
        else:
            found = store.latest(args.which, limit=1)
            result = found[0] if found else None
        if result is None:
            raise InputError(f"no result or workload {args.which!r} in {store.url}")
    if args.json:
        write_json(args.json, {"schema": RESULT_SCHEMA, **result.to_dict()})
    if not quiet:
        from gpuscope.history.layout import result_document

        _show_document(result_document(result))
    return 0


# -- trend ------------------------------------------------------------------------------------


def _trend(args: argparse.Namespace) -> int:
    from gpuscope.commands._output import check
    from gpuscope.commands._render import write_html, write_png
    from gpuscope.history import trend
    from gpuscope.history.layout import trend_document
    from gpuscope.text import printable_data

    check(args, _db_file(args), {"--png": args.png})
    with _open(args) as store:
        metric = args.metric or trend.only_metric(store, args.workload, args.limit)
        points = trend.series(store, args.workload, metric, args.limit)
    document = printable_data(trend_document(points, args.workload, metric))
    if args.html:
        write_html(args.html, document)
    if args.png:
        write_png(args.png, document)
    if not any(_stdout(t) for t in (args.html, args.png)):
        _show_document(document)
    return 0


# -- export / import --------------------------------------------------------------------------


def _export(args: argparse.Namespace) -> int:
    from gpuscope.commands._output import check, shown_as, write_text
    from gpuscope.history import transfer
    from gpuscope.output import writing

    check(args, _db_file(args), {"-o": args.output})
    if args.only and args.workload and args.only != args.workload:
        from gpuscope.errors import InputError

        raise InputError(f"two workloads given: {args.only!r} and --workload {args.workload!r}")
    args.workload = args.workload or args.only
    kind = args.format or _format_of(args.output)
    with _open(args) as store:
        if args.workload and not store.has_workload(args.workload):
            from gpuscope.errors import InputError

            raise InputError(f"no workload {args.workload!r} in {store.url}")
        results = store.all_results(args.workload)
        if kind == "parquet":
            with writing(args.output) as path:
                transfer.to_parquet(results, path)
        elif kind == "perf.csv":
            from gpuscope.madengine import perfcsv

            perfcsv.write(args.output, transfer.to_perf_rows(results))
        else:
            write_text(args.output, transfer.to_csv(results))
    if not _stdout(args.output):
        print(f"wrote {shown_as(args.output)}", file=sys.stderr)
    return 0


def _format_of(target: str) -> str:
    name = Path(target).name
    if name.endswith(".parquet"):
        return "parquet"
    return "perf.csv" if name == "perf.csv" or name.endswith(".perf.csv") else "csv"


def _import(args: argparse.Namespace) -> int:
    from gpuscope.commands._record import db_file
    from gpuscope.output import check_outputs

    check_outputs(db_file(args.db), args.files)  # the database is not one of the files read
    results, notes = [], []
    for name in args.files:
        found, note = _read_import(Path(name), args)
        results += found
        notes += [note] if note else []
    with _open(args, create=True) as store:
        ids = store.add_many(results)
        where = store.url
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    workloads = sorted({r.workload for r in results})
    print(
        f"imported {len(ids)} results of {len(workloads)} workloads into {where}", file=sys.stderr
    )
    return 0


def _read_import(path: Path, args: argparse.Namespace) -> tuple[list[Result], str | None]:
    """The results of one file (perf.csv by its header, a JSON report by its schema)."""
    import json

    from gpuscope.errors import InputError
    from gpuscope.history import transfer
    from gpuscope.history.store import validate

    if path.is_dir() and (path / "manifest.json").is_file():
        path = path / "manifest.json"
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).lstrip()
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror or error})") from None
    if not head.startswith(b"{"):
        return _read_perf_csv(path, args)
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: not JSON ({error})") from None
    try:
        result = transfer.from_report(
            report, path, workload=args.workload, tags=args.tag, commit=args.commit
        )
        validate(result)  # a value that is not finite: this file named, not the import's
    except InputError as error:
        raise InputError(f"{path}: {error}") from None
    return [result], None


def _read_perf_csv(path: Path, args: argparse.Namespace) -> tuple[list[Result], str | None]:
    from gpuscope.history import transfer
    from gpuscope.madengine import perfcsv
    from gpuscope.madengine.performance import direction_of

    found = perfcsv.read_numbered(path)
    when = transfer._mtime(path)
    results, left_out = transfer.from_perf_rows(
        found, direction_of, when, f"import {path}", args.workload, args.tag, args.commit
    )
    return results, _left_out_note(path, left_out)


def _left_out_note(path: Path, left_out: list[tuple[int, str]]) -> str | None:
    """One line: how many rows had no finite performance value, and which lines had one that
    is not a number (`abc`, `1e400`), each shown short and printable."""
    from gpuscope.text import printable

    if not left_out:
        return None
    named = [(line, text) for line, text in left_out if text and text.upper() != "N/A"]
    shown = ", ".join(
        f"line {line}: {printable(text[:24])!r}{'…' if len(text) > 24 else ''}"
        for line, text in named[:3]
    )
    more = f" and {len(named) - 3} more" if len(named) > 3 else ""
    which = f" ({shown}{more})" if named else ""
    return f"{path}: {len(left_out)} rows without a finite performance value left out{which}"


# -- helpers ----------------------------------------------------------------------------------


def _stdout(target: str | None) -> bool:
    from gpuscope.output import is_stdout

    return is_stdout(target)


def _show_document(document: Any) -> None:
    """The document on the terminal, its text from the store made printable."""
    from gpuscope.commands._render import show
    from gpuscope.text import printable_data

    show(printable_data(document))


_ACTIONS = {"list": _list, "show": _show, "trend": _trend, "export": _export, "import": _import}
