"""Communication: how much of the collectives' time the GPU spends on nothing else, what each
collective is and how fast it runs, and which identical calls vary (a straggler signal).

For traces with communication kernels (category "communication": NCCL / RCCL `ncclDevKernel_*`,
`ncclKernel_*`, symmetric-memory and custom all-reduce, DeepEP, ...):

- exposure (`exposure.py`): communication time not overlapped by compute kernels on the same
  device, per device and stream, over the GPU span and over the ProfilerStep ranges;
- per collective (`stats.py`): kind, and what the kernel's name says (`names.py`), with
  counts and duration percentiles; sizes and achieved algorithm / bus bandwidth (nccl-tests
  factors) where torch recorded them (`record_param_comms`, linked in `calls.py`);
- spread of identical calls and bandwidth per size against the trace's own envelope.

One rank's trace is one side of every collective: a call's duration holds its wait for the
slowest peer. The findings say so, and never name a straggler from one trace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpuscope.analysis.categories import CATEGORIES
from gpuscope.analysis.communication.calls import calls, step_index, steps
from gpuscope.analysis.communication.exposure import exposure
from gpuscope.analysis.communication.groups import distinct
from gpuscope.analysis.communication.model import Communication
from gpuscope.analysis.communication.stats import buckets, collective_rows, sizes
from gpuscope.trace.model import I64

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

NAME = "communication"


def analyse(a: Analysis) -> Communication | None:
    """None when the trace has no per-dispatch communication kernels."""
    trace = a.trace
    if not a.inputs.durations:
        return None
    comm = a.classes.category == CATEGORIES.index("communication")
    rows: I64 = np.flatnonzero(comm)
    if len(rows) == 0:
        return None
    found = calls(a, rows)
    lo, hi, step_names = steps(trace)
    shown = exposure(trace, comm, found.rows, (lo, hi, step_names)) if a.inputs.timeline else None
    own = shown.per_kernel_ns if shown is not None else np.maximum(found.dur, 0)
    step_of = step_index(found, lo, hi)
    grouped, grouping = buckets(found, own, step_of, len(lo))
    return Communication(
        names=trace.names,
        calls=found,
        kernel_ns=int(np.maximum(found.dur, 0).sum()),
        all_kernel_ns=a.kernel_ns,
        exposure=shown,
        collectives=collective_rows(found, own),
        buckets=grouped,
        grouping=grouping,
        sizes=sizes(found, own),
        step_names=step_names,
        step_of=step_of,
        record_ops=_count_named(a, "record_param_comms"),
        training=_has_backward(a),
        wrapper=a.program.wrapper,
    )


def _count_named(a: Analysis, name: str) -> int:
    names = a.trace.names
    index = [i for i in distinct(a.trace.ops.name.astype(np.int64)) if names[i] == name]
    return int(np.isin(a.trace.ops.name, index).sum()) if index else 0


def _has_backward(a: Analysis) -> bool:
    names = a.trace.names
    return any("Backward" in names[i] for i in distinct(a.trace.ops.name.astype(np.int64)))
