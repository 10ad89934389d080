"""Library tracers (`rocblas_trace`, `cublaslt_trace`, `nccl_trace`, ...) -> `library_trace.csv`.

All library tools of one run share one collector (`gpuscope.libtrace.collect`): it sets the
libraries' own log-destination variables so that their logs land in the run directory (the
program's stdout stays untouched), and in teardown, also after a failure or a kill, parses them
into `library_trace.csv`. Tensile and MIOpen only print to stdout/stderr: for them the stream
is copied into the run directory while still passed through. A tool's `env_vars` are applied
on top of the collector's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from gpuscope.errors import ToolError
from gpuscope.tools.builtin._base import expand_all, placeholders
from gpuscope.tools.config import ToolConfig, expand
from gpuscope.tools.tool import Layer, RunContext


class LibraryTraceTool:
    def __init__(self, configs: Sequence[ToolConfig]) -> None:
        self.configs = tuple(configs)
        self.name = "+".join(c.name for c in configs)

    def check(self, ctx: RunContext) -> None:
        _collector_class()

    @contextmanager
    def open(self, ctx: RunContext) -> Iterator[Layer]:
        names = [c.name for c in self.configs]
        collector = _collector_class()(ctx.run_dir, names, jobid=ctx.run_id, model=ctx.model)
        env = {**collector.env(), **self._user_env(ctx)}
        tee = collector.tee_streams
        try:
            yield Layer(tool=self.name, argv=self._prefix(ctx), env=env, tee=tee)
        finally:
            collector.finish()
            for warning in collector.warnings:
                ctx.notes.warn(warning)

    def _user_env(self, ctx: RunContext) -> dict[str, str]:
        values = placeholders(ctx)
        return {k: expand(v, values) for c in self.configs for k, v in c.env_vars.items()}

    def _prefix(self, ctx: RunContext) -> tuple[str, ...]:
        user = [c for c in self.configs if c.user_cmd and c.cmd]
        return expand_all(user[0].cmd, ctx) if user else ()


def _collector_class() -> Any:
    try:
        from gpuscope.libtrace.collect import LibraryTraceCollector
    except ImportError as error:
        raise ToolError(f"library tracing is unavailable in this install: {error}") from None
    return LibraryTraceCollector
