"""`ncu`: Nsight Compute per-kernel metrics, with `--clock-control none` by default so that
durations compare with free-running timings. The `.ncu-rep` report is exported in teardown
to CSV, both pages: `ncu_raw.csv` (one row per kernel) and `ncu_details.csv` (long format).
"""

from __future__ import annotations

from pathlib import Path

from gpuscope.tools.builtin._base import WrapperTool, run_logged
from gpuscope.tools.tool import RunContext

OUTPUT = "ncu_output"
PAGES = ("raw", "details")


class NcuTool(WrapperTool):
    output_dir = OUTPUT
    analyze_output = True

    def teardown(self, ctx: RunContext) -> None:
        super().teardown(ctx)
        ncu = self.prefix(ctx)[0]
        for report in self.reports(ctx, "*.ncu-rep"):
            for page in PAGES:
                self._export(ctx, ncu, report, page)

    def _export(self, ctx: RunContext, ncu: str, report: Path, page: str) -> None:
        out = ctx.run_dir / OUTPUT
        stem = "ncu" if report.stem == "report" else report.stem
        csv = out / f"{stem}_{page}.csv"
        argv = [ncu, "--import", str(report), "--csv", "--page", page]
        code = run_logged(argv, out / "export.log", ctx.base_env, stdout=csv)
        if code != 0:
            ctx.notes.warn(f"{self.name}: ncu --import --page {page} exited with {code}")
