"""How long `TraceFrame.kernels()` takes against the read of the same trace (issue 21.1: "1 M
kernels → DataFrame in about the time of the read").

    python benchmarks/make_big_csv.py --kernels 1000000      # bench-data/big_*_kernel_trace.csv
    python benchmarks/bench_frames.py bench-data/big_1010101_kernel_trace.csv --repeat 3

For each backend: the first `kernels()` (it classifies the kernel names and links every
dispatch to its launch, once per trace) and a second one (the conversion alone), each the median
of `--repeat` fresh TraceFrames; against the median read (`gpuscope.load`) of the file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any


def timed(fn: Any) -> tuple[float, Any]:
    begin = time.perf_counter()
    value = fn()
    return time.perf_counter() - begin, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import pandas  # noqa: F401 - imports are not the conversion
    import polars  # noqa: F401
    import pyarrow  # noqa: F401

    import gpuscope
    from gpuscope.frames import TraceFrame

    reads = []
    for _ in range(args.repeat):
        seconds, frame = timed(lambda: gpuscope.load(args.trace))
        reads.append(seconds)
    result: dict[str, Any] = {"read_s": round(statistics.median(reads), 3)}
    for backend in ("pandas", "arrow", "polars"):
        first, again = [], []
        for _ in range(args.repeat):
            fresh = TraceFrame(frame.trace)
            seconds, table = timed(lambda f=fresh, b=backend: f.kernels(backend=b))
            first.append(seconds)
            again.append(timed(lambda f=fresh, b=backend: f.kernels(backend=b))[0])
        result[backend] = {
            "first_s": round(statistics.median(first), 3),
            "again_s": round(statistics.median(again), 3),
            "rows": len(table),
        }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
