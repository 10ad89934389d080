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
import sys
from typing import TYPE_CHECKING

from gpuscope.commands._record import DB_HELP

if TYPE_CHECKING:
    from gpuscope.history.check import MetricCheck, Options, Outcome

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
    from gpuscope.commands._output import json_bytes, stdout_wanted, write, write_text
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
    if args.md:
        write_text(args.md, markdown(outcome))
    if not quiet:
        sys.stdout.write("".join(line + "\n" for line in terminal(outcome)))
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


def _pct(value: float | None, signed: bool = True) -> str:
    if value is None:
        return "-"
    return f"{value * 100:+.2f} %" if signed else f"{value * 100:.2f} %"


def _commit_text(result: object) -> str:
    commit = _commit(result)
    return "no commit recorded" if commit == "-" else f"commit {commit}"


def _commit(result: object) -> str:
    context = getattr(result, "context", None)
    commit = getattr(context, "commit", None) or "-"
    return commit[:10] + ("+dirty" if getattr(context, "dirty", None) else "")


def _headline(outcome: Outcome) -> str:
    bad, good = len(outcome.regressions), len(outcome.improvements)
    if bad:
        return f"REGRESSION: {bad} metric{'s' if bad > 1 else ''} worse beyond the noise"
    if good:
        return f"improved: {good} metric{'s' if good > 1 else ''} better beyond the noise"
    return "within noise"


def _reference_text(outcome: Outcome) -> str:
    commits = [c for c in dict.fromkeys(_commit(r) for r in outcome.reference) if c != "-"]
    shown = ", ".join(commits[:3]) + (f" … ({len(commits)} commits)" if len(commits) > 3 else "")
    n, against = len(outcome.reference), outcome.against
    if against.kind == "window" and n < against.n:  # not "the previous 10 results (6 results)"
        where = f"the {n} result{'s' if n != 1 else ''} before it (window of {against.n})"
        return f"{where}; {shown or 'no commit recorded'}"
    return (
        f"{against.describe()} ({n} result{'s' if n != 1 else ''}; {shown or 'no commit recorded'})"
    )


def _confidence(c: MetricCheck) -> str:
    return "-" if c.confidence is None else f"{c.confidence * 100:.1f} %"


def _why(c: MetricCheck) -> str:
    if c.method == "none":
        return c.note or ""
    noise = f"noise ±{_pct(c.noise, False)}" if c.noise is not None else "noise unknown"
    return f"{c.method}, {noise}, bar {_pct(c.bar, False)}"


def terminal(outcome: Outcome) -> list[str]:
    from gpuscope.text import printable

    latest = outcome.latest[0]
    repeats = f" (+{len(outcome.latest) - 1} repeats)" if len(outcome.latest) > 1 else ""
    lines = [
        f"check {outcome.workload}: {_headline(outcome)}",
        f"latest #{latest.id} {latest.context.recorded_at} {_commit_text(latest)}{repeats}",
        f"against {_reference_text(outcome)}",
        f"{'metric':28} {'latest':>12} {'reference':>12} {'change':>9} {'confidence':>10}  verdict",
    ]
    for c in outcome.checks:
        ref = "-" if c.reference is None else f"{c.reference:.6g}"
        lines.append(
            f"{c.metric[:28]:28} {c.latest:>12.6g} {ref:>12} {_pct(c.change):>9} "
            f"{_confidence(c):>10}  {c.verdict} ({_why(c)})"
        )
        if c.note and c.method != "none":
            lines.append(f"{'':28} note: {c.note}")
    lines += [f"note: {n}" for n in outcome.notes]
    return [printable(line) for line in lines]


def markdown(outcome: Outcome) -> str:
    """A PR comment: the verdict, the commits, one row per metric, the noise model."""
    from gpuscope.text import printable

    def cell(text: str) -> str:
        return printable(text).replace("|", "\\|")

    latest = outcome.latest[0]
    commit = _commit(latest)
    at = f"at commit `{cell(commit)}`" if commit != "-" else "with no commit recorded"
    lines = [
        f"### gpuscope check `{cell(outcome.workload)}`: {_headline(outcome)}",
        "",
        f"Latest result #{latest.id} {at} ({cell(latest.context.branch or 'no branch')}, "
        f"{latest.context.recorded_at}), against {cell(_reference_text(outcome))}.",
        "",
        "| metric | latest | reference | change | 95 % CI | confidence | verdict | noise model |",
        "|---|---:|---:|---:|---|---:|---|---|",
    ]
    for c in outcome.checks:
        ci = "-" if c.ci is None else f"{_pct(c.ci[0])} … {_pct(c.ci[1])}"
        ref = "-" if c.reference is None else f"{c.reference:.6g}"
        better = "↓" if c.direction == "lower" else "↑"
        verdict = f"**{c.verdict}**" if c.verdict in ("regression", "improvement") else c.verdict
        lines.append(
            f"| {cell(c.metric)} {better} | {c.latest:.6g} | {ref} | {_pct(c.change)} | "
            f"{ci} | {_confidence(c)} | {verdict} | {cell(_why(c))} |"
        )
    o = outcome.options
    lines += [
        "",
        f"Confidence {o.confidence:g} one-sided; a change must pass the larger of the noise "
        f"bound and {'--threshold ' + _pct(o.threshold, False) if o.threshold is not None else 'the floor ' + _pct(o.floor, False)}. "  # noqa: E501
        "↓/↑: lower/higher is better.",
    ]
    lines += [f"- {cell(n)}" for n in outcome.notes]
    return "\n".join(lines) + "\n"
