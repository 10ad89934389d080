"""The analyses beyond the core ones, each in its own module with the same small interface:

    NAME: str                                   the report key (and section) it fills
    analyse(a: Analysis) -> object | None       a pure function of the trace and core results;
                                                None when the trace holds nothing for it
    to_dict(result) -> dict                     its part of the report (µs floats, shares 0..1)
    findings(a: Analysis, result) -> list       its advice (`_finding.finding` dicts)
    section(part: dict) -> Section              how the views show its part (a `document` Section)

`analyse` receives the core `Analysis` (trace, classification, parent ops, timeline, launch, sync,
verdict) and must not modify it.

The built-in extras are imported here, by name: renaming one fails at import, and
tests/unit/analysis/test_extras.py lists them all. Others plug in through the `gpuscope.analyses`
entry-point group (each entry point loads a module with this interface), run after the built-ins
in the order found; a name registered twice raises. gpuscope's own counter analysis
(`counters.extra`) is registered that way, in pyproject.toml: `counters/` sits above `analysis/`,
which never imports upward (docs/design.md).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from gpuscope.analysis import (
    coldstart,
    communication,
    conversions,
    efficiency,
    hostops,
    launchconfig,
    patterns,
    steps,
)

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

BUILTIN: tuple[ModuleType, ...] = (
    communication,
    steps,
    hostops,
    coldstart,
    efficiency,
    conversions,
    patterns,
    launchconfig,
)
ENTRY_POINT_GROUP = "gpuscope.analyses"


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
    """Every extra analysis module: the built-ins, then the installed plug-ins."""
    return list(_registered())


@functools.cache
def _registered() -> tuple[ModuleType, ...]:
    found = {m.NAME: m for m in BUILTIN}
    for module in installed_plugins():
        if module.NAME in found:
            raise ValueError(f"extra analysis {module.NAME!r} is already registered")
        found[module.NAME] = module
    return tuple(found.values())


def installed_plugins() -> list[ModuleType]:
    """Modules from the `gpuscope.analyses` entry-point group (scanned once per process:
    importing importlib.metadata and scanning costs tens of ms)."""
    from importlib import metadata

    return [entry.load() for entry in metadata.entry_points(group=ENTRY_POINT_GROUP)]


def run_extras(a: Analysis) -> dict[str, Extra]:
    """Every extra analysis on the core results, by report key."""
    return {m.NAME: Extra(m.NAME, m, m.analyse(a)) for m in modules()}


def extra_findings(a: Analysis) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for extra in a.extras.values():
        if extra.result is not None:
            found += extra.module.findings(a, extra.result)
    return found
