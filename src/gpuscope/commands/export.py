"""`gpuscope export PATH... -o OUT.json.gz`: one Perfetto / Chrome timeline of everything given."""

from __future__ import annotations

import argparse
import sys

from gpuscope.commands._output import check, shown_as
from gpuscope.commands._say import warn

HELP = (
    "write one Chrome/Perfetto JSON timeline (ui.perfetto.dev) of traces, profiler output "
    "directories or gpuscope run directories (with their power/VRAM samplers)"
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a trace file, a profiler output directory, or a gpuscope run directory",
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="the timeline to write (.json, or .json.gz compressed)",
    )
    parser.add_argument("--no-samplers", action="store_true", help="leave a run's sampler CSVs out")
    parser.add_argument("--skip-bad", action="store_true",
                        help="leave out traces that cannot be read, with a warning (default: "
                        "an error naming each, exit 2)")  # fmt: skip
    parser.add_argument(
        "--counter-tracks",
        type=int,
        default=64,
        metavar="N",
        help="per-dispatch counters as counter tracks when a trace has at most N names (64)",
    )


def main(args: argparse.Namespace) -> int:
    from gpuscope.export import input_files

    check(args, [*args.paths, *input_files(args.paths)], {"-o": args.output})
    write_timeline(args.paths, args.output, not args.no_samplers, args.counter_tracks,
                   args.skip_bad)  # fmt: skip
    return 0


def write_timeline(
    paths: list[str],
    output: str,
    samplers: bool = True,
    counter_tracks: int = 64,
    skip_bad: bool = False,
) -> None:
    """Export, then say what was written and what was not (stderr). `-`: the timeline on
    standard output (plain JSON)."""
    from gpuscope.errors import InputError
    from gpuscope.export import export_perfetto

    if counter_tracks < 0:
        raise InputError(f"--counter-tracks {counter_tracks}: expected 0 or more")
    result = export_perfetto(
        paths, output, samplers=samplers, counter_tracks_max=counter_tracks, skip_bad=skip_bad
    )
    for warning in result.warnings:
        warn(warning)
    clock = result.metadata["timeline"]["clock"]
    where = shown_as(output)
    print(f"wrote {where}: {result.events:,} events on the {clock} clock", file=sys.stderr)
