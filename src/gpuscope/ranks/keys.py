"""The key that tells collectives apart across ranks: (process group, kind, size).

The size is part of the key only for collectives whose every member passes the same buffer
(all-reduce, all-gather, reduce-scatter, broadcast, reduce); all-to-all and point-to-point sizes
differ from rank to rank. A group or size the trace does not record is left out (None / -1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gpuscope.analysis.communication import KINDS
from gpuscope.ranks.summary import RankSummary
from gpuscope.trace.model import I64

SAME_SIZE = frozenset({"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"})
Key = tuple[str | None, str, int]  # (group name, kind, bytes or -1)


def keys(ranks: Sequence[RankSummary]) -> tuple[list[I64], list[Key]]:
    """Per rank, the key id of each call; and what each key id stands for."""
    table: dict[Key, int] = {}
    result: list[I64] = []
    for summary in ranks:
        calls = summary.calls
        ids = np.empty(len(calls), np.int64)
        tuples = zip(calls.group.tolist(), calls.kind.tolist(), calls.bytes.tolist(), strict=True)
        for i, (group, kind, size) in enumerate(tuples):
            name = summary.groups[group] if group >= 0 else None
            kind_name = KINDS[kind]
            key = (name, kind_name, size if kind_name in SAME_SIZE and size >= 0 else -1)
            ids[i] = table.setdefault(key, len(table))
        result.append(ids)
    return result, list(table)
