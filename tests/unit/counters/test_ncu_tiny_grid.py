"""`gpuscope counters` and `analyze` on the CUDA C++ tiny-grid program recorded under ncu on an
H200 (`tests/data/recorded/ncu_tiny_grid_h200_{details,raw}.csv`, `tests/gpu/record/tiny_grid.cu`):
one saxpy launched on 1 block of 256 threads (~99.8 % of the profiled time) and on 1,056 blocks.

Every expected number is read here from the CSV with the csv module — ncu's own cells, its
thousands separators removed — and the rule's arithmetic redone by hand (issue 20.5): the two
launches stay two rows, the 1-block one is a warning with the time at stake, ncu's rule rows sit
beside gpuscope's label, the collected DRAM throughput is shown, and the roofline's fractions
are achieved ÷ the roof in use.
"""

from __future__ import annotations

import csv
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import gpuscope
from gpuscope.analysis.grid import FIXED_NS, WARNING_SHARE
from gpuscope.counters.analysis import CounterAnalysis
from gpuscope.counters.pipeline import analyse_counters
from gpuscope.counters.views import counters_document
from gpuscope.report import markdown
from gpuscope.trace.registry import read_trace

RECORDED = Path(__file__).resolve().parents[2] / "data" / "recorded"
DETAILS = RECORDED / "ncu_tiny_grid_h200_details.csv"
RAW = RECORDED / "ncu_tiny_grid_h200_raw.csv"
REL = 1e-9
LIMITS = ("Block Limit Registers", "Block Limit Shared Mem", "Block Limit Warps", "Block Limit SM")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _details() -> dict[str, dict[str, Any]]:
    """Per ncu ID: grid, block, name, metrics {name: value text}, rule rows."""
    lines = [line for line in DETAILS.read_text().splitlines() if line.startswith('"')]
    launches: dict[str, dict[str, Any]] = {}
    for row in csv.DictReader(lines):
        launch = launches.setdefault(
            row["ID"],
            {"name": row["Kernel Name"], "grid": row["Grid Size"], "block": row["Block Size"],
             "metrics": {}, "rules": []},
        )  # fmt: skip
        if row["Metric Name"]:
            launch["metrics"].setdefault(row["Metric Name"], row["Metric Value"])
        elif row["Rule Name"]:
            launch["rules"].append(row)
    return launches


def _raw() -> list[dict[str, str]]:
    lines = [line for line in RAW.read_text().splitlines() if line.startswith('"')]
    table = list(csv.reader(lines))
    return [dict(zip(table[0], row, strict=True)) for row in table[2:]]


def _dims(text: str) -> list[int]:
    return [int(v) for v in text.strip("()").split(",")]


def _report(path: Path, **options: Any) -> CounterAnalysis:
    return analyse_counters([read_trace(str(path))], **options)


def _by_grid(report: CounterAnalysis) -> dict[int, dict[str, Any]]:
    return {k["grid"][0]: k for k in report.to_dict()["kernels"]}


def _datasheet_bandwidth(name: str) -> float:
    text = resources.files("gpuscope").joinpath("data/peaks.json").read_text("utf-8")
    entry = next(d for d in json.loads(text)["devices"] if name in d["names"])
    return float(entry["bandwidth_gbs"]) * 1e9


def test_one_row_per_launch_configuration() -> None:
    launches = _details()
    report = _report(DETAILS)
    kernels = report.to_dict()["kernels"]
    assert len(kernels) == len(launches) == 2
    total = sum(_number(x["metrics"]["Duration"]) for x in launches.values())
    for launch in launches.values():
        got = _by_grid(report)[_dims(launch["grid"])[0]]
        ns = _number(launch["metrics"]["Duration"])
        assert got["name"] == launch["name"]
        assert got["grid"] == _dims(launch["grid"]) and got["block"] == _dims(launch["block"])
        assert got["dispatches"] == 1
        assert got["time_us"] == pytest.approx(ns / 1000, rel=REL)
        assert got["share"] == pytest.approx(ns / total, rel=REL)
    assert sorted(k["grid"][0] for k in kernels) == [1, 1056]


def test_the_one_block_launch_is_a_warning_with_its_time_at_stake() -> None:
    launches = _details()
    (tiny,) = [x for x in launches.values() if _dims(x["grid"])[0] == 1]
    sms = int(_number(tiny["metrics"]["# SMs"]))
    resident = min(int(_number(tiny["metrics"][name])) for name in LIMITS)
    total = sum(_number(x["metrics"]["Duration"]) for x in launches.values())
    ns = _number(tiny["metrics"]["Duration"])
    stake = (ns - FIXED_NS) * (sms - 1) / sms
    assert stake / total >= WARNING_SHARE

    report = _report(DETAILS)
    (found,) = [f for f in report.findings if f["id"] == "small-grid"]
    assert (found["severity"], found["cause"]) == ("warning", "launch-config")
    assert found["impact_us"] == round(stake / 1000, 3)
    evidence = found["evidence"]
    assert (evidence["grid"], evidence["block"], evidence["blocks"]) == ([1, 1, 1], [256, 1, 1], 1)
    assert (evidence["units"], evidence["unit"], evidence["idle_units"]) == (sms, "SM", sms - 1)
    assert evidence["resident_per_unit"] == resident == 8
    assert evidence["waves"] == pytest.approx(1 / (sms * resident), abs=1e-6)
    assert evidence["share"] == pytest.approx(ns / total, abs=1e-6)
    assert "1 block (256 threads each) on a GPU of 132 SMs" in found["message"]
    assert "grid-stride loop" in found["action"]
    assert "cudaOccupancyMaxActiveBlocksPerMultiprocessor" in found["action"]
    assert "torch" not in found["action"] and ".item()" not in found["action"]
    # the full grid fills every SM: no finding, and its roof rules are judged
    assert _by_grid(report)[1056]["fill"]["small"] is False


def test_ncu_rule_rows_beside_gpuscope_label() -> None:
    launches = _details()
    report = _report(DETAILS)
    for launch in launches.values():
        got = _by_grid(report)[_dims(launch["grid"])[0]]
        ncu = got["ncu"]
        want = [(r["Section Name"], r["Rule Name"], r["Rule Type"], r["Rule Description"])
                for r in launch["rules"]]  # fmt: skip
        assert [
            (r["section"], r["rule"], r["type"], r["description"]) for r in ncu["rules"]
        ] == want
        for rule, row in zip(ncu["rules"], launch["rules"], strict=True):
            if row["Estimated Speedup"]:
                assert rule["speedup"] == _number(row["Estimated Speedup"])
                assert rule["speedup_type"] == row["Estimated Speedup Type"]
        (sol,) = [r for r in launch["rules"] if r["Rule Name"] == "SOLBottleneck"]
        assert ncu["says"] == sol["Rule Description"].split(": ")[0].split(". ")[0]
        assert ncu["agrees"] is True
    tiny, full = _by_grid(report)[1], _by_grid(report)[1056]
    assert tiny["label"]["label"] == tiny["ncu"]["bottleneck"] == "small grid"
    assert full["label"]["label"] == full["ncu"]["bottleneck"] == "memory-bound"


def test_dram_throughput_shown_from_either_page() -> None:
    details = _details()
    for launch in details.values():
        got = _by_grid(_report(DETAILS))[_dims(launch["grid"])[0]]
        metric = launch["metrics"]["dram__throughput.avg.pct_of_peak_sustained_elapsed"]
        sol = got["roofline"]["ncu"]
        assert sol["dram_throughput_pct_of_peak_sustained"] == pytest.approx(_number(metric))
        assert sol["sm_throughput_pct_of_peak_sustained"] == pytest.approx(
            _number(launch["metrics"]["Compute (SM) Throughput"])
        )
    raw_report = _report(RAW)
    for row in _raw():
        got = _by_grid(raw_report)[_dims(row["Grid Size"])[0]]
        want = _number(row["dram__throughput.avg.pct_of_peak_sustained_elapsed"])
        assert got["roofline"]["ncu"]["dram_throughput_pct_of_peak_sustained"] == pytest.approx(
            want
        )
    text = markdown.render(counters_document(raw_report.to_dict()))
    for row in _raw():
        pct = _number(row["dram__throughput.avg.pct_of_peak_sustained_elapsed"])
        assert f"{pct:.3g}% of peak" in text


def test_fractions_are_achieved_over_the_roof_in_use() -> None:
    """Raw page (names the H200): bandwidth_fraction = dram__bytes / time / the datasheet roof —
    never ncu's % of peak sustained, which stays under its own name."""
    report = _report(RAW)
    assert report.to_dict()["ceilings"]["kind"] == "datasheet"
    roof = _datasheet_bandwidth("NVIDIA H200")
    for row in _raw():
        got = _by_grid(report)[_dims(row["Grid Size"])[0]]
        achieved = _number(row["dram__bytes.sum"]) / (_number(row["gpu__time_duration.sum"]) * 1e-9)
        point = got["roofline"]
        assert point["bandwidth"] == pytest.approx(achieved, rel=REL)
        assert point["bandwidth_ceiling"] == roof
        assert point["bandwidth_fraction"] == pytest.approx(achieved / roof, rel=REL)
        assert point["bound"] == "memory" and point["fraction"] == point["bandwidth_fraction"]
        assert point["compute_fraction"] is None  # no FLOP counters: no compute fraction at all
        pct = _number(row["dram__throughput.avg.pct_of_peak_sustained_elapsed"])
        assert point["ncu"]["dram_throughput_pct_of_peak_sustained"] == pytest.approx(pct)


def test_the_details_page_alone_names_no_roof() -> None:
    """No device name on the details page: no roof, so no fraction — not ncu's % instead."""
    report = _report(DETAILS)
    assert report.to_dict()["ceilings"] is None
    for k in report.to_dict()["kernels"]:
        assert k["roofline"]["fraction"] is None and k["roofline"]["bandwidth_fraction"] is None
    named = _report(DETAILS, device_name="NVIDIA H200")
    full = _by_grid(named)[1056]
    launch = next(x for x in _details().values() if _dims(x["grid"])[0] == 1056)
    achieved = _number(launch["metrics"]["dram__bytes.sum"]) / (
        _number(launch["metrics"]["Duration"]) * 1e-9
    )
    roof = _datasheet_bandwidth("NVIDIA H200")
    assert full["roofline"]["bandwidth_fraction"] == pytest.approx(achieved / roof, rel=REL)


def test_analyze_reports_the_grid_once() -> None:
    analysis = gpuscope.analyze(str(DETAILS)).to_dict()
    part = analysis["launch_config"]
    launches = _details()
    assert part["configs"] == 2 and part["launches"] == 2
    assert part["devices"] == [{"id": 0, "units": 132, "unit": "SM", "units_from": "trace"}]
    groups = {g["grid"][0]: g for g in part["groups"]}
    for launch in launches.values():
        group = groups[_dims(launch["grid"])[0]]
        assert group["time_us"] == pytest.approx(_number(launch["metrics"]["Duration"]) / 1000)
        assert group["block"] == _dims(launch["block"])
    small = [f for f in analysis["findings"] if f["id"] == "small-grid"]
    assert len(small) == 1 and small[0]["severity"] == "warning"
    assert small[0]["evidence"]["grid"] == [1, 1, 1]
    assert part["small_grid"]["configs"] == 1
    assert analysis["counters"]["kernels"][0]["ncu"]["bottleneck"] == "small grid"
