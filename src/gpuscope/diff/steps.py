"""The steady step times of both sides of a diff, measured alike (what its verdict tests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuscope.diff.significance import MIN_SAMPLES, Welch, welch

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis


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
