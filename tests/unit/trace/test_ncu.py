"""The ncu reader on real `ncu --csv` outputs (read in place), on what the fake `ncu` writes, and
on damaged copies.

Reference files: `shared/reference/formats/ncu-csv/` — ncu 2025.3.1 on H200 / H100 (raw and
details pages, base and auto units, the application's output before the CSV; see PROVENANCE.md).
The golden numbers were written by `tests/data/golden/formats/make_nvidia_golden.py`, which
shares no code with gpuscope.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gpuscope
from gpuscope.errors import ReaderError
from gpuscope.trace.model import KERNEL, Trace
from gpuscope.trace.readers.ncu import NcuReader
from gpuscope.trace.readers.ncu._units import to_base
from gpuscope.trace.registry import find_sources, read_trace, read_traces
from tests.unit.trace.reference import GOLDEN, REPO, reference_file

ROOT = "ncu-csv"
GOLDENS = sorted(GOLDEN.glob("ncu__*.json"))
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
PAGES = (
    "ncu_raw_metrics.csv",
    "ncu_raw_default.csv",
    "ncu_raw_gemm.csv",
    "ncu_details_sol.csv",
    "ncu_details_default_gemm.csv",
    "ncu_details_sol_autounits_gemm.csv",
    "ncu_log.txt",
)
CUTLASS = "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>(T1::Params)"


@functools.cache
def trace_of(name: str) -> Trace:
    return read_trace(str(reference_file(f"{ROOT}/{name}")))


def names(trace: Trace) -> list[str]:
    return [trace.names[i] for i in trace.gpu.name]


def counters(trace: Trace, row: int) -> dict[str, float]:
    c = trace.counters
    return {trace.names[c.name[i]]: float(c.value[i]) for i in np.flatnonzero(c.row == row)}


def cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    argv = [sys.executable, "-m", "gpuscope", *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


# -- every page of the reference set ---------------------------------------------------------
@pytest.mark.parametrize("name", PAGES)
def test_every_page_is_kernels_without_a_timeline(name: str) -> None:
    trace = trace_of(name)
    meta = trace.meta
    assert (meta.format, meta.vendor, meta.clock) == ("ncu", "nvidia", "")
    assert meta.provides == {"kernels", "launch_params", "counters", "devices"}
    assert set(trace.gpu.kind) == {KERNEL} and set(trace.gpu.start) == {-1}
    assert (trace.gpu.dur > 0).all() and set(trace.gpu.stream) == {7}
    assert len(trace.host) == 0 and len(trace.launch_params) == len(trace.gpu)
    (device,) = meta.devices
    assert (device.id, device.arch) == (0, "sm_90")


def test_raw_page_metrics_in_base_units() -> None:
    trace = trace_of("ncu_raw_metrics.csv")
    assert trace.meta.schema == "raw" and len(trace.gpu) == 4
    assert list(trace.gpu.dur) == [3936, 3040, 6240, 2880]
    assert names(trace)[2] == CUTLASS
    assert names(trace)[0].startswith("void at::<unnamed>::distribution_elementwise_grid_stride")
    first = counters(trace, 0)
    assert first["gpu__time_duration.sum"] == 3936 and first["dram__bytes.sum"] == 10240
    assert first["launch__shared_mem_per_block"] == 1024  # "1,024": thousands separator
    units = trace.meta.counter_units
    assert units["gpu__time_duration.sum"] == "ns" and units["dram__bytes.sum"] == "byte"
    assert units["launch__registers_per_thread"] == "register/thread"
    assert not any(n.startswith("device__attribute_") for n in first)  # those describe the GPU
    lp = trace.launch_params
    assert (lp.grid_x[2], lp.grid_y[2], lp.grid_z[2], lp.block_x[2]) == (8, 1, 8, 128)
    assert (lp.registers[2], lp.shared_mem[2]) == (76, 20480)  # static 0 + dynamic 20,480
    (device,) = trace.meta.devices
    assert (device.name, device.compute_units) == ("NVIDIA H200", 132)
    assert device.properties["device__attribute_display_name"] == "NVIDIA H200"
    assert device.properties["device__attribute_compute_capability_major"] == 9


def test_raw_default_page_has_every_section() -> None:
    trace = trace_of("ncu_raw_default.csv")
    assert len(trace.gpu) == 2 and len(trace.counters) == 770
    assert trace.meta.counter_units["dram__cycles_active.avg"] == "cycle"
    # ncu names the same kernel differently in this run (namespaces dropped): kept as written
    assert names(trace)[0].startswith("void unnamed>::distribution_elementwise_grid_stride")


def test_details_page_rules_and_metrics() -> None:
    trace = trace_of("ncu_details_default_gemm.csv")
    assert trace.meta.schema == "details" and names(trace)[0] == CUTLASS
    assert list(trace.gpu.dur) == [6720, 4576]
    first = counters(trace, 0)
    assert first["DRAM Frequency"] == pytest.approx(2_609_523_809.52)
    assert first["Registers Per Thread"] == 76 and first["Threads"] == 8192
    assert "Cluster Scheduling Policy" not in first  # "PolicySpread": not a number
    lp = trace.launch_params
    assert (lp.registers[0], lp.shared_mem[0], lp.grid_y[1], lp.block_x[1]) == (76, 20480, 8, 384)
    rules = trace.meta.extra["ncu_rules"]
    assert sorted(rules) == ["0", "1"] and len(rules["0"]) == 8
    assert trace.meta.extra["ncu_ids"] == ["0", "1"]  # the ncu ID of each row of trace.gpu
    launch = next(r for r in rules["0"] if r["rule"] == "LaunchConfiguration")
    assert (launch["section"], launch["type"], launch["speedup_type"]) == (
        "LaunchStats",
        "OPT",
        "global",
    )
    assert launch["speedup"] == pytest.approx(51.52)
    assert rules["0"][0]["description"].startswith("This kernel grid is too small")
    assert trace.meta.event_counts == {"kernel": 2, "counter": 94, "rule": 14}


def test_auto_units_are_converted() -> None:
    auto, base = (
        trace_of("ncu_details_sol_autounits_gemm.csv"),
        trace_of("ncu_details_default_gemm.csv"),
    )
    assert list(auto.gpu.dur) == [6750, 4670]  # "6.75" us: auto units keep 3 digits
    assert counters(auto, 0)["Duration"] == pytest.approx(6750)
    assert counters(auto, 0)["DRAM Frequency"] == pytest.approx(2.61e9)  # "2.61" Ghz
    assert (
        auto.meta.counter_units["DRAM Frequency"]
        == "hz"
        == base.meta.counter_units["DRAM Frequency"]
    )
    assert auto.meta.counter_units["Duration"] == "ns"
    assert names(auto) == names(base)  # the same kernels, another run


def test_log_file_output() -> None:
    """`--log-file`: the CSV goes to the log; names are shortened differently."""
    trace = trace_of("ncu_log.txt")
    assert list(trace.gpu.dur) == [3936, 3040] and trace.meta.schema == "details"


def test_stdout_without_the_csv_is_a_clear_error(tmp_path: Path) -> None:
    path = reference_file(f"{ROOT}/ncu_details_sol_baseunits.csv")
    with pytest.raises(ReaderError, match="no ncu CSV found: expected") as caught:
        read_trace(str(path))
    assert "\n" not in str(caught.value) and "--log-file" in str(caught.value)
    done = cli("analyze", path, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "no ncu CSV found" in lines[0]


def test_the_reader_claims_no_other_file_of_the_folder() -> None:
    folder = reference_file(ROOT)
    reader = NcuReader()
    assert not reader.sniff(str(folder / "ncu_help.txt"))
    assert not reader.sniff(str(folder / "PROVENANCE.md"))  # mentions `==PROF==` in a table


def test_one_kernel_on_two_grids_stays_two_launches() -> None:
    """The tiny-grid recording: one saxpy on 1 and on 1,056 blocks — two rows, each its grid."""
    path = REPO / "tests" / "data" / "recorded" / "ncu_tiny_grid_h200_details.csv"
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    launches: dict[str, tuple[str, str]] = {}
    for row in csv.DictReader(lines):
        launches.setdefault(row["ID"], (row["Kernel Name"], row["Grid Size"]))
    trace = read_trace(str(path))
    assert names(trace) == [name for name, _ in launches.values()]
    assert len(set(names(trace))) == 1 and len(trace.gpu) == 2
    grids = [int(g.strip("()").split(",")[0]) for _, g in launches.values()]
    assert list(trace.launch_params.grid_x) == grids == [1, 1056]
    assert trace.meta.extra["ncu_ids"] == list(launches)


# -- the same kernels in two pages --------------------------------------------------------------
def test_raw_and_details_pages_of_the_same_workload() -> None:
    """No pair of the reference set is one run (each file is its own ncu call, of its own
    process): the launches agree (grid, block, device), the durations only roughly, and ncu
    prints one kernel's name differently with different options."""
    for raw_name, details_name in (
        ("ncu_raw_metrics.csv", "ncu_details_sol.csv"),
        ("ncu_raw_gemm.csv", "ncu_details_default_gemm.csv"),
    ):
        raw, details = trace_of(raw_name), trace_of(details_name)
        shared = min(len(raw.gpu), len(details.gpu))
        for column in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"):
            got, want = getattr(details.launch_params, column), getattr(raw.launch_params, column)
            assert np.array_equal(got[:shared], want[:shared]), column
        ratio = details.gpu.dur[:shared] / raw.gpu.dur[:shared]
        assert ((ratio > 0.9) & (ratio < 1.1)).all() and (ratio != 1).any()
    raw, details = trace_of("ncu_raw_metrics.csv"), trace_of("ncu_details_sol.csv")
    assert names(raw)[:2] == names(details)[:2]
    assert names(raw)[2] == CUTLASS and names(details)[2] == CUTLASS.replace("T1::Params", "Params")


def test_pages_of_one_report_group_into_one_trace(tmp_path: Path) -> None:
    """As `gpuscope run --tools ncu` exports them: kernels and metrics from the raw page, rules
    from the details page."""
    out = tmp_path / "ncu_output"
    out.mkdir()
    shutil.copy(reference_file(f"{ROOT}/ncu_raw_metrics.csv"), out / "ncu_raw.csv")
    shutil.copy(reference_file(f"{ROOT}/ncu_details_sol.csv"), out / "ncu_details.csv")
    (source,) = find_sources(str(out))
    assert source.key == str(out / "ncu") and len(source.paths) == 2
    (trace,) = read_traces(str(out))
    assert trace.meta.schema == "raw+details" and len(trace.gpu) == 4
    assert list(trace.gpu.dur) == [3936, 3040, 6240, 2880]  # the raw page's
    assert sorted(trace.meta.extra["ncu_rules"]) == ["0", "1", "2"]
    assert "dram__bytes.sum" in trace.meta.counter_units
    assert set(trace.meta.files) == {str(out / "ncu_raw.csv"), str(out / "ncu_details.csv")}


def test_pages_of_different_kernels_are_flagged(tmp_path: Path) -> None:
    shutil.copy(reference_file(f"{ROOT}/ncu_raw_gemm.csv"), tmp_path / "x_raw.csv")
    shutil.copy(reference_file(f"{ROOT}/ncu_details_sol.csv"), tmp_path / "x_details.csv")
    (trace,) = read_traces(str(tmp_path))
    (warning,) = trace.meta.warnings
    assert "x_details.csv describes 3 kernel launch(es) that x_raw.csv does not" in warning
    assert "ncu_rules" not in trace.meta.extra


# -- goldens --------------------------------------------------------------------------------
def load_golden(path: Path) -> tuple[dict[str, Any], Path]:
    golden: dict[str, Any] = json.loads(path.read_text())
    assert golden["schema"] == "gpuscope.golden/1"
    source = reference_file(golden["source"]["file"])
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert digest == golden["source"]["sha256"], f"{source} changed: rerun make_nvidia_golden.py"
    return golden, source


def test_goldens_exist() -> None:
    assert len(GOLDENS) == len(PAGES)


@pytest.mark.parametrize("golden_path", [pytest.param(p, id=p.stem) for p in GOLDENS])
def test_reader_and_analysis_match_the_golden_numbers(golden_path: Path) -> None:
    golden, source = load_golden(golden_path)
    trace = read_trace(str(source))
    assert trace.meta.schema == golden["layout"]
    assert len(trace.gpu) == golden["kernels"]["count"]
    assert list(trace.gpu.dur) == golden["kernels"]["durations_ns"]
    assert int(trace.gpu.dur.sum()) == golden["kernels"]["time_ns"]
    assert names(trace) == golden["kernels"]["names"]
    assert len(trace.counters) == golden["counters"]
    assert sum(len(r) for r in trace.meta.extra.get("ncu_rules", {}).values()) == golden["rules"]
    analysis = gpuscope.analyze(str(source))
    assert analysis.timeline is None  # no timestamps: no busy time, no span
    assert sum(g.count for g in analysis.groups) == golden["kernels"]["count"]
    assert analysis.kernel_ns == golden["kernels"]["time_ns"]


# -- the fake ncu of `gpuscope run` ---------------------------------------------------------
def test_reads_what_the_fake_ncu_writes(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}"}
    out = tmp_path / "ncu_output"
    report = out / "report"
    subprocess.run(
        ["ncu", "--export", str(report), sys.executable, "-c", "pass"],
        check=True,
        env=env,
        capture_output=True,
    )
    for page in ("raw", "details"):
        with (out / f"ncu_{page}.csv").open("w") as handle:
            subprocess.run(
                ["ncu", "--import", f"{report}.ncu-rep", "--csv", "--page", page],
                check=True,
                env=env,
                stdout=handle,
            )
    (trace,) = read_traces(str(out))
    assert trace.meta.schema == "raw+details"
    assert names(trace) == [
        "void vector_add<float>(float*, float const*, float const*, int)",
        "gemm_kernel_64x64(float const*, float const*, float*, int, int, int)",
    ]
    assert list(trace.gpu.dur) == [12800, 95360]
    assert counters(trace, 1)["dram__bytes.sum"] == 2_097_152
    details = read_trace(str(out / "ncu_details.csv"))
    assert list(details.gpu.dur) == [12800, 95360] and details.meta.schema == "details"


# -- damaged inputs and units -------------------------------------------------------------------
def test_cut_mid_row(tmp_path: Path) -> None:
    text = reference_file(f"{ROOT}/ncu_raw_gemm.csv").read_text()
    cut = tmp_path / "ncu_cut.csv"
    cut.write_text(text[: text.rindex("\n", 0, len(text) - 1) + 40])  # inside the last row
    trace = read_trace(str(cut))
    assert len(trace.gpu) == 3 and trace.meta.truncated
    assert "cut short" in trace.meta.warnings[0]


def test_header_only_and_empty(tmp_path: Path) -> None:
    text = reference_file(f"{ROOT}/ncu_raw_gemm.csv").read_text().splitlines()
    header_only = tmp_path / "ncu_header.csv"
    header_only.write_text("\n".join(text[:6]) + "\n")  # prelude, names, units
    trace = read_trace(str(header_only))
    assert len(trace.gpu) == 0 and "kernels" not in trace.meta.provides
    empty = tmp_path / "ncu_empty.csv"
    empty.write_text("")
    with pytest.raises(ReaderError, match="empty"):
        read_trace(str(empty))


def test_garbage_named_like_ncu_output(tmp_path: Path) -> None:
    path = tmp_path / "ncu_garbage.csv"
    path.write_bytes(bytes(range(1, 256)) * 10)
    with pytest.raises(ReaderError, match="no ncu CSV found"):
        read_trace(str(path))


@pytest.mark.parametrize(
    ("unit", "base", "factor"),
    [
        ("ns", "ns", 1),
        ("us", "ns", 1e3),
        ("msecond", "ns", 1e6),
        ("Kbyte", "byte", 1e3),
        ("Mbyte", "byte", 1e6),
        ("Ghz", "hz", 1e9),
        ("Gbyte/second", "byte/second", 1e9),
        ("Gbyte/s", "byte/second", 1e9),
        ("%", "%", 1),
        ("", "", 1),
        ("Kcycle", "cycle", 1e3),
        ("byte/block", "byte/block", 1),
        ("register/thread", "register/thread", 1),
        ("SM", "SM", 1),
    ],
)
def test_units(unit: str, base: str, factor: float) -> None:
    assert to_base(unit) == (base, factor)
