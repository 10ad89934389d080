"""Place a kernel on the roofline: memory- or compute-bound, and how close to the roof.

With counters: intensity = FLOPs / DRAM bytes. The compute roof is the peak of the precision
that did most of the FLOPs (`peak` key of the FLOP metrics); the ridge point is that peak over
the bandwidth. Below the ridge a kernel is memory-bound and judged by bandwidth / peak
bandwidth; above it, compute-bound and judged by FLOP/s / peak FLOP/s.

Without FLOP counters but with Nsight Compute's speed-of-light shares (`sol_memory` /
`sol_dram`, `sol_sm`: ncu's own measured % of peak sustained), the larger share names the bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from gpuscope.counters.ceilings import Ceilings
from gpuscope.counters.evaluate import Value
from gpuscope.counters.metrics import Family

COUNTERS = "counters"
SPEED_OF_LIGHT = "ncu speed-of-light"


@dataclass(frozen=True)
class Point:
    """One kernel against the roofs. Rates in FLOP/s and B/s; fractions 0..1."""

    basis: str  # COUNTERS or SPEED_OF_LIGHT
    flops: float | None = None
    bytes: float | None = None
    intensity: float | None = None  # FLOP/B
    flops_rate: float | None = None
    bandwidth: float | None = None
    precision: str | None = None  # peaks key of the dominant FLOP kind
    compute_ceiling: float | None = None  # FLOP/s of that precision
    bandwidth_ceiling: float | None = None
    ridge: float | None = None  # FLOP/B where the roofs meet
    bound: str | None = None  # "memory", "compute" or None (not decidable)
    fraction: float | None = None  # of the roof that bounds it
    bandwidth_fraction: float | None = None
    compute_fraction: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def place(
    family: Family, values: Mapping[str, Value], seconds: float | None, roofs: Ceilings | None
) -> Point | None:
    """The kernel's point, or None when neither bytes nor speed-of-light shares are known."""
    point = _from_counters(family, values, seconds, roofs)
    if point is not None and point.bound is not None:
        return point
    return _from_speed_of_light(values) or point


def _from_counters(
    family: Family, values: Mapping[str, Value], seconds: float | None, roofs: Ceilings | None
) -> Point | None:
    data = _value(values, "bytes_dram")
    if data is None or not seconds:
        return None
    flops = _value(values, "flops")
    bandwidth = data / seconds
    peak_bw = roofs.bandwidth if roofs else None
    bw_fraction = bandwidth / peak_bw if peak_bw else None
    if flops is None:
        return Point(COUNTERS, None, data, None, None, bandwidth, None, None, peak_bw, None,
                     None, None, bw_fraction, None)  # fmt: skip
    precision = _dominant(family, values)
    peak = roofs.flops_for(precision) if roofs else None
    rate = flops / seconds
    intensity = flops / data if data > 0 else None
    ridge = peak / peak_bw if peak and peak_bw else None
    bound, fraction = None, None
    compute_fraction = rate / peak if peak else None
    if ridge is not None:
        memory = intensity is not None and intensity < ridge
        bound = "memory" if memory or flops == 0 else "compute"
        fraction = bw_fraction if bound == "memory" else compute_fraction
    return Point(COUNTERS, flops, data, intensity, rate, bandwidth, precision, peak, peak_bw,
                 ridge, bound, fraction, bw_fraction, compute_fraction)  # fmt: skip


def _dominant(family: Family, values: Mapping[str, Value]) -> str | None:
    """The peaks key of the FLOP metric with the most FLOPs (None when all are 0 or unknown)."""
    best, key = 0.0, None
    for metric in family.metrics:
        value = _value(values, metric.id) if metric.peak else None
        if value is not None and value > best:
            best, key = value, metric.peak
    return key


def _from_speed_of_light(values: Mapping[str, Value]) -> Point | None:
    memory = _value(values, "sol_memory")
    memory = memory if memory is not None else _value(values, "sol_dram")
    compute = _value(values, "sol_sm")
    if memory is None or compute is None:
        return None
    bound = "memory" if memory >= compute else "compute"
    return Point(
        SPEED_OF_LIGHT,
        bound=bound,
        fraction=max(memory, compute),
        bandwidth_fraction=_value(values, "sol_dram"),
        compute_fraction=compute,
    )


def _value(values: Mapping[str, Value], metric_id: str) -> float | None:
    value = values.get(metric_id)
    return value.value if value is not None else None
