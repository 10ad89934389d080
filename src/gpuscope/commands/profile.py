"""`gpuscope profile FILE.py:FUNCTION`: first call, warm-up, a scheduled torch.profiler window,
the key_averages table by self device time, the Chrome trace and `analyze`'s report, in one go.

gpuscope profile model.py:step --iterations 20 --out prof/
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from gpuscope.commands._output import check
from gpuscope.text import printable_data

HELP = "profile a callable (file.py:function): warm-up, scheduled torch.profiler window, report"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        metavar="FILE.py:FUNCTION",
        help="function that returns the callable to profile, or (callable, args[, kwargs])",
    )
    parser.add_argument(
        "--iterations", type=int, default=10, metavar="N", help="profiled calls (10)"
    )
    parser.add_argument(
        "--warmup", type=int, default=3, metavar="N", help="timed warm-up calls after the first (3)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="output folder (default gpuscope-profile/<function>-<time>; never overwritten)",
    )
    parser.add_argument(
        "--with-stack", action="store_true", help="record Python stacks (adds host overhead)"
    )
    parser.add_argument(
        "--device", choices=("auto", "gpu", "cpu"), default="auto", help="where to run (auto)"
    )
    parser.add_argument("--md", metavar="FILE", help="also write the report as Markdown")
    parser.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report")
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no terminal report (files only)"
    )


def main(args: argparse.Namespace) -> int:
    from gpuscope.capture.profile import profile
    from gpuscope.errors import InputError
    from gpuscope.timing.spec import load

    if args.iterations < 1 or args.warmup < 0:
        raise InputError(
            f"--iterations {args.iterations} --warmup {args.warmup}: expected ≥ 1 and ≥ 0"
        )
    check(args, [args.target.rpartition(":")[0]])
    target = load(args.target)
    function = args.target.rpartition(":")[2]
    out = args.out or _fresh(
        Path("gpuscope-profile") / f"{function}-{time.strftime('%Y%m%d-%H%M%S')}"
    )
    result = profile(
        target.fn,
        *target.args,
        iterations=args.iterations,
        warmup=args.warmup,
        out_dir=out,
        name=args.target,
        with_stack=args.with_stack,
        device=args.device,
        **target.kwargs,
    )
    report = result.analysis.to_dict()
    from gpuscope.analysis.layout import analysis_document
    from gpuscope.commands._render import show, write_html, write_markdown

    if args.md:
        write_markdown(args.md, analysis_document([printable_data(report)]), [out])
    if args.html:
        write_html(args.html, analysis_document([printable_data(report)]))
    if not args.quiet:
        from gpuscope.analysis.layout import summary_document

        summary = result.to_dict()
        print(
            f"{args.target} on {result.device}: first call {summary['first_call_ms']:,.3f} ms, "
            f"warm call {summary['warm_call_ms']:,.3f} ms (median of {len(result.warm_calls_s)}), "
            f"{result.iterations} calls profiled"
        )
        for note in result.notes:
            print(f"note: {note}")
        print(result.table.read_text(encoding="utf-8"))
        show(summary_document(printable_data(report)))
    print(f"gpuscope: wrote {out}/ (trace.json.gz, key_averages.txt, analysis.json, profile.json)",
          file=sys.stderr)  # fmt: skip
    return 0


def _fresh(path: Path) -> Path:
    """`path`, or `path-2`, `path-3`, … when it exists: a profile never overwrites another."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate
