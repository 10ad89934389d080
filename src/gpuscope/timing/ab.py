"""A/B comparison: correctness first, then interleaved timing and a verdict with a CI.

    >>> c = gpuscope.compare(baseline, candidate, (x, w))      # doctest: +SKIP
    >>> c.verdict, c.speedup, c.speedup_ci                     # doctest: +SKIP
    ('FASTER', 1.31, (1.29, 1.33))

Timing runs in rounds: a block of A then a block of B (the order alternates every round, so a
linear drift hits both arms alike). After `min_rounds`, a bootstrap CI of
ratio = median(B) / median(A) is checked on a geometric schedule; with a practical threshold δ:
FASTER if the CI lies below 1 − δ, SLOWER if above 1 + δ, SAME if inside [1 − δ, 1 + δ],
otherwise INCONCLUSIVE (more samples are taken until the budget runs out).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from gpuscope.errors import ConfigError
from gpuscope.schemas import BENCH as SCHEMA
from gpuscope.timing import loop
from gpuscope.timing.bootstrap import RatioCI, ratio_ci
from gpuscope.timing.clocks import Monitor, NullMonitor, open_monitor
from gpuscope.timing.correctness import Correctness, compare_outputs, outputs_of, upcast
from gpuscope.timing.harness import environment, make_timer, resolve_mode
from gpuscope.timing.measurement import Environment, Measurement, encode_json
from gpuscope.timing.options import BenchOptions, refuse_unknown
from gpuscope.timing.record import to_builtins
from gpuscope.timing.timer import Clock, Timer

FASTER, SLOWER, SAME, INCONCLUSIVE, INCORRECT = (
    "FASTER",
    "SLOWER",
    "SAME",
    "INCONCLUSIVE",
    "INCORRECT",
)
STOP_DECIDED = "decided"
STOP_ROUNDS = "max-rounds"
STOP_INCORRECT = "incorrect"


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    """Verdict of B against A. ratio = median(B) / median(A): below 1 means B is faster."""

    schema: str = SCHEMA
    kind: str = "comparison"
    verdict: str
    threshold: float
    correctness: Correctness
    a: Measurement | None = None
    b: Measurement | None = None
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    level: float = 0.95
    block: int = 0
    rounds: int = 0
    stop_reason: str = STOP_INCORRECT
    correctness_a: Correctness | None = None
    elapsed_s: float = 0.0

    @property
    def speedup(self) -> float | None:
        """How many times faster B is than A (median(A) / median(B))."""
        return 1 / self.ratio if self.ratio else None

    @property
    def speedup_ci(self) -> tuple[float, float] | None:
        if not self.ci_low or not self.ci_high:
            return None
        return 1 / self.ci_high, 1 / self.ci_low

    def slower_than(self, percent: float) -> bool:
        """B is slower than A by more than `percent` % with the CI's confidence."""
        return self.ci_low is not None and self.ci_low > 1 + percent / 100


def verdict(ci: RatioCI, threshold: float) -> str:
    """FASTER / SLOWER / SAME / INCONCLUSIVE for a CI of median(B)/median(A)."""
    if ci.high < 1 - threshold:
        return FASTER
    if ci.low > 1 + threshold:
        return SLOWER
    if ci.low >= 1 - threshold and ci.high <= 1 + threshold:
        return SAME
    return INCONCLUSIVE


@dataclass(frozen=True)
class CompareOptions:
    """Keyword options of `compare()`; times in seconds, fractions for threshold.

    threshold: practical difference δ (0.01 = 1 %). block: samples per arm per round.
    reference: a float64 reference callable (inputs are upcast); rtol/atol override the
    dtype defaults. inputs_b: other inputs for B (default: the same as A).
    timers: (A, B) timers to inject (tests, custom timers).
    """

    mode: str = "auto"
    kwargs: dict[str, Any] = field(default_factory=dict)
    inputs_b: Any = None
    names: tuple[str | None, str | None] = (None, None)
    threshold: float = 0.01
    level: float = 0.95
    block: int = 4
    min_rounds: int = 10
    max_rounds: int = 500
    budget_s: float = 2.0
    warmup_budget_s: float = 0.5
    resamples: int = 2000
    seed: int = 0
    check: bool = True
    rtol: float | None = None
    atol: float | None = None
    reference: Callable[..., Any] | None = None
    flush_bytes: int | None = None
    device: int | None = None
    timers: tuple[Timer, Timer] | None = None
    clock: Clock | None = None
    env: Environment | None = None

    @classmethod
    def from_kwargs(cls, options: dict[str, Any]) -> CompareOptions:
        refuse_unknown(cls, options, "compare")
        opts = cls(**options)
        if opts.mode == "kernel":
            raise ConfigError("compare() times with events; use mode hot, cold, graph or cpu")
        if not 0 < opts.threshold < 1 or opts.block < 1 or opts.min_rounds < 2:
            raise ConfigError("compare() needs 0 < threshold < 1, block >= 1, min_rounds >= 2")
        return opts

    def bench_options(self) -> BenchOptions:
        return BenchOptions(
            mode=self.mode,
            kwargs=self.kwargs,
            flush_bytes=self.flush_bytes,
            device=self.device,
            warmup_budget_s=self.warmup_budget_s,
            budget_s=self.budget_s,
        )


def as_args(inputs: Any) -> tuple[Any, ...]:
    """Positional arguments from `inputs`: a tuple/list is spread, anything else is one arg."""
    if inputs is None:
        return ()
    return tuple(inputs) if isinstance(inputs, tuple | list) else (inputs,)


def compare(
    a: Callable[..., Any], b: Callable[..., Any], inputs: Any = (), **options: Any
) -> Comparison:
    """Check B against A, then time them interleaved; see `CompareOptions` for options."""
    opts = CompareOptions.from_kwargs(options)
    args_a = as_args(inputs)
    args_b = args_a if opts.inputs_b is None else as_args(opts.inputs_b)
    correct, correct_a = check(a, b, args_a, args_b, opts)
    if not (correct.ok and (correct_a is None or correct_a.ok)):
        return Comparison(
            verdict=INCORRECT,
            threshold=opts.threshold,
            correctness=correct,
            correctness_a=correct_a,
        )
    return _timed(a, b, args_a, args_b, opts, correct, correct_a)


def check(
    a: Callable[..., Any],
    b: Callable[..., Any],
    args_a: tuple[Any, ...],
    args_b: tuple[Any, ...],
    opts: CompareOptions,
) -> tuple[Correctness, Correctness | None]:
    """B against A — or both against the float64 reference when one is given."""
    if not opts.check:
        return Correctness(checked=False, ok=True, detail="check disabled"), None
    out_a = outputs_of(a, args_a, opts.kwargs)
    out_b = outputs_of(b, args_b, opts.kwargs)
    if opts.reference is None:
        return compare_outputs(out_b, out_a, opts.rtol, opts.atol), None
    ref = outputs_of(opts.reference, upcast(args_a), upcast(opts.kwargs))
    return (
        compare_outputs(out_b, ref, opts.rtol, opts.atol, against="reference"),
        compare_outputs(out_a, ref, opts.rtol, opts.atol, against="reference"),
    )


@dataclass
class _Arm:
    timer: Timer
    name: str
    first_us: float = 0.0
    calls: int = 1
    warmup: list[float] = field(default_factory=list)
    warm: bool = True
    rounds: list[list[float]] = field(default_factory=list)

    def prepare(self, rule: loop.StopRule, clock: Clock, tick: loop.Tick) -> None:
        self.first_us = self.timer.first_call()
        self.calls, seen = loop.calibrate(self.timer)
        warm, self.warm = loop.warm_up(self.timer, self.calls, rule, clock, tick)
        self.warmup = seen + warm

    def block(self, size: int, tick: loop.Tick) -> None:
        values = []
        for _ in range(size):
            values.append(self.timer.sample(self.calls))
            tick()
        self.rounds.append(values)


def _timed(
    a: Callable[..., Any],
    b: Callable[..., Any],
    args_a: tuple[Any, ...],
    args_b: tuple[Any, ...],
    opts: CompareOptions,
    correct: Correctness,
    correct_a: Correctness | None,
) -> Comparison:
    bench_opts = opts.bench_options()
    mode, torch = resolve_mode(bench_opts)
    clock = opts.clock or time.perf_counter
    env = opts.env or environment(torch)
    monitor: Monitor = open_monitor(env, torch, clock) if torch is not None else NullMonitor()
    timers = opts.timers or (
        make_timer(mode, torch, a, args_a, bench_opts),
        make_timer(mode, torch, b, args_b, bench_opts),
    )
    arms = (
        _Arm(timers[0], _label(a, opts.names[0])),
        _Arm(timers[1], _label(b, opts.names[1])),
    )
    rule = bench_opts.stop_rule()
    start = clock()
    for arm in arms:
        arm.prepare(rule, clock, monitor.poll)
    ci, decided, reason = _rounds(arms, opts, clock, monitor)
    elapsed = clock() - start
    ma, mb = (_measurement(arm, opts, env, monitor, reason, elapsed) for arm in arms)
    return Comparison(
        verdict=decided,
        threshold=opts.threshold,
        correctness=correct,
        correctness_a=correct_a,
        a=ma,
        b=mb,
        ratio=ci.ratio,
        ci_low=ci.low,
        ci_high=ci.high,
        level=ci.level,
        block=opts.block,
        rounds=len(arms[0].rounds),
        stop_reason=reason,
        elapsed_s=elapsed,
    )


def _rounds(
    arms: tuple[_Arm, _Arm], opts: CompareOptions, clock: Clock, monitor: Monitor
) -> tuple[RatioCI, str, str]:
    start = clock()
    next_check = opts.min_rounds
    ci = RatioCI(ratio=math.nan, low=math.nan, high=math.nan, level=opts.level)
    for r in range(1, opts.max_rounds + 1):
        order = arms if r % 2 else arms[::-1]
        for arm in order:
            arm.block(opts.block, monitor.poll)
        out_of_time = clock() - start >= opts.budget_s
        if r >= next_check or (out_of_time and r >= opts.min_rounds) or r == opts.max_rounds:
            next_check = max(r + 1, math.ceil(r * 1.25))
            ci = ratio_ci(arms[0].rounds, arms[1].rounds, opts.level, opts.resamples, opts.seed)
            decided = verdict(ci, opts.threshold)
            if decided != INCONCLUSIVE:
                return ci, decided, STOP_DECIDED
            if out_of_time:
                return ci, decided, loop.STOP_BUDGET
    return ci, INCONCLUSIVE, STOP_ROUNDS


def _label(fn: Callable[..., Any], name: str | None) -> str:
    return name or str(getattr(fn, "__qualname__", None) or repr(fn))


def _measurement(
    arm: _Arm,
    opts: CompareOptions,
    env: Environment,
    monitor: Monitor,
    reason: str,
    elapsed: float,
) -> Measurement:
    s = arm.timer
    return Measurement(
        name=arm.name,
        mode=s.mode,
        timer=s.name,
        samples_us=tuple(v for block in arm.rounds for v in block),
        calls_per_sample=arm.calls,
        stop_reason=reason,
        target_ci=opts.threshold,
        elapsed_s=elapsed,
        env=env,
        first_call_us=arm.first_us,
        warmup_us=tuple(arm.warmup),
        warmup_converged=arm.warm,
        options={"threshold": opts.threshold, "block": opts.block, "requested_mode": opts.mode},
        host_us_per_call=s.host_us_per_call(),
        guard_underruns=s.guard_underruns(),
        clock_source=monitor.source,
        clocks=monitor.samples(),
    )


def comparison_to_builtins(c: Comparison) -> dict[str, Any]:
    """The JSON object of `c`, each arm with its derived statistics and warnings."""
    record: dict[str, Any] = msgspec.to_builtins(c)
    for arm in ("a", "b"):
        m = getattr(c, arm)
        if m is not None:
            record[arm] = to_builtins(m)
    record["speedup"] = c.speedup
    record["speedup_ci"] = list(c.speedup_ci) if c.speedup_ci else None
    return record


def comparison_to_json(c: Comparison) -> bytes:
    return encode_json(comparison_to_builtins(c))
