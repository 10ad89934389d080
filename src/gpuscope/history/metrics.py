"""gpuscope's reports as history metrics: one function per report kind, each taking the JSON
object the command writes (so `--record` and `gpuscope history import report.json` agree).

| report (schema)          | kind       | metrics (lower is better unless said)               |
|--------------------------|------------|-----------------------------------------------------|
| gpuscope.run/1 manifest  | run        | each own metric (performance lines; the direction   |
|                          |            | from its name), wall_s                              |
| gpuscope.analysis/1      | analysis   | gpu_busy_us, kernel_time_us, span_us, step_time_us  |
|                          |            | (samples: the steady steps)                         |
| gpuscope.analysis-set/1  | analysis   | the same, samples: one value per report (rank)      |
| gpuscope.bench/1         | bench      | time_us (samples: all), tflops / gbps (higher)      |
| … kind "comparison"      | comparison | ratio (median B / median A), time_us of B           |
| gpuscope.libperf/1       | libperf    | total_us of the top configs, time_us:<config> each  |
| gpuscope.counters/1      | counters   | kernel_time_us, time_us:<kernel> of the 10 longest  |
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gpuscope import schemas
from gpuscope.errors import InputError
from gpuscope.formats import endings
from gpuscope.history.model import HIGHER, LOWER, Metric, from_samples

Report = Mapping[str, Any]
TOP_KERNELS = 10


def of_report(report: Report) -> tuple[str, list[Metric]]:
    """(kind, metrics) of any report gpuscope writes; InputError for anything else."""
    schema = report.get("schema") if isinstance(report, Mapping) else None
    reader = _READERS.get(str(schema))
    if reader is None:
        known = ", ".join(sorted(_READERS))
        raise InputError(f"schema {schema!r} is not a report the history takes (known: {known})")
    kind, metrics = reader(report)
    if not metrics:
        raise InputError(f"a {schema} report with no metric to record (nothing was measured)")
    return kind, metrics


def of_run(manifest: Report) -> tuple[str, list[Metric]]:
    metrics = own_metrics(manifest.get("performance") or [])
    if manifest.get("duration_s") is not None:
        metrics.append(Metric("wall_s", float(manifest["duration_s"]), "s", LOWER))
    return "run", metrics


def own_metrics(performance: Sequence[Mapping[str, Any]]) -> list[Metric]:
    """A run's performance values ({metric, value, direction}) as metrics: the first value of
    each (madengine's), every value as samples when one was printed several times."""
    values: dict[str, list[float]] = {}
    directions: dict[str, str] = {}
    for entry in performance:
        name = str(entry["metric"])
        values.setdefault(name, []).append(float(entry["value"]))
        directions.setdefault(name, str(entry.get("direction") or HIGHER))
    return [
        Metric(name, found[0], "", directions[name], tuple(found) if len(found) > 1 else ())
        for name, found in values.items()
    ]


def of_analysis(report: Report) -> tuple[str, list[Metric]]:
    metrics = [
        Metric("gpu_busy_us", float(report["gpu_busy_us"]), "us", LOWER),
        Metric("kernel_time_us", float(report["kernels"]["time_us"]), "us", LOWER),
        Metric("span_us", float(report["span_us"]), "us", LOWER),
    ]
    steps = _step_times(report.get("steps"))
    if steps:
        metrics.append(from_samples("step_time_us", steps, "us", LOWER))
    return "analysis", metrics


def _step_times(steps: Any) -> list[float]:
    if not isinstance(steps, Mapping) or not steps.get("steps"):
        return []
    skip = int(steps.get("warmup_steps") or 0)
    return [float(s["wall_us"]) for s in steps["steps"][skip:] if s.get("wall_us") is not None]


def of_analysis_set(report: Report) -> tuple[str, list[Metric]]:
    per_report = [of_analysis(r)[1] for r in report.get("reports", [])]
    if not per_report:
        return "analysis", []
    names = [m.name for m in per_report[0] if m.name != "step_time_us"]
    metrics = []
    for name in names:
        values = [m.value for ms in per_report for m in ms if m.name == name]
        metrics.append(from_samples(name, values, "us", LOWER))
    return "analysis", metrics


def of_bench(report: Report) -> tuple[str, list[Metric]]:
    if report.get("kind") == "comparison":
        return _of_comparison(report)
    samples = [float(s) for s in report.get("samples_us") or []]
    metrics = [from_samples("time_us", samples, "us", LOWER)] if samples else []
    rates = report.get("rates") or {}
    for key, unit in (("tflops", "TFLOP/s"), ("gbps", "GB/s")):
        if isinstance(rates.get(key), int | float):
            metrics.append(Metric(key, float(rates[key]), unit, HIGHER))
    return "bench", metrics


def _of_comparison(report: Report) -> tuple[str, list[Metric]]:
    metrics = []
    if report.get("ratio") is not None:
        metrics.append(Metric("ratio", float(report["ratio"]), "B/A", LOWER))
    b = report.get("b") or {}
    samples = [float(s) for s in b.get("samples_us") or []]
    if samples:
        metrics.append(from_samples("time_us", samples, "us", LOWER))
    return "comparison", metrics


def of_libperf(report: Report) -> tuple[str, list[Metric]]:
    top = [e for e in report.get("top") or [] if e.get("total_us") is not None]
    metrics = []
    if top:
        total = sum(float(e["total_us"]) for e in top)
        metrics.append(Metric("total_us", total, "us", LOWER))
    for entry in top:
        if entry.get("time_us") is not None:
            name = f"time_us:{entry['label']}"
            metrics.append(Metric(name, float(entry["time_us"]), "us", LOWER))
    return "libperf", metrics


def of_counters(report: Report) -> tuple[str, list[Metric]]:
    kernels = [k for k in report.get("kernels") or [] if k.get("time_us") is not None]
    if not kernels:
        return "counters", []
    metrics = [Metric("kernel_time_us", sum(float(k["time_us"]) for k in kernels), "us", LOWER)]
    longest = sorted(kernels, key=lambda k: -float(k["time_us"]))[:TOP_KERNELS]
    seen: set[str] = set()
    for kernel in longest:
        name = f"time_us:{kernel['name']}"
        if name not in seen:
            seen.add(name)
            metrics.append(Metric(name, float(kernel["time_us"]), "us", LOWER))
    return "counters", metrics


_READERS: dict[str, Callable[[Report], tuple[str, list[Metric]]]] = {
    schemas.RUN: of_run,
    schemas.ANALYSIS: of_analysis,
    schemas.ANALYSIS_SET: of_analysis_set,
    schemas.BENCH: of_bench,
    schemas.LIBPERF: of_libperf,
    schemas.COUNTERS: of_counters,
}


def workload_from_path(path: str | Path) -> str:
    """A workload name from a file: its name without its format's ending (`formats.endings`)."""
    name = Path(path).name or str(path)
    for suffix in endings():
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def default_workload(report: Report, path: str | Path | None = None) -> str:
    """A report's workload name when none is given: the run's model, the bench target, the
    libperf trace's model, else the input file's name."""
    schema = report.get("schema")
    if schema == schemas.RUN:
        command = report.get("command") or ["run"]
        script = next((a for a in command[1:] if str(a).endswith(".py")), None)
        return Path(str(script or command[0])).stem
    if schema == schemas.BENCH and report.get("name"):
        return str(report["name"])
    source = report.get("source")
    if isinstance(source, Mapping) and source.get("path"):
        return workload_from_path(str(source["path"]))
    if isinstance(source, str) and source:
        return workload_from_path(source)
    return workload_from_path(path) if path else "unnamed"
