"""The counters' finding rules: what to do, with thresholds and evidence, like analyze's.

Every rule looks at the hottest kernels (by counted time, else by order of collection), fires
only on metrics that were computed (an unavailable metric never reads as 0), and states the
threshold it fired at.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from gpuscope.analysis import Finding, finding, grid
from gpuscope.document import units as fmt
from gpuscope.document.names import clip

if TYPE_CHECKING:
    from gpuscope.counters.analysis import CounterAnalysis, KernelResult
    from gpuscope.counters.roofline import Point

HOT = 5  # kernels looked at by the per-kernel rules
NAME_WIDTH = 60  # characters of a kernel's name in a message
MIN_SHARE = 0.02  # ... when they hold at least this share of the counted time
LDS_CONFLICTS = 0.10  # bank-conflict cycles over LDS cycles
LDS_CONFLICTS_BAD = 0.25
AT_BANDWIDTH = 0.60  # a memory-bound kernel at this share of the bandwidth roof
LOW_BANDWIDTH = 0.30
LOW_COMPUTE = 0.30
LOW_OCCUPANCY = 0.50
LOW_LANES = 0.50  # VALU lanes active per instruction
GEMM_LIKE = re.compile(
    r"gemm|matmul|Cijk_|mfma|wmma|xmma|cutlass|nvjet|hgemm|sgemm|dgemm|_mm_|bmm|conv", re.I
)


def findings(analysis: CounterAnalysis) -> list[Finding]:
    hot = _hot(analysis)
    full = [k for k in hot if not _small(k)]  # small grids: no roof tells
    found: list[Finding] = _small_grid(analysis)
    found += _matrix_unused(analysis, hot)
    for rule in (_lds_conflicts, _memory_bound, _compute_low, _occupancy, _divergence):
        found += rule(analysis, full)
    return found + _no_roofline(analysis, hot)


def _small(k: KernelResult) -> bool:
    """A grid that leaves SMs idle, or one ncu's speed-of-light rule calls too small."""
    return bool(k.fill and k.fill.small) or (k.ncu or {}).get("bottleneck") == "small grid"


def _small_grid(analysis: CounterAnalysis) -> list[Finding]:
    """Launch groups whose grid leaves SMs idle, by the rule of `analysis.grid` (the time at
    stake against the counted kernel time); the most time at stake first."""
    total = sum(k.kernel.time_ns or 0.0 for k in analysis.kernels)
    found = []
    for k in analysis.kernels:
        if not (k.fill and k.fill.small) or k.kernel.time_ns is None:
            continue
        durations = k.kernel.duration_ns.tolist()
        launches = grid.Launches(k.name, k.kernel.device, k.kernel.grid, k.kernel.block,
                                 k.kernel.dispatches, k.kernel.time_ns,
                                 grid.stake_ns(durations, k.fill), k.fill)  # fmt: skip
        kind = grid.guess_kind(analysis.family.vendor, False, k.name)
        made = grid.small_grid_finding(launches, total, kind, "the profiled kernel time")
        if made is not None:
            found.append(made)
    return sorted(found, key=lambda f: -(f["impact_us"] or 0.0))


def _hot(analysis: CounterAnalysis) -> list[KernelResult]:
    kernels = analysis.kernels[:HOT]
    return [k for k in kernels if k.share is None or k.share >= MIN_SHARE]


def _label(analysis: CounterAnalysis) -> str:
    return "MFMA" if analysis.family.vendor == "amd" else "tensor-core"


def _matrix_unused(analysis: CounterAnalysis, hot: list[KernelResult]) -> list[Finding]:
    idle = []
    for k in analysis.kernels[:HOT]:
        if not GEMM_LIKE.search(k.name):
            continue
        instructions = k.value("matrix_instructions")
        active = k.value("tensor_active")
        if instructions == 0 or (instructions is None and active is not None and active < 1e-3):
            idle.append(k)
    if not idle:
        return []
    share = _share_text(idle)
    names = "; ".join(clip(k.name, NAME_WIDTH) for k in idle)
    return [
        finding(
            "matrix-cores-unused",
            "warning",
            f"matrix cores unused: 0 {_label(analysis)} instructions in the {len(idle)} hottest "
            f"GEMM-like kernel(s){share}: {names}",
            "run these products on the matrix cores: bf16/fp16 (or TF32) inputs, a BLAS call "
            "that picks an MFMA / WMMA / tensor-core kernel (hipBLASLt, rocBLAS, cuBLAS), not a "
            "scalar fallback kernel",
            {"kernels": [_evidence(k, ("matrix_instructions", "tensor_active")) for k in idle]},
        )
    ]


def _lds_conflicts(analysis: CounterAnalysis, hot: list[KernelResult]) -> list[Finding]:
    found = []
    what = "LDS" if analysis.family.vendor == "amd" else "shared-memory"
    cycles = "LDS cycles" if analysis.family.vendor == "amd" else "shared-memory wavefronts"
    for k in hot:
        share = k.value("lds_bank_conflict_share")
        if share is None or share < LDS_CONFLICTS:
            continue
        severity = "warning" if share >= LDS_CONFLICTS_BAD else "info"
        found.append(
            finding(
                "lds-bank-conflicts",
                severity,
                f"{what} bank conflicts {share:.0%} of {cycles} in {clip(k.name, NAME_WIDTH)} "
                f"(threshold {LDS_CONFLICTS:.0%})",
                "pad the shared arrays (one extra element per row) or swizzle the index so that "
                "lanes of a wave hit different banks",
                _evidence(k, ("lds_bank_conflict_share", "bytes_lds")),
            )
        )
    return found


def _memory_bound(analysis: CounterAnalysis, hot: list[KernelResult]) -> list[Finding]:
    found = []
    for k in hot:
        point = k.point
        level = _bandwidth_level(analysis, point) if point and point.bound != "compute" else None
        if point is None or level is None:
            continue
        fraction, where = level
        if fraction >= AT_BANDWIDTH:
            verb = "is memory-bound at" if point.bound == "memory" else "moves"
            found.append(
                finding(
                    "memory-bound",
                    "info",
                    f"{clip(k.name, NAME_WIDTH)} {verb} {where} (threshold {AT_BANDWIDTH:.0%}): "
                    "bandwidth limits it, only fewer bytes will help",
                    "move fewer bytes: fuse it with its neighbours, keep data in a lower "
                    "precision, reuse tiles through LDS / L2 instead of re-reading",
                    _evidence(k, ("bytes_dram", "dram_bandwidth", "intensity_dram", "sol_dram")),
                    cause="kernel-efficiency",
                )
            )
        elif point.bound == "memory" and fraction < LOW_BANDWIDTH:
            found.append(
                finding(
                    "memory-latency-bound",
                    "warning",
                    f"{clip(k.name, NAME_WIDTH)} is memory-bound but at only {where} (threshold "
                    f"{LOW_BANDWIDTH:.0%}): too few bytes in flight",
                    "raise memory parallelism: more waves / blocks in flight (occupancy), wider "
                    "(vectorised, coalesced) loads, fewer dependent loads per thread",
                    _evidence(k, ("bytes_dram", "dram_bandwidth", "l2_hit_rate", "sol_dram")),
                    cause="kernel-efficiency",
                )
            )
    return found


def _bandwidth_level(analysis: CounterAnalysis, point: Point) -> tuple[float, str] | None:
    """(share, its wording): achieved ÷ the bandwidth roof in use, else ncu's own DRAM (or memory)
    throughput in % of its peak sustained, named as such."""
    if point.bandwidth_fraction is not None and point.bandwidth_ceiling:
        roof = fmt.rate(point.bandwidth_ceiling, "B/s")
        return point.bandwidth_fraction, (
            f"{point.bandwidth_fraction:.0%} of the {_roof_kind(analysis)} DRAM bandwidth roof "
            f"({roof})"
        )
    sol = point.ncu or {}
    for key, what in (("dram_throughput_pct_of_peak_sustained", "DRAM"),
                      ("memory_throughput_pct_of_peak_sustained", "memory")):  # fmt: skip
        if key in sol:
            return sol[key] / 100, f"{sol[key]:.3g}% of ncu's {what} peak sustained rate"
    return None


def _compute_low(analysis: CounterAnalysis, hot: list[KernelResult]) -> list[Finding]:
    found = []
    for k in hot:
        point = k.point
        if point is None or point.bound != "compute":
            continue
        sol = (point.ncu or {}).get("sm_throughput_pct_of_peak_sustained")
        if point.compute_fraction is not None:
            level = point.compute_fraction
            where = (f"{level:.0%} of the {_roof_kind(analysis)} {point.precision} peak "
                     f"({fmt.rate(point.compute_ceiling, 'FLOP/s')})")  # fmt: skip
        elif sol is not None:
            level, where = sol / 100, f"{sol:.3g}% of ncu's SM peak sustained rate"
        else:
            continue
        if level >= LOW_COMPUTE:
            continue
        found.append(
            finding(
                "compute-bound-low",
                "warning",
                f"{clip(k.name, NAME_WIDTH)} is compute-bound at {where} "
                f"(threshold {LOW_COMPUTE:.0%})",
                "check the instruction mix and stalls: a matrix-core path for products, fewer "
                "conversions and integer address arithmetic, more independent work per wave",
                _evidence(k, ("flops", "flops_rate", "intensity_dram", "sol_sm")),
                cause="kernel-efficiency",
            )
        )
    return found


def _occupancy(analysis: CounterAnalysis, hot: list[KernelResult]) -> list[Finding]:
    found = []
    for k in hot:
        occ = k.occupancy
        if occ is None or occ.share > LOW_OCCUPANCY or occ.limiter in ("none", "unknown"):
            continue
        if occ.waves_per_simd is not None:
            level = f"{occ.waves_per_simd} of {occ.max_waves_per_simd} waves per SIMD"
        else:
            level = f"{occ.share:.0%} theoretical occupancy"
        library = GEMM_LIKE.search(k.name) is not None  # tuned tiles trade occupancy for reuse
        found.append(
            finding(
                "low-occupancy",
                "info" if library else "warning",
                f"low occupancy in {clip(k.name, NAME_WIDTH)}: {level}, limited by {occ.limiter} "
                f"({occ.detail}; threshold {LOW_OCCUPANCY:.0%})",
                f"use fewer {occ.limiter} per thread / work-group (launch bounds, smaller "
                "tiles, spill less-used values) so more waves hide latency",
                {
                    **_evidence(k, ("achieved_occupancy", "mean_waves_per_active_cu")),
                    "occupancy": occ.to_dict(),
                },
            )
        )
    return found


def _divergence(analysis: CounterAnalysis, hot: list[KernelResult]) -> list[Finding]:
    found = []
    for k in hot:
        lanes = k.value("valu_thread_efficiency")
        if lanes is None or lanes >= LOW_LANES:
            continue
        found.append(
            finding(
                "valu-divergence",
                "info",
                f"only {lanes:.0%} of VALU lanes active per instruction in "
                f"{clip(k.name, NAME_WIDTH)} (threshold {LOW_LANES:.0%}): divergent branches or "
                "partial waves",
                "make neighbouring lanes take the same branch (sort or bin the work), size "
                "work-groups in multiples of the wave size",
                _evidence(k, ("valu_thread_efficiency",)),
            )
        )
    return found


def _no_roofline(analysis: CounterAnalysis, hot: list[KernelResult]) -> list[Finding]:
    if not analysis.kernels or any(k.point is not None and k.point.bound for k in hot):
        return []
    top = analysis.kernels[0]
    missing = {m for i in ("flops", "bytes_dram") for m in top.values[i].missing}
    if not missing:
        return []
    names = ", ".join(sorted(missing)[:8]) + (" ..." if len(missing) > 8 else "")
    arch = analysis.arch or analysis.family.architectures[0]
    return [
        finding(
            "roofline-needs-counters",
            "info",
            f"no roofline for the hottest kernel: missing {names}",
            f"collect the roofline counters: gpuscope counters --plan roofline --arch {arch} "
            "writes the pmc: lines (rocprofv3 -i FILE); for ncu add the FLOP and dram__bytes "
            "metrics or --section SpeedOfLight",
            {"kernel": top.name, "missing": sorted(missing)},
        )
    ]


def _roof_kind(analysis: CounterAnalysis) -> str:
    """user / measured / datasheet: the kind of the roofs in use."""
    return analysis.ceilings.kind if analysis.ceilings else "unknown"


def _share_text(kernels: list[KernelResult]) -> str:
    shares = [k.share for k in kernels]
    if any(s is None for s in shares):
        return ""
    return f" ({sum(s or 0.0 for s in shares):.0%} of counted kernel time)"


def _evidence(k: KernelResult, metrics: tuple[str, ...]) -> dict[str, Any]:
    found: dict[str, Any] = {
        "kernel": k.name,
        "dispatches": k.kernel.dispatches,
        "time_us": round(k.kernel.time_ns / 1000, 3) if k.kernel.time_ns else None,
        "share": k.share,
    }
    for metric in metrics:
        if metric in k.values and k.values[metric].available:
            found[metric] = k.values[metric].value
    if k.point is not None:
        found["roofline"] = k.point.to_dict()
    return found
