"""Results as a notebook shows them: tables as DataFrames, findings as objects, the report's
summary drawn in the cell, a one-line `repr`, plots.

    >>> a = gpuscope.analyze("trace.json.gz")              # an AnalysisResult   # doctest: +SKIP
    >>> a                                                  # the summary, drawn as HTML
    >>> a.tables()["top_kernels"]                          # every table of the report
    >>> [f.id for f in a.findings if f.severity != "info"]
    >>> a.plot.breakdown()                                 # a matplotlib Figure

Each wrapper keeps what it wraps (`.analysis`, `.diff`, `.report`, `.result`) and computes its
report dict once (`to_dict()`, the JSON that `--json` writes). Tables come from that dict
(`gpuscope.frames.tables`), so a DataFrame and the JSON never disagree.

This package sits in the layer of `diff/`, `counters/` and `ranks/` and imports none of them:
the wrappers of their results are given the layout that draws them (`layout`, a function of the
report dict to a `Document`) by whoever makes them — `gpuscope.diff_profiles`,
`gpuscope.analyze_counters`, `gpuscope.analyze`, the IPython extension (`gpuscope.notebook`).
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuscope.frames._columns import check_backend, records_frame
from gpuscope.frames.tables import report_tables, set_tables


@dataclass(frozen=True)
class Finding:
    """One finding of a report: what fired (`id`), how bad (`severity`: info, warning,
    critical), why (`message`), what to do (`action`), the numbers behind it (`evidence`), the
    time at stake (`impact_us`, None where no estimate is honest) and its `cause`."""

    id: str
    severity: str
    message: str
    action: str
    evidence: Any = None
    impact_us: float | None = None
    cause: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Finding:
        known = ("id", "severity", "message", "action", "evidence", "impact_us", "cause")
        return cls(
            id=str(data.get("id", "")),
            severity=str(data.get("severity", "info")),
            message=str(data.get("message", "")),
            action=str(data.get("action", "")),
            evidence=data.get("evidence"),
            impact_us=data.get("impact_us"),
            cause=data.get("cause"),
            extra={k: v for k, v in data.items() if k not in known},
        )

    def __str__(self) -> str:
        return f"[{self.severity}] {self.id}: {self.message}"


class _Report(ABC):
    """What every result shares: its report dict, tables, findings, Jupyter views."""

    kind = "report"

    @functools.cached_property
    def _dict(self) -> dict[str, Any]:
        return self._make_dict()

    @abstractmethod
    def _make_dict(self) -> dict[str, Any]:
        """The report as plain data, built once (`_dict` caches it)."""

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (what `--json` writes; schema in its `schema` key)."""
        return self._dict

    def table_names(self) -> list[str]:
        """The names `tables()` returns."""
        return list(self._rows())

    def _rows(self) -> dict[str, list[dict[str, Any]]]:
        return report_tables(self._dict)

    def tables(self, backend: str = "pandas") -> dict[str, Any]:
        """Every table of the report as a DataFrame, by name (`gpuscope.frames.tables`)."""
        check_backend(backend)
        return {name: records_frame(rows, backend) for name, rows in self._rows().items()}

    def table(self, name: str, backend: str = "pandas") -> Any:
        """One table of `tables()`; a section's own table also by the section's name
        (`"steps"` for `"steps.steps"`); KeyError names the tables there are."""
        rows = self._rows()
        if name not in rows and f"{name}.{name}" in rows:
            name = f"{name}.{name}"
        if name not in rows:
            raise KeyError(f"no table {name!r}; this report has: {', '.join(rows)}")
        return records_frame(rows[name], backend)

    @property
    def findings(self) -> list[Finding]:
        """The report's findings as `Finding` objects (most reports rank them by impact)."""
        return [Finding.of(f) for f in self._dict.get("findings") or []]

    @abstractmethod
    def _document(self) -> Any:
        """The report laid out (`document.Document`) for the Jupyter view."""

    def _full_document(self) -> Any:
        """The report laid out whole, as `--html` draws it (default: the Jupyter view's)."""
        return self._document()

    def figures(self) -> dict[str, Any]:
        """The report's figures (the HTML page's, the PNGs beside `--md`) as matplotlib figures,
        by name: `{"01-gpu-time-by-category": Figure, …}` (`frames.report_figures`)."""
        from gpuscope.frames.report_figures import document_figures

        return document_figures(self._full_document())

    def _repr_html_(self) -> str:
        from gpuscope.report import html

        return html.fragment(self._document())

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


class AnalysisResult(_Report):
    """One trace analysed (`gpuscope.analyze`): the `Analysis`, its report and its views.

    `analysis` is the `gpuscope.analysis.analyze.Analysis` (every computed part), `trace` the
    `TraceFrame` of its trace; `kernel_ns`, `groups`, `timeline`, `verdict` are the analysis's.
    """

    kind = "analysis"

    def __init__(self, analysis: Any) -> None:
        from gpuscope.frames.trace import TraceFrame

        self.analysis = analysis
        self.trace = TraceFrame(analysis.trace)

    def _make_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = self.analysis.to_dict()
        return result

    @property
    def groups(self) -> Any:
        """Every kernel name's totals (`KernelGroup`), largest first."""
        return self.analysis.groups

    @property
    def kernel_ns(self) -> int:
        return int(self.analysis.kernel_ns)

    @property
    def timeline(self) -> Any:
        return self.analysis.timeline

    @property
    def verdict(self) -> Any:
        return self.analysis.verdict

    def _rows(self) -> dict[str, list[dict[str, Any]]]:
        rows = report_tables(self._dict)
        rows["kernels_by_name"] = group_rows(self.groups)
        return rows

    def _document(self) -> Any:
        from gpuscope.analysis.layout import summary_document
        from gpuscope.text import printable_data

        return summary_document(printable_data(self._dict))

    def _full_document(self) -> Any:
        from gpuscope.analysis.layout import analysis_document
        from gpuscope.text import printable_data

        return analysis_document([printable_data(self._dict)])

    def step_kernels(self, step: int | str, backend: str = "pandas") -> Any:
        """Every kernel step `step` launched, NCCL and other communication kernels included:
        `step` is a row of `table("steps.steps")` (the steps this analysis found; negative
        from the end) or a step's name; see `TraceFrame.kernels_launched`."""
        from gpuscope.frames.trace import step_position

        extra = self.analysis.extras.get("steps")
        steps = extra.result.steps if extra is not None and extra.result is not None else []
        i = step_position([s.name for s in steps], step)
        return self.trace.kernels_launched(steps[i].start, steps[i].end, backend)

    @functools.cached_property
    def plot(self) -> Any:
        """Figures of this analysis: `.timeline()`, `.breakdown()`, `.gaps()`, `.strip()`
        (matplotlib)."""
        from gpuscope.frames.plot import AnalysisPlots

        return AnalysisPlots(self)

    def __repr__(self) -> str:
        d = self._dict
        kernels = d["kernels"]
        time = kernels["time_us"]
        busy = d.get("utilization")
        parts = [
            f"{kernels['count']:,} kernels",
            f"{time / 1000:,.3f} ms kernel time" if time is not None else "kernel time unknown",
            f"GPU busy {busy:.0%}" if busy is not None else "",
            f"verdict {d['verdict']['bound']}",
            f"{len(d['findings'])} findings",
        ]
        source = d["source"]
        what = ", ".join(p for p in parts if p)
        return f"<AnalysisResult {source['path']!r} ({source['format']}): {what}>"


def group_rows(groups: Sequence[Any]) -> list[dict[str, Any]]:
    """`kernels_by_name`: one row per kernel name (`KernelGroup`s), its share of kernel time."""
    kernel_ns = sum(max(g.total_ns, 0) for g in groups)
    return [_group_row(g, kernel_ns) for g in groups]


def _group_row(group: Any, kernel_ns: int) -> dict[str, Any]:
    known = group.total_ns >= 0
    return {
        "name": group.name,
        "category": group.category,
        "count": group.count,
        "total_us": round(group.total_ns / 1000, 3) if known else None,
        "mean_us": round(group.mean_ns / 1000, 3) if known else None,
        "min_us": round(group.min_ns / 1000, 3) if known else None,
        "max_us": round(group.max_ns / 1000, 3) if known else None,
        "share": round(group.total_ns / kernel_ns, 6) if known and kernel_ns else None,
    }


Layout = Callable[[dict[str, Any]], Any]  # a report dict → its Document


class AnalysisSet(_Report):
    """Several traces analysed together (`gpuscope.analyze` of a folder of ranks, or several
    paths): one report per trace, and the cross-rank report when they are ranks of one job.

    `tables()` holds every per-trace table with `trace` and `rank` columns first (named as in
    one trace's report), and the cross-rank tables under `ranks.` (`ranks.per_rank`, ...)."""

    kind = "analysis-set"

    def __init__(self, job: Any, lead: Layout | None = None) -> None:
        """`job`: a `gpuscope.ranks.api.JobResult`; `lead`: draws the cross-rank section."""
        self.job = job
        self._lead = lead

    @property
    def reports(self) -> list[dict[str, Any]]:
        return list(self.job.reports)

    @property
    def ranks(self) -> dict[str, Any] | None:
        """The cross-rank report (schema part `gpuscope.ranks/1`), None when not one job."""
        ranks: dict[str, Any] | None = self.job.ranks
        return ranks

    def _make_dict(self) -> dict[str, Any]:
        from gpuscope.schemas import ANALYSIS_SET

        data: dict[str, Any] = {"schema": ANALYSIS_SET, "reports": self.reports}
        if self.ranks is not None:
            data["ranks"] = self.ranks
        if self.job.failed:
            data["failed"] = [{"path": p, "error": e} for p, e in self.job.failed]
        return data

    def _rows(self) -> dict[str, list[dict[str, Any]]]:
        groups = getattr(self.job, "groups", None) or []
        return set_tables(self.reports, self.ranks, self.job.failed,
                          [{"kernels_by_name": group_rows(g)} for g in groups])  # fmt: skip

    @property
    def findings(self) -> list[Finding]:
        """The cross-rank findings, then every trace's."""
        found = [Finding.of(f) for f in (self.ranks or {}).get("findings") or []]
        return found + [Finding.of(f) for r in self.reports for f in r.get("findings") or []]

    def _document(self) -> Any:
        from gpuscope.analysis import layout
        from gpuscope.text import printable_data

        lead = []
        if self.ranks is not None and self._lead is not None:
            lead.append(self._lead(printable_data(self.ranks)))
        return layout.overview_document(printable_data(self.reports), lead)

    def _full_document(self) -> Any:
        from gpuscope.analysis import layout
        from gpuscope.text import printable_data

        lead = []
        if self.ranks is not None and self._lead is not None:
            lead.append(self._lead(printable_data(self.ranks)))
        return layout.analysis_document(printable_data(self.reports), lead)

    @functools.cached_property
    def plot(self) -> Any:
        """Figures of the job: `.ranks()` (per-rank busy / wait, steps per rank)."""
        from gpuscope.frames.plot import SetPlots

        return SetPlots(self.reports, self.ranks)

    def __repr__(self) -> str:
        job = "the ranks of one job" if self.ranks is not None else "separate traces"
        failed = f", {len(self.job.failed)} unreadable" if self.job.failed else ""
        return f"<AnalysisSet of {len(self.reports)} traces ({job}){failed}>"


class DiffResult(_Report):
    """Two analyses compared (`gpuscope.diff`): the `Diff`, its report and its views."""

    kind = "diff"

    def __init__(self, diff: Any, layout: Layout) -> None:
        """`diff`: a `gpuscope.diff.Diff`; `layout`: `gpuscope.diff.layout.diff_document`."""
        self.diff = diff
        self._layout = layout

    def _make_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = self.diff.to_dict()
        return result

    @property
    def findings(self) -> list[Finding]:
        """The findings that appeared after (the `findings.appeared` of the report)."""
        changes = self._dict.get("findings") or {}
        return [Finding.of(f) for f in changes.get("appeared") or []]

    def _document(self) -> Any:
        from gpuscope.text import printable_data

        return self._layout(printable_data(self._dict))

    def __repr__(self) -> str:
        verdict = self._dict.get("verdict") or {}
        parts = [_verdict_text(verdict)]
        bound = verdict.get("bound") or {}
        before, after = (bound.get(s) or {} for s in ("before", "after"))
        if before.get("bound") and after.get("bound"):
            paced = before["bound"] if before["bound"] == after["bound"] else (
                f"{before['bound']} → {after['bound']}")  # fmt: skip
            parts.append(f"paced: {paced}")
        parts.append(f"{len(self.diff.kernels)} kernels matched")
        return f"<DiffResult: {'; '.join(p for p in parts if p)}>"


def _verdict_text(verdict: Mapping[str, Any]) -> str:
    """'slower +104.1% (gpu_busy 7.28 → 14.9 ms, noise unknown)': the diff's verdict, short."""
    direction = verdict.get("direction")
    if not direction:
        return ""
    change = verdict.get("change")
    text = f"{direction} {change:+.1%}" if change is not None and direction != "unchanged" else (
        str(direction))  # fmt: skip
    before, after = verdict.get("before_us"), verdict.get("after_us")
    significant = (verdict.get("significance") or {}).get("significant")
    judged = {True: "significant", False: "within the noise"}.get(bool(significant), "")
    judged = judged if significant is not None else "noise unknown"
    measured = str(verdict.get("measure") or "")
    if before is not None and after is not None:
        measured += f" {before / 1000:.3g} → {after / 1000:.3g} ms"
    return f"{text} ({measured.strip()}, {judged})"


class CountersResult(_Report):
    """Hardware counters analysed (`gpuscope.counters`): metrics per kernel, the roofline."""

    kind = "counters"

    def __init__(self, report: Any, layout: Layout) -> None:
        """`report`: a `gpuscope.counters.analysis.CounterAnalysis`; `layout`:
        `gpuscope.counters.views.counters_document`."""
        self.report = report
        self._layout = layout

    def _make_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = self.report.to_dict()
        return result

    def _document(self) -> Any:
        from gpuscope.text import printable_data

        return self._layout(printable_data(self._dict))

    @functools.cached_property
    def plot(self) -> Any:
        """Figures: `.roofline()` (matplotlib)."""
        from gpuscope.frames.plot import CounterPlots

        return CounterPlots(self._dict)

    def __repr__(self) -> str:
        d = self._dict
        return (
            f"<CountersResult: {len(d['kernels'])} kernels, {len(d['counters'])} counters, "
            f"{len(d['findings'])} findings>"
        )


class BenchResult(_Report):
    """A benchmark (`gpuscope.bench`'s `Measurement`) or an A/B test (`gpuscope.compare`'s
    `Comparison`): `tables()["samples"]` holds the raw per-call times."""

    kind = "bench"

    def __init__(self, result: Any) -> None:
        self.result = result

    def _make_dict(self) -> dict[str, Any]:
        import msgspec

        data: dict[str, Any] = msgspec.to_builtins(self.result)
        return data

    def _rows(self) -> dict[str, list[dict[str, Any]]]:
        rows = report_tables(self._dict)
        sides = [("", self._dict)] if "samples_us" in self._dict else []
        sides += [(k, v) for k, v in self._dict.items() if _measured(v)]
        rows["samples"] = [
            {"side": side or self._dict.get("name"), "sample": i, "us_per_call": value}
            for side, data in sides
            for i, value in enumerate(data["samples_us"])
        ]
        return rows

    def _document(self) -> Any:
        from gpuscope.document.model import Document, Facts, Section

        measurements = self._measurements()
        sections = tuple(
            Section(
                f"{label}{m.name} — {m.mode} ({m.timer}) on {m.env.device}",
                (Facts(tuple(_measurement_rows(m))),),
            )
            for label, m in measurements
        )
        verdict = self._dict.get("verdict")
        title = "gpuscope bench" + (f" · {verdict}" if verdict else "")
        return Document(title, sections, subtitle="", footer=str(self._dict.get("schema", "")))

    def _measurements(self) -> list[tuple[str, Any]]:
        from gpuscope.timing.measurement import Measurement

        if isinstance(self.result, Measurement):
            return [("", self.result)]
        return [(f"{side.upper()}: ", getattr(self.result, side)) for side in ("a", "b")
                if isinstance(getattr(self.result, side, None), Measurement)]  # fmt: skip

    def __repr__(self) -> str:
        parts = []
        for label, m in self._measurements():
            n = len(m.samples_us)
            parts.append(f"{label}{m.name}: median {m.median_us:.4g} µs ({m.mode}, n={n})")
        verdict = self._dict.get("verdict")
        return f"<BenchResult {'; '.join(parts)}{f'; {verdict}' if verdict else ''}>"


def _measured(value: Any) -> bool:
    return isinstance(value, dict) and "samples_us" in value


def _measurement_rows(m: Any) -> list[tuple[str, str]]:
    from gpuscope.timing.layout import measurement_rows

    return measurement_rows(m)


class ProfileView(_Report):
    """What `gpuscope.profile` (and `%%gpuscope_profile`) measured: the first call, the warm
    calls, the files written, and the analysis of the profiled window (`.analysis`)."""

    kind = "profile"

    def __init__(self, result: Any) -> None:
        self.result = result
        self.analysis = AnalysisResult(result.analysis)

    def _make_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = self.result.to_dict()
        return data

    def _rows(self) -> dict[str, list[dict[str, Any]]]:
        return self.analysis._rows()

    @property
    def findings(self) -> list[Finding]:
        return self.analysis.findings

    @property
    def plot(self) -> Any:
        return self.analysis.plot

    def _document(self) -> Any:
        from dataclasses import replace

        from gpuscope.document.model import Facts, Section

        d = self._dict
        facts = Facts((
            ("first call", f"{d['first_call_ms']:.3f} ms"),
            ("warm call (median)", f"{d['warm_call_ms']:.3f} ms"),
            ("profiled", f"{d['iterations']} iterations on {d['device']}"),
            ("files", f"{self.result.out_dir}: " + ", ".join(d["files"].values())),
            *(("note", n) for n in d["notes"]),
        ))  # fmt: skip
        summary = self.analysis._document()
        section = Section(f"profile of {d['name']}", (facts,))
        return replace(summary, sections=(section, *summary.sections))

    def __repr__(self) -> str:
        d = self._dict
        return (
            f"<ProfileView {d['name']}: first call {d['first_call_ms']:.3f} ms, warm "
            f"{d['warm_call_ms']:.3f} ms, {d['iterations']} iterations profiled; "
            f"{self.result.trace}>"
        )
