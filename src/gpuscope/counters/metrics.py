"""Derived-metric definitions, one data file per architecture family (`data/counters/*.json`).

A family file lists metrics; each metric has an id, a unit, and one or more formulas
(`counters.formula`): the first whose inputs the collection holds is used. A file may extend a
shared base (`amd-cdna`, `amd-rdna`, `nvidia`) and override its metrics by id.

How a formula combines a kernel's dispatches (`combine`):

- `sum`:   evaluated per dispatch, summed (FLOPs, bytes, instructions);
- `mean`:  evaluated per dispatch, averaged weighted by duration (ncu percentages, occupancy);
- `ratio`: evaluated once on the kernel's totals: a name is another metric's total, a counter's
  sum over the dispatches, a constant, or `duration` (the kernel's total seconds).

>>> family = family_for("gfx90a", "amd")
>>> family.name, family.metric("flops_valu_fp64").unit
('gfx90a', 'FLOP')
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from gpuscope.counters.formula import Formula, parse

COMBINES = ("sum", "mean", "ratio")
SCHEMA = "gpuscope.metrics/1"
FAMILY_FILES = ("gfx90a", "gfx942", "gfx11", "gfx12", "sm80", "sm90")


@dataclass(frozen=True)
class Alternative:
    formula: Formula
    combine: str


@dataclass(frozen=True)
class MetricDef:
    """One derived metric: what it is, its unit, and its formulas in order of preference."""

    id: str
    title: str
    unit: str
    group: str
    alternatives: tuple[Alternative, ...]
    peak: str | None = None  # peaks.json precision key of a FLOP metric ("fp32", "bf16", ...)
    matrix: bool = False  # FLOPs of matrix cores (MFMA / WMMA / tensor cores)


@dataclass(frozen=True)
class Family:
    """The metrics of one architecture family and the constants their formulas may use."""

    name: str
    label: str
    vendor: str
    architectures: tuple[str, ...]
    metrics: tuple[MetricDef, ...]
    constants: dict[str, float] = field(default_factory=dict)
    hardware: dict[str, float] = field(default_factory=dict)
    hardware_by_arch: dict[str, dict[str, float]] = field(default_factory=dict)

    def metric(self, metric_id: str) -> MetricDef:
        for metric in self.metrics:
            if metric.id == metric_id:
                return metric
        raise KeyError(metric_id)

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(m.id for m in self.metrics)

    def hardware_for(self, arch: str) -> dict[str, float]:
        """Occupancy constants (VGPRs, LDS, waves per SIMD) of `arch` within the family."""
        return {**self.hardware, **self.hardware_by_arch.get(arch, {})}


def family_for(arch: str, vendor: str = "") -> Family | None:
    """The family whose data file lists `arch` (gfx942, sm_90 ...), or None."""
    arch = normalise_arch(arch)
    for name in FAMILY_FILES:
        family = load_family(name)
        if arch in family.architectures and (not vendor or vendor == family.vendor):
            return family
    return None


def normalise_arch(arch: str) -> str:
    """`gfx942:sramecc+:xnack-` -> gfx942; `sm90` / `9.0` -> sm_90."""
    arch = arch.strip().split(":")[0].lower()
    if arch.startswith("sm") and not arch.startswith("sm_"):
        arch = "sm_" + arch[2:]
    major, dot, minor = arch.partition(".")
    if dot and major.isdigit() and minor.isdigit():
        arch = f"sm_{major}{minor}"
    return arch


@functools.cache
def load_family(name: str) -> Family:
    """Family `name` from the package data, its base's metrics merged in (overridden by id)."""
    data = _read(name)
    base = load_family(data["extends"]) if data.get("extends") else None
    own = tuple(_metric(m, name) for m in data.get("metrics", []))
    own_ids = {m.id for m in own}
    inherited = tuple(m for m in base.metrics if m.id not in own_ids) if base else ()
    constants = {**(base.constants if base else {}), **data.get("constants", {})}
    return Family(
        name=data["family"],
        label=data["label"],
        vendor=data["vendor"],
        architectures=tuple(data.get("architectures", ())),
        metrics=inherited + own,
        constants={k: float(v) for k, v in constants.items()},
        hardware={k: float(v) for k, v in data.get("hardware", {}).items()},
        hardware_by_arch={
            arch: {k: float(v) for k, v in values.items()}
            for arch, values in data.get("hardware_by_arch", {}).items()
        },
    )


def _read(name: str) -> dict[str, Any]:
    text = resources.files("gpuscope").joinpath(f"data/counters/{name}.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    if data.get("schema") != SCHEMA:
        raise ValueError(f"data/counters/{name}.json: schema {data.get('schema')!r}, not {SCHEMA}")
    return data


def _metric(entry: dict[str, Any], family: str) -> MetricDef:
    combine = entry["combine"]
    alternatives = []
    for item in entry["formulas"]:
        text, how = (item, combine) if isinstance(item, str) else (item["formula"], item["combine"])
        if how not in COMBINES:
            raise ValueError(f"{family}: metric {entry['id']}: combine {how!r} not in {COMBINES}")
        alternatives.append(Alternative(parse(text), how))
    return MetricDef(
        id=entry["id"],
        title=entry["title"],
        unit=entry["unit"],
        group=entry["group"],
        alternatives=tuple(alternatives),
        peak=entry.get("peak"),
        matrix=bool(entry.get("matrix", False)),
    )
