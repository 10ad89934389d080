"""`gpuscope run [--tools …] [madengine context options] -- COMMAND [ARGS…]`."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from gpuscope.commands._record import add_options

if TYPE_CHECKING:
    from gpuscope.run.session import RunRequest, RunResult
    from gpuscope.run.workload_metric import PerfOptions
    from gpuscope.tools.config import ToolConfig

HELP = "run any command inside stacked profilers, library tracers and power/VRAM samplers"

EPILOG = """\
examples:
  gpuscope run --tools rocprof,gpu_info_power_profiler -- python3 train.py
  gpuscope run --additional-context-file rocprofv3_compute_bound.json -- ./app --size 4096
  gpuscope run --additional-context '{"tools": [{"name": "nsys"}]}' -- ./app
  gpuscope run --baseline --tools rocprof -- python3 train.py     # profiling overhead in %
  gpuscope run --perf-csv perf.csv --record -- ./run.sh             # madengine perf.csv, history
  gpuscope run --list-tools

The first tool listed is innermost. Outputs: <output-dir>/<run-id>/ with manifest.json,
stdout.log, stderr.log (the command's output) and perf.csv (its `performance: <value> <metric>`
lines, madengine's format). The exit status is the command's own (128+N if killed by signal N).
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
    parser.add_argument("--baseline", action="store_true",
                        help="run the command once without tools first; report both runs' "
                        "wall time and own metric and the tools' overhead in %%")  # fmt: skip
    parser.add_argument("--perf-csv", metavar="PATH",
                        help="also append the perf.csv rows to this shared file (locked; "
                        "created with madengine's header; a file that is not a perf.csv is "
                        "refused before the command runs)")  # fmt: skip
    parser.add_argument("--multiple-results", metavar="CSV",
                        help="the CSV of results the command writes (madengine's "
                        "multiple_results: model, performance, metric columns)")  # fmt: skip
    parser.add_argument("--no-capture", action="store_true",
                        help="leave the command's stdout/stderr alone: no stdout.log, no "
                        "performance lines read")  # fmt: skip
    parser.add_argument("--list-tools", action="store_true", help="list the tools and exit")
    parser.add_argument("-q", "--quiet", action="store_true", help="no gpuscope lines on stderr")
    add_options(parser)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS…]")


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gpuscope.commands import _record
    from gpuscope.madengine import context
    from gpuscope.run import session
    from gpuscope.tools import config

    tools_config = Path(args.tools_config) if args.tools_config else None
    if args.list_tools:
        _list_tools(config.load_catalog(tools_config))
        return 0
    _check_outputs(args)
    _record.checked(args)
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
        capture=not args.no_capture,
        perf=_perf_options(args),
    )
    say = None if args.quiet else _say
    if say and ctx.ignored:
        say(f"ignoring madengine deployment settings: {', '.join(ctx.ignored)}")
    baseline = _baseline(request, say) if args.baseline else None
    if baseline is not None and (stop := interrupted(baseline)):
        if say:
            _summary(say, baseline)
            say(f"baseline interrupted by {stop}: the run with tools not started, nothing kept")
        return 128 + _signal_number(stop)
    result = session.run(request, progress=say)
    if baseline is not None:
        _compare(baseline, result, say)
    if say:
        _summary(say, result)
    if stop := interrupted(result):
        if say:
            say(f"interrupted by {stop}: nothing recorded, nothing appended to --perf-csv")
        return result.exit_code
    _share(args, [*(baseline.perf_rows if baseline else ()), *result.perf_rows])
    _keep(args, baseline or result, result.manifest.baseline)
    return result.exit_code


_STOPS = ("SIGINT", "SIGTERM", "SIGHUP")


def interrupted(result: RunResult) -> str | None:
    """The stop signal that interrupted a run: the first SIGINT / SIGTERM / SIGHUP gpuscope
    received, or the one that killed the command without passing through gpuscope (a Ctrl-C
    typed at the terminal reaches the command's process group alone); None if none did. An
    interrupted run's numbers are not the workload's: none is kept."""
    manifest = result.manifest
    received = [name for name in manifest.signals.get("received", ()) if name in _STOPS]
    if received:
        return str(received[0])
    return manifest.signal if manifest.signal in _STOPS else None


def _signal_number(name: str) -> int:
    import signal

    return int(signal.Signals[name])


def _check_outputs(args: argparse.Namespace) -> None:
    from gpuscope.commands._record import db_output
    from gpuscope.errors import ConfigError
    from gpuscope.output import check_outputs

    if args.no_capture and args.baseline:
        raise ConfigError("--baseline compares the runs' own metric: drop --no-capture")
    inputs = [args.additional_context_file, args.tools_config, args.multiple_results]
    check_outputs({"--perf-csv": args.perf_csv, **db_output(args)}, [p for p in inputs if p])
    if args.perf_csv:
        from gpuscope.madengine.perfcsv import check_target

        check_target(args.perf_csv)  # before the command runs: a file that is not a perf.csv


def _perf_options(args: argparse.Namespace) -> PerfOptions:
    from pathlib import Path

    from gpuscope.history.context import git_state
    from gpuscope.run.workload_metric import PerfOptions

    commit = args.commit or git_state(Path.cwd(), {}).get("commit") or ""
    multiple = Path(args.multiple_results) if args.multiple_results else None
    return PerfOptions(multiple_results=multiple, tags=tuple(args.tag), git_commit=commit)


def _baseline(request: RunRequest, say: Callable[[str], None] | None) -> RunResult:
    """The same command without tools, first (the profiled run then follows it)."""
    from dataclasses import replace

    from gpuscope.run import session

    if say:
        say("baseline: the command without tools")
    plain = replace(request, tools=())
    return session.run(plain, progress=say)


def _compare(baseline: RunResult, result: RunResult, say: Callable[[str], None] | None) -> None:
    """Both runs' wall time and own metric, and the overhead, into the profiled manifest."""
    from gpuscope.run.workload_metric import overhead

    base = baseline.manifest
    result.manifest.baseline = {
        "run_id": baseline.run_id, "run_dir": str(baseline.run_dir),
        "exit_code": baseline.exit_code, "duration_s": base.duration_s,
        "performance": base.performance,
        "overhead": overhead(base, result.manifest),
    }  # fmt: skip
    result.manifest.write()
    if say:
        for line in _overhead_lines(baseline, result):
            say(line)


def _overhead_lines(baseline: RunResult, result: RunResult) -> list[str]:
    from gpuscope.run.workload_metric import metrics_of

    base, prof = baseline.manifest, result.manifest
    found = prof.baseline["overhead"] if prof.baseline else {}
    lines = [f"{'':22} {'baseline':>14} {'with tools':>14} {'overhead':>9}"]
    lines.append(f"{'wall time (s)':22} {_num(base.duration_s):>14} {_num(prof.duration_s):>14} "
                 f"{_pct(found.get('wall_pct')):>9}")  # fmt: skip
    before = {m["name"]: m["value"] for m in metrics_of(base.performance)}
    for metric in metrics_of(prof.performance):
        name = metric["name"]
        pct = found.get("metrics", {}).get(name)
        lines.append(f"{name[:22]:22} {_num(before.get(name)):>14} {_num(metric['value']):>14} "
                     f"{_pct(pct):>9}")  # fmt: skip
    if baseline.exit_code != 0:
        lines.append(f"warning: the baseline run exited {baseline.exit_code}")
    return lines


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f} %"


def _share(args: argparse.Namespace, rows: list[dict[str, str]]) -> None:
    if args.perf_csv and rows:
        from gpuscope.madengine import perfcsv

        perfcsv.append(args.perf_csv, rows)


def _keep(args: argparse.Namespace, result: RunResult, baseline: dict[str, Any] | None) -> None:
    """--record: the run (the baseline's, when there is one: it is the undisturbed number; the
    tools' overhead goes with it)."""
    if not args.record:
        return
    from gpuscope.commands._record import record

    manifest = result.manifest.to_dict()
    extra: dict[str, Any] = {"run_id": result.run_id, "exit_code": result.exit_code,
                             "tools": [t["name"] for t in manifest["tools"]]}  # fmt: skip
    if baseline is not None:
        extra["overhead"] = baseline["overhead"]
    record(args, manifest, _model(args, result), str(result.run_dir), extra)


def _model(args: argparse.Namespace, result: RunResult) -> str:
    from gpuscope.run.session import model_name

    return str(args.model or model_name(result.manifest.command))


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
    took = "" if manifest.duration_s is None else f" after {manifest.duration_s:.2f} s"
    say(f"command {manifest.status} ({how}){took}")
    for warning in manifest.warnings:
        say(f"warning: {warning}")
    say(f"{len(manifest.files)} files in {result.run_dir} (see manifest.json)")


def _list_tools(catalog: Mapping[str, ToolConfig]) -> None:
    for name in sorted(catalog):
        tool = catalog[name]
        vendor = tool.vendor or "any"
        print(f"{name:26} {vendor:7} {tool.description}")
