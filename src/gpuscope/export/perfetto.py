"""`export_perfetto`: one Chrome / Perfetto JSON timeline from any trace gpuscope reads.

    >>> from gpuscope.export import export_perfetto
    >>> result = export_perfetto(["gpuscope-runs/20261122-025042-28b9"], Path("run.json.gz"))
    >>> result.events, result.warnings                                        # doctest: +SKIP

Inputs are trace files or directories; a `gpuscope run` directory (it holds `manifest.json`)
brings its power / VRAM sampler CSVs as counter tracks and its workload marks as instants, on
the traces' clock (see `_clocks.py` for how the clocks are related, and how sure that is).
The result opens in ui.perfetto.dev and chrome://tracing; ts are µs from the timeline's origin,
whose clock and absolute time are in the file's top-level `gpuscope` metadata.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuscope.errors import GpuscopeError, InputError
from gpuscope.export import _clocks as clocks
from gpuscope.export._events import TraceEvents
from gpuscope.export._samplers import SamplerFile, find_sampler_files, read_sampler_file
from gpuscope.export._tracks import Tracks
from gpuscope.export._writer import TraceWriter, escaped
from gpuscope.schemas import PERFETTO as SCHEMA
from gpuscope.trace.model import Trace


@dataclass(frozen=True)
class ExportResult:
    path: Path
    events: int
    warnings: tuple[str, ...]
    metadata: dict[str, Any]


@dataclass
class _Run:
    """A `gpuscope run` directory: its samplers and what it says about clocks."""

    path: Path
    samplers: list[SamplerFile]
    clocks: clocks.RunClocks
    include_samplers: bool = True
    why_not: str = ""


@dataclass
class _Input:
    trace: Trace
    label: str
    run: _Run | None
    native: clocks.Native
    placement: clocks.Placement | None = None
    span: tuple[int, int] | None = None


@dataclass
class _Plan:
    inputs: list[_Input]
    runs: list[_Run]
    domain: str | None
    origin_ns: int = 0
    warnings: list[str] = field(default_factory=list)


def export_perfetto(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    samplers: bool = True,
    counter_tracks_max: int = 64,
    skip_bad: bool = False,
) -> ExportResult:
    """Write every trace in `paths` (and the samplers of run directories) to `out` (`-`:
    standard output). A trace that cannot be read is an error, or with `skip_bad` a warning."""
    plan = _plan(paths, samplers, skip_bad)
    tracks = Tracks()
    sources: list[dict[str, Any]] = []
    with TraceWriter(out) as writer:
        flow_base = 1
        for item in plan.inputs:
            events = _trace_events(item, plan, tracks, flow_base, counter_tracks_max)
            for chunk in events.chunks():
                writer.write(chunk)
            flow_base += len(item.trace.host) + 1
            sources.append(_source_meta(item, events))
            plan.warnings += [f"{item.label}: {n}" for n in events.counts.notes]
        for run in plan.runs:
            if run.include_samplers:
                writer.write(_sampler_lines(run, plan, tracks))
        writer.write(tracks.metadata)
        meta = _metadata(plan, sources, writer.events)
        writer.finish(meta)
    return ExportResult(Path(out), writer.events, tuple(plan.warnings), meta)


# --- planning: read, relate the clocks, choose the origin ---------------------------------


def input_files(paths: Sequence[str | Path]) -> list[str]:
    """Every file an export of `paths` would read (so that its output is kept off them)."""
    from gpuscope.trace.registry import find_sources

    files: list[str] = []
    for path in paths:
        if Path(path).is_dir():
            files += [str(Path(path, "manifest.json")), *map(str, find_sampler_files(Path(path)))]
        try:
            files += [f for source in find_sources(str(path), bad=[]) for f in source.paths]
        except GpuscopeError:
            continue  # the export itself says what is wrong with it
    return files


def _plan(paths: Sequence[str | Path], with_samplers: bool, skip_bad: bool) -> _Plan:
    inputs: list[_Input] = []
    runs: list[_Run] = []
    warnings: list[str] = []
    for path in paths:
        run = _run_of(Path(path), warnings) if with_samplers else None
        if run is not None:
            runs.append(run)
        for trace, label in _read_all(str(path), warnings, skip_bad):
            inputs.append(_Input(trace, label, run, clocks.native_clock(trace)))
    with_rows = any(r.samplers for r in runs)
    if not inputs and not with_rows:
        why = "; ".join(warnings) or "no trace with timed events, no sampler CSV"
        raise InputError(f"{', '.join(map(str, paths))}: nothing to put on a timeline ({why})")
    domain = clocks.timeline_domain([i.native for i in inputs], with_rows)
    plan = _Plan(inputs, runs, domain, warnings=warnings)
    _place(plan)
    return plan


def _run_of(path: Path, warnings: list[str]) -> _Run | None:
    manifest_path = path / "manifest.json"
    if not (path.is_dir() and manifest_path.is_file()):
        return None
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        warnings.append(f"{manifest_path}: unreadable ({error}); its clocks are not used")
        manifest = None
    files = []
    for csv_path in find_sampler_files(path):
        try:
            files.append(read_sampler_file(csv_path))
        except (OSError, ValueError, IndexError) as error:
            warnings.append(f"{csv_path}: sampler CSV left out: {error}")
    return _Run(path, files, clocks.run_clocks(manifest, files))


def _read_all(path: str, warnings: list[str], skip_bad: bool) -> Iterator[tuple[Trace, str]]:
    from gpuscope.trace.registry import find_sources, read_source

    bad: list[tuple[str, str]] | None = [] if skip_bad else None
    try:
        sources = find_sources(path, bad)
    except GpuscopeError:
        if Path(path, "manifest.json").is_file():
            warnings.append(f"{path}: no profiler output in this run (samplers only)")
            return
        raise
    warnings += [f"left out: {message}" for _, message in bad or ()]
    for source in sources:
        try:
            trace = read_source(source)
        except GpuscopeError as error:
            if not skip_bad:
                raise
            warnings.append(f"left out: {error}")
            continue
        warnings += [f"{source.path}: {w}" for w in trace.meta.warnings]
        if clocks.time_span(trace) is None and not len(trace.gpu):
            warnings.append(f"{source.path}: no timed events (per-name totals only)")
            continue
        yield trace, _label(trace, source.path, path)


def _label(trace: Trace, source: str, given: str) -> str:
    base = Path(given)
    try:
        short = Path(source).relative_to(base).as_posix() if base.is_dir() else base.name
    except ValueError:
        short = Path(source).name
    rank = f" rank {trace.meta.rank}" if trace.meta.rank is not None else ""
    return f"{trace.meta.format} {short or base.name}{rank}"


def _place(plan: _Plan) -> None:
    for item in plan.inputs:
        item.span = clocks.time_span(item.trace)
        item.placement = clocks.place(item.native, plan.domain, _run_clocks(item))
    for run in plan.runs:
        _check_run(run, plan)
    placed = [i for i in plan.inputs if i.placement is not None and i.span is not None]
    starts = [i.span[0] + i.placement.offset_ns for i in placed if i.span and i.placement]
    for run in plan.runs:
        link = clocks.samplers_offset(plan.domain, run.clocks)
        if run.include_samplers and link is not None:
            starts += [
                int(s.monotonic_ns.min()) + link.offset_ns
                for s in run.samplers
                if len(s.monotonic_ns)
            ]
    plan.origin_ns = min(starts) if starts else 0
    for item in plan.inputs:
        if item.placement is None:
            item.placement = _unaligned(item, plan)


def _run_clocks(item: _Input) -> clocks.RunClocks | None:
    return item.run.clocks if item.run is not None else None


def _check_run(run: _Run, plan: _Plan) -> None:
    """Leave a run's samplers out when they cannot be put on the timeline's clock."""
    link = clocks.samplers_offset(plan.domain, run.clocks)
    if not run.samplers:
        run.include_samplers = False
        return
    if link is None:
        _drop_samplers(run, plan, "the run recorded no clock relating them to the traces")
        return
    for item in plan.inputs:
        if item.run is not run or item.placement is None or item.span is None:
            continue
        outside = clocks.outside_workload(item.span, item.placement, run.clocks, link)
        if outside > clocks.allowed_slack(item.placement, link):
            _drop_samplers(
                run,
                plan,
                f"{item.label} lies {outside / 1e6:.3f} ms outside the workload marks on the "
                "aligned clock, so the clocks do not agree",
            )
            return


def _drop_samplers(run: _Run, plan: _Plan, why: str) -> None:
    run.include_samplers = False
    run.why_not = why
    plan.warnings.append(f"{run.path}: samplers left out: {why}")


def _unaligned(item: _Input, plan: _Plan) -> clocks.Placement:
    """A trace on a clock of its own starts at the origin; alone, its clock is the timeline."""
    first = item.span[0] if item.span is not None else 0
    if plan.domain is None and len(plan.inputs) == 1:
        return clocks.Placement(-first, True, item.native.how, 0)
    how = f"not aligned: {item.native.how}; placed to start at the timeline's origin"
    plan.warnings.append(f"{item.label}: {how}")
    return clocks.Placement(plan.origin_ns - first, False, how, None)


# --- writing ------------------------------------------------------------------------------


def _trace_events(
    item: _Input, plan: _Plan, tracks: Tracks, flow_base: int, counter_tracks_max: int
) -> TraceEvents:
    assert item.placement is not None
    label = item.label if item.placement.aligned else f"{item.label} [own clock]"
    shift = item.placement.offset_ns - plan.origin_ns
    return TraceEvents(item.trace, tracks, label, shift, flow_base, counter_tracks_max)


def _sampler_lines(run: _Run, plan: _Plan, tracks: Tracks) -> list[str]:
    link = clocks.samplers_offset(plan.domain, run.clocks)
    assert link is not None
    pid = tracks.process(f"samplers · {run.path.name}")
    lines = []
    for sampler in run.samplers:
        tid = tracks.thread(pid, sampler.path.name)
        ts = sampler.monotonic_ns + link.offset_ns - plan.origin_ns
        for series in sampler.series:
            name, key = escaped(series.name), escaped(series.unit or "value")
            for t, v in zip(ts.tolist(), series.values.tolist(), strict=True):
                if v == v:  # NaN: the cell was empty
                    lines.append(_counter(name, pid, tid, t, key, v))
        for mark in sampler.marks:
            t = mark.monotonic_ns + link.offset_ns - plan.origin_ns
            args = f'{{"file":{escaped(sampler.path.name)}}}'
            lines.append(
                f'{{"ph":"i","s":"g","cat":"mark","name":{escaped(mark.label)},"pid":{pid},'
                f'"tid":{tid},"ts":{t // 1000}.{t % 1000:03d},"args":{args}}}'
            )
    return lines


def _counter(name: str, pid: int, tid: int, ts: int, key: str, value: float) -> str:
    return (
        f'{{"ph":"C","name":{name},"pid":{pid},"tid":{tid},'
        f'"ts":{ts // 1000}.{ts % 1000:03d},"args":{{{key}:{value!r}}}}}'
    )


def _source_meta(item: _Input, events: TraceEvents) -> dict[str, Any]:
    meta = item.trace.meta
    assert item.placement is not None
    return {
        "label": item.label,
        "path": meta.path,
        "format": meta.format,
        "clock": meta.clock or None,
        "placement": item.placement.to_dict(),
        "synthetic_timeline": events.synthetic,
        "written": events.counts.written,
        "left_out": events.counts.left_out,
    }


def _metadata(plan: _Plan, sources: list[dict[str, Any]], events: int) -> dict[str, Any]:
    from gpuscope._version import __version__

    timeline: dict[str, Any] = {
        "clock": plan.domain or "the trace's own",
        "origin_ns": plan.origin_ns,
        "ts": "µs from origin_ns on that clock",
    }
    if plan.domain == clocks.REALTIME:
        moment = dt.datetime.fromtimestamp(plan.origin_ns // 10**9, tz=dt.timezone.utc)
        fraction = f".{plan.origin_ns % 10**9:09d}Z"
        timeline["origin_utc"] = moment.isoformat().replace("+00:00", fraction)
    return {
        "schema": SCHEMA,
        "gpuscope_version": __version__,
        "timeline": timeline,
        "sources": sources,
        "samplers": [_run_meta(run, plan) for run in plan.runs],
        "warnings": plan.warnings,
        "events": events,
    }


def _run_meta(run: _Run, plan: _Plan) -> dict[str, Any]:
    link = clocks.samplers_offset(plan.domain, run.clocks)
    return {
        "run_dir": str(run.path),
        "files": [s.path.name for s in run.samplers],
        "included": run.include_samplers,
        "why_not": run.why_not or None,
        "how": link.how if link else None,
        "offset_ns": link.offset_ns if link else None,
        "uncertainty_ns": link.uncertainty_ns if link else None,
        "boottime_minus_monotonic": {
            "offset_ns": run.clocks.boot_minus_mono.offset_ns,
            "uncertainty_ns": run.clocks.boot_minus_mono.uncertainty_ns,
            "how": run.clocks.boot_minus_mono.how,
        },
    }
