"""GEMM / attention / convolution efficiency from recorded shapes: tuned GEMMs vs slow ones.

For every operator with a FLOP model (`_flops`) that launched kernels, the FLOPs and bytes of
its recorded shapes are set against the device time of the kernels it launched (linked by
External id to the innermost operator: `aten::linear → aten::addmm` is counted once, at addmm).
Calls are grouped by (operator, shape, dtype, device): achieved TFLOP/s and GB/s, arithmetic
intensity, the fraction of the device's datasheet peak for that precision (`data/peaks.json`),
and which roof bounds the shape (intensity below peak FLOP/s ÷ peak bandwidth: memory-bound).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis import _efficiency_rules as rules
from gpuscope.analysis._finding import Finding, us
from gpuscope.analysis._flops import GEMM, MODELS, Work, work
from gpuscope.analysis._opinputs import Recorded, distinct, per_op, short
from gpuscope.analysis._unique import unique
from gpuscope.analysis.categories import CATEGORIES
from gpuscope.peaks import Peaks, peaks_for
from gpuscope.trace.model import KERNEL, device_of

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis
    from gpuscope.document.model import Section

NAME = "efficiency"
BIG = 1024  # M, N, K all at least this: a shape that can reach the compute roof
SKINNY = 64  # M or N at most this: a decode / skinny GEMM, memory-bound, judged by bandwidth
TOP = 25  # groups kept in the report
_PEAK_KEY = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}
_TF32 = re.compile(r"tf32|xf32|s1688gemm|s16816gemm", re.IGNORECASE)


@dataclass(frozen=True)
class Group:
    """All calls of one operator on one shape and dtype, on one device."""

    op: str
    work: Work
    device: str
    calls: int
    kernels: int
    time_ns: int
    flops: float
    bytes: float
    peak_key: str | None
    peak_flops: float | None  # FLOP/s
    peak_bw: float | None  # B/s

    @property
    def achieved(self) -> float:
        return self.flops / (self.time_ns * 1e-9) if self.time_ns > 0 else 0.0

    @property
    def bandwidth(self) -> float:
        return self.bytes / (self.time_ns * 1e-9) if self.time_ns > 0 else 0.0

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes if self.bytes else 0.0

    @property
    def memory_bound(self) -> bool | None:
        if not self.peak_flops or not self.peak_bw:
            return None
        return self.intensity < self.peak_flops / self.peak_bw

    @property
    def flop_fraction(self) -> float | None:
        return self.achieved / self.peak_flops if self.peak_flops else None

    @property
    def bw_fraction(self) -> float | None:
        return self.bandwidth / self.peak_bw if self.peak_bw else None

    @property
    def roofline_fraction(self) -> float | None:
        """Achieved over the roof its intensity allows (compute or bandwidth)."""
        if not self.peak_flops or not self.peak_bw:
            return None
        return self.achieved / min(self.peak_flops, self.intensity * self.peak_bw)

    @property
    def size(self) -> str:
        """'big' (M,N,K ≥ 1024), 'skinny' (M or N ≤ 64) or 'medium'; '' for non-GEMMs."""
        if self.work.mnk is None:
            return ""
        m, n, k = self.work.mnk
        if min(m, n) <= SKINNY:
            return "skinny"
        return "big" if min(m, n, k) >= BIG else "medium"


@dataclass(frozen=True)
class Result:
    groups: list[Group]  # largest time first
    kernel_ns: int
    gemm_ns: int  # kernel time of the GEMM category (all GEMM kernels, shapes known or not)
    gemm_graph_ns: int  # ... of it replayed from CUDA/HIP graphs (no operator to link)
    device: str  # the device name as recorded ('' when none)
    peaks: Peaks | None

    def family_ns(self, family: str) -> int:
        return sum(g.time_ns for g in self.groups if g.work.family == family)


def analyse(a: Analysis) -> Result | None:
    """None when no operator with a FLOP model launched a kernel (no shapes, no links)."""
    if not a.inputs.cpu or not a.inputs.durations or not a.kernel_times_known:
        return None
    groups = _groups(a)
    if not groups:
        return None
    device = _main_device(a)
    gemm = (a.trace.gpu.kind == KERNEL) & (a.classes.category == CATEGORIES.index("gemm"))
    return Result(
        groups,
        a.kernel_ns,
        a.categories["gemm"][1],
        int(a.trace.gpu.dur[gemm & a.links.graph].sum()),
        device.name if device else "",
        peaks_for(device),
    )


def _main_device(a: Analysis) -> Any:
    kernels = a.trace.gpu.device[a.trace.gpu.kind == KERNEL]
    if len(kernels) == 0:
        return None
    ids, counts = np.unique(kernels, return_counts=True)
    return device_of(a.trace.meta.devices, int(ids[np.argmax(counts)]))


def _groups(a: Analysis) -> list[Group]:
    trace = a.trace
    gpu, ops = trace.gpu, trace.ops
    owner = np.where(gpu.kind == KERNEL, a.owners, -1)
    modelled = [i for i in unique(ops.name[owner[owner >= 0]]) if trace.names[i] in MODELS]
    if not modelled:
        return []
    size = len(ops)
    time = per_op(owner, gpu.dur, size)
    count = per_op(owner, np.ones(len(gpu)), size)
    tf32 = per_op(owner, _tf32_kernels(a), size) > 0
    device = np.full(size, -1, np.int64)
    device[owner[owner >= 0]] = gpu.device[owner >= 0]
    rows = np.flatnonzero((count > 0) & np.isin(ops.name, modelled))
    firsts, inverse = distinct(trace, rows, device, tf32)
    calls = np.bincount(inverse, minlength=len(firsts))
    kernels = np.bincount(inverse, weights=count[rows], minlength=len(firsts))
    times = np.bincount(inverse, weights=time[rows], minlength=len(firsts))
    recorded = Recorded(trace)
    merged: dict[tuple[Any, ...], list[Any]] = {}
    for k, first in enumerate(firsts.tolist()):
        done = work(trace.names[ops.name[first]], recorded.inputs(first))
        if done is None:
            continue
        key = (ops.name[first], done.shape, done.dtype, device[first], tf32[first])
        entry = merged.setdefault(key, [done, 0, 0, 0])
        entry[1] += int(calls[k])
        entry[2] += int(kernels[k])
        entry[3] += int(times[k])
    return sorted(
        (_group(a, key, *entry) for key, entry in merged.items()), key=lambda g: -g.time_ns
    )


def _tf32_kernels(a: Analysis) -> Any:
    """1.0 for kernels whose name says TF32 tensor cores (cuBLAS tf32, CUTLASS s1688/s16816)."""
    names = a.trace.gpu.name
    hits = [i for i in unique(names) if _TF32.search(a.trace.names[i])]
    return np.isin(names, hits).astype(np.float64)


def _group(
    a: Analysis, key: tuple[Any, ...], done: Work, calls: int, kernels: int, time_ns: int
) -> Group:
    name, _, _, device_id, tf32 = key
    device = device_of(a.trace.meta.devices, int(device_id))
    peaks = peaks_for(device)
    calls_flops, calls_bytes = done.flops * calls, done.bytes * calls
    peak_key = _peak_key(done.dtype, bool(tf32), peaks, calls_flops, time_ns)
    return Group(
        op=a.trace.names[name],
        work=done,
        device=device.name if device else "",
        calls=calls,
        kernels=kernels,
        time_ns=time_ns,
        flops=calls_flops,
        bytes=calls_bytes,
        peak_key=peak_key,
        peak_flops=peaks.flops(peak_key) if peaks and peak_key else None,
        peak_bw=peaks.bandwidth if peaks else None,
    )


def _peak_key(
    dtype: str, tf32: bool, peaks: Peaks | None, flops: float, time_ns: int
) -> str | None:
    """Which datasheet peak applies: the dtype's, TF32 for FP32 on TF32 kernels (named so, or
    faster than plain FP32 can be), AMD matrix-core FP32 where listed."""
    if dtype.startswith("float8"):
        return "fp8"
    key = _PEAK_KEY.get(dtype)
    if key != "fp32" or peaks is None:
        return key
    plain = peaks.matrix_fp32()
    fp32_peak = peaks.flops(plain) or 0.0
    faster = time_ns > 0 and flops / (time_ns * 1e-9) > fp32_peak
    return "tf32" if (tf32 or faster) and peaks.flops("tf32") else plain


# -- report ---------------------------------------------------------------------------------


def _fraction(value: float | None) -> float | None:
    return round(value, 6) if value is not None else None


def _group_dict(g: Group, kernel_ns: int) -> dict[str, Any]:
    return {
        "op": g.op,
        "family": g.work.family,
        "shape": g.work.shape,
        "dtype": g.work.dtype,
        "device": g.device,
        "calls": g.calls,
        "kernels": g.kernels,
        "time_us": us(g.time_ns),
        "share": _fraction(g.time_ns / kernel_ns if kernel_ns else None),
        "gflop_per_call": round(g.work.flops / 1e9, 6),
        "mb_per_call": round(g.work.bytes / 1e6, 6),
        "tflops": round(g.achieved / 1e12, 3),
        "gbs": round(g.bandwidth / 1e9, 1),
        "intensity": round(g.intensity, 2),
        "peak": g.peak_key,
        "peak_tflops": round(g.peak_flops / 1e12, 2) if g.peak_flops else None,
        "fraction_of_peak": _fraction(g.flop_fraction),
        "fraction_of_bandwidth": _fraction(g.bw_fraction),
        "roofline_fraction": _fraction(g.roofline_fraction),
        "bound": None if g.memory_bound is None else ("memory" if g.memory_bound else "compute"),
        "size": g.size or None,
        "note": g.work.note or None,
    }


def summary(groups: list[Group]) -> dict[str, Any]:
    """Time-weighted efficiency of some groups: FLOP fraction, bandwidth fraction, roofline."""
    time = sum(g.time_ns for g in groups)
    known = [g for g in groups if g.peak_flops and g.peak_bw]
    known_time = sum(g.time_ns for g in known)
    seconds = time * 1e-9

    def weighted(attr: str) -> float | None:
        if not known_time:
            return None
        total: float = sum(g.time_ns * getattr(g, attr) for g in known)
        return round(total / known_time, 6)

    return {
        "groups": len(groups),
        "time_us": us(time),
        "tflops": round(sum(g.flops for g in groups) / seconds / 1e12, 3) if seconds else None,
        "fraction_of_peak": weighted("flop_fraction"),
        "fraction_of_bandwidth": weighted("bw_fraction"),
        "roofline_fraction": weighted("roofline_fraction"),
    }


def to_dict(result: Result) -> dict[str, Any]:
    gemms = [g for g in result.groups if g.work.family == GEMM]
    peaks = result.peaks
    return {
        "device": result.device,
        "peaks": None
        if peaks is None
        else {
            "label": peaks.label,
            "kind": peaks.kind,
            "source": peaks.source,
            "tflops": peaks.tflops,
            "bandwidth_gbs": peaks.bandwidth_gbs,
        },
        "kernel_time_us": us(result.kernel_ns),
        "gemm_share": _fraction(result.gemm_ns / result.kernel_ns if result.kernel_ns else None),
        "gemm_coverage": _fraction(min(1.0, result.family_ns(GEMM) / result.gemm_ns))
        if result.gemm_ns
        else None,
        "gemm_graph_share": _fraction(result.gemm_graph_ns / result.gemm_ns)
        if result.gemm_ns
        else None,
        "thresholds": {
            "big": BIG,
            "skinny": SKINNY,
            "low": rules.LOW,
            "good": rules.GOOD,
            "gemm_share": rules.GEMM_SHARE_FIRES,
            "warning_share": rules.WARN_SHARE,
        },
        "families": {
            f: summary([g for g in result.groups if g.work.family == f])
            for f in sorted({g.work.family for g in result.groups})
        },
        "gemm_by_size": {
            size: summary([g for g in gemms if g.size == size])
            for size in ("big", "medium", "skinny")
            if any(g.size == size for g in gemms)
        },
        "groups": [_group_dict(g, result.kernel_ns) for g in result.groups[:TOP]],
        "groups_total": len(result.groups),
    }


def findings(a: Analysis, result: Result) -> list[Finding]:
    shapes_on = bool(a.trace.meta.extra.get("record_shapes")) or bool(
        (a.trace.ops.input_dims >= 0).any()
    )
    serving = any(t.startswith("serving:") for t in a.program.traits)
    attention = a.categories.get("attention", (0, 0))[1] > 0
    fuse = "serving" if serving else "attention" if attention else "no-attention"
    graphs = not a.program.fsdp  # an FSDP step cannot be captured
    training = "training" in a.program.traits
    found = rules.gemm_efficiency(
        to_dict(result), a.verdict.bound, shapes_on, fuse, graphs, training
    )
    return [found] if found is not None else []


def section(part: dict[str, Any]) -> Section:
    from gpuscope.document import units as fmt
    from gpuscope.document.model import Cell, Facts, Section, Table, Text

    rows = tuple(
        (
            Cell(f"{g['op'].removeprefix('aten::')} {short(g['dtype'])}", full=g["op"], code=True),
            Cell(g["shape"], full=g["note"] or g["shape"]),
            Cell(fmt.count(g["calls"])),
            Cell(fmt.duration(g["time_us"])),
            Cell(f"{g['tflops']:,.1f}"),
            Cell(_efficiency_text(g)),
        )
        for g in part["groups"]
    )
    headers = ("operator", "shape", "calls", "time", "TFLOP/s", "efficiency")
    table = Table(headers, rows, (False, False, True, True, True, False), _caption(part))
    peaks = part["peaks"]
    source = f"Peaks: {peaks['source']}. " if peaks else ""
    blocks = (Facts(_facts(part)), table, Text(source + _NOTE))
    return Section("GEMM / attention / convolution efficiency", blocks, anchor="efficiency")


def _efficiency_text(g: dict[str, Any]) -> str:
    """The fraction that judges a shape: of the FLOP peak, or of bandwidth when memory-bound."""
    from gpuscope.document import units as fmt

    if g["bound"] == "memory":
        return f"{fmt.percent(g['fraction_of_bandwidth'])} of bandwidth"
    if g["fraction_of_peak"] is not None:
        return f"{fmt.percent(g['fraction_of_peak'])} of {g['peak']} peak"
    return "peak unknown"


_NOTE = (
    "Peaks are datasheet dense figures (no sparsity): real kernels top out below them. FLOPs: "
    "GEMM 2·M·N·K, attention 4·B·H·Sq·Sk·D (halved only when the op records is_causal; "
    "backward 2.5×), convolution 2·N·K·C·R·S·P·Q. Bytes: operands read and output written once, "
    "a lower bound on traffic. A shape is memory-bound when its arithmetic intensity is below "
    "peak FLOP/s ÷ peak bandwidth; it is then judged by bandwidth, not FLOP/s."
)


def _caption(part: dict[str, Any]) -> str:
    shown, total = len(part["groups"]), part["groups_total"]
    more = f" (top {shown} of {total} by time)" if total > shown else ""
    return f"by operator, shape and dtype{more}; time = device time of the kernels it launched"


def _facts(part: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    from gpuscope.document import units as fmt

    peaks = part["peaks"]
    device = part["device"] or "unknown device"
    items = [
        ("device", f"{device}: {peaks['label']} ({peaks['kind']})" if peaks else
         f"{device}: not in the datasheet table, no fraction of peak"),
        ("GEMM share of kernel time", fmt.percent(part["gemm_share"])),
        ("GEMM time with known shapes", fmt.percent(part["gemm_coverage"])),
    ]  # fmt: skip
    for name, s in part["families"].items():
        items.append((name, _summary_text(s)))
    for name, s in part["gemm_by_size"].items():
        items.append((f"GEMMs, {name} shapes", _summary_text(s)))
    return tuple(items)


def _summary_text(s: dict[str, Any]) -> str:
    from gpuscope.document import units as fmt

    tflops = "—" if s["tflops"] is None else f"{s['tflops']:,.1f} TFLOP/s"
    return (
        f"{fmt.duration(s['time_us'])}, {tflops}; of peak: {fmt.percent(s['fraction_of_peak'])} "
        f"FLOP/s, {fmt.percent(s['fraction_of_bandwidth'])} bandwidth, "
        f"{fmt.percent(s['roofline_fraction'])} roofline"
    )
