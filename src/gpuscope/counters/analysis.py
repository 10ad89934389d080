"""Counters → derived metrics → roofline → advice, for every kernel of a counter collection.

    >>> from gpuscope.trace.registry import read_traces
    >>> counters = analyse_counters(read_traces("ncu_raw.csv"))          # doctest: +SKIP
    >>> counters.to_dict()["kernels"][0]["metrics"]["dram_bandwidth"]    # doctest: +SKIP
    2871000000000.0

The report is plain data (`to_dict`, schema `gpuscope.counters/1`): per kernel its metrics in
base units (FLOP, B, FLOP/s, B/s; shares 0..1), the formula that produced each, the metrics it
could not compute with what they lack, its roofline point and occupancy; the roofs used and
their kind (user, measured, datasheet); findings with evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpuscope.analysis import Finding
from gpuscope.analysis.grid import Fill, blocks_of, fill_of
from gpuscope.counters import advice
from gpuscope.counters.ceilings import Ceilings, ceilings_for
from gpuscope.counters.collect import Collection, Kernel, collect
from gpuscope.counters.evaluate import Value, evaluate
from gpuscope.counters.label import Label, label_of
from gpuscope.counters.metrics import FAMILY_FILES, Family, family_for, load_family
from gpuscope.counters.ncu_rules import compare, ncu_bottleneck
from gpuscope.counters.occupancy import Occupancy, amd_occupancy, nvidia_occupancy
from gpuscope.counters.roofline import Point, place
from gpuscope.errors import InputError
from gpuscope.peaks import multiprocessors
from gpuscope.trace.model import Device, Trace, device_of

SCHEMA = "gpuscope.counters/1"
# the family metrics of ncu's block limits per SM: the least is the blocks one SM holds at once
RESIDENT_LIMITS = (
    "occupancy_limit_registers",
    "occupancy_limit_shared_mem",
    "occupancy_limit_warps",
    "occupancy_limit_blocks",
)


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
            "findings": self.findings,
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


def analyse_counters(
    traces: Sequence[Trace],
    arch: str | None = None,
    peaks_file: str | None = None,
    device_name: str | None = None,
) -> CounterAnalysis:
    """Metrics, roofline and advice for the counter dispatches of `traces` (one collection).

    `arch` and `device_name` name the GPU when the files do not (rocprof v1 counter CSVs)."""
    collection = collect(traces)
    if not collection.kernels:
        paths = ", ".join(sorted({t.meta.path for t in traces})) or "the input"
        raise InputError(
            f"{paths}: no hardware counters found; collect them with rocprofv3 --pmc / -i FILE, "
            "rocprof -i FILE or ncu (gpuscope run --tools rocprofv3_compute / ncu)"
        )
    family, arch, arch_from = _family(collection, arch)
    device = device_of(collection.devices, collection.kernels[0].device)
    if device_name:  # the GPU the user names: its datasheet roofs and SM count
        first = collection.kernels[0].device
        device = replace(device, name=device_name) if device else Device(first, device_name)
    roofs = ceilings_for(device, peaks_file, device_name=device_name)
    constants = _constants(device)
    hardware = family.hardware_for(arch)
    total = sum(k.time_ns or 0.0 for k in collection.kernels)
    units = multiprocessors(device)
    unit = "CU" if family.vendor == "amd" else "SM"
    results = []
    for kernel in collection.kernels:
        values = evaluate(family, kernel, constants)
        seconds = kernel.time_ns * 1e-9 if kernel.time_ns else None
        share = kernel.time_ns / total if kernel.time_ns and total else None
        occupancy = (
            amd_occupancy(kernel.launch, hardware)
            if family.vendor == "amd"
            else nvidia_occupancy(values)
        )
        point = place(family, values, seconds, roofs)
        fill = fill_of(kernel.grid, units[0] if units else None, unit, _resident(values))
        label = label_of(point, fill)
        bottleneck = ncu_bottleneck(kernel.rules)
        ncu = None
        if bottleneck is not None:
            sol = (point.ncu if point else None) or {}
            ncu = compare(label, bottleneck, fill, sol, blocks_of(kernel.grid))
        results.append(KernelResult(kernel, share, values, point, occupancy, fill, label, ncu))
    report = CounterAnalysis(family, arch, arch_from, device, roofs, collection, results)
    return CounterAnalysis(
        family, arch, arch_from, device, roofs, collection, results, advice.findings(report)
    )


def _family(collection: Collection, arch: str | None) -> tuple[Family, str, str]:
    if arch:
        family = family_for(arch)
        if family is None:
            known = ", ".join(a for f in FAMILY_FILES for a in load_family(f).architectures)
            raise InputError(f"--arch {arch}: no counter formulas for it; known: {known}")
        return family, arch, "option"
    for device in collection.devices:
        found = family_for(device.arch, collection.vendor) if device.arch else None
        if found is not None:
            return found, device.arch, "trace"
    return _guess(collection)


def _guess(collection: Collection) -> tuple[Family, str, str]:
    """A family from the counter names when the trace names no architecture."""
    names = collection.counter_names
    if collection.vendor == "nvidia" or any("__" in n for n in names):
        return load_family("sm90"), "", "counter names (NVIDIA; pass --arch for another)"
    if any(n.startswith("GL2C_") for n in names):
        return load_family("gfx11"), "", "counter names (RDNA; pass --arch gfx1201 for RDNA 4)"
    if any(n.startswith("TCC_EA0_") for n in names):
        return load_family("gfx942"), "", "counter names (CDNA 3; pass --arch to be sure)"
    return load_family("gfx90a"), "", "counter names (CDNA 2 assumed; pass --arch to be sure)"


def _constants(device: Device | None) -> dict[str, float]:
    if device is None:
        return {}
    found: dict[str, float] = {}
    if device.compute_units:
        found["cus"] = float(device.compute_units)
    xcc = device.properties.get("num_xcc")
    if isinstance(xcc, (int, float)) and xcc > 0:
        found["xcds"] = float(xcc)
    return found


def _resident(values: dict[str, Value]) -> int | None:
    """Blocks one SM holds at once: the least of ncu's block limits, where ncu recorded them."""
    limits = [values[m].value for m in RESIDENT_LIMITS if m in values]
    known = [int(v) for v in limits if v is not None and v > 0]
    return min(known) if known else None


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
