"""Evaluate a family's metrics on one kernel's dispatches.

A metric whose inputs are missing is *unavailable* with the names of what is missing — never 0.
`duration` is the kernel's time in seconds (per dispatch for `sum`/`mean` formulas, in total for
`ratio` formulas); it is missing when the collection has no kernel durations.

>>> import numpy as np
>>> from gpuscope.counters.collect import Kernel
>>> from gpuscope.counters.metrics import load_family
>>> k = Kernel("k", 0, np.array([1000.0]), {"TCC_HIT_sum": np.array([3.0]),
...                                        "TCC_MISS_sum": np.array([1.0])})
>>> values = evaluate(load_family("gfx90a"), k)
>>> values["l2_hit_rate"].value, values["flops"].missing[:1]
(0.75, ('SQ_INSTS_VALU_ADD_F16',))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.counters.collect import Kernel
from gpuscope.counters.metrics import Alternative, Family, MetricDef

DURATION = "duration"
SUM_SUFFIX = "_sum"


@dataclass(frozen=True)
class Value:
    """One metric of one kernel: its value, or why there is none."""

    id: str
    value: float | None
    missing: tuple[str, ...] = ()  # inputs the preferred formula lacks (empty when computed)
    formula: str = ""  # the formula that produced `value`
    note: str = ""  # why a computed formula has no value (0/0, some dispatches lack inputs)
    instead: tuple[tuple[str, ...], ...] = ()  # what the other formulas lack

    @property
    def available(self) -> bool:
        return self.value is not None

    def reason(self) -> str:
        """'missing A, B (or C)' / the note: why there is no value."""
        if self.missing:
            text = "missing " + ", ".join(self.missing)
            others = ["; ".join([", ".join(m)]) for m in self.instead if m]
            return text + (f" (or {' | '.join(others)})" if others else "")
        return self.note


def evaluate(
    family: Family, kernel: Kernel, constants: Mapping[str, float] | None = None
) -> dict[str, Value]:
    """Every metric of `family` on `kernel`; `constants` add device values (e.g. `cus`)."""
    return _Evaluator(family, kernel, {**family.constants, **(constants or {})}).all()


class _Evaluator:
    def __init__(self, family: Family, kernel: Kernel, constants: Mapping[str, float]) -> None:
        self.family, self.kernel, self.constants = family, kernel, constants
        self.done: dict[str, Value] = {}
        self.busy: set[str] = set()
        self.amd = family.vendor == "amd"
        seconds = kernel.duration_ns * 1e-9
        self.seconds = seconds if np.isfinite(seconds).all() and len(seconds) else None

    def all(self) -> dict[str, Value]:
        for metric in self.family.metrics:
            self.metric(metric.id)
        return {m.id: self.done[m.id] for m in self.family.metrics}

    def metric(self, metric_id: str) -> Value:
        if metric_id in self.done:
            return self.done[metric_id]
        if metric_id in self.busy:
            raise ValueError(f"{self.family.name}: metric {metric_id} refers to itself")
        self.busy.add(metric_id)
        value = self._first(self.family.metric(metric_id))
        self.busy.discard(metric_id)
        self.done[metric_id] = value
        return value

    def _first(self, metric: MetricDef) -> Value:
        lacking: list[tuple[str, ...]] = []
        for alt in metric.alternatives:
            missing = self._missing(alt)
            if not missing:
                value, note = self._compute(alt)
                return Value(metric.id, value, (), alt.formula.text, note)
            lacking.append(missing)
        return Value(metric.id, None, lacking[0], instead=tuple(lacking[1:]))

    def _missing(self, alt: Alternative) -> tuple[str, ...]:
        missing: list[str] = []
        for name in sorted(alt.formula.names, key=_order(alt.formula.text)):
            if alt.combine == "ratio" and name in self.family.ids:
                inner = self.metric(name)
                missing += [m for m in inner.missing if m not in missing]
            elif name == DURATION:
                if self.seconds is None:
                    missing.append("kernel durations")
            elif name not in self.constants and self._counter(name) is None:
                missing.append(name)
        return tuple(missing)

    def _counter(self, name: str) -> Any:
        counters = self.kernel.counters
        if name in counters:
            return counters[name]
        if self.amd and name.endswith(SUM_SUFFIX) and name[: -len(SUM_SUFFIX)] in counters:
            return counters[name[: -len(SUM_SUFFIX)]]
        if self.amd and name + SUM_SUFFIX in counters:
            return counters[name + SUM_SUFFIX]
        return None

    def _compute(self, alt: Alternative) -> tuple[float | None, str]:
        if alt.combine == "ratio":
            return self._ratio(alt)
        env = {name: self._input(name) for name in alt.formula.names}
        values = np.broadcast_to(
            np.asarray(alt.formula.evaluate(env), np.float64), self.kernel.duration_ns.shape
        )
        finite = np.isfinite(values)
        if not finite.any():
            return None, "not computable for any dispatch (0 / 0 or matrix instructions ran)"
        if alt.combine == "sum":
            if not finite.all():
                lacking = int((~finite).sum())
                return None, f"not computable for {lacking:,} of {len(values):,} dispatches"
            return float(values.sum()), ""
        weights = self.seconds[finite] if self.seconds is not None else None
        if weights is not None and weights.sum() > 0:
            return float((values[finite] * weights).sum() / weights.sum()), ""
        return float(values[finite].mean()), "" if weights is not None else "unweighted mean"

    def _input(self, name: str) -> Any:
        if name == DURATION:
            return self.seconds
        if name in self.constants:
            return self.constants[name]
        return self._counter(name)

    def _ratio(self, alt: Alternative) -> tuple[float | None, str]:
        env: dict[str, Any] = {}
        for name in alt.formula.names:
            if name in self.family.ids:
                inner = self.metric(name)
                if inner.value is None:
                    return None, f"{name}: {inner.reason()}"
                env[name] = inner.value
            elif name == DURATION:
                env[name] = float(self.seconds.sum()) if self.seconds is not None else np.nan
            elif name in self.constants:
                env[name] = self.constants[name]
            else:
                values = self._counter(name)
                lacking = int(np.isnan(values).sum())
                if lacking:  # a counter of another pass that missed some dispatches
                    return (
                        None,
                        f"{name}: not collected for {lacking:,} of {len(values):,} dispatches",
                    )
                env[name] = float(values.sum())
        value = float(np.asarray(alt.formula.evaluate(env)))
        return (value, "") if np.isfinite(value) else (None, "undefined (division by zero)")


def _order(text: str) -> Any:
    """Sort key: a name's position in the formula text (messages list names as written)."""
    return lambda name: (text.find(name), name)
