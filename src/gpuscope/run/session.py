"""`gpuscope run` as a library call: check, create the run directory, stack the tools, run
the command, tear down, write the manifest.

    >>> from gpuscope.run import RunRequest, run
    >>> from gpuscope.tools import load_catalog, resolve
    >>> tools = resolve([ToolRequest("rocprof")], load_catalog())          # doctest: +SKIP
    >>> request = RunRequest(command=("python3", "train.py"), tools=tuple(tools))
    >>> result = run(request)                                               # doctest: +SKIP
    >>> result.exit_code, result.run_dir                                    # doctest: +SKIP
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from gpuscope._version import __version__
from gpuscope.errors import GpuscopeError, InputError, ToolError
from gpuscope.run import aftermath, command, workload_metric
from gpuscope.run.child import (
    KILL_AFTER_S,
    ChildResult,
    Signals,
    deferred_signals,
    run_child,
)
from gpuscope.run.command import CommandNotExecutable as CommandNotExecutable
from gpuscope.run.command import CommandNotFound as CommandNotFound
from gpuscope.run.gpu_processes import Query
from gpuscope.run.manifest import Manifest, read_clocks, utc_iso
from gpuscope.run.rundir import create_run_dir, list_files
from gpuscope.run.stack import Composition, compose, open_layers
from gpuscope.run.workload_metric import PerfOptions
from gpuscope.tools.config import ToolConfig
from gpuscope.tools.host import HostInfo, detect_host
from gpuscope.tools.registry import Planned, Registry, default_registry, instantiate
from gpuscope.tools.tool import Layer, Notes, RunContext

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunRequest:
    command: tuple[str, ...]
    tools: tuple[ToolConfig, ...] = ()
    output_dir: Path = Path("gpuscope-runs")
    gpu_vendor: str | None = None
    env_vars: Mapping[str, str] = field(default_factory=dict)  # context env_vars
    model: str | None = None
    kill_after_s: float = KILL_AFTER_S  # SIGKILL a command still running this long after SIGTERM
    capture: bool = True  # copy the command's stdout / stderr into stdout.log / stderr.log
    perf: PerfOptions = field(default_factory=PerfOptions)  # perf.csv: multiple_results, tags…


@dataclass(frozen=True)
class RunResult:
    run_id: str
    run_dir: Path
    exit_code: int
    manifest: Manifest
    perf_rows: tuple[dict[str, str], ...] = ()  # madengine perf.csv rows (run_dir/perf.csv)


def run(
    request: RunRequest,
    *,
    registry: Registry | None = None,
    env: Mapping[str, str] | None = None,
    host: HostInfo | None = None,
    progress: Progress | None = None,
    gpu_processes: Query | None = None,
) -> RunResult:
    """Run `request.command` inside its tools; raise before starting if a tool cannot work.
    `gpu_processes` lists the processes holding GPU memory at the end (default: NVML/amdsmi
    for the host's vendor)."""
    if not request.command:
        raise InputError("nothing to run: give the command after --, e.g. gpuscope run -- ./app")
    host = host if host is not None else detect_host(use_nvml=False)  # NVML init: 0.1-1 s
    planned = instantiate(request.tools, registry or default_registry())
    ctx = _preflight(planned, _context(request, host, env))
    started = datetime.now(timezone.utc)
    run_id, run_dir = create_run_dir(request.output_dir, started)
    ctx = replace(ctx, run_dir=run_dir.resolve(), run_id=run_id)
    manifest = _start_manifest(request, ctx, host, started)
    if progress is not None:
        progress(f"run {run_id} -> {run_dir}")
        ctx.notes.progress = progress
    gpus = gpu_processes or _gpu_query(ctx.vendor)
    job = _Job(request.kill_after_s, gpus, request.capture)
    exit_code = _run_recorded(planned, ctx, manifest, job)
    rows = _own_metric(manifest, ctx, request, host)
    return RunResult(run_id, run_dir, exit_code, manifest, tuple(rows))


def _own_metric(
    manifest: Manifest, ctx: RunContext, request: RunRequest, host: HostInfo
) -> list[dict[str, str]]:
    """The workload's performance lines into the manifest, perf.csv into the run directory."""
    gpu = host.gpus[0] if host.gpus else None
    arch = (gpu.arch or gpu.name) if gpu is not None else ""
    try:
        rows = workload_metric.record(manifest, ctx.run_dir, ctx.model, request.perf, arch)
    except (GpuscopeError, OSError) as error:  # the command's exit code matters more
        manifest.warnings.append(f"perf.csv not written: {error}")
        rows = []
    manifest.files = list_files(ctx.run_dir)
    manifest.write()
    return rows


def _context(request: RunRequest, host: HostInfo, env: Mapping[str, str] | None) -> RunContext:
    base = {**(os.environ if env is None else env), **request.env_vars}
    return RunContext(
        run_dir=request.output_dir,
        run_id="",
        command=request.command,
        base_env=base,
        vendor=request.gpu_vendor or host.vendor,
        model=request.model or model_name(request.command),
        notes=Notes(),
    )


def model_name(command: Sequence[str]) -> str:
    """A label for library_trace.csv's `model`: the script if there is one, else the program."""
    script = next((a for a in command[1:] if a.endswith(".py") and not a.startswith("-")), None)
    return Path(script or command[0]).stem


def _preflight(planned: Sequence[Planned], ctx: RunContext) -> RunContext:
    """Every check that needs nothing started; the context with the command as it will run
    (command.py: a script without #! runs with /bin/sh, 126/127 raised as shells exit)."""
    configs = [c for t in planned for c in t.configs]
    _warn_conflicts(configs, ctx)
    problems = [p for p in (_vendor_problem(c, ctx) for c in configs) if p]
    for item in planned:
        try:
            item.tool.check(ctx)
        except ToolError as error:
            problems.append(str(error))
    prepared = command.prepare(ctx.command, ctx.base_env.get("PATH", ""))
    if problems:
        raise ToolError("; ".join(problems))
    return replace(ctx, command=prepared)


def _warn_conflicts(configs: Sequence[ToolConfig], ctx: RunContext) -> None:
    """Tools that run together but spoil each other's data (options.conflicts_with)."""
    names = {c.name for c in configs}
    for config in configs:
        clash = sorted(names & set(config.options.get("conflicts_with", "").split(",")))
        if clash:
            reason = config.options.get("conflict", "they interfere")
            ctx.notes.warn(f"{config.name} with {', '.join(clash)}: {reason}")


def _vendor_problem(config: ToolConfig, ctx: RunContext) -> str | None:
    if config.vendor is None or ctx.vendor is None or config.vendor == ctx.vendor:
        return None
    instead = config.options.get("counterpart")
    hint = f"use {instead} instead" if instead else f"drop the {config.name} tool"
    return f"{config.name} works on {config.vendor} GPUs, but this run is on {ctx.vendor}: {hint}"


def _start_manifest(
    request: RunRequest, ctx: RunContext, host: HostInfo, started: datetime
) -> Manifest:
    manifest = Manifest(
        run_id=ctx.run_id,
        run_dir=str(ctx.run_dir),
        gpuscope_version=__version__,
        command=list(request.command),
        cwd=os.getcwd(),
        host=_host_facts(),
        gpu_vendor=ctx.vendor,
        gpus=[gpu.to_dict() for gpu in host.gpus],
        started_at=utc_iso(started),
        env=dict(request.env_vars),
        clocks=read_clocks(),
    )
    manifest.write()
    return manifest


def _host_facts() -> dict[str, object]:
    return {
        "hostname": socket.gethostname(),
        "platform": _platform(),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }


def _platform() -> str:
    """Like platform.platform() without its slow libc probe (it reads the Python binary)."""
    u = os.uname()
    return f"{u.sysname}-{u.release}-{u.machine}"


@dataclass(frozen=True)
class _Job:
    kill_after_s: float
    gpu_processes: Query
    capture: bool = True


def _gpu_query(vendor: str | None) -> Query:
    from gpuscope.run import gpu_processes

    return lambda: gpu_processes.query(vendor)


def _run_recorded(
    planned: Sequence[Planned], ctx: RunContext, manifest: Manifest, job: _Job
) -> int:
    """Run the stack; whatever happens, rewrite the manifest with what is known."""
    signals = Signals()
    child: ChildResult | None = None
    try:
        with deferred_signals(signals):
            child = _run_stack(planned, ctx, manifest, signals, job)
            if child is not None:
                marker = f"{aftermath.MARKER}={manifest.env[aftermath.MARKER]}"
                aftermath.record(manifest, ctx.notes, child, marker, job.gpu_processes)
    except BaseException as error:
        _record_failure(manifest, error)
        raise
    finally:
        _finish(manifest, ctx, signals, child)
    return _record_child(manifest, child, signals)


def _record_failure(manifest: Manifest, error: BaseException) -> None:
    if manifest.child_pid is None:
        manifest.status = "not_started"
        if isinstance(error, GpuscopeError):
            manifest.exit_code = error.exit_code  # e.g. 126/127: the wrapper cannot run
    detail = str(error) if isinstance(error, GpuscopeError) else f"{type(error).__name__}: {error}"
    manifest.error = detail


def _run_stack(
    planned: Sequence[Planned],
    ctx: RunContext,
    manifest: Manifest,
    signals: Signals,
    job: _Job,
) -> ChildResult | None:
    with ExitStack() as stack:
        stack.callback(ctx.notes.run_deferred)  # registered first: runs after every teardown
        layers = open_layers(stack, [p.tool for p in planned], ctx)
        composition = compose(layers, ctx.command, ctx.notes)
        env = _child_env(ctx, composition)
        ranked = _per_rank_env(ctx, env, manifest, planned)
        env.update(ranked)
        _record_stack(manifest, planned, layers, composition, env)
        manifest.env.update(ranked)
        if signals.pending_stop():
            return None
        argv = _spawnable(composition.argv, env)
        return _run_marked(argv, env, layers, signals, manifest, job)


def _child_env(ctx: RunContext, composition: Composition) -> dict[str, str]:
    own = {"GPUSCOPE_RUN_DIR": str(ctx.run_dir), "GPUSCOPE_RUN_ID": ctx.run_id,
           aftermath.MARKER: f"{ctx.run_id}.{os.getpid()}"}  # fmt: skip
    return {**ctx.base_env, **composition.env, **own}


def _per_rank_env(
    ctx: RunContext, env: Mapping[str, str], manifest: Manifest, planned: Sequence[Planned]
) -> dict[str, str]:
    """A launcher's ranks get folders of their own, and the other hosts of the job the run's
    samplers (run/ranks.py); {} for other commands."""
    from gpuscope.run import ranks

    kind = ranks.launcher(ctx.command, ctx.base_env)
    manifest.launcher = kind
    if not kind:
        return {}
    samplers = [{"kind": c.options.get("measure", "power"), "env": dict(c.env_vars)}
                for p in planned if p.kind == "sampler" for c in p.configs]  # fmt: skip
    return ranks.child_env(ctx.run_dir, kind, env, ctx.base_env, samplers)


def _spawnable(argv: Sequence[str], env: Mapping[str, str]) -> tuple[str, ...]:
    """The composed command line (a tool's wrapper first) checked as the command was, with its
    program resolved to a path (posix_spawn does not search PATH)."""
    path = env.get("PATH", "")
    prepared = command.prepare(argv, path)
    return (command.locate(prepared[0], path), *prepared[1:])


def _run_marked(
    argv: Sequence[str],
    env: Mapping[str, str],
    layers: Sequence[Layer],
    signals: Signals,
    manifest: Manifest,
    job: _Job,
) -> ChildResult:
    tee: dict[str, list[Path]] = {}
    for layer in layers:
        for stream, path in layer.tee.items():
            tee.setdefault(stream, []).append(path)
    if job.capture:  # a log per stream: two streams in one file would tear each other's lines
        for stream, name in workload_metric.LOG_NAMES.items():
            tee.setdefault(stream, []).append(Path(manifest.run_dir) / name)
    _mark(layers, "workload_start")
    try:
        started = lambda pid: _started(manifest, pid)  # noqa: E731
        marker = f"{aftermath.MARKER}={env[aftermath.MARKER]}"
        return run_child(argv, env, signals, started, tee, job.kill_after_s, marker)
    finally:
        _mark(layers, "workload_end")


def _started(manifest: Manifest, pid: int) -> None:
    manifest.child_pid = pid
    manifest.write()


def _mark(layers: Sequence[Layer], label: str) -> None:
    for layer in layers:
        if layer.on_mark is not None:
            layer.on_mark(label)


def _record_stack(
    manifest: Manifest,
    planned: Sequence[Planned],
    layers: Sequence[Layer],
    composition: Composition,
    env: Mapping[str, str],
) -> None:
    pairs = zip(planned, layers, strict=True)
    manifest.tools = [_tool_entry(p, layer, composition) for p, layer in pairs]
    manifest.argv = list(composition.argv)
    manifest.env = {**manifest.env, **composition.env}
    own = ("GPUSCOPE_RUN_DIR", "GPUSCOPE_RUN_ID", aftermath.MARKER)
    manifest.env.update({k: env[k] for k in own})
    manifest.write()


def _tool_entry(planned: Planned, layer: Layer, composition: Composition) -> dict[str, object]:
    configs = planned.configs
    return {
        "name": planned.tool.name,
        "names": [c.name for c in configs],
        "kind": planned.kind,
        "vendor": configs[0].vendor,
        "description": configs[0].description,
        "argv": list(composition.applied.get(layer.tool, ())),
        "env": dict(layer.env),
        "tee": {stream: path.name for stream, path in layer.tee.items()},
        "user_cmd": any(c.user_cmd for c in configs),
    }


def _record_child(manifest: Manifest, child: ChildResult | None, signals: Signals) -> int:
    if child is None:  # interrupted before the command started
        first = signals.received[0] if signals.received else "SIGINT"
        manifest.status, manifest.error = "not_started", f"interrupted by {first} before start"
        manifest.exit_code = 128 + _signal_number(first)
    else:
        manifest.status = "killed" if child.signal else "exited"
        manifest.exit_code, manifest.signal = child.exit_code, child.signal
    manifest.write()
    return manifest.exit_code


def _signal_number(name: str) -> int:
    return int(signal.Signals[name])


def _finish(
    manifest: Manifest, ctx: RunContext, signals: Signals, child: ChildResult | None
) -> None:
    """The manifest's last word. `duration_s` is the command's own time (None: it never
    started): neither the tools' setup and teardown nor the analyses after it, nor the ending
    of what it left running (`signals.cleanup_s`, a grace for a process ignoring SIGTERM)."""
    manifest.ended_at = utc_iso(datetime.now(timezone.utc))
    manifest.duration_s = child.duration_s if child is not None else None
    manifest.signals = {
        "received": signals.received,
        "forwarded": signals.forwarded,
        "killed_after_s": signals.escalated_after_s,
        "cleanup_s": child.cleanup_s if child is not None else None,
    }
    if signals.escalated_after_s is not None:
        ctx.notes.warn(
            f"the command was still running {signals.escalated_after_s:g} s after "
            f"{signals.received[0] if signals.received else 'the stop signal'}: killed with "
            "SIGKILL (--kill-after); its outputs may be incomplete"
        )
    if manifest.launcher is not None:
        from gpuscope.run.ranks import collect

        manifest.ranks, manifest.hosts = collect(ctx.run_dir, manifest.gpus)
    manifest.warnings = list(ctx.notes.warnings)
    manifest.files = list_files(ctx.run_dir)
    manifest.write()
