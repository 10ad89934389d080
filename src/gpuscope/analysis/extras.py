"""The analyses beyond the core ones, each in its own module with the same small interface:

    NAME: str                                   the report key (and section) it fills
    analyse(a: Analysis) -> object | None       a pure function of the trace and core results;
                                                None when the trace holds nothing for it
    to_dict(result) -> dict                     its part of the report (µs floats, shares 0..1)
    findings(a: Analysis, result) -> list       its advice (`_finding.finding` dicts)
    section(part: dict) -> Section              how the views show its part (report._document)

`analyse` receives the core `Analysis` (trace, classification, parent ops, timeline, launch, sync,
verdict) and must not modify it. A module that is not there yet is skipped.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuscope.analysis.report import Analysis

MODULES = (
    "gpuscope.analysis.communication",
    "gpuscope.analysis.steps",
    "gpuscope.analysis.hostops",
    "gpuscope.analysis.coldstart",
    "gpuscope.analysis.efficiency",
    "gpuscope.analysis.conversions",
    "gpuscope.analysis.patterns",
    "gpuscope.analysis.launchconfig",
    "gpuscope.counters.extra",
)


@dataclass(frozen=True)
class Extra:
    name: str
    module: ModuleType
    result: Any

    def to_dict(self) -> dict[str, Any] | None:
        if self.result is None:
            return None
        part: dict[str, Any] = self.module.to_dict(self.result)
        return part


def modules() -> list[ModuleType]:
    found = []
    for name in MODULES:
        try:
            found.append(importlib.import_module(name))
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
    return found


def run_extras(a: Analysis) -> dict[str, Extra]:
    """Every extra analysis on the core results, by report key."""
    return {m.NAME: Extra(m.NAME, m, m.analyse(a)) for m in modules()}


def extra_findings(a: Analysis) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for extra in a.extras.values():
        if extra.result is not None:
            found += extra.module.findings(a, extra.result)
    return found
