"""The trace reader of two source trees, A and B, on the same files: `read_trace` in one process
per sample, the trees taking turns (so a shared machine's load falls on both alike), each process
reading the file `--reads` times and the first read (imports, caches) dropped. Prints the minimum
and median CPU and wall seconds per read of each tree (docs/performance.md, "the allocator's
events").

    git archive 6015199 src | tar -x -C /tmp/before
    python benchmarks/bench_read_ab.py /tmp/before/src src FILE... --rounds 15
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

PROBE = """
import json, sys, time
from gpuscope.trace.registry import read_trace
walls, cpus = [], []
for _ in range(int(sys.argv[2])):
    wall, cpu = time.perf_counter(), time.process_time()
    read_trace(sys.argv[1])
    walls.append(time.perf_counter() - wall)
    cpus.append(time.process_time() - cpu)
print(json.dumps({"wall": walls[1:], "cpu": cpus[1:]}))
"""


def sample(src: str, path: str, reads: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(src)}
    done = subprocess.run([sys.executable, "-c", PROBE, path, str(reads)], env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    found: dict[str, list[float]] = json.loads(done.stdout)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="source tree A (its src/ folder)")
    parser.add_argument("b", help="source tree B")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--reads", type=int, default=3, help="reads per process (first dropped)")
    args = parser.parse_args()
    for path in args.files:
        times: dict[str, dict[str, list[float]]] = {t: {"wall": [], "cpu": []} for t in "ab"}
        for i in range(args.rounds):
            for tree in "ab" if i % 2 == 0 else "ba":
                found = sample(getattr(args, tree), path, args.reads)
                for key in ("wall", "cpu"):
                    times[tree][key] += found[key]
        print(path, f"({os.getloadavg()[0]:.1f} load)")
        for tree in "ab":
            cpu, wall = times[tree]["cpu"], times[tree]["wall"]
            print(f"  {tree.upper()} {getattr(args, tree)}: CPU min {min(cpu):.3f} median "
                  f"{statistics.median(cpu):.3f} s; wall min {min(wall):.3f} median "
                  f"{statistics.median(wall):.3f} s; n={len(cpu)}")  # fmt: skip


if __name__ == "__main__":
    main()
