"""Write the golden summaries of the AMD SQLite traces: an independent second opinion.

This script deliberately imports nothing from gpuscope. It reads every rocprofv3 rocpd database
(`*_results.db`), every rocmProfileData `.rpd` and every `rpd2tracing.py` JSON export found under
the reference formats folder with the standard library only (sqlite3 read-only, json with exact
Decimal µs), and counts in integer ns: kernels, memory copies (count, time, bytes, by direction),
memsets, host API calls, user markers, and per device the busy time (union of the kernel / copy /
memset intervals), first start, last end and span.

`tests/unit/trace/test_rocpd.py` and `test_rpd.py` check gpuscope's readers against the files
written here (and against this script's `summarize` run live on reference files that have no
committed golden).

Usage (from the repository root):

    python tests/data/golden/formats/make_sqlite_golden.py [FORMATS_DIR] [OUT_DIR]

FORMATS_DIR defaults to the sibling checkout's `shared/reference/formats`, OUT_DIR to this folder.
Each `<format>__<file id>.json` holds schema `gpuscope.golden/1`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from collections import defaultdict
from contextlib import closing
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote

SCHEMA = "gpuscope.golden/1"
HERE = Path(__file__).resolve().parent
DEFAULT_FORMATS = HERE.parents[3] / ".." / "shared" / "reference" / "formats"
ANNOTATION_ID_BIT = 1 << 31  # rpd_tracer writes markers and its own records in this id space
MARKER_CATEGORIES = ("MARKER_CORE_API", "MARKER_CORE_RANGE_API")

Interval = tuple[int, int]


# -- finding the inputs ------------------------------------------------------------------------
def inputs(root: Path) -> list[tuple[str, Path]]:
    """(format, path) of every reference file of the two SQLite formats and the JSON export."""
    found = [("rocpd", p) for p in sorted(root.glob("rocprofv3/**/*_results.db"))]
    found += [("rpd", p) for p in sorted(root.glob("rpd/*.rpd"))]
    found += [("rpd", p) for p in sorted(root.glob("rpd/*.json")) if is_rpd2tracing(p)]
    return found


def is_rpd2tracing(path: Path) -> bool:
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip()
    return head.startswith(b"[ {}") or head.replace(b" ", b"").startswith(b'{"traceEvents":[{}')


def file_id(fmt: str, path: Path, root: Path) -> str:
    """rpd/matmul_result.rpd -> rpd__matmul_result_rpd (the format folder is not repeated)."""
    parts = list(path.relative_to(root).parts)
    if parts[0] in ("rpd", "rocprofv3"):
        parts = parts[1:]
    return fmt + "__" + "__".join(parts).replace(".", "_")


# -- shared arithmetic -------------------------------------------------------------------------
def union_length(intervals: list[Interval]) -> int:
    total, current_start, current_end = 0, None, None
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


def direction(name: str) -> str:
    """'CopyHostToDevice' / 'MEMORY_COPY_HOST_TO_DEVICE' -> 'HtoD'; else 'other'."""
    key = name.upper().replace("_", "")
    for long, short in (
        ("HOSTTODEVICE", "HtoD"),
        ("DEVICETOHOST", "DtoH"),
        ("DEVICETODEVICE", "DtoD"),
        ("HOSTTOHOST", "HtoH"),
        ("PEERTOPEER", "PtoP"),
    ):
        if long in key:
            return short
    return "other"


def op_class(op_type: str) -> str | None:
    """What an RPD op type is on the device timeline (None: barriers / markers, not work)."""
    low = op_type.lower()
    if "kernel" in low or op_type == "Task":
        return "kernels"
    if "fill" in low or "memset" in low:
        return "memset"
    if "copy" in low or "memcpy" in low:
        return "memcpy"
    return None


class Summary:
    """Accumulates device ops (class, device, start, end, bytes, direction) and host counts."""

    def __init__(self) -> None:
        self.ops: list[tuple[str, int, int, int, int, str]] = []
        self.host_calls = 0
        self.markers = 0

    def add(
        self, cls: str, device: int, start: int, end: int, size: int = -1, kind: str = ""
    ) -> None:
        self.ops.append((cls, device, start, end, size, kind))

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for cls in ("kernels", "memcpy", "memset"):
            rows = [op for op in self.ops if op[0] == cls]
            out[cls] = {"count": len(rows), "time_ns": sum(op[3] - op[2] for op in rows)}
        copies = [op for op in self.ops if op[0] == "memcpy"]
        out["memcpy"]["bytes"] = sum(op[4] for op in copies if op[4] >= 0)
        out["memcpy"]["without_bytes"] = sum(1 for op in copies if op[4] < 0)
        out["memcpy"]["by_kind"] = by_kind(copies)
        out["devices"] = devices(self.ops)
        out["gpu_busy_ns"] = sum(d["busy_ns"] for d in out["devices"])
        out["host_calls"] = self.host_calls
        out["markers"] = self.markers
        return out


def by_kind(copies: list[tuple[str, int, int, int, int, str]]) -> dict[str, Any]:
    kinds: dict[str, dict[str, int]] = defaultdict(lambda: {"count": 0, "time_ns": 0, "bytes": 0})
    for _, _, start, end, size, kind in copies:
        row = kinds[kind]
        row["count"] += 1
        row["time_ns"] += end - start
        row["bytes"] += max(size, 0)
    return dict(sorted(kinds.items()))


def devices(ops: list[tuple[str, int, int, int, int, str]]) -> list[dict[str, int]]:
    per: dict[int, list[Interval]] = defaultdict(list)
    for _, device, start, end, _, _ in ops:
        per[device].append((start, end))
    rows = []
    for device, intervals in sorted(per.items()):
        first = min(s for s, _ in intervals)
        last = max(e for _, e in intervals)
        rows.append(
            {
                "id": device,
                "ops": len(intervals),
                "busy_ns": union_length(intervals),
                "first_start_ns": first,
                "last_end_ns": last,
                "span_ns": last - first,
            }
        )
    return rows


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)


# -- rocpd ---------------------------------------------------------------------------------------
def rocpd_summary(path: Path) -> dict[str, Any]:
    """Through the un-suffixed views (a merged database unions its runs there); every join also
    matches `guid`, as rocprofv3's own views do. A device is named by its agent's logical index
    (rocprofv3's `Agent N`); a copy runs on its GPU side (destination unless only the source is
    a GPU)."""
    summary = Summary()
    with closing(connect(path)) as db:
        agents = {
            (agent, guid): (logical, kind)
            for agent, guid, logical, kind in db.execute(
                "SELECT id, guid, logical_index, type FROM rocpd_info_agent"
            )
        }
        for agent, guid, start, end in db.execute(
            'SELECT agent_id, guid, "start", "end" FROM rocpd_kernel_dispatch'
        ):
            summary.add("kernels", agents[agent, guid][0], start, end)
        sql = (
            'SELECT M.guid, M."start", M."end", M.size, M.dst_agent_id, M.src_agent_id, S.string '
            "FROM rocpd_memory_copy M JOIN rocpd_string S ON S.id = M.name_id AND S.guid = M.guid"
        )
        for guid, start, end, size, dst, src, name in db.execute(sql):
            dst_gpu = agents[dst, guid][1] == "GPU"
            src_gpu = agents[src, guid][1] == "GPU"
            agent = dst if dst_gpu or not src_gpu else src
            summary.add("memcpy", agents[agent, guid][0], start, end, size, direction(name))
        summary.host_calls, summary.markers = rocpd_host_counts(db)
    return summary.result()


def rocpd_host_counts(db: sqlite3.Connection) -> tuple[int, int]:
    sql = (
        "SELECT S.string FROM rocpd_region R LEFT JOIN rocpd_event E ON E.id = R.event_id "
        "AND E.guid = R.guid LEFT JOIN rocpd_string S ON S.id = E.category_id AND S.guid = E.guid"
    )
    categories = [row[0] for row in db.execute(sql)]
    markers = sum(1 for c in categories if c in MARKER_CATEGORIES)
    sql = (
        "SELECT S.string FROM rocpd_sample P JOIN rocpd_event E ON E.id = P.event_id "
        "AND E.guid = P.guid JOIN rocpd_string S ON S.id = E.category_id AND S.guid = E.guid"
    )
    marks = sum(1 for (c,) in db.execute(sql) if c in MARKER_CATEGORIES)
    return len(categories) - markers, markers + marks


# -- RPD ---------------------------------------------------------------------------------------
def rpd_summary(path: Path) -> dict[str, Any]:
    summary = Summary()
    with closing(connect(path)) as db:
        sizes = copy_sizes(db)
        sql = (
            'SELECT O.id, O.gpuId, O."start", O."end", T.string, L.api_id FROM rocpd_op O '
            "JOIN rocpd_string T ON T.id = O.opType_id "
            "LEFT JOIN rocpd_api_ops L ON L.op_id = O.id"
        )
        for _, gpu, start, end, op_type, api in db.execute(sql):
            cls = op_class(op_type)
            if cls == "memcpy":
                summary.add(cls, gpu, start, end, sizes.get(api, -1), direction(op_type))
            elif cls is not None:
                summary.add(cls, gpu, start, end)
        sql = "SELECT A.id, S.string FROM rocpd_api A JOIN rocpd_string S ON S.id = A.apiName_id"
        for api_id, name in db.execute(sql):
            if name == "UserMarker":
                summary.markers += 1
            elif not (api_id & ANNOTATION_ID_BIT):
                summary.host_calls += 1
    return summary.result()


def copy_sizes(db: sqlite3.Connection) -> dict[int, int]:
    """Bytes of each copy API call: size, else width × height (2-D copies)."""
    sizes = {}
    for api, size, width, height in db.execute(
        "SELECT api_ptr_id, size, width, height FROM rocpd_copyapi"
    ):
        if isinstance(size, int) and size > 0:
            sizes[api] = size
        elif isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0:
            sizes[api] = width * height
    return sizes


# -- rpd2tracing JSON ------------------------------------------------------------------------
def us_to_ns(value: Any) -> int:
    return int(Decimal(str(value)) * 1000)


def json_summary(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text(), parse_float=Decimal)
    events = document["traceEvents"] if isinstance(document, dict) else document
    gpu_pids = {
        str(e["pid"])
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "process_name"
        and str(e.get("args", {}).get("name", "")).startswith("GPU")
    }
    summary = Summary()
    for event in events:
        if event.get("ph") != "X":
            continue
        desc = event.get("args", {}).get("desc", "")
        start = us_to_ns(event["ts"])
        end = start + us_to_ns(event["dur"])
        if str(event.get("pid")) in gpu_pids:
            cls = op_class(desc)
            if cls is not None:
                summary.add(cls, int(event["pid"]), start, end, -1, direction(desc))
        elif desc and desc == event.get("name"):
            summary.markers += 1
        elif "::" not in event["name"] and event["name"] != "hcc_activity_callback":
            summary.host_calls += 1
    summary.markers += sum(1 for e in events if e.get("ph") == "i")
    return summary.result()


# -- output --------------------------------------------------------------------------------------
def summarize(fmt: str, path: Path) -> dict[str, Any]:
    """The golden numbers of one file (schema gpuscope.golden/1, without the source block)."""
    if fmt == "rocpd":
        return rocpd_summary(path)
    return json_summary(path) if path.suffix == ".json" else rpd_summary(path)


def golden(fmt: str, path: Path, root: Path) -> dict[str, Any]:
    data = path.read_bytes()
    return {
        "schema": SCHEMA,
        "generator": "tests/data/golden/formats/make_sqlite_golden.py",
        "format": fmt,
        "source": {
            "file": path.relative_to(root).as_posix(),
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
        },
        **summarize(fmt, path),
    }


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else DEFAULT_FORMATS
    out = Path(argv[2]) if len(argv) > 2 else HERE
    if not root.is_dir():
        print(f"no reference formats folder at {root}", file=sys.stderr)
        return 2
    for fmt, path in inputs(root):
        target = out / f"{file_id(fmt, path, root)}.json"
        target.write_text(json.dumps(golden(fmt, path, root), indent=1, sort_keys=False) + "\n")
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
