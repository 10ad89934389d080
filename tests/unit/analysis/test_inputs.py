"""Sources that lack an analysis's inputs: the analysis is skipped with a flag saying why, its
numbers are null (never zero), and every view renders the report."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gpuscope.analysis.pipeline import analyze
from gpuscope.trace._builder import TraceParts, trace_meta
from gpuscope.trace.model import API, DTOH, HTOD, KERNEL, MEMCPY, MEMSET, RUNTIME, Device, Trace
from tests.views import render_html, render_markdown, render_terminal

GEMM = "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32"
NORM = "void layer_norm_kernel<float>(float*)"


def stats_only() -> Trace:
    """What a rocprof v1 `results.stats.csv` + `copy_stats.csv` give: per-name totals."""
    parts = TraceParts()
    names = parts.intern([GEMM, NORM, "CopyHostToDevice", "FillBuffer", "hipMemcpy"])
    parts.add(
        "totals",
        kind=[KERNEL, KERNEL, MEMCPY, MEMSET, API],
        name=names,
        count=[1001, 3, 2, 4, 5],
        total_ns=[2_608_618_986, 3_000, 180_717_650, 9_000, 1_342_822_760],
        min_ns=[-1, -1, -1, -1, -1],
        max_ns=[-1, -1, -1, -1, -1],
    )
    meta = trace_meta("results.stats.csv", "rocprof", vendor="amd", provides=frozenset({"totals"}))
    return parts.build(meta)


def counters_only() -> Trace:
    """A counter CSV without timestamps: dispatches with counters, no durations."""
    parts = TraceParts()
    parts.add("gpu", kind=[KERNEL] * 3, name=parts.intern([GEMM, GEMM, NORM]), device=[4, 4, 4])
    parts.add("counters", row=[0, 1, 2], name=parts.intern(["SQ_WAVES"] * 3), value=[64.0] * 3)
    device = Device(4, "AMD Instinct MI300A", arch="gfx942", compute_units=228)
    provides = frozenset({"counters", "launch_params", "devices"})
    meta = trace_meta("pmc.csv", "rocprof", vendor="amd", devices=(device,), provides=provides)
    return parts.build(meta)


def kernels_without_host() -> Trace:
    """A rocprofv3 kernel_trace.csv alone: timed kernels and copies, no API calls."""
    parts = TraceParts()
    names = parts.intern([GEMM, NORM, GEMM, "copy", "copy"])
    parts.add(
        "gpu",
        kind=[KERNEL, KERNEL, KERNEL, MEMCPY, MEMCPY],
        name=names,
        start=[1_000, 3_000, 4_000, 10_000, 12_000],
        dur=[1_500, 500, 1_500, 1_000, 500],
        device=[0] * 5,
        stream=[1] * 5,
        copy=[-1, -1, -1, HTOD, DTOH],
        bytes=[-1, -1, -1, 4096, 4096],
    )
    parts.add("host", name=parts.intern(["hipMemcpy"]), start=[0], dur=[10], domain=[RUNTIME])
    provides = frozenset({"kernels", "timestamps", "copies"})
    return parts.build(trace_meta("1_kernel_trace.csv", "rocprofv3", provides=provides))


def _views(report: dict[str, Any]) -> None:
    text = render_terminal([report], 80)
    assert "None" not in text and "nan" not in text
    markdown = render_markdown([report])
    assert "None" not in markdown
    html = render_html([report])
    assert "None" not in html


def test_totals_only_reports_calls_and_time_but_no_timeline() -> None:
    report = analyze(stats_only()).to_dict()
    assert report["kernels"]["count"] == 1004
    assert report["kernels"]["time_us"] == pytest.approx((2_608_618_986 + 3_000) / 1000)
    assert report["kernels"]["median_us"] is None and report["kernels"]["short"] is None
    assert report["top_kernels"][0]["name"] == GEMM
    assert report["categories"]["gemm"]["count"] == 1001
    assert report["memcpy"]["by_kind"]["HtoD"]["count"] == 2
    assert report["memset"]["count"] == 4
    for key in ("gpu_busy_us", "span_us", "idle_us", "utilization", "gaps", "launch", "sync"):
        assert report[key] is None, key
    assert report["verdict"]["bound"] == "unknown"
    flags = {f["id"]: f["message"] for f in report["integrity"]}
    assert "no timestamps" in flags["no-timeline"] and "results.stats.csv" in flags["no-timeline"]
    assert "totals-only" in flags
    _views(report)


def test_counter_only_dispatches_have_counts_but_no_times() -> None:
    report = analyze(counters_only()).to_dict()
    assert report["kernels"]["count"] == 3
    assert report["kernels"]["time_us"] is None
    assert report["gemm_share"] is None
    assert report["top_kernels"][0] == {
        "name": GEMM,
        "category": "gemm",
        "count": 2,
        "total_us": None,
        "mean_us": None,
        "min_us": None,
        "max_us": None,
        "share": None,
    }
    assert report["source"]["devices"] == [
        {"id": 4, "name": "AMD Instinct MI300A", "arch": "gfx942", "compute_units": 228}
    ]
    assert "no-durations" in {f["id"] for f in report["integrity"]}
    _views(report)


def test_timed_kernels_without_host_api_keep_the_timeline() -> None:
    report = analyze(kernels_without_host()).to_dict()
    assert report["gpu_busy_us"] == pytest.approx(5.0)  # [1,2.5] [3,3.5] [4,5.5] [10,11] [12,12.5]
    assert report["span_us"] == pytest.approx(11.5)
    assert report["launch"] is None and report["sync"] is None and report["cpu"] is None
    flags = {f["id"] for f in report["integrity"]}
    assert {"no-launch", "no-sync", "no-cpu"} <= flags
    assert "no-timeline" not in flags
    assert report["verdict"]["bound"] != "unknown"
    _views(report)


def test_flags_name_the_source_files() -> None:
    trace = stats_only()
    message = next(f for f in analyze(trace).to_dict()["integrity"] if f["id"] == "no-timeline")
    assert message["message"].startswith("this rocprof input (results.stats.csv) has no timestamps")
    assert np.all(trace.totals.count > 0)
