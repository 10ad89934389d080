"""Multi-rank jobs under `gpuscope run`: one run directory, a `rank<R>/` folder per rank.

When the command is a launcher (`torchrun`, `python -m torch.distributed.run`, `srun`, `mpirun`,
`mpiexec`; or any command with GPUSCOPE_PER_RANK=1 in gpuscope's environment), the rank bootstrap
(`_rank_hook.py`) is put first on the job's PYTHONPATH. It moves every path gpuscope gave a
tool's variable inside the run directory (the torch.profiler trace folder, the library logs)
into the process's `rank<R>/` folder, and records the rank in `rank<R>/rank.json`. After the run,
`collect` turns those records into the manifest's `ranks` and `hosts`.

Tools that wrap the launcher itself (rocprof, rpd, nsys, ncu) profile every process into their
own output as before; `ranks[].pid` tells which process was which rank. Samplers run once, in
gpuscope, for every GPU of gpuscope's host; on each other host of the job, the first rank process
starts them for that host (`host_agent.py`, into `hosts/<host>/`).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gpuscope.rank_folders import rank_folders
from gpuscope.run import _rank_hook

HOOK_DIR = ".gpuscope/rank_hook"
FORCE = "GPUSCOPE_PER_RANK"  # =1 in gpuscope's environment: per-rank folders for any command
# the variables that carry a process's rank, most specific first
RANK_VARS = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")
LAUNCHER_VARS = {
    "torchrun": ("RANK",),
    "srun": ("SLURM_PROCID",),
    "mpirun": ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"),
}
_PROGRAMS = {
    "torchrun": "torchrun",
    "srun": "srun",
    "mpirun": "mpirun",
    "mpiexec": "mpirun",
    "orterun": "mpirun",
    "mpiexec.hydra": "mpirun",
}
_TORCH_MODULES = ("torch.distributed.run", "torch.distributed.launch")
_NOT_PER_RANK = ("PYTHONPATH", "GPUSCOPE_RUN_DIR", "GPUSCOPE_RUN_ID")


def launcher(command: Sequence[str], env: Mapping[str, str]) -> str | None:
    """ "torchrun", "srun", "mpirun" (or "forced") when the command starts ranks; else None."""
    if not command:
        return None
    name = _PROGRAMS.get(Path(command[0]).name)
    if name is not None:
        return name
    if Path(command[0]).name.startswith("python") and _runs_module(command, _TORCH_MODULES):
        return "torchrun"
    return "forced" if env.get(FORCE, "") not in ("", "0") else None


def _runs_module(command: Sequence[str], modules: Sequence[str]) -> bool:
    args = list(command[1:])
    return any(a == "-m" and i + 1 < len(args) and args[i + 1] in modules
               for i, a in enumerate(args))  # fmt: skip


def rank_vars(kind: str, outer: Mapping[str, str]) -> list[str]:
    """The variables the hook reads a rank from. A variable already set in gpuscope's own
    environment is inherited (an sbatch step's SLURM_PROCID=0), not a rank, unless the launcher
    sets it for each process itself (srun's SLURM_PROCID)."""
    own = set(LAUNCHER_VARS.get(kind, ()))
    return [v for v in RANK_VARS if v in own or v not in outer]


def child_env(
    run_dir: Path,
    kind: str,
    env: Mapping[str, str],
    outer: Mapping[str, str],
    samplers: Sequence[Mapping[str, Any]] = (),
) -> dict[str, str]:
    """What to add to the job's environment: the hook first on PYTHONPATH, the rank variables,
    the per-rank variables with the run-directory paths gpuscope gave them, and for the hosts
    gpuscope does not run on, the samplers to start there (`[{"kind", "env"}]`)."""
    hook = run_dir / HOOK_DIR
    hook.mkdir(parents=True, exist_ok=True)
    (hook / "sitecustomize.py").write_bytes(Path(_rank_hook.__file__).read_bytes())
    existing = env.get("PYTHONPATH", "")
    inside = str(run_dir).rstrip(os.sep) + os.sep
    per_rank = {k: v for k, v in env.items() if v.startswith(inside) and k not in _NOT_PER_RANK}
    return {
        "PYTHONPATH": f"{hook}{os.pathsep}{existing}" if existing else str(hook),
        _rank_hook.RANK_VARS: ",".join(rank_vars(kind, outer)),
        _rank_hook.PER_RANK: json.dumps(per_rank, sort_keys=True),
        "GPUSCOPE_HOST": socket.gethostname(),
        "GPUSCOPE_HOST_SAMPLERS": json.dumps(list(samplers)),
        "GPUSCOPE_PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }


Rows = list[dict[str, Any]]


def collect(run_dir: Path, gpus: Rows) -> tuple[Rows, Rows]:
    """(ranks, hosts) for the manifest, from every `rank<R>/rank.json`. `gpus`: the GPUs gpuscope
    found on its own host (the other hosts' are not known here)."""
    ranks = []
    for folder in rank_folders(run_dir):
        info = _read(folder / "rank.json")
        ranks.append({**info, "rank": int(folder.name[4:]), "dir": folder.name})
    here = socket.gethostname()
    hosts: dict[str, dict[str, Any]] = {}
    for entry in ranks:
        name = str(entry.get("host") or "unknown")
        host = hosts.setdefault(name, {"hostname": name, "ranks": [], "local": name == here})
        host["ranks"].append(entry["rank"])
    for host in hosts.values():
        host["gpus"] = gpus if host["local"] else None
        host["samplers"] = None if host["local"] else _host_outputs(run_dir, host["hostname"])
    return ranks, list(hosts.values())


def _host_outputs(run_dir: Path, host: str) -> list[str]:
    """The sampler CSVs the host agent wrote for a host gpuscope did not run on."""
    folder = run_dir / "hosts" / host
    return sorted(p.relative_to(run_dir).as_posix() for p in folder.glob("gpu_info_*.csv"))


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"host": None, "note": f"{path.name} missing or unreadable"}
    return {k: v for k, v in data.items() if k != "schema"} if isinstance(data, dict) else {}
