"""Rebuild library_trace.csv from logs after the fact (`gpuscope libtrace`), e.g. when gpuscope
itself was killed before its teardown wrote the CSV.

A `gpuscope run` directory (it has a manifest.json) is read through the tracers' own log-file
names: its other logs are the command's whole output (stdout.log, stderr.log), which the tracers'
own copies already hold. Any other directory is read whole: the files with a tracer's name by
that tracer, and every other `.log`/`.txt`/`.out`/`.err`/`.yaml` file — an `nccl.log`, a
`miopen.txt` beside a `rocblas_bench.log` — by every parser, as a file named on the command line
is: their records cannot be mistaken for one another. NCCL and RCCL share one log format:
a log is labelled rccl when it shows RCCL's banner or its `globalrank` suffix.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from gpuscope.errors import InputError
from gpuscope.libtrace.call import LibraryCall
from gpuscope.libtrace.collect import parse_file
from gpuscope.libtrace.nccl import looks_like_rccl
from gpuscope.libtrace.tracers import STREAM_FILES, TRACERS, Tracer
from gpuscope.rank_folders import rank_folders

_COLLECTIVE_TOOLS = ("rccl_trace", "nccl_trace")
_LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".yaml", ".stdout", ".stderr")


def calls_from_paths(paths: Iterable[Path], warnings: list[str]) -> list[LibraryCall]:
    """Every call logged in these run directories and log files; InputError naming a file or
    folder that cannot be read, as the OS says (permission denied)."""
    calls: list[LibraryCall] = []
    for path in paths:
        with _named(path):
            if path.is_dir():
                calls.extend(_from_run_dir(path, warnings))
            elif path.is_file():
                for tr in _tracers_for(path):
                    calls.extend(parse_file(path, tr, warnings))
            else:
                raise InputError(f"{path}: no such file or directory (expected a log or a run dir)")
    return calls


def log_files(paths: Iterable[Path]) -> list[Path]:
    """Every file `calls_from_paths` would read in `paths`."""
    found = []
    for path in paths:
        with _named(path):
            found += _run_dir_files(path) if path.is_dir() else [path]
    return found


@contextlib.contextmanager
def _named(path: Path) -> Iterator[None]:
    """OSError while reading `path` → InputError naming the file (the OS's reason)."""
    try:
        yield
    except OSError as error:
        where = error.filename if error.filename is not None else path
        why = error.strerror or str(error)
        raise InputError(f"{os.fsdecode(where)}: {why[:1].lower()}{why[1:]}") from None


def _run_dir_files(run_dir: Path) -> list[Path]:
    """A run directory's known log files (its ranks' folders' too); in any other directory,
    those and every other log file in it."""
    folders = (run_dir, *rank_folders(run_dir))
    files = {p for tr in TRACERS.values() for d in folders for p in tr.log_files(d)}
    if not (run_dir / "manifest.json").is_file():
        files |= {p for p in run_dir.iterdir() if p.is_file() and p.suffix in _LOG_SUFFIXES}
    return sorted(files)


def _from_run_dir(run_dir: Path, warnings: list[str]) -> list[LibraryCall]:
    calls: list[LibraryCall] = []
    for path in _run_dir_files(run_dir):
        for tr in _tracers_for(path):
            calls.extend(parse_file(path, tr, warnings))
    return calls


def _tracers_for(path: Path) -> list[Tracer]:
    """The tracers whose log-file name matches `path`, or every tracer for an unknown name."""
    named = [tr for tr in TRACERS.values() if _matches(tr, path.name)]
    candidates = named or list(TRACERS.values())
    if any(tr.tool in _COLLECTIVE_TOOLS for tr in candidates):
        drop = "nccl_trace" if _is_rccl(path) else "rccl_trace"
        candidates = [tr for tr in candidates if tr.tool != drop]
    return candidates


def _matches(tr: Tracer, name: str) -> bool:
    patterns = tr.logs + tuple(STREAM_FILES[s] for s in tr.streams)
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def _is_rccl(path: Path) -> bool:
    with path.open(encoding="utf-8", errors="replace") as handle:
        return any(looks_like_rccl(line) for line in handle)
