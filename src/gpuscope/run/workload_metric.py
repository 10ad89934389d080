"""A run's own metric: read its performance lines (or `multiple_results` CSV), keep them in the
manifest, write madengine's `perf.csv` rows into the run directory; and the profiling overhead
of a run against a baseline run of the same command without tools.

    manifest.performance  [{metric, value, text, source}]   every value, in output order
    <run_dir>/stdout.log, stderr.log   the command's output streams (session.py tees them; one
                          file each: two streams written into one file tear each other's lines)
    <run_dir>/perf.csv    madengine's header; one row per metric (its first value), or one per
                          multiple_results row; a run with no value: one FAILURE row
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuscope.madengine import perfcsv
from gpuscope.madengine.performance import (
    MultipleResult,
    PerfLine,
    direction_of,
    read_log,
    read_multiple_results,
)
from gpuscope.run.manifest import Manifest

LOG_NAMES = {"stdout": "stdout.log", "stderr": "stderr.log"}


@dataclass(frozen=True)
class PerfOptions:
    """What perf.csv rows need beyond the run: `multiple_results` (a CSV the command writes,
    relative to the working directory), `tags`, `git_commit` (the command layer finds it)."""

    multiple_results: Path | None = None
    tags: tuple[str, ...] = ()
    git_commit: str = ""


def record(
    manifest: Manifest, run_dir: Path, model: str, options: PerfOptions, gpu_arch: str = ""
) -> list[dict[str, str]]:
    """Read the run's metric into `manifest.performance`, write `perf.csv`; its rows."""
    lines = [line for name in LOG_NAMES.values() for line in read_log(run_dir / name)]
    multiple = _multiple(run_dir, options, manifest)
    manifest.performance = [line.to_dict() for line in lines]
    if multiple is not None:
        manifest.performance += [_as_line(r).to_dict() for r in multiple if r.value is not None]
    base = _base_row(manifest, model, options, gpu_arch)
    rows = _rows(base, model, lines, multiple, manifest.exit_code)
    perfcsv.write(run_dir / perfcsv.FILE_NAME, rows)
    return rows


def _multiple(
    run_dir: Path, options: PerfOptions, manifest: Manifest
) -> list[MultipleResult] | None:
    """The multiple_results CSV, copied into the run directory (the next run overwrites it)."""
    source = options.multiple_results
    if source is None:
        return None
    path = source if source.is_absolute() else Path(manifest.cwd) / source
    if not path.is_file():
        manifest.warnings.append(f"--multiple-results {source}: the command did not write it")
        return []
    shutil.copyfile(path, run_dir / f"multiple_results_{path.name}")
    try:
        return read_multiple_results(path)
    except Exception as error:  # a bad CSV: the run's outputs stay, the rows say FAILURE
        manifest.warnings.append(str(error))
        return []


def _as_line(row: MultipleResult) -> PerfLine:
    return PerfLine(row.value or 0.0, row.metric, row.performance, f"multiple_results:{row.model}")


def _base_row(manifest: Manifest, model: str, options: PerfOptions, arch: str) -> dict[str, str]:
    gpus = str(len(manifest.gpus))
    # madengine's values: $pipeline (lower case, as it reads it) and $BUILD_NUMBER
    return {
        "model": model,
        "n_gpus": gpus,
        "nnodes": "1",
        "gpus_per_node": gpus,
        "training_precision": "",
        "pipeline": os.environ.get("pipeline", ""),  # noqa: SIM112
        "args": shlex.join(manifest.command[1:]),
        "tags": ",".join(options.tags),
        "git_commit": options.git_commit,
        "machine_name": str(manifest.host.get("hostname", "")),
        "deployment_type": "local",
        "launcher": manifest.launcher or "",
        "gpu_architecture": arch,
        "relative_change": "",
        "test_duration": "" if manifest.duration_s is None else repr(manifest.duration_s),
        "build_number": os.environ.get("BUILD_NUMBER", "0"),
    }


def _rows(
    base: Mapping[str, str],
    model: str,
    lines: Sequence[PerfLine],
    multiple: list[MultipleResult] | None,
    exit_code: int | None,
) -> list[dict[str, str]]:
    if multiple:
        return [
            {
                **base,
                **r.extra,
                "model": f"{model}_{r.model}",
                "performance": r.performance,
                "metric": r.metric,
                "status": perfcsv.status(exit_code, r.performance),
            }
            for r in multiple
        ]
    firsts = {line.metric: line for line in reversed(lines)}  # the first value of each metric
    ordered = [firsts[m] for m in dict.fromkeys(line.metric for line in lines)]
    if not ordered:
        return [{**base, "performance": "", "metric": "", "status": perfcsv.FAILURE}]
    return [
        {
            **base,
            "performance": line.text,
            "metric": line.metric,
            "status": perfcsv.status(exit_code, line.text),
        }
        for line in ordered
    ]


def metrics_of(performance: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The manifest's performance values by metric: {name, value (the first), direction}."""
    firsts: dict[str, dict[str, Any]] = {}
    for entry in performance:
        name = str(entry["metric"])
        firsts.setdefault(
            name, {"name": name, "value": float(entry["value"]), "direction": direction_of(name)}
        )
    return list(firsts.values())


def overhead(baseline: Manifest, profiled: Manifest) -> dict[str, Any]:
    """How much slower the profiled run was than the baseline, in %: wall time, and each own
    metric (a throughput's drop counts as the time per item it adds: base/profiled − 1)."""
    result: dict[str, Any] = {"wall_pct": _pct(baseline.duration_s, profiled.duration_s, "lower")}
    base = {m["name"]: m for m in metrics_of(baseline.performance)}
    for metric in metrics_of(profiled.performance):
        before = base.get(metric["name"])
        if before is not None:
            pct = _pct(before["value"], metric["value"], metric["direction"])
            result.setdefault("metrics", {})[metric["name"]] = pct
    result.setdefault("metrics", {})
    return result


def _pct(base: float | None, profiled: float | None, direction: str) -> float | None:
    if base is None or profiled is None or base <= 0 or profiled <= 0:
        return None
    ratio = profiled / base if direction == "lower" else base / profiled
    return round((ratio - 1) * 100, 3)
