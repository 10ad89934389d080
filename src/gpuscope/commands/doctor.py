"""`gpuscope doctor [--json FILE] [--tools-config FILE]`: what works here, and what would lie."""

from __future__ import annotations

import argparse

HELP = "check the GPUs, drivers and each gpuscope run tool; warn about profiling traps"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", metavar="FILE", help="also write the report as JSON ('-': stdout)"
    )
    parser.add_argument("--tools-config", metavar="FILE", help="tools.json to check instead")
    parser.add_argument("--all", action="store_true", help="list every tool, not just usable ones")


def main(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from gpuscope.commands._output import check, write_text
    from gpuscope.doctor.diagnose import diagnose
    from gpuscope.output import is_stdout
    from gpuscope.tools.config import load_catalog

    check(args, [args.tools_config])  # --json over the tools config it reads: refused
    catalog = load_catalog(Path(args.tools_config) if args.tools_config else None)
    report = diagnose(catalog)
    if args.json:
        write_text(args.json, json.dumps(report.to_dict(), indent=2) + "\n")
        if is_stdout(args.json):
            return 0
    from gpuscope.commands._render import show
    from gpuscope.doctor.layout import doctor_document
    from gpuscope.text import printable_data

    show(printable_data(doctor_document(report, show_all=args.all)))
    return 0
