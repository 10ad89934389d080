"""The terminal, handed to the command's process group as a shell hands it to a job.

The command runs in a process group of its own (child.py), under gpuscope's session: it keeps
gpuscope's controlling terminal and writes to it, but as a background group it would be stopped
by SIGTTIN when it reads from it (`input()`, `breakpoint()`, a password prompt). So when
gpuscope is the terminal's foreground job, it makes the command's group the foreground group
for the run (`tcsetpgrp`) and takes the terminal back at the end: the keys (Ctrl-C, Ctrl-Z,
Ctrl-\\) then reach every process of the command directly, as they would without gpuscope.

When the command stops (Ctrl-Z, or a read from the background) gpuscope takes the terminal back
and stops itself, so that the shell sees its job stopped; `fg` gives the terminal to the command
again, and `fg` or `bg` continues it. Without a controlling terminal (batch jobs, CI, `setsid`)
none of this happens.
"""

from __future__ import annotations

import contextlib
import os
import signal
from types import TracebackType


class Terminal:
    """`with Terminal.open() as terminal:`; `active` when gpuscope has a controlling terminal."""

    def __init__(self, fd: int | None) -> None:
        self._fd = fd
        self._pgid: int | None = None

    @classmethod
    def open(cls) -> Terminal:
        try:
            return cls(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC))
        except OSError:  # no controlling terminal
            return cls(None)

    @property
    def active(self) -> bool:
        return self._fd is not None

    def give(self, pgid: int) -> None:
        """Make group `pgid` the foreground one if gpuscope's group is, and holds gpuscope alone
        (in a pipeline such as `gpuscope run … | less` the terminal stays with the pipeline);
        the command may have read the terminal before it was its own (and been stopped):
        continue it."""
        self._pgid = pgid
        own = os.getpgrp()
        if self._fd is not None and _foreground(self._fd, own) and _alone_in_group(own):
            _set_foreground(self._fd, pgid)
            _continue(pgid)

    def stopped(self) -> None:
        """The command stopped: stop gpuscope as well (the shell sees its job stopped), and
        continue the command when gpuscope is continued (fg, bg)."""
        if self._pgid is None:
            return
        self.take_back()
        os.kill(os.getpid(), signal.SIGSTOP)
        self.resumed()

    def resumed(self) -> None:
        """gpuscope was continued: the command too, in the foreground if gpuscope is."""
        if self._pgid is not None:
            self.give(self._pgid)
            _continue(self._pgid)

    def take_back(self) -> None:
        if self._fd is not None and self._pgid is not None and _foreground(self._fd, self._pgid):
            _set_foreground(self._fd, os.getpgrp())

    def __enter__(self) -> Terminal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.take_back()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _foreground(fd: int, pgid: int) -> bool:
    try:
        return os.tcgetpgrp(fd) == pgid
    except OSError:
        return False


def _set_foreground(fd: int, pgid: int) -> None:
    # from a background group tcsetpgrp raises SIGTTOU unless it is blocked (as shells do)
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
    try:
        os.tcsetpgrp(fd, pgid)
    except OSError:  # the group is gone
        pass
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _alone_in_group(pgid: int) -> bool:
    from gpuscope.run import procs

    return not any(procs.scan(pgid, None, exclude=(os.getpid(),)))


def _continue(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGCONT)
