"""GPU power and VRAM samplers (madengine's gpu_info_power_profiler / gpu_info_vram_profiler).

    >>> from gpuscope.samplers import Sampler, sampler_env_options, plot_run
    >>> opts = sampler_env_options("power", {"POWER_DEVICE": "all", "POWER_SAMPLING_RATE": "0.01"})
    >>> with Sampler("power", run_dir / "gpu_info_power_profiler_output.csv", **opts) as s:
    ...     s.mark("workload_start"); run(); s.mark("workload_end")
    >>> plot_run(run_dir)   # PNG of power and VRAM with the workload window shaded

Backends: NVML (nvidia-ml-py), amdsmi (Python bindings), rocm-smi (CLI), fake. Only what is used
is imported; matplotlib only by `plot_run`.
"""

from __future__ import annotations

from gpuscope.samplers.options import sampler_env_options, sampler_output_name
from gpuscope.samplers.plot import plot_run, plot_run_svg
from gpuscope.samplers.sampler import Sampler, SamplerStats

__all__ = [
    "Sampler",
    "SamplerStats",
    "plot_run",
    "plot_run_svg",
    "sampler_env_options",
    "sampler_output_name",
]
