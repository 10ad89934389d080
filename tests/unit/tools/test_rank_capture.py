"""Per-rank capture: which commands start ranks, which variables carry a rank, and the rank
bootstrap in a real Python process (its paths, rank.json, and the sitecustomize chain after it:
gpuscope's torch.profiler hook, then the user's own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope.run import ranks
from gpuscope.run._rank_hook import per_rank_value
from gpuscope.tools.builtin import _kineto_hook


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        (["torchrun", "--nproc-per-node", "8", "train.py"], "torchrun"),
        (["/opt/venv/bin/torchrun", "train.py"], "torchrun"),
        (["python3", "-m", "torch.distributed.run", "train.py"], "torchrun"),
        (["python", "-u", "-m", "torch.distributed.launch", "train.py"], "torchrun"),
        (["srun", "-n", "4", "./app"], "srun"),
        (["mpiexec", "-n", "4", "./app"], "mpirun"),
        (["mpirun", "-np", "2", "./app"], "mpirun"),
        (["python3", "train.py"], None),
        (["python3", "-m", "torch.utils.bottleneck", "train.py"], None),
        (["bash", "launch.sh"], None),
    ],
)
def test_launchers_are_recognised_by_their_program(command: list[str], kind: str | None) -> None:
    assert ranks.launcher(command, {}) == kind


def test_any_command_can_ask_for_rank_folders() -> None:
    assert ranks.launcher(["bash", "launch.sh"], {"GPUSCOPE_PER_RANK": "1"}) == "forced"


def test_inherited_rank_variables_are_not_ranks_unless_the_launcher_sets_them() -> None:
    outer = {"SLURM_PROCID": "0", "RANK": "0"}  # gpuscope inside an sbatch step / a rank
    assert ranks.rank_vars("torchrun", outer) == ["RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                                  "PMIX_RANK"]  # fmt: skip
    assert ranks.rank_vars("srun", outer) == ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                              "SLURM_PROCID"]  # fmt: skip
    assert ranks.rank_vars("mpirun", {}) == list(ranks.RANK_VARS)


def test_paths_inside_the_run_move_into_the_rank_folder() -> None:
    assert per_rank_value("/r/run1/logs/a.log", "/r/run1", "/r/run1/rank3") == (
        "/r/run1/rank3/logs/a.log"
    )
    assert per_rank_value("/r/run10/a.log", "/r/run1", "/r/run1/rank3") == "/r/run10/a.log"
    assert per_rank_value("/elsewhere/a.log", "/r/run1/", "/r/run1/rank3") == "/elsewhere/a.log"


def test_the_bootstrap_moves_paths_records_the_rank_and_chains_on(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "torch_profiler_output").mkdir(parents=True)
    torch_hook = run_dir / ".gpuscope" / "torch_hook"
    torch_hook.mkdir(parents=True)
    (torch_hook / "sitecustomize.py").write_bytes(Path(_kineto_hook.__file__).read_bytes())
    user = tmp_path / "user"
    user.mkdir()
    marks = tmp_path / "marks.txt"
    (user / "sitecustomize.py").write_text(
        f"open({str(marks)!r}, 'a').write('user ' + __name__ + '\\n')\n"
    )
    env = {
        "GPUSCOPE_RUN_DIR": str(run_dir),
        _kineto_hook.DIR_VAR: str(run_dir / "torch_profiler_output"),
        "ROCBLAS_LOG_BENCH_PATH": str(run_dir / "rocblas_bench.log"),
    }
    added = ranks.child_env(run_dir, "torchrun", {**env, "PYTHONPATH": f"{torch_hook}"}, {})
    child = {**os.environ, **env, **added, "PYTHONPATH": f"{added['PYTHONPATH']}:{user}",
             "RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4"}  # fmt: skip
    probe = "import os, json; print(json.dumps({k: os.environ.get(k) for k in os.environ}))"
    done = subprocess.run([sys.executable, "-c", probe], env=child, capture_output=True,
                          text=True, check=True, timeout=60)  # fmt: skip
    seen = json.loads(done.stdout)
    folder = run_dir / "rank3"
    assert seen["ROCBLAS_LOG_BENCH_PATH"] == str(folder / "rocblas_bench.log")
    assert seen[_kineto_hook.DIR_VAR] == str(folder / "torch_profiler_output")
    assert (folder / "torch_profiler_output").is_dir()
    assert (seen["GPUSCOPE_RANK"], seen["GPUSCOPE_RANK_DIR"]) == ("3", str(folder))
    info = json.loads((folder / "rank.json").read_text())
    assert (info["rank"], info["local_rank"], info["world_size"], info["rank_from"]) == (
        3, 1, 4, "RANK")  # fmt: skip
    assert marks.read_text() == "user _gpuscope_hidden_sitecustomize\n"  # ran once, after both
    # the launcher's own process (no rank) changes nothing
    agent = {k: v for k, v in child.items() if k not in ("RANK", "LOCAL_RANK")}
    done = subprocess.run([sys.executable, "-c", probe], env=agent, capture_output=True,
                          text=True, check=True, timeout=60)  # fmt: skip
    assert json.loads(done.stdout)["ROCBLAS_LOG_BENCH_PATH"] == str(run_dir / "rocblas_bench.log")


def test_gpuscope_libtrace_rebuilds_from_every_ranks_logs(tmp_path: Path) -> None:
    from gpuscope.libtrace.rebuild import calls_from_paths

    for rank in range(3):
        folder = tmp_path / f"rank{rank}"
        folder.mkdir()
        (folder / "rocblas_bench.log").write_text(
            f"./rocblas-bench -f gemm -r f32_r -m {rank + 1} -n 8 -k 8\n"
        )
    calls = calls_from_paths([tmp_path], [])
    assert sorted(c.m for c in calls if c.m is not None) == [1, 2, 3]


def test_a_host_gpuscope_does_not_run_on_gets_its_samplers_once(tmp_path: Path) -> None:
    import csv
    import time

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    fake = {"POWER_BACKEND": "fake", "POWER_SAMPLING_RATE": "0.01"}
    added = ranks.child_env(run_dir, "srun", {}, {}, [{"kind": "power", "env": fake}])
    assert json.loads(added["GPUSCOPE_HOST_SAMPLERS"]) == [{"kind": "power", "env": fake}]
    base = {**os.environ, "GPUSCOPE_RUN_DIR": str(run_dir), **added,
            "GPUSCOPE_HOST": "the-launching-host"}  # fmt: skip
    work = "import time; time.sleep(1.0)"
    for rank in (0, 1):  # two ranks on this host: one agent
        subprocess.run([sys.executable, "-c", work], env={**base, "SLURM_PROCID": str(rank)},
                       check=True, timeout=60)  # fmt: skip
    folder = run_dir / "hosts" / __import__("socket").gethostname()
    out = folder / "gpu_info_power_profiler_output.csv"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and "workload_end" not in (
        out.read_text() if out.is_file() else ""
    ):
        time.sleep(0.05)
    assert json.loads((folder / "agent.json").read_text())["rank"] == 0
    rows = list(csv.DictReader(out.read_text().splitlines()))
    marks = [r["mark"] for r in rows if r["mark"]]
    assert marks == ["workload_start", "workload_end"], (folder / "agent.log").read_text()
    # sampled while rank 0 ran (100 Hz for 1 s; the agent's own start-up under a loaded machine
    # can take most of that, so only "more than the two marks" is asserted)
    assert len(rows) >= 3
