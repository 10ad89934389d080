"""Counters → derived metrics → roofline → findings, for every kernel of a counter collection.

>>> from gpuscope.trace.registry import read_traces
>>> counters = analyse_counters(read_traces("ncu_raw.csv"))          # doctest: +SKIP
>>> counters.to_dict()["kernels"][0]["metrics"]["dram_bandwidth"]    # doctest: +SKIP
2871000000000.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gpuscope.analysis.grid import blocks_of, fill_of
from gpuscope.counters.analysis import CounterAnalysis, KernelResult
from gpuscope.counters.ceilings import ceilings_for
from gpuscope.counters.collect import Collection, collect
from gpuscope.counters.evaluate import Value, evaluate
from gpuscope.counters.label import label_of
from gpuscope.counters.metrics import FAMILY_FILES, Family, family_for, load_family
from gpuscope.counters.ncu_rules import compare, ncu_bottleneck
from gpuscope.counters.occupancy import amd_occupancy, nvidia_occupancy
from gpuscope.counters.roofline import place
from gpuscope.counters.rules import findings
from gpuscope.errors import InputError
from gpuscope.peaks import multiprocessors
from gpuscope.trace.model import Device, Trace, device_of

# the family metrics of ncu's block limits per SM: the least is the blocks one SM holds at once
RESIDENT_LIMITS = (
    "occupancy_limit_registers",
    "occupancy_limit_shared_mem",
    "occupancy_limit_warps",
    "occupancy_limit_blocks",
)


def analyse_counters(
    traces: Sequence[Trace],
    arch: str | None = None,
    peaks_file: str | None = None,
    device_name: str | None = None,
) -> CounterAnalysis:
    """Metrics, roofline and findings for the counter dispatches of `traces` (one collection).

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
        family, arch, arch_from, device, roofs, collection, results, findings(report)
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
