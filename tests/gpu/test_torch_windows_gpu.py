"""The torch_profiler tool's bounded windows with real torch on a GPU (skipped without one).

    python -m pytest -s tests/gpu/test_torch_windows_gpu.py     # prints the measured times

- a training loop (optimizer steps): the default window records iterations 8, 9, 10 exactly;
- SIGTERM in the middle of a long training run: gpuscope exits within 5 s, the window written;
- SIGTERM while a (long) window records: the window so far is written, within 5 s;
- an inference loop (no optimizer): the time window records about DURATION_S seconds, CPU
  operators included (it was started on the main thread).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.gpu

TRAIN = """
import sys, torch
from torch import nn
from torch.profiler import record_function
steps, ready_at, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 512, device="cuda")
for i in range(1, steps + 1):
    with record_function(f"iter{i}"):
        optimizer.zero_grad()
        model(x).square().mean().backward()
    optimizer.step()
    torch.cuda.synchronize()
    if i == ready_at:
        open(ready, "w").close()
"""

INFER = """
import sys, time, torch
from torch import nn
model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512)).cuda().eval()
x = torch.randn(64, 512, device="cuda")
deadline = time.monotonic() + float(sys.argv[1])
with torch.no_grad():
    while time.monotonic() < deadline:
        model(x)
        torch.cuda.synchronize()
"""


def gpuscope_run(
    tmp_path: Path, program: str, args: list[str], env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(program))
    context = {"tools": [{"name": "torch_profiler", "env_vars": env or {}}]}
    argv = [sys.executable, "-m", "gpuscope", "run", "--output-dir", str(tmp_path / "runs"),
            "--additional-context", json.dumps(context), "--", sys.executable, str(script),
            *args]  # fmt: skip
    full = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.Popen(argv, env=full, cwd=tmp_path, stderr=subprocess.PIPE, text=True)


def run_dir(tmp_path: Path) -> Path:
    (found,) = sorted((tmp_path / "runs").iterdir())
    return found


def read_traces(run: Path) -> list[object]:
    from gpuscope.trace.registry import read_trace

    paths = sorted((run / "torch_profiler_output").glob("*.pt.trace.json.gz"))
    return [read_trace(str(p)) for p in paths]


def iterations(trace: object) -> list[int]:
    from gpuscope.trace.model import ANNOTATION

    ops = trace.ops  # type: ignore[attr-defined]
    names = trace.names  # type: ignore[attr-defined]
    found = {names[n] for n, k in zip(ops.name.tolist(), ops.kind.tolist(), strict=True)
             if k == ANNOTATION and names[n].startswith("iter")}  # fmt: skip
    return sorted(int(n[4:]) for n in found)


def wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        assert process.poll() is None, process.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the program never got there"
        time.sleep(0.05)


def test_default_window_records_iterations_8_to_10(torch_gpu: ModuleType, tmp_path: Path) -> None:
    process = gpuscope_run(tmp_path, TRAIN, ["30", "0", "-"])
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr[-3000:]
    (trace,) = read_traces(run_dir(tmp_path))
    assert iterations(trace) == [8, 9, 10]
    assert len(trace.gpu) > 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("active", ["3", "100000"], ids=["default", "long-window"])
def test_sigterm_exits_within_5_s_with_the_window_written(
    torch_gpu: ModuleType, tmp_path: Path, active: str
) -> None:
    ready = tmp_path / "ready"
    env = {"GPUSCOPE_TORCH_ACTIVE": active}
    process = gpuscope_run(tmp_path, TRAIN, ["100000000", "30", str(ready)], env)
    wait_for(ready, process)
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    took = time.monotonic() - sent
    run = run_dir(tmp_path)
    traces = read_traces(run)
    sizes = [p.stat().st_size for p in (run / "torch_profiler_output").glob("*.pt.trace.json.gz")]
    print(f"\nSIGTERM (active={active}): gpuscope exited {took:.2f} s later, "
          f"exit {process.returncode}, trace bytes {sizes}")  # fmt: skip
    assert process.returncode == 128 + signal.SIGTERM, stderr[-3000:]
    assert took < 5
    (trace,) = traces
    steps = iterations(trace)
    assert steps[0] == 8 and steps == list(range(8, steps[-1] + 1))
    assert steps[-1] == 10 if active == "3" else steps[-1] >= 30


def test_inference_time_window(torch_gpu: ModuleType, tmp_path: Path) -> None:
    env = {"GPUSCOPE_TORCH_START_S": "1", "GPUSCOPE_TORCH_DURATION_S": "1"}
    process = gpuscope_run(tmp_path, INFER, ["4"], env)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr[-3000:]
    (trace,) = read_traces(run_dir(tmp_path))
    gpu = trace.gpu  # type: ignore[attr-defined]
    span_s = (int(gpu.end.max()) - int(gpu.start.min())) / 1e9
    ops = trace.ops  # type: ignore[attr-defined]
    print(f"\ntime window: {len(gpu)} kernels over {span_s:.2f} s, {len(ops)} CPU ops")
    assert 0.7 < span_s < 1.5
    assert len(ops) > 0  # the main thread's operators: started on the main thread
