"""The timing harness behind `gpuscope.bench` and `gpuscope.compare`.

Pipeline: a `Timer` (how to time: device events with a guard kernel, graph replay, the
profiler, or the host wall clock) → `loop` (how often: calibrate, warm up, stop on a CI target
or a budget) → `Measurement` (raw samples + environment) → `stats` / `diagnostics` / `render`
(derived). `ab` runs two timers interleaved and gives a verdict with a bootstrap CI.

Nothing here imports torch at module level: GPU code loads it on first use.
"""

from gpuscope.timing._torch import gpu_torch, require_gpu_torch

__all__ = ["gpu_torch", "require_gpu_torch"]
