"""Probe: the CPU floor of sampling at 100 Hz from Python — a bare wakeup loop, then the same loop
with the NVML reads, then with the two CSV rows the samplers write (docs/performance.md).

    PYTHONPATH=src python benchmarks/probe_wakeup_cost.py --seconds 8 --backend nvml
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from gpuscope.samplers.backends import open_backend
from gpuscope.samplers.csvout import SamplerCsv

PERIOD_NS = 10_000_000


def loop(seconds: float, body: Callable[[], object]) -> None:
    """Wake every 10 ms on a fixed grid and run `body`."""
    start = time.monotonic_ns()
    for k in range(1, int(seconds * 1e9 / PERIOD_NS) + 1):
        now = time.monotonic_ns()
        if now < start + k * PERIOD_NS:
            time.sleep((start + k * PERIOD_NS - now) / 1e9)
        body()


def measure(label: str, seconds: float, body: Callable[[], object], thread: bool = False) -> None:
    before, wall0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    if thread:
        worker = threading.Thread(target=loop, args=(seconds, body))
        worker.start()
        worker.join()
    else:
        loop(seconds, body)
    after, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - wall0
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    print(f"{label:<34}{100 * cpu / wall:6.2f} % of one core")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--backend", default="nvml")
    args = parser.parse_args()
    backend = open_backend(args.backend)
    devices = list(range(backend.device_count()))
    out = Path(tempfile.mkdtemp(prefix="wakeup-probe-"))
    power_csv = SamplerCsv(out / "power.csv", "power", devices)
    vram_csv = SamplerCsv(out / "vram.csv", "vram", devices)

    def reads() -> None:
        backend.power(devices, energy=False)
        backend.vram(devices)

    def reads_and_rows() -> None:
        now = time.monotonic_ns()
        power_csv.row(time.time_ns(), now, backend.power(devices, energy=False))
        vram_csv.row(time.time_ns(), now, backend.vram(devices))

    measure("sleep only", args.seconds, lambda: None)
    measure("sleep only, in a thread", args.seconds, lambda: None, thread=True)
    measure("+ power read", args.seconds, lambda: backend.power(devices, energy=False))
    measure("+ power and memory reads", args.seconds, reads)
    measure("+ reads and 2 rows", args.seconds, reads_and_rows)
    measure("+ reads and 2 rows, in a thread", args.seconds, reads_and_rows, thread=True)
    backend.close()


if __name__ == "__main__":
    main()
