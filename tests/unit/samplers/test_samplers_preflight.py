"""`gpuscope run` checks that a sampler backend is installed before the command starts."""

from __future__ import annotations

import pytest

from gpuscope.errors import ToolError
from gpuscope.samplers.backends import require_installed


def test_an_installed_rocm_smi_is_enough() -> None:
    require_installed("rocm-smi", which=lambda program: f"/opt/rocm/bin/{program}")


def test_nothing_installed_fails_with_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")  # open_backend's own rocm-smi lookup finds nothing either
    with pytest.raises(ToolError, match="install"):
        require_installed("rocm-smi", which=lambda program: None)


def test_fake_backend_needs_nothing() -> None:
    require_installed("fake", which=lambda program: None)
