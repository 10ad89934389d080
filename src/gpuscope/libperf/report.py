"""The libperf report (schema gpuscope.libperf/1), built once from the ranked rows; JSON is the
data, and `libperf_document` lays it out once for the terminal, Markdown and HTML renderers.

Sections: `top` — configs by total time (best backend's time per call × calls) with their share;
`under_peak` — configs whose best rate is under `under` (default 0.5) of what their size allows
(the roofline: min(compute ceiling, FLOP per byte × memory bandwidth)), by the time that gap
costs; `comparisons` — configs measured by two or more backends: each against torch (or the
first that measured it), speedup and verdict. A torch-vs-Triton pair is gpuscope.compare's
interleaved A/B with a bootstrap CI; a pair with a vendor binary compares point estimates (the
binaries print one mean), with the same δ-threshold rule and no CI, and says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from gpuscope._version import __version__
from gpuscope.document.model import Cell, Document, Section, Table, Text
from gpuscope.document.units import duration
from gpuscope.libperf.configs import Config
from gpuscope.libperf.output import PerfRow, kind
from gpuscope.libperf.replay import label
from gpuscope.libperf.result import STATUS_KINDS
from gpuscope.peaks import PeakTable
from gpuscope.schemas import LIBPERF as SCHEMA

THRESHOLD = 0.05  # a point-estimate pair within ±5 % is SAME


def build(
    rows: Sequence[PerfRow],
    *,
    source: str,
    device: str,
    peaks: PeakTable,
    under: float = 0.5,
    top: int = 10,
    elapsed_s: float | None = None,
) -> dict[str, Any]:
    """The report dict of ranked rows (output.rank)."""
    groups = _groups(rows)
    best = {id(c): _best(g) for c, g in groups}
    total = sum(r.metrics.total_us or 0.0 for r in best.values() if r is not None)
    return {
        "schema": SCHEMA,
        "source": source,
        "device": device,
        "elapsed_s": elapsed_s,
        "peaks": peaks.to_dict(),
        "summary": _summary(rows, groups),
        "top": [_top_entry(c, best[id(c)], total) for c, _ in groups if best[id(c)]][:top],
        "under_peak": _under(groups, best, under),
        "under_threshold": under,
        "comparisons": [cmp for c, g in groups for cmp in _comparisons(c, g)],
        "problems": [_problem(r) for r in rows if r.result.kind == "failed"],
    }


def _groups(rows: Sequence[PerfRow]) -> list[tuple[Config, list[PerfRow]]]:
    out: dict[int, tuple[Config, list[PerfRow]]] = {}
    for row in rows:
        out.setdefault(id(row.config), (row.config, []))[1].append(row)
    return list(out.values())


def _best(group: list[PerfRow]) -> PerfRow | None:
    timed = [r for r in group if r.result.ok]
    return min(timed, key=lambda r: r.result.time_us or 0.0) if timed else None


def _summary(rows: Sequence[PerfRow], groups: list[tuple[Config, list[PerfRow]]]) -> dict[str, Any]:
    statuses = {k: sum(1 for r in rows if r.result.kind == k) for k in STATUS_KINDS}
    missing = sorted({r.result.backend for r in rows if r.result.kind == "not found"})
    backends = sorted({r.result.backend for r in rows if r.result.ok})
    return {
        "configs": len(groups),
        "calls": sum(c.calls for c, _ in groups),
        "rows": len(rows),
        "statuses": statuses,
        "backends_measured": backends,
        "binaries_not_found": missing,
        "configs_replayed": sum(1 for _, g in groups if any(r.result.ok for r in g)),
    }


def _describe(c: Config, row: PerfRow) -> dict[str, Any]:
    m = row.metrics
    return {
        "label": label(c), "kind": kind(c), "library": c.library,
        "libraries": list(c.libraries), "calls": c.calls, "backend": row.result.backend,
        "time_us": row.result.time_us, "total_us": m.total_us, "tflops": m.tflops,
        "gbps": m.gbps, "peak_fraction": m.peak_fraction, "peak_source": m.peak_source,
        "roofline_fraction": m.roofline_fraction,
    }  # fmt: skip


def _top_entry(c: Config, row: PerfRow | None, total: float) -> dict[str, Any]:
    assert row is not None
    entry = _describe(c, row)
    entry["share"] = (row.metrics.total_us or 0.0) / total if total > 0 else None
    return entry


def _under(
    groups: list[tuple[Config, list[PerfRow]]], best: dict[int, PerfRow | None], under: float
) -> list[dict[str, Any]]:
    found = []
    for c, _ in groups:
        row = best[id(c)]
        frac = row.metrics.roofline_fraction if row is not None else None
        if row is None or frac is None or frac >= under:
            continue
        entry = _describe(c, row)
        entry["attainable_tflops"] = (row.metrics.tflops or 0.0) / frac if frac > 0 else None
        entry["lost_us"] = (row.metrics.total_us or 0.0) * (1 - frac)
        found.append(entry)
    return sorted(found, key=lambda e: -e["lost_us"])


def _comparisons(c: Config, group: list[PerfRow]) -> list[dict[str, Any]]:
    timed = [r for r in group if r.result.ok]
    if len(timed) < 2:
        return []
    base = next((r for r in timed if r.result.backend == "torch"), timed[0])
    return [_pair(c, base, other) for other in timed if other is not base]


def _pair(c: Config, base: PerfRow, other: PerfRow) -> dict[str, Any]:
    from gpuscope.timing.ab import verdict
    from gpuscope.timing.bootstrap import RatioCI

    a, b = base.result, other.result
    assert a.time_us is not None and b.time_us is not None
    entry: dict[str, Any] = {
        "label": label(c), "config": c.config, "calls": c.calls, "a": a.backend, "b": b.backend,
        "a_us": a.time_us, "b_us": b.time_us,
    }  # fmt: skip
    comparison = b.comparison if b.comparison is not None and a.backend == "torch" else None
    if comparison is not None and comparison.ratio:
        # both arms timed the same way in one interleaved run: show those times
        entry.update(a_us=comparison.a.median_us, b_us=comparison.b.median_us)
        entry.update(
            ratio=comparison.ratio, ci=[comparison.ci_low, comparison.ci_high],
            verdict=comparison.verdict, threshold=comparison.threshold,
            how="interleaved A/B, bootstrap 95 % CI (gpuscope.compare)",
        )  # fmt: skip
    else:
        ratio = b.time_us / a.time_us
        point = RatioCI(ratio=ratio, low=ratio, high=ratio, level=0.95)
        entry.update(
            ratio=ratio, ci=None, verdict=verdict(point, THRESHOLD), threshold=THRESHOLD,
            how="point estimates, no CI (a binary prints one mean)",
        )  # fmt: skip
    entry["speedup"] = 1 / entry["ratio"] if entry["ratio"] else None
    entry["faster"] = b.backend if entry["ratio"] < 1 else a.backend
    return entry


def _problem(row: PerfRow) -> dict[str, Any]:
    return {"label": label(row.config), "backend": row.result.backend,
            "status": row.result.status, "command": row.result.command}  # fmt: skip


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, allow_nan=False, default=str) + "\n"


# ---------------------------------------------------------------------------------------------
# views


def _us(value: float | None) -> str:
    return duration(value)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _rate(entry: dict[str, Any]) -> str:
    if entry.get("tflops") is not None:
        return f"{entry['tflops']:.1f} TFLOP/s"
    return f"{entry['gbps']:.1f} GB/s" if entry.get("gbps") is not None else "–"


def _verdict_text(cmp: dict[str, Any]) -> str:
    speed = cmp["speedup"]
    if cmp["verdict"] == "SAME":
        return f"SAME (within ±{cmp['threshold']:.0%})"
    if cmp["verdict"] == "INCONCLUSIVE":
        return "INCONCLUSIVE"
    times = speed if speed >= 1 else 1 / speed
    return f"{cmp['faster']} {times:.2f}× faster ({cmp['verdict']} for {cmp['b']})"


def tables(report: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, headers, rows) of every section, shared by the terminal and Markdown views."""
    top = [
        [str(i + 1), e["label"], str(e["calls"]), e["backend"], _us(e["time_us"]),
         _us(e["total_us"]), _pct(e["share"]), _rate(e), _pct(e["peak_fraction"])]
        for i, e in enumerate(report["top"])
    ]  # fmt: skip
    under = [
        [e["label"], e["backend"], _rate(e), f"{e['attainable_tflops']:.1f} TFLOP/s"
         if e["attainable_tflops"] else "–", _pct(e["roofline_fraction"]), _us(e["lost_us"])]
        for e in report["under_peak"]
    ]  # fmt: skip
    pairs = [
        [c["label"], f"{c['a']} {_us(c['a_us'])}", f"{c['b']} {_us(c['b_us'])}",
         _verdict_text(c), "A/B CI" if c["ci"] else "point"]
        for c in report["comparisons"]
    ]  # fmt: skip
    problems = [[p["label"], p["backend"], p["status"]] for p in report["problems"]]
    under_title = (
        f"Far under what their size allows (< {report['under_threshold']:.0%} of roofline)"
    )
    return [
        (
            "Configs by total time",
            ["#", "config", "calls", "best", "time/call", "total", "share", "rate", "of peak"],
            top,
        ),
        (under_title, ["config", "backend", "rate", "attainable", "of roofline", "lost"], under),
        ("Backends compared", ["config", "A", "B", "verdict", "how"], pairs),
        ("Failed", ["config", "backend", "status"], problems),
    ]


def summary_line(report: dict[str, Any]) -> str:
    s = report["summary"]
    counts = ", ".join(f"{v} {k}" for k, v in s["statuses"].items() if v)
    missing = s["binaries_not_found"]
    extra = f"; not on PATH: {', '.join(missing)}" if missing else ""
    return (f"{s['configs']} configs ({s['calls']} calls), {s['configs_replayed']} replayed on "
            f"{report['device']}; rows: {counts}{extra}")  # fmt: skip


NUMERIC_HEADERS = {"#", "calls", "time/call", "total", "share", "rate", "of peak", "attainable",
                   "of roofline", "lost"}  # fmt: skip


def libperf_document(report: dict[str, Any]) -> Document:
    """The report as a document for every renderer (terminal, Markdown, HTML)."""
    sections = [
        Section(title, (_table(headers, rows),)) for title, headers, rows in tables(report) if rows
    ]
    measured = (report["peaks"].get("measured") or {}).get("method")
    peaks = f"measured ({measured})" if measured else "datasheet only"
    head = Section("Summary", (Text(summary_line(report)), Text(peaks, "Peaks")))
    footer = f"schema {SCHEMA} · gpuscope {__version__}"
    return Document("gpuscope libperf", (head, *sections), str(report["source"]), footer)


def _table(headers: list[str], rows: list[list[str]]) -> Table:
    numeric = tuple(h in NUMERIC_HEADERS for h in headers)
    cells = tuple(
        tuple(Cell(text, code=headers[i] == "config") for i, text in enumerate(row)) for row in rows
    )
    return Table(tuple(headers), cells, numeric)
