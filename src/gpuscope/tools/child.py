"""Run the wrapped command: exit code passed through, SIGINT/SIGTERM/SIGHUP forwarded.

`deferred_signals()` blocks those signals (and SIGCHLD) in gpuscope for the whole run, before
any tool starts a thread, so that no thread is interrupted halfway through saving outputs.
While the child runs, `run_child` waits for them with `sigtimedwait`, which also says who sent
each one: a signal sent to gpuscope alone (`kill`, a batch system) is forwarded to the child;
a Ctrl-C typed at the terminal already reached the child, which shares gpuscope's process
group, so it is not sent twice. Signals arriving during setup cancel the start; during
teardown they wait until every tool has saved its outputs. (Where `sigtimedwait` does not
exist, e.g. macOS, every such signal is forwarded.)

A child that is still running `kill_after_s` seconds after the first stop signal (it ignores
SIGTERM, or its own shutdown hangs) is killed with SIGKILL, as a batch system does after its kill
wait, so that the run ends, the tools tear down and the manifest is written in bounded time.

The exit code is the child's own, 128+N when a signal N killed it (as shells report it).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from gpuscope.tools.command import spawn_error
from gpuscope.tools.tee import Tee

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
KILL_AFTER_S = 30.0  # grace between the first stop signal and SIGKILL (a batch system's kill wait)
_WATCHED = {*FORWARDED, signal.SIGCHLD}
_SI_KERNEL = 0x80  # si_code of a signal the kernel raised itself, e.g. the terminal's Ctrl-C
_POLL_S = 1.0
_CAN_WAIT = hasattr(signal, "sigtimedwait") and hasattr(signal, "pthread_sigmask")


@dataclass
class Signals:
    """Signals gpuscope received during the run, by name, in order."""

    received: list[str] = field(default_factory=list)
    forwarded: list[str] = field(default_factory=list)
    escalated_after_s: float | None = None  # SIGKILL sent this long after the first stop signal

    def pending_stop(self) -> bool:
        """True (and recorded) if SIGINT/SIGTERM/SIGHUP arrived before the child started."""
        if not _CAN_WAIT:
            return False
        pending = signal.sigpending() & set(FORWARDED)
        self.received.extend(signal.Signals(signo).name for signo in sorted(pending))
        return bool(pending)


@dataclass(frozen=True)
class ChildResult:
    pid: int
    exit_code: int
    signal: str | None  # the signal that killed the child, if one did


@contextmanager
def deferred_signals(signals: Signals) -> Iterator[Signals]:
    """Hold SIGINT/SIGTERM/SIGHUP/SIGCHLD for the duration; record and drop the leftovers."""
    if not _CAN_WAIT:
        yield signals
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    try:
        yield signals
    finally:
        _drain(signals)
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _drain(signals: Signals) -> None:
    while (info := signal.sigtimedwait(_WATCHED, 0)) is not None:
        if info.si_signo != signal.SIGCHLD:
            signals.received.append(signal.Signals(info.si_signo).name)


def run_child(
    argv: Sequence[str],
    env: Mapping[str, str],
    signals: Signals,
    on_start: Callable[[int], None] | None = None,
    tee: Mapping[str, Sequence[Path]] | None = None,
    kill_after_s: float = KILL_AFTER_S,
) -> ChildResult:
    """Start `argv` (argv[0] already resolved to a path), wait, return its exit code.
    `tee` copies the child's "stdout"/"stderr" into files as well (see tee.py)."""
    copier = Tee(tee or {})
    with copier as tee_fds:
        pid = _spawn(argv, env, tee_fds)
        copier.child_started()
        if on_start is not None:
            on_start(pid)
        escalation = _Escalation(pid, signals, kill_after_s)
        if _CAN_WAIT:
            return _wait(pid, signals, escalation)
        return _wait_portable(pid, signals, escalation)


class _Escalation:
    """SIGKILL for a child still alive `grace_s` after the first stop signal."""

    def __init__(self, pid: int, signals: Signals, grace_s: float) -> None:
        self.pid, self.signals, self.grace_s = pid, signals, grace_s
        self.stopped_at: float | None = None

    def stop_requested(self) -> None:
        if self.stopped_at is None:
            self.stopped_at = time.monotonic()

    def timeout(self, poll_s: float) -> float:
        """How long the next wait may last."""
        if self.stopped_at is None:
            return poll_s
        return max(0.0, min(poll_s, self.stopped_at + self.grace_s - time.monotonic()))

    def check(self) -> None:
        if self.stopped_at is None or self.signals.escalated_after_s is not None:
            return
        waited = time.monotonic() - self.stopped_at
        if waited < self.grace_s:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        self.signals.forwarded.append("SIGKILL")
        self.signals.escalated_after_s = round(waited, 3)


def _spawn(argv: Sequence[str], env: Mapping[str, str], tee_fds: Mapping[int, int]) -> int:
    # The pipes are close-on-exec; dup2 onto 1/2 gives the child its own inheritable copy.
    actions = [(os.POSIX_SPAWN_DUP2, write_end, fd) for fd, write_end in tee_fds.items()]
    try:
        return os.posix_spawn(
            argv[0], list(argv), dict(env), file_actions=actions,
            setsigmask=(), setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
        )  # fmt: skip
    except OSError as error:
        raise spawn_error(argv[0], error) from None


def _wait(pid: int, signals: Signals, escalation: _Escalation) -> ChildResult:
    while True:
        info = signal.sigtimedwait(_WATCHED, escalation.timeout(_POLL_S))
        if info is not None and info.si_signo != signal.SIGCHLD:
            from_terminal = info.si_code == _SI_KERNEL and _same_group(pid)
            _forward(pid, info.si_signo, signals, skip=from_terminal)
            escalation.stop_requested()
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return _result(pid, os.waitstatus_to_exitcode(status))
        escalation.check()


def _forward(pid: int, signo: int, signals: Signals, skip: bool = False) -> None:
    name = signal.Signals(signo).name
    signals.received.append(name)
    if skip:
        return  # typed at the terminal: the child, in our process group, got it already
    try:
        os.kill(pid, signo)
    except ProcessLookupError:
        return
    signals.forwarded.append(name)


def _same_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == os.getpgrp()
    except ProcessLookupError:
        return False


def _result(pid: int, code: int) -> ChildResult:
    if code >= 0:
        return ChildResult(pid=pid, exit_code=code, signal=None)
    return ChildResult(pid=pid, exit_code=128 - code, signal=signal.Signals(-code).name)


def _wait_portable(pid: int, signals: Signals, escalation: _Escalation) -> ChildResult:
    """Without sigtimedwait: Python handlers forward every SIGINT/SIGTERM/SIGHUP."""

    def forward(signo: int, frame: FrameType | None) -> None:
        del frame
        _forward(pid, signo, signals)
        escalation.stop_requested()

    previous = {signo: signal.signal(signo, forward) for signo in FORWARDED}
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return _result(pid, os.waitstatus_to_exitcode(status))
            escalation.check()
            time.sleep(0.01)
    finally:
        for signo, handler in previous.items():
            signal.signal(signo, handler)
