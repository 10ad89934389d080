"""Benchmark: the power and VRAM samplers together, on all GPUs, at a fixed rate.

Targets (issue 4): at 100 Hz, < 2 % of one CPU core and < 1 ms drift over 60 s.

    python benchmarks/bench_samplers.py --backend nvml --seconds 60 --rate 0.01 --out bench-data/s
    python benchmarks/bench_samplers.py --backend fake --seconds 60 --naive-seconds 60

CPU = process CPU time (user + system, all threads) / wall time while the main thread sleeps, so
it is what the two sampler threads cost. Drift is read from the power CSV: row k's monotonic time
minus (first row + slot·period), where slot = round((t - first) / period); "final" is that of the
last scheduled row, "max" the largest over the run. `--naive-seconds` also runs a sleep-a-period
loop (madengine's way) on the same backend for comparison. Details go to --out/bench_samplers.json.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from gpuscope.samplers import Sampler
from gpuscope.samplers.backends import open_backend
from gpuscope.samplers.csvout import SamplerCsv


def main() -> int:
    args = _parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="bench-samplers-"))
    out.mkdir(parents=True, exist_ok=True)
    result = {"machine": _machine(), "args": vars(args), "read_cost": _read_cost(args.backend)}
    result["scheduled"] = _scheduled(args, out)
    if args.naive_seconds > 0:
        result["naive"] = _naive(args, out)
    (out / "bench_samplers.json").write_text(json.dumps(result, indent=2))
    _print_table(result)
    return 0


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=0.01, help="sampling period in seconds")
    parser.add_argument("--devices", default="all")
    parser.add_argument("--naive-seconds", type=float, default=0.0)
    parser.add_argument("--out", default="")
    return parser.parse_args()


def _scheduled(args: argparse.Namespace, out: Path) -> dict[str, object]:
    power_csv, vram_csv = out / "power.csv", out / "vram.csv"
    opts = {"devices": args.devices, "rate_s": args.rate, "backend": args.backend}
    with Sampler("power", power_csv, **opts) as power, Sampler("vram", vram_csv, **opts) as vram:
        cpu0, wall0, usage0 = time.process_time(), time.perf_counter(), _rusage()
        power.mark("workload_start")
        vram.mark("workload_start")
        time.sleep(args.seconds)
        power.mark("workload_end")
        vram.mark("workload_end")
        cpu, wall, usage = time.process_time() - cpu0, time.perf_counter() - wall0, _rusage()
    return {
        "backend": args.backend,
        "devices": power.devices,
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_pct_of_one_core": 100 * cpu / wall,
        "user_s": usage[0] - usage0[0],
        "sys_s": usage[1] - usage0[1],
        "power": {
            "stats": vars(power.stats),
            "drift": _drift(power_csv, args.rate, power.start_ns),
        },
        "vram": {"stats": vars(vram.stats), "drift": _drift(vram_csv, args.rate, vram.start_ns)},
        "warnings": power.warnings + vram.warnings,
    }


def _read_cost(backend_name: str, reads: int = 200) -> dict[str, float]:
    """Wall and CPU µs of one power and one VRAM read of all devices."""
    backend = open_backend(backend_name)
    devices = list(range(backend.device_count()))
    cost = {}
    for kind in ("power", "vram"):
        read = backend.power if kind == "power" else backend.vram
        wall0, cpu0 = time.perf_counter(), time.process_time()
        for _ in range(reads):
            read(devices)
        cost[f"{kind}_wall_us"] = (time.perf_counter() - wall0) / reads * 1e6
        cost[f"{kind}_cpu_us"] = (time.process_time() - cpu0) / reads * 1e6
    backend.close()
    return cost


def _naive(args: argparse.Namespace, out: Path) -> dict[str, object]:
    """madengine's loop: sample, then sleep one period (the period stretches by the sample time)."""
    backend = open_backend(args.backend)
    devices = list(range(backend.device_count()))
    path = out / "naive_power.csv"
    writer = SamplerCsv(path, "power", devices)
    cpu0, wall0 = time.process_time(), time.monotonic()
    end = wall0 + args.naive_seconds
    while time.monotonic() < end:
        writer.row(time.time_ns(), time.monotonic_ns(), backend.power(devices))
        time.sleep(args.rate)
    writer.close()
    backend.close()
    wall = time.monotonic() - wall0
    return {"cpu_s": time.process_time() - cpu0, "wall_s": wall, "drift": _drift(path, args.rate)}


def _drift(path: Path, period_s: float, start_ns: int | None = None) -> dict[str, float]:
    """Lateness of each scheduled row against its slot (start + k·period; slot 0 = the first row
    when start_ns is not known, as for the naive loop)."""
    with path.open(newline="") as handle:
        times = [int(r["monotonic_ns"]) for r in csv.DictReader(handle) if not r["mark"]]
    period_ns = period_s * 1e9
    start = times[0] if start_ns is None else start_ns
    late = [t - start - round((t - start) / period_ns) * period_ns for t in times]
    spacing = [b - a for a, b in itertools.pairwise(times)]
    return {
        "rows": len(times),
        "final_ms": late[-1] / 1e6,
        "p50_abs_ms": _percentile([abs(x) for x in late], 50) / 1e6,
        "p99_abs_ms": _percentile([abs(x) for x in late], 99) / 1e6,
        "max_abs_ms": max(abs(x) for x in late) / 1e6,
        "behind_schedule_ms": (times[-1] - times[0] - (len(times) - 1) * period_ns) / 1e6,
        "mean_period_ms": statistics.fmean(spacing) / 1e6 if spacing else 0.0,
    }


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _rusage() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


def _machine() -> dict[str, object]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "processor": platform.processor(),
    }


_WIDTHS = (16, 7, 10, 12, 12, 12, 12, 11, 8)


def _line(cells: list[object]) -> str:
    text = [f"{c:.3f}" if isinstance(c, float) else str(c) for c in cells]
    cells_text = zip(text[1:], _WIDTHS[1:], strict=True)
    return f"{text[0]:<{_WIDTHS[0]}}" + "".join(f"{t:>{w}}" for t, w in cells_text)


def _print_table(result: dict[str, object]) -> None:
    s = result["scheduled"]
    assert isinstance(s, dict)
    print(f"samplers: backend={s['backend']} devices={s['devices']} wall={s['wall_s']:.1f}s")
    cost = result["read_cost"]
    assert isinstance(cost, dict)
    print("one read of all devices: " + ", ".join(f"{k} {v:.1f}" for k, v in cost.items()))
    head = ["loop", "rows", "CPU%core", "final ms", "p50 ms", "p99 ms", "max ms", "behind ms"]
    print(_line([*head, "skipped"]))
    for kind in ("power", "vram"):
        d, st = s[kind]["drift"], s[kind]["stats"]
        cpu = s["cpu_pct_of_one_core"] if kind == "power" else "(same)"
        print(_line([f"scheduled {kind}", d["rows"], cpu, *_cols(d), st["skipped_slots"]]))
    naive = result.get("naive")
    if isinstance(naive, dict):
        cpu = 100 * naive["cpu_s"] / naive["wall_s"]
        print(_line(["naive power", naive["drift"]["rows"], cpu, *_cols(naive["drift"]), "-"]))
    print("CPU: both scheduled samplers together (naive: its one loop). final/p50/p99/max: |row")
    print("time - its slot| (scheduled: slot k = start + k*period). behind: last row - (first +")
    print("(rows-1)*period), the drift a sleep-a-period loop piles up.")


def _cols(d: dict[str, float]) -> list[float]:
    keys = ("final_ms", "p50_abs_ms", "p99_abs_ms", "max_abs_ms", "behind_schedule_ms")
    return [d[k] for k in keys]


if __name__ == "__main__":
    raise SystemExit(main())
