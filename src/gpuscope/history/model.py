"""What the history keeps: a `Result` (one recorded run, analysis, benchmark …) of a workload,
with its `Context` (when, which commit, which machine and software) and its `Metric`s.

A metric keeps its raw samples when there are several (bench samples, step times, per-rank
values): its `value` is derived from them (the median) unless the producer states one, and
statistics are computed from the samples when they are compared, never stored alone.

    >>> m = Metric("step_time", 12.5, "ms", LOWER, samples=(12.4, 12.5, 12.7))
    >>> m.better(12.0)
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LOWER, HIGHER = "lower", "higher"  # which way a metric is better
DIRECTIONS = (LOWER, HIGHER)


@dataclass(frozen=True)
class Metric:
    name: str
    value: float
    unit: str = ""
    direction: str = LOWER
    samples: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(
                f"metric {self.name}: direction {self.direction!r} not in {DIRECTIONS}"
            )

    def better(self, other: float) -> bool:
        """True when `other` is better than this metric's value."""
        return other < self.value if self.direction == LOWER else other > self.value

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "unit": self.unit,
            "direction": self.direction,
            "samples": list(self.samples) if self.samples else None,
        }


def from_samples(
    name: str, samples: list[float] | tuple[float, ...], unit: str = "", direction: str = LOWER
) -> Metric:
    """A metric whose value is the median of its samples (the samples are kept)."""
    ordered = sorted(float(s) for s in samples)
    n = len(ordered)
    if n == 0:
        raise ValueError(f"metric {name}: no samples")
    middle = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    kept = tuple(float(s) for s in samples) if n > 1 else ()
    return Metric(name, middle, unit, direction, kept)


@dataclass(frozen=True)
class Context:
    """Where and from what a result came. `recorded_at`: UTC ISO 8601 (`…Z`)."""

    recorded_at: str
    commit: str | None = None
    dirty: bool | None = None
    branch: str | None = None
    host: str | None = None
    gpu_model: str | None = None
    gpu_count: int | None = None
    driver: str | None = None
    rocm: str | None = None
    cuda: str | None = None
    torch: str | None = None
    gpuscope_version: str | None = None
    tags: tuple[str, ...] = ()
    artefacts: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "recorded_at": self.recorded_at,
            "commit": self.commit,
            "dirty": self.dirty,
            "branch": self.branch,
            "host": self.host,
            "gpu_model": self.gpu_model,
            "gpu_count": self.gpu_count,
            "driver": self.driver,
            "rocm": self.rocm,
            "cuda": self.cuda,
            "torch": self.torch,
            "gpuscope_version": self.gpuscope_version,
            "tags": list(self.tags),
            "artefacts": self.artefacts,
            "extra": dict(self.extra),
        }


@dataclass(frozen=True)
class Result:
    """One recorded result. `kind`: what produced it (run, analysis, bench, comparison, libperf,
    counters, perf.csv); `source`: the command line or file it came from; `id`: set once
    stored."""

    workload: str
    kind: str
    context: Context
    metrics: tuple[Metric, ...]
    source: str | None = None
    id: int | None = None

    def metric(self, name: str) -> Metric | None:
        return next((m for m in self.metrics if m.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workload": self.workload,
            "kind": self.kind,
            "source": self.source,
            "context": self.context.to_dict(),
            "metrics": [m.to_dict() for m in self.metrics],
        }
