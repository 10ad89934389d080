"""The child process: exit code passed through, 128+N on signal N, forwarding, tee."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from gpuscope.tools.child import Signals, deferred_signals, run_child

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
