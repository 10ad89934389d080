#!/usr/bin/env python3
"""How ≥ 1 ms GEMMs move from the burst to the sustained (power-capped) state, on the GPU.

For each case: idle (cool-down), then `gpuscope.bench` as it stands (the "before" figure), then a
back-to-back loop of SECONDS seconds: per-call time from CUDA events around chunks of ~20 ms
(no synchronisation between chunks except a queue bound of two chunks), and NVML readings every
~50 ms (SM clock, clock-event reasons, power, instant power, temperature). At the end, 300
profiled calls (kernel durations) while still loaded, then gpuscope.bench again on the hot GPU.

    PYTHONPATH=src python3 benchmarks/timing/probe_power_state.py --out $OUT --seconds 25

Writes OUT/probe_power_state.json (every series) and prints a short table last.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

import gpuscope


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def cases() -> dict[str, Callable[[], Any]]:
    """The GEMMs (random data, never zeros)."""
    bf, fp = torch.bfloat16, torch.float16
    a = torch.randn(8192, 8192, device="cuda", dtype=bf)
    b = torch.randn(8192, 8192, device="cuda", dtype=bf)
    x = torch.randn(2048, 8192, device="cuda", dtype=bf)
    w = torch.randn(8192, 8192, device="cuda", dtype=bf)
    p = torch.randn(16384, 8192, device="cuda", dtype=fp)
    q = torch.randn(8192, 8192, device="cuda", dtype=fp)

    def linear_x4() -> Any:
        for _ in range(4):
            out = F.linear(x, w)
        return out

    return {
        "mm_bf16_8192": lambda: torch.matmul(a, b),
        "linear_bf16_2048x8192x8192_x4": linear_x4,
        "mm_fp16_16384x8192x8192": lambda: torch.matmul(p, q),
        "linear_bf16_2048x8192x8192_x1": lambda: F.linear(x, w),
    }


class Nvml:
    def __init__(self) -> None:
        import pynvml

        self.nv = pynvml
        pynvml.nvmlInit()
        self.h = pynvml.nvmlDeviceGetHandleByIndex(0)
        self.reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or (
            pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
        )
        self.instant = getattr(pynvml, "NVML_FI_DEV_POWER_INSTANT", None)

    def static(self) -> dict[str, Any]:
        nv, h = self.nv, self.h
        out: dict[str, Any] = {}
        for key, call in (
            ("power_limit_w", lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000),
            ("max_sm_mhz", lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM)),
            (
                "default_app_sm_mhz",
                lambda: nv.nvmlDeviceGetDefaultApplicationsClock(h, nv.NVML_CLOCK_SM),
            ),
            ("app_sm_mhz", lambda: nv.nvmlDeviceGetApplicationsClock(h, nv.NVML_CLOCK_SM)),
            ("mem_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
            ("name", lambda: nv.nvmlDeviceGetName(h)),
            ("driver", lambda: nv.nvmlSystemGetDriverVersion()),
        ):
            try:
                out[key] = call()
            except Exception as error:  # record what this driver refuses
                out[key] = f"error: {error}"
        return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in out.items()}

    def read(self, t0: float) -> dict[str, Any]:
        nv, h = self.nv, self.h
        row: dict[str, Any] = {
            "t": round(time.perf_counter() - t0, 4),
            "sm": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
            "reasons": int(self.reasons(h)),
            "power_w": nv.nvmlDeviceGetPowerUsage(h) / 1000,
            "temp_c": nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
        }
        if self.instant is not None:
            try:
                value = nv.nvmlDeviceGetFieldValues(h, [self.instant])[0]
                if value.nvmlReturn == 0:
                    row["power_instant_w"] = value.value.uiVal / 1000
            except Exception:
                self.instant = None
        return row


def idle(nvml: Nvml, seconds: float) -> list[dict[str, Any]]:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    rows = []
    while time.perf_counter() - t0 < seconds:
        rows.append(nvml.read(t0))
        time.sleep(0.5)
    return rows


def saturate(fn: Callable[[], Any], nvml: Nvml, seconds: float, per_call_us: float) -> Any:
    """Back-to-back calls for `seconds`; per-call µs per ~20 ms chunk and NVML rows."""
    calls = max(1, round(20_000 / per_call_us))
    pool = [torch.cuda.Event(enable_timing=True) for _ in range(8)]
    chunks: list[tuple[float, float]] = []
    rows: list[dict[str, Any]] = []
    pending: list[tuple[float, Any, Any]] = []
    t0 = time.perf_counter()
    last_read = -1.0
    i = 0
    while time.perf_counter() - t0 < seconds:
        start, end = pool[(2 * i) % 8], pool[(2 * i + 1) % 8]
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        pending.append((time.perf_counter() - t0, start, end))
        i += 1
        if len(pending) > 2:
            t, s, e = pending.pop(0)
            e.synchronize()
            chunks.append((round(t, 4), s.elapsed_time(e) * 1000 / calls))
        now = time.perf_counter() - t0
        if now - last_read >= 0.05:
            rows.append(nvml.read(t0))
            last_read = now
    for t, s, e in pending:
        e.synchronize()
        chunks.append((round(t, 4), s.elapsed_time(e) * 1000 / calls))
    return {"calls_per_chunk": calls, "chunks": chunks, "nvml": rows}


def profiled(fn: Callable[[], Any], calls: int) -> float:
    """Median per-call kernel time (sum of kernel durations between markers) while loaded."""
    from torch.profiler import ProfilerActivity, profile

    per_call: list[float] = []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    kernels = sorted(
        (e.time_range.start, e.time_range.end)
        for e in prof.events()
        if e.device_type == torch.autograd.DeviceType.CUDA
    )
    total = sum(end - start for start, end in kernels)
    per_call.append(total / calls)
    return per_call[0]


def window(chunks: list[tuple[float, float]], lo: float, hi: float) -> float | None:
    vals = [v for t, v in chunks if lo <= t < hi]
    return statistics.median(vals) if vals else None


def run_case(name: str, fn: Callable[[], Any], nvml: Nvml, seconds: float) -> dict[str, Any]:
    log(f"== {name}")
    out: dict[str, Any] = {"idle": idle(nvml, 8.0)}
    before = gpuscope.bench(fn, name=name, mode="hot")
    out["gpuscope_before"] = {
        "median_us": before.median_us,
        "samples": len(before.samples_us),
        "calls": before.calls_per_sample,
        "elapsed_s": before.elapsed_s,
        "clocks": [[c.t_s, c.sm_mhz, c.reasons, c.power_w] for c in before.clocks],
    }
    log(f"  gpuscope before {before.median_us:.1f} µs ({before.elapsed_s:.2f} s)")
    sat = saturate(fn, nvml, seconds, before.median_us)
    out["saturate"] = sat
    out["profiled_us"] = profiled(fn, 300)
    after = gpuscope.bench(fn, name=name, mode="hot")
    out["gpuscope_after"] = {"median_us": after.median_us, "calls": after.calls_per_sample}
    ch = sat["chunks"]
    marks = [0, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 20, seconds]
    out["windows"] = {f"{lo}-{hi}": window(ch, lo, hi) for lo, hi in itertools.pairwise(marks)}
    log(f"  windows {out['windows']}")
    log(f"  profiled {out['profiled_us']:.1f}  after {after.median_us:.1f}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=25.0)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    nvml = Nvml()
    results: dict[str, Any] = {"device": nvml.static(), "torch": torch.__version__}
    log(results["device"])
    for name, fn in cases().items():
        if args.only and name not in args.only:
            continue
        results[name] = run_case(name, fn, nvml, args.seconds)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "probe_power_state.json").write_text(json.dumps(results, indent=1))
    print("case | gpuscope before | 0-0.05 s | 0.5-1 s | 2-5 s | last 5 s | profiled | after")
    for name, r in results.items():
        if not isinstance(r, dict) or "windows" not in r:
            continue
        w = r["windows"]
        last = window(r["saturate"]["chunks"], args.seconds - 5, args.seconds)
        cells = [
            r["gpuscope_before"]["median_us"],
            w.get("0-0.05"),
            w.get("0.5-1"),
            w.get("2-5"),
            last,
            r["profiled_us"],
            r["gpuscope_after"]["median_us"],
        ]
        print(name, "|", " | ".join("-" if c is None else f"{c:.1f}" for c in cells))


if __name__ == "__main__":
    main()
