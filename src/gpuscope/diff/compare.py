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

from gpuscope._version import __version__
from gpuscope.diff import serialize as part
from gpuscope.diff import summary
from gpuscope.diff.kernels import KernelChange, atoms, match, movers
from gpuscope.diff.steps import StepTimes, step_times
from gpuscope.diff.verdict import verdict
from gpuscope.schemas import DIFF as SCHEMA

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis


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
        """The report: schema `gpuscope.diff/1` (`serialize` writes each part)."""
        before, after = self.before, self.after
        return {
            "schema": SCHEMA,
            "gpuscope_version": __version__,
            "before": part.profile(before),
            "after": part.profile(after),
            "verdict": verdict(before, after, self.steps),
            "summary": part.metrics(before, after),
            "categories": part.categories(before, after),
            "kernels": part.kernels(list(self.kernels), self.movers),
            "findings": summary.findings_change(before, after),
            "caveats": summary.caveats(before, after),
        }

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
