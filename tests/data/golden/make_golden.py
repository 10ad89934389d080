"""Write the golden expected summaries of every reference trace: an independent second opinion.

This script deliberately imports nothing from gpuscope: it reads each raw Kineto / Chrome-trace
JSON with the standard library, keeps every float as an exact `Decimal` (one reference trace has
epoch-µs timestamps with ns fractions that a float64 cannot hold) and counts in integer ns.
`tests/unit/analysis/test_golden.py` checks `gpuscope.analyze` against the files written here.

Usage (from the repository root):

    python tests/data/golden/make_golden.py [TRACE_DIR] [OUT_DIR]

TRACE_DIR defaults to the sibling checkout's `shared/reference/traces`, OUT_DIR to this folder.
Each `<trace file name>.json` holds schema `gpuscope.golden/1`; every time is an integer in ns.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from collections.abc import Iterable, Iterator
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

SCHEMA = "gpuscope.golden/1"
HERE = Path(__file__).resolve().parent
DEFAULT_TRACES = HERE.parents[2] / ".." / "shared" / "reference" / "traces"

# category as written by current / legacy Kineto -> what it is on the device timeline
GPU_KINDS = {
    "kernel": "kernels",
    "Kernel": "kernels",
    "gpu_memcpy": "memcpy",
    "Memcpy": "memcpy",
    "gpu_memset": "memset",
    "Memset": "memset",
}
# `gpu_user_annotation` spans lie over kernels on the GPU timeline: deliberately absent above.

Interval = tuple[int, int]


def to_ns(value: Any) -> int:
    """µs (int or exact Decimal) -> integer ns; more than 3 decimals round half to even."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        return 0
    return int((Decimal(value) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def load_events(path: Path) -> list[Any]:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    document = json.loads(raw, parse_float=Decimal)
    if isinstance(document, list):  # the bare-array form of the Chrome trace format
        return document
    events = document.get("traceEvents", [])
    return events if isinstance(events, list) else []


def gpu_events(events: Iterable[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for event in events:
        if isinstance(event, dict) and event.get("ph") == "X" and event.get("cat") in GPU_KINDS:
            yield GPU_KINDS[event["cat"]], event


def device_of(event: dict[str, Any]) -> int:
    """`args.device` when present, else the event's integer pid, else -1."""
    args = event.get("args")
    device = args.get("device") if isinstance(args, dict) else None
    for value in (device, event.get("pid")):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return -1


def memcpy_kind(name: str) -> str:
    """'Memcpy HtoD (Pageable -> Device)' -> 'HtoD'; anything else -> 'other'."""
    words = name.split()
    return words[1] if len(words) > 1 and words[0] == "Memcpy" else "other"


def union_length(intervals: list[Interval]) -> int:
    """Length of the union of half-open [start, end) intervals."""
    total = 0
    current_start, current_end = None, None
    for start, end in sorted(intervals):
        if current_end is None or start > current_end:
            if current_end is not None and current_start is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None and current_start is not None:
        total += current_end - current_start
    return total


def device_rows(intervals: dict[int, list[Interval]]) -> list[dict[str, int]]:
    rows = []
    for device in sorted(intervals):
        spans = intervals[device]
        first = min(start for start, _ in spans)
        last = max(end for _, end in spans)
        rows.append(
            {
                "id": device,
                "ops": len(spans),
                "busy_ns": union_length(spans),
                "first_start_ns": first,
                "last_end_ns": last,
                "span_ns": last - first,
            }
        )
    return rows


def summarise(events: list[Any]) -> dict[str, Any]:
    totals = {kind: {"count": 0, "time_ns": 0} for kind in ("kernels", "memcpy", "memset")}
    by_kind: dict[str, dict[str, int]] = {}
    memcpy_bytes = memcpy_without_bytes = 0
    intervals: dict[int, list[Interval]] = {}
    for kind, event in gpu_events(events):
        start, dur = to_ns(event.get("ts")), max(to_ns(event.get("dur")), 0)
        totals[kind]["count"] += 1
        totals[kind]["time_ns"] += dur
        intervals.setdefault(device_of(event), []).append((start, start + dur))
        if kind != "memcpy":
            continue
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        size = args.get("bytes")
        has_bytes = isinstance(size, int) and not isinstance(size, bool)
        memcpy_bytes += size if has_bytes else 0
        memcpy_without_bytes += 0 if has_bytes else 1
        row = by_kind.setdefault(
            memcpy_kind(str(event.get("name", ""))), {"count": 0, "time_ns": 0, "bytes": 0}
        )
        row["count"] += 1
        row["time_ns"] += dur
        row["bytes"] += size if has_bytes else 0
    devices = device_rows(intervals)
    return {
        "kernels": totals["kernels"],
        "memcpy": {
            **totals["memcpy"],
            "bytes": memcpy_bytes,
            "without_bytes": memcpy_without_bytes,
            "by_kind": dict(sorted(by_kind.items())),
        },
        "memset": totals["memset"],
        "devices": devices,
        "gpu_busy_ns": sum(row["busy_ns"] for row in devices),
    }


def golden(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    return {
        "schema": SCHEMA,
        "generator": "tests/data/golden/make_golden.py",
        "source": {
            "file": path.name,
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
        },
        **summarise(load_events(path)),
    }


def trace_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.endswith((".json", ".json.gz")))


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else DEFAULT_TRACES
    out = Path(argv[1]) if len(argv) > 1 else HERE
    if not folder.is_dir():
        print(f"error: {folder} is not a folder of reference traces", file=sys.stderr)
        return 2
    for path in trace_files(folder):
        summary = golden(path)
        target = out / f"{path.name}.json"
        target.write_text(json.dumps(summary, indent=1) + "\n")
        kernels = summary["kernels"]
        print(f"{target.name}: {kernels['count']} kernels, busy {summary['gpu_busy_ns']} ns")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
