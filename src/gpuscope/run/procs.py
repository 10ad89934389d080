"""Processes as Linux's /proc shows them: the members of a process group, the processes whose
environment carries a marker, and whether a process seen earlier is still the same and alive.

A process is identified by its pid *and* its start time (field 22 of /proc/PID/stat), so that
a pid reused by an unrelated process is never taken for the one seen before. Zombies (exited,
not yet reaped by their parent) count as gone: they hold no memory and cannot be signalled away.
Where /proc does not exist (macOS) nothing is found; callers fall back on `killpg`.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass

_GONE_STATES = ("Z", "X")  # zombie, dead


@dataclass(frozen=True)
class Proc:
    pid: int
    start: int  # clock ticks after boot: with the pid, the identity of the process
    pgid: int
    state: str


def available() -> bool:
    return os.path.isdir("/proc/self")


def read(pid: int) -> Proc | None:
    """The process `pid` now, or None if there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2 :].split()  # the name (2nd field) may hold spaces
    return Proc(pid=pid, start=int(fields[19]), pgid=int(fields[2]), state=fields[0].decode())


def alive(proc: Proc) -> bool:
    """Whether `proc` still runs: same pid, same start time, not a zombie."""
    now = read(proc.pid)
    return now is not None and now.start == proc.start and now.state not in _GONE_STATES


def scan(pgid: int, marker: bytes | None, exclude: Collection[int]) -> Iterator[tuple[Proc, str]]:
    """Live processes of group `pgid` ("process group"), and those outside it whose environment
    holds the `NAME=value` entry `marker` ("environment"); pids in `exclude` are skipped."""
    for pid in _pids():
        proc = None if pid in exclude else read(pid)
        if proc is None or proc.state in _GONE_STATES:
            continue
        if proc.pgid == pgid:
            yield proc, "process group"
        elif marker is not None and _has_entry(pid, marker):
            yield proc, "environment"


def command(pid: int) -> list[str]:
    """The command line of `pid` (its name in brackets when it has none, [] if it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            data = cmdline.read()
        if data:
            return [arg.decode(errors="replace") for arg in data.rstrip(b"\0").split(b"\0")]
        with open(f"/proc/{pid}/comm", "rb") as comm:
            return [f"[{comm.read().strip().decode(errors='replace')}]"]
    except OSError:
        return []


def _pids() -> Iterator[int]:
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    yield from (int(name) for name in entries if name.isdigit())


def _has_entry(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            data = environ.read()
    except OSError:  # another user's process, or gone
        return False
    return b"\0" + marker + b"\0" in b"\0" + data + b"\0"
