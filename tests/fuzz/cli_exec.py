"""Run one planned command line as a user's shell would, in its own session, and collect what it
did: exit status, stdout, stderr, the bytes that reached its FIFOs and descriptors, and every
process of its session still there after it ended (then killed).

As root, a plan that depends on file permissions runs without CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH (setpriv), as tests/integration/test_data_safety.py does.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.fuzz.cli_commands import Plan
from tests.fuzz.cli_targets import FD

REPO = Path(__file__).resolve().parents[2]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
NO_DAC = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]
GRACE_S = 1.0  # how long a process of the session may take to go after the command ended


@dataclass
class Ran:
    pid: int
    rc: int | None  # None: still running at the timeout (then killed)
    stdout: bytes
    stderr: bytes
    streams: dict[str, bytes] = field(default_factory=dict)  # "fd" or a FIFO's path → bytes
    survivors: list[str] = field(default_factory=list)  # "PID NAME (STATE)"


class _Drain(threading.Thread):
    """Reads a descriptor until its end, or until told to stop (then takes what is left)."""

    def __init__(self, fd: int) -> None:
        super().__init__(daemon=True)
        os.set_blocking(fd, False)
        self.fd, self.data, self.stop = fd, bytearray(), threading.Event()
        self.start()

    def run(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready and not self._read():
                return
            if not ready and self.stop.is_set():
                return

    def _read(self) -> bool:
        try:
            chunk = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return True
        self.data += chunk
        return bool(chunk)

    def finish(self) -> bytes:
        self.stop.set()
        self.join()
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self.fd, 1 << 16):
                self.data += chunk
        os.close(self.fd)
        return bytes(self.data)


def execute(plan: Plan, folder: Path, tmp: Path, timeout: float) -> Ran:
    """Run `plan` with `folder` as working directory and `tmp` as TMPDIR."""
    argv = [sys.executable, "-m", "gpuscope", *plan.argv]
    if plan.no_dac and os.geteuid() == 0 and shutil.which("setpriv"):
        argv = NO_DAC + argv
    with contextlib.ExitStack() as stack:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdout = _stdout(plan.stdout, out_r, out_w, stack)
        drains = {"stdout": _Drain(out_r)} if plan.stdout == "pipe" else {}
        drains["stderr"] = _Drain(err_r)
        for out in plan.outputs:
            if out.stream.startswith("fifo:"):
                path = out.stream[5:]
                drains[path] = _Drain(os.open(path, os.O_RDWR | os.O_NONBLOCK))
        fds: tuple[int, ...] = ()
        if any(o.stream == "fd" for o in plan.outputs):
            read_end, write_end = os.pipe()
            drains["fd"] = _Drain(read_end)
            stack.enter_context(_as_descriptor(write_end, FD))
            fds = (FD,)
        process = subprocess.Popen(
            argv, cwd=folder, env=_env(plan, tmp), stdin=subprocess.DEVNULL, stdout=stdout,
            stderr=err_w, pass_fds=fds, start_new_session=True,
        )  # fmt: skip
        for fd in {out_w, err_w}:
            os.close(fd)
        stack.close()  # the parent's copies of the command's descriptors
        rc = _wait(process, timeout)
        survivors = _survivors(process.pid)
        data = {name: drain.finish() for name, drain in drains.items()}
    stdout_bytes, stderr_bytes = data.pop("stdout", b""), data.pop("stderr")
    return Ran(process.pid, rc, stdout_bytes, stderr_bytes, data, survivors)


def _stdout(mode: str, read_end: int, write_end: int, stack: contextlib.ExitStack) -> int:
    """Where the command's standard output goes: a pipe we read, a pipe whose reader is gone,
    or a full disk."""
    if mode == "closed":
        os.close(read_end)
    if mode != "full":
        return write_end
    os.close(read_end)
    full = os.open("/dev/full", os.O_WRONLY)
    stack.callback(os.close, full)
    return full


@contextlib.contextmanager
def _as_descriptor(fd: int, number: int) -> Iterator[None]:
    """`fd` as descriptor `number` (inherited) while the command starts; whatever held that
    number in this process is put back after."""
    try:
        saved: int | None = os.dup(number)
    except OSError:
        saved = None
    os.dup2(fd, number, inheritable=True)
    os.close(fd)
    try:
        yield
    finally:
        if saved is None:
            os.close(number)
        else:
            os.dup2(saved, number, inheritable=False)
            os.close(saved)


def _env(plan: Plan, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV_"))}
    env.update(TMPDIR=str(tmp), COLUMNS="100")
    if plan.fake_bin:
        env["PATH"] = f"{FAKE_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def _wait(process: subprocess.Popen[bytes], timeout: float) -> int | None:
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return None


def _survivors(leader: int) -> list[str]:
    """Processes of the command's session or process group still there `GRACE_S` after it
    ended; they are killed."""
    deadline = time.monotonic() + GRACE_S
    while (found := session_members(leader)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in [int(line.split()[0]) for line in found]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return found


def session_members(leader: int) -> list[str]:
    """`PID NAME (STATE)` of every process whose process group or session is `leader`'s. Zombies
    are left out: they have ended, and once their parent is gone, reaping them is init's job
    (this container's init takes its time)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            text = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        head, _, rest = text.rpartition(")")
        fields = rest.split()
        if leader in (int(fields[2]), int(fields[3])) and fields[0] != "Z":
            found.append(f"{name} {head.partition('(')[2]} ({fields[0]})")
    return found
