#!/usr/bin/env python3
"""Accuracy of `gpuscope bench` against the device kernel time, beside the usual methods.

For `x.add_(1)` on 1 K / 1 M / 64 M fp32 and bf16 matmuls 256³ … 8192³, per case:

  kernel hot      torch.profiler (Kineto/CUPTI) device time of the kernels per call, N back-to-back
                  calls; taken before and after the methods (mean reported, drift kept)
  kernel cold     the same with a cache flush before each call (the flush's kernels excluded)
  gpuscope        default mode (hot), graph, cold, kernel
  naive loop      record, call, record, synchronize — median of 100 (the profiling guides' loop)
  do_bench        triton.testing.do_bench(return_mode="median") (flushes 256 MB before each call)
  t.u.benchmark   torch.utils.benchmark.Timer.blocked_autorange().median

then A/A and planted-2 % A/B experiments with gpuscope.compare (20 repeats each), with the time to
a result beside do_bench's. The ground truth is computed here from the profiler's raw events,
independently of gpuscope's own kernel mode (which parses an exported trace).

    PYTHONPATH=src python benchmarks/bench_accuracy.py --out results/

Writes results/accuracy.json (every number) and results/accuracy.md (the tables, printed last).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gpuscope
from gpuscope.timing.gpu import flush_bytes_for

Fn = Callable[[], Any]
GT_CALLS = 200  # profiled back-to-back calls for the ground truth
REPEATS = 20  # A/A and A/B repeats


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def cell(results: dict[str, Any], key: str, run: Callable[[], Any]) -> Any:
    """Run one measurement; record its value or its error, never stop the whole benchmark."""
    begin = time.perf_counter()
    try:
        value = run()
    except Exception as error:  # one broken cell must not cost the whole device run
        results[key] = {"error": f"{type(error).__name__}: {error}", "tb": traceback.format_exc()}
        log(f"  {key}: ERROR {type(error).__name__}: {error}")
        return None
    results[key] = value
    log(f"  {key}: {_short(value)}  ({time.perf_counter() - begin:.2f} s)")
    return value


def _short(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v:.4g}" for k, v in value.items() if isinstance(v, int | float))
    return str(value)


# --- ground truth: the profiler's device time per call -------------------------------------


def device_durations(prof: Any) -> list[tuple[str, float]]:
    """(name, µs) of every device activity, from Kineto's raw events (ns)."""
    from torch.autograd import DeviceType

    try:
        raw = prof.profiler.kineto_results.events()
        return [
            (e.name(), e.duration_ns() / 1000.0)
            for e in raw
            if e.device_type() == DeviceType.CUDA and not _annotation(e)
        ]
    except AttributeError:  # older/newer torch without kineto_results: FunctionEvents
        return [
            (e.name, e.time_range.elapsed_us())
            for e in prof.events()
            if e.device_type == DeviceType.CUDA and not getattr(e, "is_user_annotation", False)
        ]


def _annotation(event: Any) -> bool:
    check = getattr(event, "is_user_annotation", None)
    return bool(check()) if callable(check) else False


def profiled(torch: Any, body: Fn) -> list[tuple[str, float]]:
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        body()
        torch.cuda.synchronize()
    return device_durations(prof)


def kernel_time(
    torch: Any, fn: Fn, flush: Fn | None = None, calls: int = GT_CALLS
) -> dict[str, float]:
    """Device time per call: hot (back to back) or cold (flush before each, flush excluded)."""
    flush_names: set[str] = set()
    if flush is not None:
        flush_names = {name for name, _ in profiled(torch, lambda: [flush() for _ in range(3)])}

    def body() -> None:
        for _ in range(calls):
            if flush is not None:
                flush()
            fn()

    events = [(n, d) for n, d in profiled(torch, body) if n not in flush_names]
    return {"us": sum(d for _, d in events) / calls, "kernels_per_call": len(events) / calls}


HARNESS_KERNELS: set[str] = set()  # guard/marker spin and cache-flush fills, learned at start


def learn_harness_kernels(torch: Any) -> set[str]:
    """Names of the kernels that timing harnesses add (spin guard, uint8 and int32 flushes)."""
    names: set[str] = set()
    names |= {n for n, _ in profiled(torch, lambda: torch.cuda._sleep(1000))}
    for dtype in (torch.uint8, torch.int):
        buf = torch.empty(1 << 20, dtype=dtype, device="cuda")
        names |= {n for n, _ in profiled(torch, buf.zero_)}
    return names


def _harness(name: str) -> bool:
    return name in HARNESS_KERNELS or "spin_kernel" in name or "FillFunctor" in name


def same_run_kernel_time(events: list[tuple[str, float]]) -> dict[str, float]:
    """Kernel time per call of the work in a profiled run of a method, harness kernels excluded:
    the median duration of each kernel, weighted by how often it ran per call."""
    by_name: dict[str, list[float]] = {}
    for name, dur in events:
        if not _harness(name):
            by_name.setdefault(name, []).append(dur)
    calls = max(len(d) for d in by_name.values())
    us = sum(statistics.median(d) * len(d) / calls for d in by_name.values())
    count = sum(len(d) for d in by_name.values()) / calls
    return {"us": us, "kernels_per_call": count, "calls": calls}


def with_truth(torch: Any, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run a method plainly (the reported value), then again under the profiler: the kernel
    time of that second run is the ground truth in the same cache, clock and power state."""
    value = run()
    again: dict[str, Any] = {}
    events = profiled(torch, lambda: again.update(run()))
    truth = same_run_kernel_time(events)
    value["truth_us"] = truth["us"]
    value["truth_kernels_per_call"] = truth["kernels_per_call"]
    value["profiled_us"] = again.get("us")
    return value


# --- the usual methods ----------------------------------------------------------------------


def naive_loop(torch: Any, fn: Fn, iters: int = 100) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def do_bench(fn: Fn) -> dict[str, float]:
    from triton.testing import do_bench as triton_do_bench

    begin = time.perf_counter()
    median_ms = triton_do_bench(fn, return_mode="median")
    return {"us": median_ms * 1000.0, "wall_s": time.perf_counter() - begin}


def torch_benchmark(fn: Fn) -> dict[str, float]:
    from torch.utils import benchmark

    begin = time.perf_counter()
    m = benchmark.Timer(stmt="fn()", globals={"fn": fn}).blocked_autorange(min_run_time=0.2)
    return {"us": m.median * 1e6, "wall_s": time.perf_counter() - begin}


def gpuscope_mode(fn: Fn, mode: str | None) -> dict[str, Any]:
    begin = time.perf_counter()
    m = gpuscope.bench(fn) if mode is None else gpuscope.bench(fn, mode=mode)
    s = m.stats
    return {
        "us": s.median,
        "wall_s": time.perf_counter() - begin,
        "mode": m.mode,
        "ci_halfwidth": s.ci_halfwidth,
        "cv": s.cv,
        "n": s.n,
        "calls_per_sample": m.calls_per_sample,
        "stop_reason": m.stop_reason,
        "first_call_us": m.first_call_us,
        "host_us_per_call": m.host_us_per_call,
        "guard_underruns": m.guard_underruns,
        "kernels_per_call": m.kernels_per_call,
        "warmup_converged": m.warmup_converged,
        "sm_mhz": [c.sm_mhz for c in m.clocks][:3] + [c.sm_mhz for c in m.clocks][-3:],
        "throttle_reasons": sorted({c.reasons or 0 for c in m.clocks}),
    }


# --- cases ----------------------------------------------------------------------------------


def make_cases(torch: Any) -> list[tuple[str, Callable[[], Fn]]]:
    def add(n: int) -> Callable[[], Fn]:
        def setup() -> Fn:
            x = torch.randn(n, device="cuda")
            return lambda: x.add_(1)

        return setup

    def mm(n: int) -> Callable[[], Fn]:
        def setup() -> Fn:
            a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
            return lambda: torch.matmul(a, b)

        return setup

    return [
        ("x.add_(1), 1K fp32", add(1 << 10)),
        ("x.add_(1), 1M fp32", add(1 << 20)),
        ("x.add_(1), 64M fp32", add(64 << 20)),
        ("matmul 256³ bf16", mm(256)),
        ("matmul 1024³ bf16", mm(1024)),
        ("matmul 4096³ bf16", mm(4096)),
        ("matmul 8192³ bf16", mm(8192)),
    ]


def run_case(torch: Any, name: str, setup: Callable[[], Fn], flush: Fn) -> dict[str, Any]:
    log(f"case {name}")
    fn = setup()
    for _ in range(20):
        fn()
    r: dict[str, Any] = {}
    cell(r, "kernel_hot_before", lambda: kernel_time(torch, fn))
    cell(r, "gpuscope_default", lambda: with_truth(torch, lambda: gpuscope_mode(fn, None)))
    cell(r, "gpuscope_graph", lambda: with_truth(torch, lambda: gpuscope_mode(fn, "graph")))
    cell(r, "gpuscope_kernel", lambda: gpuscope_mode(fn, "kernel"))
    cell(r, "naive_loop", lambda: with_truth(torch, lambda: {"us": naive_loop(torch, fn)}))
    cell(r, "do_bench_median", lambda: with_truth(torch, lambda: do_bench(fn)))
    cell(r, "torch_utils_benchmark", lambda: with_truth(torch, lambda: torch_benchmark(fn)))
    cell(r, "kernel_hot_after", lambda: kernel_time(torch, fn))
    cell(r, "kernel_cold", lambda: kernel_time(torch, fn, flush, calls=50))
    cell(r, "gpuscope_cold", lambda: with_truth(torch, lambda: gpuscope_mode(fn, "cold")))
    before, after = r.get("kernel_hot_before", {}), r.get("kernel_hot_after", {})
    if "us" in before and "us" in after:
        r["kernel_hot"] = {
            "us": (before["us"] + after["us"]) / 2,
            "drift": after["us"] / before["us"] - 1,
            "kernels_per_call": before["kernels_per_call"],
        }
    return r


# --- A/B ------------------------------------------------------------------------------------


def compare_once(a: Fn, b: Fn) -> dict[str, Any]:
    begin = time.perf_counter()
    c = gpuscope.compare(a, b, check=False)
    return {
        "verdict": c.verdict,
        "ratio": c.ratio,
        "ci": [c.ci_low, c.ci_high],
        "rounds": c.rounds,
        "stop_reason": c.stop_reason,
        "wall_s": time.perf_counter() - begin,
    }


def do_bench_pair(a: Fn, b: Fn) -> dict[str, float]:
    begin = time.perf_counter()
    ra, rb = do_bench(a)["us"], do_bench(b)["us"]
    return {"ratio": rb / ra, "wall_s": time.perf_counter() - begin}


def ab_experiments(torch: Any) -> dict[str, Any]:
    """A/A and planted +2 % (2 % more elements in a bandwidth-bound in-place add)."""
    n = 64 << 20
    big = int(n * 1.02)
    x = torch.randn(big, device="cuda")
    small = torch.randn(1 << 20, device="cuda")
    a: Fn = lambda: x[:n].add_(1)  # noqa: E731
    a_again: Fn = lambda: x[:n].add_(1)  # noqa: E731
    b: Fn = lambda: x[:big].add_(1)  # noqa: E731
    s1: Fn = lambda: small.add_(1)  # noqa: E731
    s2: Fn = lambda: small.add_(1)  # noqa: E731
    out: dict[str, Any] = {}
    kt_a, kt_b = kernel_time(torch, a), kernel_time(torch, b)
    out["planted_ratio_kernel"] = kt_b["us"] / kt_a["us"]
    log(f"A/B: planted ratio by the profiler {out['planted_ratio_kernel']:.4f}")
    for label, (x1, x2) in {
        "aa_64M": (a, a_again),
        "ab_64M_plus2pct": (a, b),
        "aa_1M": (s1, s2),
    }.items():
        runs = [
            cell({}, f"{label}#{i}", lambda x1=x1, x2=x2: compare_once(x1, x2))
            for i in range(REPEATS)
        ]
        out[label] = [r for r in runs if r is not None]
        if label != "aa_1M":
            out[f"{label}_do_bench"] = [
                cell({}, f"{label} do_bench#{i}", lambda x1=x1, x2=x2: do_bench_pair(x1, x2))
                for i in range(REPEATS // 2)
            ]
    return out


# --- report ---------------------------------------------------------------------------------


def _us(r: dict[str, Any], key: str, field: str = "us") -> float | None:
    v = r.get(key)
    return v.get(field) if isinstance(v, dict) else None


def _err(value: float | None, truth: float | None) -> str:
    if value is None or truth is None:
        return "–"
    return f"{value:.2f} ({(value / truth - 1) * 100:+.1f} %)"


def _own(r: dict[str, Any], key: str) -> str:
    """The method's value and its error against the kernel time of its own profiled repeat."""
    return _err(_us(r, key), _us(r, key, "truth_us"))


def _meets(value: float | None, truth: float | None, rel: float, floor_us: float) -> str:
    if value is None or truth is None:
        return "–"
    return "yes" if abs(value - truth) <= max(rel * truth, floor_us) else "**no**"


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def accuracy_table(cases: dict[str, dict[str, Any]]) -> list[str]:
    head = (
        "| case | kernel time µs (default's runs) | gpuscope default (hot) | within 3 % or 0.3 µs "
        "| gpuscope graph | graph within 3 % (< 10 µs) | naive loop | do_bench (median) "
        "| torch.utils.benchmark | kernel time, 200 back-to-back | gpuscope kernel |"
    )
    lines = [head, "|" + "---|" * 11]
    for name, r in cases.items():
        truth = _us(r, "gpuscope_default", "truth_us")
        graph, graph_truth = _us(r, "gpuscope_graph"), _us(r, "gpuscope_graph", "truth_us")
        small = graph_truth is not None and graph_truth < 10
        sustained = _us(r, "kernel_hot")
        cells = [
            name,
            _f(truth),
            _own(r, "gpuscope_default"),
            _meets(_us(r, "gpuscope_default"), truth, 0.03, 0.3),
            _own(r, "gpuscope_graph"),
            _meets(graph, graph_truth, 0.03, 0.0) if small else "n/a",
            _own(r, "naive_loop"),
            _own(r, "do_bench_median"),
            _own(r, "torch_utils_benchmark"),
            _f(sustained),
            _err(_us(r, "gpuscope_kernel"), sustained),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def cold_table(cases: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| case | kernel time µs, cold (cold runs) | gpuscope cold "
        "| kernel time, 50 flushed calls |",
        "|---|---|---|---|",
    ]
    for name, r in cases.items():
        truth = _us(r, "gpuscope_cold", "truth_us")
        lines.append(
            f"| {name} | {_f(truth)} | {_own(r, 'gpuscope_cold')} | {_f(_us(r, 'kernel_cold'))} |"
        )
    return lines


def profiler_effect_table(cases: dict[str, dict[str, Any]]) -> list[str]:
    keys = ("gpuscope_default", "gpuscope_graph", "gpuscope_cold", "do_bench_median")
    lines = [
        "| case | " + " | ".join(f"{k}: plain / under profiler" for k in keys) + " |",
        "|---|" + "---|" * len(keys),
    ]
    for name, r in cases.items():
        cells = [f"{_f(_us(r, k))} / {_f(_us(r, k, 'profiled_us'))}" for k in keys]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def detail_table(cases: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| case | time to result: gpuscope / do_bench / t.u.benchmark (s) "
        "| gpuscope samples × calls, stop, ±CI | first call µs | host µs/call "
        "| guard underruns | kernel drift |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in cases.items():
        g = r.get("gpuscope_default") or {}
        walls = [
            (r.get(k) or {}).get("wall_s")
            for k in ("gpuscope_default", "do_bench_median", "torch_utils_benchmark")
        ]
        wall = " / ".join(f"{w:.2f}" if w is not None else "–" for w in walls)
        drift = (r.get("kernel_hot") or {}).get("drift")
        lines.append(
            f"| {name} | {wall} | {g.get('n', '–')} × {g.get('calls_per_sample', '–')}, "
            f"{g.get('stop_reason', '–')}, ±{(g.get('ci_halfwidth') or 0) * 100:.2f} % | "
            f"{(g.get('first_call_us') or 0):.0f} | {(g.get('host_us_per_call') or 0):.1f} | "
            f"{g.get('guard_underruns', '–')} | "
            + (f"{drift * 100:+.1f} %" if drift is not None else "–")
            + " |"
        )
    return lines


def ab_table(ab: dict[str, Any]) -> list[str]:
    lines = [
        f"Planted ratio by the profiler's kernel time: {ab.get('planted_ratio_kernel', 0.0):.4f}",
        "",
        "| experiment | verdicts (of runs) | median ratio | median CI width "
        "| median time to verdict s | do_bench pair: ratio range, time s |",
        "|---|---|---|---|---|---|",
    ]
    for label in ("aa_64M", "ab_64M_plus2pct", "aa_1M"):
        runs = ab.get(label) or []
        if not runs:
            lines.append(f"| {label} | – | – | – | – | – |")
            continue
        counts: dict[str, int] = {}
        for run in runs:
            counts[run["verdict"]] = counts.get(run["verdict"], 0) + 1
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        ratio = statistics.median(run["ratio"] for run in runs)
        width = statistics.median(run["ci"][1] - run["ci"][0] for run in runs)
        wall = statistics.median(run["wall_s"] for run in runs)
        pairs = [p for p in ab.get(f"{label}_do_bench") or [] if p]
        db = "–"
        if pairs:
            rs = [p["ratio"] for p in pairs]
            db = f"{min(rs):.4f}–{max(rs):.4f}, {statistics.median(p['wall_s'] for p in pairs):.2f}"
        lines.append(
            f"| {label} | {verdicts} (of {len(runs)}) | {ratio:.4f} | {width:.4f} "
            f"| {wall:.2f} | {db} |"
        )
    return lines


def environment(torch: Any) -> dict[str, Any]:
    from gpuscope.timing.env import gpu_environment

    env = gpu_environment(torch, torch.cuda.current_device())
    info: dict[str, Any] = {
        "device": env.device,
        "driver": env.driver,
        "runtime": env.runtime,
        "torch": env.torch,
        "l2_bytes": env.l2_bytes,
        "date": datetime.date.today().isoformat(),
    }
    try:
        import triton

        info["triton"] = triton.__version__
    except ImportError:
        info["triton"] = None
    return info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("bench-data"))
    parser.add_argument("--only", help="run only cases whose name contains this")
    parser.add_argument("--skip-ab", action="store_true")
    args = parser.parse_args()
    import torch

    torch.cuda.init()
    HARNESS_KERNELS.update(learn_harness_kernels(torch))
    env = environment(torch)
    log("environment", env)
    flush_buf = torch.empty(
        flush_bytes_for(torch, torch.cuda.current_device()), dtype=torch.uint8, device="cuda"
    )
    flush: Fn = flush_buf.zero_
    results: dict[str, Any] = {"env": env, "cases": {}}
    begin = time.perf_counter()
    for name, setup in make_cases(torch):
        if args.only and args.only not in name:
            continue
        results["cases"][name] = run_case(torch, name, setup, flush)
        torch.cuda.empty_cache()
    if not args.skip_ab:
        results["ab"] = ab_experiments(torch)
    peaks: dict[str, Any] = {}
    cell(peaks, "peaks", lambda: _peaks(torch))
    results["peaks"] = peaks.get("peaks")
    results["total_s"] = time.perf_counter() - begin
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "accuracy.json").write_text(json.dumps(results, indent=1, default=str))
    report = render(results)
    (args.out / "accuracy.md").write_text(report)
    print(report)
    return 0


def _peaks(torch: Any) -> dict[str, float]:
    from gpuscope.timing.env import gpu_environment
    from gpuscope.timing.harness import bench
    from gpuscope.timing.peaks import measure_peaks

    p = measure_peaks(torch, gpu_environment(torch, torch.cuda.current_device()), bench)
    return {"tflops": p.tflops, "gbps": p.gbps}


def render(results: dict[str, Any]) -> str:
    env = results["env"]
    cases = results["cases"]
    parts = [
        f"Device: {env['device']}, driver {env['driver']}, {env['runtime']}, torch {env['torch']}, "
        f"triton {env['triton']}, {env['date']}; total {results['total_s']:.0f} s",
        "",
        "Hot (back-to-back calls, warm caches). µs per call; each method's error is against the "
        "kernel time of a profiled repeat of that same method (same cache, clock and power state; "
        "do_bench's runs are flushed, so its truth is cold):",
        "",
        *accuracy_table(cases),
        "",
        "Cold (cache flushed before each call):",
        "",
        *cold_table(cases),
        "",
        "Effect of the profiler on the timed value (plain run / profiled repeat):",
        "",
        *profiler_effect_table(cases),
        "",
        *detail_table(cases),
        "",
    ]
    if "ab" in results:
        parts += [
            "A/B experiments (gpuscope.compare, default threshold 1 %):",
            "",
            *ab_table(results["ab"]),
            "",
        ]
    if results.get("peaks"):
        p = results["peaks"]
        parts.append(
            f"Measured peaks: {p['tflops']:.0f} TFLOP/s (bf16 8192³), {p['gbps']:.0f} GB/s (copy)"
        )
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
