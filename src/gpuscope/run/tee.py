"""Copy the command's stdout or stderr into files while still passing it through.

Only used when a tool asks for it (Tensile and MIOpen print their logs on stdout/stderr, with
no file destination of their own); otherwise the command's streams are left untouched. The
copy is written as it arrives, so it survives a kill. Note that the command then writes into
a pipe, not the terminal: programs that change behaviour on a terminal (colours, buffering)
see the difference.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

STREAM_FDS = {"stdout": 1, "stderr": 2}
_CHUNK = 1 << 16
_JOIN_S = 5.0


class Tee:
    """`with Tee({"stderr": [path]}) as fds:` -> {2: write_fd} to give the child."""

    def __init__(self, streams: Mapping[str, Sequence[Path]]) -> None:
        self._streams = {STREAM_FDS[name]: list(paths) for name, paths in streams.items()}
        self._write_ends: dict[int, int] = {}
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> dict[int, int]:
        for fd, paths in self._streams.items():
            read_end, write_end = os.pipe()
            pump = threading.Thread(target=_pump, args=(read_end, fd, paths), daemon=True)
            pump.start()
            self._threads.append(pump)
            self._write_ends[fd] = write_end
        return dict(self._write_ends)

    def child_started(self) -> None:
        """Drop our copies of the write ends, so the pumps see EOF when the child is done."""
        for write_end in self._write_ends.values():
            os.close(write_end)
        self._write_ends.clear()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.child_started()
        for pump in self._threads:
            pump.join(_JOIN_S)  # a daemon grandchild may keep the pipe open: don't hang


def _pump(read_end: int, out_fd: int, paths: Sequence[Path]) -> None:
    files = [path.open("ab") for path in paths]
    passthrough = True
    try:
        while chunk := os.read(read_end, _CHUNK):
            passthrough = passthrough and _write_all(out_fd, chunk)
            for file in files:
                file.write(chunk)
                file.flush()
    finally:
        os.close(read_end)
        for file in files:
            file.close()


def _write_all(fd: int, data: bytes) -> bool:
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:  # our own stdout went away: keep filling the files
        return False
    return True
