"""The torch_profiler hook in real Python processes, with a stand-in `torch` package."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuscope.tools.builtin import _kineto_hook
from gpuscope.tools.builtin.torch_profiler import TorchProfilerTool, analyze_traces
from gpuscope.tools.config import load_catalog
from gpuscope.tools.tool import RunContext

# Just enough of torch.profiler: records options, writes a gzip JSON trace naming the pid.
FAKE_PROFILER = """
import gzip, json, os
class ProfilerActivity:
    CPU = "CPU"
def supported_activities():
    return {ProfilerActivity.CPU}
class profile:
    def __init__(self, activities, **options):
        self.options = options
    def start(self):
        open(os.environ["FAKE_TORCH_EVENTS"], "a").write(f"start {os.getpid()}\\n")
    def stop(self):
        open(os.environ["FAKE_TORCH_EVENTS"], "a").write(f"stop {os.getpid()}\\n")
    def export_chrome_trace(self, path):
        with gzip.open(path, "wt") as f:
            json.dump({"traceEvents": [], "fake": True, "options": self.options}, f)
"""


@pytest.fixture
def fake_torch(tmp_path: Path) -> Path:
    package = tmp_path / "site" / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("VERSION = 'fake'\n")
    (package / "profiler.py").write_text(FAKE_PROFILER)
    return package.parent


def _python(ctx: RunContext, env: dict[str, str], code: str) -> subprocess.Popen[bytes]:
    full = {**os.environ, **ctx.base_env, **env}
    return subprocess.Popen([sys.executable, "-c", code], env=full)


def _open_env(ctx: RunContext, fake_torch: Path) -> tuple[TorchProfilerTool, dict[str, str]]:
    tool = TorchProfilerTool(load_catalog()["torch_profiler"])
    base = {**ctx.base_env, "PYTHONPATH": str(fake_torch), "GPUSCOPE_TORCH_SCHEDULE": "all"}
    return tool, {"FAKE_TORCH_EVENTS": str(ctx.run_dir / "events.txt"), **base}


def test_one_trace_per_process_that_imports_torch(ctx: RunContext, fake_torch: Path) -> None:
    tool, base = _open_env(ctx, fake_torch)
    ctx = RunContext(ctx.run_dir, ctx.run_id, ctx.command, base, notes=ctx.notes)
    code = ("import subprocess, sys, torch\n"
            "subprocess.run([sys.executable, '-c', 'import torch'], check=True)\n"
            "subprocess.run([sys.executable, '-c', 'print(1)'], check=True)\n")  # fmt: skip
    with tool.open(ctx) as layer:
        assert layer.env["PYTHONPATH"].endswith(os.pathsep + str(fake_torch))
        assert _python(ctx, dict(layer.env), code).wait() == 0
    traces = sorted((ctx.run_dir / "torch_profiler_output").glob("*.pt.trace.json.gz"))
    assert len(traces) == 2  # the parent and the child that imported torch; not the third
    with gzip.open(traces[0], "rt") as f:
        data = json.load(f)
    assert data["options"] == {"record_shapes": True, "with_stack": False,
                               "profile_memory": False, "with_flops": False}  # fmt: skip
    assert (ctx.run_dir / "events.txt").read_text().count("start") == 2


def test_sigterm_still_writes_the_trace(ctx: RunContext, fake_torch: Path) -> None:
    tool, base = _open_env(ctx, fake_torch)
    ctx = RunContext(ctx.run_dir, ctx.run_id, ctx.command, base, notes=ctx.notes)
    ready = ctx.run_dir / "ready"
    code = f"import time, torch; open({str(ready)!r}, 'w').close(); time.sleep(20)"
    with tool.open(ctx) as layer:
        process = _python(ctx, dict(layer.env), code)
        while not ready.exists():
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        assert process.wait() == 128 + signal.SIGTERM
    assert len(list((ctx.run_dir / "torch_profiler_output").glob("*.pt.trace.json.gz"))) == 1


def test_an_existing_sitecustomize_still_runs(ctx: RunContext, fake_torch: Path) -> None:
    (fake_torch / "sitecustomize.py").write_text(
        "import os\nopen(os.environ['FAKE_TORCH_EVENTS'], 'a').write('user sitecustomize\\n')\n"
    )
    tool, base = _open_env(ctx, fake_torch)
    ctx = RunContext(ctx.run_dir, ctx.run_id, ctx.command, base, notes=ctx.notes)
    with tool.open(ctx) as layer:
        assert _python(ctx, dict(layer.env), "import torch").wait() == 0
    assert "user sitecustomize" in (ctx.run_dir / "events.txt").read_text()


def test_without_a_trace_the_manifest_says_why(ctx: RunContext) -> None:
    out = ctx.run_dir / "torch_profiler_output"
    out.mkdir()
    (out / "123.error.txt").write_text("could not start torch.profiler: RuntimeError: x\n")
    analyze_traces(out, ctx)
    assert ctx.notes.warnings[0] == (
        "torch_profiler: 123.error.txt: could not start torch.profiler: RuntimeError: x"
    )
    assert "no trace was written" in ctx.notes.warnings[1]


def test_trace_names_carry_the_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "3")
    assert _kineto_hook.trace_name().startswith("rank3_")
    assert _kineto_hook.trace_name().endswith(f"_{os.getpid()}.pt.trace.json.gz")
