"""Several analysis dicts → one comparison table (one row per trace) for the top of a report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuscope.report import _format as fmt
from gpuscope.report._document import Cell, Section, Table
from gpuscope.report._sections import anchor, trace_title

HEADERS = (
    "trace",
    "vendor",
    "kernels",
    "kernel time",
    "GPU busy",
    "utilization",
    "GEMM share",
    "verdict",
    "findings",
    "integrity flags",
)
NUMERIC = (False, False, True, True, True, True, True, False, True, True)


def comparison_section(reports: Sequence[Mapping[str, Any]]) -> Section:
    rows = tuple(_row(report, i) for i, report in enumerate(reports, 1))
    return Section("Comparison", (Table(HEADERS, rows, NUMERIC),), anchor="comparison")


def _row(report: Mapping[str, Any], index: int) -> tuple[Cell, ...]:
    path = str(report["source"]["path"])
    return (
        Cell(trace_title(report, index), full=path, link=anchor(index)),
        Cell(str(report["source"]["vendor"])),
        Cell(fmt.count(report["kernels"]["count"])),
        Cell(fmt.duration(report["kernels"]["time_us"])),
        Cell(fmt.duration(report["gpu_busy_us"])),
        Cell(fmt.percent(report["utilization"])),
        Cell(fmt.percent(report["gemm_share"])),
        Cell(str(report["verdict"]["bound"])),
        Cell(_findings(report["findings"])),
        Cell(fmt.count(len(report["integrity"]))),
    )


def _findings(findings: Sequence[Mapping[str, Any]]) -> str:
    warnings = sum(1 for f in findings if f.get("severity") in ("warning", "error"))
    if not warnings:
        return str(len(findings))
    return f"{len(findings)} ({warnings} warning{'' if warnings == 1 else 's'})"
