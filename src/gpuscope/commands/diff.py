"""`gpuscope diff BEFORE AFTER`: what changed between two profiles, and whether it is noise."""

from __future__ import annotations

import argparse
from typing import Any

from gpuscope.commands import _tables
from gpuscope.commands._output import check, stdout_wanted, write_json
from gpuscope.commands._say import warn

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
    _tables.add_options(parser)


def main(args: argparse.Namespace) -> int:
    from gpuscope.analysis.categories import load_rules
    from gpuscope.diff import diff

    args.quiet = args.quiet or stdout_wanted(args)  # stdout carries that output alone
    rules = load_rules(args.categories)
    before, after = _sources(args.before), _sources(args.after)
    inputs = [args.before, args.after, args.categories, *before.paths, *after.paths]
    check(args, inputs)
    _tables.check_folders(args, inputs)
    report = diff(_analyze(before, rules), _analyze(after, rules)).to_dict()
    _emit(report, args)
    if _tables.folders(args):
        from gpuscope.frames.tables import report_tables

        _tables.write_tables(args, report_tables(report))
    return 0


def _sources(path: str) -> Any:
    """The one trace in `path` (a file, or a directory holding one process's outputs)."""
    from gpuscope.errors import InputError
    from gpuscope.trace.registry import sources as sources_of

    sources = sources_of([path])
    if len(sources) > 1:
        names = ", ".join(s.path for s in sources[:4])
        raise InputError(f"{path}: holds {len(sources)} traces ({names}…); diff compares one "
                         "trace with one: name the files")  # fmt: skip
    return sources[0]


def _analyze(source: Any, rules: Any) -> Any:

    from gpuscope.analysis.pipeline import analyze
    from gpuscope.trace.registry import read_source

    trace = read_source(source)
    for warning in trace.meta.warnings:
        warn(f"{source.path}: {warning}")
    return analyze(trace, rules)


def _emit(report: dict[str, Any], args: argparse.Namespace) -> None:
    from gpuscope.text import printable_data

    if args.json:
        write_json(args.json, report)
    if not (args.md or args.html or not args.quiet):
        return
    from gpuscope.commands._render import show, write_html, write_markdown
    from gpuscope.diff.layout import diff_document

    shown = printable_data(report)  # every view: names with control characters escaped
    if args.md:
        brief = diff_document(shown, brief=True)
        write_markdown(args.md, brief, [args.before, args.after], depth=2)
    full = diff_document(shown)
    if args.html:
        write_html(args.html, full)
    if not args.quiet:
        show(full)
