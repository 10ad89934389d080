"""The command's leftover processes: found in its group or by the marker, ended, recorded."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuscope.run import procs
from gpuscope.run.reaper import Group

pytestmark = pytest.mark.skipif(not procs.available(), reason="needs Linux /proc")

IGNORES_TERM = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "


def _leader(code: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A process leading a group of its own, as the command does (start_new_session: setsid,
    the only way Python 3.10 offers; pgid = pid either way)."""
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True, env=env)


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    spawned: list[subprocess.Popen[bytes]] = []
    yield spawned
    for process in spawned:  # never leave one behind, whatever failed
        process.kill()
        process.wait()


def _wait_ready(path: str) -> None:
    deadline = time.monotonic() + 10
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)


def _children_code(ready: str, ignore_term: bool) -> str:
    """A leader that starts a child in its group, then waits (both ignoring SIGTERM if asked)."""
    prefix = IGNORES_TERM if ignore_term else "import time; "
    child = f"{prefix}open({ready!r}, 'w').close(); time.sleep(60)"
    return (f"{prefix}import subprocess, sys; "
            f"subprocess.Popen([sys.executable, '-c', {child!r}]); time.sleep(60)")  # fmt: skip


@pytest.mark.parametrize("ignore_term", [False, True])
def test_reap_ends_the_group_sigterm_first_then_sigkill(
    tmp_path: Path, started: list[subprocess.Popen[bytes]], ignore_term: bool
) -> None:
    ready = str(tmp_path / "ready")
    leader = _leader(_children_code(ready, ignore_term))
    started.append(leader)
    _wait_ready(ready)
    # the leader stands for the command, which run_child has waited for: not a survivor
    (survivor,) = Group(leader.pid).reap(grace_s=0.3)
    assert survivor.found == "process group" and survivor.ended
    assert survivor.signal == ("SIGKILL" if ignore_term else "SIGTERM")
    assert "time.sleep(60)" in " ".join(survivor.command)
    assert not Group(leader.pid).alive()  # the leader aside


def test_a_process_that_left_the_group_is_found_by_the_marker(
    tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    ready = str(tmp_path / "ready")
    env = {**os.environ, "GPUSCOPE_JOB": "test.1"}
    group, escaped = (
        _leader("import time; time.sleep(60)"),
        _leader(f"import time; open({ready!r}, 'w').close(); time.sleep(60)", env),
    )
    started += [group, escaped]
    _wait_ready(ready)
    assert [s.pid for s in Group(group.pid, "GPUSCOPE_JOB=other").reap(0.3)] == []
    (survivor,) = Group(group.pid, "GPUSCOPE_JOB=test.1").reap(0.3)
    assert survivor.pid == escaped.pid
    assert (survivor.found, survivor.signal) == ("environment", "SIGTERM")
    assert escaped.wait(5) == -15


def test_kill_records_the_members_and_a_reused_pid_is_not_the_same_process(
    started: list[subprocess.Popen[bytes]],
) -> None:
    leader = _leader("import time; time.sleep(60)")
    started.append(leader)
    seen = procs.read(leader.pid)
    assert seen is not None and procs.alive(seen)
    Group(leader.pid).kill()
    assert leader.wait(5) == -9
    assert not procs.alive(seen)
    assert not procs.alive(procs.Proc(os.getpid(), start=-1, pgid=0, state="R"))  # other start
