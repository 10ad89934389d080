"""Issue 25: the engines of `analyze` fail in a bounded time with one `error:` line naming the
address as given — a Dask scheduler or a Ray cluster where nobody listens, or a listener that
never answers (`--engine-timeout`, `GPUSCOPE_ENGINE_TIMEOUT`) — `--workers 0` is refused
whatever the number of traces, and `gpuscope.analyze(run_dir)` works from a plain script that
has no `if __name__ == "__main__":` guard. Real subprocesses, real sockets."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.ranks.job_traces import synthetic_job

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable


@pytest.fixture
def job(tmp_path: Path) -> Path:
    synthetic_job(tmp_path / "job", sizes=False)
    return tmp_path / "job"


@pytest.fixture
def refused() -> int:
    """A port of this host where nobody listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def silent() -> Iterator[int]:
    """A port that takes connections (the kernel's backlog) and never says a word."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


def analyze(
    cwd: Path, env: dict[str, str], *args: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "GPUSCOPE_ENGINE_TIMEOUT": "", **env}
    argv = [PY, "-m", "gpuscope", "analyze", "job", "-q", *args]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return done, time.monotonic() - started


def only_error(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """stderr is one `error:` line and nothing else (no traceback, no library's own logging)."""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    assert all(word in lines[0] for word in words), done.stderr
    return lines[0]


def test_dask_with_nobody_at_the_address(job: Path, refused: int) -> None:
    """Before: a 59-line traceback after 30 s, exit 1."""
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{refused}"
    done, took = analyze(job.parent, {"DASK_SCHEDULER_ADDRESS": address}, "--engine", "dask")
    only_error(done, f"--engine dask: cannot reach the Dask scheduler at {address} "
               "(DASK_SCHEDULER_ADDRESS)", "refused")  # fmt: skip
    assert took < 25


def test_dask_with_a_listener_that_never_answers(job: Path, silent: int) -> None:
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{silent}"
    done, took = analyze(job.parent, {"DASK_SCHEDULER_ADDRESS": address}, "--engine", "dask",
                         "--engine-timeout", "1")  # fmt: skip
    only_error(done, f"at {address} (DASK_SCHEDULER_ADDRESS)", "--engine-timeout")
    assert took < 25


def test_ray_with_nobody_at_the_address(job: Path, refused: int) -> None:
    """Before: hung for over 5 minutes, printing Ray's own warnings about another address."""
    pytest.importorskip("ray")
    address = f"127.0.0.1:{refused}"
    done, took = analyze(job.parent, {"RAY_ADDRESS": address}, "--engine", "ray")
    only_error(done, f"--engine ray: cannot reach the Ray cluster at {address} (RAY_ADDRESS)",
               "refused")  # fmt: skip
    assert took < 25


def test_ray_with_a_listener_that_never_answers(job: Path, silent: int) -> None:
    pytest.importorskip("ray")
    address = f"127.0.0.1:{silent}"
    env = {"RAY_ADDRESS": address, "GPUSCOPE_ENGINE_TIMEOUT": "1"}
    done, took = analyze(job.parent, env, "--engine", "ray")
    only_error(done, f"at {address} (RAY_ADDRESS): no answer within 1 s")
    assert took < 25


@pytest.mark.parametrize("value", ["0", "-3", "abc", "inf"])
def test_a_timeout_that_is_not_a_positive_number(job: Path, value: str) -> None:
    done, _ = analyze(job.parent, {"GPUSCOPE_ENGINE_TIMEOUT": value}, "--engine", "dask")
    only_error(done, f"GPUSCOPE_ENGINE_TIMEOUT {value}: expected a positive number of seconds")


@pytest.mark.parametrize("traces", [1, 2])
def test_workers_0_is_refused_with_one_trace_and_with_two(job: Path, traces: int) -> None:
    """Before: accepted with one trace, refused with two."""
    paths = [str(p) for p in sorted(job.iterdir())[:traces]]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([PY, "-m", "gpuscope", "analyze", *paths, "--workers", "0", "-q"],
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    only_error(done, "--workers 0: expected a positive number of workers")


PLAIN = """
import sys
import gpuscope
{thread}
with open(sys.argv[2], "a") as ran:  # once per run of this script's top level
    ran.write("ran\\n")
result = gpuscope.analyze(sys.argv[1])
print(len(result.reports), result.ranks is not None)
print("warnings:", result.job.warnings)
"""
THREAD = (
    "import threading, time; threading.Thread(target=time.sleep, args=(30,), daemon=True).start()"
)


@pytest.mark.parametrize("threads", ["one", "two"])
def test_analyze_from_a_plain_script_without_a_main_guard(
    job: Path, tmp_path: Path, threads: str
) -> None:
    """Before: BrokenProcessPool (each worker ran the script again, and started a pool there).
    One thread: the workers are forked; two: the traces are read here, and the result says so."""
    script = tmp_path / "plain.py"
    script.write_text(textwrap.dedent(PLAIN.format(thread=THREAD if threads == "two" else "")))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop("GPUSCOPE_READ_WORKERS", None)
    done = subprocess.run([PY, str(script), str(job), str(tmp_path / "ran")], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.splitlines()[0] == "4 True"  # four rank reports and the cross-rank part
    assert (tmp_path / "ran").read_text() == "ran\n"  # the script's work ran once
    in_process = "analysed one after another in this process" in done.stdout
    assert in_process == (threads == "two"), done.stdout
