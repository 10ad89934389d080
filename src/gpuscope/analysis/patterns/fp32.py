"""The `fp32-matmul` pattern: GEMMs and convolutions running in FP32 on a device whose bf16/fp16
tensor (matrix) cores are many times faster, with the possible speed-up bounded by the peaks table.

A kernel's precision comes from the operator that launched it when its input types were recorded
(`aten::mm` with "float" inputs), else from the kernel's name: `sgemm`, `scudnn`, cuDNN engines
templated on `<float, …>`, Tensile `Cijk_…_S_` kernels are FP32; `tf32`, CUTLASS `s1688` / `s16816`
are TF32 tensor-core kernels (already faster than FP32, reported but not counted).
"""

from __future__ import annotations

import re

import numpy as np

from gpuscope.analysis._finding import us
from gpuscope.analysis._flops import work
from gpuscope.analysis._opinputs import Recorded, distinct, dtype_of
from gpuscope.analysis._unique import unique
from gpuscope.analysis.categories import CATEGORIES
from gpuscope.analysis.patterns.context import Context, Found, found
from gpuscope.document.units import time_ns
from gpuscope.trace.model import Mask

FP32_FIRES, FP32_WARNS = 0.05, 0.10
TF32 = re.compile(r"tf32|xf32|s1688gemm|s16816gemm", re.IGNORECASE)
FP32 = re.compile(
    r"sgemm|scudnn|^(void )?[\w:]+<float,|gemv\w*<[^>]*float, float, float"
    r"|^Cijk_A[a-z]+_B[a-z]+_S[A-Z]?_"
)
# cuDNN's helper kernels (layout transposes, scaling) sit in the convolution category and are
# templated on float, but no tensor core would run them
NOT_MATH = re.compile(r"cudnn::ops::|nchw_?to_?nhwc|nhwc_?to_?nchw", re.IGNORECASE)


def fp32_matmul(c: Context) -> Found | None:
    matmul = c.kernels & np.isin(c.a.classes.category, _categories())
    fp32, tf32 = _precision(c, matmul)
    memory_bound = fp32 & _memory_bound(c, fp32)
    fp32 &= ~memory_bound
    time = c.time(fp32)
    share = c.share(time)
    if share < FP32_FIRES:
        return None
    ratio, tf32_ratio = _ratios(c)
    training = "training" in c.a.program.traits
    bound = (
        f"; the datasheet bf16/fp16 tensor peak of {c.peaks.label} is {ratio:.1f}× its FP32 "
        f"peak, so these kernels could run at most {ratio:.1f}× faster (saving ≤ "
        f"{time_ns(time * (1 - 1 / ratio))}, {share * (1 - 1 / ratio):.1%} of kernel time)"
        if c.peaks and ratio
        else (
            f"; gpuscope has no datasheet peaks for {c.device!r}, so no speed-up bound"
            if c.device
            else "; the trace does not name its device, so no speed-up bound"
        )
    )
    extra = f"; TF32 kernels: {time_ns(c.time(tf32))} more" if tf32.any() else ""
    if memory_bound.any():
        extra += (
            f"; not counted: {time_ns(c.time(memory_bound))} of memory-bound FP32 shapes, "
            "which tensor cores would not speed up (bf16 at most halves their bytes)"
        )
    return found(
        "fp32-matmul",
        "GEMMs / convolutions in FP32 where tensor cores apply",
        time,
        share,
        c.severity(share, FP32_WARNS) if ratio else "info",
        f"{'training' if training else 'the model'} runs GEMMs / convolutions in FP32: "
        f"{_kernels(int(fp32.sum()))} {time_ns(time)}, {share:.1%} of kernel time"
        f"{extra}{bound} — fires at ≥ {FP32_FIRES:.0%}, warning at ≥ {FP32_WARNS:.0%}",
        _action(c, training, tf32_ratio) + _verdict_note(c),
        {
            "time_us": us(time),
            "tf32_time_us": us(c.time(tf32)),
            "memory_bound_time_us": us(c.time(memory_bound)),
            "speedup_bound": round(ratio, 2) if ratio else None,
            "peaks": f"{c.peaks.label} ({c.peaks.kind})" if c.peaks else None,
            "training": training,
            "top_kernels": c.top_kernels(fp32, 5),
        },
    )


def _memory_bound(c: Context, rows: Mask) -> Mask:
    """GPU rows whose launching op has recorded shapes with an arithmetic intensity below the
    FP32 ridge (peak FLOP/s ÷ bandwidth): their FP32 math is not what limits them."""
    result = np.zeros(len(rows), bool)
    if c.peaks is None:
        return result
    ridge = (c.peaks.flops(c.peaks.matrix_fp32()) or 0.0) / c.peaks.bandwidth
    ops, names = c.a.trace.ops, c.a.trace.names
    recorded = Recorded(c.a.trace)
    owners = unique(c.owner[rows & (c.owner >= 0)])
    if len(owners) == 0:
        return result
    firsts, inverse = distinct(c.a.trace, owners)
    low = np.zeros(len(firsts), bool)
    for k, row in enumerate(firsts.tolist()):
        done = work(names[ops.name[row]], recorded.inputs(row))
        low[k] = done is not None and done.bytes > 0 and done.flops / done.bytes < ridge
    bound = owners[low[inverse]]
    result[rows & (c.owner >= 0) & np.isin(c.owner, bound)] = True
    return result


def _categories() -> list[int]:
    return [CATEGORIES.index("gemm"), CATEGORIES.index("convolution")]


def _precision(c: Context, matmul: Mask) -> tuple[Mask, Mask]:
    """(FP32, TF32) masks over GPU rows, from the launching op's input types, else the name."""
    matmul = matmul & ~c.kernel_names(NOT_MATH)
    by_name_fp32, by_name_tf32 = c.kernel_names(FP32) & matmul, c.kernel_names(TF32) & matmul
    dtype = _owner_dtype(c, matmul)
    known = dtype != ""
    fp32 = np.where(known, (dtype == "float32") & ~by_name_tf32, by_name_fp32 & ~by_name_tf32)
    tf32 = np.where(known, (dtype == "float32") & by_name_tf32, by_name_tf32)
    return fp32 & matmul, tf32 & matmul


def _owner_dtype(c: Context, rows: Mask) -> np.ndarray:  # type: ignore[type-arg]
    """Per GPU row: the dtype of the launching operator's first tensor input ('' unknown)."""
    ops = c.a.trace.ops
    result = np.full(len(rows), "", object)
    linked = rows & (c.owner >= 0)
    owners = unique(c.owner[linked])
    recorded = Recorded(c.a.trace)
    types = {int(t): _first(recorded.parsed(int(t))) for t in unique(ops.input_types[owners])}
    per_row = np.full(len(ops), "", object)
    per_row[owners] = [types[int(t)] for t in ops.input_types[owners].tolist()]
    result[linked] = per_row[c.owner[linked]]
    return result


def _first(types: tuple[object, ...]) -> str:
    return next((d for t in types if (d := dtype_of(t))), "")


def _ratios(c: Context) -> tuple[float, float]:
    """(bf16-or-fp16 tensor peak, TF32 peak) over the plain FP32 peak; 0 when unknown / < 2."""
    if c.peaks is None:
        return 0.0, 0.0
    plain = c.peaks.flops(c.peaks.matrix_fp32()) or 0.0
    fast = max(c.peaks.flops("bf16") or 0.0, c.peaks.flops("fp16") or 0.0)
    ratio = fast / plain if plain else 0.0
    tf32 = (c.peaks.flops("tf32") or 0.0) / plain if plain else 0.0
    return (ratio if ratio >= 2 else 0.0), tf32


def _action(c: Context, training: bool, tf32_ratio: float) -> str:
    bf16 = bool(c.peaks and c.peaks.flops("bf16"))
    dtype = "torch.bfloat16" if bf16 or c.peaks is None else "torch.float16"
    if training:
        text = (
            f"Train with mixed precision: torch.autocast(device_type='cuda', dtype={dtype}) "
            "around the forward pass and loss"
            + ("" if dtype.endswith("bfloat16") else ", with torch.amp.GradScaler for fp16")
        )
    else:
        text = f"Run the model in reduced precision: model.to({dtype}) or torch.autocast"
    if tf32_ratio >= 2:
        text += (
            "; or, keeping FP32, allow TF32 tensor cores (torch.set_float32_matmul_precision"
            f"('high'); up to {tf32_ratio:.1f}× the FP32 peak here)"
        )
    return text + "."


def _verdict_note(c: Context) -> str:
    bound = c.a.verdict.bound
    if bound in ("gpu-bound", "no-gpu-activity", "unknown", ""):
        return ""
    return (
        f" The trace is {bound}: the GPU also waits for other work, so shorter kernels shorten "
        "the step only once that wait is fixed."
    )


def _kernels(count: int) -> str:
    return "1 kernel takes" if count == 1 else f"{count:,} kernels take"
