"""Analysis dicts → the list of sections every renderer draws (comparison first when several)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuscope.errors import InputError
from gpuscope.report._compare import comparison_section
from gpuscope.report._document import Section
from gpuscope.report._sections import trace_section

SCHEMA = "gpuscope.analysis/1"


def document(
    reports: Sequence[Mapping[str, Any]], lead: Sequence[Section] = ()
) -> tuple[Section, ...]:
    """Check the dicts are analyses this renderer knows, then lay out their sections; `lead`
    sections (e.g. the cross-rank report) come first."""
    if not reports:
        raise InputError("nothing to render: expected at least one analysis dict")
    for i, report in enumerate(reports, 1):
        _check(report, i)
    sections = tuple(trace_section(r, i) for i, r in enumerate(reports, 1))
    if len(reports) == 1:
        return (*lead, *sections)
    return (*lead, comparison_section(reports), *sections)


def _check(report: Mapping[str, Any], index: int) -> None:
    schema = report.get("schema") if isinstance(report, Mapping) else None
    if schema != SCHEMA:
        raise InputError(
            f"report #{index} has schema {schema!r}, expected {SCHEMA!r}: pass the dict of "
            "gpuscope.analyze(path).to_dict() or a file written by `gpuscope analyze --json`"
        )
