"""A Triton GEMM for `gpuscope libperf --triton`: the same problem as the torch replay (the same
strided operands, row-major Dᵀ = op(B)ᵀ · op(A)ᵀ), a tiled kernel with grouped tile order and
f32 accumulation, autotuned over four tile shapes per (M, N, K). It is the "what would a
compiler-generated kernel do" side of an A/B against the vendor library that PyTorch calls.
Imported only with --triton (Triton loads lazily).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gpuscope.libperf.configs import Gemm

BACKEND = "triton"
DTYPES = ("f16", "bf16", "f32", "tf32")


@dataclass
class Kernel:
    """`fn()` runs the kernel; `rtol` is the correctness tolerance of its precision (inputs are
    standard normal, so outputs scale with √k: the A/B check uses atol = rtol·√k)."""

    fn: Callable[[], Any]
    call: str
    rtol: float
    note: str = ""


def unsupported(g: Gemm, accumulate: bool) -> str:
    """Why the Triton kernel does not cover this GEMM ('' when it does)."""
    if g.dtype not in DTYPES:
        return f"the Triton GEMM covers {', '.join(DTYPES)}, not {g.dtype}"
    if g.epilogue or accumulate:
        return "the Triton GEMM has no epilogue or beta (plain D = A·B only)"
    if g.trans_a == "C" or g.trans_b == "C":
        return "conjugate transposes are not covered"
    return ""


def for_config(torch: ModuleType, g: Gemm, left: Any, right: Any) -> Kernel:
    """A callable running the Triton kernel on the torch replay's operands (op(B)ᵀ, op(A)ᵀ),
    so both sides of the A/B compute the same product on the same data."""
    batched = g.batch > 1
    a = left if batched else left.unsqueeze(0)
    b = right if batched else right.unsqueeze(0)
    rows, cols, inner = a.shape[1], b.shape[2], a.shape[2]
    out = torch.empty((a.shape[0], rows, cols), dtype=a.dtype, device="cuda")
    precision = (
        0 if g.dtype in ("f16", "bf16") else (2 if "tf32" in (g.dtype, g.compute_type) else 1)
    )
    kernel = _kernel()

    def grid(meta: dict[str, int]) -> tuple[int, int]:
        tiles = -(-rows // meta["BLOCK_M"]) * -(-cols // meta["BLOCK_N"])
        return tiles, a.shape[0]

    def run() -> Any:
        kernel[grid](
            a, b, out, rows, cols, inner,
            a.stride(0), a.stride(1), a.stride(2), b.stride(0), b.stride(1), b.stride(2),
            out.stride(0), out.stride(1), out.stride(2), PRECISION=precision,
        )  # fmt: skip
        return out if batched else out[0]

    name = {0: "", 1: " ieee f32", 2: " tf32"}[precision]
    rtol = {0: 2e-2, 1: 1e-4, 2: 5e-3}[precision]
    call = f"triton tiled GEMM {rows}×{inner} @ {inner}×{cols} ×{a.shape[0]}{name}"
    return Kernel(run, call, rtol)


@functools.cache
def _kernel() -> Any:
    import triton
    import triton.language as tl

    configs = [
        triton.Config(
            {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w, num_stages=s
        )
        for bm, bn, bk, w, s in (
            (128, 128, 64, 8, 3),
            (128, 64, 64, 4, 4),
            (64, 128, 64, 4, 4),
            (64, 64, 32, 4, 4),
        )
    ]

    @triton.autotune(configs=configs, key=["M", "N", "K"])  # type: ignore[untyped-decorator]
    @triton.jit  # type: ignore[untyped-decorator]
    def gemm(  # type: ignore[no-untyped-def]
        a_ptr, b_ptr, c_ptr, M, N, K,
        s_ab, s_am, s_ak, s_bb, s_bk, s_bn, s_cb, s_cm, s_cn,
        PRECISION: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
        BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    ):  # fmt: skip
        pid, batch = tl.program_id(0), tl.program_id(1)
        tiles_m, tiles_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
        per_group = GROUP_M * tiles_n
        first_m = (pid // per_group) * GROUP_M
        group_m = min(tiles_m - first_m, GROUP_M)
        pid_m = first_m + (pid % per_group) % group_m
        pid_n = (pid % per_group) // group_m
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + batch * s_ab + rm[:, None] * s_am + rk[None, :] * s_ak
        b_ptrs = b_ptr + batch * s_bb + rk[:, None] * s_bk + rn[None, :] * s_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, tl.cdiv(K, BLOCK_K)):
            left = K - k0 * BLOCK_K
            a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0)
            b = tl.load(b_ptrs, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0)
            if PRECISION == 1:
                acc = tl.dot(a, b, acc, input_precision="ieee")
            elif PRECISION == 2:
                acc = tl.dot(a, b, acc, input_precision="tf32")
            else:
                acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * s_ak
            b_ptrs += BLOCK_K * s_bk
        c_ptrs = c_ptr + batch * s_cb + rm[:, None] * s_cm + rn[None, :] * s_cn
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)

    return gemm
