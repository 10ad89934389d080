"""Backends: unit conversions on real recorded values, rocm-smi JSON from real machines,
amdsmi's unit traps, and `auto` saying what to install when nothing works."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from gpuscope.errors import ConfigError, ToolError
from gpuscope.samplers import backends
from gpuscope.samplers.backends.amdsmi import (
    AmdSmiBackend,
    joules_from_energy_count,
    watts_from_power_info,
)
from gpuscope.samplers.backends.base import BackendUnavailable
from gpuscope.samplers.backends.nvml import NvmlBackend
from gpuscope.samplers.backends.rocm_smi import parse_json
from tests.unit.samplers.conftest import reference_file


class _NvmlError(Exception):
    pass


def _fake_pynvml(device: dict[str, Any], energy_supported: bool = True) -> SimpleNamespace:
    """A pynvml stand-in returning the values a real H100 returned (nvml_dump_under_load_h100)."""
    v1, v2 = device["nvmlDeviceGetMemoryInfo[B]"], device["nvmlDeviceGetMemoryInfo_v2[B]"]

    def energy(handle: object) -> int:
        if not energy_supported:
            raise _NvmlError("Not Supported")
        return int(device["nvmlDeviceGetTotalEnergyConsumption[mJ]"])

    def memory(handle: object, version: object = None) -> SimpleNamespace:
        return SimpleNamespace(**(v2 if version == "v2" else v1))

    return SimpleNamespace(
        NVMLError=_NvmlError,
        nvmlMemory_v2="v2",
        nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda i: f"handle{i}",
        nvmlDeviceGetPowerUsage=lambda h: device["nvmlDeviceGetPowerUsage[mW]"],
        nvmlDeviceGetTotalEnergyConsumption=energy,
        nvmlDeviceGetMemoryInfo=memory,
        nvmlShutdown=lambda: None,
    )


def _h100() -> dict[str, Any]:
    dump = json.loads(reference_file("nvml/nvml_dump_under_load_h100.json").read_text())
    device: dict[str, Any] = dump["devices"][0]
    return device


def test_nvml_units_on_real_values() -> None:
    backend = NvmlBackend(_fake_pynvml(_h100()))
    (power,) = backend.power([0])
    assert power.watts == pytest.approx(694.415)  # 694415 mW
    assert power.energy_j == pytest.approx(35092.282)  # 35092282 mJ
    (vram,) = backend.vram([0])
    # v2 `used` excludes the driver's reserve (1,020,067,840 of 85,520,809,984 B)
    assert vram.used_bytes == 1_020_067_840 and vram.percent == pytest.approx(1.19277, rel=1e-4)
    assert backend.power([0], energy=False)[0].energy_j is None


def test_nvml_without_energy_counter_stops_asking() -> None:
    backend = NvmlBackend(_fake_pynvml(_h100(), energy_supported=False))
    assert [backend.power([0])[0].energy_j for _ in range(2)] == [None, None]


def test_amdsmi_power_fields_in_watts() -> None:
    # MI300: current valid, average N/A; MI200: the reverse (ROCm/pytorch#1457);
    # ROCm 7: socket_power
    assert (
        watts_from_power_info({"current_socket_power": 550, "average_socket_power": "N/A"}) == 550
    )
    assert (
        watts_from_power_info({"current_socket_power": "N/A", "average_socket_power": 237}) == 237
    )
    assert watts_from_power_info({"socket_power": 10, "current_socket_power": 2**32 - 1}) == 10
    assert watts_from_power_info(
        {"socket_power": {"value": 102675, "unit": "mW"}}
    ) == pytest.approx(102.675)
    assert watts_from_power_info({"current_socket_power": 2**32 - 1}) is None  # sentinel
    assert watts_from_power_info({"average_socket_power": "N/A"}) is None  # secondary die


def test_amdsmi_energy_ticks_times_resolution() -> None:
    assert joules_from_energy_count(
        {"energy_accumulator": 1_000_000, "counter_resolution": 15.3, "timestamp": 1}
    ) == pytest.approx(15.3)
    assert joules_from_energy_count(
        {"power": 2_000_000, "counter_resolution": 15.3}
    ) == pytest.approx(30.6)  # before ROCm 6.4
    assert (
        joules_from_energy_count({"energy_accumulator": "N/A", "counter_resolution": 15.3}) is None
    )


def test_amdsmi_backend_vram_in_mib() -> None:
    amdsmi = SimpleNamespace(
        AmdSmiException=RuntimeError,
        amdsmi_get_processor_handles=lambda: ["gpu0"],
        amdsmi_get_power_info=lambda h: {
            "current_socket_power": 750,
            "average_socket_power": "N/A",
        },
        amdsmi_get_energy_count=lambda h: {"energy_accumulator": 10, "counter_resolution": 15.3},
        amdsmi_get_gpu_vram_usage=lambda h: {"vram_total": 196592, "vram_used": 49148},
        amdsmi_shut_down=lambda: None,
    )
    backend = AmdSmiBackend(amdsmi)
    (power,) = backend.power([0])
    assert power.watts == 750.0 and power.energy_j == pytest.approx(153e-6)
    (vram,) = backend.vram([0])
    assert vram.used_bytes == 49148 * 2**20 and vram.percent == pytest.approx(25.0)


def test_rocm_smi_json_mi100() -> None:
    cards = parse_json(reference_file("rocm-smi/telegraf-testdata/mi100_rocm571.json").read_text())
    assert len(cards) == 6
    assert [c.power.watts for c in cards] == [39.0, 37.0, 35.0, 39.0, 39.0, 40.0]
    assert cards[0].vram.used_bytes == 6782976 and cards[0].vram.total_bytes == 34342961152


def test_rocm_smi_json_secondary_die_and_missing_keys() -> None:
    (rx,) = parse_json(
        reference_file("rocm-smi/telegraf-testdata/rx6700xt_rocm602.json").read_text()
    )
    assert rx.power.watts is None  # "N/A (Secondary die)"
    (marimo,) = parse_json(
        reference_file("rocm-smi/issue-excerpts/marimo_9237_rx7900xt.json").read_text()
    )
    assert marimo.power.watts is None and marimo.vram.percent == pytest.approx(0.12982, rel=1e-3)
    text = reference_file(
        "rocm-smi/issue-excerpts/rainbowminer_749_rocm2019_oneline.json"
    ).read_text()
    (old,) = parse_json("WARNING: something\n" + text)
    assert old.power.watts == 222.0 and old.vram.used_bytes is None


@pytest.fixture
def nothing_works(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def unavailable(reason: str) -> Any:
        def opener() -> Any:
            raise BackendUnavailable(reason)

        return opener

    monkeypatch.setitem(backends.OPENERS, "nvml", unavailable("pynvml not importable"))
    monkeypatch.setitem(backends.OPENERS, "amdsmi", unavailable("amdsmi not importable"))
    monkeypatch.setitem(backends.OPENERS, "rocm-smi", unavailable("rocm-smi not on PATH"))
    yield


@pytest.mark.usefixtures("nothing_works")
def test_auto_says_what_to_install() -> None:
    with pytest.raises(ToolError) as raised:
        backends.open_backend("auto")
    message = str(raised.value)
    assert "nvml: pynvml not importable" in message and "rocm-smi: rocm-smi not on PATH" in message
    assert "install nvidia-ml-py" in message


@pytest.mark.usefixtures("nothing_works")
def test_sampler_enter_raises_tool_error(tmp_path: Any) -> None:
    from gpuscope.samplers import Sampler

    with pytest.raises(ToolError), Sampler("vram", tmp_path / "v.csv"):
        pass
    assert not (tmp_path / "v.csv").exists()


def test_unknown_backend_name() -> None:
    with pytest.raises(ConfigError, match="unknown sampler backend"):
        backends.open_backend("nvidia")


def test_amdsmi_is_shut_down_by_the_last_backend_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuscope.samplers.backends.amdsmi import open_amdsmi

    calls: list[str] = []
    fake = SimpleNamespace(
        AmdSmiException=RuntimeError,
        AmdSmiInitFlags=SimpleNamespace(INIT_AMD_GPUS=2),
        amdsmi_init=lambda flags: calls.append("init"),
        amdsmi_shut_down=lambda: calls.append("shut_down"),
        amdsmi_get_processor_handles=lambda: ["gpu0", "gpu1"],
    )
    monkeypatch.setitem(sys.modules, "amdsmi", fake)
    power, vram = open_amdsmi(), open_amdsmi()  # the power and the VRAM sampler of one run
    power.close()
    assert calls == ["init"]
    vram.close()
    assert calls == ["init", "shut_down"] and power.device_count() == 2
