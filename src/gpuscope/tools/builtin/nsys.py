"""`nsys`: Nsight Systems timeline; the report is exported to SQLite, which `gpuscope analyze`
(and `nsys stats`, SQL tools) read; the run's `nsys_output/analysis.json` is its report.

The export runs in teardown, so a run that crashed or was interrupted still gets it when nsys
managed to write its report. Note that nsys stores the profiled process's whole environment
in the report (and the SQLite export): scrub both before sharing them.
"""

from __future__ import annotations

from gpuscope.tools.builtin._base import WrapperTool, run_logged
from gpuscope.tools.tool import RunContext

OUTPUT = "nsys_output"


class NsysTool(WrapperTool):
    output_dir = OUTPUT
    analyze_output = True

    def teardown(self, ctx: RunContext) -> None:
        super().teardown(ctx)
        out = ctx.run_dir / OUTPUT
        nsys = self.prefix(ctx)[0]
        for report in self.reports(ctx, "*.nsys-rep"):
            sqlite = report.with_suffix(".sqlite")
            argv = [nsys, "export", "--type=sqlite", "--force-overwrite=true",
                    f"--output={sqlite}", str(report)]  # fmt: skip
            code = run_logged(argv, out / "export.log", ctx.base_env)
            if code != 0:
                ctx.notes.warn(f"{self.name}: nsys export of {report.name} exited with {code}")
