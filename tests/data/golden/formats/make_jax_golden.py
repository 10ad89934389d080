"""Write the golden numbers of every JAX / XLA profile: an independent second opinion.

This script imports nothing from gpuscope nor xprof. It decodes the XSpace protobuf
(`*.xplane.pb`) with its own reading of the protobuf wire format and the schema in
`xla/tsl/profiler/protobuf/xplane.proto` (XSpace.planes = 1; XPlane: id 1, name 2, lines 3,
event_metadata 4, stat_metadata 5, stats 6; XLine: id 1, name 2, timestamp_ns 3, events 4;
XEvent: metadata_id 1, offset_ps 2, duration_ps 3, stats 4; XStat: metadata_id 1, then one of
double 2, uint64 3, int64 4, str 5, bytes 6, ref 7), and the trace-viewer JSON with json + gzip.
Times are counted in integer ns (ps / 1000 for the XSpace, Decimal µs x 1000 for the JSON).

Device work is what sits on a `/device:GPU:N` plane's (process's) `Stream #…` line (thread); an
event with `memcpy_details` (or, without `kernel_details`, a `Memcpy…` / `Copy…` name) is a
copy, one with `memset_details` (or a `Memset…` name) a memset, every other a kernel.
`tests/unit/trace/test_jax.py` checks the reader against the files written here.

Usage (from the repository root):

    python tests/data/golden/formats/make_jax_golden.py [FORMATS_DIR] [OUT_DIR]
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import struct
import sys
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

SCHEMA = "gpuscope.golden/1"
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
DEFAULT_FORMATS = REPO / ".." / "shared" / "reference" / "formats"
RECORDED = ("jax_step_h200.xplane.pb", "jax_step_h200.trace.json.gz",
            "jax_step_h200.perfetto_trace.json.gz")  # fmt: skip
REFERENCE = (
    "jax-xplane/mi300-conv-minimal-legacy/chi-mi300x-013.xplane.pb",
    "jax-xplane/mi300-conv-minimal-08/tw003.xplane.pb",
    "jax-xplane/te-fused-attn/934987a2fc2f.xplane.pb",
)
_GPU = re.compile(r"^/device:GPU:(\d+)$")


# -- protobuf wire format ------------------------------------------------------------------
def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def _fields(data: bytes) -> Any:
    """(field number, value) of a message: ints for varints, bytes for the rest."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield number, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _stat(data: bytes, names: dict[int, str]) -> tuple[str, Any]:
    key, value = -1, None
    for number, raw in _fields(data):
        if number == 1:
            key = _signed(raw)
        elif number == 2:
            value = struct.unpack("<d", raw)[0]
        elif number in (3, 4):
            value = _signed(raw) if number == 4 else raw
        elif number == 5:
            value = raw.decode("utf-8", "replace")
        elif number == 7:
            value = names.get(raw, "")
    return names.get(key, ""), value


def _entry(data: bytes) -> tuple[int, bytes]:
    """A map entry: (key, value message)."""
    key, value = 0, b""
    for number, raw in _fields(data):
        if number == 1:
            key = _signed(raw)
        elif number == 2:
            value = raw
    return key, value


def _name_of(data: bytes) -> str:
    for number, raw in _fields(data):
        if number == 2:
            return str(raw.decode("utf-8", "replace"))
    return ""


def xspace_events(path: Path) -> list[dict[str, Any]]:
    """Every event on a GPU plane's stream line: device, name, ns duration, stats."""
    found = []
    for number, plane in _fields(path.read_bytes()):
        if number != 1:
            continue
        name, lines, event_names, stat_names = "", [], {}, {}
        for key, raw in _fields(plane):
            if key == 2:
                name = raw.decode("utf-8", "replace")
            elif key == 3:
                lines.append(raw)
            elif key in (4, 5):
                ident, meta = _entry(raw)
                (event_names if key == 4 else stat_names)[ident] = _name_of(meta)
        device = _GPU.match(name)
        if not device:
            continue
        for line in lines:
            line_name, events = "", []
            for key, raw in _fields(line):
                if key == 2:
                    line_name = raw.decode("utf-8", "replace")
                elif key == 4:
                    events.append(raw)
            if not line_name.startswith("Stream #"):
                continue
            for event in events:
                meta_id, duration_ps, stats = 0, 0, {}
                for key, raw in _fields(event):
                    if key == 1:
                        meta_id = _signed(raw)
                    elif key == 3:
                        duration_ps = _signed(raw)
                    elif key == 4:
                        stat_name, value = _stat(raw, stat_names)
                        stats[stat_name] = value
                if duration_ps % 1000:
                    raise ValueError(f"{path}: a duration of {duration_ps} ps is not whole ns")
                found.append({"device": int(device.group(1)), "name": event_names.get(meta_id, ""),
                              "dur_ns": duration_ps // 1000, "args": stats})  # fmt: skip
    return found


def json_events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as handle:
        document = json.load(handle)
    events = document["traceEvents"] if isinstance(document, dict) else document
    processes, threads = {}, {}
    for event in events:
        if event.get("ph") == "M" and event.get("name") == "process_name":
            processes[event["pid"]] = event["args"]["name"]
        if event.get("ph") == "M" and event.get("name") == "thread_name":
            threads[(event["pid"], event["tid"])] = event["args"]["name"]
    found = []
    for event in events:
        device = _GPU.match(processes.get(event.get("pid"), ""))
        line = threads.get((event.get("pid"), event.get("tid")), "")
        if event.get("ph") != "X" or not device or not line.startswith("Stream #"):
            continue
        dur = Decimal(str(event["dur"])) * 1000
        found.append({"device": int(device.group(1)), "name": event["name"],
                      "dur_ns": int(dur), "args": event.get("args", {})})  # fmt: skip
    return found


def _kind(event: dict[str, Any]) -> str:
    args, name = event["args"], event["name"]
    plain = "kernel_details" not in args
    if "memcpy_details" in args or (plain and name.startswith(("Memcpy", "Copy"))):
        return "memcpy"
    if "memset_details" in args or (plain and name.startswith("Memset")):
        return "memset"
    return "kernel"


def summary(events: list[dict[str, Any]]) -> dict[str, Any]:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: {"count": 0, "time_ns": 0})
    devices: dict[str, dict[str, dict[str, int]]] = defaultdict(
        lambda: defaultdict(lambda: {"count": 0, "time_ns": 0})
    )
    copy_bytes, grids, ops = 0, 0, set()
    for event in events:
        kind = _kind(event)
        for table in (totals[kind], devices[str(event["device"])][kind]):
            table["count"] += 1
            table["time_ns"] += event["dur_ns"]
        size = re.search(r"\bsize:(\d+)", str(event["args"].get("memcpy_details", "")))
        copy_bytes += int(size.group(1)) if kind == "memcpy" and size else 0
        grids += kind == "kernel" and "grid:" in str(event["args"].get("kernel_details", ""))
        if kind == "kernel" and event["args"].get("hlo_op"):
            ops.add(event["args"]["hlo_op"])
    result = {kind: dict(totals[kind]) for kind in ("kernel", "memcpy", "memset")}
    result["memcpy"]["bytes"] = copy_bytes
    by_device = {d: {k: dict(v) for k, v in sorted(t.items())} for d, t in sorted(devices.items())}
    return {
        "kernels": result["kernel"], "memcpy": result["memcpy"], "memset": result["memset"],
        "by_device": by_device,
        "kernels_with_grid": grids, "hlo_ops": len(ops),
    }  # fmt: skip


def golden(path: Path, shown: str) -> dict[str, Any]:
    data = path.read_bytes()
    events = xspace_events(path) if path.name.endswith(".xplane.pb") else json_events(path)
    return {
        "schema": SCHEMA,
        "generator": "tests/data/golden/formats/make_jax_golden.py",
        "source": {"file": shown, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)},
        **summary(events),
    }


def main(argv: list[str]) -> int:
    formats = Path(argv[1]) if len(argv) > 1 else DEFAULT_FORMATS
    out = Path(argv[2]) if len(argv) > 2 else HERE
    inputs = [(REPO / "tests" / "data" / "recorded" / n, f"recorded/{n}") for n in RECORDED]
    inputs += [(formats / r, r) for r in REFERENCE if (formats / r).exists()]
    for path, shown in inputs:
        target = out / f"jax__{shown.replace('/', '__')}.json"
        target.write_text(json.dumps(golden(path, shown), indent=1, sort_keys=False) + "\n")
        print(f"wrote {target.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
