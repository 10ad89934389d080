"""Check the counters a rocprof / rocprofv3 command line asks for against this machine's GPU.

`-i FILE` (text `pmc:` lines) and `--pmc A B ...` are checked with `counters.capability`:
counters the GPU does not have are left out with a warning, lines that overfill a counter block
are split into passes, and a request with nothing collectable left is refused before the
command starts. The GPU's architecture comes from `GPUSCOPE_GPU_ARCH` in the run's environment,
else from the KFD topology (first AMD GPU); `GPUSCOPE_LIST_AVAIL=FILE` (saved `rocprofv3
--list-avail` output) replaces the packaged table. Unknown GPUs are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gpuscope.counters.capability import (
    Capability,
    capability_for,
    parse_list_avail,
    plan,
    rewrite_input,
)
from gpuscope.counters.metrics import normalise_arch
from gpuscope.errors import ToolError
from gpuscope.tools.tool import RunContext

INPUT_FLAGS = ("-i", "--input")
PMC_FLAG = "--pmc"
CHECKED_NAME = "gpuscope_counters.txt"  # the rewritten input file, in the run's output folder


@dataclass(frozen=True)
class Checked:
    """The command line to run, the input file to write first, and what changed."""

    argv: tuple[str, ...]
    write: tuple[Path, str] | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)


def check_counters(argv: tuple[str, ...], ctx: RunContext, tool: str) -> Checked:
    """`argv` with its counter request fitted to the GPU; ToolError when nothing is left."""
    if not any(a in INPUT_FLAGS or a == PMC_FLAG for a in argv):
        return Checked(argv)
    cap = _capability(ctx)
    if cap is None:
        return Checked(argv)
    out = list(argv)
    write: tuple[Path, str] | None = None
    warnings: list[str] = []
    for i, arg in enumerate(argv[:-1]):
        if arg in INPUT_FLAGS and Path(argv[i + 1]).suffix.lower() not in (
            ".json",
            ".yaml",
            ".yml",
        ):
            write = _input_file(argv[i + 1], cap, ctx, tool, warnings)
            if write is not None:
                out[i + 1] = str(write[0])
    if PMC_FLAG in argv:
        out = _inline(out, cap, tool, warnings)
    return Checked(tuple(out), write, tuple(warnings))


def _capability(ctx: RunContext) -> Capability | None:
    arch = ctx.base_env.get("GPUSCOPE_GPU_ARCH") or _host_arch(ctx)
    arch = normalise_arch(arch) if arch else None
    listing = ctx.base_env.get("GPUSCOPE_LIST_AVAIL")
    if listing and arch:
        try:
            found = parse_list_avail(Path(listing).read_text("utf-8", errors="replace"))
        except OSError as error:
            raise ToolError(f"GPUSCOPE_LIST_AVAIL={listing}: cannot read it ({error})") from None
        if arch in found:
            return found[arch]
    return capability_for(arch) if arch else None


def _host_arch(ctx: RunContext) -> str | None:
    from gpuscope.tools.host import detect_host

    host = detect_host(env=ctx.base_env, use_nvml=False)
    return next((g.arch for g in host.gpus if g.vendor == "AMD" and g.arch), None)


def _input_file(
    path: str, cap: Capability, ctx: RunContext, tool: str, warnings: list[str]
) -> tuple[Path, str] | None:
    try:
        text = Path(path).read_text("utf-8", errors="replace")
    except OSError:
        return None  # rocprof reports the missing file itself
    rewritten, result = rewrite_input(text, cap)
    if not result.passes and (result.dropped or result.split):
        raise ToolError(
            f"{tool}: {cap.arch} has none of the counters in {path} "
            f"({', '.join(result.dropped)}); see `gpuscope counters --list {cap.arch}`"
        )
    if not result.message():
        return None
    warnings.append(f"{tool}: {Path(path).name}: {result.message()} [{result.source}]")
    return ctx.run_dir / "rocprof_output" / CHECKED_NAME, rewritten


def _inline(argv: list[str], cap: Capability, tool: str, warnings: list[str]) -> list[str]:
    at = argv.index(PMC_FLAG)
    end = at + 1
    while end < len(argv) and not argv[end].startswith("-"):
        end += 1
    requested = [c for a in argv[at + 1 : end] for c in a.replace(",", " ").split()]
    result = plan(requested, cap)
    if not result.counters:
        raise ToolError(
            f"{tool}: {cap.arch} cannot collect any of --pmc {' '.join(requested)}; "
            f"see `gpuscope counters --list {cap.arch}`"
        )
    if len(result.passes) > 1:
        raise ToolError(
            f"{tool}: --pmc {' '.join(requested)} does not fit one pass on {cap.arch}; put "
            f"these lines in an input file (-i): {' / '.join(result.pmc_lines())}"
        )
    if result.dropped:
        warnings.append(f"{tool}: --pmc: {result.message()} [{result.source}]")
    return [*argv[: at + 1], *result.counters, *argv[end:]]
