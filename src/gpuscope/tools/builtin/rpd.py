"""`rpd`: rocmProfileData's tracer (`runTracer.sh -o FILE app`), writing `rpd_output/trace.rpd`
(SQLite). When `rpd2tracing.py` is on PATH the trace is also converted to Chrome JSON
(`trace.json`), as madengine's post-script does.
"""

from __future__ import annotations

import sys

from gpuscope.tools.builtin._base import WrapperTool, run_logged
from gpuscope.tools.tool import RunContext

OUTPUT = "rpd_output"
CONVERTER = "rpd2tracing.py"


class RpdTool(WrapperTool):
    output_dir = OUTPUT
    analyze_output = True

    def teardown(self, ctx: RunContext) -> None:
        super().teardown(ctx)
        out = ctx.run_dir / OUTPUT
        traces = self.reports(ctx, "*.rpd")
        if not traces:
            return
        converter = ctx.which(CONVERTER)
        if converter is None:
            ctx.notes.warn(f"{self.name}: {CONVERTER} not on PATH; kept {traces[0].name} only")
            return
        for trace in traces:
            argv = [sys.executable, converter, str(trace), str(trace.with_suffix(".json"))]
            code = run_logged(argv, out / "rpd2tracing.log", ctx.base_env)
            if code != 0:
                ctx.notes.warn(f"{self.name}: {CONVERTER} exited with {code}")
