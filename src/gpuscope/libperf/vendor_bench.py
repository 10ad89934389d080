"""Vendor bench binaries: the exact command line for a config, a run with a timeout, one small
parser per binary's output.

- `rocblas-bench`: the logged `./rocblas-bench …` line as is (built from the fields for a
  rocBLAS profile entry); time = the `us` cell under the CSV header holding `rocblas-Gflops`.
- `hipblaslt-bench`: the logged `hipblaslt-bench …` line as is (built from the fields for a
  GEMM rocBLAS logged); time = the `us` cell under the header holding `hipblaslt-Gflops`
  (a `[0]:` prefix allowed).
- `MIOpenDriver`: the logged driver command, with `-t 1` (time) and `-V 0` (no CPU check)
  added when absent; time = `GPU Kernel Time Forward / Backward Data / Backward Weights Conv.
  Elapsed: T ms` of the config's direction (their sum for `-F 0`).
- nccl-tests / rccl-tests (`all_reduce_perf`, `all_gather_perf`, …): `-b S -e S -d TYPE -o OP
  -g NRANKS -n 20 -w 5 -c 0`; time = the out-of-place `time` (µs) of the row of size S.

They apply to what AMD libraries logged (rocBLAS, hipBLASLt, MIOpen; NVIDIA ships no bench
CLI for cuBLAS, cuBLASLt or cuDNN) and to every collective. A binary missing from PATH gives a
`not found` row; a crash, a non-zero exit, a timeout or an output without the time gives a
`failed: <reason>` row; neither stops the replay.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from gpuscope.libperf.configs import Comm, Config, Conv, Gemm, Opaque
from gpuscope.libperf.result import OK, Result, failed, one_line

ROCBLAS, HIPBLASLT, MIOPEN = "rocblas-bench", "hipblaslt-bench", "MIOpenDriver"
MODE = "binary mean"


class OutputError(Exception):
    """The binary ran but its output does not hold what the parser needs."""


@dataclass(frozen=True)
class Parsed:
    time_us: float
    tool_rate: str = ""


Parser = Callable[[str, Config], Parsed]


@dataclass(frozen=True)
class Command:
    """One binary with its arguments (an argv list, never a shell string)."""

    binary: str
    args: tuple[str, ...]
    parse: Parser
    note: str = ""

    def line(self, path: str | None = None) -> str:
        return shlex.join([path or self.binary, *self.args])


# ---------------------------------------------------------------------------------------------
# command lines


def commands_for(config: Config) -> list[Command] | str:
    """The vendor commands that replay this config, or why none applies (a skip reason)."""
    p = config.problem
    if isinstance(p, Comm):
        return [nccl_tests_command(p)] if p.nranks else "the log does not give the rank count"
    if not config.amd:
        return []
    if isinstance(p, Gemm):
        return [rocblas_command(config, p), hipblaslt_command(config, p)]
    if isinstance(p, Conv | Opaque) and "miopen" in config.texts:
        return [miopen_command(config.texts["miopen"], p)]
    if isinstance(p, Opaque) and p.library == "rocblas":
        return [Command(ROCBLAS, _after(p.config, ROCBLAS), parse_rocblas)]
    return []


def _after(text: str, binary: str) -> tuple[str, ...]:
    """The arguments that follow the binary's name in a logged command line."""
    tokens = text.split()
    at = next((i for i, t in enumerate(tokens) if t.rsplit("/", 1)[-1].startswith(binary)), -1)
    return tuple(tokens[at + 1 :])


_ROC_TYPES = {
    "f16": "f16_r", "bf16": "bf16_r", "f32": "f32_r", "tf32": "f32_r", "f64": "f64_r",
    "c32": "f32_c", "c64": "f64_c", "i8": "i8_r", "i32": "i32_r", "f8": "f8_r", "bf8": "bf8_r",
}  # fmt: skip


def rocblas_command(config: Config, g: Gemm) -> Command:
    """The logged bench line, else `-f gemm_ex` / `gemm_strided_batched_ex` from the fields."""
    text = config.texts.get("rocblas", "")
    if ROCBLAS in text:
        return Command(ROCBLAS, _after(text, ROCBLAS), parse_rocblas)
    t, ct = _ROC_TYPES.get(g.dtype, "f32_r"), _ROC_TYPES.get(g.compute_type, "f32_r")
    lda, ldb, ldc = _leading(g)
    batched = g.batch > 1
    sa, sb, sc = _batch_strides(g)

    def stride(name: str, value: int) -> list[str]:
        return [f"--stride_{name}", str(value)] if batched else []

    args = [
        "-f", "gemm_strided_batched_ex" if batched else "gemm_ex",
        "--transposeA", g.trans_a, "--transposeB", g.trans_b,
        "-m", str(g.m), "-n", str(g.n), "-k", str(g.k), "--alpha", "1",
        "--a_type", t, "--lda", str(lda), *stride("a", sa),
        "--b_type", t, "--ldb", str(ldb), *stride("b", sb),
        "--beta", "1" if config.accumulate else "0",
        "--c_type", t, "--ldc", str(ldc), *stride("c", sc),
        "--d_type", t, "--ldd", str(ldc), *stride("d", sc),
        *(["--batch_count", str(g.batch)] if batched else []),
        "--compute_type", ct,
    ]  # fmt: skip
    note = "built from the logged fields" + (" (tf32 run as f32)" if g.dtype == "tf32" else "")
    return Command(ROCBLAS, tuple(args), parse_rocblas, note)


_LT_COMPUTE = {"tf32": "xf32_r", "f64": "f64_r", "i8": "i32_r", "i32": "i32_r"}


def hipblaslt_command(config: Config, g: Gemm) -> Command:
    """The logged bench line, else one built from the fields (bias / activation epilogues too)."""
    text = config.texts.get("hipblaslt", "")
    if HIPBLASLT in text:
        return Command(HIPBLASLT, _after(text, HIPBLASLT), parse_hipblaslt)
    t = _ROC_TYPES.get(g.dtype, "f32_r")
    lda, ldb, ldc = _leading(g)
    sa, sb, sc = _batch_strides(g)
    args = [
        "--api_method", "c", "-m", str(g.m), "-n", str(g.n), "-k", str(g.k),
        "--lda", str(lda), "--ldb", str(ldb), "--ldc", str(ldc), "--ldd", str(ldc),
        "--stride_a", str(sa), "--stride_b", str(sb), "--stride_c", str(sc),
        "--stride_d", str(sc), "--alpha", "1", "--beta", "1" if config.accumulate else "0",
        "--transA", g.trans_a, "--transB", g.trans_b, "--batch_count", str(g.batch),
        "--a_type", t, "--b_type", t, "--c_type", t, "--d_type", t,
        "--compute_type", _LT_COMPUTE.get(g.compute_type, "f32_r"),
    ]  # fmt: skip
    if "bias" in g.epilogue:
        args.append("--bias_vector")
    for act in ("relu", "gelu"):
        if act in g.epilogue:
            args += ["--activation_type", act]
    return Command(HIPBLASLT, tuple(args), parse_hipblaslt, "built from the logged fields")


def _leading(g: Gemm) -> tuple[int, int, int]:
    rows_a = g.m if g.trans_a == "N" else g.k
    rows_b = g.k if g.trans_b == "N" else g.n
    return (g.lda or rows_a, g.ldb or rows_b, g.ldc or g.m)


def _batch_strides(g: Gemm) -> tuple[int, int, int]:
    lda, ldb, ldc = _leading(g)
    cols_a = g.k if g.trans_a == "N" else g.m
    cols_b = g.n if g.trans_b == "N" else g.k
    return (
        g.stride_a if g.stride_a is not None else lda * cols_a,
        g.stride_b if g.stride_b is not None else ldb * cols_b,
        g.stride_c if g.stride_c is not None else ldc * g.n,
    )


def miopen_command(text: str, problem: Conv | Opaque) -> Command:
    """The logged driver command (verb and options) with timing on and the CPU check off."""
    args = list(_after(text, MIOPEN))
    present = set(args)
    if not present & {"-t", "--time"}:
        args += ["-t", "1"]
    if not present & {"-V", "--verify"}:
        args += ["-V", "0"]
    return Command(MIOPEN, tuple(args), parse_miopen)


NCCL_TESTS = {
    "AllReduce": "all_reduce_perf", "AllGather": "all_gather_perf",
    "ReduceScatter": "reduce_scatter_perf", "Broadcast": "broadcast_perf",
    "Reduce": "reduce_perf", "AllToAll": "alltoall_perf", "Send": "sendrecv_perf",
    "Recv": "sendrecv_perf",
}  # fmt: skip
_NCCL_TYPES = {
    "i8": "int8", "u8": "uint8", "i32": "int32", "u32": "uint32", "i64": "int64",
    "u64": "uint64", "f16": "half", "f32": "float", "f64": "double", "bf16": "bfloat16",
    "f8": "fp8_e4m3", "bf8": "fp8_e5m2",
}  # fmt: skip


def nccl_tests_command(c: Comm) -> Command:
    """nccl-tests / rccl-tests: one size (-b = -e = the collective's nccl-tests size), its
    type and op, one process driving `nranks` GPUs (-g)."""
    binary = NCCL_TESTS.get(c.name, f"{c.name.lower()}_perf")
    size = str(c.bytes)
    args = ["-b", size, "-e", size, "-d", _NCCL_TYPES.get(c.dtype, c.dtype)]
    if c.name in ("AllReduce", "Reduce", "ReduceScatter"):
        args += ["-o", c.reduce_op or "sum"]
    if c.name in ("Broadcast", "Reduce") and c.root is not None:
        args += ["-r", str(c.root)]
    args += ["-g", str(c.nranks), "-n", "20", "-w", "5", "-c", "0"]
    return Command(binary, tuple(args), parse_nccl_tests)


# ---------------------------------------------------------------------------------------------
# output parsers


def _csv_block(output: str, marker: str) -> dict[str, str]:
    """The header line that holds `marker` (a `[0]:`-style prefix dropped) and the next
    non-empty line, as {column: value}."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if marker not in line:
            continue
        header = [h.strip() for h in re.sub(r"^\s*\[\d+\]:", "", line).split(",")]
        values = next((v for v in lines[i + 1 :] if v.strip()), "")
        cells = [v.strip() for v in values.split(",")]
        if len(cells) >= len(header) - 1:  # a trailing comma may drop the last cell
            return dict(zip(header, cells, strict=False))
    raise OutputError(f"no CSV line with {marker!r} in the output")


def _float(value: str | None, what: str) -> float:
    try:
        return float(value or "")
    except ValueError:
        raise OutputError(f"{what} is not a number: {value!r}") from None


def _bench_csv(output: str, gflops: str) -> Parsed:
    block = _csv_block(output, gflops)
    us = block.get("us", block.get(gflops.replace("Gflops", "us")))
    time_us = _float(us, "the us column")
    rate = f"{gflops} {block[gflops]}" if block.get(gflops) else ""
    return Parsed(time_us, rate)


def parse_rocblas(output: str, config: Config) -> Parsed:
    """rocblas-bench: `transA,transB,M,N,K,…,rocblas-Gflops,…,us` then the values."""
    return _bench_csv(output, "rocblas-Gflops")


def parse_hipblaslt(output: str, config: Config) -> Parsed:
    """hipblaslt-bench: `[0]:transA,…,hipblaslt-Gflops,hipblaslt-GB/s,us` then the values."""
    return _bench_csv(output, "hipblaslt-Gflops")


_MIOPEN_TIME = re.compile(
    r"GPU Kernel Time (?P<what>[A-Za-z .]+?) Elapsed: (?P<ms>[0-9.eE+-]+) ms"
)  # fmt: skip
_MIOPEN_DIRECTIONS = {
    "fwd": ("Forward Conv.",), "bwd_data": ("Backward Data Conv.",),
    "bwd_weight": ("Backward Weights Conv.",),
    "all": ("Forward Conv.", "Backward Data Conv.", "Backward Weights Conv."),
}  # fmt: skip


def parse_miopen(output: str, config: Config) -> Parsed:
    """MIOpenDriver: the kernel time of the config's direction(s) (`-F 0`: their sum); for other
    driver commands (bnorm, pool, …) the sum of every kernel time line."""
    found = [(m["what"], _float(m["ms"], "a kernel time")) for m in _MIOPEN_TIME.finditer(output)]
    if not found:
        raise OutputError("no 'GPU Kernel Time … Elapsed: … ms' line in the output")
    p = config.problem
    if isinstance(p, Conv):
        wanted = _MIOPEN_DIRECTIONS.get(p.direction, ("Forward Conv.",))
        times = {what: ms for what, ms in found if what in wanted}
        missing = [w for w in wanted if w not in times]
        if missing:
            raise OutputError(f"no 'GPU Kernel Time {missing[0]} Elapsed' line in the output")
        total_ms = sum(times.values())
    else:
        total_ms = sum(ms for _, ms in found)
    stats = re.search(r"stats:.*GFLOPs.*\n\s*stats:\s*(.*)", output)
    rate = ""
    if stats:
        cells = [c.strip() for c in stats.group(1).split(",")]
        rate = f"MIOpen GFLOPs {cells[-3]}" if len(cells) >= 3 else ""
    return Parsed(total_ms * 1000.0, rate)


def parse_nccl_tests(output: str, config: Config) -> Parsed:
    """nccl-tests / rccl-tests: the `#  size count type redop root time algbw busbw …` header
    gives the columns; the row of the config's size gives the out-of-place time and busbw.
    Launcher prefixes (`[1,0]<stdout>:`) are dropped."""
    header: list[str] = []
    rows: list[list[str]] = []
    for raw in output.splitlines():
        line = re.sub(r"^.*?<std(?:out|err)>:", "", raw)
        tokens = line.replace("#", " # ").split()
        if "size" in tokens and "busbw" in tokens and "time" in tokens:
            header = [t for t in tokens if t != "#"]
        elif header and tokens and tokens[0].isdigit() and len(tokens) > header.index("busbw"):
            rows.append(tokens)
    if not header or not rows:
        raise OutputError("no nccl-tests result table (size … time algbw busbw) in the output")
    p = config.problem
    want = str(p.bytes) if isinstance(p, Comm) else None
    row = next((r for r in rows if r[0] == want), rows[-1])
    time_us = _float(row[header.index("time")], "the out-of-place time")
    busbw = row[header.index("busbw")]
    return Parsed(time_us, f"busbw {busbw} GB/s")


# ---------------------------------------------------------------------------------------------
# running


def run(
    command: Command,
    config: Config,
    timeout_s: float,
    which: Callable[[str], str | None] = shutil.which,
) -> Result:
    """Run one command; every outcome is a Result (never raises for the binary's faults)."""
    path = which(command.binary)
    if path is None:
        return Result(command.binary, f"not found: {command.binary} not on PATH",
                      command=command.line())  # fmt: skip
    line = command.line(path)
    try:
        code, out, err = _execute([path, *command.args], timeout_s)
    except subprocess.TimeoutExpired:
        return Result(command.binary, failed(f"timeout after {timeout_s:g} s"), command=line)
    except OSError as error:
        return Result(command.binary, failed(f"cannot start: {error.strerror or error}"),
                      command=line)  # fmt: skip
    if code != 0:
        return Result(command.binary, failed(_exit_reason(code, out, err)), command=line)
    try:
        parsed = command.parse(out + "\n" + err, config)
    except OutputError as error:
        return Result(command.binary, failed(str(error)), command=line)
    return Result(
        command.binary, OK, time_us=parsed.time_us, samples_us=(parsed.time_us,), mode=MODE,
        command=line, note=command.note, tool_rate=parsed.tool_rate,
    )  # fmt: skip


def _execute(argv: list[str], timeout_s: float) -> tuple[int, str, str]:
    """Run in its own process group, so a timeout ends the binary and anything it started."""
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True, errors="replace", start_new_session=True,
    ) as process:  # fmt: skip
        try:
            out, err = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
        return process.returncode, out, err


def _exit_reason(code: int, out: str, err: str) -> str:
    last = next((line for line in reversed((err or out).splitlines()) if line.strip()), "")
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        what = f"killed by {name}"
    else:
        what = f"exit {code}"
    return f"{what}: {one_line(last, 120)}" if last else what
