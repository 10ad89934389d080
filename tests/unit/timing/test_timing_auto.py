"""The "auto" mode's switch to the profiler's kernel time for µs-scale callables."""

from __future__ import annotations

import msgspec

from gpuscope.timing.harness import _auto_to_kernel
from gpuscope.timing.options import AUTO_KERNEL_BELOW_US, BenchOptions
from tests.unit.timing.test_timing_diagnostics import CLEAN

FAKE_TORCH = object()  # stands for the torch module: only its presence matters here


def hot(median_us: float) -> object:
    return msgspec.structs.replace(CLEAN, samples_us=(median_us,) * 5)


def test_switches_only_below_the_threshold_in_auto_mode() -> None:
    auto = BenchOptions()
    assert _auto_to_kernel(auto, hot(AUTO_KERNEL_BELOW_US / 10), FAKE_TORCH)  # type: ignore[arg-type]
    assert not _auto_to_kernel(auto, hot(AUTO_KERNEL_BELOW_US * 2), FAKE_TORCH)  # type: ignore[arg-type]


def test_explicit_modes_and_cpu_never_switch() -> None:
    small = hot(1.0)
    assert not _auto_to_kernel(BenchOptions(mode="hot"), small, FAKE_TORCH)  # type: ignore[arg-type]
    assert not _auto_to_kernel(BenchOptions(), small, None)  # type: ignore[arg-type]
    cpu = msgspec.structs.replace(CLEAN, mode="cpu", samples_us=(1.0,) * 5)
    assert not _auto_to_kernel(BenchOptions(), cpu, FAKE_TORCH)  # type: ignore[arg-type]
