"""Launch configuration: every kernel's grid against the GPU it ran on (report key
`launch_config`), and the small grids that hold a large share of the kernel time.

Every reader that records launches fills `trace.launch_params` (nsys, rocprofv3, rocpd, rpd,
rocprof, ncu, Kineto's grid / block args, JAX's kernel details). Launches are grouped by kernel,
device, grid and block — two launches of one kernel on 1 and 1,024 blocks are two groups. The SM /
CU count is the trace's own, else `multiprocessors` in data/peaks.json by device name. The rule
and its thresholds are in `analysis.grid`. Communication kernels (their grid is the channel
count, their time mostly waiting for peers) and spin / sleep kernels are listed, never judged.

    >>> import gpuscope
    >>> part = gpuscope.analyze("report.sqlite").to_dict()["launch_config"]  # doctest: +SKIP
    >>> part["configs"][0]["blocks"], part["configs"][0]["units"]             # doctest: +SKIP
    (1, 108)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis import grid
from gpuscope.analysis._finding import Finding, us
from gpuscope.analysis._unique import row_groups, unique
from gpuscope.analysis.categories import CATEGORIES
from gpuscope.peaks import multiprocessors
from gpuscope.trace.model import KERNEL, Trace, device_of

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis
    from gpuscope.document.model import Section

NAME = "launch_config"
TOP = 20  # groups kept in the report (every small one with a finding as well)
FINDINGS = 3  # small-grid findings at most, the most time at stake first
NOT_JUDGED = re.compile(r"spin_kernel|sleep", re.IGNORECASE)
# ncu's block limits per SM (raw page, details page): the least of them is the residency
RESIDENT_LIMITS = (
    *("launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem"),
    *("launch__occupancy_limit_warps", "launch__occupancy_limit_blocks"),
    *("launch__occupancy_limit_barriers", "Block Limit Registers", "Block Limit Shared Mem"),
    *("Block Limit Warps", "Block Limit SM", "Block Limit Barriers"),
)


@dataclass(frozen=True)
class Group:
    launches: grid.Launches
    judged: bool  # False for communication and spin kernels


@dataclass(frozen=True)
class Result:
    groups: list[Group]  # by time, longest first
    kernel_ns: int
    units: dict[int, tuple[int, str] | None]  # device -> (SMs / CUs, where from)
    unit: str
    vendor: str
    framework: bool  # framework operators (or XLA) launched the kernels

    program: str = "unknown"  # analysis.program's kind

    def kind(self, kernel: str = "") -> str:
        """The kind of program the action for `kernel` is phrased for (`grid.action`): a C++
        program's own kernels get the C++ advice; a framework's, a library's or a compiler's
        kernel (its grid is not the user's to write) the framework's."""
        if self.program in ("cuda-cpp", "hip-cpp") and not grid.LIBRARY_KERNEL.search(kernel):
            return self.program
        if self.program != "unknown":
            return "framework"
        return grid.guess_kind(self.vendor, self.framework, kernel)


def analyse(a: Analysis) -> Result | None:
    """None without launch parameters or kernel durations."""
    trace = a.trace
    if not len(trace.launch_params) or not a.inputs.durations or a.kernel_ns <= 0:
        return None
    rows, dims = _kernel_launches(trace)
    if not len(rows):
        return None
    devices = unique(trace.gpu.device[rows]).tolist()
    units = {d: multiprocessors(device_of(trace.meta.devices, d)) for d in devices}
    unit = "CU" if trace.meta.vendor == "amd" else "SM"
    keys = np.column_stack([trace.gpu.name[rows], trace.gpu.device[rows], dims])
    first, members = row_groups(keys)
    make = _GroupMaker(a, units, unit)
    groups = [make(int(rows[i]), dims[i], rows[m]) for i, m in zip(first, members, strict=True)]
    groups.sort(key=lambda g: (-g.launches.time_ns, g.launches.kernel))
    framework = a.inputs.cpu or "jax" in trace.meta.format or "xla" in trace.meta.format
    return Result(groups, a.kernel_ns, units, unit, trace.meta.vendor, framework, a.program.kind)


class _GroupMaker:
    """One Group from its first launch's row and grid / block and the rows of all its launches."""

    def __init__(self, a: Analysis, units: dict[int, tuple[int, str] | None], unit: str) -> None:
        self.trace, self.units, self.unit = a.trace, units, unit
        self.resident = _resident(a.trace)
        self.communication = a.classes.category == CATEGORIES.index("communication")

    def __call__(self, row: int, dims: Any, members: Any) -> Group:
        gpu = self.trace.gpu
        name = self.trace.names[int(gpu.name[row])]
        known = self.units[int(gpu.device[row])]
        launch_grid, block = _dims(dims[:3]), _dims(dims[3:])
        fill = grid.fill_of(launch_grid, known[0] if known else None, self.unit,
                            self.resident.get(row))  # fmt: skip
        judged = not self.communication[row] and not NOT_JUDGED.search(name)
        durations = gpu.dur[members].astype(float)
        stake = grid.stake_ns(durations, fill) if judged else 0.0
        launches = grid.Launches(name, int(gpu.device[row]), launch_grid, block, len(members),
                                 float(durations.sum()), stake, fill)  # fmt: skip
        return Group(launches, judged)


def _kernel_launches(trace: Trace) -> tuple[Any, Any]:
    """(rows of trace.gpu, their grid x/y/z and block x/y/z): timed kernels with a known grid."""
    params = trace.launch_params
    gpu = trace.gpu
    ok = (params.row >= 0) & (params.row < len(gpu))
    params = params.take(ok)
    rows = params.row
    keep = (gpu.kind[rows] == KERNEL) & (gpu.dur[rows] >= 0) & (params.grid_x > 0)
    columns = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")
    dims = np.column_stack([getattr(params, c).astype(np.int64) for c in columns])
    return rows[keep], dims[keep]


def _dims(values: Any) -> grid.Dims:
    x, y, z = (int(v) for v in values)
    return x, y, z


def _resident(trace: Trace) -> dict[int, int]:
    """Blocks one SM holds at once, per row of trace.gpu, where ncu recorded its block limits."""
    if not len(trace.counters):
        return {}
    wanted = set(RESIDENT_LIMITS)
    codes = [i for i in unique(trace.counters.name).tolist() if trace.names[i] in wanted]
    if not codes:
        return {}
    table = trace.counters
    pick = np.isin(table.name, codes) & (table.row >= 0) & (table.value > 0)
    found: dict[int, int] = {}
    for row, value in zip(table.row[pick].tolist(), table.value[pick].tolist(), strict=True):
        found[row] = min(found.get(row, int(value)), int(value))
    return found


def small(result: Result) -> list[Group]:
    """The judged groups whose grid leaves SMs idle, the most time at stake first."""
    found = [g for g in result.groups if g.judged and g.launches.fill and g.launches.fill.small]
    return sorted(found, key=lambda g: -g.launches.stake_ns)


def findings(a: Analysis, result: Result) -> list[Finding]:
    found = []
    bound = a.verdict.bound
    for group in small(result):
        kind = result.kind(group.launches.kernel)
        made = grid.small_grid_finding(group.launches, result.kernel_ns, kind)
        if made is None:
            continue
        if bound not in ("gpu-bound", "no-gpu-activity", "unknown", ""):
            made = replace(
                made,
                action=made.action
                + (
                    f". The trace is {bound}: the GPU also waits for other work, so a fuller grid "
                    "shortens the step only once that wait is fixed"
                ),
            )
        found.append(made)
    return found[:FINDINGS]


def to_dict(result: Result) -> dict[str, Any]:
    flagged = small(result)
    shown = result.groups[:TOP] + [g for g in flagged if g not in result.groups[:TOP]]
    total = result.kernel_ns
    return {
        "kernel_time_us": us(total),
        "launches": sum(g.launches.launches for g in result.groups),
        "configs": len(result.groups),
        "devices": [
            {
                "id": d,
                "units": known[0] if known else None,
                "unit": result.unit,
                "units_from": known[1] if known else None,
            }
            for d, known in sorted(result.units.items())
        ],
        "program_kind": result.kind(),
        "rule": {
            "fixed_launch_us": us(grid.FIXED_NS),
            "info_share": grid.INFO_SHARE,
            "warning_share": grid.WARNING_SHARE,
        },
        "small_grid": {
            "configs": len(flagged),
            "launches": sum(g.launches.launches for g in flagged),
            "time_us": us(sum(g.launches.time_ns for g in flagged)),
            "share": round(sum(g.launches.time_ns for g in flagged) / total, 6),
            "at_stake_us": us(sum(g.launches.stake_ns for g in flagged)),
            "at_stake_share": round(sum(g.launches.stake_ns for g in flagged) / total, 6),
        },
        "groups": [_group_dict(g, total) for g in shown],
    }


def _group_dict(group: Group, total: int) -> dict[str, Any]:
    k = group.launches
    return {
        "kernel": k.kernel,
        "device": k.device,
        "grid": list(k.grid),
        "block": list(k.block),
        "threads_per_block": grid.threads_of(k.block),
        "launches": k.launches,
        "time_us": us(k.time_ns),
        "share": round(k.time_ns / total, 6),
        "fill": k.fill.to_dict() if k.fill else None,
        "judged": group.judged,
        "at_stake_us": us(k.stake_ns),
        "at_stake_share": round(k.stake_ns / total, 6),
    }


def section(part: dict[str, Any]) -> Section:
    from gpuscope.analysis._launchconfig_section import launch_config_section

    return launch_config_section(part)
