"""`gpuscope run` around a multi-rank launcher (fake torchrun / srun / mpirun in tests/fakes/bin):
one run directory, a `rank<R>/` folder per rank with that rank's profiler outputs and library
logs, samplers once, the ranks and hosts in the manifest, and the cross-rank report of the
torch.profiler traces. The late rank and the waits are checked against the arrival times the
ranks themselves exchanged (files), not against gpuscope's numbers."""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
PY = sys.executable
FAST_SAMPLERS = [
    {"name": "gpu_info_power_profiler",
     "env_vars": {"POWER_BACKEND": "fake", "POWER_SAMPLING_RATE": "0.01"}},
]  # fmt: skip

# torch.profiler stand-in: a Kineto trace (distributedInfo from the rank's environment) with the
# kernels and steps the program put in torch.EVENTS / torch.STEPS as (name, start ns, end ns)
FAKE_PROFILER = """
import gzip, json, os, torch
def us(ns):
    return f"{ns // 1000}.{ns % 1000:03d}"
def supported_activities():
    return ["CPU", "CUDA"]
class profile:
    def __init__(self, activities, **options):
        pass
    def start(self):
        pass
    def stop(self):
        pass
    def export_chrome_trace(self, path):
        events = []
        for i, (name, start, end) in enumerate(torch.EVENTS, 1):
            events.append('{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, '
                          '"ts": %s, "dur": %s, "args": {"device": 0, "stream": 7, '
                          '"correlation": %d}}' % (name, us(start), us(end - start), i))
        for name, start, end in torch.STEPS:
            events.append('{"ph": "X", "cat": "user_annotation", "name": "%s", "pid": 1, '
                          '"tid": 1, "ts": %s, "dur": %s}' % (name, us(start), us(end - start)))
            events.append('{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, '
                          '"tid": 1, "ts": %s, "dur": 10.000}' % us(start + 1000))
        info = {"backend": "nccl", "rank": int(os.environ["RANK"]),
                "world_size": int(os.environ["WORLD_SIZE"])}
        with gzip.open(path, "wt") as f:
            f.write('{"schemaVersion": 1, "distributedInfo": %s, "traceEvents": [%s]}'
                    % (json.dumps(info), ",".join(events)))
"""

# one rank of a data-parallel job: compute, then an all-reduce that ends for everyone 2 ms after
# the last rank arrived (the ranks tell each other their arrival through files in APP_SYNC);
# rank APP_LATE computes 30 ms longer. rocBLAS' log is opened with O_TRUNC, as rocBLAS does.
APP = """
import os, time, torch
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
sync, late = os.environ["APP_SYNC"], int(os.environ["APP_LATE"])
with open(os.environ["ROCBLAS_LOG_BENCH_PATH"], "w") as log:
    log.write("./rocblas-bench -f gemm -r f32_r --transposeA N --transposeB N "
              f"-m {64 * (rank + 1)} -n 64 -k 64 --alpha 1 --lda 64 --ldb 64 --beta 0 --ldc 64\\n")
# a start barrier: under load one rank may start its first step long after the other, and
# rank APP_LATE must then still be the late one (the test was flaky on a loaded machine)
open(os.path.join(sync, f"ready.{rank}"), "w").close()
while sum(os.path.exists(os.path.join(sync, f"ready.{r}")) for r in range(world)) < world:
    time.sleep(0.0005)
for step in range(4):
    start = time.time_ns()
    time.sleep(0.02 + (0.03 if rank == late else 0))
    arrived = time.time_ns()
    torch.EVENTS.append(("gemm_kernel", start, arrived))
    with open(os.path.join(sync, f"{step}.{rank}.tmp"), "w") as f:
        f.write(str(arrived))
    os.replace(os.path.join(sync, f"{step}.{rank}.tmp"), os.path.join(sync, f"{step}.{rank}"))
    while sum(os.path.exists(os.path.join(sync, f"{step}.{r}")) for r in range(world)) < world:
        time.sleep(0.0005)
    end = max(int(open(os.path.join(sync, f"{step}.{r}")).read()) for r in range(world))
    end += 2_000_000
    while time.time_ns() < end:
        time.sleep(0.0002)
    torch.EVENTS.append(("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", arrived, end))
    torch.STEPS.append((f"ProfilerStep#{step}", start, end))
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site" / "torch"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("EVENTS = []\nSTEPS = []\n")
    (site / "profiler.py").write_text(FAKE_PROFILER)
    (tmp_path / "sync").mkdir()
    return {
        **os.environ,
        "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "FAKE_TOOL_LOG": str(tmp_path / "tools.log"),
        "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{site.parent}",
        "GPUSCOPE_TORCH_SCHEDULE": "all",
        "APP_SYNC": str(tmp_path / "sync"),
        "APP_LATE": "1",
    }


def run(tmp_path: Path, env: dict[str, str], tools: str, *command: str) -> Path:
    context = json.dumps({"tools": FAST_SAMPLERS})
    argv = [PY, "-m", "gpuscope", "run", "--output-dir", str(tmp_path / "runs"),
            "--additional-context", context, "--tools", tools, "--", *command]  # fmt: skip
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (run_dir,) = sorted((tmp_path / "runs").iterdir())
    return run_dir


def manifest(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "manifest.json").read_text())
    return data


def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def arrivals(sync: Path, ranks: int) -> list[list[int]]:
    """Per step, each rank's arrival at the all-reduce as the ranks told each other."""
    steps = sorted({int(p.name.split(".")[0]) for p in sync.iterdir() if p.name[0].isdigit()})
    return [[int((sync / f"{s}.{r}").read_text()) for r in range(ranks)] for s in steps]


def test_torchrun_gives_a_folder_per_rank_and_one_report_across_ranks(
    tmp_path: Path, env: dict[str, str]
) -> None:
    app = tmp_path / "train.py"
    app.write_text(textwrap.dedent(APP))
    run_dir = run(tmp_path, env, "torch_profiler,rocblas_trace",
                  "torchrun", "--nproc-per-node", "2", str(app))  # fmt: skip

    data = manifest(run_dir)
    assert data["launcher"] == "torchrun"
    assert [(r["rank"], r["dir"], r["rank_from"]) for r in data["ranks"]] == [
        (0, "rank0", "RANK"), (1, "rank1", "RANK")]  # fmt: skip
    assert [r["world_size"] for r in data["ranks"]] == [2, 2]
    assert len({r["pid"] for r in data["ranks"]}) == 2
    (host,) = data["hosts"]
    assert (host["hostname"], host["ranks"], host["local"]) == (socket.gethostname(), [0, 1], True)

    for rank in (0, 1):
        folder = run_dir / f"rank{rank}"
        (trace,) = sorted((folder / "torch_profiler_output").glob("*.pt.trace.json.gz"))
        assert trace.name.startswith(f"rank{rank}_")
        assert (folder / "torch_profiler_output" / trace.name.replace(
            ".pt.trace.json.gz", ".analysis.json")).is_file()  # fmt: skip
        # the rocBLAS log (opened with O_TRUNC by each rank) kept this rank's line
        log = (folder / "rocblas_bench.log").read_text()
        assert f"-m {64 * (rank + 1)} " in log
        (row,) = csv_rows(folder / "library_trace.csv")
        assert row["m"] == str(64 * (rank + 1))
    assert not list((run_dir / "torch_profiler_output").glob("*.pt.trace.json.gz"))
    assert sorted(r["m"] for r in csv_rows(run_dir / "library_trace.csv")) == ["128", "64"]
    # samplers run once, in gpuscope, for the host's GPUs
    assert (run_dir / "gpu_info_power_profiler_output.csv").is_file()
    assert not list(run_dir.glob("rank*/gpu_info_*"))

    part = json.loads((run_dir / "ranks_analysis.json").read_text())
    times = arrivals(tmp_path / "sync", 2)
    waits = [max(step) - step[0] for step in times]  # rank 0 waits for rank 1
    assert all(step[1] > step[0] for step in times)
    per_rank = {r["rank"]: r for r in part["per_rank"]}
    assert (per_rank[1]["last"], per_rank[0]["last"]) == (len(times), 0)
    assert per_rank[0]["waited_us"] * 1000 == pytest.approx(sum(waits), abs=1)
    assert part["clock"]["offsets"][1]["offset_us"] == 0.0
    assert part["steps"]["most_compute_rank"] == [1] * len(times)
    found = {f["id"]: f for f in part["findings"]}
    # rank 1 computes 30 ms more per step: late by more work, not "slower" (the walls even out)
    assert found["rank-straggler"]["evidence"]["cause"] == "more-compute"
    assert "rank-slow-steps" not in found
    verdicts = [(r["verdict"]["bound"], r["verdict"]["waiting_for"]) for r in part["per_rank"]]
    assert verdicts == [("waiting", 1), ("more-work", None)]


@pytest.mark.parametrize(
    ("launcher", "flag", "variable"),
    [("srun", "-n", "SLURM_PROCID"), ("mpirun", "-np", "OMPI_COMM_WORLD_RANK")],
)
def test_srun_and_mpirun_ranks_write_their_library_logs_into_their_own_folders(
    tmp_path: Path, env: dict[str, str], launcher: str, flag: str, variable: str
) -> None:
    app = tmp_path / "app.py"
    app.write_text(
        textwrap.dedent(f"""
        import os
        rank = int(os.environ[{variable!r}])
        with open(os.environ["ROCBLAS_LOG_BENCH_PATH"], "w") as log:
            log.write(f"./rocblas-bench -f gemm -r f32_r -m {{rank + 1}} -n 8 -k 8\\n")
    """)
    )
    env = {**env, "SLURM_PROCID": "0"}  # as in an sbatch script: srun sets its own per task
    run_dir = run(tmp_path, env, "rocblas_trace", launcher, flag, "3", PY, str(app))
    data = manifest(run_dir)
    assert data["launcher"] == launcher
    assert [(r["rank"], r["rank_from"]) for r in data["ranks"]] == [(r, variable) for r in range(3)]
    for rank in range(3):
        assert f"-m {rank + 1} " in (run_dir / f"rank{rank}" / "rocblas_bench.log").read_text()
    assert not (run_dir / "rocblas_bench.log").exists()
    assert sorted(r["m"] for r in csv_rows(run_dir / "library_trace.csv")) == ["1", "2", "3"]


def test_a_plain_command_gets_no_rank_folders(tmp_path: Path, env: dict[str, str]) -> None:
    env = {**env, "RANK": "0"}  # gpuscope itself runs inside a rank: nothing to split
    run_dir = run(tmp_path, env, "rocblas_trace", PY, "-c", "pass")
    data = manifest(run_dir)
    assert (data["launcher"], data["ranks"], data["hosts"]) == (None, [], [])
    assert "GPUSCOPE_RANK_VARS" not in data["env"]
    assert not list(run_dir.glob("rank*"))
