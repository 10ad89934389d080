"""How many processes a big trace file is decoded in (see `trace.readers.kineto`). Kept out of
the `trace` package, whose import pulls numpy and msgspec, so that the command line can set it
before every command at no cost (`gpuscope run` works where msgspec is not installed).

The library reads in this process unless asked: worker processes started by forkserver/spawn
import the caller's main module again, which runs a script that has no `if __name__ ==
"__main__":` guard a second time. The command line asks (`gpuscope` guards its main), and so can
any caller: `GPUSCOPE_READ_WORKERS=N` (1: never) or `use_processes()`.
"""

from __future__ import annotations

import os

PARALLEL_BYTES = 64 << 20  # files above this (uncompressed; gzip: ×8 its size) use processes
MAX_WORKERS = 8
_asked = False


def use_processes(on: bool = True) -> None:
    """Let readers decode big files in worker processes (the caller's main is guarded)."""
    global _asked
    _asked = on


def processes_asked() -> bool:
    """Whether the caller let gpuscope start processes (`use_processes()` or
    GPUSCOPE_READ_WORKERS above 1)."""
    env = os.environ.get("GPUSCOPE_READ_WORKERS", "").strip()
    return _asked if not env.isdigit() else int(env) > 1


def read_workers(path: str) -> int:
    """Worker processes for `path`: GPUSCOPE_READ_WORKERS when set, else one per usable CPU (at
    most MAX_WORKERS) once `use_processes()` was called; 1 for files under PARALLEL_BYTES."""
    env = os.environ.get("GPUSCOPE_READ_WORKERS", "").strip()
    if not (_asked or env):
        return 1
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            gzipped = handle.read(2) == b"\x1f\x8b"
    except OSError:
        return 1
    if size * (8 if gzipped else 1) < PARALLEL_BYTES:
        return 1
    if env.isdigit():
        return max(1, int(env))
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_WORKERS, usable or 1))


# the forkserver listens on an AF_UNIX socket under the temporary folder (`…/pymp-<8 random
# characters>/listener-<8 more>`, ~35 characters); socket paths are limited to 107 bytes
_FORKSERVER_TMP_MAX = 70


def server_start_method() -> str:
    """`forkserver` (no fork of a threaded parent; workers import gpuscope once), or `spawn` where
    there is none or the temporary folder's path is too long for its socket (a long TMPDIR gave
    'AF_UNIX path too long')."""
    import multiprocessing
    import tempfile

    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods and len(tempfile.gettempdir()) <= _FORKSERVER_TMP_MAX:
        return "forkserver"
    return "spawn"
