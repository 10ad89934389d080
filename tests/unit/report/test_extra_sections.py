"""The extra analyses (steps, host operators, cold start, efficiency, conversions, patterns) reach
every view: their key in the JSON report, their section in Markdown, HTML and the terminal, with
numbers taken from the dict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import gpuscope
from gpuscope.document import units as fmt
from tests.unit.analysis.conftest import TraceBuilder
from tests.unit.report.reports import recorded
from tests.views import render_html, render_markdown, render_terminal

SECTIONS = {
    "host_ops": "Host operators",
    "cold_start": "Cold start and profiler overhead",
    "efficiency": "GEMM / attention / convolution efficiency",
    "conversions": "dtype conversions and copies",
    "patterns": "Known slow patterns",
}


def views(report: dict[str, Any]) -> dict[str, str]:
    return {
        "markdown": render_markdown([report]),
        "html": render_html([report]),
        "terminal": render_terminal([report], 160),
    }


def sample(report: dict[str, Any], key: str) -> list[str]:
    """Texts each view must show for the part `key`, formatted from the dict."""
    part = report[key]
    if key == "host_ops":
        return [fmt.duration(part["op_self_us"]), part["by_self"][0]["name"]]
    if key == "cold_start":
        return [fmt.duration(part["profiler_overhead"]["estimate_us"])]
    if key == "efficiency":
        group = part["groups"][0]
        return [f"{group['tflops']:,.1f}", group["shape"]]
    if key == "conversions":
        row = part["rows"][0]
        return [fmt.duration(row["time_us"]), row["op"].replace("aten::", "")]
    return [p["id"] for p in part["found"]] + [fmt.percent(part["found"][0]["share"])]


def test_extras_render_in_every_view() -> None:
    """patterns_h200: manual attention, an fp16→fp32 conversion, FP32 GEMMs, host round trips."""
    report = recorded("patterns_h200.json.gz")
    shown = views(report)
    for key, title in SECTIONS.items():
        assert report[key] is not None, key
        for name, text in shown.items():
            assert title in text, f"{title} missing from {name}"
            for value in sample(report, key):
                assert value in text, f"{key}: {value!r} missing from {name}"


def test_steps_section_renders(tmp_path: Path) -> None:
    builder = TraceBuilder()
    t = 0.0
    for i, wall in enumerate([1000.0, 1200.0, 1000.0]):
        builder.annotation(f"ProfilerStep#{i}", t, wall)
        ext = builder.op("aten::mm", t + 10, 50)
        builder.launch("gemm_kernel", at=t + 20, start=t + 100, dur=300, ext=ext)
        t += wall
    report = gpuscope.analyze(builder.write(tmp_path / "steps.json", span=(0.0, t))).to_dict()
    part = report["steps"]
    assert part is not None and part["count"] == 3
    for name, text in views(report).items():
        assert "Steps and phases" in text, name
        for row in part["steps"]:
            assert row["name"] in text and fmt.duration(row["wall_us"]) in text, name


@pytest.mark.parametrize("key", sorted(SECTIONS))
def test_a_trace_without_the_inputs_has_no_section(key: str) -> None:
    report = recorded("llama_compiled_h200.json.gz")
    if report[key] is not None:
        pytest.skip(f"{key} has inputs in this trace")
    for name, text in views(report).items():
        assert SECTIONS[key] not in text, name
