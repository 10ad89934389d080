"""`gpuscope run` in an interactive terminal (a pseudo-terminal here): the command, in a process
group of its own, still reads the terminal, and Ctrl-C / Ctrl-Z typed there reach it."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable
# a session of its own whose controlling terminal is the pty on stdin, then gpuscope in it:
# gpuscope is the terminal's foreground job, as when typed at a shell prompt
_SESSION = "import os, sys; os.setsid(); os.close(os.open(os.ttyname(0), os.O_RDWR)); " \
    "os.execv(sys.executable, [sys.executable, '-m', 'gpuscope', *sys.argv[1:]])"  # fmt: skip

pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")


class Terminal:
    def __init__(self, tmp_path: Path, script: str) -> None:
        self.master, slave = os.openpty()
        argv = [PY, "-c", _SESSION, "run", "--output-dir", str(tmp_path / "runs"),
                "--", "bash", "-c", script]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env)
        os.close(slave)
        self.seen = b""

    def expect(self, text: bytes, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.seen and time.monotonic() < deadline:
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    self.seen += os.read(self.master, 4096)
                except OSError:  # the other side closed
                    break
        assert text in self.seen, self.seen

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def exit_code(self) -> int:
        code = self.process.wait(timeout=30)
        self.expect(b"see manifest.json")
        return code

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for one in opened:
        one.close()


def _open(opened: list[Terminal], tmp_path: Path, script: str) -> Terminal:
    opened.append(Terminal(tmp_path, script))
    return opened[-1]


READS = 'echo ready; read line; echo "got $line"'


def test_the_command_reads_the_terminal(tmp_path: Path, terminal: list[Terminal]) -> None:
    tty = _open(terminal, tmp_path, READS)
    tty.expect(b"ready")
    tty.type(b"hello\n")
    tty.expect(b"got hello")
    assert tty.exit_code() == 0


def test_ctrl_c_typed_reaches_the_whole_command(tmp_path: Path, terminal: list[Terminal]) -> None:
    tty = _open(terminal, tmp_path, "sleep 30 & echo ready; wait")
    tty.expect(b"ready")
    tty.type(b"\x03")
    assert tty.exit_code() == 128 + signal.SIGINT


def test_ctrl_z_stops_gpuscope_with_the_command_and_fg_continues_both(
    tmp_path: Path, terminal: list[Terminal]
) -> None:
    tty = _open(terminal, tmp_path, READS)
    tty.expect(b"ready")
    tty.type(b"\x1a")
    _, status = os.waitpid(tty.process.pid, os.WUNTRACED)  # what a shell sees of its job
    assert os.WIFSTOPPED(status)
    os.kill(tty.process.pid, signal.SIGCONT)  # `fg`
    tty.type(b"hello\n")
    tty.expect(b"got hello")
    assert tty.exit_code() == 0
