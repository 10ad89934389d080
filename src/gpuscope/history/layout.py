"""The history's results as documents for every renderer (`gpuscope.report`): the workloads, one
workload's results, one result in full, a metric's trend (`history list | show | trend`).

Display only: what to show and in which order; the numbers are the store's and `trend.summary`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuscope.document.model import (
    Cell,
    Document,
    Facts,
    LineChart,
    Point,
    Section,
    Table,
    Text,
)
from gpuscope.history.model import Result
from gpuscope.history.store import WorkloadSummary
from gpuscope.history.trend import Point as TrendPoint
from gpuscope.history.trend import summary

TITLE = "gpuscope history"
SHOWN = 10  # the latest results a trend lists (its figure has them all)
METRICS_SHOWN = 3  # per result in a list


def workloads_document(workloads: Sequence[WorkloadSummary], db: str) -> Document:
    """`history list`: one row per workload."""
    if not workloads:
        empty = Text(f"no results in {db} yet (record some with --record)")
        return Document(TITLE, (Section("Workloads", (empty,)),), db)
    rows = tuple(
        (Cell(w.name), Cell(f"{w.results:,}"), Cell(w.first or "—"), Cell(w.last or "—"),
         Cell(_some(w.metrics, 4)))
        for w in workloads
    )  # fmt: skip
    headers = ("workload", "results", "first (UTC)", "last (UTC)", "metrics")
    table = Table(headers, rows, (False, True, False, False, False), optional=(0, 0, 2, 0, 1))
    return Document(TITLE, (Section(f"Workloads ({len(workloads)})", (table,)),), db)


def results_document(workload: str, results: Sequence[Result], db: str) -> Document:
    """`history list WORKLOAD`: its results, newest first."""
    if not results:
        return Document(TITLE, (Section(workload, (Text("no results"),)),), db)
    rows = tuple(
        (Cell(f"#{r.id}"), Cell(r.context.recorded_at), Cell(_commit(r)), Cell(r.kind),
         Cell(", ".join(f"{m.name} {m.value:.6g}" for m in r.metrics[:METRICS_SHOWN])))
        for r in results
    )  # fmt: skip
    headers = ("result", "recorded (UTC)", "commit", "kind", "metrics")
    table = Table(headers, rows, (False,) * 5, optional=(0, 0, 1, 2, 0))
    title = f"{workload}: {len(results)} result{'s' if len(results) != 1 else ''}, newest first"
    return Document(TITLE, (Section(title, (table,)),), db)


def result_document(result: Result) -> Document:
    """`history show`: the result's context, then each metric with its samples."""
    items = [(key, _text(value)) for key, value in result.context.to_dict().items()
             if value not in (None, "", [], {})]  # fmt: skip
    if result.source:
        items.append(("source", result.source))
    rows = tuple(
        (
            Cell(m.name),
            Cell(f"{m.value:.6g}"),
            Cell(m.unit),
            Cell(f"{'lower' if m.direction == 'lower' else 'higher'} is better"),
            Cell(_samples(m.samples)),
        )
        for m in result.metrics
    )
    headers = ("metric", "value", "unit", "better", "samples")
    table = Table(headers, rows, (False, True, False, False, False), optional=(0, 0, 0, 2, 1))
    sections = (
        Section("Context", (Facts(tuple(items)),)),
        Section(f"Metrics ({len(result.metrics)})", (table,)),
    )
    subtitle = f"{result.workload} ({result.kind})"
    return Document(f"result #{result.id}", sections, subtitle)


def trend_document(points: Sequence[TrendPoint], workload: str, metric: str) -> Document:
    """`history trend`: the values oldest first as a line, their range, the latest few."""
    last = points[-1]
    unit = f" {last.unit}" if last.unit else ""
    better = "lower" if last.direction == "lower" else "higher"
    chart = LineChart(
        f"{metric}{unit}",
        tuple(Point(f"#{p.result_id}", p.value, _hover(p)) for p in points),
        last.unit,
        better,
    )
    stats = summary(points)
    change = "—" if stats.change is None else f"{stats.change * 100:+.1f} %"
    facts = Facts((
        ("results", f"{len(points):,}"),
        ("range", f"min {stats.low:.6g} · median {stats.median:.6g} · max {stats.high:.6g}{unit}"),
        ("first → last", change),
    ))  # fmt: skip
    shown = list(reversed(points))[:SHOWN]
    rows = tuple(
        (Cell(f"#{p.result_id}"), Cell(p.recorded_at), Cell((p.commit or "—")[:12], code=True),
         Cell(f"{p.value:.6g}"))
        for p in shown
    )  # fmt: skip
    caption = "newest first" + (f"; the last {len(shown)} of {len(points)}"
                                if len(shown) < len(points) else "")  # fmt: skip
    table = Table(("result", "recorded (UTC)", "commit", "value"), rows,
                  (False, False, False, True), caption)  # fmt: skip
    sections = (Section("Trend", (chart, facts)), Section("Results", (table,)))
    subtitle = f"{metric}{unit}, {better} is better, {len(points)} results"
    return Document(f"{workload} · {metric}", sections, subtitle)


def _hover(p: TrendPoint) -> str:
    commit = f" {p.commit[:10]}" if p.commit else ""
    unit = f" {p.unit}" if p.unit else ""
    return f"#{p.result_id} {p.recorded_at}{commit}: {p.value:.6g}{unit}"


def _commit(result: Result) -> str:
    c = result.context
    return (c.commit or "—")[:10] + ("+" if c.dirty else "")


def _some(names: Sequence[str], count: int) -> str:
    more = f" (+{len(names) - count})" if len(names) > count else ""
    return ", ".join(names[:count]) + more


def _samples(samples: Sequence[float]) -> str:
    if not samples:
        return "—"
    ordered = sorted(samples)
    return f"{len(ordered)}, min {ordered[0]:.6g}, max {ordered[-1]:.6g}"


def _text(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k} {v}" for k, v in value.items())
    return "yes" if value is True else "no" if value is False else str(value)
