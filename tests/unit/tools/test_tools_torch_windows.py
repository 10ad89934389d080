"""Bounded windows of the torch_profiler hook, in real Python processes with the fake torch of
tests/fakes/torch (torch.profiler's schedule state machine, global optimizer step hooks)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from gpuscope.errors import ConfigError
from gpuscope.tools.builtin import _kineto_hook
from gpuscope.tools.builtin.torch_profiler import TorchProfilerTool, analyze_traces
from gpuscope.tools.config import load_catalog
from gpuscope.tools.tool import RunContext

FAKE_TORCH = Path(__file__).resolve().parents[2] / "fakes"

# a training loop: `steps` optimizer steps of `step_s` seconds each; "ready" after step `ready`
TRAIN = """
import sys, time, torch, torch.optim
steps, step_s, ready = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
optimizer = torch.optim.Optimizer()
for i in range(1, steps + 1):
    time.sleep(step_s)
    optimizer.step()
    if i == ready:
        open(sys.argv[4], "w").close()
"""


def start(ctx: RunContext, env: dict[str, str], code: str, *args: str) -> subprocess.Popen[bytes]:
    tool = TorchProfilerTool(load_catalog()["torch_profiler"])
    base = {**ctx.base_env, "PYTHONPATH": str(FAKE_TORCH), **env}
    ctx = RunContext(ctx.run_dir, ctx.run_id, ctx.command, base, notes=ctx.notes)
    script = ctx.run_dir / "program.py"
    script.write_text(textwrap.dedent(code))
    with tool.open(ctx) as layer:
        full = {**os.environ, **base, **layer.env, "PYTHONPATH": layer.env["PYTHONPATH"]}
        return subprocess.Popen([sys.executable, str(script), *args], env=full)


def traces(ctx: RunContext) -> list[dict[str, Any]]:
    found = []
    for path in sorted((ctx.run_dir / "torch_profiler_output").glob("*.pt.trace.json.gz")):
        with gzip.open(path, "rt") as f:
            found.append({"name": path.name, **json.load(f)})
    return found


def notes(ctx: RunContext) -> str:
    out = ctx.run_dir / "torch_profiler_output"
    return "".join(p.read_text() for p in sorted(out.glob("*.notes.txt")))


def expected_windows(wait: int, warmup: int, active: int, repeat: int) -> list[list[int]]:
    """The optimizer steps each window records, from the definition (a separate count)."""
    windows, step = [], 0
    for _ in range(repeat):
        step += wait + warmup  # steps waited for, then warm-up steps
        windows.append(list(range(step + 1, step + active + 1)))
        step += active
    return windows


def test_default_window_is_steps_8_to_10(ctx: RunContext) -> None:
    process = start(ctx, {}, TRAIN, "20", "0", "0", "-")
    assert process.wait() == 0
    (trace,) = traces(ctx)
    assert trace["recorded_steps"] == expected_windows(5, 2, 3, 1)[0] == [8, 9, 10]
    assert trace["thread"] == "MainThread"
    assert trace["options"]["record_shapes"] is True
    assert notes(ctx) == ""


def test_repeated_windows_are_written_one_file_each(ctx: RunContext) -> None:
    env = {"GPUSCOPE_TORCH_WAIT": "1", "GPUSCOPE_TORCH_WARMUP": "1",
           "GPUSCOPE_TORCH_ACTIVE": "2", "GPUSCOPE_TORCH_REPEAT": "3"}  # fmt: skip
    process = start(ctx, env, TRAIN, "30", "0", "0", "-")
    assert process.wait() == 0
    found = traces(ctx)
    assert [t["recorded_steps"] for t in found] == expected_windows(1, 1, 2, 3)
    pid = found[0]["name"].split("_")[-1].split(".")[0]
    assert [t["name"].split(f"_{pid}")[-1] for t in found] == [
        ".pt.trace.json.gz", "_w2.pt.trace.json.gz", "_w3.pt.trace.json.gz"
    ]  # fmt: skip


def test_too_few_steps_record_the_whole_short_program_with_a_note(ctx: RunContext) -> None:
    process = start(ctx, {}, TRAIN, "4", "0", "0", "-")
    assert process.wait() == 0
    (trace,) = traces(ctx)
    assert trace["recorded_steps"] == [1, 2, 3, 4]  # the fallback: from torch's import to exit
    assert "made 4 optimizer steps, a window needs 10" in notes(ctx)
    assert "the whole program from torch's import is recorded instead" in notes(ctx)


def test_too_few_steps_with_an_explicit_steps_schedule_leave_only_a_note(ctx: RunContext) -> None:
    process = start(ctx, {"GPUSCOPE_TORCH_SCHEDULE": "steps"}, TRAIN, "4", "0", "0", "-")
    assert process.wait() == 0
    assert traces(ctx) == []
    assert "made 4 optimizer steps, a window needs 10" in notes(ctx)


def test_the_fallback_is_dropped_when_the_step_window_opens(ctx: RunContext) -> None:
    process = start(ctx, {}, TRAIN, "12", "0", "0", "-")
    assert process.wait() == 0
    (trace,) = traces(ctx)  # only the bounded window is written
    assert trace["recorded_steps"] == [8, 9, 10]
    assert notes(ctx) == ""


def test_a_short_inference_program_gets_its_whole_trace(ctx: RunContext) -> None:
    code = """
        import time, torch
        time.sleep(0.2)  # shorter than the time window's start (10 s)
    """
    assert start(ctx, {}, code).wait() == 0
    (trace,) = traces(ctx)
    assert trace["thread"] == "MainThread"
    assert "ended before the time window" in notes(ctx)


def test_inference_without_optimizer_records_the_time_window(ctx: RunContext) -> None:
    env = {"GPUSCOPE_TORCH_START_S": "0.3", "GPUSCOPE_TORCH_DURATION_S": "0.4"}
    code = """
        import json, sys, time
        imported = time.monotonic()
        import torch
        json.dump({"imported": imported}, open(sys.argv[1], "w"))
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            time.sleep(0.01)  # inference work
    """
    clock = ctx.run_dir / "clock.json"
    assert start(ctx, env, code, str(clock)).wait() == 0
    (trace,) = traces(ctx)
    assert trace["thread"] == "MainThread"  # started through the wake signal
    imported = json.loads(clock.read_text())["imported"]
    assert 0.3 <= trace["since"] - imported < 0.6
    assert 0.35 <= trace["until"] - trace["since"] < 0.7  # the timer's 0.4 s, give or take


def test_sigterm_exits_fast_with_the_active_window_written(ctx: RunContext) -> None:
    """Default configuration: SIGTERM in the middle of a training run (after the window)."""
    ready = ctx.run_dir / "ready"
    process = start(ctx, {}, TRAIN, "100000", "0.01", "20", str(ready))
    _wait_for(ready)
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 128 + signal.SIGTERM
    assert time.monotonic() - sent < 5
    (trace,) = traces(ctx)
    assert trace["recorded_steps"] == [8, 9, 10]


def test_sigterm_during_an_active_window_writes_what_it_recorded(ctx: RunContext) -> None:
    ready = ctx.run_dir / "ready"
    env = {"GPUSCOPE_TORCH_ACTIVE": "100000"}
    process = start(ctx, env, TRAIN, "100000", "0.01", "12", str(ready))
    _wait_for(ready)
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 128 + signal.SIGTERM
    assert time.monotonic() - sent < 5
    (trace,) = traces(ctx)
    steps = trace["recorded_steps"]
    assert steps[0] == 8 and steps == list(range(8, steps[-1] + 1)) and steps[-1] >= 12


def test_a_window_recording_too_long_stops_with_a_note(ctx: RunContext) -> None:
    env = {"GPUSCOPE_TORCH_ACTIVE": "100000", "GPUSCOPE_TORCH_MAX_RECORD_S": "0.3"}
    process = start(ctx, env, TRAIN, "100", "0.02", "0", "-")
    assert process.wait() == 0
    (trace,) = traces(ctx)
    steps = trace["recorded_steps"]
    assert steps[0] == 8 and 5 <= len(steps) < 40  # ~0.3 s of 0.02 s steps, not all 92
    assert "window 1 stopped early: recording for" in notes(ctx)
    analyze_traces(ctx.run_dir / "torch_profiler_output", ctx)
    assert any("stopped early" in w for w in ctx.notes.warnings)


def test_no_window_starts_past_the_size_limit(ctx: RunContext) -> None:
    env = {"GPUSCOPE_TORCH_WAIT": "0", "GPUSCOPE_TORCH_WARMUP": "0",
           "GPUSCOPE_TORCH_ACTIVE": "2", "GPUSCOPE_TORCH_REPEAT": "5",
           "GPUSCOPE_TORCH_MAX_MB": "0.1", "FAKE_TORCH_TRACE_BYTES": "200000"}  # fmt: skip
    process = start(ctx, env, TRAIN, "30", "0", "0", "-")
    assert process.wait() == 0
    assert len(traces(ctx)) == 1
    assert "no window after window 1: the traces written reached 0.2 MB" in notes(ctx)


def test_all_records_the_whole_process(ctx: RunContext) -> None:
    env = {"GPUSCOPE_TORCH_SCHEDULE": "all"}
    process = start(ctx, env, TRAIN, "12", "0", "0", "-")
    assert process.wait() == 0
    (trace,) = traces(ctx)
    assert trace["recorded_steps"] == list(range(1, 13))


def test_window_options_are_checked_before_the_run(ctx: RunContext) -> None:
    assert _kineto_hook.settings({})["wait"] == 5
    for env in ({"GPUSCOPE_TORCH_ACTIVE": "0"}, {"GPUSCOPE_TORCH_WAIT": "x"},
                {"GPUSCOPE_TORCH_SCHEDULE": "sometimes"}):  # fmt: skip
        with pytest.raises(ValueError, match=next(iter(env))):
            _kineto_hook.settings(env)
        config = dataclasses.replace(load_catalog()["torch_profiler"], env_vars=env)
        tool = TorchProfilerTool(config)
        with pytest.raises(ConfigError, match=next(iter(env))):
            tool.check(ctx)


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 30
    while not path.exists():
        assert time.monotonic() < deadline, "the program never got there"
        time.sleep(0.02)


def test_sigterm_before_any_window_exits_without_writing_the_fallback(ctx: RunContext) -> None:
    ready = ctx.run_dir / "ready"
    process = start(ctx, {}, TRAIN, "1000", "0.05", "2", str(ready))  # window at step 5
    deadline = time.monotonic() + 10
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 128 + signal.SIGTERM
    assert traces(ctx) == []
    assert "stopped by SIGTERM before any bounded window opened" in notes(ctx)
