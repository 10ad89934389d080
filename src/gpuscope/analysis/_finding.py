"""A finding as the report carries it: what fired, how bad, why, what to do, the evidence, the
time at stake and the cause it shares with other findings.

`impact_us` is the time this finding's cause costs in the trace — an upper bound of what acting
on it could save — so that a reader (and the terminal summary) can rank findings; None where no
estimate is honest. `cause` names the underlying cause: findings with one cause share one remedy,
and the summary shows that remedy once (e.g. `host-launch`: launch-overhead and the idle gaps
whose host state is launch are one host that cannot issue work as fast as the GPU runs it)."""

from __future__ import annotations

from typing import Any

Finding = dict[str, Any]
SEVERITIES = ("info", "warning", "critical")


CAUSES = (
    "host-launch",  # the host cannot launch work as fast as the GPU runs it
    "host-sync",  # blocking synchronisations drain the device queue
    "host-work",  # other host work between steps (data loading, Python, logging)
    "dependency",  # the next work was queued, waiting on an event, a stream or a collective
    "copies",  # host↔device copies
    "unified-memory",  # page migrations of managed memory
    "cold-start",  # first-call work: module loads, compilation, allocator growth
    "communication",  # collectives not hidden behind compute
    "imbalance",  # ranks waiting for one another
    "variance",  # steps of one run that take different times
    "fusion",  # chains of small kernels one fused kernel would replace
    "dtype",  # dtype conversions
    "layout",  # layout copies and transposes
    "precision",  # math in a slower precision than the hardware offers
    "kernel-efficiency",  # kernels far under their roofline
    "launch-config",  # grids too small for the device
    "profiler",  # the profiler's own overhead
)


def finding(
    finding_id: str,
    severity: str,
    message: str,
    action: str,
    evidence: dict[str, Any],
    *,
    impact_ns: float | None = None,
    cause: str | None = None,
) -> Finding:
    """`severity` is "info" (worth knowing), "warning" (costs real time here) or "critical";
    `impact_ns` the time at stake; `cause` one of CAUSES."""
    if severity not in SEVERITIES:
        raise ValueError(f"severity {severity!r}: expected one of {SEVERITIES}")
    if cause is not None and cause not in CAUSES:
        raise ValueError(f"cause {cause!r}: expected one of {CAUSES}")
    return {
        "id": finding_id,
        "severity": severity,
        "message": message,
        "action": action,
        "evidence": evidence,
        "impact_us": us(impact_ns) if impact_ns is not None and impact_ns >= 0 else None,
        "cause": cause,
    }


def us(ns: float) -> float:
    """ns → µs rounded to the ns, for evidence."""
    return round(float(ns) / 1000, 3)
