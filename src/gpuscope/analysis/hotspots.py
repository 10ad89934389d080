"""Where the device time goes: top kernels by total time, categories, and memory copies."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from gpuscope.analysis.categories import CATEGORIES, Classification
from gpuscope.trace.model import KERNEL, MEMCPY, MEMSET, Trace


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
    """All kernel names with their totals, largest total first."""
    gpu = trace.gpu
    rows = np.flatnonzero(gpu.kind == KERNEL)
    if len(rows) == 0:
        return []
    names, inverse = np.unique(gpu.name[rows], return_inverse=True)
    durations = gpu.dur[rows]
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
    return [
        KernelGroup(
            name=trace.names[names[i]],
            category=CATEGORIES[int(category[i])],
            count=int(counts[i]),
            total_ns=int(totals[i]),
            min_ns=int(minima[i]),
            max_ns=int(maxima[i]),
        )
        for i in np.argsort(-totals, kind="stable")
    ]


def category_totals(trace: Trace, classes: Classification) -> dict[str, tuple[int, int]]:
    """category -> (count, total ns) over kernels, memcpys and memsets."""
    totals = np.bincount(classes.category, weights=trace.gpu.dur, minlength=len(CATEGORIES))
    counts = np.bincount(classes.category, minlength=len(CATEGORIES))
    return {name: (int(counts[i]), int(totals[i])) for i, name in enumerate(CATEGORIES)}


_COPY_KIND = re.compile(r"\b(HtoD|DtoH|DtoD|HtoH|PtoP|DtoA|AtoD|AtoH|HtoA|AtoA)\b")
_COPY_MEMORY = re.compile(r"\((\w+)\s*->\s*(\w+)\)")


@dataclass(frozen=True)
class CopyKind:
    kind: str
    count: int
    time_ns: int
    bytes: int
    pageable: int  # copies whose host side is pageable memory
    pinned: int


def copies(trace: Trace) -> dict[str, CopyKind]:
    """Memcpys by direction (HtoD, DtoH, DtoD, ...), with pageable/pinned where the name says."""
    gpu = trace.gpu
    rows = np.flatnonzero(gpu.kind == MEMCPY)
    result: dict[str, CopyKind] = {}
    for name in np.unique(gpu.name[rows]):
        text = trace.names[name]
        chosen = rows[gpu.name[rows] == name]
        kind_match = _COPY_KIND.search(text)
        kind = kind_match.group(1) if kind_match else "other"
        memory = " ".join(_COPY_MEMORY.findall(text)[0]) if _COPY_MEMORY.search(text) else ""
        size = gpu.bytes[chosen]
        old = result.get(kind, CopyKind(kind, 0, 0, 0, 0, 0))
        result[kind] = CopyKind(
            kind,
            old.count + len(chosen),
            old.time_ns + int(gpu.dur[chosen].sum()),
            old.bytes + int(size[size > 0].sum()),
            old.pageable + (len(chosen) if "Pageable" in memory else 0),
            old.pinned + (len(chosen) if "Pinned" in memory else 0),
        )
    return result


def memset_totals(trace: Trace) -> tuple[int, int, int]:
    """(count, ns, bytes) of memsets."""
    gpu = trace.gpu
    rows = gpu.kind == MEMSET
    size = gpu.bytes[rows]
    return int(rows.sum()), int(gpu.dur[rows].sum()), int(size[size > 0].sum())
