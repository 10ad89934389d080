"""The built-in tools against the fake profilers and the real library logs."""

from __future__ import annotations

import csv
import os
import sqlite3
import sys
from pathlib import Path

from gpuscope.madengine.context import ToolRequest
from gpuscope.run.session import RunRequest, run
from gpuscope.tools.builtin.library import LibraryTraceTool
from gpuscope.tools.builtin.sampler import SamplerTool
from gpuscope.tools.config import load_catalog, resolve
from gpuscope.tools.host import HostInfo
from gpuscope.tools.tool import RunContext

MADENGINE_LIBRARY_HEADER = ["jobid", "created_date", "model", "library", "config", "calls"]


def _configs(*requests: ToolRequest):  # type: ignore[no-untyped-def]
    return resolve(list(requests), load_catalog())


def test_library_tracers_log_into_the_run_dir_and_write_the_csv(
    ctx: RunContext, reference: Path
) -> None:
    tool = LibraryTraceTool(_configs(ToolRequest("cublas_trace"), ToolRequest("miopen_trace")))
    with tool.open(ctx) as layer:
        destination = layer.env["CUBLAS_LOGDEST_DBG"]
        assert destination.startswith(str(ctx.run_dir))
        assert layer.tee == {"stderr": ctx.run_dir / "libtrace_stderr.log"}
        log = (reference / "formats" / "cublas-log" / "cublas_api.log").read_text()
        Path(destination.replace("%i", "4242")).write_text(log)  # as cuBLAS itself would
    with (ctx.run_dir / "library_trace.csv").open() as f:
        rows = list(csv.reader(f))
    assert rows[0][:6] == MADENGINE_LIBRARY_HEADER
    assert len(rows) > 1 and {r[3] for r in rows[1:]} == {"cublas"}
    assert all(r[0] == "r1" and r[2] == "app" for r in rows[1:])


def test_a_library_tool_env_var_overrides_the_collectors(ctx: RunContext) -> None:
    request = ToolRequest("nccl_trace", env_vars={"NCCL_DEBUG_SUBSYS": "INIT,COLL,P2P"})
    with LibraryTraceTool(_configs(request)).open(ctx) as layer:
        assert layer.env["NCCL_DEBUG_SUBSYS"] == "INIT,COLL,P2P"
        assert layer.env["NCCL_DEBUG"] == "INFO"
    assert any("no library calls were logged" in w for w in ctx.notes.warnings)


def test_sampler_writes_madengines_csv_with_the_workload_marked(ctx: RunContext) -> None:
    env = {"POWER_BACKEND": "fake", "POWER_SAMPLING_RATE": "0.01"}
    (config,) = _configs(ToolRequest("gpu_info_power_profiler", env_vars=env))
    with SamplerTool(config).open(ctx) as layer:
        assert layer.env == {} and layer.on_mark is not None
        layer.on_mark("workload_start")
        layer.on_mark("workload_end")
    with (ctx.run_dir / "gpu_info_power_profiler_output.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[:3] == ["time", "Power(Watt) GPU0", "Power(Watt) GPU1"]
    assert [r["mark"] for r in rows if r.get("mark")] == ["workload_start", "workload_end"]


def _run_with_fakes(tmp_path: Path, fake_path: str, *tools: str) -> Path:
    request = RunRequest(
        command=(sys.executable, "-c", "print('app ran')"),
        tools=tuple(_configs(*(ToolRequest(t) for t in tools))),
        output_dir=tmp_path / "runs",
    )
    result = run(request, env={**os.environ, "PATH": fake_path}, host=HostInfo(vendor=None))
    assert result.exit_code == 0 and result.manifest.warnings == []
    return result.run_dir


def test_nsys_and_ncu_reports_are_exported(tmp_path: Path, fake_path: str) -> None:
    run_dir = _run_with_fakes(tmp_path, fake_path, "nsys", "ncu")
    db = sqlite3.connect(run_dir / "nsys_output" / "report.sqlite")
    assert db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone() == (2,)
    raw = (run_dir / "ncu_output" / "ncu_raw.csv").read_text().splitlines()
    assert raw[0].startswith('"ID","Process ID"') and '"ns"' in raw[1]
    details = (run_dir / "ncu_output" / "ncu_details.csv").read_text()
    assert '"Metric Name","Metric Unit","Metric Value"' in details


def test_rpd_trace_is_converted_when_rpd2tracing_is_present(tmp_path: Path, fake_path: str) -> None:
    run_dir = _run_with_fakes(tmp_path, fake_path, "rpd")
    assert (run_dir / "rpd_output" / "trace.rpd").stat().st_size > 0
    assert (run_dir / "rpd_output" / "trace.json").read_text().startswith("[{}")
