"""`manifest.json`: what a run did, written when it starts and rewritten when it ends.

Schema `gpuscope.run/1` (every key always present; `null` when not known yet):

    schema, run_id, run_dir, gpuscope_version,
    status            "running" | "exited" | "killed" | "not_started"
    command           the wrapped command as given (argv list)
    argv              the full command line that ran, tools' wrappers included
    cwd, env          env = the variables gpuscope added or changed for the command
    tools             [{name, kind, vendor, argv, env, description, user_cmd}] innermost first;
                      argv is the prefix applied ([] if merged into an identical one)
    host              {hostname, platform, python, cpus}
    gpu_vendor, gpus  [{index, name, vendor, arch, memory_bytes}]
    started_at, ended_at   UTC, ISO 8601 (the whole run)
    duration_s        the command's own wall time (monotonic): from its start to the end of its
                      job (its process group, after a stop signal); not gpuscope's setup, the
                      tools' teardown or the analyses after it, nor signals.cleanup_s; null when
                      it never started
    child_pid, exit_code, signal   signal = name of the signal that killed the command
    signals           {received: [...], forwarded: [...], killed_after_s, cleanup_s} by gpuscope
                      during the run, to the command's process group (forwarded also holds the
                      SIGTERM sent to what outlived the command after a SIGINT/SIGHUP, and SIGKILL);
                      killed_after_s: the group outlived the --kill-after grace and was sent
                      SIGKILL that long after the first stop signal (else null); cleanup_s:
                      the time spent ending what the command left running once it had ended
                      (SIGTERM, up to 2 s for a process ignoring it, SIGKILL), apart from
                      duration_s
    survivors         [{pid, command, found, signal, ended}]: the command's other processes that
                      gpuscope had to end — still running at --kill-after (SIGKILL) or after the
                      command ended (SIGTERM, then SIGKILL); found: "process group" or
                      "environment" (it had left the group; GPUSCOPE_JOB in its environment);
                      signal: the last one sent (null: not permitted); ended: gone at the end
    gpu_processes     [{gpu, pid, used_bytes, command, of_this_run}]: every process holding GPU
                      memory once the run's processes were ended (NVML / amdsmi; [] without)
    files             [{path, bytes}] relative to run_dir
    warnings, error
    clocks            {realtime_ns, monotonic_ns, boottime_ns, read_ns} read back to back at the
                      start: relates the profilers' clocks (boot, epoch) to the samplers'
                      (monotonic); read_ns = how long the three reads took (their uncertainty)
    launcher          "torchrun" | "srun" | "mpirun" | "forced" when the command starts ranks
                      (each rank's outputs then go to rank<R>/), else null
    ranks             [{rank, dir, rank_from, local_rank, world_size, host, pid, ppid,
                      visible_devices, started_at, argv}] from each rank<R>/rank.json
    hosts             [{hostname, ranks, local, gpus, samplers}]: gpus for the host gpuscope ran
                      on; samplers: the CSVs sampled on another host (hosts/<host>/...)
    performance       [{metric, value, text, direction, source}]: the workload's own metric,
                      madengine's `performance: <value> <metric>` lines of stdout.log, then
                      stderr.log, in order
                      (or the --multiple-results CSV's rows); [] when none (workload_metric.py)
    baseline          null, or for `run --baseline`: the run of the same command without tools
                      {run_id, run_dir, exit_code, duration_s, performance, overhead: {wall_pct,
                      metrics: {name: pct}}} (how much slower this run was, in %)

A run killed with gpuscope itself (kill -9) keeps the start manifest with status "running".
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gpuscope import output
from gpuscope.schemas import RUN as SCHEMA

FILE_NAME = "manifest.json"


@dataclass
class Manifest:
    run_id: str
    run_dir: str
    gpuscope_version: str
    command: list[str]
    cwd: str
    host: dict[str, Any]
    gpu_vendor: str | None
    gpus: list[dict[str, Any]]
    started_at: str
    schema: str = SCHEMA
    status: str = "running"
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)
    ended_at: str | None = None
    duration_s: float | None = None
    child_pid: int | None = None
    exit_code: int | None = None
    signal: str | None = None
    signals: dict[str, Any] = field(
        default_factory=lambda: {
            "received": [],
            "forwarded": [],
            "killed_after_s": None,
            "cleanup_s": None,
        }
    )
    files: list[dict[str, object]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    clocks: dict[str, int] = field(default_factory=dict)
    launcher: str | None = None  # torchrun, srun, mpirun, forced: per-rank folders (ranks.py)
    ranks: list[dict[str, Any]] = field(default_factory=list)
    hosts: list[dict[str, Any]] = field(default_factory=list)
    survivors: list[dict[str, Any]] = field(default_factory=list)  # reaper.Survivor.to_dict()
    gpu_processes: list[dict[str, Any]] = field(default_factory=list)  # aftermath.py
    performance: list[dict[str, Any]] = field(default_factory=list)  # workload_metric.py
    baseline: dict[str, Any] | None = None  # run --baseline: the run without tools

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        return {"schema": data.pop("schema"), **data}

    def write(self) -> Path:
        """Write atomically to `<run_dir>/manifest.json` (a reader never sees half a file)."""
        text = json.dumps(self.to_dict(), indent=2) + "\n"
        path = Path(self.run_dir) / FILE_NAME
        output.write(path, text.encode("utf-8"))
        return path


def utc_iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def read_clocks() -> dict[str, int]:
    """CLOCK_REALTIME, CLOCK_MONOTONIC and (Linux) CLOCK_BOOTTIME now, in ns, read back to back."""
    boot = getattr(time, "CLOCK_BOOTTIME", None)
    first = time.perf_counter_ns()
    clocks = {"monotonic_ns": time.monotonic_ns(), "realtime_ns": time.time_ns()}
    if boot is not None:
        clocks["boottime_ns"] = time.clock_gettime_ns(boot)
    clocks["read_ns"] = time.perf_counter_ns() - first
    return clocks


def read_manifest(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / FILE_NAME).read_text(encoding="utf-8"))
    return data
