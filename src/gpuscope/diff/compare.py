"""`diff(before, after) -> Diff`: two analysed profiles set side by side.

    >>> import gpuscope
    >>> from gpuscope.diff import diff
    >>> before, after = gpuscope.analyze("b.gz"), gpuscope.analyze("a.gz")  # doctest: +SKIP
    >>> diff(before, after).to_dict()["verdict"]["text"]  # doctest: +SKIP

A pure function of the two `Analysis` objects: the `Diff` keeps both (their raw numbers and
provenance), the matched kernels, and the raw step times the significance test reads; every
delta, share and statistic is derived from those when the report is built (`serialize.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuscope.diff.kernels import KernelChange, atoms, match, movers
from gpuscope.diff.significance import MIN_SAMPLES, Welch, welch

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

SCHEMA = "gpuscope.diff/1"


@dataclass(frozen=True)
class StepTimes:
    """The steady ProfilerStep#N times of both sides (ns), as `analysis.steps` measures them."""

    before: tuple[int, ...]
    after: tuple[int, ...]
    measure: str  # "wall" (the step ranges) or "device span" (the span of each step's work)

    @property
    def test(self) -> Welch | None:
        """Welch's test of the mean step time, with MIN_SAMPLES steady steps on each side."""
        if min(len(self.before), len(self.after)) < MIN_SAMPLES:
            return None
        return welch(self.before, self.after)


@dataclass(frozen=True, repr=False)
class Diff:
    """Before and after, with their kernels matched (`kernels`, largest |Δ| first)."""

    before: Analysis
    after: Analysis
    kernels: tuple[KernelChange, ...]
    steps: StepTimes | None  # None unless both sides have complete steps

    @property
    def movers(self) -> int:
        """The first `movers` kernel changes explain ≥ 90 % of the gross change."""
        return movers(list(self.kernels))

    def to_dict(self) -> dict[str, Any]:
        from gpuscope.diff.serialize import diff_dict

        return diff_dict(self)

    def __repr__(self) -> str:  # not both analyses, column by column
        return f"<Diff {self.before!r} → {self.after!r}: {len(self.kernels)} kernel changes>"


def diff(before: Analysis, after: Analysis) -> Diff:
    """Compare two analysed profiles (any formats, same or different vendor)."""
    return Diff(
        before=before,
        after=after,
        kernels=tuple(match(atoms(before), atoms(after))),
        steps=step_times(before, after),
    )


def step_times(before: Analysis, after: Analysis) -> StepTimes | None:
    """Steady step times of both sides, measured alike: when `steps` timed one side by the
    device span and the other by the wall, both are taken by the wall."""
    left, right = _steps(before), _steps(after)
    if left is None or right is None:
        return None
    same = left.timed_by == right.timed_by
    measure = left.timed_by if same else "host"

    def times(result: Any) -> tuple[int, ...]:
        return tuple(result.time(s) if same else s.wall_ns for s in result.steady)

    return StepTimes(times(left), times(right), "device span" if measure == "device" else "wall")


def _steps(a: Analysis) -> Any:
    """The `steps` analysis of one side, when it found complete steps."""
    extra = a.extras.get("steps")
    result = extra.result if extra is not None else None
    return result if result is not None and result.steady else None
