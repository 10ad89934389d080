"""The context a result is recorded with: the runtime versions read without importing torch."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpuscope.history import context

# torch/version.py as PyTorch 2.11 writes it (CUDA build; a ROCm build sets hip instead)
VERSION_PY = """from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']
__version__ = '2.11.0+cu130'
debug = False
cuda: Optional[str] = '13.0'
git_version = '70d99e998b2a4b7b1b5e4c3d0a6d1f0c1d2e3f40'
hip: Optional[str] = None
xpu: Optional[str] = None
"""


@pytest.fixture
def fake_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    package = tmp_path / "torch"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (package / "version.py").write_text(VERSION_PY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    return package


def test_the_cuda_torch_was_built_with_is_read_without_importing_it(fake_torch: Path) -> None:
    assert context.torch_build("cuda") == "13.0"
    assert context.torch_build("hip") is None
    assert "torch" not in sys.modules


def test_a_rocm_build_names_its_hip(fake_torch: Path) -> None:
    text = VERSION_PY.replace("cuda: Optional[str] = '13.0'", "cuda: Optional[str] = None")
    text = text.replace("hip: Optional[str] = None", "hip: Optional[str] = '6.4.43482'")
    (fake_torch / "version.py").write_text(text)
    assert context.torch_build("hip") == "6.4.43482" and context.torch_build("cuda") is None


def test_the_context_takes_torchs_cuda_before_the_drivers(fake_torch: Path, tmp_path: Path) -> None:
    class Host:
        gpus = ("NVIDIA H200",)
        driver = "580.159.04"
        runtime = "CUDA 13.1"  # what the driver supports (NVML)

    found = context.collect(Host(), cwd=tmp_path, env={})
    assert (found.cuda, found.driver, found.gpu_model) == ("13.0", "580.159.04", "NVIDIA H200")


def test_no_torch_no_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    assert context.torch_build("cuda") is None
