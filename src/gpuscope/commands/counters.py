"""`gpuscope counters`: hardware counters → derived metrics → roofline → advice.

gpuscope counters rocprof_output/ [--arch gfx942] [--peaks FILE] [--html report.html]
gpuscope counters --plan roofline --arch gfx942 -o roofline.txt   # pmc: lines to collect
gpuscope counters --list gfx1151                                  # what the GPU can count
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gpuscope.commands import _tables
from gpuscope.commands._output import check, shown_as, stdout_wanted, write_json, write_text
from gpuscope.commands._record import add_options
from gpuscope.commands._say import warn

HELP = (
    "per-kernel metrics, roofline and advice from hardware counters (rocprofv3, rocprof, ncu); "
    "--plan / --list: which counters to collect on a GPU"
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "traces", nargs="*", metavar="TRACE",
        help="counter outputs: files or directories (all passes of one collection)",
    )  # fmt: skip
    parser.add_argument("--arch", help="GPU architecture when the files do not say (gfx90a)")
    parser.add_argument(
        "--device", metavar="NAME",
        help='GPU name for the datasheet roofs when the files do not say ("AMD Instinct MI250X")',
    )  # fmt: skip
    parser.add_argument(
        "--peaks", metavar="FILE",
        help='measured roofs: {"tflops": {"fp32": 81.7}, "bandwidth_gbs": 5300} (JSON)',
    )  # fmt: skip
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON (- : stdout)")
    parser.add_argument("--md", metavar="FILE", help="write the report as Markdown")
    parser.add_argument("--html", metavar="FILE", help="write an HTML report with the roofline")
    parser.add_argument("-q", "--quiet", action="store_true", help="no terminal report")
    parser.add_argument(
        "--plan", metavar="SET",
        help="print the pmc: lines (ncu: --metrics) to collect for SET: roofline, memory, "
        "compute, all, a rocprof input FILE or a comma-separated counter list; needs --arch",
    )  # fmt: skip
    parser.add_argument("--list", metavar="ARCH", help="list the counters ARCH can collect")
    parser.add_argument(
        "--list-avail", metavar="FILE", help="saved `rocprofv3 --list-avail` output to use"
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="--plan: write here, not stdout")
    _tables.add_options(parser, png=True)
    add_options(parser)


def main(args: argparse.Namespace) -> int:
    from gpuscope.errors import InputError

    if args.list:
        return _list(args.list, args.list_avail)
    if args.plan:
        if not args.arch:
            raise InputError("--plan needs --arch (e.g. --arch gfx942 or --arch sm_90)")
        return _plan(args)
    if not args.traces:
        raise InputError("give counter outputs to analyse, or --plan SET --arch A / --list ARCH")
    args.quiet = args.quiet or stdout_wanted(args)  # stdout carries that output alone
    return _analyse(args)


def _analyse(args: argparse.Namespace) -> int:
    from gpuscope.counters.pipeline import analyse_counters
    from gpuscope.trace.registry import read_source, sources

    found = sources(args.traces)
    inputs = [*args.traces, args.peaks, args.list_avail, *(p for s in found for p in s.paths)]
    from gpuscope.commands._record import checked, db_output, record

    check(args, inputs, db_output(args))
    _tables.check_folders(args, inputs)

    checked(args)
    traces = [read_source(s) for s in found]
    for trace in traces:
        for warning in trace.meta.warnings:
            warn(f"{trace.meta.path}: {warning}")
    report = analyse_counters(traces, args.arch, args.peaks, args.device).to_dict()
    _emit(report, args)
    if _tables.folders(args):
        from gpuscope.frames.plot import CounterPlots
        from gpuscope.frames.tables import report_tables

        _tables.write_tables(args, report_tables(report))
        _tables.write_figures(args, CounterPlots(report))
    from gpuscope.history.metrics import workload_from_path

    record(args, report, workload_from_path(args.traces[0]), str(Path(args.traces[0]).resolve()))
    return 0


def _emit(report: dict[str, Any], args: argparse.Namespace) -> None:
    from gpuscope.counters.views import counters_document
    from gpuscope.text import printable_data

    if args.json:
        write_json(args.json, report)
    from gpuscope.commands._render import show, write_html, write_markdown

    doc = counters_document(printable_data(report))  # names with control characters escaped
    if args.md:
        write_markdown(args.md, doc, args.traces)
    if args.html:
        write_html(args.html, doc)
    if not args.quiet:
        show(doc)


def _plan(args: argparse.Namespace) -> int:
    from gpuscope.counters.capability import plan, read_pmc_lines
    from gpuscope.counters.metrics import family_for
    from gpuscope.counters.presets import PRESETS, preset_counters
    from gpuscope.errors import InputError

    family = family_for(args.arch)
    cap = _capability(args.arch, args.list_avail)
    if family is None and cap is None:
        raise InputError(f"--arch {args.arch}: unknown architecture (see gpuscope counters --list)")
    notes: list[str] = []
    if args.plan in (*PRESETS, "all"):
        assert family is not None  # every arch with a capability has a family
        needed = preset_counters(args.plan, family, cap)
        request: list[list[str]] = [list(needed.counters)]
        notes += [f"{args.arch} cannot compute {m}" for m in needed.impossible]
    elif Path(args.plan).is_file():
        request = read_pmc_lines(Path(args.plan).read_text("utf-8", errors="replace"))
    else:
        request = [args.plan.replace(",", " ").split()]
    if cap is None:  # NVIDIA: ncu takes every metric in one command and replays as needed
        counters = list(dict.fromkeys(c for line in request for c in line))
        return _output(args, [f"# ncu metrics for {args.arch} ({args.plan})", *(
            f"# {n}" for n in notes), f"--metrics {','.join(counters)}"])  # fmt: skip
    result = plan(request, cap, merge=args.plan in (*PRESETS, "all"))
    if result.dropped:
        notes.append(f"{cap.arch} cannot collect {', '.join(result.dropped)} (left out)")
    if not result.passes:
        raise InputError(f"{args.plan}: nothing {cap.arch} can collect ({'; '.join(notes)})")
    header = [f"# gpuscope counters --plan {args.plan} for {cap.arch}: {len(result.passes)} "
              f"passes (each runs the program once) [{cap.source}]"]  # fmt: skip
    return _output(args, header + [f"# {n}" for n in notes] + result.pmc_lines())


def _output(args: argparse.Namespace, lines: list[str]) -> int:
    text = "\n".join(lines) + "\n"
    if args.output:
        check(args, [args.plan, args.list_avail], {"-o": args.output})
        write_text(args.output, text)
        print(f"wrote {shown_as(args.output)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _list(arch: str, listing: str | None) -> int:
    from gpuscope.counters.capability import packaged_archs
    from gpuscope.counters.metrics import family_for
    from gpuscope.errors import InputError

    cap = _capability(arch, listing)
    family = family_for(arch) if cap is None else None
    if family is not None and family.vendor == "nvidia":
        return _list_ncu(arch, family)
    if cap is None:
        known = ", ".join([*packaged_archs(), *_nvidia_archs()])
        raise InputError(f"{arch}: not in the counter table; known: {known} (or --list-avail)")
    blocks: dict[str, list[str]] = {}
    for name, block in cap.hardware.items():
        blocks.setdefault(block, []).append(name)
    lines = [f"# {cap.arch}: {len(cap.hardware)} hardware, {len(cap.derived)} derived counters "
             f"[{cap.source}]"]  # fmt: skip
    for block, names in sorted(blocks.items()):
        limit = cap.limit(block)
        lines.append(f"{block} (up to {limit} per pass): {' '.join(sorted(names))}")
    lines.append(f"derived: {' '.join(sorted(cap.derived))}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _nvidia_archs() -> list[str]:
    from gpuscope.counters.metrics import FAMILY_FILES, load_family

    families = [load_family(name) for name in FAMILY_FILES]
    found = [a for f in families if f.vendor == "nvidia" for a in f.architectures]
    return list(dict.fromkeys(found))


def _list_ncu(arch: str, family: Any) -> int:
    """An NVIDIA GPU has no table of what it can count — ncu collects any metric, replaying the
    kernel as often as it needs —: the ncu metrics gpuscope derives from, by set (what
    `--plan SET --arch` asks ncu for)."""
    from gpuscope.counters.presets import PRESETS, preset_counters

    everything = preset_counters("all", family, None).counters
    lines = [f"# {arch} ({family.label}): ncu collects any metric (it replays the kernel as "
             f"needed); the {len(everything)} gpuscope derives from, by set"]  # fmt: skip
    for name in (*PRESETS, "all"):
        needed = preset_counters(name, family, None)
        lines.append(f"{name}: {' '.join(needed.counters)}")
        lines += [f"# {name}: {arch} cannot compute {m}" for m in needed.impossible]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _capability(arch: str, listing: str | None) -> Any:
    from gpuscope.counters.capability import capability_for, parse_list_avail
    from gpuscope.counters.metrics import normalise_arch
    from gpuscope.errors import InputError

    if listing:
        try:
            found = parse_list_avail(Path(listing).read_text("utf-8", errors="replace"))
        except OSError as error:
            raise InputError(f"{listing}: cannot read ({error.strerror or error})") from None
        if normalise_arch(arch) in found:
            return found[normalise_arch(arch)]
        raise InputError(f"{listing}: lists {', '.join(found) or 'no GPU'}, not {arch}")
    return capability_for(arch)
