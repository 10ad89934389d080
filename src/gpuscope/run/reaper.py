"""The command's processes as one job: signalled together, and none left behind at the end.

The command runs in a process group of its own whose id is its pid (child.py). `Group` signals
that group, SIGKILLs it at --kill-after, and at the end ends whatever is left of it — SIGTERM,
a short grace, SIGKILL — as a batch system ends a job's processes. Processes that left the group
(`setsid`, a daemon) are found by the marker gpuscope put in the command's environment
(`GPUSCOPE_JOB=…`, inherited by every descendant that keeps its environment). Every process met
this way is recorded as a `Survivor`: what it was, how it was found, what ended it.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass

from gpuscope.run import procs
from gpuscope.run.procs import Proc

KILL_WAIT_S = 1.0  # how long a SIGKILLed process may take to be gone (GPU contexts torn down)
_POLL_S = 0.02
_STRENGTH = {None: 0, "SIGTERM": 1, "SIGKILL": 2}


@dataclass(frozen=True)
class Survivor:
    """A process of the command that gpuscope had to end (not the command itself)."""

    pid: int
    command: tuple[str, ...]  # its command line, from /proc
    found: str  # "process group", or "environment" (it had left the group)
    signal: str | None  # the last signal gpuscope sent it; None: it could not be signalled
    ended: bool  # False: still running when gpuscope finished (another user's, or unkillable)

    def to_dict(self) -> dict[str, object]:
        return {"pid": self.pid, "command": list(self.command), "found": self.found,
                "signal": self.signal, "ended": self.ended}  # fmt: skip


class Group:
    """The process group `pgid` (= the command's pid) and the run's processes outside it."""

    def __init__(self, pgid: int, marker: str | None = None) -> None:
        self.pgid = pgid
        self._marker = marker.encode() if marker else None
        self._seen: dict[Proc, tuple[tuple[str, ...], str, str | None]] = {}

    def signal(self, signo: int) -> bool:
        """Send `signo` to every process of the group; False if the group is empty."""
        try:
            os.killpg(self.pgid, signo)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def alive(self) -> bool:
        """Whether a process of the group still runs (zombies do not count)."""
        if not procs.available():
            return self.signal(0)
        return any(found == "process group" for _, found in self._scan())

    def kill(self) -> None:
        """SIGKILL the whole group now (--kill-after), recording its members."""
        self._send(self._members(), signal.SIGKILL)

    def terminate(self) -> None:
        """SIGTERM the whole group now (what outlived the command), recording its members."""
        self._send(self._members(), signal.SIGTERM)

    def reap(self, grace_s: float) -> tuple[Survivor, ...]:
        """End every process of the run still running: SIGTERM, then SIGKILL after `grace_s`."""
        if not procs.available():
            self._reap_blind(grace_s)
            return ()
        _wait_gone(self._seen, KILL_WAIT_S)  # those SIGKILLed at --kill-after
        for signo, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, KILL_WAIT_S)):
            left = list(self._scan())
            if not left:
                break
            self._send(left, signo)
            _wait_gone([proc for proc, _ in left], wait_s)
        return tuple(self._survivor(proc) for proc in self._seen)

    def _members(self) -> list[tuple[Proc, str]]:
        return [(proc, found) for proc, found in self._scan() if found == "process group"]

    def _scan(self) -> Iterable[tuple[Proc, str]]:
        return procs.scan(self.pgid, self._marker, exclude=(self.pgid, os.getpid()))

    def _send(self, found: list[tuple[Proc, str]], signo: int) -> None:
        for proc, how in found:  # command lines first: a dying process has none
            self._seen.setdefault(proc, (tuple(procs.command(proc.pid)), how, None))
        name = signal.Signals(signo).name
        group_signalled = self.signal(signo)  # atomic: members forked since the scan too
        for proc, how in found:
            sent = group_signalled if how == "process group" else _kill(proc.pid, signo)
            self._note(proc, name if sent else None)

    def _note(self, proc: Proc, sent: str | None) -> None:
        command, found, before = self._seen[proc]
        strongest = sent if _STRENGTH[sent] > _STRENGTH[before] else before
        self._seen[proc] = (command, found, strongest)

    def _survivor(self, proc: Proc) -> Survivor:
        command, found, sent = self._seen[proc]
        return Survivor(proc.pid, command, found, sent, ended=not procs.alive(proc))

    def _reap_blind(self, grace_s: float) -> None:
        """Without /proc: the group alone, unlisted."""
        if self.signal(signal.SIGTERM):
            deadline = time.monotonic() + grace_s
            while self.signal(0) and time.monotonic() < deadline:
                time.sleep(_POLL_S)
            self.signal(signal.SIGKILL)


def _kill(pid: int, signo: int) -> bool:
    try:
        os.kill(pid, signo)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _wait_gone(watched: Iterable[Proc], timeout_s: float) -> None:
    left = list(watched)
    deadline = time.monotonic() + timeout_s
    while (left := [p for p in left if procs.alive(p)]) and time.monotonic() < deadline:
        time.sleep(_POLL_S)
