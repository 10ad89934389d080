"""rocprof v1 dispatch records (results.csv rows, the KERN table, `gpu-id` events of the JSON):
their launch parameters and the counters appended to them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gpuscope.trace.model import F64, I64
from gpuscope.trace.readers.rocprof._piece import CounterBlock

# every column of a dispatch record that is not a counter (lower case)
PROPERTIES = frozenset(
    {
        *("index", "kernelname", "gpu-id", "queue-id", "queue-index", "pid", "tid", "grd"),
        *("wgr", "lds", "scr", "vgpr", "arch_vgpr", "accum_vgpr", "sgpr", "fbar", "wave_size"),
        *("sig", "obj", "dispatchns", "beginns", "endns", "completens", "durationns"),
    }
)
LAUNCH_COLUMNS = ("grd", "wgr", "lds", "scr", "arch_vgpr", "accum_vgpr", "vgpr", "sgpr")
# derived metrics with a unit of their own (rocprofiler's metrics.xml); raw counters are counts
KIB_METRICS = frozenset({"FETCH_SIZE", "WRITE_SIZE"})  # kilobytes (1024 B): stored in bytes
PERCENT_METRICS = frozenset(
    {
        *("GPUBusy", "VALUUtilization", "VALUBusy", "SALUBusy", "MemUnitBusy", "MemUnitStalled"),
        *("WriteUnitStalled", "L2CacheHit", "LDSBankConflict", "ALUStalledByLDS"),
    }
)


def is_counter(column: str) -> bool:
    name = column.strip().strip('"').lower()
    return bool(name) and name not in PROPERTIES and not name.startswith("__")


def launch_params(ints: Mapping[str, I64]) -> dict[str, Any]:
    """LaunchParams columns; rocprof gives only products: `grd` work-items, `wgr` per group."""
    grd, wgr = ints["grd"], ints["wgr"]
    ok = (grd >= 0) & (wgr > 0)
    ones = np.where(ok, 1, -1)
    arch = ints["arch_vgpr"]
    return {
        "grid_x": np.where(ok, -(-grd // np.maximum(wgr, 1)), -1),  # ceil(grd / wgr)
        "grid_y": ones,
        "grid_z": ones,
        "block_x": np.where(wgr > 0, wgr, -1),
        "block_y": ones,
        "block_z": ones,
        "shared_mem": ints["lds"],
        "scratch": ints["scr"],
        "registers": np.where(arch >= 0, arch, ints["vgpr"]),  # `vgpr` before ROCm 5.3
        "accum_registers": ints["accum_vgpr"],
        "scalar_registers": ints["sgpr"],
    }


def counter_block(names: list[str], values: F64) -> CounterBlock:
    """Counters in base units: kilobyte metrics become bytes; percentages are named."""
    values = np.array(values, np.float64).reshape(-1, len(names))
    units: dict[str, str] = {}
    for j, name in enumerate(names):
        if name in KIB_METRICS:
            with np.errstate(over="ignore"):  # 1e308 KiB is infinite bytes, not a warning
                values[:, j] *= 1024.0
            units[name] = "byte"
        elif name in PERCENT_METRICS:
            units[name] = "%"
    return CounterBlock(list(names), values, units)
