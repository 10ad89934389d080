"""Work per call → TFLOP/s and GB/s, and the device's peaks (measured once, cached per device:
the cache is `gpuscope.peaks.measured`).

>>> transformer_flops(seq=2048, hidden=4096)  # one layer, forward
893353197568.0
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gpuscope.peaks import Measured, cached
from gpuscope.timing.measurement import Environment

PEAK_MATMUL_N = 8192  # bf16 N×N×N matmul for the compute peak
PEAK_COPY_BYTES = 1 << 30  # device-to-device copy for the bandwidth peak (read + write counted)


def transformer_flops(seq: int, hidden: int, layers: int = 1) -> float:
    """Forward FLOPs of dense transformer layers (one sequence), by term:

    QKV projections 3·2·S·H², attention scores 2·S²·H, scores × V 2·S²·H, output projection
    2·S·H², MLP with a 4H inner size 2·2·S·H·4H: 24·S·H² + 4·S²·H per layer.
    """
    s, h = float(seq), float(hidden)
    per_layer = 3 * 2 * s * h * h + 2 * s * s * h + 2 * s * s * h + 2 * s * h * h + 16 * s * h * h
    return layers * per_layer


def peaks_key(env: Environment) -> str:
    return "|".join(str(x) for x in (env.device, env.driver, env.runtime, env.torch))


def cached_peaks(
    env: Environment, measure: Callable[[], Measured], path: Path | None = None
) -> Measured:
    """Peaks of `env`'s device from the cache file, measuring (and storing) them on a miss."""
    return cached(peaks_key(env), measure, path)
