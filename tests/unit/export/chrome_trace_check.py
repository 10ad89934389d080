"""An independent checker of Chrome / Perfetto JSON trace files (no gpuscope import).

What a viewer (ui.perfetto.dev, chrome://tracing) needs to draw a file as intended:

- the file is JSON (gzip or not): an object with a `traceEvents` list, or a bare list;
- every event has the fields its phase needs (`ph`, `ts`, `pid`, `tid`, `name`, `dur`, `id`, ...),
  numbers where numbers are expected;
- `X` durations are ≥ 0; `B`/`E` are balanced per thread;
- after sorting by ts as the viewers do (stable: file order breaks ties), the slices of each
  thread nest: a slice that starts inside another ends inside it (else the viewer cuts or drops
  it);
- counter (`C`) values are finite numbers; no counter series has two values at one ts;
- flow (`s`/`t`/`f`) ids are paired: one start and at least one finish per (cat, name, id), each
  end inside a slice of its own thread, so that the viewer can bind the arrow.

Usage: `python chrome_trace_check.py TRACE.json[.gz]` prints the problems (exit 1) or a summary.
"""

from __future__ import annotations

import bisect
import gzip
import json
import math
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

PHASES = set("XBEiICsftMbenPOND")
MAX_ERRORS = 50


@dataclass
class Report:
    errors: list[str] = field(default_factory=list)
    phases: Counter[str] = field(default_factory=Counter)
    tracks: int = 0
    flows: int = 0
    counter_series: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    error_count: int = 0

    def error(self, message: str) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(message)

    @property
    def ok(self) -> bool:
        return self.error_count == 0


def load(path: str) -> Any:
    with open(path, "rb") as f:
        head = f.read(2)
    opener: Any = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def check(path: str) -> Report:
    report = Report()
    try:
        data = load(path)
    except (OSError, ValueError, EOFError) as error:
        report.error(f"not JSON: {error}")
        return report
    if isinstance(data, dict):
        events = data.get("traceEvents")
        report.metadata = {k: v for k, v in data.items() if k != "traceEvents"}
    else:
        events = data
    if not isinstance(events, list):
        report.error("no traceEvents list")
        return report
    check_events(events, report)
    return report


def check_events(events: list[Any], report: Report) -> None:
    tracks: dict[tuple[Any, Any], list[tuple[int, int, str, int, Any]]] = defaultdict(list)
    counters: dict[tuple[Any, str, str], list[tuple[int, Any]]] = defaultdict(list)
    flows: dict[tuple[Any, Any, Any], dict[str, list[tuple[int, Any, Any]]]] = defaultdict(
        lambda: {"s": [], "t": [], "f": []}
    )
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            report.error(f"event {index}: not an object")
            continue
        ph = event.get("ph")
        if not isinstance(ph, str) or ph not in PHASES:
            report.error(f"event {index}: unknown ph {ph!r}")
            continue
        report.phases[ph] += 1
        if not _fields(index, event, ph, report):
            continue
        ts = _ns(event.get("ts", 0))
        where = (event.get("pid"), event.get("tid"))
        if ph == "X":
            tracks[where].append((ts, index, "X", _ns(event["dur"]), event["name"]))
        elif ph in "BE":
            tracks[where].append((ts, index, ph, 0, event.get("name")))
        elif ph == "C":
            for key, value in event["args"].items():
                counters[(event["pid"], event["name"], key)].append((ts, value))
                if not _number(value):
                    report.error(f"event {index}: counter {event['name']}.{key} = {value!r}")
        elif ph in "stf":
            key = (event.get("cat"), event["name"], event["id"])
            flows[key][ph].append((ts, where, event.get("bp")))
    report.tracks = len(tracks)
    report.counter_series = len(counters)
    spans = {where: _check_track(where, items, report) for where, items in tracks.items()}
    _check_counters(counters, report)
    _check_flows(flows, spans, report)


def _fields(index: int, event: dict[str, Any], ph: str, report: Report) -> bool:
    """The fields the phase needs, with the right types."""
    need = {"pid", "tid"}
    if ph != "M":
        need.add("ts")
    if ph in "XBiICstfbenPOND":
        need.add("name")
    if ph == "X":
        need.add("dur")
    if ph in "stfbenOND":
        need.add("id")
    if ph == "C":
        need.add("args")
    if ph in "ben":
        need.add("cat")
    missing = sorted(k for k in need if k not in event)
    if ph == "E":
        missing = [k for k in missing if k != "name"]
    if missing:
        report.error(f"event {index} ({ph}): missing {', '.join(missing)}")
        return False
    for key in ("ts", "dur"):
        if key in event and not _number(event[key]):
            report.error(f"event {index} ({ph}): {key} is {event[key]!r}, not a number")
            return False
    if "dur" in event and event["dur"] < 0:
        report.error(f"event {index} ({ph}): negative dur {event['dur']}")
        return False
    for key in ("pid", "tid"):
        if not isinstance(event[key], (int, str)) or isinstance(event[key], bool):
            report.error(f"event {index} ({ph}): {key} is {event[key]!r}")
            return False
    if "name" in event and not isinstance(event["name"], str):
        report.error(f"event {index} ({ph}): name is {event['name']!r}")
        return False
    if ph == "C" and (not isinstance(event["args"], dict) or not event["args"]):
        report.error(f"event {index} (C): args must be a non-empty object")
        return False
    if ph in "iI" and event.get("s", "t") not in ("g", "p", "t"):
        report.error(f"event {index} ({ph}): scope {event.get('s')!r}")
        return False
    return True


def _check_track(
    where: tuple[Any, Any], items: list[tuple[int, int, str, int, Any]], report: Report
) -> list[tuple[int, int]]:
    """Nesting after a stable sort by ts; returns the [start, end] of every slice."""
    items.sort(key=lambda item: (item[0], item[1]))
    stack: list[tuple[int, Any]] = []  # (end ns, or -1 for an open B), name
    spans: list[tuple[int, int]] = []
    begins: list[tuple[int, Any]] = []
    for ts, index, ph, dur, name in items:
        while stack and stack[-1][0] >= 0 and stack[-1][0] <= ts:
            stack.pop()
        if ph == "X":
            end = ts + dur
            if stack and stack[-1][0] >= 0 and end > stack[-1][0]:
                report.error(
                    f"track {where}: {name!r} at {ts} ns ends at {end}, after the slice it "
                    f"starts in ({stack[-1][1]!r}, ends {stack[-1][0]})"
                )
            stack.append((end, name))
            spans.append((ts, end))
        elif ph == "B":
            stack.append((-1, name))
            begins.append((ts, name))
        else:
            while stack and stack[-1][0] >= 0:
                stack.pop()  # X slices inside the B end no later than its E
            if not stack:
                report.error(f"track {where}: E at {ts} ns (event {index}) without a B")
                continue
            stack.pop()
            spans.append((begins.pop()[0], ts))
    if begins:
        report.error(f"track {where}: {len(begins)} B event(s) never ended")
    return sorted(spans)


def _check_counters(
    counters: dict[tuple[Any, str, str], list[tuple[int, Any]]], report: Report
) -> None:
    """After sorting, a series must not hold two different values at one ts (ambiguous)."""
    for key, samples in counters.items():
        seen: dict[int, Any] = {}
        for ts, value in samples:
            if seen.setdefault(ts, value) != value:
                report.error(f"counter {key}: two values at {ts} ns ({seen[ts]}, {value})")
                break


def _check_flows(
    flows: dict[tuple[Any, Any, Any], dict[str, list[tuple[int, Any, Any]]]],
    spans: dict[tuple[Any, Any], list[tuple[int, int]]],
    report: Report,
) -> None:
    report.flows = len(flows)
    indexed = {where: _Spans(items) for where, items in spans.items()}
    for key, ends in flows.items():
        if len(ends["s"]) != 1 or not ends["f"]:
            report.error(f"flow {key}: {len(ends['s'])} start(s), {len(ends['f'])} finish(es)")
            continue
        for ph in "stf":
            for ts, where, _bind in ends[ph]:
                track = indexed.get(where)
                if track is None or not track.holds(ts):
                    report.error(f"flow {key}: its {ph} at {ts} ns is in no slice of {where}")


class _Spans:
    """The slices of one track, for "is ts inside a slice?" in O(log n)."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.starts = [start for start, _ in spans]
        self.max_end: list[int] = []
        for _, end in spans:
            self.max_end.append(max(end, self.max_end[-1]) if self.max_end else end)

    def holds(self, ts: int) -> bool:
        at = bisect.bisect_right(self.starts, ts)  # the slices starting at or before ts
        return at > 0 and self.max_end[at - 1] >= ts


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _ns(us: Any) -> int:
    return round(float(us) * 1000)


def main(argv: list[str]) -> int:
    failed = 0
    for path in argv:
        report = check(path)
        if report.ok:
            phases = ", ".join(f"{ph}: {n}" for ph, n in sorted(report.phases.items()))
            print(f"{path}: ok ({phases}; {report.tracks} tracks, {report.flows} flows, "
                  f"{report.counter_series} counter series)")  # fmt: skip
        else:
            failed += 1
            print(f"{path}: {report.error_count} problem(s)")
            for message in report.errors:
                print(f"  {message}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
