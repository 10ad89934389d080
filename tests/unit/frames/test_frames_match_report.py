"""The DataFrames agree with the JSON report (issue 21.1): for every input gpuscope reads here
(the bundled traces, and every reference output when ../shared is there), one row per kernel
whose durations sum to the report's kernel time, per category, per name; copies and memsets
likewise; the report's own tables (`tables()`) hold the report's numbers; the three backends
agree."""

from __future__ import annotations

import math
from typing import Any

import pytest

from gpuscope.analysis.categories import load_rules
from gpuscope.analysis.pipeline import analyze
from gpuscope.errors import GpuscopeError
from gpuscope.frames.results import AnalysisResult
from gpuscope.trace.registry import read_source
from tests.unit.report.test_every_report_encodes import REFERENCE, sources

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def us(ns: Any) -> float:
    return round(float(ns) / 1000.0, 3)


def close(a: float | None, b: float | None, rows: int = 1) -> bool:
    """Equal to the report's rounding: each µs value is rounded to 3 decimals."""
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, abs_tol=0.0006 * max(rows, 1), rel_tol=1e-9)


def problems(result: AnalysisResult) -> list[str]:
    report = result.to_dict()
    found: list[str] = []
    k = result.trace.kernels()
    kernels = report["kernels"]
    if len(k) and kernels["count"] != len(k):
        found.append(f"kernels: {len(k)} rows, report counts {kernels['count']}")
    timed = bool(len(k)) and bool(k["duration_ns"].notna().all())
    if timed and us(k["duration_ns"].sum()) != kernels["time_us"]:
        found.append(f"kernel time {us(k['duration_ns'].sum())} ≠ {kernels['time_us']}")
    if timed:
        by_category = k.groupby("category").duration_ns.sum()
        for name, entry in report["categories"].items():
            if name in ("memcpy", "memset"):
                continue
            got = us(by_category.get(name, 0))
            if entry["time_us"] is not None and got != entry["time_us"]:
                found.append(f"category {name}: {got} ≠ {entry['time_us']}")
    by_name = result.tables()["kernels_by_name"]
    if kernels["time_us"] is not None and len(by_name):
        total = float(by_name["total_us"].sum())
        if not close(total, kernels["time_us"], len(by_name)):
            found.append(f"kernels_by_name sums to {total} ≠ {kernels['time_us']}")
        if by_name["count"].sum() != kernels["count"]:
            found.append("kernels_by_name counts")
    top = result.tables()["top_kernels"]
    if len(top) and list(top["name"]) != [t["name"] for t in report["top_kernels"]]:
        found.append("top_kernels names differ from the report")
    found += copy_problems(result, report)
    return found


def copy_problems(result: AnalysisResult, report: dict[str, Any]) -> list[str]:
    c = result.trace.copies()
    memcpy = c[c["kind"] != "memset"]
    memset = c[c["kind"] == "memset"]
    found = []
    if not len(result.analysis.trace.totals) or len(memcpy):
        if len(memcpy) != report["memcpy"]["count"]:
            found.append(f"memcpy: {len(memcpy)} rows ≠ {report['memcpy']['count']}")
        elif memcpy["duration_ns"].notna().all() and (
            us(memcpy["duration_ns"].clip(lower=0).sum()) != report["memcpy"]["time_us"]
        ):
            found.append("memcpy time")
    if len(memset) and len(memset) != report["memset"]["count"]:
        found.append(f"memset: {len(memset)} rows ≠ {report['memset']['count']}")
    return found


def analysed() -> Any:
    for key, source in sources().items():
        try:
            yield " + ".join(key[1]), AnalysisResult(analyze(read_source(source), load_rules()))
        except GpuscopeError:
            continue


def test_every_input_frames_sum_to_its_report() -> None:
    failed, checked = [], 0
    for name, result in analysed():
        checked += 1
        failed += [f"{name}: {p}" for p in problems(result)]
    assert not failed, f"{len(failed)} problems:\n" + "\n".join(failed[:40])
    assert checked >= (60 if REFERENCE.is_dir() else 3)
