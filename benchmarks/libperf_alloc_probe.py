"""Why can libperf's replay and a direct bench of the same GEMM differ by several per cent?

For a few GEMM shapes (column-major, as cuBLAS logs them), build the call two ways — libperf's
own replay (`gpuscope.libperf.torch_replay.gemm_call`) and an independent rebuild (the training
program's `X @ Y`) — each on FRESH operands several times (new allocations, at addresses moved
by a spacer allocation of varying size), and time every instance in kernel mode. Prints, per
shape and way: the kernels cuBLAS ran, and the min / median / max of the per-allocation
medians. If both ways run the same kernels and the spread across allocations is as wide as the
disagreement, the disagreement is where the operands landed in memory, not the replay.

    PYTHONPATH=src python benchmarks/libperf_alloc_probe.py --out bench-data/alloc-probe
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

# (dtype, transA, transB, m, n, k): the 0.935 shape of the 2026-11-23 re-run, and two others
SHAPES = [
    ("bf16", "N", "T", 2048, 512, 2048),
    ("bf16", "N", "T", 512, 1536, 2048),
    ("bf16", "N", "N", 2048, 2048, 512),
]


def direct_call(torch: Any, dtype: Any, ta: str, tb: str, m: int, n: int, k: int) -> Any:
    """out(n×m) = X(n×k) @ Y(k×m), written apart from libperf's code (contiguous operands)."""
    y = torch.randn(k, m, device="cuda", dtype=dtype) if ta == "N" else (
        torch.randn(m, k, device="cuda", dtype=dtype).t()
    )  # fmt: skip
    x = torch.randn(n, k, device="cuda", dtype=dtype) if tb == "N" else (
        torch.randn(k, n, device="cuda", dtype=dtype).t()
    )  # fmt: skip
    return lambda: torch.mm(x, y), (x, y)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="")
    parser.add_argument("--allocations", type=int, default=6)
    parser.add_argument("--cause", action="store_true",
                        help="which allocation matters: the output's or the operands'")  # fmt: skip
    args = parser.parse_args()
    if args.cause:
        return cause(args)
    import torch

    import gpuscope
    from gpuscope.libperf.configs import Gemm
    from gpuscope.libperf.torch_replay import gemm_call

    results: list[dict[str, Any]] = []
    for dtype_name, ta, tb, m, n, k in SHAPES:
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype_name]
        g = Gemm(dtype_name, "f32", ta, tb, m, n, k,
                 lda=m if ta == "N" else k, ldb=k if tb == "N" else n, ldc=m)  # fmt: skip
        flops = g.flops
        for way in ("libperf", "direct"):
            medians, kernels, addresses = [], set(), []
            for i in range(args.allocations):
                spacer = torch.empty((i * 3 + 1) * 1_048_576 + i * 4096, dtype=torch.uint8,
                                     device="cuda")  # fmt: skip
                if way == "libperf":
                    prepared = gemm_call(torch, g, False)
                    fn, operands = prepared.fn, prepared.operands
                else:
                    fn, operands = direct_call(torch, dtype, ta, tb, m, n, k)
                got = gpuscope.bench(fn, mode="kernel", budget_s=0.3, warmup_budget_s=0.2,
                                     peaks=False)  # fmt: skip
                medians.append(got.median_us)
                kernels.add(" + ".join(got.kernel_names))
                addresses.append([hex(t.data_ptr()) for t in operands])
                del fn, operands, spacer
            ordered = sorted(medians)
            row = {
                "shape": f"{dtype_name} {ta}{tb} {m}x{n}x{k}", "way": way,
                "medians_us": medians, "min_us": ordered[0], "max_us": ordered[-1],
                "median_us": statistics.median(medians),
                "spread": ordered[-1] / ordered[0] - 1,
                "tflops_median": flops / statistics.median(medians) / 1e6,
                "kernels": sorted(kernels), "addresses": addresses,
            }  # fmt: skip
            results.append(row)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "alloc_probe.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"device {torch.cuda.get_device_name(0)} torch {torch.__version__}")
    print(f"{'shape':<24}{'way':<9}{'min µs':>8}{'med µs':>8}{'max µs':>8}{'spread':>8}  kernels")
    for r in results:
        print(
            f"{r['shape']:<24}{r['way']:<9}{r['min_us']:>8.2f}{r['median_us']:>8.2f}"
            f"{r['max_us']:>8.2f}{r['spread']:>8.3f}  {' | '.join(r['kernels'])[:90]}"
        )  # fmt: skip
    return 0


def cause(args: argparse.Namespace) -> int:
    """The first shape: operands fixed and the output at N addresses (`mm(out=)`), then the
    output fixed and N operand sets, then the first pair again (is it time, or place?)."""
    import torch

    import gpuscope

    _, ta, tb, m, n, k = SHAPES[0]
    held: list[Any] = []

    def fresh_out() -> Any:
        held.append(torch.empty(1_048_576 * (len(held) % 5 + 1), dtype=torch.uint8, device="cuda"))
        return torch.empty(n, m, device="cuda", dtype=torch.bfloat16)

    def time(x: Any, y: Any, o: Any) -> float:
        got = gpuscope.bench(lambda: torch.mm(x, y, out=o), mode="kernel", budget_s=0.3,
                             warmup_budget_s=0.2, peaks=False)  # fmt: skip
        mhz = sorted(c.sm_mhz for c in got.clocks if c.sm_mhz)
        clocks.append(mhz[len(mhz) // 2] if mhz else None)
        return float(got.median_us)

    clocks: list[float | None] = []

    _, (x0, y0) = direct_call(torch, torch.bfloat16, ta, tb, m, n, k)
    o0 = fresh_out()
    rows: list[dict[str, Any]] = []
    for what in ("output", "operands"):
        for _ in range(args.allocations):
            if what == "output":
                x, y, o = x0, y0, fresh_out()
            else:
                held.append(torch.empty(3 * 1_048_576, dtype=torch.uint8, device="cuda"))
                _, (x, y) = direct_call(torch, torch.bfloat16, ta, tb, m, n, k)
                held.append((x, y))
                o = o0
            rows.append({"varied": what, "us": time(x, y, o),
                         "x": hex(x.data_ptr()), "y": hex(y.data_ptr()),
                         "out": hex(o.data_ptr())})  # fmt: skip
    rows += [{"varied": "none (again)", "us": time(x0, y0, o0), "x": hex(x0.data_ptr()),
              "y": hex(y0.data_ptr()), "out": hex(o0.data_ptr())} for _ in range(3)]  # fmt: skip
    for row, mhz in zip(rows, clocks, strict=True):
        row["sm_mhz"] = mhz
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "alloc_cause.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(f"shape {SHAPES[0]} on {torch.cuda.get_device_name(0)}")
    for r in rows:
        print(f"{r['varied']:<14}{r['us']:>8.2f} µs {r['sm_mhz']} MHz  x {r['x']} y {r['y']} "
              f"out {r['out']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
