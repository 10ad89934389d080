"""Issue 25: a stop signal ends the whole `gpuscope run`, `--baseline`'s first run included, and
nothing of an interrupted run is kept; a run's times are the command's own, the grace given to
a leftover process that ignores SIGTERM apart — real subprocesses, real signals."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuscope.madengine import perfcsv

REPO = Path(__file__).resolve().parents[2]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
PY = sys.executable

# appends a line to STARTS each time it starts, then waits to be stopped
APP = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_DFL)  # dies of it, as a C program does
with open(sys.argv[1], "a") as starts:
    starts.write("started\\n")
print("performance: 100 samples_per_second", flush=True)
time.sleep(60)
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "FAKE_TOOL_LOG": str(tmp_path / "tools.log"), "PYTHONPATH": str(REPO / "src"),
            "XDG_DATA_HOME": str(tmp_path / "data"), "GPUSCOPE_DB": ""}  # fmt: skip


def start(tmp_path: Path, env: dict[str, str], *options: str) -> subprocess.Popen[str]:
    (tmp_path / "app.py").write_text(APP)
    argv = [PY, "-m", "gpuscope", "run", "--output-dir", str(tmp_path / "runs"), "--record",
            "--db", str(tmp_path / "h.db"), "--perf-csv", str(tmp_path / "perf.csv"), *options,
            "--", PY, str(tmp_path / "app.py"), str(tmp_path / "starts")]  # fmt: skip
    return subprocess.Popen(argv, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)


def wait_started(tmp_path: Path) -> int:
    """The pid of the command that is running (the leader of its process group)."""
    starts = tmp_path / "starts"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if starts.is_file() and starts.read_text():
            (run_dir,) = (tmp_path / "runs").iterdir()
            pid = json.loads((run_dir / "manifest.json").read_text())["child_pid"]
            if pid:
                return int(pid)
        time.sleep(0.05)
    raise AssertionError("the command did not start")


def recorded(tmp_path: Path) -> int:
    with sqlite3.connect(tmp_path / "h.db") as db:
        (count,) = db.execute("SELECT COUNT(*) FROM results").fetchone()
    db.close()
    return int(count)


@pytest.mark.parametrize(
    ("signo", "to"),
    [(signal.SIGTERM, "gpuscope"), (signal.SIGINT, "gpuscope"), (signal.SIGHUP, "gpuscope"),
     (signal.SIGINT, "group")],  # "group": Ctrl-C at a terminal reaches the command's group alone
)  # fmt: skip
def test_a_stop_signal_during_the_baseline_ends_gpuscope(
    tmp_path: Path, env: dict[str, str], signo: signal.Signals, to: str
) -> None:
    """Before: the signal ended the baseline's command, then the run with tools started anyway,
    printed a meaningless overhead, exited 0 and --record kept the killed baseline's time."""
    process = start(tmp_path, env, "--baseline", "--tools", "rocprof")
    pid = wait_started(tmp_path)
    if to == "group":
        os.killpg(pid, signo)
    else:
        process.send_signal(signo)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signo, stderr
    assert f"baseline interrupted by {signo.name}" in stderr and "Traceback" not in stderr
    assert (tmp_path / "starts").read_text() == "started\n"  # the run with tools never started
    assert len(list((tmp_path / "runs").iterdir())) == 1
    assert recorded(tmp_path) == 0 and not (tmp_path / "perf.csv").exists()
    assert not (tmp_path / "tools.log").exists()  # the fake rocprof never ran


def test_an_interrupted_run_with_tools_is_not_recorded(tmp_path: Path, env: dict[str, str]) -> None:
    process = start(tmp_path, env, "--tools", "rocprof")
    wait_started(tmp_path)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "interrupted by SIGTERM: nothing recorded" in stderr
    assert recorded(tmp_path) == 0 and not (tmp_path / "perf.csv").exists()


def test_a_run_that_is_not_interrupted_is_still_recorded(
    tmp_path: Path, env: dict[str, str]
) -> None:
    (tmp_path / "app.py").write_text("print('performance: 100 samples_per_second')\n")
    argv = [PY, "-m", "gpuscope", "run", "-q", "--output-dir", str(tmp_path / "runs"),
            "--baseline", "--record", "--db", str(tmp_path / "h.db"), "--perf-csv",
            str(tmp_path / "perf.csv"), "--", PY, str(tmp_path / "app.py")]  # fmt: skip
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert recorded(tmp_path) == 1 and (tmp_path / "perf.csv").is_file()


# exits at once, leaving a process of its group that ignores SIGTERM (the end-of-run cleanup then
# waits its 2 s grace and SIGKILLs it)
LEAVES_A_STUBBORN_CHILD = """
import subprocess, sys
stubborn = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(60)")
child = subprocess.Popen([sys.executable, "-c", stubborn], stdout=subprocess.PIPE)
child.stdout.readline()  # it ignores SIGTERM from now on
print("performance: 3 samples_per_second")
"""


def test_the_kill_grace_for_a_leftover_is_not_the_commands_time(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Before: a 0.55 s command was recorded as 2.74 s (duration_s, perf.csv's test_duration and
    the recorded wall_s all held the 2 s grace given to the process it left)."""
    (tmp_path / "app.py").write_text(LEAVES_A_STUBBORN_CHILD)
    argv = [
        PY,
        "-m",
        "gpuscope",
        "run",
        "-q",
        "--output-dir",
        str(tmp_path / "runs"),
        "--record",
        "--db",
        str(tmp_path / "h.db"),
        "--",
        PY,
        str(tmp_path / "app.py"),
    ]
    started = time.monotonic()
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    whole = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    data = json.loads((run_dir / "manifest.json").read_text())
    stubborn = [s for s in data["survivors"] if "SIG_IGN" in " ".join(s["command"])]
    assert [(s["signal"], s["ended"]) for s in stubborn] == [("SIGKILL", True)], data["survivors"]
    cleanup = data["signals"]["cleanup_s"]
    assert cleanup >= 2.0  # the grace, reported apart
    assert 0 < data["duration_s"] < whole - cleanup  # the command's own time, not the grace
    (row,) = perfcsv.read(run_dir / "perf.csv")
    assert float(row["test_duration"]) == data["duration_s"]
    with sqlite3.connect(tmp_path / "h.db") as db:
        (wall,) = db.execute("SELECT value FROM metrics WHERE name = 'wall_s'").fetchone()
    db.close()
    assert wall == data["duration_s"]
