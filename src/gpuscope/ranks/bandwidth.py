"""Achieved bandwidth of collectives matched across ranks, with nccl-tests' formulas.

The time of a collective is its last arriver's kernel duration: the others' kernels also hold
their wait for it. algbw = bytes / time; busbw = algbw × the bus factor of the kind and group
size (all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast, reduce,
send/recv 1), which makes sizes and group sizes comparable with each other and with the link.
Only collectives whose size and group size were recorded (torch's `record_param_comms`) count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuscope.analysis.communication import bus_factor
from gpuscope.ranks.keys import Key
from gpuscope.trace.model import I64


@dataclass(frozen=True)
class BandwidthRow:
    kind: str
    bytes: int
    group_size: int
    count: int
    time_p50_ns: float  # last arriver's duration, median over the calls
    algbw_gbs: float  # total bytes / total time (GB/s = 1e9 B/s)
    busbw_gbs: float | None
    busbw_best_gbs: float | None  # the fastest single call


def rows(
    key_of: list[Key], keys: I64, sizes: I64, group_sizes: I64, transfer_ns: I64
) -> list[BandwidthRow]:
    """One row per (kind, size, group size) over the aligned collectives; `keys`, `sizes`,
    `group_sizes` and `transfer_ns` are per collective (-1 where unknown)."""
    known = (sizes > 0) & (group_sizes > 0) & (transfer_ns > 0)
    groups: dict[tuple[str, int, int], list[int]] = {}
    for i in np.flatnonzero(known):
        kind = key_of[int(keys[i])][1]
        groups.setdefault((kind, int(sizes[i]), int(group_sizes[i])), []).append(int(i))
    result = [_row(k, np.asarray(v), transfer_ns) for k, v in groups.items()]
    return sorted(result, key=lambda r: (r.kind, r.bytes))


def _row(key: tuple[str, int, int], index: I64, transfer_ns: I64) -> BandwidthRow:
    kind, size, group_size = key
    time = transfer_ns[index].astype(np.float64)
    factor = bus_factor(kind, group_size)
    algbw = size * len(index) / float(time.sum())  # plain floats: the report is built from them
    best = size / float(time.min())
    return BandwidthRow(
        kind=kind,
        bytes=size,
        group_size=group_size,
        count=len(index),
        time_p50_ns=float(np.median(time)),
        algbw_gbs=algbw,
        busbw_gbs=algbw * factor if factor is not None else None,
        busbw_best_gbs=best * factor if factor is not None else None,
    )
