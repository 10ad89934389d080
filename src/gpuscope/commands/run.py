"""`gpuscope run [--tools …] [madengine context options] -- COMMAND [ARGS…]`."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuscope.tools.config import ToolConfig
    from gpuscope.tools.session import RunResult

HELP = "run any command inside stacked profilers, library tracers and power/VRAM samplers"

EPILOG = """\
examples:
  gpuscope run --tools rocprof,gpu_info_power_profiler -- python3 train.py
  gpuscope run --additional-context-file rocprofv3_compute_bound.json -- ./app --size 4096
  gpuscope run --additional-context '{"tools": [{"name": "nsys"}]}' -- ./app
  gpuscope run --list-tools

The first tool listed is innermost. Outputs: <output-dir>/<run-id>/ with manifest.json.
The exit status is the command's own (128+N if it was killed by signal N).
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--tools", metavar="NAME[,NAME…]", default="",
                        help="tools to stack, innermost first (after context tools)")  # fmt: skip
    parser.add_argument("--additional-context", metavar="JSON",
                        help='madengine context: {"tools": [{"name": "rocprof"}]}')  # fmt: skip
    parser.add_argument("--additional-context-file", metavar="FILE",
                        help="madengine context file (the --additional-context wins)")  # fmt: skip
    parser.add_argument("--tools-config", metavar="FILE",
                        help="tools.json overriding the packaged tool definitions")  # fmt: skip
    parser.add_argument("--output-dir", metavar="DIR", default="gpuscope-runs",
                        help="where run directories go (default: gpuscope-runs)")  # fmt: skip
    parser.add_argument("--model", metavar="NAME",
                        help="model name in library_trace.csv (default: the script)")  # fmt: skip
    parser.add_argument("--kill-after", metavar="SECONDS", type=float, default=30.0,
                        help="SIGKILL the command if it still runs this long after a "
                        "forwarded SIGTERM/SIGINT/SIGHUP (default 30)")  # fmt: skip
    parser.add_argument("--list-tools", action="store_true", help="list the tools and exit")
    parser.add_argument("-q", "--quiet", action="store_true", help="no gpuscope lines on stderr")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS…]")


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gpuscope.tools import config, context, session

    tools_config = Path(args.tools_config) if args.tools_config else None
    if args.list_tools:
        _list_tools(config.load_catalog(tools_config))
        return 0
    file = Path(args.additional_context_file) if args.additional_context_file else None
    ctx = context.load_context(args.additional_context, file)
    requests = [*ctx.tools, *config.requests_from_names(args.tools.split(","))]
    catalog = config.load_catalog(tools_config) if requests or tools_config else {}
    request = session.RunRequest(
        command=tuple(_command(args.command)),
        tools=tuple(config.resolve(requests, catalog)),
        output_dir=Path(args.output_dir),
        gpu_vendor=ctx.gpu_vendor,
        env_vars=ctx.env_vars,
        model=args.model,
        kill_after_s=_kill_after(args.kill_after),
    )
    say = None if args.quiet else _say
    if say and ctx.ignored:
        say(f"ignoring madengine deployment settings: {', '.join(ctx.ignored)}")
    result = session.run(request, progress=say)
    if say:
        _summary(say, result)
    return result.exit_code


def _kill_after(seconds: float) -> float:
    from gpuscope.errors import InputError

    if not seconds > 0:
        raise InputError(f"--kill-after {seconds:g}: expected a positive number of seconds")
    return seconds


def _command(argv: list[str]) -> list[str]:
    return argv[1:] if argv[:1] == ["--"] else argv


def _say(line: str) -> None:
    from gpuscope.commands._say import say

    say(f"gpuscope: {line}")


def _summary(say: Callable[[str], None], result: RunResult) -> None:
    manifest = result.manifest
    how = f"killed by {manifest.signal}" if manifest.signal else f"exit {result.exit_code}"
    say(f"command {manifest.status} ({how}) after {manifest.duration_s:.2f} s")
    for warning in manifest.warnings:
        say(f"warning: {warning}")
    say(f"{len(manifest.files)} files in {result.run_dir} (see manifest.json)")


def _list_tools(catalog: Mapping[str, ToolConfig]) -> None:
    for name in sorted(catalog):
        tool = catalog[name]
        vendor = tool.vendor or "any"
        print(f"{name:26} {vendor:7} {tool.description}")
