"""Write the golden numbers of the `.pftrace` inputs: an independent second opinion.

This script imports nothing from gpuscope nor perfetto. It decodes the Perfetto Trace with its
own reading of the protobuf wire format and the field numbers of `perfetto_trace.proto`
(Trace.packet = 1; TracePacket: timestamp 8, trusted_packet_sequence_id 10, track_event 11,
interned_data 12, sequence_flags 13; TrackEvent: category_iids 3, type 9, name_iid 10,
track_uuid 11, debug_annotations 4; InternedData: event_categories 1, event_names 2,
debug_annotation_names 3; DebugAnnotation: name_iid 1, uint_value 3, int_value 4,
string_value 6), pairs each slice begin with the next end on its track, and counts kernels
(`kernel_dispatch`, `KERNELS`) and copies (`memory_copy`, `MEM_COPIES`; bytes from
`copy_bytes`) in integer ns. `tests/unit/trace/test_pftrace.py` checks the reader against it.

    python tests/data/golden/formats/make_pftrace_golden.py [OUT_DIR]
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

SCHEMA = "gpuscope.golden/1"
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
INPUTS = ("rocprofv3_results.pftrace", "rocprofv2_output.pftrace")
KERNEL, COPY = {"kernel_dispatch", "KERNELS"}, {"memory_copy", "MEM_COPIES"}


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
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        wire = key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        else:
            value, pos = data[pos : pos + (8 if wire == 1 else 4)], pos + (8 if wire == 1 else 4)
        yield key >> 3, value


def _interned(data: bytes, tables: dict[int, dict[int, str]]) -> None:
    for number, entry in _fields(data):
        iid, name = 0, ""
        for key, raw in _fields(entry):
            if key == 1:
                iid = raw
            elif key == 2:
                name = raw.decode()
        tables[number][iid] = name


def slices(path: Path) -> list[dict[str, Any]]:
    strings: dict[int, dict[int, dict[int, str]]] = {}
    open_slices: dict[int, list[dict[str, Any]]] = defaultdict(list)
    done = []
    for _, packet in _fields(path.read_bytes()):
        fields = defaultdict(list)
        for key, raw in _fields(packet):
            fields[key].append(raw)
        sequence = fields[10][0] if fields[10] else 0
        if (fields[13] and fields[13][0] & 1) or sequence not in strings:
            strings[sequence] = {1: {}, 2: {}, 3: {}}
        for data in fields[12]:
            _interned(data, strings[sequence])
        if not fields[11]:
            continue
        event: dict[int, list[Any]] = defaultdict(list)
        for key, raw in _fields(fields[11][0]):
            event[key].append(raw)
        kind, track, ts = event[9][0], event[11][0], fields[8][0]
        if kind == 2:
            begun = open_slices[track].pop()
            begun["dur_ns"] = ts - begun["start"]
            done.append(begun)
        elif kind == 1:
            args = {}
            for annotation in event[4]:
                parts = dict(_fields(annotation))
                args[strings[sequence][3][parts[1]]] = parts.get(3, parts.get(4, parts.get(6)))
            category = strings[sequence][1][event[3][0]]
            name = strings[sequence][2][event[10][0]]
            open_slices[track].append({"cat": category, "name": name, "start": ts, "args": args})
    return done


def golden(path: Path) -> dict[str, Any]:
    found = slices(path)
    kernels = [s for s in found if s["cat"] in KERNEL]
    copies = [s for s in found if s["cat"] in COPY]
    data = path.read_bytes()
    return {
        "schema": SCHEMA,
        "generator": "tests/data/golden/formats/make_pftrace_golden.py",
        "source": {"file": f"pftrace/{path.name}", "sha256": hashlib.sha256(data).hexdigest(),
                   "bytes": len(data)},
        "kernels": {"count": len(kernels), "time_ns": sum(s["dur_ns"] for s in kernels)},
        "memcpy": {"count": len(copies), "time_ns": sum(s["dur_ns"] for s in copies),
                   "bytes": sum(s["args"].get("copy_bytes", 0) for s in copies)},
        "api_calls": sum(s["cat"].lower() in ("hip_api", "hsa_api") for s in found),
    }  # fmt: skip


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else HERE
    for name in INPUTS:
        target = out / f"pftrace__{name}.json"
        found = golden(REPO / "tests" / "data" / "pftrace" / name)
        target.write_text(json.dumps(found, indent=1) + "\n")
        print(f"wrote {target.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
