"""gpuscope's per-rank bootstrap for multi-rank jobs (torchrun, srun, mpirun).

`gpuscope run` copies this file into the run directory as `.gpuscope/rank_hook/sitecustomize.py`
and puts that folder first on PYTHONPATH when the command is a launcher, so every Python process
of the job runs it at start-up, before the program imports anything. A process that has a rank
(the first of GPUSCOPE_RANK_VARS that is set: RANK from torchrun, SLURM_PROCID from srun,
OMPI_COMM_WORLD_RANK / PMI_RANK / PMIX_RANK from mpirun) then:

- points the per-rank variables (GPUSCOPE_PER_RANK: a JSON map of variable -> the path gpuscope
  gave it inside the run directory) into `<run>/rank<R>/`, so the profilers' and the libraries'
  outputs of each rank land in its own folder (rocBLAS opens its log with O_TRUNC: one shared
  path would keep the last rank's log only). Values are always derived from the originals, so a
  child process with the same rank gets the same paths and a worker started by a per-node agent
  (srun then torchrun) gets its own;
- records who it is in `<run>/rank<R>/rank.json` (rank, local rank, world size, host, pid, the
  devices it may see), written once by the first process of the rank;
- on a host other than gpuscope's (GPUSCOPE_HOST), the first rank process there starts the
  run's samplers for that host (`gpuscope.run.host_agent`, into `<run>/hosts/<host>/`) with
  GPUSCOPE_PYTHONPATH in front, so that every host's GPUs are sampled once.

The launcher's own process (no rank) changes nothing. Standard library only: it runs in whatever
Python the job uses. Afterwards the next `sitecustomize` on sys.path (gpuscope's torch.profiler
hook, or the user's) still runs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import sys
import time

RANK_VARS = "GPUSCOPE_RANK_VARS"
PER_RANK = "GPUSCOPE_PER_RANK"
LOCAL_RANK_VARS = ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID")
WORLD_VARS = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS")
DEVICE_VARS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def _first_int(names: list[str] | tuple[str, ...]) -> tuple[int, str] | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value), name
    return None


def rank_folder(run_dir: str, rank: int) -> str:
    return os.path.join(run_dir, f"rank{rank}")


def per_rank_value(value: str, run_dir: str, folder: str) -> str:
    """`<run>/x/y` -> `<run>/rank<R>/x/y`; values outside the run directory stay."""
    prefix = run_dir.rstrip(os.sep) + os.sep
    return folder + os.sep + value[len(prefix) :] if value.startswith(prefix) else value


def _apply(run_dir: str, rank: int, originals: dict[str, str]) -> str:
    folder = rank_folder(run_dir, rank)
    os.makedirs(folder, exist_ok=True)
    for name, value in originals.items():
        moved = per_rank_value(value, run_dir, folder)
        os.environ[name] = moved
        if os.path.isdir(value):  # an output folder gpuscope created: the rank needs its own
            os.makedirs(moved, exist_ok=True)
    os.environ["GPUSCOPE_RANK"] = str(rank)
    os.environ["GPUSCOPE_RANK_DIR"] = folder
    return folder


def _record(folder: str, rank: int, source: str) -> None:
    local = _first_int(LOCAL_RANK_VARS)
    world = _first_int(WORLD_VARS)
    info = {
        "schema": "gpuscope.rank/1",
        "rank": rank,
        "rank_from": source,
        "local_rank": local[0] if local else None,
        "world_size": world[0] if world else None,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "visible_devices": {k: os.environ[k] for k in DEVICE_VARS if k in os.environ},
        "started_at": time.time(),
        "argv": list(sys.argv),
    }
    try:
        fd = os.open(os.path.join(folder, "rank.json"), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except OSError:  # another process of this rank wrote it first
        return
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(info, handle, indent=1)


def install() -> None:
    run_dir = os.environ.get("GPUSCOPE_RUN_DIR")
    names = [n for n in os.environ.get(RANK_VARS, "").split(",") if n]
    found = _first_int(names)
    if not run_dir or found is None:
        return
    try:
        originals = json.loads(os.environ.get(PER_RANK, "{}"))
    except ValueError:
        originals = {}
    rank, source = found
    try:
        folder = _apply(run_dir, rank, originals if isinstance(originals, dict) else {})
        _record(folder, rank, source)
        _host_samplers(run_dir, rank)
    except OSError:
        pass  # a read-only or vanished run directory must not break the program


def _host_samplers(run_dir: str, rank: int) -> None:
    """Start the samplers of this host once, when gpuscope (and its samplers) run elsewhere."""
    home, host = os.environ.get("GPUSCOPE_HOST"), socket.gethostname()
    wanted = os.environ.get("GPUSCOPE_HOST_SAMPLERS", "[]")
    if not home or home == host or wanted in ("", "[]"):
        return
    folder = os.path.join(run_dir, "hosts", host)
    os.makedirs(folder, exist_ok=True)
    try:
        fd = os.open(os.path.join(folder, "agent.json"), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except OSError:  # another rank of this host started it
        return
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"rank": rank, "watched_pid": os.getpid(), "started_at": time.time()}, handle)
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != RANK_VARS}
    own = os.environ.get("GPUSCOPE_PYTHONPATH", "")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (own, env.get("PYTHONPATH", "")) if p)
    argv = [sys.executable, "-m", "gpuscope.run.host_agent", folder, str(os.getpid())]
    with open(os.path.join(folder, "agent.log"), "ab") as log:
        subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                         start_new_session=True)  # fmt: skip


def _run_next_sitecustomize() -> None:
    """The next `sitecustomize.py` after this one on sys.path, run as `sitecustomize` (so that
    gpuscope's torch.profiler hook installs itself, and chains to the user's in turn)."""
    here = os.path.dirname(os.path.abspath(__file__))
    folders = [os.path.abspath(entry or os.getcwd()) for entry in sys.path]
    after = folders[folders.index(here) + 1 :] if here in folders else folders
    for folder in after:
        candidate = os.path.join(folder, "sitecustomize.py")
        if folder == here or not os.path.isfile(candidate):
            continue
        spec = importlib.util.spec_from_file_location("sitecustomize", candidate)
        if spec is not None and spec.loader is not None:
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        return


if __name__ == "sitecustomize":
    install()
    _run_next_sitecustomize()
