"""Warnings derived from a Measurement: what makes its numbers less trustworthy."""

from __future__ import annotations

from gpuscope.timing.clocks import slowdowns
from gpuscope.timing.loop import STOP_BUDGET, STOP_MAX
from gpuscope.timing.measurement import ClockSample, Measurement
from gpuscope.timing.sustain import BURST, SUSTAINED, UNSETTLED

UNSTABLE_CV = 0.10  # coefficient of variation above which samples are called unstable
OUTLIER_RATIO = 3.0  # max / median above which outliers are reported
CLOCK_DROP = 0.10  # relative SM clock drop (min vs max reading) worth reporting
HOST_BOUND_RATIO = 2.0  # host enqueue time / device time above which eager code is host-bound
LAUNCH_GAP_SCALE_US = 10.0  # below this per-call time, the device's gap between launches matters


def warnings_for(m: Measurement) -> list[str]:
    """One line per problem found, most important first; [] when the run looks clean."""
    checks = (
        _mode,
        _power,
        _stability,
        _stopping,
        _warmup,
        _guard,
        _throttling,
        _host_bound,
        _launch_gap,
        _kernels,
    )
    return [line for check in checks for line in check(m)]


def _mode(m: Measurement) -> list[str]:
    if m.mode == "cpu":
        return ["cpu-wallclock: host wall-clock time, not GPU device time"]
    if m.mode in ("hot", "cold", "graph") and "guard" not in m.timer:
        return ["no guard kernel (torch.cuda._sleep missing): host launch latency may leak in"]
    return []


def _stability(m: Measurement) -> list[str]:
    s = m.stats
    out = []
    if s.n > 1 and s.cv > UNSTABLE_CV:
        out.append(f"unstable: CV {s.cv:.0%} > {UNSTABLE_CV:.0%} (other work running? clocks?)")
    if s.p50 > 0 and s.max > OUTLIER_RATIO * s.p50:
        out.append(f"outliers: max is {s.max / s.p50:.1f}× the median (interference or preemption)")
    if s.p50 <= 0:
        out.append("median is 0: the callable launched no timed work in this mode")
    return out


def _stopping(m: Measurement) -> list[str]:
    if m.stop_reason not in (STOP_BUDGET, STOP_MAX):
        return []
    got = m.stats.ci_halfwidth
    why = "time budget" if m.stop_reason == STOP_BUDGET else "sample cap"
    return [
        f"CI target ±{m.target_ci:.1%} not reached (±{got:.1%} after {m.stats.n} samples, "
        f"{why}); raise the budget for a tighter result"
    ]


def _warmup(m: Measurement) -> list[str]:
    if m.warmup_converged:
        return []
    return ["warm-up did not converge within its budget: timings were still drifting"]


def _guard(m: Measurement) -> list[str]:
    if m.guard_underruns == 0:
        return []
    return [
        f"guard kernel ran out {m.guard_underruns}× before the calls were enqueued "
        "(samples retaken with a longer guard)"
    ]


def _power(m: Measurement) -> list[str]:
    """Which power state the median is in, when it matters (module doc of sustain.py)."""
    p = m.power
    if p is None:
        return []
    why = "; ".join(p.signals) or "no signal"
    burst = p.burst_median_us
    if p.reported == SUSTAINED:
        at = f" at SM {p.sampled_mhz:.0f} MHz" if p.sampled_mhz else ""
        line = (
            f"power-limited ({why}): the median is the SUSTAINED figure, sampled after "
            f"{p.load_s:.1f} s of load{at}"
        )
        if burst and m.stats.p50 > 0:
            line += (
                f"; a short burst gets {burst:.4g} µs ({burst / m.stats.p50 - 1:+.1%}), "
                "which no long loop of it does"
            )
        return [line]
    if p.reported == UNSETTLED:
        return [
            f"power-limited ({why}) and not settled after {p.load_s:.1f} s of load (window "
            f"medians {_windows(p.windows_us)}): the median may still drift; raise "
            "sustain_budget_s (--sustain-budget)"
        ]
    if p.reported == BURST and p.signals:
        return [
            f"the median is the BURST figure of a short run, and the run already showed a power "
            f"limit ({why}): a sustained loop runs slower; state 'sustained' measures it"
        ]
    if p.reported == BURST and m.mode in ("hot", "cold", "graph", "kernel"):
        return [
            "the median is the BURST figure of a short run; power-hungry kernels run slower "
            "in a sustained loop (state 'sustained' checks)"
        ]
    return []


def _windows(values: tuple[float, ...]) -> str:
    return ", ".join(f"{v:.4g}" for v in values[-3:]) + " µs"


def _sampled_clocks(m: Measurement) -> tuple[ClockSample, ...]:
    """Readings taken while the reported samples were: those after the load phase, if any."""
    start = m.power.sampled_from_s if m.power is not None else None
    if start is None:
        return m.clocks
    return tuple(c for c in m.clocks if c.t_s >= start)


def _throttling(m: Measurement) -> list[str]:
    out = []
    clocks = _sampled_clocks(m)
    reasons = slowdowns(clocks)
    if reasons and not (m.power is not None and m.power.signals):  # said by _power
        out.append("throttling during the run: " + ", ".join(reasons))
    mhz = [c.sm_mhz for c in clocks if c.sm_mhz]
    if len(mhz) > 1 and min(mhz) < (1 - CLOCK_DROP) * max(mhz):
        out.append(f"SM clock varied {min(mhz):.0f}–{max(mhz):.0f} MHz during the run")
    return out


def _host_bound(m: Measurement) -> list[str]:
    host, device = m.host_us_per_call, m.stats.p50
    if host is None or device <= 0 or m.mode != "hot" or host < HOST_BOUND_RATIO * device:
        return []
    return [
        f"host-bound in eager mode: enqueuing a call takes {host:.1f} µs on the host vs "
        f"{device:.2f} µs on the device (a CUDA graph or fusion would help)"
    ]


def _launch_gap(m: Measurement) -> list[str]:
    if m.mode not in ("hot", "cold") or not 0 < m.stats.p50 < LAUNCH_GAP_SCALE_US:
        return []
    return [
        f"µs-scale call ({m.stats.p50:.2f} µs): event timing includes the device's ≈1 µs gap "
        "between launches; mode 'kernel' gives kernel time alone, 'graph' most of the way"
    ]


def _kernels(m: Measurement) -> list[str]:
    k = m.kernels_per_call
    if k is None or k == int(k):
        return []
    return [f"{k:.2f} kernels per call on average: calls differ (caching, autotuning?)"]
