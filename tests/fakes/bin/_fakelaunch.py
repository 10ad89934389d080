"""Shared by the fake launchers (`torchrun`, `srun`, `mpirun`): start N copies of the program,
each with the rank variables the real launcher sets, forward INT/TERM/HUP, wait for all, and
exit with the first non-zero status (128+N for a signal). Nothing else of the real launchers
(rendezvous, hosts, binding) is imitated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from _fakelib import log


def rank_env(kind: str, rank: int, size: int) -> dict[str, str]:
    if kind == "torchrun":
        return {
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "WORLD_SIZE": str(size),
            "LOCAL_WORLD_SIZE": str(size),
            "GROUP_RANK": "0",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29500",
            "TORCHELASTIC_RUN_ID": "fake",
        }
    if kind == "srun":
        return {
            "SLURM_PROCID": str(rank),
            "SLURM_LOCALID": str(rank),
            "SLURM_NTASKS": str(size),
            "SLURM_NODEID": "0",
        }
    return {
        "OMPI_COMM_WORLD_RANK": str(rank),
        "OMPI_COMM_WORLD_LOCAL_RANK": str(rank),
        "OMPI_COMM_WORLD_SIZE": str(size),
    }


def split(kind: str, argv: list[str]) -> tuple[int, list[str]]:
    """(number of ranks, the program) from the launcher's own options; any other option is
    taken for a flag without a value."""
    counts = {
        "torchrun": ("--nproc-per-node", "--nproc_per_node"),
        "srun": ("-n", "--ntasks"),
        "mpirun": ("-np", "-n"),
    }[kind]
    size, i = 1, 0
    while i < len(argv) and argv[i].startswith("-"):
        name, _, value = argv[i].partition("=")
        if name in counts:
            if not value:
                i += 1
                value = argv[i]
            size = int(value)
        i += 1
    program = argv[i:]
    if kind == "torchrun" and "--no-python" not in argv and "--no_python" not in argv:
        program = [sys.executable, *program]
    return size, program


def launch(kind: str) -> int:
    argv = sys.argv[1:]
    log(kind, argv)
    size, program = split(kind, argv)
    children = [
        subprocess.Popen(program, env={**os.environ, **rank_env(kind, r, size)})
        for r in range(size)
    ]
    for signo in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signo, lambda n, _f: [c.send_signal(n) for c in children])
    codes = [c.wait() for c in children]
    bad = [c for c in codes if c != 0]
    if not bad:
        return 0
    return bad[0] if bad[0] > 0 else 128 - bad[0]
