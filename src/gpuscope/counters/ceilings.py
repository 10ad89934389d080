"""The roofs a kernel is measured against: compute peaks per precision and memory bandwidth.

In order of preference: a file the user gives (`--peaks FILE`, measured on their machine, e.g.
with rocprofiler-compute's roofline benchmark), the peaks `gpuscope bench` measured on this
device (its cache: a bf16 matmul and a copy; other precisions stay datasheet), else the
datasheet (`data/peaks.json`). Every report says which kind it used.

A peaks file is JSON: `{"label": "...", "tflops": {"fp32": 81.7, "bf16": 1307}, "bandwidth_gbs":
5300, "source": "..."}` — or `{"devices": [...]}` in the form of `data/peaks.json`, the entry
for the trace's device picked by name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuscope.errors import InputError
from gpuscope.peaks import DATASHEET, MEASURED, Peaks, measured_for, named, peaks_for
from gpuscope.trace.model import Device

USER = "user"


@dataclass(frozen=True)
class Ceilings:
    """FLOP/s per precision key and bytes/s, with their kind (user, measured, datasheet)."""

    kind: str
    label: str
    source: str
    bandwidth: float | None  # B/s
    flops: dict[str, float] = field(default_factory=dict)  # key -> FLOP/s
    kinds: dict[str, str] = field(default_factory=dict)  # key or "bandwidth" -> kind if mixed

    def flops_for(self, key: str | None) -> float | None:
        return self.flops.get(key) if key else None

    def kind_of(self, key: str) -> str:
        return self.kinds.get(key, self.kind)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "source": self.source,
            "bandwidth_gbs": self.bandwidth / 1e9 if self.bandwidth else None,
            "tflops": {k: v / 1e12 for k, v in sorted(self.flops.items())},
            "kinds": dict(sorted(self.kinds.items())),
        }


def ceilings_for(
    device: Device | None,
    peaks_file: str | None = None,
    bench_cache: Path | None = None,
    device_name: str | None = None,
) -> Ceilings | None:
    """The roofs for `device`: the user's file, else bench's measurement, else the datasheet.

    `device_name` names the GPU when the trace does not (a peaks.json name or label, e.g.
    "AMD Instinct MI250X (one GCD)")."""
    if device_name:
        units = device.compute_units if device else 0
        device = Device(id=device.id if device else 0, name=device_name, compute_units=units)
    if peaks_file:
        return load_peaks_file(peaks_file, device)
    datasheet = _datasheet(device) or (datasheet_named(device_name) if device_name else None)
    measured = _bench(device, bench_cache)
    if measured is None:
        return datasheet
    return _combine(measured, datasheet)


def load_peaks_file(path: str, device: Device | None = None) -> Ceilings:
    """A user's peaks file (see the module docstring); one-line InputError when malformed."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError, RecursionError) as error:  # RecursionError: nested too deep
        raise InputError(f"{path}: cannot read a peaks JSON file ({error})") from None
    if isinstance(data, dict) and isinstance(data.get("devices"), list):
        data = _pick(data["devices"], device, path)
    if not isinstance(data, dict) or not isinstance(data.get("tflops", {}), dict):
        raise InputError(
            f'{path}: expected {{"tflops": {{"fp32": 81.7, ...}}, "bandwidth_gbs": 5300}}'
        )
    try:
        flops = {str(k): float(v) * 1e12 for k, v in data.get("tflops", {}).items() if v}
        bandwidth = float(data["bandwidth_gbs"]) * 1e9 if data.get("bandwidth_gbs") else None
    except (TypeError, ValueError):
        raise InputError(f"{path}: tflops and bandwidth_gbs must be numbers") from None
    if not flops and bandwidth is None:
        raise InputError(f"{path}: neither tflops nor bandwidth_gbs given")
    label = str(data.get("label") or Path(path).name)
    return Ceilings(USER, label, str(data.get("source") or path), bandwidth, flops)


def _pick(devices: list[Any], device: Device | None, path: str) -> Any:
    name = device.name.strip().lower() if device is not None else ""
    for entry in devices:
        names = [str(n).lower() for n in entry.get("names", [])] if isinstance(entry, dict) else []
        if name and name in names:
            return entry
    if len(devices) == 1:
        return devices[0]
    shown = device.name if device is not None and device.name else "unknown"
    raise InputError(f"{path}: no entry names the trace's device ({shown})")


def _datasheet(device: Device | None) -> Ceilings | None:
    return _ceilings(peaks_for(device))


def datasheet_named(name: str) -> Ceilings | None:
    """The datasheet entry whose label or one of whose names is `name` (any case)."""
    return _ceilings(named(name))


def _ceilings(peaks: Peaks | None) -> Ceilings | None:
    if peaks is None:
        return None
    flops = {k: v * 1e12 for k, v in peaks.tflops.items()}
    return Ceilings(DATASHEET, peaks.label, peaks.source, peaks.bandwidth, flops)


def _bench(device: Device | None, cache: Path | None) -> dict[str, float] | None:
    """bench's measured peaks for a device of this name: {"bf16": FLOP/s, "bandwidth": B/s}."""
    if device is None or not device.name:
        return None
    measured = measured_for(device.name, cache)
    if measured is None:
        return None
    return {"bf16": measured.tflops * 1e12, "bandwidth": measured.gbps * 1e9}


def _combine(measured: dict[str, float], datasheet: Ceilings | None) -> Ceilings:
    flops = dict(datasheet.flops) if datasheet else {}
    flops["bf16"] = measured["bf16"]
    kinds = {k: DATASHEET for k in flops if k != "bf16"}
    source = "gpuscope bench (bf16 matmul and device copy, hot medians)"
    if datasheet:
        source += f"; other precisions: {datasheet.source}"
    label = datasheet.label if datasheet else "measured"
    return Ceilings(MEASURED, label, source, measured["bandwidth"], flops, kinds)
