"""How much time `gpuscope run` adds around a command: `gpuscope run -- true` vs `true`.

    python benchmarks/bench_run_overhead.py [--repeat 30] [--json FILE]

Each variant is started as a fresh process (what a user pays), interleaved round-robin so that
machine noise hits all of them alike; the table gives the median and p90 wall time. Rows:
  true                       the command alone
  python -c pass             the interpreter's own start (a floor for any Python wrapper)
  gpuscope --version         gpuscope's CLI start
  gpuscope run -- true       the whole run: checks, run dir, manifest twice, spawn, wait
Target (docs/performance.md): gpuscope run -- true adds < 200 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
TARGET_MS = 200.0


def variants(out_dir: str) -> dict[str, list[str]]:
    true = shutil.which("true") or "/bin/true"
    gpuscope = [sys.executable, "-m", "gpuscope"]
    return {
        "true": [true],
        "python -c pass": [sys.executable, "-c", "pass"],
        "gpuscope --version": [*gpuscope, "--version"],
        "gpuscope run -- true": [*gpuscope, "run", "--quiet", "--output-dir", out_dir, "--", true],
    }


def measure(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1e3


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    with tempfile.TemporaryDirectory() as out_dir:
        runs = variants(out_dir)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for argv in runs.values():  # warm the page cache once
            measure(argv, env)
        for _ in range(args.repeat):
            for name, argv in runs.items():
                times[name].append(measure(argv, env))
    rows = {
        n: {"median_ms": statistics.median(t), "p90_ms": percentile(t, 0.9)}
        for n, t in times.items()
    }
    overhead = rows["gpuscope run -- true"]["median_ms"] - rows["true"]["median_ms"]
    result = {
        "benchmark": "run_overhead",
        "machine": {
            "platform": platform.platform(),
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
        },
        "repeat": args.repeat,
        "rows": rows,
        "overhead_ms": overhead,
        "target_ms": TARGET_MS,
        "meets_target": overhead < TARGET_MS,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'variant':24} {'median ms':>10} {'p90 ms':>8}")
    for name, row in rows.items():
        print(f"{name:24} {row['median_ms']:10.1f} {row['p90_ms']:8.1f}")
    verdict = "meets" if overhead < TARGET_MS else "MISSES"
    print(
        f"overhead of gpuscope run: {overhead:.1f} ms ({verdict} the < {TARGET_MS:.0f} ms target)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
