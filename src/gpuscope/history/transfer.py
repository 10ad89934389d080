"""History in and out: export every metric of every result as CSV, Parquet (pyarrow, if
installed) or madengine's perf.csv rows; import madengine perf.csv rows and gpuscope's JSON
reports, so an existing history comes along.

Export columns (one row per metric of a result): result_id, workload, kind, recorded_at,
commit, dirty, branch, host, gpu_model, gpu_count, driver, rocm, cuda, torch, gpuscope_version,
tags (comma-separated), artefacts, source, metric, value, unit, direction, samples (JSON list,
empty when none).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gpuscope.errors import InputError
from gpuscope.history import metrics
from gpuscope.history.context import now_iso
from gpuscope.history.model import Context, Metric, Result

COLUMNS = (
    "result_id",
    "workload",
    "kind",
    "recorded_at",
    "commit",
    "dirty",
    "branch",
    "host",
    "gpu_model",
    "gpu_count",
    "driver",
    "rocm",
    "cuda",
    "torch",
    "gpuscope_version",
    "tags",
    "artefacts",
    "source",
    "metric",
    "value",
    "unit",
    "direction",
    "samples",
)
_CONTEXT_COLUMNS = {
    "model",
    "performance",
    "metric",
    "git_commit",
    "machine_name",
    "gpu_architecture",
    "n_gpus",
    "tags",
}


def rows(results: Iterable[Result]) -> Iterable[dict[str, Any]]:
    """One flat row per metric of each result."""
    for r in results:
        c = r.context
        head = {
            "result_id": r.id,
            "workload": r.workload,
            "kind": r.kind,
            "recorded_at": c.recorded_at,
            "commit": c.commit,
            "dirty": c.dirty,
            "branch": c.branch,
            "host": c.host,
            "gpu_model": c.gpu_model,
            "gpu_count": c.gpu_count,
            "driver": c.driver,
            "rocm": c.rocm,
            "cuda": c.cuda,
            "torch": c.torch,
            "gpuscope_version": c.gpuscope_version,
            "tags": ",".join(c.tags),
            "artefacts": c.artefacts,
            "source": r.source,
        }
        for m in r.metrics:
            yield {
                **head,
                "metric": m.name,
                "value": m.value,
                "unit": m.unit,
                "direction": m.direction,
                "samples": json.dumps(list(m.samples)) if m.samples else "",
            }


def to_csv(results: Iterable[Result]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows(results):
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buffer.getvalue()


def to_parquet(results: Iterable[Result], path: Path) -> None:
    """The rows as a Parquet file; InputError naming pyarrow when it is not installed."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("Parquet needs pyarrow: pip install pyarrow (or export CSV)") from None
    found = list(rows(results))
    columns = {name: [row[name] for row in found] for name in COLUMNS}
    pq.write_table(pa.table(columns), path)


def to_perf_rows(results: Iterable[Result]) -> list[dict[str, str]]:
    """madengine perf.csv rows: one per metric (model = the workload)."""
    out = []
    for r in results:
        c = r.context
        for m in r.metrics:
            out.append(
                {
                    "model": r.workload,
                    "n_gpus": _text(c.gpu_count),
                    "nnodes": "1",
                    "gpus_per_node": _text(c.gpu_count),
                    "tags": ",".join(c.tags),
                    "git_commit": c.commit or "",
                    "machine_name": c.host or "",
                    "deployment_type": "local",
                    "gpu_architecture": c.gpu_model or "",
                    "performance": repr(m.value),
                    "metric": m.name,
                    "status": "SUCCESS",
                    **{k: _text(v) for k, v in c.extra.get("perf_csv", {}).items()},
                }
            )
    return out


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def from_perf_rows(
    found: Sequence[tuple[int, Mapping[str, str]]],
    direction_of: Callable[[str], str],
    recorded_at: str,
    source: str,
    workload: str | None = None,
    tags: Sequence[str] = (),
    commit: str | None = None,
) -> tuple[list[Result], list[tuple[int, str]]]:
    """Results from madengine perf.csv rows, each with the line it starts on (one result each;
    the model is the workload), and the rows left out as (line, performance text): those
    without a finite performance value — madengine's FAILURE rows (empty), and `abc`, `nan`,
    `1e400` — so that one of them does not stop the import of the others."""
    results: list[Result] = []
    left_out: list[tuple[int, str]] = []
    for line, row in found:
        text = row.get("performance") or ""
        value = _finite(text)
        if value is None:
            left_out.append((line, text.strip()))
            continue
        metric = row.get("metric", "").strip() or "performance"
        results.append(
            Result(
                workload or row.get("model", "").strip() or "unnamed",
                "perf.csv",
                _perf_context(row, recorded_at, tags, commit),
                (Metric(metric, value, "", direction_of(metric)),),
                source,
            )
        )
    return results, left_out


def _finite(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _perf_context(
    row: Mapping[str, str], recorded_at: str, tags: Sequence[str], commit: str | None
) -> Context:
    row_tags = [t.strip() for t in (row.get("tags") or "").split(",") if t.strip()]
    gpus = (row.get("n_gpus") or "").strip()
    extra = {k: v for k, v in row.items() if k not in _CONTEXT_COLUMNS and v and v.strip()}
    return Context(
        recorded_at=recorded_at,
        commit=commit or (row.get("git_commit") or "").strip() or None,
        host=(row.get("machine_name") or "").strip() or None,
        gpu_model=(row.get("gpu_architecture") or "").strip() or None,
        gpu_count=int(gpus) if gpus.isdigit() else None,
        tags=tuple(dict.fromkeys([*row_tags, *tags])),
        extra={"perf_csv": extra},
    )


def from_report(
    report: Mapping[str, Any],
    path: Path,
    recorded_at: str | None = None,
    workload: str | None = None,
    tags: Sequence[str] = (),
    commit: str | None = None,
) -> Result:
    """A Result from a gpuscope JSON report (analysis, bench, libperf, counters, run manifest);
    recorded when the file was written unless said."""
    kind, found = metrics.of_report(report)
    when = recorded_at or report.get("started_at") or _mtime(path)
    context = Context(
        recorded_at=str(when),
        commit=commit or _report_commit(report),
        tags=tuple(tags),
        artefacts=str(path),
        gpuscope_version=report.get("gpuscope_version"),
    )
    name = workload or metrics.default_workload(report, path)
    return Result(name, kind, context, tuple(found), f"import {path}")


def _report_commit(report: Mapping[str, Any]) -> str | None:
    env = report.get("env")
    if isinstance(env, Mapping) and isinstance(env.get("git_sha"), str):
        return str(env["git_sha"])
    return None


def _mtime(path: Path) -> str:
    from datetime import datetime, timezone

    try:
        return now_iso(datetime.fromtimestamp(path.stat().st_mtime, timezone.utc))
    except OSError:
        return now_iso()
