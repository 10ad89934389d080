"""`gpuscope doctor [--json FILE] [--tools-config FILE]`: what works here, and what would lie."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuscope.tools.doctor import DoctorReport

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
    from gpuscope.output import is_stdout
    from gpuscope.tools.config import load_catalog
    from gpuscope.tools.doctor import diagnose

    check(args, [args.tools_config])  # --json over the tools config it reads: refused
    catalog = load_catalog(Path(args.tools_config) if args.tools_config else None)
    report = diagnose(catalog)
    if args.json:
        write_text(args.json, json.dumps(report.to_dict(), indent=2) + "\n")
        if is_stdout(args.json):
            return 0
    print(render(report, show_all=args.all))
    return 0


def render(report: DoctorReport, show_all: bool = False) -> str:
    host = report.host
    lines = [f"vendor:  {host.vendor or 'none found'}"]
    lines += [f"driver:  {host.driver or '?'}    runtime: {host.runtime or '?'}"]
    lines += [f"GPU {g.index}:   {g.name}" + (f" ({g.arch})" if g.arch else "") for g in host.gpus]
    backends = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in report.sampler_backends.items())
    lines += [f"samplers: {backends}", "", "tools:"]
    for tool in report.tools:
        if tool.ok or show_all:
            lines.append(f"  {'ok ' if tool.ok else 'no '} {tool.name:26} {tool.detail}")
    hidden = sum(not t.ok for t in report.tools)
    if hidden and not show_all:
        lines.append(f"  ({hidden} tools cannot run here; --all lists them with the reason)")
    for title, findings in (("traps", report.traps), ("device", report.device)):
        if findings:
            lines += ["", f"{title}:"]
            lines += [f"  ! {f.message}\n    -> {f.action}" for f in findings]
    return "\n".join(lines)
