"""A metric of a workload over time: the points, and three drawings of them — a terminal
sparkline, a self-contained HTML page with an inline SVG plot, a PNG (matplotlib, if installed).

    >>> sparkline([3.0, 1.0, 2.0, 4.0])
    '▅▁▃█'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuscope.errors import InputError
from gpuscope.history.store import Store

_BARS = "▁▂▃▄▅▆▇█"
WIDTH, HEIGHT, PAD = 900, 320, 56


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


def sparkline(values: Sequence[float]) -> str:
    low, high = min(values), max(values)
    if high == low:
        return _BARS[3] * len(values)
    scale = (len(_BARS) - 1) / (high - low)
    return "".join(_BARS[round((v - low) * scale)] for v in values)


def summary_lines(points: Sequence[Point], workload: str, metric: str) -> list[str]:
    """What `gpuscope history trend` prints: the sparkline, the range, the last values."""
    values = [p.value for p in points]
    unit = f" {points[-1].unit}" if points[-1].unit else ""
    better = "lower" if points[-1].direction == "lower" else "higher"
    first, last = values[0], values[-1]
    change = f"{(last / first - 1) * 100:+.1f} %" if first else "-"
    lines = [
        f"{workload} · {metric}{unit} ({better} is better), {len(points)} results",
        sparkline(values),
        f"min {min(values):.6g}  median {sorted(values)[len(values) // 2]:.6g}  "
        f"max {max(values):.6g}  first → last {change}",
    ]
    for p in points[-5:]:
        lines.append(
            f"  #{p.result_id:<7} {p.recorded_at}  {(p.commit or '-')[:10]:10}  {p.value:.6g}"
        )
    return lines


def html(points: Sequence[Point], workload: str, metric: str) -> str:
    """A self-contained HTML page: the values as an inline SVG line plot (every text escaped)."""
    from markupsafe import Markup, escape

    title = f"{workload} · {metric}"
    unit = points[-1].unit
    svg = _svg(points, f"{metric} ({unit})" if unit else metric)
    rows = Markup("").join(
        Markup("<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>").format(
            p.result_id, p.recorded_at, (p.commit or "")[:12], f"{p.value:.6g}"
        )
        for p in reversed(points)
    )
    page = Markup(
        "<!doctype html><html><head><meta charset='utf-8'><title>{t}</title><style>"
        "body{{font-family:system-ui,sans-serif;margin:2em;color:#222}}"
        "table{{border-collapse:collapse}}td,th{{padding:2px 10px;border-bottom:1px solid #ddd;"
        "text-align:right}}.line{{fill:none;stroke:#2563eb;stroke-width:2}}"
        ".dot{{fill:#2563eb}}.axis{{stroke:#999}}text{{font-size:12px;fill:#444}}"
        "</style></head><body><h1>{t}</h1><p>{n} results, {better} is better.</p>{svg}"
        "<table><tr><th>result</th><th>recorded (UTC)</th><th>commit</th><th>value</th></tr>"
        "{rows}</table></body></html>\n"
    ).format(
        t=escape(title),
        n=len(points),
        svg=svg,
        rows=rows,
        better="lower" if points[-1].direction == "lower" else "higher",
    )
    return str(page)


def _svg(points: Sequence[Point], label: str) -> Any:
    from markupsafe import Markup

    values = [p.value for p in points]
    low, high = min(values), max(values)
    span = (high - low) or abs(high) or 1.0
    low, high = low - span * 0.1, high + span * 0.1
    step = (WIDTH - 2 * PAD) / max(len(points) - 1, 1)

    def x(i: int) -> float:
        return PAD + i * step

    def y(v: float) -> float:
        return HEIGHT - PAD - (v - low) / (high - low) * (HEIGHT - 2 * PAD)

    path = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
    dots = Markup("").join(
        Markup(
            '<circle class="dot" cx="{:.1f}" cy="{:.1f}" r="3"><title>#{} {} {}: {}'
            "</title></circle>"
        ).format(
            x(i), y(p.value), p.result_id, p.recorded_at, (p.commit or "")[:10], f"{p.value:.6g}"
        )
        for i, p in enumerate(points)
    )
    return Markup(
        '<svg viewBox="0 0 {w} {h}" width="100%" role="img" aria-label="{label}">'
        '<line class="axis" x1="{p}" y1="{b}" x2="{r}" y2="{b}"/>'
        '<line class="axis" x1="{p}" y1="{p}" x2="{p}" y2="{b}"/>'
        '<text x="4" y="{ty}">{top}</text><text x="4" y="{by}">{bottom}</text>'
        '<text x="{p}" y="{lb}">{label} — oldest left, newest right</text>'
        '<polyline class="line" points="{path}"/>{dots}</svg>'
    ).format(
        w=WIDTH,
        h=HEIGHT,
        p=PAD,
        b=HEIGHT - PAD,
        r=WIDTH - PAD,
        ty=PAD + 4,
        by=HEIGHT - PAD,
        top=f"{high:.4g}",
        bottom=f"{low:.4g}",
        lb=HEIGHT - 16,
        label=label,
        path=path,
        dots=dots,
    )


def png(points: Sequence[Point], path: Path, workload: str, metric: str) -> None:
    """The plot as a PNG; InputError naming matplotlib when it is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--png needs matplotlib: pip install 'gpuscope[plot]'") from None
    figure, axes = plt.subplots(figsize=(9, 3.5))
    try:
        axes.plot(range(len(points)), [p.value for p in points], marker="o")
        axes.set_title(f"{workload} · {metric}")
        axes.set_xlabel("result (oldest → newest)")
        axes.set_ylabel(f"{metric} ({points[-1].unit})" if points[-1].unit else metric)
        figure.tight_layout()
        figure.savefig(path, format="png")
    finally:
        plt.close(figure)
