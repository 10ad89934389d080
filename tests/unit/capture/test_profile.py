"""`gpuscope profile` with a stand-in torch that follows torch.profiler's schedule contract:
the trace it writes holds exactly the calls made while the schedule was active."""

from __future__ import annotations

import gzip
import json
import sys
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from gpuscope.capture.profile import profile
from gpuscope.cli import main


class FakeProfiler:
    """Records `record_function` ranges and 'kernels' while the schedule is active; like
    torch.profiler, calls on_trace_ready once the active steps are done."""

    current: FakeProfiler | None = None

    def __init__(self, activities: list[str], schedule: Any, on_trace_ready: Any, **_: Any):
        self.wait, self.warmup, self.active = schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.events: list[dict[str, Any]] = []
        self.clock = 0.0

    def __enter__(self) -> FakeProfiler:
        FakeProfiler.current = self
        return self

    def __exit__(self, *exc: object) -> None:
        FakeProfiler.current = None

    @property
    def recording(self) -> bool:
        return self.wait + self.warmup <= self.step_num < self.wait + self.warmup + self.active

    def kernel(self) -> None:
        if self.recording:
            start = self.clock
            corr = len(self.events) + 1
            self.events += [
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                 "tid": 1, "ts": start, "dur": 2.0, "args": {"correlation": corr}},
                {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7,
                 "ts": start + 3.0, "dur": 50.0,
                 "args": {"correlation": corr, "device": 0, "stream": 7}},
            ]  # fmt: skip
            self.clock += 60.0

    def step(self) -> None:
        self.step_num += 1
        if self.step_num == self.wait + self.warmup + self.active:
            self.on_trace_ready(self)

    def export_chrome_trace(self, path: str) -> None:
        with gzip.open(path, "wt") as f:
            json.dump({"traceEvents": self.events}, f)

    def key_averages(self) -> Any:
        rows = sum(e["cat"] == "kernel" for e in self.events)
        return types.SimpleNamespace(table=lambda sort_by, row_limit: f"{sort_by}: {rows} rows")


@pytest.fixture
def fake_torch(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    torch = types.ModuleType("torch")
    prof = types.ModuleType("torch.profiler")
    prof.ProfilerActivity = types.SimpleNamespace(CPU="CPU", CUDA="CUDA")  # type: ignore[attr-defined]
    prof.schedule = lambda wait, warmup, active, repeat: (wait, warmup, active)  # type: ignore[attr-defined]
    prof.profile = FakeProfiler  # type: ignore[attr-defined]

    @contextmanager
    def record_function(name: str) -> Iterator[None]:
        yield

    prof.record_function = record_function  # type: ignore[attr-defined]
    torch.profiler = prof  # type: ignore[attr-defined]
    torch.cuda = types.SimpleNamespace(is_available=lambda: True, synchronize=lambda: None)  # type: ignore[attr-defined]
    torch.version = types.SimpleNamespace(hip=None)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.profiler", prof)
    return torch


def step() -> None:
    """One call of the profiled function: one kernel when the profiler records."""
    assert FakeProfiler.current is None or isinstance(FakeProfiler.current, FakeProfiler)
    if FakeProfiler.current is not None:
        FakeProfiler.current.kernel()


def test_only_the_active_steps_are_in_the_trace(fake_torch: Any, tmp_path: Path) -> None:
    result = profile(step, iterations=7, warmup=2, out_dir=tmp_path / "p")
    report = json.loads((tmp_path / "p" / "analysis.json").read_text())
    assert report["kernels"]["count"] == 7  # the profiler's warm-up step is not recorded
    assert report["kernels"]["time_us"] == 7 * 50.0
    assert result.device == "cuda" and len(result.warm_calls_s) == 2
    summary = json.loads((tmp_path / "p" / "profile.json").read_text())
    assert summary["schema"] == "gpuscope.profile/1" and summary["iterations"] == 7
    assert (tmp_path / "p" / "key_averages.txt").read_text().startswith("self_device_time_total")


def test_a_slow_first_call_is_timed_apart_and_named(fake_torch: Any, tmp_path: Path) -> None:
    calls: list[int] = []

    def compiled() -> None:
        if not calls:
            time.sleep(0.05)  # "compilation" on the first call only
        calls.append(1)
        step()

    result = profile(compiled, iterations=3, warmup=3, out_dir=tmp_path / "p")
    assert result.first_call_s >= 0.05 > result.warm_call_s
    assert any("first call" in note for note in result.notes)
    assert len(calls) == 1 + 3 + 1 + 3  # first, warm-up, profiler warm-up step, active


def test_cli_profiles_a_file_target(
    fake_torch: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    target = tmp_path / "model.py"
    target.write_text(
        "from tests.unit.capture.test_profile import step\ndef setup():\n    return step\n"
    )
    monkeypatch.chdir(tmp_path)
    code = main(["profile", f"{target}:setup", "--iterations", "4", "--out", "out", "-q"])
    assert code == 0
    assert json.loads((tmp_path / "out" / "analysis.json").read_text())["kernels"]["count"] == 4
    assert "wrote out/" in capsys.readouterr().err


def test_bad_target_and_counts_are_one_line_errors(
    fake_torch: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profile", f"{tmp_path}/missing.py:f"]) == 2
    assert main(["profile", f"{tmp_path}/missing.py:f", "--iterations", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error: ") for line in err)


def test_without_torch_the_error_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    from gpuscope.errors import ToolError

    with pytest.raises(ToolError, match="needs PyTorch"):
        profile(step, out_dir=tmp_path)
