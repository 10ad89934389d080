"""Every ceiling in one place: the datasheet by device name (compute units where one name covers
two parts) and by label, the precision key of a dtype, bench's measured cache, and the table that
picks between them."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.peaks import (
    Measured,
    PeakTable,
    cache_dir,
    cached,
    measured_for,
    named,
    peaks_for,
    read_cache,
    table,
)
from gpuscope.trace.model import Device

H100 = Device(0, "NVIDIA H100 80GB HBM3", compute_units=132)
MI300X = Device(0, "AMD Instinct MI300X", compute_units=304)
MEASURED = Measured(device="NVIDIA H100 80GB HBM3", tflops=700.0, gbps=2900.0, method="test")


def test_the_datasheet_is_read_once() -> None:
    assert table() is table() and len(table()) > 20


def test_a_device_by_its_name_in_any_case() -> None:
    peaks = peaks_for(Device(0, " nvidia h100 80gb hbm3 "))
    assert peaks is not None and peaks.label == "NVIDIA H100 SXM5" and peaks.kind == "datasheet"
    assert peaks.flops("bf16") == 989.5e12 and peaks.bandwidth == 3350e9
    assert peaks.flops("fp4") is None


@pytest.mark.parametrize(("units", "label"), [(110, "MI250X"), (104, "MI250 ("), (96, None)])
def test_one_name_for_two_parts_is_told_apart_by_compute_units(
    units: int, label: str | None
) -> None:
    peaks = peaks_for(Device(0, "AMD Instinct MI250X/MI250", compute_units=units))
    assert (peaks.label if peaks else None) == label or (peaks and label and label in peaks.label)


@pytest.mark.parametrize("device", [None, Device(0, ""), Device(0, "Some Future GPU")])
def test_unknown_devices_have_no_peaks(device: Device | None) -> None:
    assert peaks_for(device) is None


def test_by_label_or_name() -> None:
    by_label, by_name = named("amd instinct mi250x (one gcd)"), named("AMD Instinct MI250X")
    assert by_label is not None and by_label == by_name and by_label.bandwidth_gbs == 1638.4
    assert named("no such GPU") is None


@pytest.mark.parametrize(
    ("device", "dtype", "key"),
    [(H100, "bf16", "bf16"), (H100, "f16", "fp16"), (H100, "bf8", "fp8"), (H100, "f32", "fp32"),
     (MI300X, "f32", "fp32_matrix"), (H100, "c64", "fp64_matrix"), (H100, "i8", None)],
)  # fmt: skip
def test_the_precision_key_of_a_dtype(device: Device, dtype: str, key: str | None) -> None:
    peaks = peaks_for(device)
    assert peaks is not None and peaks.key_for(dtype) == key


def test_the_cache_directory_honours_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GPUSCOPE_CACHE_DIR", str(tmp_path))
    assert cache_dir() == tmp_path
    monkeypatch.delenv("GPUSCOPE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "gpuscope"


def test_measured_once_then_found_by_device_name(tmp_path: Path) -> None:
    path, calls = tmp_path / "peaks.json", []

    def measure() -> Measured:
        calls.append(1)
        return MEASURED

    key = "NVIDIA H100 80GB HBM3|580.1|CUDA 13.0|2.11.0"
    assert cached(key, measure, path) == cached(key, measure, path) == MEASURED
    assert len(calls) == 1 and read_cache(path) == {key: MEASURED}
    assert measured_for("NVIDIA H100 80GB HBM3", path) == MEASURED
    assert measured_for("NVIDIA H200", path) is None


def test_an_unreadable_cache_is_no_measurement(tmp_path: Path) -> None:
    path = tmp_path / "peaks.json"
    path.write_text("{not json")
    assert read_cache(path) == {} and measured_for(H100.name, path) is None
    path.write_bytes(b'{"\xff": 1}')  # invalid UTF-8: what msgspec raises differs by release
    assert read_cache(path) == {}
    assert measured_for(H100.name, tmp_path / "missing.json") is None


def test_the_table_takes_the_measurement_where_it_applies_else_the_datasheet() -> None:
    both = PeakTable(MEASURED, peaks_for(H100))
    bf16, fp32, bandwidth = both.compute("bf16"), both.compute("f32"), both.bandwidth()
    assert bf16 is not None and (bf16.value, bf16.source) == (700.0, "measured: test")
    assert fp32 is not None and (fp32.value, fp32.source) == (
        67.0,
        "datasheet: NVIDIA H100 SXM5 fp32",
    )
    assert bandwidth is not None and bandwidth.value == 2900.0
    assert PeakTable().compute("bf16") is None and PeakTable().bandwidth() is None
