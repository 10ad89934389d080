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
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from gpuscope._read_workers import processes_asked
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


# built-ins run in a forked process beside the others on a big trace (about half the time)
FORKED = (hostops, steps)
FORK_ROWS = 200_000  # GPU ops, host calls and operators from which forking pays


def run_extras(a: Analysis) -> dict[str, Extra]:
    """Every extra analysis on the core results, by report key."""
    found = modules()
    forked = [m for m in found if m in FORKED] if _may_fork(a) else []
    collect = _forked(a, forked) if forked else None
    try:
        results = {m.NAME: m.analyse(a) for m in found if m not in forked}
    finally:
        done = collect() if collect is not None else None
    for m in forked:
        results[m.NAME] = done[m.NAME] if done is not None else m.analyse(a)
    return {m.NAME: Extra(m.NAME, m, results[m.NAME]) for m in found}


def _may_fork(a: Analysis) -> bool:
    """On Linux, for a big trace, when the caller lets gpuscope start processes (the command
    line does), from a process that runs no other thread (a forked child inherits no thread,
    and a lock one held stays held) and is no worker itself."""
    import multiprocessing
    import threading

    rows = len(a.trace.gpu) + len(a.trace.host) + len(a.trace.ops)
    return (
        rows >= FORK_ROWS
        and sys.platform == "linux"
        and processes_asked()
        and threading.active_count() == 1
        and multiprocessing.parent_process() is None
    )


def _forked(a: Analysis, chosen: list[ModuleType]) -> Callable[[], dict[str, Any] | None]:
    """Run the `chosen` analyses in a forked copy of this process (the trace is shared, not
    copied); the function returned waits for their results (None: the child failed, then they
    run here, and raise here what they raised there)."""
    import os
    import pickle

    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: its results down the pipe, then out without any clean-up
        code = 1
        try:
            os.close(read_end)
            data = pickle.dumps({m.NAME: m.analyse(a) for m in chosen}, pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)

    def collect() -> dict[str, Any] | None:
        with os.fdopen(read_end, "rb") as handle:
            data = handle.read()
        _, status = os.waitpid(pid, 0)
        if status != 0 or not data:
            return None
        try:
            results: dict[str, Any] = pickle.loads(data)
        except Exception:  # whatever went wrong, the analyses run here instead
            return None
        return results

    return collect


def extra_findings(a: Analysis) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for extra in a.extras.values():
        if extra.result is not None:
            found += extra.module.findings(a, extra.result)
    return found
