"""Place a kernel on the roofline: memory- or compute-bound, and how close to the roof.

One definition, whatever decided the bound: **a fraction is what the kernel achieved ÷ the roof
in use** — the report's `ceilings` (the user's `--peaks` file, `gpuscope bench`'s measurement or
the datasheet; `ceilings.kind` says which):

- `bandwidth_fraction` = DRAM bytes ÷ the kernel's time ÷ the bandwidth roof;
- `compute_fraction` = FLOPs ÷ the kernel's time ÷ the compute roof of the precision that did
  most of the FLOPs (`peak` key of the FLOP metrics);
- `fraction` ("of roof") = the one of the two for the roof that bounds it.

Each is None where its numerator or its roof is unknown — never another quantity in its place.

The bound: with FLOP and byte counters, intensity = FLOPs / DRAM bytes against the ridge point
(compute roof ÷ bandwidth roof): below it memory-bound, above compute-bound. Without FLOP
counters but with Nsight Compute's speed-of-light section, the unit ncu finds busier (memory vs
SM throughput) names the bound (`basis` "ncu speed-of-light"). ncu's own throughputs, % of *its*
peak sustained rate, are kept under their own names in `ncu`
(`dram_throughput_pct_of_peak_sustained`, `memory_throughput_pct_of_peak_sustained`,
`sm_throughput_pct_of_peak_sustained`), never as a fraction of a roof.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
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
    fraction: float | None = None  # achieved ÷ the roof that bounds it
    bandwidth_fraction: float | None = None  # achieved B/s ÷ bandwidth_ceiling
    compute_fraction: float | None = None  # achieved FLOP/s ÷ compute_ceiling
    ncu: dict[str, float] | None = None  # ncu's own % of peak sustained, by ncu's names

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def place(
    family: Family, values: Mapping[str, Value], seconds: float | None, roofs: Ceilings | None
) -> Point | None:
    """The kernel's point, or None when neither bytes nor speed-of-light shares are known."""
    point = _from_counters(family, values, seconds, roofs)
    sol = _speed_of_light(values)
    if point is not None and point.bound is not None:
        return replace(point, ncu=sol)
    memory = _value(values, "sol_memory")
    memory = memory if memory is not None else _value(values, "sol_dram")
    sm = _value(values, "sol_sm")
    if memory is None or sm is None:
        return replace(point, ncu=sol) if point is not None else None
    bound = "memory" if memory >= sm else "compute"
    base = point or Point(SPEED_OF_LIGHT)
    fraction = base.bandwidth_fraction if bound == "memory" else base.compute_fraction
    return replace(base, basis=SPEED_OF_LIGHT, bound=bound, fraction=fraction, ncu=sol)


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


_SOL = (  # (family metric: a share, ncu's own name: a percentage)
    ("sol_dram", "dram_throughput_pct_of_peak_sustained"),
    ("sol_memory", "memory_throughput_pct_of_peak_sustained"),
    ("sol_sm", "sm_throughput_pct_of_peak_sustained"),
)


def _speed_of_light(values: Mapping[str, Value]) -> dict[str, float] | None:
    """ncu's throughputs in % of its peak sustained rates, under ncu's names."""
    found = {}
    for metric, name in _SOL:
        share = _value(values, metric)
        if share is not None:
            found[name] = round(share * 100, 6)
    return found or None


def _value(values: Mapping[str, Value], metric_id: str) -> float | None:
    value = values.get(metric_id)
    return value.value if value is not None else None
