"""Several analysis dicts → one comparison table (one row per trace) for the top of a report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuscope.analysis.layout._sections import anchor, trace_title
from gpuscope.document import units as fmt
from gpuscope.document.model import Cell, Section, Table

HEADERS = (
    "trace",
    "vendor",
    "kernels",
    "kernel time",
    "GPU busy",
    "util",
    "GEMM",
    "verdict",
    "findings",
    "flags",
)
NUMERIC = (False, False, True, True, True, True, True, False, True, True)
# left out first on a narrow terminal: integrity flags, vendor, GEMM share, kernels
OPTIONAL = (0, 3, 1, 0, 0, 0, 2, 0, 0, 4)


def comparison_section(
    reports: Sequence[Mapping[str, Any]], job: Mapping[str, Any] | None = None
) -> Section:
    """One row per trace: the compact view of many traces. With `job` (the cross-rank part of
    the ranks of one job), each rank's verdict is the job's reading of it — "waiting for rank 1"
    — not what its trace alone says."""
    verdicts = {str(r.get("path")): r["verdict"] for r in (job or {}).get("per_rank", [])}
    rows = tuple(_row(report, i, verdicts) for i, report in enumerate(reports, 1))
    table = Table(HEADERS, rows, NUMERIC, optional=OPTIONAL)
    return Section(f"All {len(reports)} traces", (table,), anchor="comparison")


def _row(
    report: Mapping[str, Any], index: int, verdicts: Mapping[str, Mapping[str, Any]]
) -> tuple[Cell, ...]:
    path = str(report["source"]["path"])
    return (
        Cell(trace_title(report, index), full=path, link=anchor(index), code=True),
        Cell(str(report["source"]["vendor"])),
        Cell(fmt.count(report["kernels"]["count"])),
        Cell(fmt.duration(report["kernels"]["time_us"])),
        Cell(fmt.duration(report["gpu_busy_us"])),
        Cell(fmt.percent(report["utilization"])),
        Cell(fmt.percent(report["gemm_share"])),
        Cell(_verdict(report, verdicts)),
        Cell(_findings(report["findings"])),
        Cell(fmt.count(len(report["integrity"]))),
    )


def _findings(findings: Sequence[Mapping[str, Any]]) -> str:
    warnings = sum(1 for f in findings if f.get("severity") in ("warning", "critical"))
    return f"{len(findings)} ({warnings} ⚠)" if warnings else str(len(findings))


def _verdict(report: Mapping[str, Any], verdicts: Mapping[str, Mapping[str, Any]]) -> str:
    job = verdicts.get(str(report["source"]["path"]))
    if job is None:
        return str(report["verdict"]["bound"])
    if job.get("waiting_for") is not None:
        return f"waiting for rank {job['waiting_for']}"
    return str(job["bound"])
