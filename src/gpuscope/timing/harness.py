"""`bench()`: time one callable and return a `Measurement`.

    >>> import torch, gpuscope
    >>> a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    >>> m = gpuscope.bench(torch.matmul, a, a)                  # doctest: +SKIP
    >>> print(m.mode, m.stats.median, m.stop_reason)           # doctest: +SKIP
    hot 171.4 ci

Order of work: first call (timed apart: compile, lazy load) → calibrate calls per sample →
warm up until two windows agree → on a GPU, load the device until a power-limited callable is
in its sustained state (`sustain.py`; state "sustained", the default) → sample until the
median's CI half-width is under the target or the budget is spent. Kernel mode replaces the last
step by one profiled run.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from gpuscope.errors import InputError
from gpuscope.peaks import Measured
from gpuscope.timing import loop, sustain
from gpuscope.timing._torch import gpu_torch, require_gpu_torch
from gpuscope.timing.clocks import Monitor, NullMonitor, open_monitor
from gpuscope.timing.env import cpu_environment, gpu_environment
from gpuscope.timing.measurement import Environment, Measurement, PowerState, Work
from gpuscope.timing.options import AUTO_KERNEL_BELOW_US, DEFAULT_GPU_MODE, GPU_MODES, BenchOptions
from gpuscope.timing.peaks import device_peaks
from gpuscope.timing.timer import Clock, CpuTimer, Timer

_KERNEL_CALLS = (20, 500)  # bounds of the profiled call count in kernel mode


def bench(fn: Callable[..., Any], *args: Any, **options: Any) -> Measurement:
    """Time `fn(*args, **kwargs)`; see `BenchOptions` for every option.

    On a GPU (PyTorch with CUDA or ROCm) the default mode ("auto") is "hot": device events
    around back-to-back calls with a guard kernel ahead of them. When that gives under 20 µs per
    call, the result is the profiler's kernel time ("kernel" mode) instead, because kernels on
    one stream start ~1 µs apart and events cannot resolve µs-scale work; the hot median is kept
    in `options["hot_median_us"]`. Without a GPU the mode is "cpu", the host wall clock, labelled
    as such. Raises InputError/ConfigError/ToolError.
    """
    opts = BenchOptions.from_kwargs(options)
    if not callable(fn):
        raise InputError(f"bench() needs a callable, got {type(fn).__name__}")
    mode, torch = resolve_mode(opts)
    clock = opts.clock or time.perf_counter
    with _on_device(torch, opts.device):
        env = opts.env or environment(torch)
        monitor = opts.monitor or _monitor(env, torch, clock)
        if mode == "kernel":
            assert torch is not None
            m = _bench_kernel(torch, fn, args, opts, env, clock, monitor)
        else:
            timer = opts.timer or make_timer(mode, torch, fn, args, opts)
            m = _bench_events(timer, fn, opts, env, clock, monitor)
            if _auto_to_kernel(opts, m, torch):
                assert torch is not None
                m = _retime_by_kernel(torch, fn, args, opts, env, clock, monitor, m)
        return _with_work(m, torch, opts)


def _monitor(env: Environment, torch: ModuleType | None, clock: Clock) -> Monitor:
    return open_monitor(env, torch, clock) if torch is not None else NullMonitor()


def _auto_to_kernel(opts: BenchOptions, hot: Measurement, torch: ModuleType | None) -> bool:
    return (
        opts.mode == "auto"
        and opts.timer is None
        and torch is not None
        and hot.mode == "hot"
        and hot.median_us < AUTO_KERNEL_BELOW_US
    )


def _retime_by_kernel(
    torch: ModuleType,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    opts: BenchOptions,
    env: Environment,
    clock: Clock,
    monitor: Monitor,
    hot: Measurement,
) -> Measurement:
    """Kernel mode for a µs-scale callable; the hot result is kept beside it (or returned, with
    the reason, when the profiler cannot run here — e.g. another profiler holds CUPTI)."""
    import msgspec

    if _profiler_running(torch):
        note = "a profiler is already running here: kept the hot result (kernel mode needs it)"
        return msgspec.structs.replace(hot, options=hot.options | {"auto": note})
    # the hot run already loaded the device: a limit it found is still there, none found is none
    loaded = hot.power is not None and hot.power.reported != sustain.UNLIMITED
    try:
        m = _bench_kernel(torch, fn, args, opts, env, clock, monitor, loaded)
    except Exception as error:  # any profiler failure: keep the hot result
        note = f"kernel mode failed ({type(error).__name__}: {error}); hot result kept"
        return msgspec.structs.replace(hot, options=hot.options | {"auto": note})
    reason = (
        f"hot median {hot.median_us:.2f} µs < {AUTO_KERNEL_BELOW_US:g} µs: reported the "
        "profiler's kernel time (events include the ~1 µs start gap between kernels)"
    )
    extra: dict[str, Any] = {
        "auto": reason,
        "hot_median_us": round(hot.median_us, 4),
        "hot_samples": len(hot.samples_us),
    }
    return msgspec.structs.replace(
        m, elapsed_s=m.elapsed_s + hot.elapsed_s, options=m.options | extra
    )


def resolve_mode(opts: BenchOptions) -> tuple[str, ModuleType | None]:
    """The mode to run and torch when a GPU mode needs it."""
    if opts.timer is not None:
        return opts.timer.mode, None
    if opts.mode == "auto":
        torch = gpu_torch()
        return (DEFAULT_GPU_MODE, torch) if torch is not None else ("cpu", None)
    if opts.mode == "cpu":
        return "cpu", None
    return opts.mode, require_gpu_torch(opts.mode)


@contextlib.contextmanager
def _on_device(torch: ModuleType | None, index: int | None) -> Iterator[None]:
    if torch is None or index is None:
        yield
        return
    with torch.cuda.device(index):
        yield


def environment(torch: ModuleType | None) -> Environment:
    if torch is None:
        return cpu_environment()
    return gpu_environment(torch, int(torch.cuda.current_device()))


def make_timer(
    mode: str,
    torch: ModuleType | None,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    opts: BenchOptions,
) -> Timer:
    """The timer for `mode` (torch is None only for "cpu")."""
    if mode == "cpu" or torch is None:
        return CpuTimer(fn, args, opts.kwargs)
    from gpuscope.timing import gpu

    if mode == "cold":
        return gpu.ColdTimer(torch, fn, args, opts.kwargs, opts.flush_bytes)
    if mode == "graph":
        return gpu.GraphTimer(torch, fn, args, opts.kwargs)
    return gpu.EventTimer(torch, fn, args, opts.kwargs)


def _name(fn: Callable[..., Any], opts: BenchOptions) -> str:
    return opts.name or str(getattr(fn, "__qualname__", None) or repr(fn))


def _bench_events(
    timer: Timer,
    fn: Callable[..., Any],
    opts: BenchOptions,
    env: Environment,
    clock: Clock,
    monitor: Monitor,
) -> Measurement:
    first = timer.first_call()
    monitor.poll(force=True)
    power: PowerState | None = None
    if timer.mode in GPU_MODES:
        out = sustain.run(timer, opts.stop_rule(), opts.sustain_rule(), opts.state, clock, monitor)
        got, power = out.sampled, out.power
    else:
        got = loop.run(timer, opts.stop_rule(), clock, monitor.poll)
    monitor.poll(force=True)
    recorded = opts.recorded()
    if hasattr(timer, "flush_bytes"):
        recorded["flush_bytes"] = int(timer.flush_bytes)
    return Measurement(
        name=_name(fn, opts),
        mode=timer.mode,
        timer=timer.name,
        samples_us=got.samples,
        calls_per_sample=got.calls,
        stop_reason=got.stop_reason,
        target_ci=opts.target_ci,
        elapsed_s=got.elapsed_s,
        env=env,
        first_call_us=first,
        warmup_us=got.warmup,
        warmup_converged=got.warmup_converged,
        options=recorded,
        host_us_per_call=timer.host_us_per_call(),
        guard_underruns=timer.guard_underruns(),
        clock_source=monitor.source,
        clocks=monitor.samples(),
        power=power,
    )


def _bench_kernel(
    torch: ModuleType,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    opts: BenchOptions,
    env: Environment,
    clock: Clock,
    monitor: Monitor,
    load: bool = True,
) -> Measurement:
    """Profile one batch of calls; with state sustained/both (and `load`), after a load phase
    on the hot timer, so a power-limited callable is profiled at its sustained clock."""
    from gpuscope.timing import gpu, kernel

    hot = gpu.EventTimer(torch, fn, args, opts.kwargs)
    rule = opts.stop_rule()
    start = clock()
    first = hot.first_call()
    calls, seen = loop.calibrate(hot)
    warm, ok = loop.warm_up(hot, calls, rule, clock, monitor.poll)
    per_call = statistics.median(warm) if warm else 1.0
    power = _kernel_load(hot, warm, per_call, opts, clock, monitor) if load else None
    n = opts.kernel_calls or _kernel_calls(per_call, opts.budget_s)
    flush = None
    if opts.flush:
        size = opts.flush_bytes or gpu.flush_bytes_for(torch, torch.cuda.current_device())
        flush = torch.empty(size, dtype=torch.uint8, device="cuda").zero_
    kwargs = opts.kwargs
    got = kernel.profile(torch, lambda: fn(*args, **kwargs), n, flush)
    monitor.poll(force=True)
    return Measurement(
        name=_name(fn, opts),
        mode="kernel",
        timer=kernel.TIMER + ("+flush" if flush else ""),
        samples_us=got.per_call_us,
        calls_per_sample=1,
        stop_reason=loop.STOP_FIXED,
        target_ci=opts.target_ci,
        elapsed_s=clock() - start,
        env=env,
        first_call_us=first,
        warmup_us=tuple(seen + warm),
        warmup_converged=ok,
        options=opts.recorded() | {"kernel_calls": n},
        host_us_per_call=hot.host_us_per_call(),
        kernels_per_call=got.kernels_per_call,
        kernel_names=got.names,
        clock_source=monitor.source,
        clocks=monitor.samples(),
        power=power,
    )


def _kernel_load(
    hot: Timer,
    warm: list[float],
    per_call: float,
    opts: BenchOptions,
    clock: Clock,
    monitor: Monitor,
) -> PowerState | None:
    """The load phase before kernel mode's profiled batch (None for state "burst")."""
    if opts.state == sustain.BURST:
        return None
    srule = opts.sustain_rule()
    before = list(monitor.samples())
    calls = sustain.load_calls(hot, per_call, srule)
    loaded = sustain.Streamed(hot)
    phase = sustain.load(loaded, calls, warm, srule, clock, monitor, sustain.max_mhz(before))
    loaded.close()
    return sustain.loaded_power(opts.state, phase, srule, warm, before, monitor, clock())


def _profiler_running(torch: ModuleType) -> bool:
    """Is a torch.profiler / Kineto session active (e.g. the caller's own)? Starting a second
    one would stop theirs."""
    probe = getattr(getattr(torch._C, "_autograd", None), "_profiler_enabled", None)
    return bool(probe()) if callable(probe) else False


def _kernel_calls(per_call_us: float, budget_s: float) -> int:
    lo, hi = _KERNEL_CALLS
    wanted = int(0.5 * budget_s * 1e6 / per_call_us) if per_call_us > 0 else hi
    return max(lo, min(hi, wanted))


def _with_work(m: Measurement, torch: ModuleType | None, opts: BenchOptions) -> Measurement:
    if opts.flops is None and opts.bytes is None:
        return m
    import msgspec

    work = Work(flops=opts.flops, bytes=opts.bytes)
    peaks: Measured | None = None
    if torch is not None and opts.peaks and m.env.vendor != "cpu":
        peaks = device_peaks(torch, m.env, bench)
    return msgspec.structs.replace(m, work=work, peaks=peaks)
