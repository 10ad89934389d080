"""gpuscope's one-word label for a kernel group: small grid, memory-bound, compute-bound, unknown.

A grid with fewer blocks than the GPU has SMs (CUs) is a *small grid* before anything else: the
idle SMs cap every throughput, so no roof says what limits it. Otherwise the roofline point
decides (`roofline.place`): by arithmetic intensity against the ridge point of the roofs in use,
or — without FLOP counters — by ncu's memory vs SM throughput.

>>> from gpuscope.analysis.grid import Fill
>>> label_of(None, Fill(1, 132, "SM")).label
'small grid'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from gpuscope.analysis.grid import Fill
from gpuscope.counters.roofline import COUNTERS, Point


@dataclass(frozen=True)
class Label:
    label: str  # "small grid", "memory-bound", "compute-bound" or "unknown"
    why: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def label_of(point: Point | None, fill: Fill | None) -> Label:
    if fill is not None and fill.small:
        word = "block" if fill.unit == "SM" else "work-group"
        return Label(
            "small grid",
            f"{fill.blocks:,} {word}{'s' if fill.blocks != 1 else ''} for {fill.units:,} "
            f"{fill.unit}s: {fill.idle_units:,} {fill.unit}s get none",
        )
    if point is None or point.bound is None:
        return Label("unknown", "no FLOP and DRAM byte counters, no speed-of-light section")
    name = f"{point.bound}-bound"
    if point.basis == COUNTERS and point.intensity is not None and point.ridge is not None:
        side = "below" if point.bound == "memory" else "above"
        return Label(name, f"{point.intensity:.3g} FLOP/B, {side} the ridge point at "
                           f"{point.ridge:.3g} FLOP/B")  # fmt: skip
    sol = point.ncu or {}
    memory = sol.get("memory_throughput_pct_of_peak_sustained")
    sm = sol.get("sm_throughput_pct_of_peak_sustained")
    if memory is not None and sm is not None:
        return Label(name, f"ncu's memory throughput {memory:.3g}% vs SM {sm:.3g}% of peak "
                           "sustained")  # fmt: skip
    return Label(name, f"{point.basis}")
