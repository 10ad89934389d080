"""A finding as the report carries it: what fired, how bad, why, what to do, the evidence, the
time at stake and the cause it shares with other findings.

`impact_us` is the time this finding's cause costs in the trace — an upper bound of what acting
on it could save — so that a reader (and the terminal summary) can rank findings; None where no
estimate is honest. `cause` names the underlying cause: findings with one cause share one remedy,
and the summary shows that remedy once (e.g. `host-launch`: launch-overhead and the idle gaps
whose host state is launch are one host that cannot issue work as fast as the GPU runs it)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

SEVERITIES = ("info", "warning", "critical")


@dataclass(frozen=True, eq=False)
class Finding(Mapping[str, Any]):
    """One finding: what fired (`id`), how bad, why (`message`, with the threshold it fired at),
    what to do (`action`), the numbers it fired on (`evidence`), the time at stake (`impact_us`,
    None where no estimate is honest) and the cause it shares with other findings.

    `to_dict()` is its JSON object (these keys, in this order). It also reads as that mapping
    (`f["id"]`, `dict(f)`, equal to a dict with the same items), read-only: the views and the
    report's readers take either."""

    id: str
    severity: str
    message: str
    action: str
    evidence: dict[str, Any]
    impact_us: float | None = None
    cause: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __getitem__(self, key: str) -> Any:
        if key not in _KEYS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_KEYS)

    def __len__(self) -> int:
        return len(_KEYS)

    def __repr__(self) -> str:
        return f"Finding({self.to_dict()!r})"


_KEYS = tuple(f.name for f in fields(Finding))


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
    impact_us = us(impact_ns) if impact_ns is not None and impact_ns >= 0 else None
    return Finding(finding_id, severity, message, action, evidence, impact_us, cause)


def us(ns: float) -> float:
    """ns → µs rounded to the ns, for evidence."""
    return round(float(ns) / 1000, 3)
