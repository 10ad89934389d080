"""Measure the device's attainable compute and bandwidth once (cached per device), with the
harness's own `bench` (passed in: the harness measures peaks when asked for rates)."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from gpuscope.peaks import Measured
from gpuscope.timing.measurement import Environment, Measurement
from gpuscope.timing.throughput import PEAK_COPY_BYTES, PEAK_MATMUL_N, cached_peaks

Bench = Callable[..., Measurement]  # harness.bench


def measure_peaks(torch: ModuleType, env: Environment, bench: Bench) -> Measured:
    """bf16 N³ matmul on random data and a device-to-device copy, both timed in hot mode, in the
    burst state: a peak is the most the device attains (boost clocks), as a datasheet's is; a
    power-capped loop of such matmuls gets less (docs/bench.md, "Burst or sustained")."""
    n = PEAK_MATMUL_N
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    mm = bench(torch.matmul, a, b, mode="hot", state="burst", budget_s=0.5, env=env)
    del a, b
    src = torch.randint(0, 255, (PEAK_COPY_BYTES,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    cp = bench(dst.copy_, src, mode="hot", state="burst", budget_s=0.5, env=env)
    return Measured(
        device=env.device,
        tflops=2 * n**3 / (mm.median_us * 1e-6) / 1e12,
        gbps=2 * PEAK_COPY_BYTES / (cp.median_us * 1e-6) / 1e9,
        method=(
            f"hot medians, burst state: bf16 {n}³ matmul; "
            f"{PEAK_COPY_BYTES >> 20} MiB copy (read+write)"
        ),
    )


def device_peaks(torch: ModuleType, env: Environment, bench: Bench) -> Measured:
    """Cached peaks of `env`'s device, measured with `bench` on first use."""
    return cached_peaks(env, lambda: measure_peaks(torch, env, bench))
