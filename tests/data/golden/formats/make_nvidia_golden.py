"""Write the golden numbers of every NVIDIA Nsight reference output: an independent second opinion.

This script imports nothing from gpuscope. It reads each reference file with the standard
library only (sqlite3 for the nsys exports, csv + Decimal for `nsys stats` and `ncu --csv`) and
counts in integer ns: kernel count and time, memcpy count / time / bytes (by direction), memset
count / time, per-device busy time (union of kernel, memcpy and memset intervals) and span, and
for summaries and ncu pages what they hold (totals, counters, rules).
`tests/unit/trace/test_nsys.py` and `test_ncu.py` check the readers and `gpuscope.analyze`
against the files written here.

Usage (from the repository root):

    python tests/data/golden/formats/make_nvidia_golden.py [FORMATS_DIR] [OUT_DIR]

FORMATS_DIR defaults to the sibling checkout's `shared/reference/formats`, OUT_DIR to this
folder. Each `nsys__<file>.json` / `ncu__<file>.json` holds schema `gpuscope.golden/1`.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import sqlite3
import sys
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

SCHEMA = "gpuscope.golden/1"
HERE = Path(__file__).resolve().parent
DEFAULT_FORMATS = HERE.parents[3] / ".." / "shared" / "reference" / "formats"
NSYS_DIR = "nsys/vectoraddition-a100-nsys2022.2"
NSYS_SQLITE = (
    f"{NSYS_DIR}/report4.sqlite",
    f"{NSYS_DIR}/stats-by-nsys2025.3/va4_reexported_nsys2025.3.sqlite",
)
NSYS_CSV = tuple(
    f"{NSYS_DIR}/stats-by-nsys2025.3/va4_{report}.csv"
    for report in (
        "cuda_gpu_trace",
        "cuda_gpu_kern_sum",
        "cuda_api_sum",
        "cuda_gpu_mem_time_sum",
        "cuda_gpu_mem_size_sum",
        "cuda_kern_exec_trace",
    )
)
NCU_CSV = (
    *(
        f"ncu-csv/{name}.csv"
        for name in (
            "ncu_raw_metrics",
            "ncu_raw_default",
            "ncu_raw_gemm",
            "ncu_details_sol",
            "ncu_details_default_gemm",
            "ncu_details_sol_autounits_gemm",
        )
    ),
    "ncu-csv/ncu_log.txt",
)

# nsys's documented copyKind values ("SQLite Schema Event Values"); arrays are device memory
COPY_KIND = {
    1: "HtoD",
    2: "DtoH",
    3: "HtoD",
    4: "DtoH",
    5: "DtoD",
    6: "DtoD",
    7: "DtoD",
    8: "DtoD",
    9: "HtoH",
    10: "PtoP",
    11: "HtoD",
    12: "DtoH",
    13: "DtoD",
}
LABEL_KIND = {
    "Host-to-Device": "HtoD",
    "Device-to-Host": "DtoH",
    "Device-to-Device": "DtoD",
    "Host-to-Host": "HtoH",
    "Peer-to-Peer": "PtoP",
}
NS_PER_UNIT = {
    "ns": 1,
    "nsecond": 1,
    "us": 1000,
    "usecond": 1000,
    "ms": 10**6,
    "msecond": 10**6,
    "s": 10**9,
    "second": 10**9,
}

Interval = tuple[int, int]


# -- shared ---------------------------------------------------------------------------------
def union_length(intervals: list[Interval]) -> int:
    total, end = 0, None
    for lo, hi in sorted(intervals):
        if end is None or lo > end:
            total += hi - lo
            end = hi
        elif hi > end:
            total += hi - end
            end = hi
    return total


def device_summary(by_device: dict[int, list[Interval]]) -> list[dict[str, int]]:
    rows = []
    for device in sorted(by_device):
        spans = by_device[device]
        first, last = min(lo for lo, _ in spans), max(hi for _, hi in spans)
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


def source(path: Path, relative: str) -> dict[str, Any]:
    data = path.read_bytes()
    return {"file": relative, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def decimal(text: str) -> Decimal | None:
    try:
        value = Decimal(text.strip().replace(",", ""))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def to_int(value: Decimal) -> int:
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def empty_copies() -> dict[str, Any]:
    return {"count": 0, "time_ns": 0, "bytes": 0, "by_kind": {}}


def add_copy(copies: dict[str, Any], kind: str, dur: int, size: int) -> None:
    copies["count"] += 1
    copies["time_ns"] += dur
    copies["bytes"] += size
    entry = copies["by_kind"].setdefault(kind, {"count": 0, "time_ns": 0, "bytes": 0})
    entry["count"] += 1
    entry["time_ns"] += dur
    entry["bytes"] += size


# -- nsys SQLite export ---------------------------------------------------------------------
def nsys_sqlite(path: Path) -> dict[str, Any]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    by_device: dict[int, list[Interval]] = {}
    kernels = {"count": 0, "time_ns": 0}
    copies, memset = empty_copies(), {"count": 0, "time_ns": 0}
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        for start, end, device in db.execute(
            "SELECT start, end, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"
        ):
            kernels["count"] += 1
            kernels["time_ns"] += end - start
            by_device.setdefault(device, []).append((start, end))
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
        for start, end, device, size, kind in db.execute(
            "SELECT start, end, deviceId, bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"
        ):
            add_copy(copies, COPY_KIND.get(kind, "other"), end - start, size)
            by_device.setdefault(device, []).append((start, end))
    if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
        for start, end, device in db.execute(
            "SELECT start, end, deviceId FROM CUPTI_ACTIVITY_KIND_MEMSET"
        ):
            memset["count"] += 1
            memset["time_ns"] += end - start
            by_device.setdefault(device, []).append((start, end))
    api = {"count": 0, "time_ns": 0}
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        api["count"], api["time_ns"] = db.execute(
            "SELECT count(*), coalesce(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
        ).fetchone()
    syncs = 0
    if "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" in tables:
        syncs = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION").fetchone()[0]
    db.close()
    devices = device_summary(by_device)
    return {
        "kernels": kernels,
        "memcpy": copies,
        "memset": memset,
        "api": api,
        "syncs": syncs,
        "devices": devices,
        "gpu_busy_ns": sum(d["busy_ns"] for d in devices),
    }


# -- nsys stats CSV -------------------------------------------------------------------------
def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def nsys_gpu_trace(path: Path) -> dict[str, Any]:
    by_device: dict[int, list[Interval]] = {}
    kernels = {"count": 0, "time_ns": 0}
    copies, memset = empty_copies(), {"count": 0, "time_ns": 0}
    for row in csv_rows(path):
        start, dur = int(row["Start (ns)"]), int(row["Duration (ns)"])
        device = int(re.search(r"\((\d+)\)$", row["Device"]).group(1))  # type: ignore[union-attr]
        by_device.setdefault(device, []).append((start, start + dur))
        name = row["Name"]
        if name.startswith("[CUDA memcpy"):
            label = name.removeprefix("[CUDA memcpy").strip(" []").removeprefix("Unified ")
            size = to_int(Decimal(row["Bytes (MB)"]) * 10**6)  # MB = 10^6 B, 3 decimals
            add_copy(copies, LABEL_KIND.get(label, "other"), dur, size)
        elif name.startswith("[CUDA memset"):
            memset["count"] += 1
            memset["time_ns"] += dur
        else:
            kernels["count"] += 1
            kernels["time_ns"] += dur
    devices = device_summary(by_device)
    return {
        "kernels": kernels,
        "memcpy": copies,
        "memset": memset,
        "bytes_from_mb": True,
        "devices": devices,
        "gpu_busy_ns": sum(d["busy_ns"] for d in devices),
    }


def nsys_summary(path: Path, count_column: str, name_column: str) -> dict[str, Any]:
    rows = csv_rows(path)
    totals = {
        row[name_column]: {
            "count": int(row[count_column]),
            "time_ns": int(row["Total Time (ns)"]),
            "min_ns": int(row["Min (ns)"]),
            "max_ns": int(row["Max (ns)"]),
        }
        for row in rows
    }
    return {
        "totals": totals,
        "count": sum(t["count"] for t in totals.values()),
        "time_ns": sum(t["time_ns"] for t in totals.values()),
    }


def nsys_mem_size(path: Path) -> dict[str, Any]:
    sizes = {
        row["Operation"]: {
            "count": int(row["Count"]),
            "bytes": to_int(Decimal(row["Total (MB)"]) * 10**6),
        }
        for row in csv_rows(path)
    }
    return {"copy_bytes": sizes}


def nsys_exec_trace(path: Path) -> dict[str, Any]:
    rows = csv_rows(path)
    kernels = {"count": len(rows), "time_ns": sum(int(r["Kernel Dur (ns)"]) for r in rows)}
    api = {"count": len(rows), "time_ns": sum(int(r["API Dur (ns)"]) for r in rows)}
    by_device: dict[int, list[Interval]] = {}
    for row in rows:
        start = int(row["Kernel Start (ns)"])
        by_device.setdefault(int(row["DevId"]), []).append(
            (start, start + int(row["Kernel Dur (ns)"]))
        )
    devices = device_summary(by_device)
    return {
        "kernels": kernels,
        "api": api,
        "devices": devices,
        "gpu_busy_ns": sum(d["busy_ns"] for d in devices),
    }


def nsys_csv(path: Path) -> dict[str, Any]:
    name = path.name
    if name.endswith("cuda_gpu_trace.csv"):
        return nsys_gpu_trace(path)
    if name.endswith("cuda_gpu_kern_sum.csv"):
        return nsys_summary(path, "Instances", "Name")
    if name.endswith("cuda_api_sum.csv"):
        return nsys_summary(path, "Num Calls", "Name")
    if name.endswith("cuda_gpu_mem_time_sum.csv"):
        return nsys_summary(path, "Count", "Operation")
    if name.endswith("cuda_gpu_mem_size_sum.csv"):
        return nsys_mem_size(path)
    return nsys_exec_trace(path)


# -- ncu --csv ------------------------------------------------------------------------------
def ncu_rows(path: Path) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"'))
    return list(csv.reader(lines[start:]))


def ncu_page(path: Path) -> dict[str, Any]:
    rows = ncu_rows(path)
    header = rows[0]
    if "Metric Name" in header:
        return ncu_details(header, rows[1:])
    return ncu_raw(header, rows[1:])


def ncu_raw(header: list[str], rows: list[list[str]]) -> dict[str, Any]:
    units, kernels = rows[0], rows[1:]
    at = header.index("gpu__time_duration.sum")
    per_unit = NS_PER_UNIT[units[at]]
    durations = [to_int(Decimal(k[at].replace(",", "")) * per_unit) for k in kernels]
    metrics = [
        i
        for i, name in enumerate(header)
        if i > header.index("CC") and not name.startswith("device__attribute_")
    ]
    counters = sum(1 for k in kernels for i in metrics if decimal(k[i]) is not None)
    return {
        "layout": "raw",
        "kernels": {
            "count": len(kernels),
            "time_ns": sum(durations),
            "durations_ns": durations,
            "names": [k[header.index("Kernel Name")] for k in kernels],
        },
        "counters": counters,
        "rules": 0,
    }


def ncu_details(header: list[str], rows: list[list[str]]) -> dict[str, Any]:
    col = {name: i for i, name in enumerate(header)}
    order: list[str] = []
    names: dict[str, str] = {}
    durations: dict[str, int] = {}
    counters = rules = 0
    for row in rows:
        kernel = row[col["ID"]]
        if kernel not in names:
            order.append(kernel)
            names[kernel] = row[col["Kernel Name"]]
        metric = row[col["Metric Name"]] if len(row) > col["Metric Name"] else ""
        if not metric:
            rules += 1
            continue
        value = decimal(row[col["Metric Value"]])
        counters += value is not None
        if metric == "Duration" and value is not None:
            durations[kernel] = to_int(value * NS_PER_UNIT[row[col["Metric Unit"]]])
    times = [durations[k] for k in order]
    return {
        "layout": "details",
        "kernels": {
            "count": len(order),
            "time_ns": sum(times),
            "durations_ns": times,
            "names": [names[k] for k in order],
        },
        "counters": counters,
        "rules": rules,
    }


# -- main -----------------------------------------------------------------------------------
def golden(formats: Path, relative: str) -> tuple[str, dict[str, Any]]:
    path = formats / relative
    family = "ncu" if relative.startswith("ncu-csv/") else "nsys"
    if family == "ncu":
        body = ncu_page(path)
    elif path.suffix == ".sqlite":
        body = nsys_sqlite(path)
    else:
        body = nsys_csv(path)
    document = {
        "schema": SCHEMA,
        "generator": "tests/data/golden/formats/make_nvidia_golden.py",
        "source": source(path, relative),
        **body,
    }
    return f"{family}__{path.name}.json", document


def main(argv: list[str]) -> int:
    formats = Path(argv[1]) if len(argv) > 1 else DEFAULT_FORMATS
    out = Path(argv[2]) if len(argv) > 2 else HERE
    for relative in (*NSYS_SQLITE, *NSYS_CSV, *NCU_CSV):
        if not (formats / relative).exists():
            print(f"skipped (absent): {relative}", file=sys.stderr)
            continue
        name, document = golden(formats, relative)
        (out / name).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
