"""Write the golden numbers of every rocprofv3 CSV / JSON reference file: an independent opinion.

This script deliberately imports nothing from gpuscope: it reads each CSV with the standard
library's csv module (each JSON with json and gzip), recognises the file by its header (first
key), and counts in integer ns (rocprofv3 writes integer ns on CLOCK_BOOTTIME).
`tests/unit/trace/test_rocprofv3.py` checks the reader and `gpuscope.analyze` against the files
written here.

Rules shared with the reader only through the format's documentation (formats.md §3):
* a device is the N of `Agent N` (or the bare integer of older files); in JSON the
  `logical_node_id` of the agent whose `id.handle` the record names;
* a kernel dispatch runs on its `Agent_Id`; a copy host->device or device->device on its
  destination agent, device->host on its source agent;
* a counter-collection file has one dispatch per distinct `Dispatch_Id`;
* busy time is the union of the kernel and copy intervals of a device; span = last end - first
  start.

Usage (from the repository root):

    python tests/data/golden/formats/make_rocprofv3_golden.py [FORMATS_DIR] [OUT_DIR]

FORMATS_DIR defaults to the sibling checkout's `shared/reference/formats`, OUT_DIR to this
folder. Each file is `rocprofv3__<dir>__<file name, dots as _>.json`, schema `gpuscope.golden/1`.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

SCHEMA = "gpuscope.golden/1"
HERE = Path(__file__).resolve().parent
DEFAULT_FORMATS = HERE.parents[3] / ".." / "shared" / "reference" / "formats"
ROOT = "rocprofv3"

# header cells that say what a file is (lower case), checked in this order
KINDS = (
    ("counter_collection", {"counter_name", "counter_value"}),
    ("kernel_trace", {"kind", "kernel_name", "start_timestamp"}),
    ("memory_copy", {"kind", "direction", "start_timestamp"}),
    ("api", {"domain", "function", "correlation_id"}),
    ("agent_info", {"node_id", "agent_type"}),
    ("stats", {"name", "calls", "totaldurationns", "minns"}),
)
AGENT = re.compile(r"^\s*(?:agent\s*)?(\d+)\s*$", re.IGNORECASE)
API_TABLES = ("hip_api", "hsa_api", "marker_api", "rccl_api", "rocdecode_api", "rocjpeg_api")
JSON_START = re.compile(r'^\{\s*"rocprofiler-sdk-tool"\s*:\s*\[')


def json_text(path: Path, size: int = -1) -> str:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as handle:
            raw = handle.read(size)
    return raw[:size].decode("utf-8", "replace") if size >= 0 else raw.decode("utf-8")


def kind_of(path: Path) -> str | None:
    """The kind of a rocprofv3 file (CSV header line, JSON first key), None for anything else."""
    if path.name.endswith((".json", ".json.gz")):
        return "json" if JSON_START.match(json_text(path, 4096).lstrip()) else None
    if path.suffix != ".csv":
        return None
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        header = next(csv.reader(handle), [])
    cells = {cell.strip().lower() for cell in header}
    for kind, wanted in KINDS:
        if wanted <= cells:
            return kind
    return None


def rows_of(path: Path) -> list[dict[str, str]]:
    """Rows keyed by lower-case header cell; blank lines skipped."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = [cell.strip().lower() for cell in next(reader)]
        return [
            dict(zip(header, row, strict=False)) for row in reader if any(c.strip() for c in row)
        ]


def agent(text: str) -> int | None:
    found = AGENT.match(text)
    return int(found.group(1)) if found else None


def direction_kind(direction: str) -> str:
    table = {"HOST_TO_DEVICE": "HtoD", "DEVICE_TO_HOST": "DtoH", "DEVICE_TO_DEVICE": "DtoD",
             "HOST_TO_HOST": "HtoH"}  # fmt: skip
    for text, kind in table.items():
        if direction.upper().endswith(text):
            return kind
    return "other"


def union_ns(intervals: list[tuple[int, int]]) -> int:
    total, end = 0, None
    for start, stop in sorted(intervals):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


def empty_golden(relative: str, path: Path, kind: str) -> dict[str, Any]:
    data = path.read_bytes()
    return {
        "schema": SCHEMA,
        "generator": "tests/data/golden/formats/make_rocprofv3_golden.py",
        "format": "rocprofv3",
        "kind": kind,
        "source": {
            "file": relative,
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
            # a gzipped file may be recompressed: the digest of what it holds identifies it too
            "content_sha256": hashlib.sha256(
                gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
            ).hexdigest(),
        },
        "kernels": {"count": 0, "time_ns": 0},
        "memcpy": {"count": 0, "time_ns": 0, "bytes": 0, "without_bytes": 0, "by_kind": {}},
        "memset": {"count": 0, "time_ns": 0},
        "devices": [],
        "gpu_busy_ns": 0,
        "host_calls": 0,
        "markers": 0,
    }


def kernels_of(golden: dict[str, Any], dispatches: list[dict[str, str]]) -> list[tuple]:
    """Fill the kernel numbers; returns (device, start, end) of the timed dispatches."""
    timed = [r for r in dispatches if r.get("start_timestamp") and r.get("end_timestamp")]
    events = [(agent(r["agent_id"]), int(r["start_timestamp"]), int(r["end_timestamp"]))
              for r in timed]  # fmt: skip
    per_name: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in dispatches:
        per_name[row["kernel_name"]][0] += 1
    for row, (_, start, end) in zip(timed, events, strict=True):
        per_name[row["kernel_name"]][1] += end - start
    golden["kernels"] = {
        "count": len(dispatches),
        "time_ns": sum(end - start for _, start, end in events) if timed else None,
    }
    golden["per_name"] = dict(per_name)
    return events


def copies_of(golden: dict[str, Any], rows: list[dict[str, str]]) -> list[tuple]:
    events, by_kind = [], {}
    for row in rows:
        kind = direction_kind(row["direction"])
        side = row["source_agent_id"] if kind == "DtoH" else row["destination_agent_id"]
        start, end = int(row["start_timestamp"]), int(row["end_timestamp"])
        events.append((agent(side) if kind in ("HtoD", "DtoH", "DtoD") else None, start, end))
        entry = by_kind.setdefault(kind, {"count": 0, "time_ns": 0})
        entry["count"] += 1
        entry["time_ns"] += end - start
    golden["memcpy"] = {"count": len(rows), "time_ns": sum(e - s for _, s, e in events),
                        "bytes": 0, "without_bytes": len(rows), "by_kind": by_kind}  # fmt: skip
    return events


def devices_of(golden: dict[str, Any], events: list[tuple]) -> None:
    by_device: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for device, start, end in events:
        if device is not None:
            by_device[device].append((start, end))
    rows = []
    for device in sorted(by_device):
        spans = by_device[device]
        first, last = min(s for s, _ in spans), max(e for _, e in spans)
        rows.append(
            {
                "id": device,
                "ops": len(spans),
                "busy_ns": union_ns(spans),
                "first_start_ns": first,
                "last_end_ns": last,
                "span_ns": last - first,
            }
        )
    golden["devices"] = rows
    golden["gpu_busy_ns"] = sum(r["busy_ns"] for r in rows)


def counters_of(golden: dict[str, Any], rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """Counter totals; returns one row per dispatch (the first of each Dispatch_Id)."""
    first: dict[str, dict[str, str]] = {}
    sums: dict[str, float] = defaultdict(float)
    for row in rows:
        first.setdefault(row.get("dispatch_id") or row["correlation_id"], row)
        sums[row["counter_name"]] += float(row["counter_value"])
    golden["counters"] = {"values": len(rows), "dispatches": len(first), "sum_by_name": sums}
    return list(first.values())


def api_of(golden: dict[str, Any], rows: list[dict[str, str]]) -> None:
    domains: dict[str, int] = defaultdict(int)
    for row in rows:
        domains[row["domain"]] += 1
    markers = [r for r in rows if r["domain"].upper().startswith("MARKER_CORE")]
    calls = [r for r in rows if not r["domain"].upper().startswith("MARKER_")]
    golden["host_calls"] = len(calls)
    golden["host_time_ns"] = sum(int(r["end_timestamp"]) - int(r["start_timestamp"])
                                 for r in calls)  # fmt: skip
    golden["markers"] = len(markers)
    golden["marks"] = sum(r["start_timestamp"] == r["end_timestamp"] for r in markers)
    golden["domains"] = dict(domains)


def json_of(golden: dict[str, Any], path: Path) -> list[tuple]:
    """Kernels, copies (with bytes), API calls and ROCTX ranges of every process of a JSON."""
    kernels: list[dict[str, str]] = []
    copies: list[dict[str, str]] = []
    calls: list[dict[str, str]] = []
    for process in json.loads(json_text(path))["rocprofiler-sdk-tool"]:
        nodes = {a["id"]["handle"]: a["logical_node_id"] for a in process.get("agents", [])}
        kinds = process.get("strings", {}).get("buffer_records", [])
        records = process.get("buffer_records", {})
        for record in records.get("kernel_dispatch", []):
            row = times(record)
            row["agent_id"] = str(nodes.get(record["dispatch_info"]["agent_id"]["handle"]))
            row["kernel_name"] = ""
            kernels.append(row)
        for record in records.get("memory_copy", []):
            row = times(record)
            row["direction"] = kinds[record["kind"]]["operations"][record["operation"]]
            row["source_agent_id"] = str(nodes.get(record["src_agent_id"]["handle"]))
            row["destination_agent_id"] = str(nodes.get(record["dst_agent_id"]["handle"]))
            row["bytes"] = str(record["bytes"])
            copies.append(row)
        for table in API_TABLES:
            for record in records.get(table, []):
                row = times(record)
                row["domain"] = kinds[record["kind"]]["kind"]
                calls.append(row)
    events = kernels_of(golden, kernels)
    del golden["per_name"]  # names need the kernel symbol table: the reader's test checks them
    events += copies_of(golden, copies)
    golden["memcpy"]["bytes"] = sum(int(c["bytes"]) for c in copies)
    golden["memcpy"]["without_bytes"] = 0
    api_of(golden, calls)
    return events


def times(record: dict[str, Any]) -> dict[str, str]:
    return {
        "start_timestamp": str(record["start_timestamp"]),
        "end_timestamp": str(record["end_timestamp"]),
    }


def golden(path: Path, formats: Path) -> dict[str, Any]:
    kind = kind_of(path)
    if kind is None:
        raise ValueError(f"{path}: not a rocprofv3 output")
    result = empty_golden(path.relative_to(formats).as_posix(), path, kind)
    if kind == "json":
        devices_of(result, json_of(result, path))
        return result
    rows = rows_of(path)
    events: list[tuple] = []
    if kind == "kernel_trace":
        events = kernels_of(result, rows)
    elif kind == "counter_collection":
        events = kernels_of(result, counters_of(result, rows))
    elif kind == "memory_copy":
        events = copies_of(result, rows)
    elif kind == "api":
        api_of(result, rows)
    elif kind == "agent_info":
        result["gpus"] = [{"id": int(r["logical_node_id"]), "name": r["product_name"],
                           "arch": r["name"], "compute_units": int(r["cu_count"])}
                          for r in rows if r["agent_type"] == "GPU"]  # fmt: skip
    else:
        result["totals"] = {"count": sum(int(r["calls"]) for r in rows),
                            "time_ns": sum(int(r["totaldurationns"]) for r in rows),
                            "per_name": {r["name"]: [int(r["calls"]), int(r["totaldurationns"])]
                                         for r in rows}}  # fmt: skip
    devices_of(result, events)
    return result


def golden_name(relative: str) -> str:
    """`rocprofv3/a/b.csv` -> `rocprofv3__a__b_csv.json`."""
    return "__".join(Path(relative).parts).replace(".", "_") + ".json"


def main(argv: list[str]) -> int:
    formats = Path(argv[1]) if len(argv) > 1 else DEFAULT_FORMATS
    out = Path(argv[2]) if len(argv) > 2 else HERE
    root = formats / ROOT
    if not root.is_dir():
        print(f"no {ROOT} reference folder under {formats}", file=sys.stderr)
        return 1
    written = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file() and kind_of(p) is not None):
        result = golden(path, formats)
        target = out / golden_name(result["source"]["file"])
        target.write_text(json.dumps(result, indent=1, sort_keys=False) + "\n")
        written += 1
    print(f"wrote {written} goldens to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
