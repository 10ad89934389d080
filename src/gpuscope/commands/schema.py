"""`gpuscope schema [NAME]`: the JSON Schema of a document gpuscope writes (or their list)."""

from __future__ import annotations

import argparse

HELP = "print the JSON Schema of a gpuscope output (analysis, diff, counters, bench, run, ...)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help="a schema tag as documents carry it (gpuscope.analysis/1) or a kind (analysis); "
        "none: list them",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write it to FILE (- : stdout)")


def main(args: argparse.Namespace) -> int:
    import json

    from gpuscope import schemas
    from gpuscope.commands._output import check, write_text

    check(args, [], {"--output": args.output})
    if args.name is None:
        text = "\n".join(f"{tag}\t{schemas.load(tag).get('description', '')[:90]}"
                         for tag in schemas.names()) + "\n"  # fmt: skip
    else:
        text = json.dumps(schemas.load(args.name), indent=1, ensure_ascii=False) + "\n"
    write_text(args.output or "-", text)
    return 0
