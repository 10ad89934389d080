"""What every reader needs to build a `Trace`: interned names, tables filled part by part (absent
columns are -1), and a `TraceMeta` with sensible defaults."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from gpuscope.trace.model import (
    I32,
    Collectives,
    Counters,
    CpuOps,
    Flows,
    GpuAnnotations,
    GpuOps,
    HostCalls,
    LaunchParams,
    Syncs,
    Totals,
    Trace,
    TraceMeta,
)

TABLES: dict[str, Any] = {
    "gpu": GpuOps,
    "host": HostCalls,
    "ops": CpuOps,
    "syncs": Syncs,
    "gpu_annotations": GpuAnnotations,
    "flows": Flows,
    "launch_params": LaunchParams,
    "counters": Counters,
    "totals": Totals,
    "collectives": Collectives,
}


class TraceParts:
    """Accumulates the tables of one trace; `build` concatenates them once."""

    def __init__(self) -> None:
        self.names: dict[str, int] = {}
        self._parts: dict[str, list[Any]] = defaultdict(list)
        self._rows: dict[str, int] = defaultdict(int)

    def intern(self, values: Iterable[str]) -> I32:
        """Name indices of `values` (new names are added)."""
        index = self.names
        add = index.setdefault
        return np.fromiter((add(v, len(index)) for v in values), np.int32)

    def intern_one(self, value: str) -> int:
        return self.names.setdefault(value, len(self.names))

    def add(self, table: str, size: int | None = None, **columns: Any) -> None:
        """Append rows to `table` ("gpu", "host", ...); columns not given are -1."""
        part = TABLES[table].from_columns(columns, size)
        if len(part):
            self._parts[table].append(part)
            self._rows[table] += len(part)

    def rows(self, table: str) -> int:
        """Rows added to `table` so far (the row number the next one will get)."""
        return self._rows[table]

    def build(self, meta: TraceMeta) -> Trace:
        tables = {name: _concat(cls, self._parts.get(name, [])) for name, cls in TABLES.items()}
        return Trace(meta=meta, names=tuple(self.names), **tables)


def _concat(cls: Any, parts: list[Any]) -> Any:
    if not parts:
        return cls.empty()
    if len(parts) == 1:
        return parts[0]
    names = parts[0].__dataclass_fields__
    return cls(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in names})


def trace_meta(path: str, format: str, **fields: Any) -> TraceMeta:
    """A TraceMeta with defaults for everything but where it came from."""
    defaults: dict[str, Any] = {
        "schema": "",
        "vendor": "unknown",
        "devices": (),
        "base_time_ns": None,
        "profiler_span": None,
        "rank": None,
        "world_size": None,
        "event_counts": {},
        "truncated": False,
        "warnings": (),
    }
    defaults.update(fields)
    if "files" not in defaults:
        defaults["files"] = (path,)
    return TraceMeta(path=path, format=format, **defaults)
