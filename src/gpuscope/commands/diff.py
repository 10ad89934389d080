"""`gpuscope diff BEFORE AFTER`: what changed between two profiles, and whether it is noise."""

from __future__ import annotations

import argparse
from typing import Any

from gpuscope.commands._output import stdout_wanted, write_report

HELP = (
    "compare two profiles (any formats analyze reads, same or different vendor): time, "
    "categories, kernels matched by name or by op and shape, top movers, a noise-aware verdict"
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("before", metavar="BEFORE", help="the baseline profile (file or directory)")
    parser.add_argument("after", metavar="AFTER", help="the changed profile (file or directory)")
    parser.add_argument(
        "--json", metavar="FILE", help="write the diff as JSON (gpuscope.diff/1; - : stdout alone)"
    )
    parser.add_argument("--md", metavar="FILE", help="write a short Markdown diff (PR comment)")
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML diff")
    parser.add_argument(
        "--categories", metavar="FILE", help="extra kernel category rules (JSON, tried first)"
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no terminal report (files only)"
    )


def main(args: argparse.Namespace) -> int:
    from gpuscope.analysis.categories import load_rules
    from gpuscope.diff import diff

    args.quiet = args.quiet or stdout_wanted(args)  # stdout carries that output alone
    rules = load_rules(args.categories)
    report = diff(_analyze(args.before, rules), _analyze(args.after, rules)).to_dict()
    _emit(report, args)
    return 0


def _analyze(path: str, rules: Any) -> Any:
    import sys

    from gpuscope.analysis.report import analyze
    from gpuscope.trace.registry import read_trace

    trace = read_trace(path)
    for warning in trace.meta.warnings:
        print(f"warning: {path}: {warning}", file=sys.stderr)
    return analyze(trace, rules)


def _emit(report: dict[str, Any], args: argparse.Namespace) -> None:
    if args.json:
        import msgspec

        write_report(args.json, msgspec.json.format(msgspec.json.encode(report), indent=1))
    if args.md:
        from gpuscope.report.diff import render_diff_markdown

        write_report(args.md, render_diff_markdown(report).encode())
    if args.html:
        from gpuscope.report.diff import render_diff_html

        write_report(args.html, render_diff_html(report).encode())
    if not args.quiet:
        from rich.console import Console

        from gpuscope.report.diff import render_diff_terminal

        render_diff_terminal(report, Console(highlight=False))
