"""`--record` for the commands whose result the history keeps (run, analyze, bench, libperf,
counters): the options, an early check of them, and storing the result.

    add_options(parser)                               # --record --workload --commit --tag --db
    check(args, inputs, {**outputs, **db_output(args)})  # the database file is not an input
    url = checked(args)                               # before any work: the database opens
    record(args, report, default_workload, artefacts) # after it: one line on stderr
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Mapping
from typing import Any

DB_HELP = "history database URL: sqlite:///FILE or postgresql://… (default: $GPUSCOPE_DB, else "
DB_HELP += "~/.local/share/gpuscope/history.db)"


def add_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("history (see gpuscope history, gpuscope check)")
    group.add_argument(
        "--record", action="store_true", help="store the result in the history database"
    )
    group.add_argument(
        "--workload",
        metavar="NAME",
        help="the workload it is a result of (default: from the command, the file or the function)",
    )
    group.add_argument(
        "--commit",
        metavar="SHA",
        help="the commit measured (default: git HEAD of the working directory, "
        "with its dirty flag)",
    )
    group.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="a label kept with the result (repeat for several)",
    )
    group.add_argument("--db", metavar="URL", help=DB_HELP)


def db_output(args: argparse.Namespace) -> dict[str, str]:
    """{option: file} of the SQLite history file --record writes ({} without --record or for
    PostgreSQL), for the command's check of its outputs against its inputs: a database that is
    one of the command's inputs (the trace being analysed) is refused before any work."""
    if not getattr(args, "record", False):
        return {}
    return db_file(args.db)


def db_file(given: str | None) -> dict[str, str]:
    """{option: file} of the SQLite database `given` (--db) or the default names ({} for
    PostgreSQL)."""
    import os

    from gpuscope.history.sql import default_url, sqlite_path

    path = sqlite_path(str(given or default_url()))
    if path is None:
        return {}
    from_env = os.environ.get("GPUSCOPE_DB")
    option = "--db" if given else "GPUSCOPE_DB" if from_env else "--db (default)"
    return {option: str(path)}


def checked(args: argparse.Namespace) -> str | None:
    """The database URL when --record is given (opened now, so that a wrong URL or a missing
    driver fails before a long run); None without --record. ConfigError for history options
    given without --record."""
    from gpuscope.errors import ConfigError

    if not args.record:
        given = [f"--{n}" for n in ("workload", "commit", "db") if getattr(args, n, None)]
        if given:
            raise ConfigError(f"{', '.join(given)} only apply with --record")
        return None
    from gpuscope.history.sql import default_url
    from gpuscope.history.store import Store

    url = str(args.db or default_url())
    Store.open(url).close()
    return url


def record(
    args: argparse.Namespace,
    report: Mapping[str, Any],
    default_workload: str,
    artefacts: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> int | None:
    """Store `report` (any JSON report gpuscope writes) if --record was given; its id."""
    if not getattr(args, "record", False):
        return None
    from gpuscope.history import context, metrics
    from gpuscope.history.model import Result
    from gpuscope.history.sql import default_url
    from gpuscope.history.store import Store
    from gpuscope.tools.host import detect_host

    kind, found = metrics.of_report(report)
    ctx = context.collect(
        host=detect_host(use_nvml=False),
        commit=args.commit,
        tags=args.tag,
        artefacts=artefacts,
        extra=extra,
    )
    workload = args.workload or default_workload
    result = Result(workload, kind, ctx, tuple(found), source=_command_line())
    with Store.open(str(args.db or default_url())) as store:
        rid = store.add(result)
        where = store.url
    if not getattr(args, "quiet", False):
        print(f"recorded {kind} result #{rid} of {workload} in {where}", file=sys.stderr)
    return rid


def _command_line() -> str:
    return "gpuscope " + shlex.join(sys.argv[1:])
