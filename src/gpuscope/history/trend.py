"""A metric of a workload over time: its values, oldest first, and their range. `layout.py`
lays them out as a document, which every renderer draws (the terminal's sparkline, the HTML
page's SVG, the PNG).

    >>> points = [Point(i, "…", None, v, 0, "", "higher") for i, v in enumerate((3.0, 4.0))]
    >>> summary(points)
    Summary(low=3.0, median=4.0, high=4.0, change=0.3333333333333333)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpuscope.errors import InputError
from gpuscope.history.store import Store


@dataclass(frozen=True)
class Point:
    result_id: int
    recorded_at: str
    commit: str | None
    value: float
    samples: int
    unit: str
    direction: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "result_id": self.result_id,
            "recorded_at": self.recorded_at,
            "commit": self.commit,
            "value": self.value,
            "samples": self.samples,
        }


def series(store: Store, workload: str, metric: str, limit: int = 200) -> list[Point]:
    """The last `limit` values of `metric`, oldest first; InputError when there are none."""
    results = store.latest(workload, limit=limit)
    if not results:
        raise InputError(f"no results of workload {workload!r} in {store.url}")
    points = []
    for result in reversed(results):
        m = result.metric(metric)
        if m is not None and result.id is not None:
            points.append(
                Point(
                    result.id,
                    result.context.recorded_at,
                    result.context.commit,
                    m.value,
                    len(m.samples),
                    m.unit,
                    m.direction,
                )
            )
    if not points:
        names = sorted({m.name for r in results for m in r.metrics})
        raise InputError(f"{workload}: no metric {metric!r} (it has {', '.join(names)})")
    return points


def only_metric(store: Store, workload: str, limit: int = 200) -> str:
    """The one metric the last `limit` results of `workload` hold (what `trend` draws when no
    metric is named); InputError naming them all when there are several, or no results."""
    results = store.latest(workload, limit=limit)
    if not results:
        raise InputError(f"no results of workload {workload!r} in {store.url}")
    names = list(dict.fromkeys(m.name for r in results for m in r.metrics))
    if len(names) != 1:
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        raise InputError(f"{workload} has {len(names)} metrics ({shown}): choose one with --metric")
    return names[0]


@dataclass(frozen=True)
class Summary:
    """The range of a series: lowest, median, highest, and the last value's change from the first
    (relative; None when the first is 0)."""

    low: float
    median: float
    high: float
    change: float | None


def summary(points: Sequence[Point]) -> Summary:
    values = [p.value for p in points]
    first, last = values[0], values[-1]
    median = sorted(values)[len(values) // 2]
    return Summary(min(values), median, max(values), (last / first - 1) if first else None)
