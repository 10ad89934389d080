"""`Analysis`: everything computed about one trace, and its report (`to_dict`).

The dict (schema `gpuscope.analysis/1`) is what `--json` writes and what every renderer shows:
renderers never compute. Times are int64 ns inside and µs floats in the dict (`_serialize`
writes each part). `pipeline.analyze(trace)` fills an `Analysis`; the extra analyses plug into
`extras` through the `ExtraAnalysis` contract below (registered in `analysis/extras.py`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Protocol

from gpuscope._version import __version__
from gpuscope.analysis import _serialize as part
from gpuscope.analysis._finding import Finding
from gpuscope.analysis._opinputs import owner_rows
from gpuscope.analysis.breakdown import Breakdown
from gpuscope.analysis.categories import Classification
from gpuscope.analysis.coldwork import Detected
from gpuscope.analysis.critical import CriticalPath
from gpuscope.analysis.hotspots import CopyKind, KernelGroup
from gpuscope.analysis.inputs import Inputs
from gpuscope.analysis.launch import LaunchStats
from gpuscope.analysis.links import Links
from gpuscope.analysis.program import Program
from gpuscope.analysis.regions import Region
from gpuscope.analysis.stepranges import StepRanges
from gpuscope.analysis.sync import SyncStats
from gpuscope.analysis.timeline import Timeline
from gpuscope.analysis.verdict import Verdict
from gpuscope.document.model import Section
from gpuscope.schemas import ANALYSIS as SCHEMA
from gpuscope.trace.model import I32, Trace


class ExtraAnalysis(Protocol):
    """An analysis beyond the core ones (a module satisfies it): `analyse` is a pure function of
    the trace and the core results (it must not modify them; None when the trace holds nothing
    for it), `to_dict` its part of the report under `NAME` (µs floats, shares 0..1), `findings`
    its findings, `section` how the views show its part."""

    NAME: str

    def analyse(self, a: Analysis) -> Any: ...

    def to_dict(self, result: Any) -> dict[str, Any]: ...

    def findings(self, a: Analysis, result: Any) -> list[Finding]: ...

    def section(self, part: dict[str, Any]) -> Section: ...


@dataclass(frozen=True)
class Extra:
    """What one extra analysis found (`result`: None when the trace holds nothing for it)."""

    name: str
    module: ExtraAnalysis
    result: Any

    def to_dict(self) -> dict[str, Any] | None:
        if self.result is None:
            return None
        return self.module.to_dict(self.result)


@dataclass(frozen=True, repr=False)
class Analysis:
    """Everything computed about one trace. `findings` and `integrity` are plain dicts.

    Analyses the source cannot support (see `inputs`) are None: no timeline without timestamps,
    no sync or launch analysis without host API calls, no CPU time without framework operators.
    """

    trace: Trace
    inputs: Inputs
    classes: Classification
    parent_op: I32  # per row of trace.gpu: name index of the launching CPU op, -1 if none
    groups: list[KernelGroup]
    categories: dict[str, tuple[int, int]]
    copies: dict[str, CopyKind]
    memset: tuple[int, int, int]
    links: Links
    launch: LaunchStats
    sync: SyncStats | None
    timeline: Timeline | None
    cpu_busy_ns: int | None
    window_ns: int | None
    verdict: Verdict
    steps: StepRanges
    cold: Detected
    breakdown: Breakdown | None  # the step-time breakdown (None without a timeline)
    critical: CriticalPath | None
    program: Program = field(default_factory=lambda: Program("unknown"))
    regions: list[Region] = field(default_factory=list)
    extras: dict[str, Extra] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    integrity: list[dict[str, Any]] = field(default_factory=list)
    top: int = 15

    @functools.cached_property
    def owners(self) -> Any:
        """Per row of trace.gpu: the row of trace.ops (an operator) that launched it, else -1
        (`_opinputs.owner_rows`); computed once for every analysis that needs it."""
        return owner_rows(self.trace, self.links)

    @property
    def kernel_ns(self) -> int:
        return part.kernel_ns(self.groups)

    @property
    def kernel_times_known(self) -> bool:
        return part.kernel_times_known(self.groups)

    @property
    def gemm_share(self) -> float | None:
        total = self.kernel_ns
        if not self.kernel_times_known:
            return None
        return self.categories["gemm"][1] / total if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The report: schema `gpuscope.analysis/1` (µs floats, shares 0..1)."""
        line, times, trace = self.timeline, self.kernel_times_known, self.trace
        kernel_ns = self.kernel_ns
        return {
            "schema": SCHEMA,
            "gpuscope_version": __version__,
            "source": part.source(trace.meta),
            "program": self.program.to_dict(),
            "window_us": part.us_or_none(self.window_ns),
            "kernels": part.kernels(trace, self.groups, self.launch, self.inputs.durations),
            "memcpy": part.memcpy(self.copies),
            "memset": part.memset(self.memset),
            "categories": part.categories(self.categories, times),
            "unclassified_share": part.unclassified(self.categories) if times else None,
            "families": part.families(trace, self.classes, kernel_ns),
            "gemm_share": part.share(self.categories["gemm"][1], kernel_ns) if times else None,
            "gpu_busy_us": part.us(line.busy_ns) if line else None,
            "span_us": part.us(line.span_ns) if line else None,
            "idle_us": part.us(line.idle_ns) if line else None,
            "utilization": part.utilization(line) if line else None,
            "devices": part.devices(trace.meta, line),
            "gaps": {**part.gaps(line), **part.longest(trace, line)} if line else None,
            "launch": part.launch(self.launch) if self.inputs.launch else None,
            "sync": part.sync(self.sync) if self.sync else None,
            "cpu": part.cpu(trace, self.cpu_busy_ns) if self.cpu_busy_ns is not None else None,
            "verdict": part.verdict(self.verdict, self.breakdown),
            **part.breakdown(self.breakdown, self.critical),
            "top_kernels": part.top(self.groups[: self.top], kernel_ns, times),
            "regions": part.regions(self.regions, self.window_ns, line is not None),
            **{name: extra.to_dict() for name, extra in self.extras.items()},
            "findings": [f.to_dict() for f in self.findings],
            "integrity": self.integrity,
        }

    def __repr__(self) -> str:  # the generated one printed every column: 160 k characters
        meta = self.trace.meta
        kernels = sum(g.count for g in self.groups)
        return (
            f"<Analysis {meta.path!r} ({meta.format}): {kernels:,} kernels, verdict "
            f"{self.verdict.bound}, {len(self.findings)} findings>"
        )
