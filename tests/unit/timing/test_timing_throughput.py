"""Throughput: transformer FLOP estimate, rates and the per-device peaks cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.peaks import Measured, cache_dir
from gpuscope.timing.measurement import Environment, Work, rates
from gpuscope.timing.throughput import cached_peaks, transformer_flops

ENV = Environment(
    vendor="nvidia", device="H100", python="3", platform="t", gpuscope="0", driver="580"
)
PEAKS = Measured(device="H100", tflops=800.0, gbps=3000.0, method="test")


def test_transformer_flops_by_term() -> None:
    s, h = 2048, 4096
    qkv, scores, values, out, mlp = (
        6 * s * h * h,
        2 * s * s * h,
        2 * s * s * h,
        2 * s * h * h,
        16 * s * h * h,
    )
    assert transformer_flops(s, h) == qkv + scores + values + out + mlp
    assert transformer_flops(s, h, layers=3) == 3 * (24 * s * h * h + 4 * s * s * h)


def test_rates_and_fractions_of_peak() -> None:
    r = rates(Work(flops=400e9, bytes=1.5e9), 1000.0, PEAKS)
    assert r.tflops == pytest.approx(400.0)
    assert r.tflops_fraction == pytest.approx(0.5)
    assert r.gbps == pytest.approx(1500.0)
    assert r.gbps_fraction == pytest.approx(0.5)


def test_peaks_are_measured_once_per_device(tmp_path: Path) -> None:
    calls: list[int] = []

    def measure() -> Measured:
        calls.append(1)
        return PEAKS

    path = tmp_path / "peaks.json"
    assert cached_peaks(ENV, measure, path) == PEAKS
    assert cached_peaks(ENV, measure, path) == PEAKS
    assert len(calls) == 1
    other = Environment(vendor="nvidia", device="H200", python="3", platform="t", gpuscope="0")
    cached_peaks(other, measure, path)
    assert len(calls) == 2


def test_a_corrupt_cache_is_measured_again(tmp_path: Path) -> None:
    path = tmp_path / "peaks.json"
    path.write_text("{not json")
    assert cached_peaks(ENV, lambda: PEAKS, path) == PEAKS


def test_cache_dir_honours_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GPUSCOPE_CACHE_DIR", str(tmp_path))
    assert cache_dir() == tmp_path
    monkeypatch.delenv("GPUSCOPE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "gpuscope"
