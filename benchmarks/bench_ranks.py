"""Cross-rank analysis at scale: time and memory per rank as the number of ranks grows.

Inputs (made once under bench-data/ranks/, git-ignored) by benchmarks/make_rank_traces.py:

- `a100`: ranks made from HTA's real 2-rank A100 pair (rank r from rank r % 2; 8 ranks per
  "host", each host's clock 1.5 ms ahead of the previous one; rank 7's collectives start
  500 µs late; every start jittered by up to 50 µs). 10 collectives per rank, 2 steps, ~1.5 MB;
- `h200`: ranks made from the recorded H200 Llama prefill trace (no collectives: the analysis per
  rank is heavier, 11 k events, and the cross-rank part can only say the clocks cannot be
  aligned). ~3.6 MB each.

Each measurement is its own process: `gpuscope.ranks.api.analyze_job(paths, workers=W)` (read,
analyse and summarise every rank in a local process pool, then the cross-rank analysis), timed
inside; peak RSS of the driver (`RUSAGE_SELF`) and the highest peak any worker reported
(`Outcome.peak_rss_mb`: a worker's own `RUSAGE_SELF` after each rank).

    python benchmarks/bench_ranks.py                       # 16, 64, 256 ranks, both families
    python benchmarks/bench_ranks.py --ranks 256 --families a100 --workers 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_rank_traces as gen

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench-data" / "ranks"
SOURCES = {
    "a100": gen.PAIR,
    "h200": (gen.TRACES / "llama_prefill_h200.json.gz",),
}
MAX_RANKS = 256
STRAGGLER = 7  # the late rank: inside every measured subset (the first N ranks, N >= 8)

CHILD = """
import json, resource, sys, time
from gpuscope.ranks.api import analyze_outcomes, tasks_for
from gpuscope.ranks.engine import run_all
from gpuscope.ranks.work import run_task
paths, workers, engine = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
start = time.perf_counter()
peak = []
def outcomes():
    for outcome in run_all(run_task, tasks_for(paths, report=False), engine=engine,
                           workers=workers):
        peak.append(outcome.peak_rss_mb)
        yield outcome
done = list(outcomes())
mapped = time.perf_counter()
result = analyze_outcomes(done)
wall = time.perf_counter() - start
ranks = result.ranks or {}
late = [f["evidence"]["rank"] for f in ranks.get("findings", []) if f["id"] == "rank-straggler"]
print(json.dumps({
    "wall_s": wall,
    "reduce_s": wall - (mapped - start),
    "driver_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "worker_rss_mb": max(peak),
    "matched": (ranks.get("collectives") or {}).get("matched"),
    "unaligned": len((ranks.get("clock") or {}).get("unaligned_ranks", [])),
    "straggler": late[0] if late else None,
    "errors": len(result.errors),
}))
"""


# the cross-rank step alone on N rank summaries made in memory from real ones (the A100 pair's:
# 10 calls per rank; or the V100 rank's: 2,020 all-reduces): rank r is base r % len(bases) on
# host r // 8's clock (1.5 ms apart), starts jittered by up to 50 µs, rank 7's 500 µs late
REDUCE = """
import json, random, resource, sys, time
from dataclasses import replace
import numpy as np
from gpuscope.analysis.pipeline import analyze
from gpuscope.ranks._serialize import to_dict
from gpuscope.ranks.pipeline import analyse
from gpuscope.ranks.summary import summarize
from gpuscope.trace.registry import read_trace
base = [summarize(analyze(read_trace(p))) for p in json.loads(sys.argv[1])]
count = int(sys.argv[2])
rng = np.random.default_rng(0)
# one collective = call i of the same base on every rank: each rank arrives at its start plus a
# jitter (rank 7: + 500 µs more); everyone leaves when the last has arrived and 10 µs passed,
# or at the recorded end if later
arrive = {}
for b, s in enumerate(base):
    ranks_b = range(b, count, len(base))
    late = {r: rng.integers(0, 50_000, len(s.calls)) + (500_000 if r == 7 else 0) for r in ranks_b}
    last = np.max([s.calls.start + late[r] for r in ranks_b], axis=0)
    end = np.maximum(s.calls.end, last + 10_000)
    for r in ranks_b:
        arrive[r] = (s.calls.start + late[r], end)
ranks = []
for r in range(count):
    s = base[r % len(base)]
    shift = (r // 8) * 1_500_000
    start, end = arrive[r]
    calls = replace(s.calls, start=start + shift, end=end + shift)
    steps = replace(s.steps, start=s.steps.start + shift, end=s.steps.end + shift)
    ranks.append(replace(s, rank=r, world_size=count, calls=calls, steps=steps))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
begin = time.perf_counter()
part = to_dict(analyse(ranks))
wall = time.perf_counter() - begin
late = [f["evidence"]["rank"] for f in part["findings"] if f["id"] == "rank-straggler"]
print(json.dumps({"reduce_s": wall, "rss_before_mb": before,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "matched": part["collectives"]["matched"],
                  "unaligned": len(part["clock"]["unaligned_ranks"]),
                  "straggler": late[0] if late else None}))
"""


REDUCE_BASES = {
    "a100": gen.PAIR,
    "v100": (gen.TRACES / "hta__v100_profile_memory_nccl_rank1_BENCH.json.gz",),
}


def reduce_only(count: int, base: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    pair = json.dumps([str(p) for p in REDUCE_BASES[base]])
    argv = [sys.executable, "-c", REDUCE, pair, str(count)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def traces(family: str) -> list[Path]:
    folder = DATA / family
    paths = [folder / f"rank{r}.json" for r in range(MAX_RANKS)]
    if not all(p.is_file() for p in paths):
        gen.make(MAX_RANKS, folder, SOURCES[family], straggler=STRAGGLER, delay_us=Decimal(500))
    return paths


def measure(paths: list[Path], workers: int, engine: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    argv = [sys.executable, "-c", CHILD, json.dumps([str(p) for p in paths]), str(workers), engine]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, nargs="*", default=[16, 64, 256])
    parser.add_argument("--families", nargs="*", default=["a100", "h200"])
    parser.add_argument("--workers", type=int, nargs="+", default=[2])
    parser.add_argument("--engine", default="local")
    parser.add_argument("--out", type=Path, default=REPO / "bench-data" / "bench_ranks.json")
    parser.add_argument("--reduce-only", type=int, nargs="*", default=[],
                        help="time the cross-rank step alone on N in-memory ranks")  # fmt: skip
    parser.add_argument("--reduce-base", choices=sorted(REDUCE_BASES), default="a100")
    args = parser.parse_args()
    rows = []
    for count in args.reduce_only:
        row = {"family": f"{args.reduce_base}-summaries", "ranks": count,
               **reduce_only(count, args.reduce_base)}  # fmt: skip
        rows.append(row)
        print(f"reduce-only {args.reduce_base} {count} ranks: {row['reduce_s']:.2f} s, RSS "
              f"{row['rss_before_mb']:.0f} -> {row['rss_mb']:.0f} MB, matched {row['matched']}, "
              f"late {row['straggler']}, unaligned {row['unaligned']}", flush=True)  # fmt: skip
    header = "family ranks workers MB wall_s reduce_s ms/rank driver_MB worker_MB matched late load"
    print(header)
    for family in args.families:
        paths = traces(family)
        for count in args.ranks:
            chosen = paths[:count]
            size = sum(p.stat().st_size for p in chosen) / 1e6
            for workers in args.workers:
                load = os.getloadavg()[0]
                row = {"family": family, "ranks": count, "workers": workers, "mb": size,
                       "load": load, **measure(chosen, workers, args.engine),
                       "time": time.strftime("%Y-%m-%d %H:%M:%S")}  # fmt: skip
                rows.append(row)
                print(f"{family} {count} {workers} {size:.0f} {row['wall_s']:.2f} "
                      f"{row['reduce_s']:.3f} "
                      f"{1000 * float(row['wall_s']) / count:.1f} {row['driver_rss_mb']:.0f} "
                      f"{row['worker_rss_mb']:.0f} {row['matched']} {row['straggler']} "
                      f"{load:.2f}", flush=True)  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
