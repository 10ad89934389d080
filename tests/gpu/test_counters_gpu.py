"""`gpuscope run --tools ncu` on a memory-bound and a compute-bound kernel, then `gpuscope
counters` on what ncu wrote (skipped without an NVIDIA GPU, PyTorch or ncu).

The kernels, profiled between cudaProfilerStart/Stop only:
- `y = x * 2` on N float32: reads and writes 8·N bytes and does N FP32 multiplies — far below
  the ridge point, memory-bound;
- an M×M×M float32 matmul with TF32 off: 2·M³ FP32 FLOPs on the FMA pipe, compute-bound.

Checked against numbers computed here, not by gpuscope: the bytes and FLOPs from N and M, the
kernel times read from ncu's own CSV with the csv module, and the roofline's one definition of a
fraction: achieved ÷ the roof the report says it used (`ceilings`: the datasheet's of peaks.json,
or `gpuscope bench`'s measurement where one is cached) — ncu's own % of peak sustained stays
under its own name (`roofline.ncu`).
Runnable alone to print the numbers: python3 tests/gpu/test_counters_gpu.py OUT_DIR
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

N = 1 << 28  # 256 Mi floats: 1 GiB in, 1 GiB out (L2 write-back left at the end: < 3 %)
M = 4096
METRICS = ",".join([
    "gpu__time_duration.sum", "dram__bytes.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_tensor.sum", "sm__pipe_tensor_cycles_active.sum",
    *(f"smsp__sass_thread_inst_executed_op_{p}{op}_pred_on.sum"
      for p in "fdh" for op in ("add", "mul", "fma")),
])  # fmt: skip
NCU = ("ncu --clock-control none --profile-from-start off --force-overwrite --section "
       "SpeedOfLight --section LaunchStats --section Occupancy --metrics {metrics} "
       "--export {{run_dir}}/ncu_output/report")  # fmt: skip
WORKLOAD = f"""
import torch
torch.backends.cuda.matmul.allow_tf32 = False
x = torch.randn({N}, device="cuda")
a, b = torch.randn({M}, {M}, device="cuda"), torch.randn({M}, {M}, device="cuda")
torch.cuda.synchronize()
torch.cuda.profiler.start()
y = x * 2.0
c = a @ b
torch.cuda.synchronize()
torch.cuda.profiler.stop()
"""


def run_and_analyse(out: Path) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The counters report of one `gpuscope run --tools ncu`, and ncu's raw rows."""
    script = out / "workload.py"
    script.write_text(WORKLOAD)
    cmd = NCU.format(metrics=",".join(_available(METRICS.split(","))))
    context = {"gpu_vendor": "NVIDIA", "tools": [{"name": "ncu", "cmd": cmd}]}
    gpuscope = [sys.executable, "-m", "gpuscope"]
    done = subprocess.run(
        [*gpuscope, "run", "--output-dir", str(out / "runs"), "--additional-context",
         json.dumps(context), "--", sys.executable, str(script)],
        capture_output=True, text=True, timeout=560,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = [p for p in (out / "runs").iterdir() if (p / "manifest.json").exists()]
    report = out / "counters.json"
    done = subprocess.run(
        [*gpuscope, "counters", str(run / "ncu_output"), "--json", str(report), "-q"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(report.read_text()), _raw_rows(run / "ncu_output" / "ncu_raw.csv")


def _available(metrics: list[str]) -> list[str]:
    """The metrics this GPU's ncu knows (`ncu --query-metrics` lists base names); ncu refuses a
    whole run over one unknown name. All of them when the query itself fails."""
    done = subprocess.run(["ncu", "--query-metrics"], capture_output=True, text=True, timeout=120)
    bases = {line.split()[0] for line in done.stdout.splitlines() if line.strip()}
    known = [m for m in metrics if m.split(".")[0] in bases]
    return known if done.returncode == 0 and known else metrics


def _raw_rows(path: Path) -> list[dict[str, str]]:
    """ncu's raw rows with every number in base units (ns, bytes): row 2 of the page says the
    unit of each column (ncu picks msecond / usecond / Mbyte / Gbyte by magnitude)."""
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    table = list(csv.reader(lines))
    units = dict(zip(table[0], table[1], strict=True))
    rows = [dict(zip(table[0], row, strict=True)) for row in table[2:]]
    for row in rows:
        for name in ("gpu__time_duration.sum", "dram__bytes.sum"):
            if name in row:
                unit = units.get(name, "")
                assert unit in _SCALE, f"{name}: unit {unit!r} not known to this test"
                row[name] = repr(_number(row[name]) * _SCALE[unit])
    return rows


# unit written by ncu -> factor to ns or bytes (ncu's byte units are decimal)
_SCALE = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9, "ns": 1.0,
          "us": 1e3, "ms": 1e6, "s": 1e9, "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6,
          "Gbyte": 1e9, "Tbyte": 1e12}  # fmt: skip


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _kernels(report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the elementwise kernel, the matmul kernel: the longest of the others)."""
    kernels = report["kernels"]
    (scale,) = [k for k in kernels if "elementwise" in k["name"]]
    gemm = max((k for k in kernels if k is not scale), key=lambda k: k["time_us"])
    return scale, gemm


def _peak_bandwidth(device: str) -> float:
    text = resources.files("gpuscope").joinpath("data/peaks.json").read_text("utf-8")
    entry = next(d for d in json.loads(text)["devices"] if device in d["names"])
    return float(entry["bandwidth_gbs"]) * 1e9


@pytest.fixture(scope="module")
def measured(
    torch_gpu: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    if shutil.which("ncu") is None:
        pytest.skip("ncu not on PATH")
    if torch_gpu.version.cuda is None:
        pytest.skip("ncu needs an NVIDIA GPU")
    return run_and_analyse(tmp_path_factory.mktemp("counters"))


@pytest.mark.gpu
def test_memory_bound_kernel(measured: tuple[dict[str, Any], list[dict[str, str]]]) -> None:
    report, rows = measured
    scale, _ = _kernels(report)
    (raw,) = [r for r in rows if r["Kernel Name"] == scale["name"]]
    seconds = _number(raw["gpu__time_duration.sum"]) * 1e-9
    expected_bytes = 8 * N
    point = scale["roofline"]
    # by intensity where the FLOP counters came, else by ncu's memory vs SM throughput
    assert point["basis"] in ("counters", "ncu speed-of-light") and point["bound"] == "memory"
    assert scale["metrics"]["bytes_dram"] == pytest.approx(expected_bytes, rel=0.05)
    assert scale["metrics"]["dram_bandwidth"] == pytest.approx(expected_bytes / seconds, rel=0.05)
    if "flops_fp32" in scale["metrics"]:
        assert scale["metrics"]["flops_fp32"] == pytest.approx(N, rel=0.01)  # one FMUL each
    roofs = report["ceilings"]
    roof = roofs["bandwidth_gbs"] * 1e9  # the roof in use, as the report states it
    if roofs["kind"] == "datasheet":
        assert roof == _peak_bandwidth(report["source"]["device"])
    measured_bw = _number(raw["dram__bytes.sum"]) / seconds
    assert point["bandwidth_ceiling"] == roof
    assert point["bandwidth_fraction"] == pytest.approx(measured_bw / roof, rel=1e-6)
    assert point["fraction"] == point["bandwidth_fraction"]
    if "dram__throughput.avg.pct_of_peak_sustained_elapsed" in raw:  # ncu's own, by its name
        pct = _number(raw["dram__throughput.avg.pct_of_peak_sustained_elapsed"])
        assert point["ncu"]["dram_throughput_pct_of_peak_sustained"] == pytest.approx(pct)
    if measured_bw / roof >= 0.6:
        assert any(
            f["id"] == "memory-bound" and f["evidence"]["kernel"] == scale["name"]
            for f in report["findings"]
        )


@pytest.mark.gpu
def test_compute_bound_kernel(measured: tuple[dict[str, Any], list[dict[str, str]]]) -> None:
    report, _ = measured
    _, gemm = _kernels(report)
    point = gemm["roofline"]
    assert point["bound"] == "compute"
    if "flops" in gemm["metrics"]:  # FMA-pipe GEMM: the tensor pipe idle, FLOPs exact
        assert gemm["metrics"]["flops"] == pytest.approx(2 * M**3, rel=0.05)
        assert gemm["metrics"]["intensity_dram"] > point["ridge"]
        roof = report["ceilings"]["tflops"][point["precision"]] * 1e12
        assert point["compute_fraction"] == pytest.approx(gemm["metrics"]["flops_rate"] / roof)
    else:  # no FLOP counters: no compute fraction, ncu's SM throughput under its own name
        assert point["compute_fraction"] is None and "sm_throughput_pct_of_peak_sustained" in (
            point["ncu"] or {}
        )


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    report, rows = run_and_analyse(out)
    scale, gemm = _kernels(report)
    times = {r["Kernel Name"]: _number(r["gpu__time_duration.sum"]) for r in rows}
    for label, k, work in (("x*2", scale, f"{8 * N} B"), ("matmul", gemm, f"{2 * M**3} FLOP")):
        point = k["roofline"] or {}
        metrics = k["metrics"]
        print(
            f"{label:7} {times.get(k['name'], 0) / 1e3:9.1f} us  expected {work:>16}  "
            f"bytes {metrics.get('bytes_dram')}  flops {metrics.get('flops')}  "
            f"bound {point.get('bound')} ({point.get('basis')}) at {point.get('fraction')}"
        )
    print("findings:", [f["id"] for f in report["findings"]])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))
