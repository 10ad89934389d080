"""`gpuscope run` on a real NVIDIA GPU (skipped without one): ncu, the cuBLAS / cuBLASLt /
cuDNN / NCCL tracers, both samplers and torch_profiler around tests/gpu/small_model.py
(the run and its checks live in tests/gpu/run_stack.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType

import pytest
import run_stack  # tests/gpu/run_stack.py (pytest puts this folder on sys.path)

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def run_dir(torch_gpu: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("ncu") is None:
        pytest.skip("ncu not on PATH")
    done, run = run_stack.run_stack(tmp_path_factory.mktemp("runs"))
    assert done.returncode == 0 and run is not None, done.stderr[-3000:]
    return run


@pytest.mark.parametrize("check", run_stack.CHECKS, ids=lambda c: c.__name__)
def test_the_run_produced_every_output(run_dir: Path, check: object) -> None:
    name, ok, detail = check(run_dir)  # type: ignore[operator]
    assert ok, f"{name}: {detail}"
