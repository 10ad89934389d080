"""The whole-profile numbers of both sides, and what changed beyond the kernels: categories,
findings that appeared or disappeared, and the caveats that limit the comparison.

Times are ns here; `serialize.py` turns them into µs. A number one side cannot measure is None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuscope.analysis import Finding
from gpuscope.analysis.categories import CATEGORIES

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

# metric -> what it is (shown as the row label); times end in _ns, shares in share/utilization
METRICS = {
    "gpu_time_ns": "GPU time (kernels + copies + memsets)",
    "kernel_time_ns": "kernel time",
    "kernels": "kernels",
    "gpu_busy_ns": "GPU busy (union)",
    "idle_ns": "GPU idle",
    "span_ns": "span",
    "utilization": "utilization",
    "gemm_share": "GEMM share",
    "memcpy_time_ns": "memcpy time",
    "cpu_op_time_ns": "CPU operator time",
}


def metrics(a: Analysis) -> dict[str, float | None]:
    """The headline numbers of one profile, by METRICS key."""
    line = a.timeline
    times = a.kernel_times_known
    span = sum(d.span_ns for d in line.devices) if line else 0
    return {
        "gpu_time_ns": sum(ns for _, ns in a.categories.values()) if times else None,
        "kernel_time_ns": a.kernel_ns if times else None,
        "kernels": sum(g.count for g in a.groups),
        "gpu_busy_ns": line.busy_ns if line else None,
        "idle_ns": line.idle_ns if line else None,
        "span_ns": line.span_ns if line else None,
        "utilization": line.busy_ns / span if line and span else None,
        "gemm_share": a.gemm_share,
        "memcpy_time_ns": sum(k.time_ns for k in a.copies.values()),
        "cpu_op_time_ns": a.cpu_busy_ns,
    }


def categories(
    before: Analysis, after: Analysis
) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    """(category, (count, ns) before, (count, ns) after) for every category either side used,
    largest |Δ time| first."""
    rows = [
        (name, before.categories[name], after.categories[name])
        for name in CATEGORIES
        if before.categories[name][0] or after.categories[name][0]
    ]
    return sorted(rows, key=lambda r: -abs(r[2][1] - r[1][1]))


def findings_change(before: Analysis, after: Analysis) -> dict[str, list[Any]]:
    """Findings (by id) only after (`appeared`), only before (`disappeared`), and on both."""
    old = {f.id for f in before.findings}
    new = {f.id for f in after.findings}
    return {
        "appeared": [_brief(f) for f in after.findings if f.id not in old],
        "disappeared": [_brief(f) for f in before.findings if f.id not in new],
        "persisted": sorted(old & new),
    }


def _brief(found: Finding) -> dict[str, Any]:
    return {"id": found.id, "severity": found.severity, "message": found.message,
            "action": found.action}  # fmt: skip


def caveats(before: Analysis, after: Analysis) -> list[dict[str, str]]:
    """What limits the comparison: other hardware, other amounts of work, missing data."""
    found = _hardware(before, after)
    counts = [_step_count(before), _step_count(after)]
    if all(c is not None for c in counts) and counts[0] != counts[1]:
        found.append(_caveat(
            "different-step-counts",
            f"before holds {counts[0]} profiled steps, after {counts[1]}: totals cover different "
            "amounts of work; the verdict compares the mean step time",
        ))  # fmt: skip
    for side, a in (("before", before), ("after", after)):
        found += _side_caveats(side, a)
    return found


def _hardware(before: Analysis, after: Analysis) -> list[dict[str, str]]:
    vendors = before.trace.meta.vendor, after.trace.meta.vendor
    devices = ", ".join(device_names(before)), ", ".join(device_names(after))
    if vendors[0] != vendors[1]:
        return [_caveat(
            "cross-vendor",
            f"before ran on {vendors[0]} ({devices[0] or 'device unknown'}), after on "
            f"{vendors[1]} ({devices[1] or 'device unknown'}): the difference includes the "
            "hardware and the vendor libraries; kernels whose names differ are matched by "
            "launching operator and input shape",
        )]  # fmt: skip
    if devices[0] and devices[1] and devices[0] != devices[1]:
        return [_caveat(
            "different-devices",
            f"before ran on {devices[0]}, after on {devices[1]}: the difference includes the "
            "hardware",
        )]  # fmt: skip
    return []


def _side_caveats(side: str, a: Analysis) -> list[dict[str, str]]:
    found = []
    if a.trace.meta.truncated:
        found.append(_caveat(f"{side}-truncated", f"the {side} trace is truncated: it misses "
                             "its end, so its totals are low"))  # fmt: skip
    if not a.kernel_times_known:
        found.append(_caveat(f"{side}-no-durations", f"the {side} profile has no kernel "
                             "durations: kernel times cannot be compared"))  # fmt: skip
    if a.timeline is None:
        found.append(_caveat(f"{side}-no-timeline", f"the {side} profile has no timestamps: "
                             "GPU busy, idle and span cannot be compared"))  # fmt: skip
    return found


def _caveat(caveat_id: str, message: str) -> dict[str, str]:
    return {"id": caveat_id, "message": message}


def device_names(a: Analysis) -> list[str]:
    """The distinct device names of a profile (none when the source does not name them)."""
    return list(dict.fromkeys(d.name for d in a.trace.meta.devices if d.name))


def _step_count(a: Analysis) -> int | None:
    extra = a.extras.get("steps")
    result = extra.result if extra is not None else None
    return len(result.steps) if result is not None and result.steps else None
