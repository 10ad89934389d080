"""Figures of the results, as matplotlib `Figure`s (Jupyter shows them; `fig.savefig(...)`).

    >>> a = gpuscope.analyze("trace.json.gz")        # doctest: +SKIP
    >>> a.plot.timeline()                            # kernels per device and stream, by category
    >>> a.plot.breakdown()                           # time per category and the top kernels
    >>> a.plot.gaps()                                # idle gaps by length and by cause
    >>> a.plot.strip()                               # busy / idle over the span, long gaps marked
    >>> gpuscope.analyze_counters("ncu.csv").plot.roofline()
    >>> gpuscope.analyze("run/").plot.ranks()        # per-rank busy / wait, steps per rank

Figures are made with `matplotlib.figure.Figure` (no pyplot, no global state, any backend);
they draw the report's numbers (the same as the JSON) except the timeline, which draws the
trace's kernels themselves. `save_all` writes every figure of a result (`--png DIR`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gpuscope.errors import InputError

# one colour per kernel category (the HTML report's bars are one colour; these tell apart)
_PALETTE = (
    *("#4c8bf5", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1"),
    *("#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#8c564b", "#17becf", "#7f7f7f"),
)


def _figure(width: float = 9.0, height: float = 4.0) -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError("plots need matplotlib: pip install 'gpuscope[notebook]'") from None
    return Figure(figsize=(width, height), layout="constrained")


class AnalysisPlots:
    """`analysis.plot`: the figures of one trace's analysis."""

    def __init__(self, result: Any) -> None:
        self._result = result

    def names(self) -> list[str]:
        return ["timeline", "breakdown", "gaps", "strip"]

    def strip(self) -> Any:
        """The devices' busy / idle over their span with the longest gaps numbered: the report's
        figure (`frames.report_figures`), as the HTML page draws it."""
        from gpuscope.frames.report_figures import busy_strip

        return busy_strip(self._result.to_dict())

    def timeline(self, *, limit: int = 200_000) -> Any:
        """Kernels on a time axis (ms from the first), one lane per device and stream, coloured
        by category. Up to `limit` kernels (the first in time) are drawn."""
        import numpy as np

        from gpuscope.analysis.categories import CATEGORIES

        k = self._result.trace.kernel_columns()
        timed = np.flatnonzero(k["duration_ns"].present)
        order = timed[np.argsort(k["start_ns"][timed], kind="stable")][:limit]
        lane_keys = np.stack([k["device"][order].astype(np.int64), k["stream"].values[order]], 1)
        lanes, lane = np.unique(lane_keys, axis=0, return_inverse=True)
        shown = len(np.unique(k["category"].codes[order]))  # legend entries, right of the axes
        fig = _figure(10, max(1.2 + 0.35 * max(1, len(lanes)), 0.6 + 0.2 * shown))
        ax = fig.add_subplot()
        if not len(order):
            ax.set_title("no timed kernels in this trace")
            return fig
        x = (k["start_ns"][order] - k["start_ns"][order].min()) / 1e6
        width = k["duration_ns"].values[order] / 1e6
        category = k["category"].codes[order]
        for c in np.unique(category):
            for i in np.unique(lane[category == c]):
                rows = (category == c) & (lane.ravel() == i)
                bars = list(zip(x[rows].tolist(), width[rows].tolist(), strict=True))
                colour = _PALETTE[int(c) % len(_PALETTE)]
                ax.broken_barh(bars, (int(i) - 0.4, 0.8), facecolors=colour,
                               label=CATEGORIES[int(c)])  # fmt: skip
        ax.set_yticks(range(len(lanes)), [f"GPU {d} · stream {s}" for d, s in lanes.tolist()])
        ax.set_xlabel("time from the first kernel (ms)")
        ax.set_title(f"Kernels — {Path(self._result.to_dict()['source']['path']).name}")
        _legend(ax)
        return fig

    def breakdown(self, *, top: int = 10) -> Any:
        """Device time per category (share of GPU op time) and the `top` kernels by time."""
        d = self._result.to_dict()
        fig = _figure(10, 4.5)
        left, right = fig.subplots(1, 2, width_ratios=(1, 1.6))
        cats = [(n, c) for n, c in d["categories"].items() if c.get("time_us")]
        _barh(left, [n for n, _ in cats], [c["time_us"] / 1000 for _, c in cats], "ms")
        left.set_title("time per category")
        groups = self._result.groups[:top]
        names = [_short(g.name) for g in groups]
        _barh(right, names, [max(g.total_ns, 0) / 1e6 for g in groups], "ms")
        right.set_title(f"top {len(names)} kernels")
        return fig

    def gaps(self) -> Any:
        """Idle gaps on the device: how many and how long per length bucket, and their time by
        cause (the report's `gaps.histogram` and `gaps.attribution`)."""
        gaps = self._result.to_dict().get("gaps")
        fig = _figure(10, 4)
        left, right = fig.subplots(1, 2)
        if not gaps:
            left.set_title("no timeline: this source has no timestamps")
            return fig
        labels = [_bucket(b) for b in gaps["histogram"]]
        left.bar(labels, [b["time_us"] / 1000 for b in gaps["histogram"]], color=_PALETTE[0])
        left.set_ylabel("idle time (ms)")
        left.set_xlabel("gap length")
        left.tick_params(axis="x", rotation=45)
        for x, b in enumerate(gaps["histogram"]):
            left.annotate(str(b["count"]), (x, b["time_us"] / 1000), ha="center", va="bottom",
                          fontsize=8)  # fmt: skip
        left.set_title(f"{gaps['count']:,} gaps, {gaps['total_us'] / 1000:,.3f} ms")
        causes = {c: v["time_us"] / 1000 for c, v in gaps["attribution"].items()}
        _barh(right, list(causes), list(causes.values()), "ms")
        right.set_title("idle time by cause")
        return fig


class SetPlots:
    """`analysis_set.plot`: the figures of several traces' reports (the ranks of a job)."""

    def __init__(
        self, reports: Sequence[Mapping[str, Any]], ranks: Mapping[str, Any] | None = None
    ) -> None:
        self._reports = reports
        self._ranks = ranks

    def names(self) -> list[str]:
        return ["ranks"]

    def ranks(self) -> Any:
        """Per rank (the cross-rank report's `per_rank`, else each trace's report), its GPU
        span cut into exclusive parts that add up to it: compute (and copies) with no
        communication running, communication overlapped with compute, exposed communication,
        idle; and beside it the mean step time, else the time each rank waited for the others
        at collectives."""
        per_rank = (self._ranks or {}).get("per_rank") or []
        fig = _figure(11, 4)
        left, right = fig.subplots(1, 2, width_ratios=(1.4, 1))
        rows = per_rank or self._reports
        if per_rank:
            labels = [f"rank {r['rank']}" for r in per_rank]
        else:
            labels = [_rank_label(r, i) for i, r in enumerate(self._reports)]
        parts = [span_parts(r) for r in rows]
        bottom = [0.0] * len(rows)
        for i, (name, colour) in enumerate(_SPAN_PARTS):
            values = [p[i] for p in parts]
            left.bar(labels, values, bottom=bottom, label=name, color=colour)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        left.set_ylabel("ms")
        left.set_title("GPU span per rank")
        _legend(left)
        steps = [_ms(r.get("step_mean_us")) for r in per_rank]
        waited = [_ms(r.get("waited_us")) for r in per_rank]
        if any(steps):
            right.bar(labels, steps, color=_PALETTE[2])
            right.set_title("mean step time per rank")
        elif any(waited):
            right.bar(labels, waited, color=_PALETTE[3])
            right.set_title("time waited for other ranks")
        else:
            right.set_title("no steps or collectives across ranks")
        right.set_ylabel("ms")
        return fig


_SPAN_PARTS = (
    ("compute only", _PALETTE[0]),
    ("communication overlapped with compute", _PALETTE[4]),
    ("exposed communication", _PALETTE[1]),
    ("idle", _PALETTE[9]),
)


def span_parts(row: Mapping[str, Any]) -> tuple[float, float, float, float]:
    """A rank's GPU span (ms, summed over its devices) in four parts that do not overlap:
    busy − communication (compute and copies alone), communication − exposed (overlapped with
    compute), exposed communication (no compute kernel running), idle (span − busy). From a
    `per_rank` row, or a trace's report (`gpu_busy_us`, `communication.exposure`)."""
    exposure = (row.get("communication") or {}).get("exposure") or {}
    busy = _ms(row["busy_us"] if "busy_us" in row else row.get("gpu_busy_us"))
    comm = _ms(row.get("communication_us", exposure.get("communication_us")))
    exposed = _ms(row.get("exposed_communication_us", exposure.get("exposed_us")))
    exposed = min(exposed, comm)
    return max(busy - comm, 0.0), comm - exposed, exposed, _ms(row.get("idle_us"))


def _ms(us: Any) -> float:
    return float(us) / 1000 if isinstance(us, (int, float)) else 0.0


class CounterPlots:
    """`counters.plot`: the figures of a counters report (its dict)."""

    def __init__(self, report: Mapping[str, Any]) -> None:
        self._report = report

    def names(self) -> list[str]:
        return ["roofline"]

    def roofline(self) -> Any:
        """Each kernel placed by its counters: arithmetic intensity (FLOP/B) against achieved
        FLOP/s, under the device's bandwidth and compute roofs (log-log)."""
        d = self._report
        fig = _figure(7, 5)
        ax = fig.add_subplot()
        points = [k for k in d["kernels"] if (k.get("roofline") or {}).get("intensity")
                  and k["roofline"].get("flops_rate")]  # fmt: skip
        ceilings = d.get("ceilings") or {}
        bandwidth = (ceilings.get("bandwidth_gbs") or 0) * 1e9
        if not points:
            ax.set_title("no kernel has the counters a roofline needs")
            return fig
        xs = [k["roofline"]["intensity"] for k in points]
        ys = [k["roofline"]["flops_rate"] for k in points]
        lo, hi = min(xs) / 4, max(xs) * 4
        for i, (key, tflops) in enumerate(sorted((ceilings.get("tflops") or {}).items())):
            if tflops and bandwidth:
                ridge = tflops * 1e12 / bandwidth
                x = [lo, ridge, max(hi, ridge * 2)]
                ax.plot(x, [min(v * bandwidth, tflops * 1e12) for v in x],
                        color=_PALETTE[(i + 1) % len(_PALETTE)], label=f"{key} roof")  # fmt: skip
        ax.scatter(xs, ys, color=_PALETTE[0], zorder=3)
        for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
            ax.annotate(f"#{i + 1}", (x, y), textcoords="offset points", xytext=(4, 4),
                        fontsize=8)  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        ax.set_ylabel("FLOP/s")
        ax.set_title(f"Roofline — {ceilings.get('label', '')}")
        _legend(ax)
        return fig


def save_all(plots: Any, folder: Path, stem: str = "") -> list[Path]:
    """Every figure of `plots` as `folder/<stem><name>.png`; the paths written."""
    from gpuscope.output import writing

    written = []
    for name in plots.names():
        make: Callable[[], Any] = getattr(plots, name)
        path = folder / f"{stem}{name}.png"
        with writing(path) as temp:
            make().savefig(temp, format="png", dpi=110)
        written.append(path)
    return written


def _barh(ax: Any, labels: list[str], values: list[float], unit: str) -> None:
    positions = range(len(labels))
    ax.barh(positions, values, color=_PALETTE[0])
    ax.set_yticks(positions, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(unit)


def _legend(ax: Any) -> None:
    """The legend outside the axes, on their right: inside, it hid the data under it (the last
    10 ms of a timeline); "best" placement takes minutes on a big figure."""
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    if unique:
        ax.legend(unique.values(), unique.keys(), fontsize=8, loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # fmt: skip


def _short(name: str, width: int = 48) -> str:
    return name if len(name) <= width else name[: width // 2 - 1] + "…" + name[-width // 2 :]


def _bucket(bucket: Mapping[str, Any]) -> str:
    hi = bucket.get("hi_us")
    return f"≥{bucket['lo_us']:g} µs" if hi is None else f"{bucket['lo_us']:g}–{hi:g} µs"


def _rank_label(report: Mapping[str, Any], index: int) -> str:
    rank = report["source"].get("rank")
    return f"rank {rank}" if rank is not None else f"#{index}"
