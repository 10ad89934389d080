"""Replay a config through PyTorch on the current GPU, timed with `gpuscope.bench`.

GEMMs are rebuilt as the library saw them (column-major, see docs/libtrace.md): a column-major
r×c matrix with leading dimension ld is a row-major (c, r) view with strides (ld, 1), so

    D(m×n) = op(A) · op(B)   is run as   Dᵀ (n×m, row-major) = op(B)ᵀ · op(A)ᵀ

on `as_strided` views of random data with the logged leading dimensions and batch strides:
PyTorch passes such views to cuBLAS / hipBLAS(Lt) with the same transposes, m, n, k and ld.
The call is `torch.mm` / `torch.bmm`, `torch.addmm` / `baddbmm` when beta ≠ 0, `addmm` with a
1-D bias for a bias epilogue (what `F.linear` does: cuBLASLt's EPILOGUE_BIAS), and
`torch._addmm_activation` for relu/gelu + bias. f32 GEMMs run with TF32 off unless the log says
TF32 (`allow_tf32` is set for the config and restored after). Convolutions run through
`F.conv2d` / `F.conv3d` (forward) and `aten.convolution_backward` (data, weight gradients),
channels-last for NHWC. Collectives run through `torch.distributed` when a process group is
available (a `torchrun` launch, or one the caller initialized), with a fixed number of calls per
rank so that every rank calls the collective equally often.
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gpuscope.libperf.configs import Comm, Config, Conv, Gemm, Opaque
from gpuscope.libperf.result import OK, Result, error_reason, failed, skipped

BACKEND = "torch"
TORCH_DTYPES = {
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "tf32": "float32",
    "f64": "float64", "c32": "complex64", "c64": "complex128",
}  # fmt: skip
COMM_DTYPES = {
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i8": "int8",
    "u8": "uint8", "i32": "int32", "i64": "int64",
}  # fmt: skip
BIAS_EPILOGUES = ("bias", "relu_bias", "gelu_bias")
LOCKSTEP_WARMUP, LOCKSTEP_SAMPLES, LOCKSTEP_CALLS = 3, 20, 5
ALLOCATIONS = 5  # fresh operand sets a GEMM / convolution is timed on (see TorchReplay._timed)

Bench = Callable[..., Any]  # gpuscope.timing.harness.bench's signature


@dataclass
class Prepared:
    """A ready-to-time callable: `fn()` runs the config once."""

    fn: Callable[[], Any]
    call: str  # the PyTorch call, for the CSV's command column
    note: str = ""
    tf32: bool | None = None  # torch.backends.cuda.matmul.allow_tf32 while timing
    operands: tuple[Any, ...] = ()  # a GEMM's (op(B)ᵀ, op(A)ᵀ): another backend runs on them


class TorchReplay:
    """PyTorch replays of GEMMs, convolutions and collectives on the current device.

    `bench` is `gpuscope.timing.harness.bench` (injectable for tests); `group` the
    torch.distributed module when a process group is up (see `process_group`); `allocations`
    how many fresh operand sets each GEMM / convolution is timed on (the median is reported)."""

    def __init__(
        self,
        torch: ModuleType,
        *,
        budget_s: float = 0.5,
        bench: Bench | None = None,
        group: Any = None,
        triton: bool = False,
        compare: Bench | None = None,
        state: str = "burst",
        allocations: int = ALLOCATIONS,
    ) -> None:
        from gpuscope.timing import ab, harness

        self.torch = torch
        self.budget_s = budget_s
        self._bench = bench or harness.bench
        self._compare = compare or ab.compare
        self.group = group
        self.triton = triton
        self.state = state
        self.allocations = max(1, allocations)

    def _state(self) -> dict[str, str]:
        """gpuscope.bench's power-state option, where this harness has one."""
        from gpuscope.timing.options import BenchOptions

        fields = getattr(BenchOptions, "__dataclass_fields__", {})
        return {"state": self.state} if "state" in fields else {}

    @property
    def world_size(self) -> int:
        return int(self.group.get_world_size()) if self.group is not None else 1

    def run(self, config: Config) -> list[Result]:
        """The torch result (and the Triton one with --triton); never raises for the config."""
        p = config.problem
        if isinstance(p, Opaque):
            return [Result(BACKEND, skipped(p.reason))]
        if isinstance(p, Comm):
            return [self._collective(config, p)]
        torch, accumulate = self.torch, config.accumulate

        def build() -> Prepared:
            return gemm_call(torch, p, accumulate) if isinstance(p, Gemm) else conv_call(torch, p)

        try:
            prepared = build()
        except UnsupportedError as why:
            return [Result(BACKEND, skipped(str(why)))]
        except Exception as error:  # any backend failure is a row, not a crash
            return [Result(BACKEND, failed(error_reason(error)))]
        results = [self._timed(config, prepared, build)]
        if self.triton and isinstance(p, Gemm):
            results.append(self._triton(config, p, prepared, results[0]))
        return results

    def _timed(self, config: Config, prepared: Prepared, build: Callable[[], Prepared]) -> Result:
        """The median over `allocations` fresh operand sets of gpuscope.bench's median on each:
        one µs-scale GEMM's kernel time moves by up to ~8 % with where its operands lie in
        memory (same kernel; docs/libperf.md), so one allocation is one draw of that spread."""
        measured: list[Any] = []
        held = [prepared]  # alive, so that each new set lands at new addresses
        stopped = ""
        try:
            for i in range(self.allocations):
                if i:
                    try:
                        held.append(build())
                    except Exception as error:  # e.g. out of memory: keep what was measured
                        stopped = f"allocation {i + 1} failed ({error_reason(error)})"
                        break
                measured.append(self._bench_one(config, held[-1], measured[:1]))
        except Exception as error:
            if not measured:
                return Result(BACKEND, failed(error_reason(error)), command=prepared.call)
            stopped = f"allocation {len(measured) + 1} failed ({error_reason(error)})"
        del held[1:]
        medians = [float(m.median_us) for m in measured]
        kernels = [tuple(str(k) for k in getattr(m, "kernel_names", ()) or ()) for m in measured]
        note = [prepared.note] if prepared.note else []
        if len(measured) > 1:
            each = " / ".join(f"{us:.3f}" for us in medians)
            note.append(f"median of {len(measured)} operand allocations: {each} µs")
        if stopped:
            note.append(stopped)
        if len(set(kernels)) > 1:
            note.append("kernels differ between allocations: " + " | ".join(
                " + ".join(k) for k in dict.fromkeys(kernels)
            ))  # fmt: skip
        samples = tuple(float(x) for m in measured for x in m.samples_us)
        return Result(
            BACKEND, OK, time_us=statistics.median(medians), samples_us=samples,
            mode=str(measured[0].mode), command=prepared.call, note="; ".join(note),
            kernels=kernels[0],
        )  # fmt: skip

    def _bench_one(self, config: Config, prepared: Prepared, before: list[Any]) -> Any:
        budget = self.budget_s / self.allocations
        # the first allocation warms the device up and picks the mode ("auto": kernel mode for
        # µs-scale calls); the next ones warm only their own operands and keep that mode
        warmup = min(0.1, budget) if before else min(0.5, self.budget_s)
        mode = {"mode": "kernel"} if before and before[0].mode == "kernel" else {}
        with _tf32(self.torch, prepared.tf32):
            return self._bench(
                prepared.fn, name=prepared.call, budget_s=budget, warmup_budget_s=warmup,
                flops=config.flops, bytes=config.bytes, peaks=False, **self._state(), **mode,
            )  # fmt: skip

    def _triton(self, config: Config, g: Gemm, prepared: Prepared, torch_result: Result) -> Result:
        from gpuscope.libperf import triton_gemm

        why = triton_gemm.unsupported(g, config.accumulate)
        if why:
            return Result(triton_gemm.BACKEND, skipped(why))
        try:
            kernel = triton_gemm.for_config(self.torch, g, *prepared.operands)
            with _tf32(self.torch, prepared.tf32):
                c = self._compare(
                    prepared.fn, kernel.fn, (), names=("torch", "triton"),
                    budget_s=2 * self.budget_s, warmup_budget_s=min(0.5, self.budget_s),
                    rtol=kernel.rtol, atol=kernel.rtol * math.sqrt(g.k),
                )  # fmt: skip
        except Exception as error:
            return Result(triton_gemm.BACKEND, failed(error_reason(error)))
        if c.a is None or c.b is None:
            detail = c.correctness.detail or "outputs differ from torch's"
            worst, atol = c.correctness.max_abs, c.correctness.atol
            if worst is not None and atol is not None:
                detail += f" (max |diff| {worst:.3g}, atol {atol:.3g})"
            return Result(triton_gemm.BACKEND, failed(f"incorrect: {detail}"), comparison=c)
        return Result(
            triton_gemm.BACKEND, OK, time_us=float(c.b.median_us),
            samples_us=tuple(c.b.samples_us), mode=f"A/B vs torch ({c.b.mode})",
            command=kernel.call, comparison=c,
            note=f"torch in the same A/B: {c.a.median_us:.3f} µs ({c.verdict} for triton)",
        )  # fmt: skip

    def _collective(self, config: Config, c: Comm) -> Result:
        if self.group is None:
            return Result(BACKEND, skipped("no process group"))
        world = self.world_size
        if c.nranks is not None and c.nranks != world:
            return Result(BACKEND, skipped(
                f"logged with {c.nranks} ranks; this process group has {world}"
            ))  # fmt: skip
        try:
            prepared = collective_call(self.torch, self.group, c)
        except UnsupportedError as why:
            return Result(BACKEND, skipped(str(why)))
        try:
            samples = lockstep_samples(self.torch, self.group, prepared.fn)
        except Exception as error:
            return Result(BACKEND, failed(error_reason(error)), command=prepared.call)
        ordered = sorted(samples)
        return Result(
            BACKEND, OK, time_us=ordered[len(ordered) // 2], samples_us=tuple(samples),
            mode="lockstep events", command=prepared.call,
        )  # fmt: skip

    def agree(self, go: bool) -> bool:
        """All ranks go on only if every rank does (so no rank waits in a collective alone)."""
        if self.group is None or self.world_size == 1:
            return go
        flag = self.torch.tensor([1 if go else 0], device="cuda")
        self.group.all_reduce(flag, op=self.group.ReduceOp.MIN)
        return bool(int(flag.item()))


class UnsupportedError(Exception):
    """This config has no PyTorch replay (a skip, not a failure)."""


@contextlib.contextmanager
def _tf32(torch: ModuleType, allow: bool | None) -> Iterator[None]:
    if allow is None:
        yield
        return
    matmul = torch.backends.cuda.matmul
    with warnings.catch_warnings():  # newer torch warns about the allow_tf32 spelling
        warnings.simplefilter("ignore")
        before = matmul.allow_tf32
        matmul.allow_tf32 = allow
    try:
        yield
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            matmul.allow_tf32 = before


def _dtype(torch: ModuleType, name: str, table: dict[str, str], what: str) -> Any:
    if name not in table:
        raise UnsupportedError(f"no PyTorch replay for {what} of type {name or 'unknown'}")
    return getattr(torch, table[name])


def colmajor(
    torch: ModuleType,
    rows: int,
    cols: int,
    ld: int | None,
    batch: int,
    stride: int | None,
    dtype: Any,
) -> Any:
    """A column-major rows×cols matrix (leading dimension ld; `batch` of them `stride` apart)
    as the row-major (batch, cols, rows) view PyTorch hands to BLAS unchanged."""
    ld = ld if ld is not None and ld >= rows else rows
    step = stride if batch > 1 and stride is not None else cols * ld
    size = (batch - 1) * step + (cols - 1) * ld + rows
    data = torch.randn(size, dtype=dtype, device="cuda")
    if batch == 1:
        return data.as_strided((cols, rows), (ld, 1))
    return data.as_strided((batch, cols, rows), (step, ld, 1))


def gemm_operands(torch: ModuleType, g: Gemm) -> tuple[Any, Any]:
    """(op(B)ᵀ, op(A)ᵀ): their product is Dᵀ, i.e. D in column-major order."""
    dtype = _dtype(torch, g.dtype, TORCH_DTYPES, "a GEMM")
    a_rows, a_cols = (g.k, g.m) if g.trans_a == "T" else (g.m, g.k)
    b_rows, b_cols = (g.n, g.k) if g.trans_b == "T" else (g.k, g.n)
    a = colmajor(torch, a_rows, a_cols, g.lda, g.batch, g.stride_a, dtype)
    b = colmajor(torch, b_rows, b_cols, g.ldb, g.batch, g.stride_b, dtype)
    right = a.transpose(-1, -2) if g.trans_a == "T" else a
    left = b.transpose(-1, -2) if g.trans_b == "T" else b
    return left, right


def gemm_call(torch: ModuleType, g: Gemm, accumulate: bool) -> Prepared:
    """The PyTorch call that makes the BLAS library run this GEMM."""
    if g.trans_a == "C" or g.trans_b == "C":
        raise UnsupportedError("conjugate-transposed GEMMs are not replayed")
    left, right = gemm_operands(torch, g)
    operands = (left, right)
    dtype = left.dtype
    shapes = f"{_shape(left)} @ {_shape(right)} {g.dtype}"
    tf32 = (g.dtype == "tf32" or g.compute_type == "tf32") if g.dtype in ("f32", "tf32") else None
    note = ""
    if g.compute_type == "f16" and g.dtype == "f16":
        note = "compute f16 logged; PyTorch accumulates in f32"
    if g.epilogue in BIAS_EPILOGUES and g.batch == 1:
        bias = torch.randn(g.m, dtype=dtype, device="cuda")
        if g.epilogue == "bias":
            return Prepared(lambda: torch.addmm(bias, left, right), f"torch.addmm(bias, {shapes})",
                            note, tf32, operands)  # fmt: skip
        gelu = g.epilogue == "gelu_bias"
        return Prepared(
            lambda: torch._addmm_activation(bias, left, right, use_gelu=gelu),
            f"torch._addmm_activation(bias, {shapes}, use_gelu={gelu})",
            note,
            tf32,
            operands,
        )
    if g.epilogue:
        note = "; ".join(filter(None, [note, f"epilogue {g.epilogue} not replayed (plain GEMM)"]))
    batched = g.batch > 1
    if accumulate:
        c = torch.randn((g.batch, g.n, g.m) if batched else (g.n, g.m), dtype=dtype, device="cuda")
        name = "baddbmm" if batched else "addmm"
        op = getattr(torch, name)
        return Prepared(
            lambda: op(c, left, right), f"torch.{name}(C, {shapes})", note, tf32, operands
        )
    name = "bmm" if batched else "mm"
    op = getattr(torch, name)
    return Prepared(lambda: op(left, right), f"torch.{name}({shapes})", note, tf32, operands)


def _shape(t: Any) -> str:
    return "×".join(str(s) for s in t.shape)


def conv_call(torch: ModuleType, v: Conv) -> Prepared:
    """F.conv2d / conv3d forward, aten.convolution_backward for the gradients."""
    if v.transposed:
        raise UnsupportedError("transposed convolutions are not replayed")
    dtype = _dtype(torch, v.dtype, TORCH_DTYPES, "a convolution")
    three = v.d is not None
    fmt = None
    if v.layout == "NHWC":
        fmt = torch.channels_last_3d if three else torch.channels_last
    x = _tensor(torch, (v.n, v.c, *v.spatial), dtype, fmt)
    w = _tensor(torch, (v.k, v.c // max(v.groups, 1), *v.kernel), dtype, fmt)
    dy = _tensor(torch, (v.n, v.k, *v.out_spatial), dtype, fmt)
    conv = torch.nn.functional.conv3d if three else torch.nn.functional.conv2d
    stride, pad, dil = list(v.stride), list(v.pad), list(v.dilation)
    zeros = [0] * len(stride)
    backward = torch.ops.aten.convolution_backward

    def grad(mask: list[bool]) -> Any:
        return backward(dy, x, w, None, stride, pad, dil, False, zeros, v.groups, mask)

    def fwd() -> Any:
        return conv(x, w, None, stride, pad, dil, v.groups)

    def everything() -> Any:
        return fwd(), grad([True, False, False]), grad([False, True, False])

    name = f"conv{'3' if three else '2'}d"
    shapes = f"x {_shape(x)}, w {_shape(w)} {v.dtype} {v.layout}"
    calls: dict[str, tuple[Callable[[], Any], str]] = {
        "fwd": (fwd, f"F.{name}({shapes})"),
        "bwd_data": (lambda: grad([True, False, False]), f"convolution_backward[input]({shapes})"),
        "bwd_weight": (
            lambda: grad([False, True, False]),
            f"convolution_backward[weight]({shapes})",
        ),
        "all": (everything, f"F.{name} + convolution_backward[input, weight]({shapes})"),
    }
    fn, call = calls.get(v.direction, calls["fwd"])
    return Prepared(fn, call)


def _tensor(torch: ModuleType, shape: tuple[int, ...], dtype: Any, fmt: Any) -> Any:
    t = torch.randn(shape, dtype=dtype, device="cuda")
    return t.contiguous(memory_format=fmt) if fmt is not None else t


def collective_call(torch: ModuleType, dist: Any, c: Comm) -> Prepared:
    """The torch.distributed call of one collective, on buffers of the logged count."""
    dtype = _dtype(torch, c.dtype, COMM_DTYPES, "a collective")
    world = int(dist.get_world_size())
    ops = {"sum": "SUM", "prod": "PRODUCT", "max": "MAX", "min": "MIN", "avg": "AVG"}
    op = getattr(dist.ReduceOp, ops.get(c.reduce_op, "SUM"))
    root = c.root or 0

    def buffer(n: int) -> Any:
        return torch.ones(n, dtype=dtype, device="cuda")

    t = buffer(c.count)
    if c.name == "AllReduce":
        return Prepared(lambda: dist.all_reduce(t, op=op), f"dist.all_reduce({c.count})")
    if c.name == "AllGather":
        out = buffer(c.count * world)
        return Prepared(lambda: dist.all_gather_into_tensor(out, t),
                        f"dist.all_gather_into_tensor({c.count}×{world})")  # fmt: skip
    if c.name == "ReduceScatter":
        src = buffer(c.count * world)
        return Prepared(lambda: dist.reduce_scatter_tensor(t, src, op=op),
                        f"dist.reduce_scatter_tensor({c.count}×{world})")  # fmt: skip
    if c.name == "Broadcast":
        return Prepared(lambda: dist.broadcast(t, src=root), f"dist.broadcast({c.count})")
    if c.name == "Reduce":
        return Prepared(lambda: dist.reduce(t, dst=root, op=op), f"dist.reduce({c.count})")
    raise UnsupportedError(f"{c.name} is not replayed through torch.distributed")


def lockstep_samples(torch: ModuleType, dist: Any, fn: Callable[[], Any]) -> list[float]:
    """µs per call from device events around a fixed number of calls: gpuscope.bench adapts its
    call counts to the timings, which differ between ranks, and a rank that calls a collective
    more often than the others waits forever."""
    dist.barrier()
    fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for i in range(LOCKSTEP_WARMUP + LOCKSTEP_SAMPLES):
        start.record()
        for _ in range(LOCKSTEP_CALLS):
            fn()
        end.record()
        end.synchronize()
        if i >= LOCKSTEP_WARMUP:
            samples.append(float(start.elapsed_time(end)) * 1000.0 / LOCKSTEP_CALLS)
    return samples


def owns_no_group(torch: ModuleType) -> bool:
    """No process group is up yet (one that `process_group` starts is then ours to end)."""
    dist = getattr(torch, "distributed", None)
    return not (dist is not None and dist.is_available() and dist.is_initialized())


def process_group(torch: ModuleType, environ: dict[str, str] | None = None) -> Any:
    """torch.distributed when a process group is up, or can be set up from a launcher's
    environment (RANK, WORLD_SIZE, MASTER_ADDR: torchrun); else None."""
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available():
        return None
    if dist.is_initialized():
        return dist
    env = os.environ if environ is None else environ
    if not all(name in env for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR")):
        return None
    local = int(env.get("LOCAL_RANK", env["RANK"])) % max(int(torch.cuda.device_count()), 1)
    torch.cuda.set_device(local)
    try:  # naming the device keeps NCCL from guessing it (and warning) at the first barrier
        dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    except TypeError:  # torch < 2.3 has no device_id
        dist.init_process_group("nccl")
    return dist
