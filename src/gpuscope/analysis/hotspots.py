"""Where the device time goes: top kernels by total time, categories, and memory copies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.analysis._unique import unique, unique_inverse
from gpuscope.analysis.categories import CATEGORIES, Classification
from gpuscope.trace import copy_kind
from gpuscope.trace.model import COPY_KINDS, KERNEL, MEMCPY, MEMSET, PAGEABLE, PINNED, Trace


@dataclass(frozen=True)
class KernelGroup:
    name: str
    category: str
    count: int
    total_ns: int
    min_ns: int
    max_ns: int

    @property
    def mean_ns(self) -> float:
        return self.total_ns / self.count if self.count else 0.0


def kernel_groups(trace: Trace, classes: Classification) -> list[KernelGroup]:
    """All kernel names with their totals, largest total first.

    From the per-dispatch rows when the trace has any, else from summary rows (`trace.totals`).
    Durations unknown to the source (counter-only files) make total, min and max -1.
    """
    gpu = trace.gpu
    rows = np.flatnonzero(gpu.kind == KERNEL)
    if len(rows) == 0:
        return _total_groups(trace, classes)
    names, inverse = unique_inverse(gpu.name[rows])
    durations = gpu.dur[rows]
    known = bool((durations >= 0).all())
    totals = np.bincount(inverse, weights=durations, minlength=len(names))
    counts = np.bincount(inverse, minlength=len(names))
    minima = np.full(len(names), np.iinfo(np.int64).max)
    np.minimum.at(minima, inverse, durations)
    maxima = np.zeros(len(names), np.int64)
    np.maximum.at(maxima, inverse, durations)
    # a name's category: the one most of its calls got (parent-op fallback can differ per call)
    pairs = np.bincount(
        inverse * len(CATEGORIES) + classes.category[rows], minlength=len(names) * len(CATEGORIES)
    ).reshape(len(names), len(CATEGORIES))
    category = pairs.argmax(axis=1)
    order = np.argsort(-totals, kind="stable") if known else np.argsort(-counts, kind="stable")
    return [
        KernelGroup(
            name=trace.names[names[i]],
            category=CATEGORIES[int(category[i])],
            count=int(counts[i]),
            total_ns=int(totals[i]) if known else -1,
            min_ns=int(minima[i]) if known else -1,
            max_ns=int(maxima[i]) if known else -1,
        )
        for i in order
    ]


def _total_groups(trace: Trace, classes: Classification) -> list[KernelGroup]:
    totals = trace.totals
    rows = np.flatnonzero(totals.kind == KERNEL)
    groups = [
        KernelGroup(
            name=trace.names[totals.name[i]],
            category=CATEGORIES[int(classes.totals[i])],
            count=int(totals.count[i]),
            total_ns=int(totals.total_ns[i]),
            min_ns=int(totals.min_ns[i]),
            max_ns=int(totals.max_ns[i]),
        )
        for i in rows
    ]
    return sorted(groups, key=lambda g: -g.total_ns)


def category_totals(trace: Trace, classes: Classification) -> dict[str, tuple[int, int]]:
    """category -> (count, total ns) over kernels, memcpys and memsets (or their totals)."""
    gpu, totals = trace.gpu, trace.totals
    durations = np.maximum(gpu.dur, 0)
    summed = np.bincount(classes.category, weights=durations, minlength=len(CATEGORIES))
    counts = np.bincount(classes.category, minlength=len(CATEGORIES))
    # summary rows count only for the kinds with no per-event rows
    use = np.isin(totals.kind, [k for k in (KERNEL, MEMCPY, MEMSET) if not (gpu.kind == k).any()])
    if use.any():
        summed = summed + np.bincount(
            classes.totals[use], weights=totals.total_ns[use], minlength=len(CATEGORIES)
        )
        counts = counts + np.bincount(
            classes.totals[use], weights=totals.count[use], minlength=len(CATEGORIES)
        ).astype(np.int64)
    return {name: (int(counts[i]), int(summed[i])) for i, name in enumerate(CATEGORIES)}


@dataclass(frozen=True)
class CopyKind:
    kind: str
    count: int
    time_ns: int
    bytes: int  # of the copies whose size the source recorded
    pageable: int  # copies whose host side is pageable memory
    pinned: int
    sized: int = 0  # copies with a recorded size (an empty size is unknown, never 0 B)
    sized_ns: int = 0  # their time: what a bandwidth divides by

    @property
    def known_bytes(self) -> int | None:
        """Bytes moved, None when no copy of this kind has a recorded size."""
        return self.bytes if self.sized else None

    @property
    def gb_per_s(self) -> float | None:
        """Bandwidth over the copies with a known size (never diluted by unknown ones)."""
        return round(self.bytes / self.sized_ns, 3) if self.sized and self.sized_ns else None


def copies(trace: Trace) -> dict[str, CopyKind]:
    """Memcpys by direction (HtoD, DtoH, DtoD, ...), with pageable / pinned host memory where
    the source says; from summary rows when there are no per-copy events."""
    gpu = trace.gpu
    rows = np.flatnonzero(gpu.kind == MEMCPY)
    if len(rows) == 0:
        return _total_copies(trace)
    result: dict[str, CopyKind] = {}
    direction = gpu.copy[rows].astype(np.int64)
    direction[migrations(trace)[rows]] = len(COPY_KINDS)  # page migrations: their own kind
    for code in unique(direction):
        chosen = rows[direction == code]
        kind = (*COPY_KINDS, MIGRATION)[int(code)] if 0 <= code <= len(COPY_KINDS) else "other"
        size = gpu.bytes[chosen]
        memory = gpu.host_memory[chosen]
        dur = np.maximum(gpu.dur[chosen], 0)
        known = size >= 0
        old = result.get(kind, CopyKind(kind, 0, 0, 0, 0, 0))
        result[kind] = CopyKind(
            kind,
            old.count + len(chosen),
            old.time_ns + int(dur.sum()),
            old.bytes + int(size[known].sum()),
            old.pageable + int((memory == PAGEABLE).sum()),
            old.pinned + int((memory == PINNED).sum()),
            old.sized + int(known.sum()),
            old.sized_ns + int(dur[known].sum()),
        )
    return result


MIGRATION = "migration"
_MIGRATION_NAMES = ("Unified ", "Page Migration", "PAGE_MIGRATION", "page migration")


def migrations(trace: Trace) -> Any:
    """Per row of trace.gpu: is it a unified-memory page migration (nsys `[CUDA memcpy Unified
    Host-to-Device]`, rocprofv3 page-migration records) rather than a copy the program asked for?"""
    gpu = trace.gpu
    names = unique(gpu.name[gpu.kind == MEMCPY])
    wanted = [int(n) for n in names if any(w in trace.names[int(n)] for w in _MIGRATION_NAMES)]
    return (gpu.kind == MEMCPY) & np.isin(gpu.name, wanted)


def _total_copies(trace: Trace) -> dict[str, CopyKind]:
    totals = trace.totals
    result: dict[str, CopyKind] = {}
    for i in np.flatnonzero(totals.kind == MEMCPY):
        kind = COPY_KINDS[copy_kind(trace.names[totals.name[i]])]
        old = result.get(kind, CopyKind(kind, 0, 0, 0, 0, 0))
        count, time = int(totals.count[i]), int(totals.total_ns[i])
        result[kind] = CopyKind(kind, old.count + count, old.time_ns + time, old.bytes, 0, 0)
    return result


def memset_totals(trace: Trace) -> tuple[int, int, int]:
    """(count, ns, bytes) of memsets."""
    gpu = trace.gpu
    rows = gpu.kind == MEMSET
    if not rows.any():
        totals = trace.totals
        chosen = totals.kind == MEMSET
        return int(totals.count[chosen].sum()), int(totals.total_ns[chosen].sum()), 0
    size = gpu.bytes[rows]
    return int(rows.sum()), int(np.maximum(gpu.dur[rows], 0).sum()), int(size[size > 0].sum())
