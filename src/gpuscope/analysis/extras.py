"""The analyses beyond the core ones by name: each is a module with the `ExtraAnalysis` interface
(analysis/analyze.py), registered under its `NAME`, the report key (and section) it fills:

    NAME: str                                   the report key (and section) it fills
    analyse(a: Analysis) -> object | None       a pure function of the trace and core results;
                                                None when the trace holds nothing for it
    to_dict(result) -> dict                     its part of the report (µs floats, shares 0..1)
    findings(a: Analysis, result) -> list       its findings (`_finding.finding` dicts)
    section(part: dict) -> Section              how the views show its part (a `document` Section)

`analyse` receives the core `Analysis` (trace, classification, parent ops, timeline, launch, sync,
verdict) and must not modify it.

gpuscope's own are registered with `register`, the way a third party's are, in the order their
parts appear in the report; an installed package adds one through an entry point of the
`gpuscope.analyses` group (gpuscope's counter analysis, `counters.extra`, is registered that way
in pyproject.toml: `counters/` sits above `analysis/`, which never imports upward), read once on
first use, after the built-ins. A name registered twice raises. A new analysis is one module
plus one registration:

    # pyproject.toml of the package that adds it
    [project.entry-points."gpuscope.analyses"]
    queues = "mypackage.queues"          # a module with NAME, analyse, to_dict, findings, section
"""

from __future__ import annotations

import functools

from gpuscope import plugins
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
from gpuscope.analysis._finding import Finding
from gpuscope.analysis.analyze import Analysis, Extra, ExtraAnalysis

GROUP = "gpuscope.analyses"
BUILTIN: tuple[ExtraAnalysis, ...] = (  # in report order
    communication,
    steps,
    hostops,
    coldstart,
    efficiency,
    conversions,
    patterns,
    launchconfig,
)
_ADDED: list[ExtraAnalysis] = []  # registered at run time


def register(analysis: ExtraAnalysis) -> None:
    """Add an extra analysis (after the others); ValueError when its `NAME` is taken."""
    _ADDED.append(analysis)
    _registered.cache_clear()
    try:
        _registered()
    except ValueError:
        _ADDED.pop()
        _registered.cache_clear()
        raise


def modules() -> list[ExtraAnalysis]:
    """Every extra analysis, in the order they run and report: the built-ins, then the entry
    points', then those registered at run time."""
    return list(_registered())


@functools.cache
def _registered() -> tuple[ExtraAnalysis, ...]:
    """By name, each once (the entry points are read once per process: scanning the installed
    packages' metadata costs tens of ms)."""
    found: dict[str, ExtraAnalysis] = {}
    for analysis in [*BUILTIN, *installed_plugins(), *_ADDED]:
        plugins.add(found, analysis.NAME, analysis, "extra analysis")
    return tuple(found.values())


def installed_plugins() -> list[ExtraAnalysis]:
    """The modules of the `gpuscope.analyses` entry points."""
    return [module for _, module in plugins.installed(GROUP)]


def run_extras(a: Analysis) -> dict[str, Extra]:
    """Every extra analysis on the core results, by report key."""
    return {m.NAME: Extra(m.NAME, m, m.analyse(a)) for m in modules()}


def extra_findings(a: Analysis) -> list[Finding]:
    found: list[Finding] = []
    for extra in a.extras.values():
        if extra.result is not None:
            found += extra.module.findings(a, extra.result)
    return found
