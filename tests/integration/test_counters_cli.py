"""`gpuscope counters` through the real CLI: a report in every format from a real counter
collection, the pass plans per GPU, and one-line errors (exit 2, no traceback)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope.counters.capability import read_pmc_lines
from tests.unit.counters.conftest import write_counters
from tests.unit.trace.reference import reference_file

TABLE = Path(__file__).resolve().parents[2] / "src/gpuscope/data/counters/capability.json"


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "160", "PYTHONIOENCODING": "utf-8",
           "GPUSCOPE_CACHE_DIR": str(cwd / "cache")}  # fmt: skip
    argv = [sys.executable, "-m", "gpuscope", *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_report_in_every_format_from_the_mi250_pmc_folder(tmp_path: Path) -> None:
    folder = reference_file(
        "rocprof-v1/hpctraining-finite-difference-mi250/xr_laplacian_dp_kernel1_pmc"
    )
    done = run("counters", folder, "--arch", "gfx90a", "--device", "AMD Instinct MI250X",
               "--json", "r.json", "--md", "r.md", "--html", "r.html", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["schema"] == "gpuscope.counters/1"
    assert report["kernels"][0]["name"] == "laplacian_kernel"
    assert "memory-bound" in {f["id"] for f in report["findings"]}
    md = (tmp_path / "r.md").read_text()
    assert "laplacian_kernel" in md and "missing SQ_INSTS_VALU_ADD_F16" in md
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert "Hardware counters and roofline" in done.stdout


def test_json_to_stdout(tmp_path: Path) -> None:
    folder = reference_file(
        "rocprof-v1/hpctraining-finite-difference-mi250/xr_laplacian_dp_kernel1_pmc"
    )
    done = run("counters", folder, "--arch", "gfx90a", "--json", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kernels"][0]["name"] == "laplacian_kernel"
    assert not (tmp_path / "-").exists()


def test_html_draws_the_roofline(tmp_path: Path) -> None:
    counters = {"SQ_INSTS_VALU_ADD_F32": 0.0, "SQ_INSTS_VALU_MUL_F32": 0.0,
                "SQ_INSTS_VALU_TRANS_F32": 0.0, "SQ_INSTS_VALU_FMA_F32": 1.0e8,
                **{f"SQ_INSTS_VALU_{op}_{p}": 0.0 for op in ("ADD", "MUL", "TRANS", "FMA")
                   for p in ("F16", "F64")},
                **{f"SQ_INSTS_VALU_MFMA_MOPS_{p}": 0.0 for p in ("F16", "BF16", "F32", "F64")},
                "TCC_EA0_RDREQ_sum": 1.0e7, "TCC_EA0_RDREQ_32B_sum": 0.0, "TCC_BUBBLE_sum": 0.0,
                "TCC_EA0_WRREQ_sum": 1.0e7, "TCC_EA0_WRREQ_64B_sum": 1.0e7}  # fmt: skip
    path = write_counters(
        tmp_path / "k_counter_collection.csv", [("stencil", 1_000_000, counters, 32, 0)]
    )
    done = run("counters", path, "--arch", "gfx942", "--device", "AMD Instinct MI300X",
               "--html", "r.html", "-q", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "r.html").read_text()
    assert "<svg" in html and "<circle" in html and "FLOP per DRAM byte" in html


def test_plan_for_gfx1151_leaves_out_what_rdna_cannot_count(tmp_path: Path) -> None:
    done = run("counters", "--plan", "compute", "--arch", "gfx1151", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    arches = json.loads(TABLE.read_text())["archs"]["gfx11"]
    known = {c for names in arches["blocks"].values() for c in names} | set(arches["derived"])
    planned = [c for line in read_pmc_lines(done.stdout) for c in line]
    assert planned and set(planned) <= known
    assert "SQ_WAVES" in planned
    # RDNA has no per-precision VALU or WMMA counters: the plan says FLOPs are out of reach
    assert "# gfx1151 cannot compute flops" in done.stdout.splitlines()


def test_plan_of_a_file_and_of_ncu_metrics(tmp_path: Path) -> None:
    request = tmp_path / "in.txt"
    request.write_text("pmc: SQ_WAVES SQ_INSTS_VALU_FMA_F32\n")
    done = run("counters", "--plan", request, "--arch", "gfx1201", "-o", "out.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out.txt").read_text()
    assert read_pmc_lines(text) == [["SQ_WAVES"]]
    assert "gfx1201 cannot collect SQ_INSTS_VALU_FMA_F32" in text
    ncu = run("counters", "--plan", "roofline", "--arch", "sm_90", cwd=tmp_path)
    assert ncu.returncode == 0, ncu.stderr
    (metrics,) = [line for line in ncu.stdout.splitlines() if line.startswith("--metrics ")]
    listed = metrics.removeprefix("--metrics ").split(",")
    assert "dram__bytes.sum" in listed
    assert "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in listed


def test_list(tmp_path: Path) -> None:
    done = run("counters", "--list", "gfx942", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^TCC \(up to 4 per pass\): .*TCC_HIT", done.stdout, re.M)


def test_list_an_nvidia_arch_as_plan_does(tmp_path: Path) -> None:
    """Issue 25. Before: `--list sm_90` said sm_90 was not in the counter table, while
    `--plan roofline --arch sm_90` worked. Each set lists the metrics --plan asks ncu for."""
    done = run("counters", "--list", "sm_90", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# sm_90 (") and "ncu collects any metric" in done.stdout
    sets = dict(line.split(": ", 1) for line in done.stdout.splitlines()
                if not line.startswith("#"))  # fmt: skip
    assert set(sets) == {"roofline", "memory", "compute", "all"}
    for name in ("roofline", "memory"):
        plan = run("counters", "--plan", name, "--arch", "sm90", cwd=tmp_path)
        (metrics,) = [line for line in plan.stdout.splitlines() if line.startswith("--metrics ")]
        assert sets[name].split() == metrics.removeprefix("--metrics ").split(",")
    assert "dram__bytes.sum" in sets["all"].split()


@pytest.mark.parametrize(
    ("args", "message"),
    [(("counters",), "give counter outputs to analyse"),
     (("counters", "--plan", "roofline"), "--plan needs --arch"),
     (("counters", "--list", "gfx803"), "gfx803: not in the counter table"),
     (("counters", "--list", "sm_77"), "sm_77: not in the counter table; known: gfx908"),
     (("counters", "--plan", "SQ_INSTS_MFMA", "--arch", "gfx1151"), "nothing gfx1151 can collect")],
)  # fmt: skip
def test_usage_errors_are_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    done = run(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and message in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_a_trace_without_counters(tmp_path: Path) -> None:
    trace = reference_file("rocprofv3/amd-docs-rocm7-2025-08/kernel_trace.csv")
    done = run("counters", trace, cwd=tmp_path)
    assert done.returncode == 2 and "no hardware counters found" in done.stderr
