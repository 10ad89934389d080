"""`Communication`: what the communication analysis found (`analysis.py` finds it)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuscope.analysis.communication.calls import Calls
from gpuscope.analysis.communication.exposure import Exposure
from gpuscope.analysis.communication.stats import Bucket, CollectiveRow, SizeRow
from gpuscope.trace.model import I64


@dataclass(frozen=True)
class Communication:
    """Everything this analysis found; `names` is the trace's name table (for display)."""

    names: tuple[str, ...]
    calls: Calls
    kernel_ns: int  # communication kernels' summed durations
    all_kernel_ns: int  # every kernel's summed durations
    exposure: Exposure | None  # None when the source has no timestamps
    collectives: list[CollectiveRow]
    buckets: list[Bucket]
    grouping: str | None  # how identical calls were told apart ("size", "step position")
    sizes: list[SizeRow]
    step_names: tuple[str, ...]
    step_of: I64  # per call: index into step_names, -1 outside the steps
    record_ops: int  # record_param_comms ops in the trace (with or without sizes)
    training: bool  # the trace holds autograd backward ops
    wrapper: str = ""  # the data-parallel wrapper the trace's ranges name (Program.wrapper)
