"""The launch-configuration advice on a CUDA C++ program built and profiled here (issue 20.5):
`tests/gpu/record/tiny_grid.cu` launches one saxpy on 1 block of 256 threads and on SMs × 8
blocks, under ncu (details and raw pages) and, where nsys is installed, under nsys.

Expected numbers come from ncu's own CSV read here with the csv module: two rows (never merged),
the 1-block launch a `small-grid` warning with (duration − FIXED_NS) × (SMs − 1) / SMs at stake,
ncu's SOLBottleneck rule beside gpuscope's label (agreeing), DRAM throughput shown, and the
bandwidth fraction = DRAM bytes / time / the roof the report says it used.
Skipped without nvcc, ncu or an NVIDIA GPU.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuscope.analysis.grid import FIXED_NS

SOURCE = Path(__file__).resolve().parent / "record" / "tiny_grid.cu"
METRICS = ("gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,"
           "dram__bytes.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,"
           "sm__throughput.avg.pct_of_peak_sustained_elapsed")  # fmt: skip


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _gpuscope(*args: str | Path) -> dict[str, Any]:
    out = Path(str(args[-1]))
    argv = [sys.executable, "-m", "gpuscope", *map(str, args[:-1]), "--json", str(out), "-q"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.read_text())
    return result


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("nvcc") is None or shutil.which("nvidia-smi") is None:
        pytest.skip("needs nvcc and an NVIDIA GPU")
    folder = tmp_path_factory.mktemp("tiny_grid")
    binary = folder / "tiny_grid"
    subprocess.run(["nvcc", "-O2", "-o", str(binary), str(SOURCE)], check=True, timeout=300)
    return binary


@pytest.fixture(scope="module")
def ncu_pages(program: Path) -> tuple[Path, Path]:
    if shutil.which("ncu") is None:
        pytest.skip("ncu not on PATH")
    details, raw = program.parent / "ncu_details.csv", program.parent / "ncu_raw.csv"
    base = ["ncu", "--csv", "--clock-control", "none", "--metrics", METRICS]
    with details.open("w") as out:
        subprocess.run([*base, "--section", "LaunchStats", "--section", "SpeedOfLight",
                        "--section", "Occupancy", str(program)], stdout=out, check=True,
                       timeout=300)  # fmt: skip
    with raw.open("w") as out:
        subprocess.run([*base, "--page", "raw", str(program)], stdout=out, check=True, timeout=300)
    return details, raw


def _raw_rows(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    table = list(csv.reader(lines))
    return [dict(zip(table[0], row, strict=True)) for row in table[2:]]


def _rules(path: Path) -> dict[str, list[str]]:
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    found: dict[str, list[str]] = {}
    for row in csv.DictReader(lines):
        if row["Rule Name"]:
            found.setdefault(row["Grid Size"], []).append(row["Rule Name"])
    return found


@pytest.mark.gpu
def test_ncu_counters_by_launch_configuration(ncu_pages: tuple[Path, Path]) -> None:
    details, raw = ncu_pages
    rows = _raw_rows(raw)
    assert len(rows) == 2
    sms = int(_number(rows[0]["device__attribute_multiprocessor_count"]))
    report = _gpuscope("counters", raw, details, details.parent / "counters.json")
    by_grid = {k["grid"][0]: k for k in report["kernels"]}
    assert sorted(by_grid) == [1, sms * 8]
    total = sum(_number(r["gpu__time_duration.sum"]) for r in rows)
    tiny_row = next(r for r in rows if _number(r["launch__grid_size"]) == 1)
    ns = _number(tiny_row["gpu__time_duration.sum"])
    (found,) = [f for f in report["findings"] if f["id"] == "small-grid"]
    stake = (ns - FIXED_NS) * (sms - 1) / sms
    assert found["severity"] == "warning" and found["impact_us"] == pytest.approx(stake / 1000)
    assert found["evidence"]["share"] == pytest.approx(ns / total, abs=1e-6)
    rules = _rules(details)
    for grid, k in by_grid.items():
        assert [r["rule"] for r in k["ncu"]["rules"]] == rules[f"({grid}, 1, 1)"]
        assert k["ncu"]["agrees"], k["ncu"]["explanation"]
        row = next(r for r in rows if _number(r["launch__grid_size"]) == grid)
        pct = _number(row["dram__throughput.avg.pct_of_peak_sustained_elapsed"])
        point = k["roofline"]
        assert point["ncu"]["dram_throughput_pct_of_peak_sustained"] == pytest.approx(pct)
        roof = report["ceilings"]["bandwidth_gbs"] * 1e9
        achieved = _number(row["dram__bytes.sum"]) / (_number(row["gpu__time_duration.sum"]) * 1e-9)
        assert point["bandwidth_fraction"] == pytest.approx(achieved / roof, rel=0.02)
    assert by_grid[1]["label"]["label"] == "small grid"


@pytest.mark.gpu
def test_ncu_details_page_under_analyze(ncu_pages: tuple[Path, Path]) -> None:
    details, _ = ncu_pages
    report = _gpuscope("analyze", details, details.parent / "analysis.json")
    small = [f for f in report["findings"] if f["id"] == "small-grid"]
    assert len(small) == 1 and small[0]["severity"] == "warning"
    assert small[0]["evidence"]["grid"] == [1, 1, 1]
    assert "grid-stride" in small[0]["action"]
    assert report["launch_config"]["configs"] == 2


@pytest.mark.gpu
def test_nsys_export_of_the_same_program(program: Path) -> None:
    if shutil.which("nsys") is None:
        pytest.skip("nsys not on PATH")
    base = program.parent / "tiny_grid_nsys"
    argv = ["nsys", "profile", "--force-overwrite", "true", "--export", "sqlite", "-o", str(base)]
    subprocess.run([*argv, str(program)], check=True, capture_output=True, timeout=300)
    report = _gpuscope("analyze", f"{base}.sqlite", program.parent / "nsys.json")
    groups = {g["grid"][0]: g for g in report["launch_config"]["groups"]}
    sms = report["launch_config"]["devices"][0]["units"]
    assert sorted(groups) == [1, sms * 8]
    small = [f for f in report["findings"] if f["id"] == "small-grid"]
    assert [f["evidence"]["grid"] for f in small] == [[1, 1, 1]]
    assert small[0]["severity"] == "warning"
