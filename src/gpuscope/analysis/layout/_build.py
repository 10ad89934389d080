"""Analysis dicts → the full document every renderer draws (comparison first when several)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from gpuscope.analysis.layout._compare import comparison_section
from gpuscope.analysis.layout._sections import trace_section
from gpuscope.document.model import Document, Section, Text
from gpuscope.errors import InputError
from gpuscope.schemas import ANALYSIS as SCHEMA


def analysis_document(
    reports: Sequence[Mapping[str, Any]], lead: Sequence[Section] = ()
) -> Document:
    """Every section of every analysis dict; `lead` sections (the cross-rank report, the inputs
    not read) first, then a comparison table when several."""
    if not reports:
        raise InputError("nothing to render: expected at least one analysis dict")
    for i, report in enumerate(reports, 1):
        _check(report, i)
    sections = tuple(trace_section(r, i) for i, r in enumerate(reports, 1))
    if len(reports) > 1:
        sections = (comparison_section(reports), *sections)
    return Document("gpuscope analysis", (*lead, *sections), subtitle(reports), footer(reports))


def subtitle(reports: Sequence[Mapping[str, Any]]) -> str:
    names = [PurePath(str(r["source"]["path"])).name for r in reports]
    return f"{len(reports)} traces: {', '.join(names)}" if len(reports) > 1 else names[0]


def footer(reports: Sequence[Mapping[str, Any]]) -> str:
    version = reports[0].get("gpuscope_version", "?") if reports else "?"
    return f"schema {SCHEMA} · gpuscope {version}"


def _check(report: Mapping[str, Any], index: int) -> None:
    schema = report.get("schema") if isinstance(report, Mapping) else None
    if schema != SCHEMA:
        raise InputError(
            f"report #{index} has schema {schema!r}, expected {SCHEMA!r}: pass the dict of "
            "gpuscope.analyze(path).to_dict() or a file written by `gpuscope analyze --json`"
        )


def overview_document(
    reports: Sequence[Mapping[str, Any]],
    lead: Sequence[Section] = (),
    job: Mapping[str, Any] | None = None,
) -> Document:
    """Many traces at a glance: `lead` sections, then one row per trace (the per-trace sections
    are what `analysis_document` adds); `job`: the cross-rank part, whose per-rank verdicts the
    rows show."""
    for i, report in enumerate(reports, 1):
        _check(report, i)
    note = Text(f"{len(reports)} per-trace reports: --full prints them, --md / --html / --json "
                "write them")  # fmt: skip
    table = comparison_section(reports, job)
    sections = (*lead, Section(table.title, (*table.blocks, note), anchor=table.anchor))
    return Document("gpuscope analysis", sections, subtitle(reports), footer(reports))
