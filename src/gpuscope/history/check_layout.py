"""A check's outcome (`gpuscope check`) as a document for every renderer: the verdict, what was
compared with what, one row per metric with its noise model, each metric's values over the
reference and the latest result, and the rule a change had to pass. The terminal prints it, and
`--md` writes it as a PR comment (its figures as PNGs beside a file).

Display only: every number is the outcome's (`check.MetricCheck`).
"""

from __future__ import annotations

from gpuscope.document.model import (
    Block,
    Cell,
    Document,
    Facts,
    LineChart,
    Note,
    Point,
    Section,
    Table,
    Text,
)
from gpuscope.history.check import MetricCheck, Outcome
from gpuscope.history.model import Result

ARROW = {"lower": "↓", "higher": "↑"}


def check_document(outcome: Outcome) -> Document:
    sections = [
        Section("Verdict", (_verdict(outcome), _compared(outcome))),
        Section("Metrics", tuple(_metrics(outcome))),
    ]
    charts = tuple(c for c in (_trend(outcome, m) for m in outcome.checks) if c is not None)
    if charts:
        sections.append(Section("Values over the reference and the latest result", charts))
    sections.append(Section("Noise model", tuple(_rule(outcome))))
    title = f"gpuscope check {outcome.workload}: {headline(outcome)}"
    return Document(title, tuple(sections), footer="schema gpuscope.check/1 (--json)")


def headline(outcome: Outcome) -> str:
    bad, good = len(outcome.regressions), len(outcome.improvements)
    if bad:
        return f"REGRESSION: {bad} metric{'s' if bad > 1 else ''} worse beyond the noise"
    if good:
        return f"improved: {good} metric{'s' if good > 1 else ''} better beyond the noise"
    return "within noise"


def _verdict(outcome: Outcome) -> Note:
    if not outcome.regressions and not outcome.improvements:
        text = "no metric changed past the larger of its noise and the threshold"
        return Note("ok", "within noise", text)
    worse = [f"{c.metric} {_pct(c.change)} ({_why(c)})" for c in outcome.regressions]
    better = [f"{c.metric} {_pct(c.change)} ({_why(c)})" for c in outcome.improvements]
    if not worse:
        return Note("ok", "improved", "; ".join(better))
    also = f"; improved: {'; '.join(better)}" if better else ""
    return Note("critical", "regression", "; ".join(worse) + also)


def _compared(outcome: Outcome) -> Facts:
    latest = outcome.latest[0]
    repeats = f" (+{len(outcome.latest) - 1} repeats)" if len(outcome.latest) > 1 else ""
    context = latest.context
    where = ", ".join(x for x in (context.branch, context.recorded_at) if x)
    items = (
        ("latest", f"#{latest.id} {commit_text(latest)}{repeats} ({where})"),
        ("against", reference_text(outcome)),
    )
    return Facts(items)


def commit_text(result: Result) -> str:
    commit = _commit(result)
    return "with no commit recorded" if commit == "-" else f"at commit {commit}"


def _commit(result: Result) -> str:
    context = result.context
    commit = context.commit or "-"
    return commit[:10] + ("+dirty" if context.dirty else "")


def reference_text(outcome: Outcome) -> str:
    commits = [c for c in dict.fromkeys(_commit(r) for r in outcome.reference) if c != "-"]
    shown = ", ".join(commits[:3]) + (f" … ({len(commits)} commits)" if len(commits) > 3 else "")
    n, against = len(outcome.reference), outcome.against
    if against.kind == "window" and n < against.n:  # not "the previous 10 results (6 results)"
        where = f"the {n} result{'s' if n != 1 else ''} before it (window of {against.n})"
        return f"{where}; {shown or 'no commit recorded'}"
    return (
        f"{against.describe()} ({n} result{'s' if n != 1 else ''}; {shown or 'no commit recorded'})"
    )


def _metrics(outcome: Outcome) -> list[Block]:
    rows = tuple(_row(c) for c in outcome.checks)
    headers = ("metric", "latest", "reference", "change", "95 % CI", "confidence", "verdict",
               "noise model")  # fmt: skip
    numeric = (False, True, True, True, False, True, False, False)
    blocks: list[Block] = [Table(headers, rows, numeric, optional=(0, 0, 0, 0, 2, 1, 0, 3))]
    blocks += [
        Text(f"{c.metric}: {c.note}") for c in outcome.checks if c.note and c.method != "none"
    ]
    return blocks


def _row(c: MetricCheck) -> tuple[Cell, ...]:
    ci = "—" if c.ci is None else f"{_pct(c.ci[0])} … {_pct(c.ci[1])}"
    confidence = "—" if c.confidence is None else f"{c.confidence * 100:.1f} %"
    reference = "—" if c.reference is None else f"{c.reference:.6g}"
    return (
        Cell(f"{c.metric} {ARROW.get(c.direction, '')}".strip(), code=True),
        Cell(f"{c.latest:.6g}"),
        Cell(reference),
        Cell(_pct(c.change)),
        Cell(ci),
        Cell(confidence),
        Cell(c.verdict),
        Cell(_why(c)),
    )


def _why(c: MetricCheck) -> str:
    if c.method == "none":
        return c.note or ""
    noise = f"noise ±{_pct(c.noise, False)}" if c.noise is not None else "noise unknown"
    return f"{c.method}, {noise}, bar {_pct(c.bar, False)}"


def _pct(value: float | None, signed: bool = True) -> str:
    if value is None:
        return "—"
    return f"{value * 100:+.2f} %" if signed else f"{value * 100:.2f} %"


def _trend(outcome: Outcome, c: MetricCheck) -> LineChart | None:
    """The metric's reference values, oldest first, then the latest result's (highlighted)."""
    latest_ids = {r.id for r in outcome.latest}
    results = sorted((*outcome.reference, *outcome.latest),
                     key=lambda r: (r.context.recorded_at, r.id or 0))  # fmt: skip
    points = []
    for result in results:
        metric = result.metric(c.metric)
        if metric is not None:
            hover = (
                f"#{result.id} {result.context.recorded_at} {_commit(result)}: {metric.value:.6g}"
            )
            points.append(Point(f"#{result.id}", metric.value, hover, result.id in latest_ids))
    if len(points) < 2:
        return None
    unit = f" ({c.unit})" if c.unit else ""
    return LineChart(f"{c.metric}{unit}", tuple(points), c.unit, c.direction,
                     "the reference results, then the latest (red)")  # fmt: skip


def _rule(outcome: Outcome) -> list[Block]:
    o = outcome.options
    bar = (f"--threshold {_pct(o.threshold, False)}" if o.threshold is not None
           else f"the floor {_pct(o.floor, False)}")  # fmt: skip
    blocks: list[Block] = [Text(
        f"Confidence {o.confidence:g} one-sided; a change must pass the larger of the noise "
        f"bound and {bar}. ↓/↑: lower/higher is better."
    )]  # fmt: skip
    blocks += [Text(note, "Note") for note in outcome.notes]
    return blocks
