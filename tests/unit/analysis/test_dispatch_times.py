"""A trace with dispatch times but no host timeline (rocprof v1's results.csv `DispatchNs`):
idle time before a dispatch that came after the GPU went idle is the host's lateness
(`host_late`), the rest of such a gap the dispatch reaching the device (`launch`), and a gap whose
next kernel was dispatched before it is `queued` — recounted from the CSV's own columns here."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import gpuscope

REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "formats"
MI250 = REFERENCE / "rocprof-v1" / "hpctraining-finite-difference-mi250" / "results.csv"
HEADER = (
    '"Index","KernelName","gpu-id","queue-id","queue-index","pid","tid","grd","wgr","lds","scr",'
    '"arch_vgpr","accum_vgpr","sgpr","wave_size","sig","obj","DispatchNs","BeginNs","EndNs",'
    '"CompleteNs","DurationNs"'
)


def recount(path: Path) -> dict[str, int]:
    """host_late / launch / queued ns over the span, from the CSV's own columns."""
    with path.open(newline="") as handle:
        rows = sorted(csv.DictReader(handle), key=lambda r: int(r["BeginNs"]))
    parts = {"host_late": 0, "launch": 0, "queued": 0}
    reach = int(rows[0]["EndNs"])
    for row in rows[1:]:
        begin, dispatch = int(row["BeginNs"]), int(row["DispatchNs"])
        if begin > reach:
            if dispatch < reach:
                parts["queued"] += begin - reach
            else:
                parts["host_late"] += min(dispatch, begin) - reach
                parts["launch"] += begin - min(dispatch, begin)
        reach = max(reach, int(row["EndNs"]))
    return parts


def part_ns(report: dict[str, object], part: str) -> int:
    return round(report["breakdown"]["time_us"][part] * 1000)  # type: ignore[index]


def test_the_mi250_dispatches_run_ahead_of_the_device() -> None:
    if not MI250.exists():
        pytest.skip(f"reference file {MI250.name} not found under {MI250.parent}")
    report = gpuscope.analyze(str(MI250)).to_dict()
    expected = recount(MI250)
    assert report["breakdown"]["host_data"] == "dispatch times"
    for part, ns in expected.items():
        assert abs(part_ns(report, part) - ns) <= 1_000, part
    assert report["verdict"]["bound"] == "gpu-bound"


def write_llama_like(path: Path) -> Path:
    """A llama.cpp-shaped run: 40 ms of loading and warm-up in which each kernel is dispatched
    long after the previous one ended, then 500 steady kernels dispatched ahead of the device."""
    lines = [HEADER]
    t, index = 1_000_000_000, 0

    def row(name: str, dispatch: int, begin: int, end: int) -> str:
        return (f'{index},"{name}",2,0,{index},7,7,256,256,0,0,32,0,16,32,"0x0","0x0",'
                f"{dispatch},{begin},{end},{end},{end - begin}")  # fmt: skip

    for _ in range(8):  # the start: the host dispatches 5 ms after each kernel ends
        lines.append(row("void mul_mat_q<(ggml_type)2, 128, false>(char const*) [clone .kd]",
                         t + 5_000_000, t + 5_004_000, t + 5_104_000))  # fmt: skip
        t += 5_104_000
        index += 1
    for _ in range(500):  # steady: dispatched while the previous kernel still runs
        lines.append(row("void mul_mat_q<(ggml_type)2, 128, false>(char const*) [clone .kd]",
                         t - 50_000, t + 1_000, t + 101_000))  # fmt: skip
        t += 101_000
        index += 1
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_late_start_before_steady_dispatch_is_the_start(tmp_path: Path) -> None:
    path = write_llama_like(tmp_path / "results.csv")
    report = gpuscope.analyze(str(path)).to_dict()
    expected = recount(path)
    for part, ns in expected.items():
        assert abs(part_ns(report, part) - ns) <= 1, part
    assert expected["host_late"] == 7 * 5_000_000  # the start's seven late dispatches
    verdict = report["verdict"]
    assert verdict["bound"] == "gpu-bound" and verdict["cause"] == "host_late"
    assert "the start (loading, warm-up)" in verdict["reason"]
    late = next(f for f in report["findings"] if f["id"] == "host-late")
    assert late["evidence"]["share_at_the_start"] == 1.0
    assert late["action"].startswith("Most of it is at the start: model loading and warm-up")
    assert "rocprof --hip-trace" in late["action"]
    heavy = next(f for f in report["findings"] if f["id"] == "gemm-heavy")
    assert "run Q4_0 now" in heavy["action"] and "Q4_K_M or Q8_0" in heavy["action"]
