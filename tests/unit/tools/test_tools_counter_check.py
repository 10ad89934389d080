"""rocprof tools fit their counter requests to the GPU (GPUSCOPE_GPU_ARCH stands in for the
KFD topology): unsupported counters left out with a warning, nothing collectable refused
before the command starts, supported requests untouched."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gpuscope.counters.capability import read_pmc_lines
from gpuscope.errors import ToolError
from gpuscope.tools.builtin.rocprof import RocprofTool
from gpuscope.tools.config import counters_dir, load_catalog, split_cmd
from gpuscope.tools.tool import RunContext


def _tool(name: str, cmd: str | None = None) -> RocprofTool:
    config = load_catalog()[name]
    if cmd is not None:
        config = replace(config, cmd=split_cmd(cmd, name), user_cmd=True)
    return RocprofTool(config)


def _on(ctx: RunContext, arch: str) -> RunContext:
    return replace(ctx, base_env={**ctx.base_env, "GPUSCOPE_GPU_ARCH": arch})


def test_cdna_runs_the_packaged_compute_set_unchanged(ctx: RunContext) -> None:
    tool = _tool("rocprofv3_compute")
    argv = tool.prefix(_on(ctx, "gfx90a"))
    assert argv[argv.index("-i") + 1] == str(counters_dir() / "compute_bound.txt")


def test_rdna_trims_the_compute_set_and_says_so(ctx: RunContext) -> None:
    ctx = _on(ctx, "gfx1151")
    tool = _tool("rocprofv3_compute")
    tool.check(ctx)
    tool.setup(ctx)
    argv = tool.prefix(ctx)
    written = Path(argv[argv.index("-i") + 1])
    assert written.parent == ctx.run_dir / "rocprof_output"
    original = read_pmc_lines((counters_dir() / "compute_bound.txt").read_text())
    kept = read_pmc_lines(written.read_text())
    lacking = {"SQ_ACTIVE_INST_VALU", "SQ_INSTS_VALU_ADD_F32", "SQ_INSTS_VALU_MUL_F32",
               "SQ_INSTS_VALU_FMA_F32", "SQ_INSTS_VALU_TRANS_F32", "SQ_INSTS_VMEM_RD",
               "SQ_INSTS_VMEM_WR"}  # not in counter_defs.yaml for gfx11  # fmt: skip
    assert kept == [line for line in original if not set(line) & lacking]
    (warning,) = ctx.notes.warnings
    assert "gfx1151 cannot collect SQ_ACTIVE_INST_VALU" in warning


def test_nothing_collectable_is_refused_before_the_run(ctx: RunContext, tmp_path: Path) -> None:
    request = tmp_path / "flops.txt"
    request.write_text("pmc: SQ_INSTS_VALU_FMA_F32 SQ_INSTS_VALU_MFMA_MOPS_F16\n")
    tool = _tool("rocprofv3_compute", f"rocprofv3 --kernel-trace -i {request} -d out --")
    with pytest.raises(ToolError, match="gfx1201 has none of the counters"):
        tool.check(_on(ctx, "gfx1201"))


def test_inline_pmc_is_trimmed(ctx: RunContext) -> None:
    ctx = _on(ctx, "gfx1100")
    tool = _tool("rocprofv3", "rocprofv3 --pmc SQ_WAVES SQ_INSTS_MFMA --kernel-trace -d out --")
    tool.setup(ctx)
    argv = tool.prefix(ctx)
    assert argv[argv.index("--pmc") : argv.index("--kernel-trace")] == ("--pmc", "SQ_WAVES")
    assert any("cannot collect SQ_INSTS_MFMA" in w for w in ctx.notes.warnings)


def test_unknown_gpu_is_left_alone(ctx: RunContext) -> None:
    tool = _tool("rocprofv3", "rocprofv3 --pmc ANYTHING -d out --")
    argv = tool.prefix(_on(ctx, "gfx803"))
    assert argv[argv.index("--pmc") + 1] == "ANYTHING"
