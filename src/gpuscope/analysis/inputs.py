"""Which analyses a trace's source can support, and why the others are skipped.

Every reader declares what its format records (`TraceMeta.provides`). An analysis whose inputs are
missing is not run: its numbers are null in the report and an integrity flag says what is missing
and what was skipped — never a zero that reads like a measurement.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuscope.trace.model import KERNEL, Trace

# analysis -> (inputs it needs, what is skipped without them)
NEEDS: dict[str, tuple[tuple[str, ...], str]] = {
    "timeline": (
        ("timestamps",),
        "no busy / idle time, utilization, gap analysis or CPU/GPU-bound verdict",
    ),
    "launch": (
        ("host_api", "links", "timestamps"),
        "no launch-call counts, launch → start delay or kernels per step",
    ),
    "sync": (("host_api",), "no synchronization analysis"),
    "cpu": (("cpu_ops",), "no CPU operator time or op-based findings"),
    "durations": (("kernels",), "no per-dispatch kernel times"),
}
_WHAT = {
    "timestamps": "no timestamps",
    "host_api": "no host API calls",
    "links": "no links between host calls and kernels",
    "cpu_ops": "no framework (aten) operators",
    "kernels": "no per-dispatch kernel durations",
}


@dataclass(frozen=True)
class Inputs:
    """What can be computed for one trace."""

    timeline: bool
    launch: bool
    sync: bool
    cpu: bool
    durations: bool  # per-dispatch kernel durations (else: totals or nothing)
    totals_only: bool  # the kernel numbers come from summary rows

    @property
    def skipped(self) -> list[str]:
        return [name for name in NEEDS if not getattr(self, name)]


def inputs(trace: Trace) -> Inputs:
    has = trace.provides
    kernels = has("kernels")
    totals_only = not kernels and has("totals") and not (trace.gpu.kind == KERNEL).any()
    return Inputs(
        timeline=has("timestamps") and (kernels or has("copies")),
        launch=has("host_api", "links", "timestamps"),
        sync=has("host_api") or len(trace.syncs) > 0,
        cpu=has("cpu_ops"),
        durations=kernels,
        totals_only=totals_only,
    )


def describe(trace: Trace) -> str:
    """'this rocprof stats input (results.stats.csv)' — how flags name the source."""
    meta = trace.meta
    files = ", ".join(_name(f) for f in meta.files[:3]) or _name(meta.path)
    more = f" and {len(meta.files) - 3} more" if len(meta.files) > 3 else ""
    return f"this {meta.format} input ({files}{more})"


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def missing_flags(trace: Trace, available: Inputs) -> list[tuple[str, str, list[str]]]:
    """(flag id, message, affected keys) for every analysis that is skipped."""
    flags = []
    source = describe(trace)
    for name in available.skipped:
        needs, skipped = NEEDS[name]
        lacking = [n for n in needs if not trace.provides(n)]
        if not lacking:
            continue
        what = " and ".join(_WHAT.get(n, f"no {n}") for n in lacking)
        flags.append((f"no-{name}", f"{source} has {what}: {skipped}", _AFFECTS[name]))
    if available.totals_only:
        flags.append(
            (
                "totals-only",
                f"{source} holds per-name totals only (calls and time): no per-dispatch "
                "statistics (median, short kernels) and no timeline",
                ["kernels", "top_kernels"],
            )
        )
    return flags


_AFFECTS = {
    "timeline": ["gpu_busy_us", "span_us", "idle_us", "utilization", "gaps", "verdict"],
    "launch": ["launch"],
    "sync": ["sync"],
    "cpu": ["cpu"],
    "durations": ["kernels", "top_kernels", "categories"],
}
