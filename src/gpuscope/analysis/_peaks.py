"""Datasheet peaks of the GPUs a trace ran on (`gpuscope/data/peaks.json`).

A device is found by the name torch.profiler / the readers record (`Device.name`); where one name
covers several parts (ROCm's "AMD Instinct MI250X/MI250" is either), the compute-unit count picks.
Peaks are datasheet ceilings, labelled as such in every report: measured ceilings come later.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from gpuscope.trace.model import Device

KIND = "datasheet"


@dataclass(frozen=True)
class Peaks:
    """One device's dense peaks: TFLOP/s per precision key, bandwidth in GB/s."""

    label: str
    tflops: dict[str, float]
    bandwidth_gbs: float
    source: str
    kind: str = KIND

    def flops(self, key: str) -> float | None:
        """Peak FLOP/s for a precision key ("bf16", "fp16", "tf32", "fp8", "fp32"), or None."""
        value = self.tflops.get(key)
        return value * 1e12 if value else None

    @property
    def bandwidth(self) -> float:
        """Peak bytes/s."""
        return self.bandwidth_gbs * 1e9

    def matrix_fp32(self) -> str:
        """The key of the fastest plain-FP32 path for a GEMM: AMD matrix cores where listed."""
        return "fp32_matrix" if "fp32_matrix" in self.tflops else "fp32"


@functools.cache
def _table() -> tuple[dict[str, Any], ...]:
    text = resources.files("gpuscope").joinpath("data/peaks.json").read_text("utf-8")
    return tuple(json.loads(text)["devices"])


def peaks_for(device: Device | None) -> Peaks | None:
    """The datasheet peaks of `device`, or None when the table does not know it."""
    if device is None or not device.name.strip():
        return None
    name = device.name.strip().lower()
    for entry in _table():
        if name not in (n.lower() for n in entry["names"]):
            continue
        units = entry.get("compute_units")
        if units is not None and device.compute_units != units:  # ambiguous name: CUs decide
            continue
        return Peaks(
            entry["label"],
            {k: float(v) for k, v in entry["tflops"].items()},
            float(entry["bandwidth_gbs"]),
            entry["source"],
        )
    return None


def multiprocessors(device: Device | None) -> tuple[int, str] | None:
    """(SMs or CUs, where the count comes from): the trace's own count, else the datasheet's
    (`multiprocessors` in peaks.json) for the device's name; None when neither knows."""
    if device is None:
        return None
    if device.compute_units > 0:
        return device.compute_units, "trace"
    name = device.name.strip().lower()
    found = {
        int(entry["multiprocessors"]): entry["label"]
        for entry in _table()
        if name in (n.lower() for n in entry["names"]) and entry.get("multiprocessors")
    }
    if len(found) != 1:  # unknown, or a name that covers parts of different sizes
        return None
    ((count, label),) = found.items()
    return count, f"datasheet ({label})"


def device_of(devices: tuple[Device, ...], device_id: int) -> Device | None:
    """The trace's device with this id (the only one when the trace names just one)."""
    for device in devices:
        if device.id == device_id:
            return device
    return devices[0] if len(devices) == 1 else None
