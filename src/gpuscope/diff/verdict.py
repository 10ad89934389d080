"""The diff's verdict: did the profile get faster or slower, is that more than noise, and did
what paces it change (e.g. cpu-bound → gpu-bound)?

The measure is the mean steady step time when both profiles have ProfilerStep#N steps, else the
GPU busy time (union of device activity), else the kernel time. Significance needs noise to judge
against: with at least MIN_SAMPLES steady steps on each side, Welch's t-test on the step times
(two-sided, ALPHA); otherwise the difference cannot be called significant, and the verdict says so.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from gpuscope.diff.significance import ALPHA, MIN_SAMPLES
from gpuscope.document import units as fmt

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis
    from gpuscope.diff.steps import StepTimes

UNJUDGED = ("unknown", "no-gpu-activity")  # verdicts that do not say what paces the work
MEASURES = {
    "step_time": "mean step time",
    "gpu_busy": "GPU busy time",
    "kernel_time": "kernel time",
}


def verdict(old: Analysis, new: Analysis, steps: StepTimes | None) -> dict[str, Any]:
    """The verdict of `new` against `old`, by their steady step times where both have them."""
    measure, before, after = _measure(old, new, steps)
    change = (after / before - 1) if before and after is not None else None
    significance = _significance(steps, measure)
    bound = _bound(old, new)
    result = {
        "measure": measure,
        "before_us": _us(before),
        "after_us": _us(after),
        "delta_us": _us(after - before) if before is not None and after is not None else None,
        "change": round(change, 6) if change is not None else None,
        "direction": _direction(before, after),
        "significance": significance,
        "bound": bound,
    }
    result["text"] = _text(result)
    return result


def _measure(
    old: Analysis, new: Analysis, steps: StepTimes | None
) -> tuple[str | None, float | None, float | None]:
    if steps is not None:
        return (
            "step_time",
            sum(steps.before) / len(steps.before),
            sum(steps.after) / len(steps.after),
        )
    if old.timeline is not None and new.timeline is not None:
        return "gpu_busy", old.timeline.busy_ns, new.timeline.busy_ns
    if old.kernel_times_known and new.kernel_times_known:
        return "kernel_time", old.kernel_ns, new.kernel_ns
    return None, None, None


def _direction(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return "unknown"
    return "slower" if after > before else "faster" if after < before else "unchanged"


def _significance(steps: StepTimes | None, measure: str | None) -> dict[str, Any]:
    test = steps.test if steps is not None else None
    if steps is None or test is None:
        return {"method": None, "significant": None, "reason": _untested(steps, measure)}
    low, high = test.interval()
    significant = test.significant()
    p_text = f"p = {_p(test.p_value)}"
    return {
        "method": "welch-t",
        "samples": f"steady ProfilerStep#N step times ({steps.measure})",
        "alpha": ALPHA,
        "before_n": len(steps.before),
        "after_n": len(steps.after),
        "t": _round(test.t),
        "df": round(test.df, 3),
        "p_value": _round(test.p_value),
        "ci95_delta_us": [_us(low), _us(high)],
        "significant": significant,
        "reason": (
            f"{p_text} < {ALPHA}: the change is larger than the step-to-step noise"
            if significant
            else f"{p_text} ≥ {ALPHA}: the change is within the step-to-step noise"
        ),
    }


def _untested(steps: StepTimes | None, measure: str | None) -> str:
    if measure is None:
        return "neither profile has a time to compare"
    if steps is not None:
        return (
            f"{_steps(len(steps.before))} before and {_steps(len(steps.after))} after: at "
            f"least {MIN_SAMPLES} on each side are needed to estimate the noise, so the "
            "difference cannot be called significant"
        )
    return (
        "one run on each side (no ProfilerStep#N steps in both profiles), so the run-to-run noise "
        "is unknown and the difference cannot be called significant; profile several steps "
        "(torch.profiler schedule with active ≥ 3) to judge it"
    )


def _steps(n: int) -> str:
    return f"{n} steady step" + ("" if n == 1 else "s")


def _bound(old: Analysis, new: Analysis) -> dict[str, Any]:
    def side(a: Any) -> dict[str, Any]:
        v = a.verdict
        return {"bound": v.bound, "cause": v.cause or None, "reason": v.reason}

    before, after = side(old), side(new)
    return {"before": before, "after": after, "changed": before["bound"] != after["bound"]}


def _text(v: dict[str, Any]) -> str:
    if v["measure"] is None:
        return f"No time to compare: {v['significance']['reason']}."
    label = MEASURES[v["measure"]]
    before, after = fmt.duration(v["before_us"]), fmt.duration(v["after_us"])
    if v["direction"] == "unchanged":
        head = f"{label} unchanged at {before}"
    elif v["change"] is None:  # from nothing: no relative change
        head = f"after is {v['direction']}: {label} {before} → {after}"
    else:
        head = (
            f"after is {abs(v['change']) * 100:.1f}% {v['direction']}: {label} {before} → {after}"
        )
    significance = v["significance"]
    if significance["significant"] is None:
        tail = "not significant: " + significance["reason"]
    elif significance["significant"]:
        tail = f"significant ({_welch_text(significance)})"
    else:
        tail = f"not significant, within the noise ({_welch_text(significance)})"
    return f"{head}; {tail}.{_pace(v['bound'])}"


def _pace(bound: dict[str, Any]) -> str:
    """What paces the work, before and after; nothing when neither side could say."""
    before, after = bound["before"]["bound"], bound["after"]["bound"]
    if before in UNJUDGED and after in UNJUDGED:
        return ""
    return f" Was {before}, now {after}." if bound["changed"] else f" Still {after}."


def _welch_text(s: dict[str, Any]) -> str:
    return f"Welch's t-test over {s['before_n']} and {s['after_n']} steps, p = {_p(s['p_value'])}"


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def _round(value: float) -> float | None:
    """6 significant digits; None for an infinite t (neither side varies, the means differ)."""
    return float(f"{value:.6g}") if math.isfinite(value) else None


def _us(ns: float | None) -> float | None:
    return None if ns is None else round(float(ns) / 1000.0, 3)
