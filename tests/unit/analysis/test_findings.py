"""Findings fire on the evidence they name — and stay quiet without it."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuscope
from tests.unit.analysis.conftest import TraceBuilder

DATA = Path(__file__).parents[2] / "data"


def by_id(result: dict[str, object]) -> dict[str, dict[str, object]]:
    return {f["id"]: f for f in result["findings"]}  # type: ignore[attr-defined,index]


def test_patterns_trace_names_its_problems() -> None:
    result = gpuscope.analyze(str(DATA / "patterns_h200.json.gz")).to_dict()
    found = by_id(result)
    attention = found["manual-attention"]["evidence"]["ops"]  # type: ignore[index]
    assert attention["aten::bmm"]["gpu_kernels"] == 4
    assert attention["aten::_softmax"]["gpu_time_us"] > 0
    copies = found["host-device-copies"]["evidence"]  # type: ignore[index]
    assert set(copies["by_kind"]) == {"HtoD", "DtoH"}
    assert "aten::_local_scalar_dense" in copies["launched_by"]  # .item()
    assert found["host-device-copies"]["severity"] == "warning"  # 74 % of the span
    sites = found["sync-overhead"]["evidence"]["sync_sites"]  # type: ignore[index]
    assert "aten::item" in [s["op"] for s in sites]
    for finding in result["findings"]:  # type: ignore[attr-defined]
        assert set(finding) == {
            "id", "severity", "message", "action", "evidence", "impact_us", "cause"
        }  # fmt: skip


def test_compiled_trace_is_not_told_to_use_graphs() -> None:
    result = gpuscope.analyze(str(DATA / "llama_compiled_h200.json.gz")).to_dict()
    assert "Capture the step" not in str(by_id(result).get("launch-overhead", {}).get("action"))
    assert result["launch"]["graph_kernels"] > 100


def test_small_kernels_fire_when_launch_bound(builder: TraceBuilder, tmp_path: Path) -> None:
    for i in range(150):
        builder.launch(f"tiny{i % 3}", at=20.0 * i, start=20.0 * i + 8, dur=2.0)
    found = by_id(builder.analyze(tmp_path / "t.json").to_dict())
    launch = found["launch-overhead"]
    assert launch["evidence"]["short_kernel_share"] == 1.0  # type: ignore[index]
    # the GPU idles 90 % waiting for launches: the 18 µs between one kernel's end and the next
    assert launch["evidence"]["time_us"] == 149 * 18.0  # type: ignore[index]
    assert "graphs" in str(launch["action"])


def test_gemm_share_and_parent_op_fallback(builder: TraceBuilder, tmp_path: Path) -> None:
    ext = builder.op("aten::mm", 0.0, 50.0)
    builder.launch("my_custom_kernel_xyz", at=1.0, start=5.0, dur=80.0, ext=ext)
    builder.launch("vectorized_elementwise_kernel", at=2.0, start=90.0, dur=20.0)
    result = builder.analyze(tmp_path / "t.json").to_dict()
    assert result["top_kernels"][0]["category"] == "gemm"  # via its CPU op
    assert result["gemm_share"] == pytest.approx(0.8)
    # GEMM-dominated is no fault in itself: without shapes to judge them, it is information
    assert by_id(result)["gemm-heavy"]["severity"] == "info"


def test_user_rules_come_first(builder: TraceBuilder, tmp_path: Path) -> None:
    builder.launch("my_custom_kernel_xyz", at=1.0, start=5.0, dur=8.0)
    rules = tmp_path / "rules.json"
    rules.write_text('{"kernel_rules": [{"category": "attention", "pattern": "custom_kernel"}]}')
    path = builder.write(tmp_path / "t.json")
    result = gpuscope.analyze(path, categories=str(rules)).to_dict()
    assert result["categories"]["attention"]["count"] == 1


def test_cpu_only_trace(builder: TraceBuilder, tmp_path: Path) -> None:
    builder.op("aten::add", 0.0, 10.0)
    result = builder.analyze(tmp_path / "t.json").to_dict()
    assert result["kernels"]["count"] == 0
    assert result["verdict"]["bound"] == "no-gpu-activity"
    assert "no-gpu-events" in [f["id"] for f in result["integrity"]]
    assert result["findings"] == []


def test_cpu_only_steps_are_not_a_gpu_waiting(builder: TraceBuilder, tmp_path: Path) -> None:
    """A CPU-only run with steps and long stretches outside operators (the HTA gloo rank): no
    device waited for anything, so no breakdown and no cause is said."""
    for i in range(3):
        builder.annotation(f"ProfilerStep#{i}", i * 1000.0, 1000.0)
        builder.op("aten::add", i * 1000.0 + 1, 10.0)
    result = builder.analyze(tmp_path / "t.json").to_dict()
    assert result["verdict"]["bound"] == "no-gpu-activity"
    assert result["findings"] == [] and not result.get("step_breakdown")


def test_steps_count_kernels_launched_inside(builder: TraceBuilder, tmp_path: Path) -> None:
    builder.annotation("ProfilerStep#1", 0.0, 100.0)
    builder.annotation("ProfilerStep#2", 100.0, 100.0)
    for i in range(3):
        builder.launch("a", at=10.0 + i, start=50.0 + 5 * i, dur=1.0)
    builder.launch("b", at=150.0, start=160.0, dur=1.0)
    launch = builder.analyze(tmp_path / "t.json").to_dict()["launch"]
    assert launch["steps"] == 2
    assert launch["kernels_per_step"]["values"] == [3, 1]
