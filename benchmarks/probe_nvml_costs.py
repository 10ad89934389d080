"""Probe: what each NVML query costs (wall and CPU per call) and how often its value changes.

    python benchmarks/probe_nvml_costs.py

Prints one line per query; used to choose the queries of the NVML sampler backend.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import pynvml as nv


def cost(name: str, call: Callable[[], object], n: int = 50) -> None:
    call()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        call()
    wall = (time.perf_counter() - wall0) / n * 1e6
    cpu = (time.process_time() - cpu0) / n * 1e6
    print(f"{name:<44}{wall:>10.1f} us wall{cpu:>10.1f} us CPU")


def update_period(name: str, call: Callable[[], object], seconds: float = 1.0) -> None:
    values, changes, end = [], [], time.monotonic() + seconds
    while time.monotonic() < end:
        value = call()
        if not values or value != values[-1]:
            changes.append(time.monotonic())
        values.append(value)
        time.sleep(0.001)
    gaps = [b - a for a, b in itertools.pairwise(changes)]
    mean = sum(gaps) / len(gaps) * 1e3 if gaps else float("nan")
    print(f"{name:<44}{len(values):>6} reads {len(changes):>5} changes, mean {mean:.1f} ms apart")


def field(handle: object, fid: int) -> Callable[[], object]:
    def read() -> object:
        value = nv.nvmlDeviceGetFieldValues(handle, [fid])[0]
        return (value.nvmlReturn, value.value.ullVal, value.value.uiVal)

    return read


def main() -> None:
    nv.nvmlInit()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    print(nv.nvmlDeviceGetName(h), nv.nvmlSystemGetDriverVersion())
    fields = {
        "POWER_INSTANT": getattr(nv, "NVML_FI_DEV_POWER_INSTANT", 186),
        "POWER_AVERAGE": getattr(nv, "NVML_FI_DEV_POWER_AVERAGE", 185),
        "TOTAL_ENERGY": getattr(nv, "NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION", 83),
    }
    cost("nvmlDeviceGetPowerUsage", lambda: nv.nvmlDeviceGetPowerUsage(h))
    cost("nvmlDeviceGetTotalEnergyConsumption", lambda: nv.nvmlDeviceGetTotalEnergyConsumption(h))
    for name, fid in fields.items():
        cost(f"nvmlDeviceGetFieldValues({name})", field(h, fid))
    both = [fields["POWER_INSTANT"], fields["TOTAL_ENERGY"]]
    cost("nvmlDeviceGetFieldValues(INSTANT, ENERGY)", lambda: nv.nvmlDeviceGetFieldValues(h, both))
    cost("nvmlDeviceGetMemoryInfo v1", lambda: nv.nvmlDeviceGetMemoryInfo(h))
    v2 = nv.nvmlMemory_v2
    cost("nvmlDeviceGetMemoryInfo v2", lambda: nv.nvmlDeviceGetMemoryInfo(h, version=v2))
    update_period("nvmlDeviceGetPowerUsage", lambda: nv.nvmlDeviceGetPowerUsage(h))
    update_period("TotalEnergyConsumption", lambda: nv.nvmlDeviceGetTotalEnergyConsumption(h))
    update_period("field POWER_INSTANT", field(h, fields["POWER_INSTANT"]))
    nv.nvmlShutdown()


if __name__ == "__main__":
    main()
