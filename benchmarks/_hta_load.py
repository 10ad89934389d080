"""HolisticTraceAnalysis's load of one trace file, for comparison (run in HTA's own venv).

HTA reads a folder of per-rank traces, so the file is linked into a temporary folder as
`rank-0.json`. Run as its own process by `bench_analyze.py`; prints the load time.

    /tmp/hta-venv/bin/python benchmarks/_hta_load.py FILE
"""

from __future__ import annotations

import os
import sys
import tempfile
import time


def main(path: str) -> int:
    from hta.trace_analysis import TraceAnalysis

    with tempfile.TemporaryDirectory() as folder:
        os.symlink(os.path.abspath(path), os.path.join(folder, "rank-0.json"))
        start = time.perf_counter()
        analysis = TraceAnalysis(trace_dir=folder)
        seconds = time.perf_counter() - start
    rows = len(analysis.t.get_trace(0))
    print(f"HTA loaded {rows} rows in {seconds:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
