"""The parsing floor: read one trace file and do ONE msgspec typed decode of all its events.

Run as its own process by `bench_analyze.py` (its wall time and peak RSS are measured from
outside). No analysis, no columns: whatever `gpuscope analyze` does costs at least this much.

    python benchmarks/_decode_floor.py FILE
"""

from __future__ import annotations

import gzip
import sys
import time

import msgspec


class Args(msgspec.Struct):
    correlation: int = -1
    external_id: int = msgspec.field(name="External id", default=-1)
    stream: int = -1
    device: int = -1
    bytes: int = -1


class Event(msgspec.Struct):
    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = 0
    tid: int | str = 0
    ts: float = 0.0
    dur: float = 0.0
    args: Args | None = None


class TraceFile(msgspec.Struct):
    traceEvents: list[Event]  # the key as Kineto writes it


def main(path: str) -> int:
    start = time.perf_counter()
    with open(path, "rb") as handle:
        raw = handle.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    trace = msgspec.json.decode(raw, type=TraceFile)
    seconds = time.perf_counter() - start
    print(f"{len(trace.traceEvents)} events decoded in {seconds:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
