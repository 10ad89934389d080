"""How many processes a big trace file is decoded in (see `trace.readers.kineto`), and how a
pool of worker processes may start here (`pool_start_method`, the ranks' local engine). Kept out
of the `trace` package, whose import pulls numpy and msgspec, so that the command line can set it
before every command at no cost (`gpuscope run` works where msgspec is not installed).

The library reads in this process unless asked: worker processes started by forkserver/spawn
import the caller's main module again, which runs a script that has no `if __name__ ==
"__main__":` guard a second time. The command line asks (`gpuscope` guards its main), and so can
any caller: `GPUSCOPE_READ_WORKERS=N` (1: never) or `use_processes()`.

A pool of many traces looks at the main script itself (`main_reruns`): one with work outside a
guard (a plain script calling `gpuscope.analyze(run_dir)`) would run again in every worker —
and start a pool there, which multiprocessing refuses (BrokenProcessPool). Such a script gets
workers forked from it (fork runs nothing again), or, when other threads run (fork would copy
them mid-step), no pool at all: the caller says so.
"""

from __future__ import annotations

import ast
import os
import sys

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


def pool_start_method() -> str | None:
    """How a pool of worker processes may start in this program: `server_start_method()` when
    the workers can import its main module again (the caller asked for processes, or the main
    script keeps its work under a guard), `fork` when they cannot but forking is safe (one
    thread), None when neither is: the work runs in this process."""
    import multiprocessing
    import threading

    if processes_asked() or not main_reruns():
        return server_start_method()
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return "fork"
    return None


def main_reruns() -> bool:
    """Whether a worker started by forkserver or spawn would run work of this program's main
    script again: multiprocessing runs the script as `__mp_main__` in each worker (not a
    package's `__main__`, nor an interactive session, a notebook or `python -c`), and it does
    something — a call at its top level outside an `if __name__ == "__main__":` block."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None and (name == "__main__" or name.endswith(".__main__")):
        return False
    path = getattr(main, "__file__", None)
    if path is None or os.path.splitext(os.path.basename(path))[0] == "ipython":
        return False
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return True  # unknown: assume the worst
    return any(_does_work(node) for node in tree.body)


_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _does_work(statement: ast.stmt) -> bool:
    """A top-level statement that calls something when the module is imported."""
    if isinstance(statement, _DEFINITIONS) or _is_main_guard(statement):
        return False
    return any(isinstance(node, ast.Call) for node in ast.walk(statement))


def _is_main_guard(statement: ast.stmt) -> bool:
    """`if __name__ == "__main__":` (either way round)."""
    test = statement.test if isinstance(statement, ast.If) else None
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    sides = [test.left, *test.comparators]
    named = any(isinstance(side, ast.Name) and side.id == "__name__" for side in sides)
    main = any(isinstance(side, ast.Constant) and side.value == "__main__" for side in sides)
    return isinstance(test.ops[0], ast.Eq) and named and main
