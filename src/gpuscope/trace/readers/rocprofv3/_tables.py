"""What one rocprofv3 file (CSV) or one process of a JSON file holds, before it becomes a Trace.

CSV and JSON readers both fill these plain column sets; `_build` merges the parts of
one process into a `Trace` (device ids, counter join, name interning). Integer columns are int64
with -1 for absent; agent columns hold agent references (see `_agents`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.trace.model import F64, I64


@dataclass
class Dispatches:
    """Kernel dispatches. `grid` is in work-items (n x 3), as rocprofv3 writes it."""

    names: list[str]
    start: I64
    end: I64
    agent: I64
    queue: I64
    stream: I64
    thread: I64
    dispatch: I64
    correlation: I64
    external: I64
    grid: I64
    block: I64
    lds: I64
    scratch: I64
    vgpr: I64
    accum: I64
    sgpr: I64

    def __len__(self) -> int:
        return len(self.names)

    def take(self, index: Any) -> Dispatches:
        columns = {k: v[index] for k, v in vars(self).items() if k != "names"}
        names = [self.names[i] for i in np.arange(len(self.names))[index]]
        return Dispatches(names=names, **columns)


@dataclass
class Calls:
    """API calls (HIP, HSA, RCCL, rocDecode, rocJPEG) and ROCTX markers, by domain name."""

    domains: list[str]
    functions: list[str]
    start: I64
    end: I64
    tid: I64
    correlation: I64
    external: I64

    def __len__(self) -> int:
        return len(self.functions)


@dataclass
class Copies:
    """Memory copies; `bytes` is -1 in CSV files (rocprofv3 writes the size only to JSON)."""

    directions: list[str]
    start: I64
    end: I64
    src: I64
    dst: I64
    stream: I64
    correlation: I64
    external: I64
    bytes: I64

    def __len__(self) -> int:
        return len(self.directions)


@dataclass
class CounterValues:
    """Counter values per dispatch (long format) and the dispatches they were taken on."""

    dispatch: I64
    names: list[str]
    values: F64
    kernels: Dispatches  # one row per dispatch of the file
    timed: bool  # whether the file gives the dispatches' start/end


@dataclass
class Stats:
    """A `--stats` file: per-name totals. `kind` is a model kind, or "domain" (per-domain rows)."""

    kind: int | str
    names: list[str]
    calls: I64
    total: I64
    min: I64
    max: I64

    def __len__(self) -> int:
        return len(self.names)


@dataclass(frozen=True)
class Agent:
    """One agent (CPU or GPU) of `agent_info.csv` or the JSON `agents` list."""

    node_id: int
    logical_id: int
    type_index: int  # among agents of its type (the N of "GPU N"); -1 when not recorded
    is_gpu: bool
    name: str  # the gfx target for GPUs
    product: str
    compute_units: int
    handle: int = -1  # JSON only: the opaque handle records refer to
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass
class Part:
    """Everything read from one file (or one JSON process): the tables it held and how it went."""

    path: str
    kind: str
    variant: str = ""
    dispatches: list[Dispatches] = field(default_factory=list)
    calls: list[Calls] = field(default_factory=list)
    copies: list[Copies] = field(default_factory=list)
    counters: list[CounterValues] = field(default_factory=list)
    stats: list[Stats] = field(default_factory=list)
    agents: list[Agent] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    truncated: bool = False
    copy_bytes: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        """Records read: 0 for a file holding its header only."""
        tables: list[Any] = [*self.dispatches, *self.calls, *self.copies, *self.stats]
        counted = sum(len(t) for t in tables) + sum(len(c.names) for c in self.counters)
        return counted + len(self.agents)


def ints(size: int) -> I64:
    """An int64 column of -1 (absent)."""
    return np.full(size, -1, np.int64)
