"""The child process: exit code passed through, 128+N on signal N, forwarding to its process
group, --kill-after, the processes it leaves behind, tee."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from gpuscope.run.child import ChildResult, Signals, deferred_signals, run_child
from gpuscope.run.command import CommandNotExecutable

ENV = dict(os.environ)


def _run(code: str, **kwargs: object) -> tuple[int, str | None, Signals]:
    signals = Signals()
    with deferred_signals(signals):
        result = run_child([sys.executable, "-c", code], ENV, signals, **kwargs)  # type: ignore[arg-type]
    return result.exit_code, result.signal, signals


@pytest.mark.parametrize("code", [0, 3, 255])
def test_exit_code_is_the_commands_own(code: int) -> None:
    assert _run(f"raise SystemExit({code})")[:2] == (code, None)


def test_killed_by_signal_n_gives_128_plus_n() -> None:
    exit_code, name, _ = _run("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert (exit_code, name) == (128 + signal.SIGKILL, "SIGKILL")


def _signal_main_later(signo: int) -> object:
    """Runs in on_start, so the timer thread inherits the blocked mask; targets the main thread."""
    main = threading.main_thread().ident
    assert main is not None
    return lambda pid: threading.Timer(0.3, signal.pthread_kill, (main, signo)).start()


def test_sigterm_to_gpuscope_is_forwarded_to_the_command() -> None:
    sleeper = "import time; time.sleep(20)"
    exit_code, name, signals = _run(sleeper, on_start=_signal_main_later(signal.SIGTERM))
    assert (exit_code, name) == (128 + signal.SIGTERM, "SIGTERM")
    assert signals.received == ["SIGTERM"] and signals.forwarded == ["SIGTERM"]


def test_sigint_is_forwarded_and_the_command_decides_its_exit_code() -> None:
    handles = (
        "import sys, time\ntry:\n    time.sleep(20)\nexcept KeyboardInterrupt:\n    sys.exit(42)\n"
    )
    exit_code, name, signals = _run(handles, on_start=_signal_main_later(signal.SIGINT))
    assert (exit_code, name) == (42, None)
    assert signals.forwarded == ["SIGINT"]


def test_a_signal_before_the_start_is_seen_as_pending() -> None:
    signals = Signals()
    with deferred_signals(signals):
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        assert signals.pending_stop()
    assert signals.received[0] == "SIGINT"


def test_tee_copies_a_stream_and_still_passes_it_through(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "stderr.log"
    code = "import sys; print('to stdout'); print('MIOpen(HIP): Command x', file=sys.stderr)"
    exit_code, _, _ = _run(code, tee={"stderr": [copy]})
    assert exit_code == 0
    assert copy.read_text() == "MIOpen(HIP): Command x\n"
    captured = capfd.readouterr()
    assert "MIOpen(HIP): Command x" in captured.err and "to stdout" in captured.out


def test_tee_keeps_what_was_written_before_a_kill(tmp_path: Path) -> None:
    copy = tmp_path / "stdout.log"
    code = ("import os, signal, sys; sys.stdout.write('Running kernel: Cijk_x\\n'); "
            "sys.stdout.flush(); os.kill(os.getpid(), signal.SIGKILL)")  # fmt: skip
    exit_code, _, _ = _run(code, tee={"stdout": [copy]})
    assert exit_code == 137
    assert copy.read_text() == "Running kernel: Cijk_x\n"


# --- the command as a job: its process group, what it leaves behind (Linux /proc) ---

LINUX = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")


def _run_argv(argv: list[str], **kwargs: object) -> tuple[ChildResult, Signals]:
    signals = Signals()
    with deferred_signals(signals):
        result = run_child(argv, ENV, signals, **kwargs)  # type: ignore[arg-type]
    return result, signals


def _signal_when(path: Path, signo: int) -> object:
    """on_start: send `signo` to gpuscope's main thread once `path` exists (the command ready)."""
    main = threading.main_thread().ident
    assert main is not None

    def wait_then_signal() -> None:
        deadline = time.monotonic() + 20
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        signal.pthread_kill(main, signo)

    return lambda pid: threading.Thread(target=wait_then_signal, daemon=True).start()


def _leaves_behind(ready: Path, code: str, then: str) -> list[str]:
    """sh starting Python `code` in the background, waiting until it has written `ready`
    (so that it is more than a fork of sh), then running `then`."""
    wait = f"while [ ! -e {ready} ]; do sleep 0.02; done"
    return ["/bin/sh", "-c", f'"{sys.executable}" -c "$0" & {wait}; {then}', code]


@LINUX
def test_a_process_left_behind_is_ended_and_the_exit_code_kept(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    code = f"import time; open({str(ready)!r}, 'w').close(); time.sleep(60)"
    result, _ = _run_argv(_leaves_behind(ready, code, "exit 3"))
    assert result.exit_code == 3
    (survivor,) = result.survivors
    assert survivor.command == (sys.executable, "-c", code)
    assert (survivor.found, survivor.signal, survivor.ended) == ("process group", "SIGTERM", True)


@LINUX
def test_sigterm_reaches_every_process_of_the_group(tmp_path: Path) -> None:
    """The shell dies at once; its background child handles SIGTERM (slowly): the job ends
    when that child has, and it is not a survivor."""
    ready, got = tmp_path / "ready", tmp_path / "got"
    child = (f"import pathlib, signal, sys, time\n"
             f"def stop(signo, frame):\n"
             f"    time.sleep(0.3); pathlib.Path({str(got)!r}).write_text('TERM'); sys.exit(0)\n"
             f"signal.signal(signal.SIGTERM, stop)\n"
             f"pathlib.Path({str(ready)!r}).touch()\n"
             f"time.sleep(60)\n")  # fmt: skip
    argv = ["/bin/sh", "-c", f'"{sys.executable}" -c "$0" & wait', child]
    result, signals = _run_argv(argv, on_start=_signal_when(ready, signal.SIGTERM))
    assert (result.exit_code, result.signal) == (143, "SIGTERM")
    assert got.read_text() == "TERM" and result.survivors == ()
    assert signals.forwarded == ["SIGTERM"]


@LINUX
def test_what_outlives_the_command_after_sigint_gets_sigterm(tmp_path: Path) -> None:
    """A script's background job ignores SIGINT (POSIX): when the script has died of the
    forwarded SIGINT, the rest of the group gets SIGTERM, without waiting for --kill-after."""
    ready = tmp_path / "ready"
    code = f"import time; open({str(ready)!r}, 'w').close(); time.sleep(60)"
    argv = _leaves_behind(ready, code, "wait")
    started = time.monotonic()
    result, signals = _run_argv(argv, on_start=_signal_when(ready, signal.SIGINT), kill_after_s=30)
    assert time.monotonic() - started < 15  # not the 30 s of --kill-after
    assert (result.exit_code, result.signal) == (130, "SIGINT")
    assert signals.forwarded == ["SIGINT", "SIGTERM"] and signals.escalated_after_s is None
    (survivor,) = result.survivors
    assert survivor.command == (sys.executable, "-c", code)
    assert (survivor.signal, survivor.ended) == ("SIGTERM", True)


@LINUX
def test_kill_after_sigkills_the_whole_group(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    script = f"trap '' TERM; sleep 300 & sleep 301 & : > {ready}; wait"
    result, signals = _run_argv(
        ["/bin/sh", "-c", script], on_start=_signal_when(ready, signal.SIGTERM), kill_after_s=0.5
    )
    assert (result.exit_code, result.signal) == (137, "SIGKILL")
    assert signals.forwarded == ["SIGTERM", "SIGKILL"] and signals.escalated_after_s is not None
    assert len(result.survivors) == 2  # (a fork not yet exec'd shows sh's command line)
    assert all("sleep 30" in " ".join(s.command) for s in result.survivors)
    assert all(s.signal == "SIGKILL" and s.ended for s in result.survivors)


@LINUX
def test_a_process_that_left_the_group_is_found_by_the_marker(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    escapee = f"import os, time; os.setsid(); open({str(ready)!r}, 'w').close(); time.sleep(60)"
    signals = Signals()
    env = {**ENV, "GPUSCOPE_JOB": "unit.1"}
    with deferred_signals(signals):
        argv = _leaves_behind(ready, escapee, "exit 0")
        result = run_child(argv, env, signals, marker="GPUSCOPE_JOB=unit.1")
    assert result.exit_code == 0
    (survivor,) = result.survivors
    assert survivor.found == "environment" and survivor.ended and survivor.signal == "SIGTERM"


def test_a_binary_exec_refuses_is_exit_126_and_nothing_runs(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"AB\0\x01garbage")
    garbage.chmod(0o755)
    with pytest.raises(CommandNotExecutable, match="cannot execute binary file"):
        _run_argv([str(garbage)])
