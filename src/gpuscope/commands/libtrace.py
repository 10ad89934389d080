"""`gpuscope libtrace`: rebuild library_trace.csv from library logs or run directories."""

from __future__ import annotations

import argparse
import sys

from gpuscope.commands._output import check, shown_as
from gpuscope.commands._say import warn
from gpuscope.output import is_stdout

HELP = "rebuild library_trace.csv from library logs (rocBLAS, hipBLASLt, MIOpen, NCCL, cuBLAS, …)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="+", metavar="LOG_OR_RUN_DIR",
        help="library log files and/or `gpuscope run` directories",
    )  # fmt: skip
    parser.add_argument(
        "-o", "--output", default="library_trace.csv", metavar="CSV",
        help="CSV to write (default: library_trace.csv)",
    )  # fmt: skip
    parser.add_argument("--jobid", default="0", help="value of the jobid column (default: 0)")
    parser.add_argument("--model", default="", help="value of the model column")


def main(args: argparse.Namespace) -> int:
    import datetime as dt
    from pathlib import Path

    from gpuscope.errors import InputError
    from gpuscope.libtrace.rebuild import calls_from_paths, log_files
    from gpuscope.libtrace.table import aggregate, write_csv

    paths = [Path(p) for p in args.paths]
    check(args, [*paths, *log_files(paths)], {"-o": args.output})
    warnings: list[str] = []
    calls = calls_from_paths(paths, warnings)
    for warning in dict.fromkeys(warnings):
        warn(warning)
    if not calls:
        raise InputError(f"no library calls found in {', '.join(args.paths)}")
    now = dt.datetime.now(dt.timezone.utc)
    write_csv(args.output, calls, jobid=args.jobid, model=args.model, now=now)
    rows = aggregate(calls)
    print(f"wrote {shown_as(args.output)}: {len(rows)} configs, {sum(r.calls for r in rows)} "
          "calls", file=sys.stderr if is_stdout(args.output) else sys.stdout)  # fmt: skip
    return 0
