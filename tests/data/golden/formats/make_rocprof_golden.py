"""Write the golden numbers of every rocprof v1 reference output: an independent second opinion.

This script deliberately imports nothing from gpuscope: it reads each file of
`shared/reference/formats/rocprof-v1/` with the standard library only (csv, json, sqlite3) and
counts in integer ns. `tests/unit/trace/test_rocprof.py` checks the rocprof reader and
`gpuscope.analyze` against the files written here.

Rules (from rocprof's own tblextr.py, ROCm/rocprofiler):
* kernel trace / counter CSV: one kernel per row, [BeginNs, EndNs), device `gpu-id`;
* results.json: `X` events; pid 1 = copies (`Fill*` = memset), pid 6..517 = kernels (barrier
  packets excluded), pid 2/3 = HIP/HSA calls, pid 0 = ROCTX; times from args BeginNs/EndNs;
* results.db: tables OPS (kernels), COPY, HIP, HSA, rocTX; `Index` links a call to its ops;
* stats CSVs: per-name totals; before ROCm 6 names with commas are not quoted;
* a memcpy's bytes come from its launching call's `sizeBytes(N)` when that call launched only
  that memcpy (and no unlinked memcpy started during the call).

Usage (from the repository root):

    python tests/data/golden/formats/make_rocprof_golden.py [REFERENCE_DIR] [OUT_DIR]

Each output is `rocprof-v1__<dir>__<file>.json` (sub-folders joined by `__`), schema
`gpuscope.golden/1`, every time an integer in ns.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

SCHEMA = "gpuscope.golden/1"
HERE = Path(__file__).resolve().parent
DEFAULT_REFERENCE = HERE.parents[3] / ".." / "shared" / "reference" / "formats" / "rocprof-v1"
BARRIERS = {"<barrier packet>", "Unknown command type"}
LAUNCHING = re.compile(
    r"Launch|Memcpy|Memset|Synchronize|WaitEvent|StreamWait|StreamWrite|memory_async_copy"
)
SIZE = re.compile(r"\b(?:sizeBytes|size|count)\((\d+)\)")
KD = re.compile(r"(\s*\[clone \.kd\]|\.kd)$")

Op = dict[str, Any]  # kind, name, start, end, device, bytes


# -- summaries -------------------------------------------------------------------------------
def union_length(intervals: list[tuple[int, int]]) -> int:
    total, current = 0, None
    for start, end in sorted(intervals):
        if current is None or start > current[1]:
            if current is not None:
                total += current[1] - current[0]
            current = [start, end]
        else:
            current[1] = max(current[1], end)
    return total + (current[1] - current[0] if current is not None else 0)


def summarise(ops: list[Op]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("kernels", "memcpy", "memset"):
        mine = [op for op in ops if op["kind"] == kind]
        timed = [op for op in mine if op["start"] is not None]
        out[kind] = {
            "count": len(mine),
            "time_ns": sum(op["end"] - op["start"] for op in timed) if timed or not mine else None,
        }
    copies = [op for op in ops if op["kind"] == "memcpy"]
    out["memcpy"]["bytes"] = sum(op["bytes"] for op in copies if op["bytes"] is not None)
    out["memcpy"]["without_bytes"] = sum(op["bytes"] is None for op in copies)
    out["devices"] = devices(ops)
    out["gpu_busy_ns"] = sum(row["busy_ns"] for row in out["devices"])
    return out


def devices(ops: list[Op]) -> list[dict[str, int]]:
    spans: dict[int, list[tuple[int, int]]] = {}
    for op in ops:
        if op["start"] is not None:
            spans.setdefault(op["device"], []).append((op["start"], op["end"]))
    rows = []
    for device in sorted(spans):
        first = min(s for s, _ in spans[device])
        last = max(e for _, e in spans[device])
        busy = union_length(spans[device])
        span = {"first_start_ns": first, "last_end_ns": last, "span_ns": last - first}
        rows.append({"id": device, "ops": len(spans[device]), "busy_ns": busy, **span})
    return rows


# -- CSV files -------------------------------------------------------------------------------
def read_csv_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.reader(handle) if row]
    return [cell.strip() for cell in rows[0]], rows[1:]


def dispatch_csv(path: Path) -> dict[str, Any]:
    header, rows = read_csv_rows(path)
    col = {name: i for i, name in enumerate(header)}
    timed = "BeginNs" in col
    ops = []
    for row in rows:
        ops.append({
            "kind": "kernels",
            "name": KD.sub("", row[col["KernelName"]]),
            "start": int(row[col["BeginNs"]]) if timed else None,
            "end": int(row[col["EndNs"]]) if timed else None,
            "device": int(row[col["gpu-id"]]),
            "bytes": None,
        })  # fmt: skip
    summary = summarise(ops)
    summary["per_name"] = per_name(ops)
    return summary


def stats_csv(path: Path) -> dict[str, Any]:
    _, rows = read_csv_rows(path)
    totals: dict[str, list[int]] = {}
    for row in rows:
        name = ",".join(row[:-4])  # names with commas are not quoted before ROCm 6
        calls, total = int(row[-4]), int(row[-3])
        if path.name.endswith(".stats.csv") and "_stats" not in path.name:
            name = KD.sub("", name)
            if name in BARRIERS:
                continue
        totals[name] = [calls, total]
    kind = next((k for k in ("hip", "hsa", "copy") if path.name.endswith(f".{k}_stats.csv")), "")
    return {"totals": {"file_kind": kind or "kernels", "per_name": totals,
                       "count": sum(v[0] for v in totals.values()),
                       "time_ns": sum(v[1] for v in totals.values())}}  # fmt: skip


def per_name(ops: list[Op]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for op in ops:
        entry = out.setdefault(op["name"], [0, 0])
        entry[0] += 1
        entry[1] += op["end"] - op["start"] if op["start"] is not None else 0
    return out


# -- results.json ----------------------------------------------------------------------------
def results_json(path: Path) -> dict[str, Any]:
    try:
        events = json.loads(path.read_text())["traceEvents"]
    except (ValueError, KeyError, TypeError):
        return {"readable": False}
    ops, calls, marks, flows = [], [], [], []
    for event in events:
        if event.get("ph") in ("s", "t"):
            flows.append(event)
        if event.get("ph") != "X":
            continue
        pid, args = int(event["pid"]), event.get("args", {})
        item = {"name": event["name"], "pid": pid, "tid": int(event["tid"]),
                "ts": int(event["ts"]), "dur": int(event["dur"]),
                "start": int(args["BeginNs"]), "end": int(args["EndNs"]),
                "args": args.get("args", ""), "link": None}  # fmt: skip
        if pid == 0:
            marks.append(item)
        elif pid in (2, 3) and item["name"] != "hsa_dispatch":
            calls.append(item)
        elif pid == 1 or (6 <= pid < 518 and item["name"] not in BARRIERS):
            item["kind"] = (
                "kernels" if pid >= 6 else "memset" if "Fill" in item["name"] else "memcpy"
            )
            item["device"] = int(args.get("dev-id", args.get("gpu-id", pid - 6)))
            ops.append(item)
    link_flows(flows, calls, ops)
    sizes_from_calls(ops, calls)
    summary = summarise(ops)
    summary["per_name"] = per_name([op for op in ops if op["kind"] == "kernels"])
    summary["copies_per_name"] = per_name([op for op in ops if op["kind"] != "kernels"])
    summary["host_calls"] = {"count": len(calls), "per_name": per_name(calls),
                             "linked": sum(c["link"] is not None for c in calls)}  # fmt: skip
    summary["markers"] = {"count": len(marks)}
    return summary


def link_flows(flows: list[dict[str, Any]], calls: list[dict[str, Any]], ops: list[Op]) -> None:
    """tblextr draws an arrow from a launching call's middle (ROCm 5+) or end (ROCm 4), moved
    back to the op's start µs when later; arrows that were not moved are matched first."""
    starts = {f["id"]: f for f in flows if f["ph"] == "s"}
    pairs = [(starts[f["id"]], f) for f in flows if f["ph"] == "t" and f["id"] in starts]
    pairs.sort(key=lambda pair: pair[0]["ts"] == pair[1]["ts"])
    for s, t in pairs:
        op = next((o for o in ops if (o["pid"], o["tid"], o["ts"]) == (t["pid"], t["tid"], t["ts"])
                   and o["link"] is None), None)  # fmt: skip
        if op is None:
            continue
        lane = sorted((c for c in calls if (c["pid"], c["tid"]) == (s["pid"], s["tid"])
                       and LAUNCHING.search(c["name"]) and c["link"] is None),
                      key=lambda c: c["ts"])  # fmt: skip
        call = pick(lane, s["ts"], moved=s["ts"] == t["ts"])
        if call is not None:
            call["link"] = op["link"] = t["id"]


def pick(lane: list[dict[str, Any]], instant: int, moved: bool) -> dict[str, Any] | None:
    exact = [c for c in lane if instant in (c["ts"] + c["dur"] // 2, c["ts"] + c["dur"])]
    if exact:
        return exact[-1]
    if moved:
        later = [c for c in lane if c["ts"] + c["dur"] >= instant]
        return later[0] if later else None
    holding = [c for c in lane if c["ts"] <= instant <= c["ts"] + c["dur"]]
    return holding[-1] if holding else None


def sizes_from_calls(ops: list[Op], calls: list[dict[str, Any]]) -> None:
    by_link = {c["link"]: c for c in calls if c["link"] is not None}
    copies = [op for op in ops if op["kind"] == "memcpy"]
    loose = [op["start"] for op in copies if op["link"] is None]
    for op in ops:
        op["bytes"] = None
        call = by_link.get(op["link"])
        if op["kind"] != "memcpy" or call is None:
            continue
        alone = sum(o["link"] == op["link"] for o in copies) == 1
        quiet = not any(call["start"] <= s <= call["end"] for s in loose)
        found = SIZE.search(call["args"] or "")
        if found and alone and quiet:
            op["bytes"] = int(found.group(1))


# -- results.db ------------------------------------------------------------------------------
def results_db(path: Path) -> dict[str, Any]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    calls = {}
    for table in ("HIP", "HSA"):
        if table in tables:
            for begin, end, name, args, index in db.execute(
                f'SELECT BeginNs, EndNs, Name, args, "Index" FROM {table}'
            ):
                if name != "hsa_dispatch":
                    calls[(table, index)] = {"name": name, "start": begin, "end": end,
                                             "args": args}  # fmt: skip
    ops = []
    for table in ("OPS", "COPY"):
        if table not in tables:
            continue
        for begin, end, device, name, index in db.execute(
            f'SELECT BeginNs, EndNs, "dev-id", Name, "Index" FROM {table}'
        ):
            name = KD.sub("", name.strip('"'))
            if name in BARRIERS:
                continue
            kind = "kernels" if table == "OPS" else "memset" if "Fill" in name else "memcpy"
            ops.append({"kind": kind, "name": name, "start": begin, "end": end, "device": device,
                        "index": index, "bytes": None})  # fmt: skip
    for op in ops:
        call = calls.get(("HIP", op["index"]))
        shared = sum(o["index"] == op["index"] and o["kind"] == "memcpy" for o in ops)
        found = SIZE.search(call["args"] or "") if call else None
        if op["kind"] == "memcpy" and found and shared == 1:
            op["bytes"] = int(found.group(1))
    summary = summarise(ops)
    summary["per_name"] = per_name([op for op in ops if op["kind"] == "kernels"])
    summary["host_calls"] = {"count": len(calls)}
    summary["markers"] = {
        "count": db.execute("SELECT count(*) FROM rocTX").fetchone()[0] if "rocTX" in tables else 0
    }
    db.close()
    return summary


# -- files -----------------------------------------------------------------------------------
def kind_of(path: Path) -> str | None:
    head = path.read_bytes()[:4096]
    if head.startswith(b"SQLite format 3\x00"):
        return "db"
    text = head.decode("utf-8", "replace")
    first = text.splitlines()[0] if text else ""
    if '"process_name"' in text and path.suffix == ".json":
        return "json"
    if first.replace('"', "").startswith("Index,KernelName,"):
        return "dispatch"
    if first.replace('"', "") == "Name,Calls,TotalDurationNs,AverageNs,Percentage":
        return "stats"
    return None


READERS = {"dispatch": dispatch_csv, "stats": stats_csv, "json": results_json, "db": results_db}


def golden(path: Path, root: Path) -> dict[str, Any] | None:
    kind = kind_of(path)
    if kind is None:
        return None
    data = path.read_bytes()
    return {
        "schema": SCHEMA,
        "generator": "tests/data/golden/formats/make_rocprof_golden.py",
        "source": {
            "file": path.relative_to(root).as_posix(),
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
        },
        "kind": kind,
        **READERS[kind](path),
    }


def file_id(path: Path, root: Path) -> str:
    return "rocprof-v1__" + "__".join(path.relative_to(root).parts) + ".json"


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else DEFAULT_REFERENCE
    out = Path(argv[1]) if len(argv) > 1 else HERE
    if not root.is_dir():
        print(f"error: {root} is not the rocprof-v1 reference folder", file=sys.stderr)
        return 2
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        summary = golden(path, root)
        if summary is None:
            continue
        target = out / file_id(path, root)
        target.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
        print(f"{target.name}: {summary['kind']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
