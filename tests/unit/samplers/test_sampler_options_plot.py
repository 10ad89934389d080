"""madengine's env names → Sampler kwargs, and the power/VRAM plot."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.errors import ConfigError
from gpuscope.samplers import (
    Sampler,
    plot_run,
    plot_run_svg,
    sampler_env_options,
    sampler_output_name,
)
from gpuscope.samplers.backends.fake import FakeBackend
from tests.unit.samplers.conftest import FakeClock

MS = 1_000_000


def test_defaults_are_madengines() -> None:
    assert sampler_env_options("power", {}) == {
        "devices": "all", "rate_s": 0.1, "dual_gcd": False, "backend": "auto",
    }  # fmt: skip
    assert sampler_output_name("power", {}) == "gpu_info_power_profiler_output.csv"
    assert sampler_output_name("vram", {}) == "gpu_info_vram_profiler_output.csv"


def test_madengine_tools_json_values() -> None:
    env = {
        "VRAM_DEVICE": "0,1,2", "VRAM_SAMPLING_RATE": "0.01", "VRAM_MODE": "vram",
        "VRAM_DUAL_GCD": "true", "VRAM_OUTPUT_FILE": "/elsewhere/vram.csv", "VRAM_BACKEND": "fake",
        "POWER_DEVICE": "3",
    }  # fmt: skip
    assert sampler_env_options("vram", env) == {
        "devices": "0,1,2", "rate_s": 0.01, "dual_gcd": True, "backend": "fake",
    }  # fmt: skip
    assert sampler_output_name("vram", env) == "vram.csv"  # always inside the run dir


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"POWER_DEVICE": "gpu0"}, "POWER_DEVICE"),
        ({"POWER_SAMPLING_RATE": "0"}, "POWER_SAMPLING_RATE"),
        ({"POWER_SAMPLING_RATE": "fast"}, "POWER_SAMPLING_RATE"),
        ({"POWER_DUAL_GCD": "maybe"}, "POWER_DUAL_GCD"),
        ({"POWER_MODE": "vram"}, "POWER_MODE"),
    ],
)
def test_bad_values_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        sampler_env_options("power", env)


def _sample(path: Path, kind: str, clock: FakeClock) -> None:
    sampler = Sampler(kind, path, backend=FakeBackend(), clock=clock, rate_s=0.05)  # type: ignore[arg-type]
    sampler.open()
    sampler.run(until_ns=sampler.start_ns + 100 * MS)
    sampler.mark("workload_start")
    sampler.run(until_ns=sampler.start_ns + 400 * MS)
    sampler.mark("workload_end")
    sampler.close()


def test_plot_png_and_svg(tmp_path: Path) -> None:
    clock = FakeClock()
    _sample(tmp_path / "gpu_info_power_profiler_output.csv", "power", clock)
    _sample(tmp_path / "renamed_vram.csv", "vram", clock)
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    png = plot_run(tmp_path)
    assert png == tmp_path / "gpu_info_profiler.png"
    assert png.read_bytes().startswith(b"\x89PNG")
    svg = plot_run_svg(tmp_path)
    assert svg is not None and "<svg" in svg


def test_no_samples_no_plot(tmp_path: Path) -> None:
    assert plot_run(tmp_path) is None
    (tmp_path / "gpu_info_power_profiler_output.csv").write_text(
        "time,Power(Watt) GPU0,utc,monotonic_ns,energy_J GPU0,mark\n"
    )
    assert plot_run(tmp_path) is None
    assert not (tmp_path / "gpu_info_profiler.png").exists()
