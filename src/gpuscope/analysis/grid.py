"""One launch configuration against the GPU it ran on: blocks vs SMs (work-groups vs CUs), waves,
the SMs a grid leaves idle, the time that costs, and what to do about it.

Shared by the launch-configuration analysis of `gpuscope analyze` (`analysis.launchconfig`, any
trace with launch parameters) and `gpuscope counters` (ncu / rocprof counter collections).

- blocks = grid x · y · z (CUDA blocks, HIP work-groups);
- waves = blocks ÷ (SMs × resident blocks per SM) where the residency is known (ncu's occupancy
  block limits), else blocks ÷ SMs — `waves_basis` says which;
- a grid is *small* when it has fewer blocks than the GPU has SMs: the others get no block for the
  whole launch, whatever the occupancy;
- the time at stake of a small grid is, over its launches, (duration − FIXED_NS) × the share of SMs
  it leaves idle: what filling the GPU could save at most, were the work spread perfectly. FIXED_NS
  is about the shortest device duration of any launch (an empty kernel runs 1–3 µs), which no
  grid removes: thousands of 1-block launches on tiny tensors (a decode step) weigh next to nothing.

A small grid is a finding from INFO_SHARE of the kernel time at stake, a warning from
WARNING_SHARE: the bound assumes perfect spreading, which memory-bound work does not reach once
DRAM saturates, so a warning needs a fifth of the kernel time at stake to stay worth acting on at
half of that.

>>> fill = fill_of((1, 1, 1), 132, "SM")
>>> fill.small, fill.idle_units, round(fill.waves, 4)
(True, 131, 0.0076)
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.analysis._finding import Finding, finding, us
from gpuscope.document.names import clip
from gpuscope.document.units import percent, time_ns

FIXED_NS = 3_000
# kernels of libraries and compilers: PyTorch's ATen, cuBLAS / cuBLASLt (nvjet, xmma, cutlass),
# rocBLAS / hipBLASLt (Tensile Cijk_), cuDNN, MIOpen, Triton / Inductor, XLA fusions, flash
# attention
LIBRARY_KERNEL = re.compile(
    r"at::|at_cuda_detail|cutlass|nvjet|xmma|cublas|cudnn|Cijk_|miopen|triton_|_fusion|flash|"
    r"ampere_|volta_|turing_|sm\d\d_",
    re.IGNORECASE,
)
INFO_SHARE = 0.05
WARNING_SHARE = 0.20
Dims = tuple[int, int, int]


@dataclass(frozen=True)
class Fill:
    """A grid of `blocks` on a GPU of `units` SMs / CUs."""

    blocks: int
    units: int
    unit: str  # "SM" or "CU"
    resident: int | None = None  # blocks one SM holds at once, where known

    @property
    def waves(self) -> float:
        return self.blocks / (self.units * (self.resident or 1))

    @property
    def waves_basis(self) -> str:
        if self.resident:
            return f"blocks ÷ ({self.unit}s × {self.resident} resident blocks per {self.unit})"
        return f"blocks ÷ {self.unit}s (residency unknown)"

    @property
    def waves_text(self) -> str:
        """`0.00758 waves` with a known residency, else `0.00758 blocks per SM`."""
        if self.resident:
            return f"{self.waves:.3g} waves"
        word = "blocks" if self.unit == "SM" else "work-groups"
        return f"{self.waves:.3g} {word} per {self.unit}"

    @property
    def small(self) -> bool:
        return self.blocks < self.units

    @property
    def idle_units(self) -> int:
        return max(self.units - self.blocks, 0)

    @property
    def idle_share(self) -> float:
        return self.idle_units / self.units

    def to_dict(self) -> dict[str, Any]:
        return {
            "blocks": self.blocks,
            "units": self.units,
            "unit": self.unit,
            "resident_per_unit": self.resident,
            "waves": round(self.waves, 6),
            "waves_basis": self.waves_basis,
            "idle_units": self.idle_units,
            "idle_units_share": round(self.idle_share, 6),
            "small": self.small,
        }


def blocks_of(grid: Dims) -> int:
    """x · y · z blocks (an unrecorded y / z counts 1); -1 when x is not known."""
    if grid[0] <= 0:
        return -1
    return grid[0] * max(grid[1], 1) * max(grid[2], 1)


def threads_of(block: Dims) -> int:
    return math.prod(max(d, 1) for d in block) if block[0] > 0 else -1


def fill_of(grid: Dims, units: int | None, unit: str, resident: int | None = None) -> Fill | None:
    """None when the grid or the GPU's SM / CU count is unknown."""
    blocks = blocks_of(grid)
    if blocks <= 0 or not units or units <= 0:
        return None
    return Fill(blocks, units, unit, resident if resident and resident > 0 else None)


def stake_ns(durations: Iterable[float], fill: Fill | None) -> float:
    """The time filling the GPU could save at most over these launches (0 unless small)."""
    if fill is None or not fill.small:
        return 0.0
    values = np.asarray(durations if isinstance(durations, np.ndarray) else list(durations), float)
    beyond = np.maximum(values[values > 0] - FIXED_NS, 0.0)
    if np.array_equal(beyond, np.floor(beyond)) and beyond.sum() < 2**53:
        total = float(beyond.sum())  # whole ns: any order of summing is exact
    else:
        total = float(sum(beyond.tolist()))  # as a Python loop sums, in order
    return total * fill.idle_share


def severity(stake: float, total_ns: float) -> str | None:
    """The severity for `stake` ns at stake of `total_ns` kernel time; None: no finding."""
    if total_ns <= 0:
        return None
    share = stake / total_ns
    return "warning" if share >= WARNING_SHARE else "info" if share >= INFO_SHARE else None


def guess_kind(vendor: str, framework: bool, kernel: str = "") -> str:
    """The kind of program the action is phrased for, until the trace's own program kind is known:
    "framework" where framework operators launched the kernels or the kernel is a library's or a
    compiler's (its grid is not the user's to write), else C++ for the vendor."""
    if framework or LIBRARY_KERNEL.search(kernel):
        return "framework"
    return "hip-cpp" if vendor == "amd" else "cuda-cpp"


def action(kind: str = "cuda-cpp") -> str:
    """What to do about a small grid, phrased for the kind of program (`cuda-cpp`, `hip-cpp`;
    any other kind gets the advice for kernels a library or compiler launches)."""
    if kind in ("cuda-cpp", "hip-cpp"):
        api, sms = (("hip", "hipDeviceAttributeMultiprocessorCount") if kind == "hip-cpp"
                    else ("cuda", "cudaDevAttrMultiProcessorCount"))  # fmt: skip
        return (
            "size the grid to the GPU, not to the data layout: launch a few waves of blocks — "
            f"the SM count ({api}DeviceGetAttribute {sms}) × {api}OccupancyMaxActiveBlocks"
            "PerMultiprocessor — and cover the data with a grid-stride loop (for (i = "
            "blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)); where "
            "the work itself is small, batch such launches into one or run them concurrently on "
            "streams"
        )
    return (
        "the grid follows the problem size the library or compiler was given: give each launch "
        "more work (a larger batch, calls merged into one) or a variant that splits the work "
        "across the GPU (split-K GEMMs, split-KV / flash-decoding attention); independent small "
        "launches can run concurrently on streams"
    )


@dataclass(frozen=True)
class Launches:
    """The launches of one kernel with one grid and block: what a small-grid finding is about."""

    kernel: str
    device: int
    grid: Dims
    block: Dims
    launches: int
    time_ns: float
    stake_ns: float
    fill: Fill | None


def small_grid_finding(
    found: Launches, total_ns: float, kind: str, of: str = "kernel time"
) -> Finding | None:
    """The `small-grid` finding for `found`, or None below INFO_SHARE at stake."""
    level = severity(found.stake_ns, total_ns)
    fill = found.fill
    if level is None or fill is None:
        return None
    share = found.time_ns / total_ns
    word = "block" if fill.unit == "SM" else "work-group"
    times = "1 launch" if found.launches == 1 else f"{found.launches:,} launches"
    message = (
        f"{clip(found.kernel, 70)}: {times} with a grid of {fill.blocks:,} {word}"
        f"{'s' if fill.blocks != 1 else ''} ({threads_of(found.block):,} threads each) on a GPU "
        f"of {fill.units:,} {fill.unit}s ({fill.waves_text}): {fill.idle_units:,} "
        f"{fill.unit}s idle through {time_ns(found.time_ns)}, {percent(share)} of {of} "
        f"(up to {time_ns(found.stake_ns)} at stake; threshold {percent(INFO_SHARE)}, "
        f"warning from {percent(WARNING_SHARE)})"
    )
    evidence = {
        "kernel": found.kernel,
        "grid": list(found.grid),
        "block": list(found.block),
        "threads_per_block": threads_of(found.block),
        **fill.to_dict(),
        "launches": found.launches,
        "time_us": us(found.time_ns),
        "share": round(share, 6),
        "at_stake_us": us(found.stake_ns),
        "at_stake_share": round(found.stake_ns / total_ns, 6),
    }
    return finding("small-grid", level, message, action(kind), evidence,
                   impact_ns=found.stake_ns, cause="launch-config")  # fmt: skip
