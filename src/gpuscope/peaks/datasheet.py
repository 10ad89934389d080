"""Datasheet peaks of the GPUs a trace ran on (`gpuscope/data/peaks.json`, read once).

A device is found by the name torch.profiler / the readers record (`Device.name`); where one name
covers several parts (ROCm's "AMD Instinct MI250X/MI250" is either), the compute-unit count picks.
Peaks are datasheet ceilings, labelled as such in every report; what `gpuscope bench` measured is
in `measured.py`.

    >>> peaks_for(Device(0, "NVIDIA H100 80GB HBM3")).flops("bf16")   # doctest: +SKIP
    989500000000000.0
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Protocol

KIND = "datasheet"
LINK_GBS = {"PCIe 3.0 x16": 15.75, "PCIe 4.0 x16": 31.5, "PCIe 5.0 x16": 63.0}  # per direction
_KEYS = {"f16": "fp16", "bf16": "bf16", "tf32": "tf32", "f8": "fp8", "bf8": "fp8"}


class DeviceLike(Protocol):
    """What a lookup reads of a device (`trace.model.Device` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def compute_units(self) -> int: ...


@dataclass(frozen=True)
class Peaks:
    """One device's dense peaks: TFLOP/s per precision key, bandwidth in GB/s."""

    label: str
    tflops: dict[str, float]
    bandwidth_gbs: float
    source: str
    kind: str = KIND
    host_link: str = ""  # the host interface ("PCIe 5.0 x16"), "" when not listed

    @property
    def host_link_gbs(self) -> float | None:
        """The host link's rate per direction (GB/s, before protocol overhead), or None."""
        return LINK_GBS.get(self.host_link)

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

    def key_for(self, dtype: str) -> str | None:
        """The precision key a GEMM / convolution on `dtype` inputs ("bf16", "f32", "f8", …:
        gpuscope's short dtype names) is held against; None for a type the table has no key of."""
        if dtype in ("f32", "c32"):
            return self.matrix_fp32()
        if dtype in ("f64", "c64"):
            return "fp64_matrix" if "fp64_matrix" in self.tflops else "fp64"
        return _KEYS.get(dtype)


@functools.cache
def table() -> tuple[dict[str, Any], ...]:
    """The device entries of `data/peaks.json` (read once per process)."""
    text = resources.files("gpuscope").joinpath("data/peaks.json").read_text("utf-8")
    return tuple(json.loads(text)["devices"])


def peaks_for(device: DeviceLike | None) -> Peaks | None:
    """The datasheet peaks of `device`, or None when the table does not know it."""
    if device is None or not device.name.strip():
        return None
    name = device.name.strip().lower()
    for entry in table():
        if name not in (n.lower() for n in entry["names"]):
            continue
        units = entry.get("compute_units")
        if units is not None and device.compute_units != units:  # ambiguous name: CUs decide
            continue
        return _peaks(entry)
    return None


def multiprocessors(device: DeviceLike | None) -> tuple[int, str] | None:
    """(SMs or CUs, where the count comes from): the trace's own count, else the datasheet's
    (`multiprocessors` in peaks.json) for the device's name; None when neither knows."""
    if device is None:
        return None
    if device.compute_units > 0:
        return device.compute_units, "trace"
    name = device.name.strip().lower()
    found = {
        int(entry["multiprocessors"]): entry["label"]
        for entry in table()
        if name in (n.lower() for n in entry["names"]) and entry.get("multiprocessors")
    }
    if len(found) != 1:  # unknown, or a name that covers parts of different sizes
        return None
    ((count, label),) = found.items()
    return count, f"datasheet ({label})"


def named(name: str) -> Peaks | None:
    """The entry whose label or one of whose names is `name` (any case), e.g. a `--device`
    option: "AMD Instinct MI250X (one GCD)"."""
    wanted = name.strip().lower()
    for entry in table():
        if wanted in (n.lower() for n in (entry["label"], *entry["names"])):
            return _peaks(entry)
    return None


def _peaks(entry: dict[str, Any]) -> Peaks:
    return Peaks(
        entry["label"],
        {k: float(v) for k, v in entry["tflops"].items()},
        float(entry["bandwidth_gbs"]),
        entry["source"],
        host_link=str(entry.get("host_link", "")),
    )
