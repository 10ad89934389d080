"""What one rocprof v1 file yields, before the files of a run are merged into one `Trace`.

rocprof v1 writes a run as several files (`results.csv`, `results.stats.csv`, `results.json`,
`results.db`, `results.sysinfo.txt`, ...): each is read into a `Piece` whose tables still hold
names as text, so that `_merge` can choose, per kind of data, the best file that has it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.trace._copies import copy_kind
from gpuscope.trace._kernel_names import without_suffixes
from gpuscope.trace.model import F64, I8, I64, MEMCPY, Device

# rocprof appends these to code-object symbol names: `foo(int) [clone .kd]`, `__amd_rocclr_x.kd`
# barrier / marker packets in the op trace ("Unknown command type" before ROCm 5): not kernels
BARRIER_NAMES = frozenset({"<barrier packet>", "Unknown command type"})
TRUNCATED = "truncated file"  # how a warning about a file cut short begins


@dataclass
class Table:
    """Rows of one trace table ("gpu", "host", "ops", "totals") with names as text."""

    names: list[str]
    columns: dict[str, Any]

    def __len__(self) -> int:
        return len(self.names)

    def take(self, index: Any) -> Table:
        positions = np.arange(len(self.names))[index]
        names = [self.names[int(i)] for i in positions]
        return Table(names, {key: value[index] for key, value in self.columns.items()})


@dataclass
class CounterBlock:
    """Counter values per dispatch: `values[row, j]` is counter `names[j]` of gpu row `row`."""

    names: list[str]
    values: F64
    units: dict[str, str] = field(default_factory=dict)


@dataclass
class Piece:
    """Everything one file holds. `dispatch` (rocprof's per-process dispatch Index, -1 for
    copies), `launch` and `counters` are aligned with the rows of `gpu`."""

    path: str
    variant: str  # the format variant, for TraceMeta.schema
    kind: str = ""  # "csv", "stats", "json", "db" or "sysinfo"
    gpu: Table | None = None
    dispatch: I64 | None = None
    launch: dict[str, Any] | None = None
    counters: CounterBlock | None = None
    host: Table | None = None
    markers: Table | None = None
    totals: Table | None = None
    agents: tuple[Agent, ...] = ()
    provides: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    truncated: bool = False
    timed: bool = False  # gpu rows carry start times
    summary: str = ""  # of a stats file: "kernels", "hip", "hsa" or "copies"

    def kernels(self) -> bool:
        return self.gpu is not None and len(self.gpu) > 0


@dataclass(frozen=True)
class Agent:
    """One HSA agent of the rocminfo dump; `index` counts every agent, CPUs first (= gpu-id)."""

    index: int
    is_gpu: bool
    device: Device


def strip_kd(names: Sequence[str]) -> list[str]:
    """Kernel names without rocprof's ` [clone .kd]` / `.kd` suffix (computed once per name)."""
    return without_suffixes(names)


def to_ints(values: Iterable[Any]) -> I64:
    """int64 column from ints or decimal text; cells that are neither become -1."""
    items = list(values)
    try:
        return np.array(items, np.int64)
    except (TypeError, ValueError, OverflowError):
        if all(item is None for item in items):  # a field this file does not have
            return np.full(len(items), -1, np.int64)
        return np.array([_int_or_missing(v) for v in items], np.int64)


def _int_or_missing(value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite REAL
        return -1
    return number if -(2**63) <= number < 2**63 else -1


def copy_kinds(names: Sequence[str], kind: I8) -> I8:
    """Direction of each memcpy (COPY_KINDS index), -1 for other rows; parsed once per name."""
    direction = {name: copy_kind(name) for name in set(names)}
    out: I8 = np.array(
        [direction[n] if k == MEMCPY else -1 for n, k in zip(names, kind.tolist(), strict=True)],
        np.int8,
    )
    return out


def full(size: int, value: int) -> I64:
    """An int64 column of one value (-1: absent)."""
    return np.full(size, value, np.int64)


def truncation(warnings: list[str]) -> tuple[list[str], bool]:
    """The CSV reader's warnings, a cut last row stated as a truncated file."""
    cut = [w for w in warnings if "cut short" in w]
    rest = [w for w in warnings if "cut short" not in w]
    return [f"{TRUNCATED}: {w}" for w in cut] + rest, bool(cut)
