"""Run the wrapped command as a job: its own process group, signals forwarded to all of it,
nothing left behind, its exit code passed through.

**A process group of its own.** The command is spawned as the leader of a new process group
(`posix_spawn(setpgroup=0)`), as a batch system starts a job: every process it starts belongs to
that group unless it leaves it, so gpuscope can signal and clean up all of them, not only the
direct child (`bash -c "python train.py & wait"`). A new group rather than a new session
(`setsid`): the command keeps gpuscope's controlling terminal, so it still writes to it, and
when gpuscope is the terminal's foreground job the terminal is handed to the command's group for
the run (_terminal.py), so that it can read from it and the keys (Ctrl-C, Ctrl-Z) reach all of
it — a shell's job control, with gpuscope standing in for the job.

**Signals.** `deferred_signals()` blocks SIGINT/SIGTERM/SIGHUP (with SIGCHLD, SIGCONT, SIGTSTP)
in gpuscope for the whole run, before any tool starts a thread, so that no thread is interrupted
halfway through saving outputs. While the command runs, `run_child` takes them with
`sigtimedwait`: SIGINT, SIGTERM and SIGHUP sent to gpuscope (`kill`, a batch system's time
limit, a Ctrl-C typed while gpuscope keeps the terminal, e.g. in a pipeline) are forwarded to
the whole group, as are SIGTSTP and SIGCONT. Signals arriving during setup cancel the start;
during teardown they wait until every tool has saved its outputs. (Where `sigtimedwait` does not
exist, e.g. macOS, Python handlers forward the stop signals.)

**The end of the job.** After a stop signal the job ends when all its processes have (those
left when the command has ended get SIGTERM if they were only sent SIGINT or SIGHUP, which a
script's background jobs ignore): if any process of the group is still running `kill_after_s`
seconds after the first stop signal (it ignores SIGTERM, its shutdown hangs), the whole group is
killed with SIGKILL, as a batch system does after its kill wait. Then whatever is left —
processes still in the group, and those that left it but carry the run's marker in their
environment (reaper.py) — gets SIGTERM and, after a short grace, SIGKILL; each one is recorded as
a `Survivor`.

The exit code is the command's own, 128+N when a signal N killed it (as shells report it).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from gpuscope.run._terminal import Terminal
from gpuscope.run.command import spawn_error
from gpuscope.run.reaper import Group, Survivor
from gpuscope.run.tee import Tee

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
KILL_AFTER_S = 30.0  # grace between the first stop signal and SIGKILL (a batch system's kill wait)
REAP_GRACE_S = 2.0  # SIGTERM to SIGKILL for what is left at the end (at most kill_after_s)
_JOB_CONTROL = (signal.SIGTSTP, signal.SIGCONT)
_WATCHED = {*FORWARDED, *_JOB_CONTROL, signal.SIGCHLD}
_POLL_S = 1.0  # the command's exit wakes the wait (SIGCHLD); this bounds a missed wake-up
_GROUP_POLL_S = 0.05  # its other processes are not gpuscope's children: they are polled
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
    survivors: tuple[Survivor, ...] = ()  # other processes of the command that had to be ended
    # the command's own wall time: its start to the end of its job (the rest of its group,
    # after a stop signal); not the cleanup below
    duration_s: float | None = None
    # ending what the command left running once it had ended (SIGTERM, a grace of up to
    # REAP_GRACE_S for a process that ignores it, SIGKILL): gpuscope's time, not the command's
    cleanup_s: float | None = None


@contextmanager
def deferred_signals(signals: Signals) -> Iterator[Signals]:
    """Hold SIGINT/SIGTERM/SIGHUP/SIGCHLD (and job control) for the duration; record and drop
    the leftovers."""
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
        if info.si_signo in FORWARDED:
            signals.received.append(signal.Signals(info.si_signo).name)


def run_child(
    argv: Sequence[str],
    env: Mapping[str, str],
    signals: Signals,
    on_start: Callable[[int], None] | None = None,
    tee: Mapping[str, Sequence[Path]] | None = None,
    kill_after_s: float = KILL_AFTER_S,
    marker: str | None = None,
) -> ChildResult:
    """Start `argv` (argv[0] already resolved to a path) in a process group of its own, wait for
    it and for the rest of its group, end what is left, return its exit code.
    `tee` copies the child's "stdout"/"stderr" into files as well (see tee.py); `marker`, a
    `NAME=value` entry of `env`, finds the processes that left the group (reaper.py)."""
    copier = Tee(tee or {})
    with copier as tee_fds, Terminal.open() as terminal:
        started = time.monotonic()
        pid = _spawn(argv, env, tee_fds)
        group = Group(pid, marker)
        try:
            terminal.give(pid)
            copier.child_started()
            if on_start is not None:
                on_start(pid)
            code = _Supervisor(pid, group, signals, terminal, kill_after_s).run()
        except BaseException:
            _abandon(pid, group)
            raise
        ended = time.monotonic()
        terminal.take_back()
        survivors = group.reap(min(kill_after_s, REAP_GRACE_S))
        times = (round(ended - started, 6), round(time.monotonic() - ended, 6))
    return _result(pid, code, survivors, times)


def _spawn(argv: Sequence[str], env: Mapping[str, str], tee_fds: Mapping[int, int]) -> int:
    # The pipes are close-on-exec; dup2 onto 1/2 gives the child its own inheritable copy.
    actions = [(os.POSIX_SPAWN_DUP2, write_end, fd) for fd, write_end in tee_fds.items()]
    try:
        return os.posix_spawn(
            argv[0], list(argv), dict(env), file_actions=actions, setpgroup=0,
            setsigmask=(), setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
        )  # fmt: skip
    except OSError as error:
        raise spawn_error(argv[0], error) from None


def _abandon(pid: int, group: Group) -> None:
    """gpuscope failed while the command ran: never leave it running unsupervised."""
    group.signal(signal.SIGKILL)
    with suppress(ChildProcessError):
        os.waitpid(pid, 0)


class _Supervisor:
    """Waits for the command, then for its group, forwarding signals and escalating."""

    def __init__(
        self, pid: int, group: Group, signals: Signals, terminal: Terminal, grace_s: float
    ) -> None:
        self.pid, self.group, self.signals, self.terminal = pid, group, signals, terminal
        self.escalation = _Escalation(group, signals, grace_s)

    def run(self) -> int:
        with _waiter() as waiter:
            code = self._wait_command(waiter)
            self._wait_group(waiter)
        return code

    def _wait_command(self, waiter: _Waiter) -> int:
        options = os.WNOHANG | (os.WUNTRACED if self.terminal.active else 0)
        while True:
            self._dispatch(waiter.next(self.escalation.timeout(_POLL_S)))
            done, status = os.waitpid(self.pid, options)
            if done == self.pid and os.WIFSTOPPED(status):
                self.terminal.stopped()  # Ctrl-Z, or a read from the background
            elif done == self.pid:
                return os.waitstatus_to_exitcode(status)
            self.escalation.check()

    def _wait_group(self, waiter: _Waiter) -> None:
        """After a stop signal the job ends when all of it has, or at the --kill-after deadline
        (its other processes may be saving a checkpoint); without one, what outlived the
        command is a leftover, for the reaper."""
        escalation = self.escalation
        if escalation.stopped_at is None or escalation.fired or not self.group.alive():
            return
        if "SIGTERM" not in self.signals.forwarded:
            # a script's background jobs ignore SIGINT (POSIX), nohup's SIGHUP: SIGTERM them
            self.group.terminate()
            self.signals.forwarded.append("SIGTERM")
        while not escalation.fired and self.group.alive():
            self._dispatch(waiter.next(escalation.timeout(_GROUP_POLL_S)))
            escalation.check()

    def _dispatch(self, signo: int | None) -> None:
        if signo is None or signo == signal.SIGCHLD:
            return
        if signo in FORWARDED:
            name = signal.Signals(signo).name
            self.signals.received.append(name)
            if self.group.signal(signo):
                self.signals.forwarded.append(name)
            self.escalation.stop_requested()
        elif signo == signal.SIGTSTP:
            self.group.signal(signo)  # the command stops; with a terminal, gpuscope follows
        elif signo == signal.SIGCONT:
            self.terminal.resumed()


class _Escalation:
    """SIGKILL for the group still alive `grace_s` after the first stop signal."""

    def __init__(self, group: Group, signals: Signals, grace_s: float) -> None:
        self.group, self.signals, self.grace_s = group, signals, grace_s
        self.stopped_at: float | None = None

    @property
    def fired(self) -> bool:
        return self.signals.escalated_after_s is not None

    def stop_requested(self) -> None:
        if self.stopped_at is None:
            self.stopped_at = time.monotonic()

    def timeout(self, poll_s: float) -> float:
        """How long the next wait may last."""
        if self.stopped_at is None or self.fired:
            return poll_s
        return max(0.0, min(poll_s, self.stopped_at + self.grace_s - time.monotonic()))

    def check(self) -> None:
        if self.stopped_at is None or self.fired:
            return
        waited = time.monotonic() - self.stopped_at
        if waited < self.grace_s:
            return
        self.group.kill()
        self.signals.forwarded.append("SIGKILL")
        self.signals.escalated_after_s = round(waited, 3)


class _Waiter:
    """The next signal for gpuscope within `timeout` seconds (None: none came)."""

    def next(self, timeout: float) -> int | None:
        info = signal.sigtimedwait(_WATCHED, timeout)
        return None if info is None else info.si_signo

    def __enter__(self) -> _Waiter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


class _HandlerWaiter(_Waiter):
    """Without sigtimedwait: Python handlers queue the stop signals."""

    def __init__(self) -> None:
        self._queue: list[int] = []
        self._previous: dict[int, Any] = {}

    def next(self, timeout: float) -> int | None:
        if not self._queue:
            time.sleep(min(timeout, 0.01))
        return self._queue.pop(0) if self._queue else None

    def __enter__(self) -> _Waiter:
        def queue(signo: int, frame: FrameType | None) -> None:
            del frame
            self._queue.append(signo)

        self._previous = {signo: signal.signal(signo, queue) for signo in FORWARDED}
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for signo, handler in self._previous.items():
            signal.signal(signo, handler)


def _waiter() -> _Waiter:
    return _Waiter() if _CAN_WAIT else _HandlerWaiter()


def _result(
    pid: int, code: int, survivors: tuple[Survivor, ...], times: tuple[float, float]
) -> ChildResult:
    duration_s, cleanup_s = times
    name = signal.Signals(-code).name if code < 0 else None
    exit_code = 128 - code if code < 0 else code
    return ChildResult(pid, exit_code, name, survivors, duration_s, cleanup_s)
