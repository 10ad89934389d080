"""`CounterAnalysis`: the metrics, roofline and findings of every kernel of a counter
collection (`pipeline.analyse_counters` computes it), and its report.

The report is plain data (`to_dict`, schema `gpuscope.counters/1`): per kernel its metrics in
base units (FLOP, B, FLOP/s, B/s; shares 0..1), the formula that produced each, the metrics it
could not compute with what they lack, its roofline point and occupancy; the roofs used and
their kind (user, measured, datasheet); findings with evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuscope.analysis import Finding
from gpuscope.analysis.grid import Fill
from gpuscope.counters.ceilings import Ceilings
from gpuscope.counters.collect import Collection, Kernel
from gpuscope.counters.evaluate import Value
from gpuscope.counters.label import Label
from gpuscope.counters.metrics import Family
from gpuscope.counters.occupancy import Occupancy
from gpuscope.counters.roofline import Point
from gpuscope.schemas import COUNTERS as SCHEMA
from gpuscope.trace.model import Device


@dataclass(frozen=True)
class KernelResult:
    """One kernel's dispatches: metrics, roofline point, occupancy."""

    kernel: Kernel
    share: float | None  # of the collection's counted kernel time
    values: dict[str, Value]
    point: Point | None
    occupancy: Occupancy | None
    fill: Fill | None = None  # the grid against the GPU
    label: Label | None = None
    ncu: dict[str, Any] | None = None  # ncu's bottleneck beside the label (ncu_rules.compare)

    @property
    def name(self) -> str:
        return self.kernel.name

    def value(self, metric_id: str) -> float | None:
        found = self.values.get(metric_id)
        return found.value if found is not None else None


@dataclass(frozen=True)
class CounterAnalysis:
    family: Family
    arch: str
    arch_from: str  # "option", "trace" or "counter names"
    device: Device | None
    ceilings: Ceilings | None
    collection: Collection
    kernels: list[KernelResult]
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "source": self._source(),
            "ceilings": self.ceilings.to_dict() if self.ceilings else None,
            "notes": list(self.collection.notes),
            "counters": self.collection.counter_names,
            "metrics": {
                m.id: {"title": m.title, "unit": m.unit, "group": m.group}
                for m in self.family.metrics
            },
            "kernels": [_kernel_dict(k) for k in self.kernels],
            "findings": [f.to_dict() for f in self.findings],
        }

    def _source(self) -> dict[str, Any]:
        c = self.collection
        return {
            "paths": list(c.paths),
            "formats": list(c.formats),
            "vendor": c.vendor,
            "device": self.device.name if self.device else None,
            "ceilings_for": self.ceilings.label if self.ceilings else None,
            "arch": self.arch or None,
            "arch_from": self.arch_from,
            "family": self.family.name,
            "family_label": self.family.label,
        }


def _kernel_dict(k: KernelResult) -> dict[str, Any]:
    available = {i: v for i, v in k.values.items() if v.available}
    return {
        "name": k.name,
        "device": k.kernel.device,
        "grid": list(k.kernel.grid),
        "block": list(k.kernel.block),
        "fill": k.fill.to_dict() if k.fill else None,
        "label": k.label.to_dict() if k.label else None,
        "ncu": {**(k.ncu or {}), "rules": k.kernel.rules} if k.kernel.rules else None,
        "dispatches": k.kernel.dispatches,
        "time_us": k.kernel.time_ns / 1000 if k.kernel.time_ns is not None else None,
        "share": k.share,
        "metrics": {i: v.value for i, v in available.items()},
        "formulas": {i: v.formula for i, v in available.items()},
        "unavailable": {i: v.reason() for i, v in k.values.items() if not v.available},
        "roofline": k.point.to_dict() if k.point else None,
        "occupancy": k.occupancy.to_dict() if k.occupancy else None,
        "launch": dict(k.kernel.launch),
    }
