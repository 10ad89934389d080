"""`gpuscope export` of real `gpuscope run` directories (fake tools and fake torch, fake sampler
backend): the samplers land on the traces' clock within 1 ms of where the programs' own clock
readings say they belong, and a trace that does not fit the run leaves the samplers out."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.unit.export.chrome_trace_check import check, load
from tests.unit.report.test_every_report_encodes import validator

REPO = Path(__file__).resolve().parents[2]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
PY = sys.executable
MS = 1_000_000
FAST_SAMPLERS = [
    {"name": "gpu_info_power_profiler",
     "env_vars": {"POWER_BACKEND": "fake", "POWER_SAMPLING_RATE": "0.01"}},
    {"name": "gpu_info_vram_profiler",
     "env_vars": {"VRAM_BACKEND": "fake", "VRAM_SAMPLING_RATE": "0.01"}},
]  # fmt: skip

# torch.profiler stand-in: a Kineto trace (epoch clock, baseTimeNanoseconds) of one launch and
# one kernel at each time.time_ns() the program put in torch.EVENTS
FAKE_PROFILER = """
import gzip, json, torch
BASE = 1_700_000_000_000_000_000
def us(ns):
    return f"{(ns - BASE) // 1000}.{(ns - BASE) % 1000:03d}"
def supported_activities():
    return ["CPU"]
class profile:
    def __init__(self, activities, **options):
        pass
    def start(self):
        pass
    def stop(self):
        pass
    def export_chrome_trace(self, path):
        events = []
        for i, t in enumerate(torch.EVENTS, 1):
            events.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", '
                          f'"pid": 1, "tid": 1, "ts": {us(t)}, "dur": 5.000, '
                          f'"args": {{"correlation": {i}}}}}')
            events.append('{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, '
                          f'"ts": {us(t + 10_000)}, "dur": 20.000, '
                          f'"args": {{"device": 0, "stream": 7, "correlation": {i}}}}}')
        with gzip.open(path, "wt") as f:
            f.write('{"schemaVersion": 1, "baseTimeNanoseconds": %d, "traceEvents": [%s]}'
                    % (BASE, ",".join(events)))
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "FAKE_TOOL_LOG": str(tmp_path / "tools.log"),
        "PYTHONPATH": str(REPO / "src"),
    }


def gpuscope(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [PY, "-m", "gpuscope", *args]
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def run_once(
    tmp_path: Path, env: dict[str, str], tools: str, *options: str, command: tuple[str, ...] = ()
) -> Path:
    """A run with both samplers (fake backend, 100 Hz) and `tools` ("" for none)."""
    context = json.dumps({"tools": FAST_SAMPLERS})
    more = ["--tools", tools] if tools else []
    command = command or (PY, "-c", "import time; time.sleep(0.2)")
    done = gpuscope(env, tmp_path, "run", "--output-dir", str(tmp_path / "runs"),
                    "--additional-context", context, *more, *options, "--", *command)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run_dir,) = sorted((tmp_path / "runs").iterdir())
    return run_dir


def export(tmp_path: Path, env: dict[str, str], run_dir: Path) -> tuple[dict[str, Any], str]:
    out = tmp_path / "timeline.json.gz"
    done = gpuscope(env, tmp_path, "export", str(run_dir), "-o", str(out))
    assert done.returncode == 0, done.stderr
    report = check(str(out))
    assert report.ok, report.errors
    data: dict[str, Any] = load(str(out))
    meta = data["gpuscope"]  # the samplers' entries too: a run directory with both samplers
    problems = [e.message for e in validator(meta["schema"]).iter_errors(meta)]
    assert not problems, problems
    return data, done.stderr


def sampler_rows(run_dir: Path, name: str) -> list[dict[str, str]]:
    with (run_dir / name).open() as f:
        return list(csv.DictReader(f))


def mark_row(run_dir: Path, label: str) -> dict[str, str]:
    rows = sampler_rows(run_dir, "gpu_info_power_profiler_output.csv")
    return next(r for r in rows if r["mark"] == label)


def ns(us: Any) -> int:
    return round(float(us) * 1000)


def instant(data: dict[str, Any], label: str) -> int:
    (event,) = [e for e in data["traceEvents"] if e["ph"] == "i" and e["name"] == label][:1]
    return ns(event["ts"])


def test_kineto_trace_and_samplers_share_the_clock(tmp_path: Path, env: dict[str, str]) -> None:
    package = tmp_path / "site" / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("EVENTS = []\n")
    (package / "profiler.py").write_text(FAKE_PROFILER)
    env = {**env, "PYTHONPATH": f"{env['PYTHONPATH']}{os.pathsep}{package.parent}",
           "GPUSCOPE_TORCH_SCHEDULE": "all"}  # fmt: skip
    side = tmp_path / "app_clock.json"
    app = tmp_path / "app.py"
    app.write_text(
        textwrap.dedent(f"""
        import json, time, torch
        time.sleep(0.15)
        wall, mono = time.time_ns(), time.monotonic_ns()
        torch.EVENTS.append(wall)
        json.dump({{"monotonic_ns": mono}}, open({str(side)!r}, "w"))
        time.sleep(0.15)
    """)
    )
    run_dir = run_once(tmp_path, env, "torch_profiler", command=(PY, str(app)))
    data, _ = export(tmp_path, env, run_dir)

    # where the program's launch lies after workload_start, by the monotonic clock alone
    app_mono = json.loads(side.read_text())["monotonic_ns"]
    expected = app_mono - int(mark_row(run_dir, "workload_start")["monotonic_ns"])
    (launch,) = [e for e in data["traceEvents"] if e.get("name") == "cudaLaunchKernel"]
    seen = ns(launch["ts"]) - instant(data, "workload_start")
    assert 100 * MS < expected < 10_000 * MS
    assert abs(seen - expected) < 1 * MS, (seen, expected)

    meta = data["gpuscope"]
    assert meta["timeline"]["clock"] == "realtime"
    (samplers,) = meta["samplers"]
    assert samplers["included"] and samplers["uncertainty_ns"] < 1 * MS
    assert "workload_start" in samplers["how"]
    _samplers_match_csv(run_dir, data)
    assert [e["ph"] for e in data["traceEvents"] if e["ph"] in "sf"] == ["s", "f"]


def _samplers_match_csv(run_dir: Path, data: dict[str, Any]) -> None:
    """Every power / VRAM cell is a counter sample at its row's monotonic time."""
    start = instant(data, "workload_start")
    start_mono = int(mark_row(run_dir, "workload_start")["monotonic_ns"])
    columns = {"Power(Watt) GPU0": "GPU0 power", "vram(%) GPU1": "GPU1 VRAM"}
    for name, column in (("gpu_info_power_profiler_output.csv", "Power(Watt) GPU0"),
                         ("gpu_info_vram_profiler_output.csv", "vram(%) GPU1")):  # fmt: skip
        rows = [r for r in sampler_rows(run_dir, name) if r[column]]
        expected = sorted((int(r["monotonic_ns"]) - start_mono, float(r[column])) for r in rows)
        found = sorted(
            (ns(e["ts"]) - start, next(iter(e["args"].values())))
            for e in data["traceEvents"]
            if e["ph"] == "C" and e["name"] == columns[column]
        )
        assert len(expected) > 10 and found == expected, name


# a profiler stand-in on the boot clock: reads CLOCK_BOOTTIME and the wall clock back to back,
# runs the program, then writes one kernel at that boot time in rocprofv3's CSV layout
BOOT_PROFILER = """
import csv, os, socket, subprocess, sys, time
out, app = sys.argv[1], sys.argv[2:]
boot, wall = time.clock_gettime_ns(time.CLOCK_BOOTTIME), time.time_ns()
code = subprocess.call(app)
folder = os.path.join(out, socket.gethostname())
os.makedirs(folder, exist_ok=True)
header = ["Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id",
          "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp"]
row = ["KERNEL_DISPATCH", "Agent 4", 1, 1, 1, 1, 1, "gemm", 1, boot, boot + 50_000]
with open(os.path.join(folder, "1_kernel_trace.csv"), "w", newline="") as f:
    csv.writer(f, quoting=csv.QUOTE_ALL).writerows([header, row])
with open(os.path.join(out, "wall.txt"), "w") as f:
    f.write(str(wall))
sys.exit(code)
"""


def test_boot_clock_trace_lines_up_through_the_manifest_clocks(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A kernel stamped with CLOCK_BOOTTIME lies as far after workload_start on the exported
    (epoch) timeline as the wall clock read with it says."""
    profiler = tmp_path / "boot_profiler.py"
    profiler.write_text(BOOT_PROFILER)
    config = tmp_path / "tools.json"
    cmd = f"{PY} {profiler} {{run_dir}}/rocprof_output"
    config.write_text(json.dumps({"tools": {"boot_profiler": {"cmd": cmd}}}))
    run_dir = run_once(tmp_path, env, "boot_profiler", "--tools-config", str(config))
    data, _ = export(tmp_path, env, run_dir)
    wall = int((run_dir / "rocprof_output" / "wall.txt").read_text())
    expected = wall - _utc_ns(mark_row(run_dir, "workload_start")["utc"])
    (kernel,) = [e for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] == "kernel"]
    seen = ns(kernel["ts"]) - instant(data, "workload_start")
    assert abs(seen - expected) < 1 * MS, (seen, expected)
    (samplers,) = data["gpuscope"]["samplers"]
    assert samplers["included"]
    assert samplers["boottime_minus_monotonic"]["uncertainty_ns"] is not None
    (source,) = data["gpuscope"]["sources"]
    assert source["placement"]["aligned"] and "CLOCK_BOOTTIME" in source["placement"]["how"]


def _utc_ns(text: str) -> int:
    import datetime as dt

    moment = dt.datetime.fromisoformat(text)
    delta = moment - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000


def test_a_trace_from_elsewhere_leaves_the_samplers_out(
    tmp_path: Path, env: dict[str, str]
) -> None:
    run_dir = run_once(tmp_path, env, "", command=("true",))
    data, stderr = export(tmp_path, env, run_dir)  # samplers only: counters and marks
    assert any(e["ph"] == "C" for e in data["traceEvents"])
    assert "no profiler output in this run" in stderr

    recorded = REPO / "tests" / "data" / "patterns_h200.json.gz"  # recorded on 2026-11-22
    shutil.copy(recorded, run_dir / "patterns_h200.json.gz")
    data, stderr = export(tmp_path, env, run_dir)
    assert "samplers left out" in stderr and "outside the workload marks" in stderr
    assert not any(e["ph"] in "Ci" for e in data["traceEvents"])
    assert any(e["ph"] == "X" and e["cat"] == "kernel" for e in data["traceEvents"])
    (samplers,) = data["gpuscope"]["samplers"]
    assert samplers["included"] is False and "outside" in samplers["why_not"]


def test_analyze_writes_the_timeline_too(tmp_path: Path, env: dict[str, str]) -> None:
    trace = REPO / "tests" / "data" / "patterns_h200.json.gz"
    out = tmp_path / "timeline.json"
    done = gpuscope(env, tmp_path, "analyze", "-q", str(trace), "--perfetto", str(out))
    assert done.returncode == 0, done.stderr
    assert check(str(out)).ok
    assert "wrote" in done.stderr and "realtime clock" in done.stderr


def test_nothing_to_export_is_one_error_line(tmp_path: Path, env: dict[str, str]) -> None:
    stats = tmp_path / "kernel_stats.csv"  # rocprofv3 statistics: totals, no events
    stats.write_text('"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs",'
                     '"StdDev"\n"gemm",2,200,100.0,100.0,90,110,10.0\n')  # fmt: skip
    done = gpuscope(env, tmp_path, "export", str(stats), "-o", str(tmp_path / "out.json"))
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert "nothing to put on a timeline" in done.stderr
    assert not (tmp_path / "out.json").exists()


def test_timeline_to_stdout(tmp_path: Path, env: dict[str, str]) -> None:
    bundled = REPO / "src" / "gpuscope" / "data" / "examples" / "llama_decode_h200.json.gz"
    done = gpuscope(env, tmp_path, "export", str(bundled), "-o", "-")
    assert done.returncode == 0, done.stderr
    timeline = json.loads(done.stdout)
    assert len(timeline["traceEvents"]) > 50_000  # every event of the trace, plain JSON
    assert done.stderr.startswith("wrote standard output: ") and not (tmp_path / "-").exists()
