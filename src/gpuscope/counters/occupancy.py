"""Theoretical occupancy and what limits it.

AMD CDNA: from the dispatch's launch parameters and the family's hardware constants (`hardware`
in the family file): waves per SIMD allowed by the vector registers (arch + accumulation VGPRs
share one file of `vgprs_per_simd_lane` registers, allocated in granules) and by the LDS one
work-group needs, capped at `max_waves_per_simd`. NVIDIA: Nsight Compute's own block limits
(`launch__occupancy_limit_*`) and theoretical occupancy.

>>> amd_occupancy({"registers": 128, "accum_registers": 0, "shared_mem": 0, "block_x": 256,
...     "block_y": 1, "block_z": 1}, {"simds_per_cu": 4, "max_waves_per_simd": 8,
...     "vgprs_per_simd_lane": 512, "vgpr_granule": 8, "lds_bytes_per_cu": 65536,
...     "wave_size": 64}).waves_per_simd
4
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from gpuscope.counters.evaluate import Value

_NEEDED = ("simds_per_cu", "max_waves_per_simd", "vgprs_per_simd_lane", "vgpr_granule")
_NVIDIA_LIMITS = {
    "occupancy_limit_registers": "registers",
    "occupancy_limit_shared_mem": "shared memory",
    "occupancy_limit_warps": "warps per block",
    "occupancy_limit_blocks": "block slots per SM",
}


@dataclass(frozen=True)
class Occupancy:
    """Theoretical occupancy (share of the maximum) and the resource that limits it."""

    share: float
    limiter: str  # "VGPRs", "LDS", "registers", "shared memory", ... or "none"
    waves_per_simd: int | None = None  # AMD
    max_waves_per_simd: int | None = None
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def amd_occupancy(launch: Mapping[str, int], hardware: Mapping[str, float]) -> Occupancy | None:
    """None when the launch parameters or the family's constants are not known."""
    if any(k not in hardware for k in _NEEDED) or launch.get("registers", -1) <= 0:
        return None
    top = int(hardware["max_waves_per_simd"])
    granule = int(hardware["vgpr_granule"])
    vgprs = launch["registers"] + max(launch.get("accum_registers", 0), 0)
    allocated = granule * math.ceil(vgprs / granule)
    by_vgpr = min(top, int(hardware["vgprs_per_simd_lane"]) // allocated)
    limits = {"VGPRs": by_vgpr}
    lds = launch.get("shared_mem", -1)
    block = _block(launch)
    if lds > 0 and block > 0 and "lds_bytes_per_cu" in hardware:
        groups = int(hardware["lds_bytes_per_cu"]) // lds
        waves = groups * math.ceil(block / int(hardware.get("wave_size", 64)))
        limits["LDS"] = min(top, waves // int(hardware["simds_per_cu"]))
    limiter = min(limits, key=lambda k: limits[k])
    waves = limits[limiter]
    detail = f"{vgprs} VGPRs per lane ({allocated} allocated)"
    if "LDS" in limits:
        detail += f", {lds:,} B LDS per work-group of {block}"
    return Occupancy(waves / top, limiter if waves < top else "none", waves, top, detail)


def nvidia_occupancy(values: Mapping[str, Value]) -> Occupancy | None:
    """From ncu's theoretical occupancy and block limits; None when ncu did not record them."""
    share = values.get("theoretical_occupancy")
    if share is None or share.value is None:
        return None
    limits = {
        label: values[key].value
        for key, label in _NVIDIA_LIMITS.items()
        if key in values and values[key].value is not None
    }
    limiter = min(limits, key=lambda k: limits[k] or 0.0) if limits else "unknown"
    registers = values.get("registers_per_thread")
    detail = ", ".join(f"{k}: {v:g} blocks/SM" for k, v in limits.items() if v is not None)
    if registers is not None and registers.value is not None:
        detail += f"; {registers.value:g} registers per thread"
    return Occupancy(share.value, limiter if share.value < 1 else "none", detail=detail)


def _block(launch: Mapping[str, int]) -> int:
    dims = [launch.get(f"block_{a}", -1) for a in "xyz"]
    return math.prod(d for d in dims if d > 0) if dims[0] > 0 else -1
