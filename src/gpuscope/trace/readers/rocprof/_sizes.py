"""The size and host memory of each copy in rocprof v1 outputs.

From the `Data` field when rocprof's memory-copy info was on (`...,Size=N,...`), else from the
launching call's arguments (`sizeBytes(N)`), but only where that call's copy is the only one it
can have produced: a pageable copy may be split into chunks that share one call.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from gpuscope.trace.model import I64, MEMCPY, PAGEABLE, PINNED, UNKNOWN_MEMORY
from gpuscope.trace.readers.rocprof._flows import Track
from gpuscope.trace.readers.rocprof._piece import full

_SIZE_ARG = re.compile(r"\b(?:sizeBytes|size|count)\((\d+)\)")
_DATA_SIZE = re.compile(r"(?:^|,)Size=(\d+)(?:,|$)")
_DATA_TYPES = re.compile(r"SrcType=(\w+),DstType=(\w+)")


def data_sizes(data: list[str]) -> tuple[I64, Any]:
    """Bytes and host memory from rocprof's memory-copy info (`...,Size=N,...`), -1 if absent."""
    sizes = full(len(data), -1)
    memory = np.full(len(data), UNKNOWN_MEMORY, np.int8)
    for row, text in enumerate(data):
        if not isinstance(text, str) or "Size=" not in text:  # NULL, or a number in a damaged db
            continue
        found = _DATA_SIZE.search(text)
        if found:
            sizes[row] = int(found.group(1))
        types = _DATA_TYPES.search(text)
        if types:
            memory[row] = _host_memory(types.groups())
    return sizes, memory


def _host_memory(sides: tuple[str, ...]) -> int:
    if "pageable" in sides:
        return PAGEABLE
    if "pinned" in sides:
        return PINNED
    return UNKNOWN_MEMORY


def sizes_from_calls(
    kind: Any, start: I64, corr: I64, host_corr: I64, host_args: list[str], host_span: Track
) -> I64:
    """Bytes of each memcpy from its launching call's `sizeBytes(N)` (-1 when not certain).

    Certain means: the call launched no other memcpy (same correlation), and no memcpy without
    a link starts while the call runs (it could be another chunk of the same call).
    """
    sizes = full(len(kind), -1)
    copies = np.flatnonzero((kind == MEMCPY) & (corr >= 0))
    if not len(copies) or not len(host_corr):
        return sizes
    call_of = {int(c): row for row, c in enumerate(host_corr.tolist()) if c >= 0}
    shared = _shared(corr[copies])
    loose = np.sort(start[(kind == MEMCPY) & (corr < 0)])
    for row in copies:
        call = call_of.get(int(corr[row]))
        if call is None or int(corr[row]) in shared:
            continue
        found = _SIZE_ARG.search(host_args[call] or "")
        if found and not _loose_inside(loose, host_span, call):
            sizes[row] = int(found.group(1))
    return sizes


def _shared(ids: I64) -> set[int]:
    values, counts = np.unique(ids, return_counts=True)
    return set(values[counts > 1].tolist())


def _loose_inside(loose: I64, span: Track, call: int) -> bool:
    begin = int(span.ts[call])
    end = max(-(2**63), min(begin + int(span.dur[call]), 2**63 - 1))  # a damaged time: no wrap
    return bool(np.searchsorted(loose, end, "right") > np.searchsorted(loose, begin, "left"))
