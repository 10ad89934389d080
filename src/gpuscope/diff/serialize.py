"""The parts of the dict of schema `gpuscope.diff/1` (what `gpuscope diff --json` writes), each
from what it shows: `Diff.to_dict` (compare.py) puts them together.

Times are µs floats rounded to the ns; `change` is the relative change (after / before − 1);
`delta` is after − before. A number a side cannot measure is null, never 0. docs/diff.md
describes every field.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from gpuscope.diff import summary
from gpuscope.diff.kernels import MATCHES, MOVERS_SHARE, KernelChange, Side
from gpuscope.diff.significance import ALPHA

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

NAMES_KEPT = 8  # kernel names listed per side of a change


def profile(a: Analysis) -> dict[str, Any]:
    meta = a.trace.meta
    steps = a.extras.get("steps")
    result = steps.result if steps is not None else None
    return {
        "path": meta.path,
        "format": meta.format,
        "vendor": meta.vendor,
        "devices": summary.device_names(a),
        "steps": len(result.steps) if result is not None else 0,
        "steady_steps": len(result.steady) if result is not None else 0,
        "integrity": [flag["id"] for flag in a.integrity],
    }


def _us(ns: float | None) -> float | None:
    return None if ns is None or ns < 0 else round(float(ns) / 1000.0, 3)


def metrics(old: Analysis, new: Analysis) -> dict[str, Any]:
    """The `summary` part: each metric of `summary.METRICS` before and after."""
    before, after = summary.metrics(old), summary.metrics(new)
    return {_key(name): _metric(name, before[name], after[name]) for name in summary.METRICS}


def _key(name: str) -> str:
    return name.removesuffix("_ns") + "_us" if name.endswith("_ns") else name


def _metric(name: str, before: float | None, after: float | None) -> dict[str, Any]:
    time = name.endswith("_ns")

    def value(v: float | None) -> float | None:
        if v is None:
            return None
        return _us(v) if time else round(v, 6) if isinstance(v, float) else v

    both = before is not None and after is not None
    delta = (after - before) if both else None  # type: ignore[operator]
    return {
        "label": summary.METRICS[name],
        "before": value(before),
        "after": value(after),
        "delta": (round(delta / 1000.0, 3) if time else round(delta, 6))
        if delta is not None
        else None,
        "change": round(after / before - 1, 6) if both and before else None,  # type: ignore[operator]
    }


def categories(before: Analysis, after: Analysis) -> dict[str, Any]:
    times = before.kernel_times_known and after.kernel_times_known
    return {
        name: {
            "before": {"count": old[0], "time_us": _us(old[1]) if times else None},
            "after": {"count": new[0], "time_us": _us(new[1]) if times else None},
            "delta_us": round((new[1] - old[1]) / 1000.0, 3) if times else None,
            "delta_count": new[0] - old[0],
        }
        for name, old, new in summary.categories(before, after)
    }


def kernels(changes: list[KernelChange], count: int) -> dict[str, Any]:
    """The `kernels` part: every change, the first `count` of them the movers."""
    known = [c.delta_ns for c in changes if c.delta_ns is not None]
    gross = sum(abs(v) for v in known)
    explained = sum(abs(c.delta_ns or 0) for c in changes[:count])
    before = Side(tuple(a for c in changes for a in c.before.atoms))
    after = Side(tuple(a for c in changes for a in c.after.atoms))
    kinds = Counter(c.match for c in changes)
    return {
        "before": {"count": before.count, "time_us": _us(before.time_ns)},
        "after": {"count": after.count, "time_us": _us(after.time_ns)},
        "delta_us": _us_signed(after.time_ns - before.time_ns)
        if before.time_ns >= 0 and after.time_ns >= 0
        else None,
        "gross_change_us": _us(gross),
        "matches": {kind: kinds.get(kind, 0) for kind in MATCHES},
        "movers": {
            "count": count,
            "explained_share": round(explained / gross, 6) if gross else None,
            "target_share": MOVERS_SHARE,
        },
        "changes": [_change(c, i < count) for i, c in enumerate(changes)],
    }


def _us_signed(ns: float) -> float:
    return round(float(ns) / 1000.0, 3)


def _change(c: KernelChange, mover: bool) -> dict[str, Any]:
    delta = c.delta_ns
    test = c.per_call
    return {
        "key": c.key,
        "match": c.match,
        "category": c.category,
        "before": _side(c.before),
        "after": _side(c.after),
        "delta_us": _us_signed(delta) if delta is not None else None,
        "delta_count": c.delta_count,
        "ratio": round(c.after.time_ns / c.before.time_ns, 6)
        if c.known and c.before.time_ns > 0
        else None,
        "shape": {"op": c.shape.op, "input_dims": c.shape.dims, "input_types": c.shape.types}
        if c.shape is not None
        else None,
        "per_call": {
            "mean_before_us": _us(test.mean_before),
            "mean_after_us": _us(test.mean_after),
            "p_value": float(f"{test.p_value:.6g}"),
            "significant": test.p_value < ALPHA,
        }
        if test is not None
        else None,
        "mover": mover,
    }


def _side(side: Side) -> dict[str, Any]:
    names = side.names
    time = side.time_ns
    return {
        "names": names[:NAMES_KEPT],
        "names_total": len(names),
        "count": side.count,
        "time_us": _us(time),
        "mean_us": _us(time / side.count) if side.count and time >= 0 else None,
    }
