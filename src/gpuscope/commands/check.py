"""`gpuscope check WORKLOAD`: is the latest result worse than its history, beyond the noise?

gpuscope check resnet50                          # exit 1 on a regression, 0 within noise
gpuscope check resnet50 --against last --md comment.md
gpuscope check resnet50 --metric samples_per_second --against commit:3f2c1a9 --threshold 3

The noise model of each metric is stated with its verdict (docs/history.md): the run-to-run
spread of the reference results (a t-test), the per-sample distributions (bootstrap of the ratio
of medians) where there are fewer than 3 reference results, or a threshold alone.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gpuscope.commands._record import DB_HELP

if TYPE_CHECKING:
    from gpuscope.history.check import Options

HELP = "gate on the history: exit 1 when the latest result of a workload regressed past the noise"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = __doc__.split("\n", 2)[2] if __doc__ else None
    parser.add_argument("workload")
    parser.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME",
        help="check this metric (repeat; default: every metric)",
    )
    parser.add_argument(
        "--against",
        default="window:10",
        metavar="REF",
        help="last, window:N (the N results before, default 10) or commit:SHA",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        metavar="PCT",
        help="smallest change that fails (default: the noise, at least "
        "--floor); a change within the noise never fails",
    )
    parser.add_argument(
        "--floor",
        type=float,
        default=1.0,
        metavar="PCT",
        help="the least a change must be when no --threshold (default 1)",
    )
    parser.add_argument(
        "--confidence",
        type=float,
        default=0.995,
        metavar="P",
        help="one-sided confidence that a change is real (default 0.995)",
    )
    parser.add_argument(
        "--any-hardware",
        action="store_true",
        help="also compare with results on other GPU models / counts",
    )
    parser.add_argument("--latest", choices=("result", "commit"), default="result",
                        help="what is tested: the latest result (default), or with the results "
                        "of its commit just before it, on the same GPUs and software (repeats "
                        "recorded by CI)")  # fmt: skip
    parser.add_argument("--tag", metavar="TAG", help="only results with this tag")
    parser.add_argument("--json", metavar="FILE", help="write gpuscope.check/1 (- : stdout)")
    parser.add_argument("--md", metavar="FILE", help="write a Markdown PR comment (- : stdout)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no terminal report")
    parser.add_argument("--db", metavar="URL", help=DB_HELP)


def main(args: argparse.Namespace) -> int:
    from gpuscope.commands._output import check as check_outputs
    from gpuscope.commands._output import json_bytes, stdout_wanted, write
    from gpuscope.history import check
    from gpuscope.history.sql import default_url, sqlite_path
    from gpuscope.history.store import Store

    url = str(args.db or default_url())
    database = sqlite_path(url)
    check_outputs(args, [str(database)] if database else [])
    quiet = args.quiet or stdout_wanted(args, "json", "md")
    options = _options(args)
    if database is not None and not database.is_file():
        from gpuscope.errors import InputError

        raise InputError(f"--db {url}: no such database (record results with --record first)")
    with Store.open(url) as store:
        outcome = check.check(store, args.workload, options)
    if args.json:
        write(args.json, json_bytes(outcome.to_dict()))
    if args.md or not quiet:
        from gpuscope.commands._render import show, write_markdown
        from gpuscope.history.check_layout import check_document
        from gpuscope.text import printable_data

        document = printable_data(check_document(outcome))  # names with control characters escaped
        if args.md:  # a PR comment: its title a third-level heading
            write_markdown(args.md, document, [str(database)] if database else [], depth=3)
        if not quiet:
            show(document)
    return outcome.exit_code


def _options(args: argparse.Namespace) -> Options:
    from gpuscope.errors import InputError
    from gpuscope.history.check import Options, parse_against

    if not 0 <= args.floor < 100:
        raise InputError(f"--floor {args.floor:g}: expected 0 to 100 (%)")
    return Options(
        against=parse_against(args.against),
        metrics=tuple(dict.fromkeys(args.metric)),
        threshold=None if args.threshold is None else args.threshold / 100,
        floor=args.floor / 100,
        confidence=args.confidence,
        any_hardware=args.any_hardware,
        tag=args.tag,
        latest=args.latest,
    )
