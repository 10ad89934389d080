"""Fixtures for the tool-stack tests: the fake GPU tools on PATH, a run context, the reference."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuscope.tools.tool import Notes, RunContext

REPO = Path(__file__).resolve().parents[3]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
REFERENCE = REPO / ".." / "shared" / "reference"


@pytest.fixture
def fake_path() -> str:
    """PATH with the fake rocprof/rocprofv3/nsys/ncu/amd-smi/rocm-smi/runTracer.sh first."""
    return f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.fixture
def ctx(tmp_path: Path, fake_path: str) -> RunContext:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {"PATH": fake_path, "HOME": str(tmp_path)}
    return RunContext(run_dir, "r1", ("python3", "app.py"), env, model="app", notes=Notes())


@pytest.fixture
def reference() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip(f"shared reference files not found at {REFERENCE}")
    return REFERENCE
