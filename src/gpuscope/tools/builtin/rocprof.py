"""`rocprof` and madengine's `rocprofv3_*` presets.

`cmd` is a rocprofv3 command line; rocprofv3 needs `--` before the application, so one is
added if missing. A tool with `options.fallback_cmd` (the plain `rocprof` tool) uses that
legacy rocprof command when rocprofv3 is absent. madengine's own form,
`bash .../rocprof_wrapper.sh ARGS --`, is understood the same way, so its tools.json entries
and user `cmd`s work unchanged; relative `-d` directories land inside the run directory and
madengine's counter-file paths are served from gpuscope's packaged copies. Counter requests
(`-i FILE`, `--pmc`) are fitted to the GPU first (`_counter_check`).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from gpuscope.errors import ToolError
from gpuscope.tools.builtin._base import WrapperTool, expand_all, missing
from gpuscope.tools.builtin._counter_check import check_counters
from gpuscope.tools.config import counters_dir
from gpuscope.tools.tool import RunContext

_WRAPPER = "rocprof_wrapper.sh"
_OUTPUT_FLAGS = ("-d", "--output-directory")
_LEGACY_OUTPUT_FLAGS = ("-o", "--output-file")  # legacy rocprof: a path of its own
_INPUT_FLAGS = ("-i", "--input")


class RocprofTool(WrapperTool):
    output_dir = "rocprof_output"
    analyze_output = True

    def prefix(self, ctx: RunContext) -> tuple[str, ...]:
        argv = check_counters(self._choose(ctx), ctx, self.name).argv
        if Path(argv[0]).name == "rocprof":  # legacy rocprof takes the app right after options
            return _relocate(tuple(a for a in argv if a != "--"), ctx, _LEGACY_OUTPUT_FLAGS)
        return argv if argv[-1] == "--" else (*argv, "--")

    def check(self, ctx: RunContext) -> None:
        check_counters(self._choose(ctx), ctx, self.name)  # refuses counters the GPU lacks
        super().check(ctx)

    def setup(self, ctx: RunContext) -> None:
        super().setup(ctx)
        checked = check_counters(self._choose(ctx), ctx, self.name)
        if checked.write is not None:
            checked.write[0].parent.mkdir(parents=True, exist_ok=True)
            checked.write[0].write_text(checked.write[1], encoding="utf-8")
        for warning in checked.warnings:
            ctx.notes.warn(warning)

    def teardown(self, ctx: RunContext) -> None:
        super().teardown(ctx)
        out = ctx.run_dir / "rocprof_output"
        if out.is_dir() and not any(out.rglob("*")):
            ctx.notes.warn(f"{self.name}: rocprof wrote nothing under rocprof_output/")

    def _choose(self, ctx: RunContext) -> tuple[str, ...]:
        argv = _unwrap(expand_all(self.config.cmd, ctx), ctx)
        if not argv:
            raise ToolError(f"{self.name}: empty cmd; expected e.g. 'rocprofv3 --kernel-trace --'")
        if ctx.which(argv[0]) is not None:
            return _relocate(argv, ctx)
        fallback = tuple(shlex.split(self.config.options.get("fallback_cmd", "")))
        if fallback and ctx.which(fallback[0]) is not None:
            return _relocate(expand_all(fallback, ctx), ctx)
        raise missing(argv[0], self.config)


def _unwrap(argv: tuple[str, ...], ctx: RunContext) -> tuple[str, ...]:
    """madengine's `bash …/rocprof_wrapper.sh ARGS`: rocprofv3 if present, else rocprof."""
    if len(argv) < 2 or Path(argv[1]).name != _WRAPPER or Path(argv[0]).name not in ("bash", "sh"):
        return argv
    program = "rocprofv3" if ctx.which("rocprofv3") is not None else "rocprof"
    return (program, *argv[2:])


def _relocate(
    argv: tuple[str, ...], ctx: RunContext, outputs: tuple[str, ...] = _OUTPUT_FLAGS
) -> tuple[str, ...]:
    """Relative output paths go inside the run dir; madengine counter paths to our copies."""
    out = list(argv)
    for i in range(1, len(out)):
        flag, value = out[i - 1], out[i]
        if flag in outputs and not Path(value).is_absolute():
            out[i] = str(ctx.run_dir / Path(value))
        elif flag in _INPUT_FLAGS and not Path(value).exists():
            packaged = counters_dir() / Path(value).name
            out[i] = str(packaged) if packaged.is_file() else value
    return tuple(out)
