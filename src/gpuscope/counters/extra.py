"""The counter analysis as a section of `gpuscope analyze` (see `analysis.extras`): present
when the trace holds hardware counters, under the report key `counters`.

The trace alone is analysed (no `--arch` / `--peaks` here): the architecture and the datasheet
roofs come from the devices the trace records; `gpuscope counters` takes the options and merges
the passes of a multi-pass collection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuscope.analysis import Finding
from gpuscope.errors import InputError

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis
    from gpuscope.counters.analysis import CounterAnalysis
    from gpuscope.document.model import Section

NAME = "counters"


def analyse(a: Analysis) -> CounterAnalysis | None:
    """None when the trace has no counter values."""
    if not a.trace.provides("counters") or not len(a.trace.counters):
        return None
    from gpuscope.counters.pipeline import analyse_counters  # ~40 ms: only for counter traces

    try:
        return analyse_counters([a.trace])
    except InputError:  # counters of dispatches the trace does not hold
        return None


def to_dict(result: CounterAnalysis) -> dict[str, Any]:
    part = result.to_dict()
    del part["schema"], part["findings"]  # the findings join the report's own list
    return part


def findings(a: Analysis, result: CounterAnalysis) -> list[Finding]:
    """The counter findings, but for `small-grid`: the launch-configuration analysis of the same
    trace (`analysis.launchconfig`) reports the grids, by the same rule, once."""
    return [f for f in result.findings if f["id"] != "small-grid"]


def section(part: dict[str, Any]) -> Section:
    from gpuscope.counters.views import section as counters_section

    return counters_section(part)
