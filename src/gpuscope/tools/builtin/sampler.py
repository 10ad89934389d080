"""`gpu_info_power_profiler` / `gpu_info_vram_profiler`: background samplers.

madengine's env names configure them (`POWER_DEVICE`, `POWER_SAMPLING_RATE`, `POWER_DUAL_GCD`,
`VRAM_*`); they are sampler options, not variables for the command. The CSVs keep madengine's
names and headers; the workload's start and end are marked in them; after every tool has torn
down, one plot of power and VRAM over time is drawn (`gpuscope.samplers.plot_run`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gpuscope.errors import ToolError
from gpuscope.tools.config import ToolConfig
from gpuscope.tools.tool import Layer, RunContext


class SamplerTool:
    def __init__(self, config: ToolConfig) -> None:
        self.config = config
        self.name = config.name
        self.kind = config.options.get("measure", "power")
        if self.kind not in ("power", "vram"):
            raise ToolError(f"{self.name}: options.measure must be power or vram, not {self.kind}")

    def check(self, ctx: RunContext) -> None:
        options = _samplers().sampler_env_options(self.kind, self.config.env_vars)
        from gpuscope.samplers.backends import require_installed

        require_installed(options["backend"], ctx.which)

    @contextmanager
    def open(self, ctx: RunContext) -> Iterator[Layer]:
        samplers = _samplers()
        options = samplers.sampler_env_options(self.kind, self.config.env_vars)
        out = ctx.run_dir / samplers.sampler_output_name(self.kind, self.config.env_vars)
        sampler = samplers.Sampler(self.kind, out, **options)
        ctx.notes.defer("plot", lambda: samplers.plot_run(ctx.run_dir))
        try:
            with sampler:
                yield Layer(tool=self.name, on_mark=sampler.mark)
        finally:
            for warning in sampler.warnings:
                ctx.notes.warn(f"{self.name}: {warning}")


def _samplers() -> Any:
    try:
        import gpuscope.samplers as samplers
    except ImportError as error:
        raise ToolError(f"GPU samplers are unavailable in this install: {error}") from None
    return samplers
