"""rocprof: rocprofv3 with `--`, legacy fallback, madengine's wrapper form, relocated outputs."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from gpuscope.errors import ToolError
from gpuscope.tools.builtin.rocprof import RocprofTool
from gpuscope.tools.config import counters_dir, load_catalog, split_cmd
from gpuscope.tools.tool import RunContext


def _tool(name: str, cmd: str | None = None) -> RocprofTool:
    config = load_catalog()[name]
    if cmd is not None:
        config = replace(config, cmd=split_cmd(cmd, name), user_cmd=True)
    return RocprofTool(config)


def _only(ctx: RunContext, tmp_path: Path, *programs: str) -> RunContext:
    """A PATH holding just these fake programs (linked from tests/fakes/bin)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    fakes = Path(ctx.base_env["PATH"].split(os.pathsep)[0])
    for program in programs:
        (folder / program).symlink_to(fakes / program)
    return replace(ctx, base_env={**ctx.base_env, "PATH": str(folder)})


def test_default_is_rocprofv3_ending_with_double_dash(ctx: RunContext) -> None:
    argv = _tool("rocprof").prefix(ctx)
    assert argv == ("rocprofv3", "--runtime-trace", "--output-format", "csv",
                    "-d", f"{ctx.run_dir}/rocprof_output", "--")  # fmt: skip


def test_presets_point_at_the_packaged_counter_files(ctx: RunContext) -> None:
    argv = _tool("rocprofv3_compute").prefix(ctx)
    assert argv[argv.index("-i") + 1] == str(counters_dir() / "compute_bound.txt")


def test_legacy_rocprof_when_rocprofv3_is_absent(ctx: RunContext, tmp_path: Path) -> None:
    ctx = _only(ctx, tmp_path, "rocprof")
    argv = _tool("rocprof").prefix(ctx)
    assert argv[0] == "rocprof" and "--" not in argv
    assert argv[argv.index("-o") + 1] == f"{ctx.run_dir}/rocprof_output/results.csv"


def test_missing_rocprofv3_fails_with_the_fix(ctx: RunContext, tmp_path: Path) -> None:
    ctx = _only(ctx, tmp_path)
    with pytest.raises(ToolError) as error:
        _tool("rocprofv3_memory").check(ctx)
    assert str(error.value).startswith(
        "rocprofv3 not found on PATH: install ROCm's rocprofiler-sdk"
    )
    assert str(error.value).endswith("or drop the rocprofv3_memory tool")


def test_madengine_wrapper_cmd_is_understood(ctx: RunContext) -> None:
    cmd = (
        "bash ../scripts/common/tools/rocprof_wrapper.sh --hip-trace --kernel-trace "
        "-i ../scripts/common/tools/counters/compute_bound.txt -d ./rocprof_output --"
    )
    argv = _tool("rocprofv3_compute", cmd).prefix(ctx)
    assert argv == ("rocprofv3", "--hip-trace", "--kernel-trace",
                    "-i", str(counters_dir() / "compute_bound.txt"),
                    "-d", str(ctx.run_dir / "rocprof_output"), "--")  # fmt: skip


def test_double_dash_is_added_for_rocprofv3(ctx: RunContext) -> None:
    assert _tool("rocprofv3", "rocprofv3 --kernel-trace").prefix(ctx)[-1] == "--"


def test_an_empty_output_directory_is_reported(ctx: RunContext) -> None:
    tool = _tool("rocprof")
    with tool.open(ctx):
        pass
    assert ctx.notes.warnings == ["rocprof: rocprof wrote nothing under rocprof_output/"]
