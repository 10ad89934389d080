"""One row per communication kernel, with what the trace says about the call behind it.

A kernel is tied to the collective torch recorded (`record_param_comms`: sizes, group size) by the
op's External id, which current Kineto writes on the kernel. Older Kineto writes the correlation
id there instead (the HTA sample traces), so the kernel's launch call is located in time inside
the recording op on the launching thread. The op that issued it (`c10d::alltoall_base_`,
`nccl:all_reduce`) is found the same way: NCCL runs an all-to-all as SendRecv kernels, and RCCL's
`ncclDevKernel_Generic` says nothing of the collective, so the op's word counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gpuscope.analysis._intervals import take
from gpuscope.analysis.communication.groups import dense, distinct
from gpuscope.analysis.communication.names import KINDS, OP_NAME, KernelName, op_kind, parse_kernel
from gpuscope.analysis.communication.names import record_kind as kind_of_record
from gpuscope.analysis.stepranges import slot, step_rows
from gpuscope.trace.model import I64, Trace

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

NESTING = 4  # ops looked back through for the one enclosing a launch (nesting depth)


@dataclass(frozen=True)
class Calls:
    """Per communication kernel (row of trace.gpu, in time order)."""

    rows: I64
    start: I64
    dur: I64
    device: I64
    stream: I64
    parsed: tuple[KernelName, ...]  # per distinct kernel name, indexed by `which`
    parsed_names: I64  # the name index (trace.names) of each of those
    which: I64
    kind: I64  # index into KINDS: the recorded collective's, else the op's, else the name's
    record: I64  # row of trace.collectives, -1 when not linked
    bytes: I64  # the larger of the input and output buffers, -1 when unknown
    ranks: I64  # group size, -1 when unknown
    group: I64  # process group name (index into trace.names), -1 when unknown
    launched_by: I64  # name index of the c10d / nccl op that issued it, -1 when none
    anchor: I64  # when the host issued it (launch call or op start), -1 when unknown

    def __len__(self) -> int:
        return len(self.rows)


def calls(a: Analysis, rows: I64) -> Calls:
    """The communication kernels `rows` of `a.trace.gpu`, linked to their collectives."""
    trace = a.trace
    rows = rows[np.argsort(trace.gpu.start[rows], kind="stable")]
    names, which = dense(trace.gpu.name[rows].astype(np.int64))
    parsed = tuple(parse_kernel(trace.names[n], trace.meta.vendor) for n in names)
    anchor, tid = _anchors(a, rows)
    record = _records(trace, trace.gpu.external_id[rows], anchor, tid)
    issuer = _issuers(trace, anchor, tid)
    launched_by = take(trace.ops.name.astype(np.int64), issuer, -1)
    coll = trace.collectives
    elems = np.maximum(take(coll.in_elems, record, -1), take(coll.out_elems, record, -1))
    width = take(coll.elem_bytes.astype(np.int64), record, -1)
    size = np.where((elems >= 0) & (width > 0), elems * width, -1)
    gpu = trace.gpu
    return Calls(
        rows=rows,
        start=gpu.start[rows],
        dur=gpu.dur[rows],
        device=gpu.device[rows].astype(np.int64),
        stream=gpu.stream[rows],
        parsed=parsed,
        parsed_names=names.astype(np.int64),
        which=which.astype(np.int64),
        kind=_kinds(trace, parsed, which, record, launched_by),
        record=record,
        bytes=size,
        ranks=take(coll.group_size.astype(np.int64), record, -1),
        group=take(coll.group.astype(np.int64), record, -1),
        launched_by=launched_by,
        anchor=anchor,
    )


def _anchors(a: Analysis, rows: I64) -> tuple[I64, I64]:
    """(time, thread) at which the host issued each kernel: its launch call, else the op with
    its External id."""
    trace = a.trace
    host_index = a.links.host_index[rows]
    time = take(trace.host.start, host_index, -1)
    tid = take(trace.host.tid, host_index, -1)
    missing = time < 0
    if missing.any():
        op = _by_external_id(trace.ops.external_id, trace.gpu.external_id[rows[missing]])
        time[missing] = take(trace.ops.start, op, -1)
        tid[missing] = take(trace.ops.tid, op, -1)
    return time, tid


def _by_external_id(ids: I64, wanted: I64) -> I64:
    """Index into `ids` of each wanted External id (-1 when absent)."""
    result = np.full(len(wanted), -1, np.int64)
    if len(ids) == 0 or len(wanted) == 0:
        return result
    order = np.argsort(ids, kind="stable")
    pos = np.clip(np.searchsorted(ids[order], wanted), 0, len(ids) - 1)
    hit = (ids[order][pos] == wanted) & (wanted >= 0)
    result[hit] = order[pos[hit]]
    return result


def _records(trace: Trace, external: I64, anchor: I64, tid: I64) -> I64:
    """Row of trace.collectives for each kernel: by External id, else by time on the thread."""
    coll = trace.collectives
    if len(coll) == 0:
        return np.full(len(external), -1, np.int64)
    ops = trace.ops
    found = _by_external_id(ops.external_id[coll.op], external)
    missing = found < 0
    if missing.any():
        op_rows = coll.op
        inside = enclosing(ops.start[op_rows], ops.end[op_rows], ops.tid[op_rows], anchor, tid)
        found[missing] = inside[missing]
    return found


def _issuers(trace: Trace, anchor: I64, tid: I64) -> I64:
    """Row of trace.ops of the c10d / nccl op enclosing each launch (-1 when none)."""
    ops = trace.ops
    wanted = [i for i in distinct(ops.name.astype(np.int64)) if OP_NAME.match(trace.names[i])]
    if not wanted:
        return np.full(len(anchor), -1, np.int64)
    rows = np.flatnonzero(np.isin(ops.name, wanted))
    inside = enclosing(ops.start[rows], ops.end[rows], ops.tid[rows], anchor, tid)
    return take(rows, inside, -1)


def enclosing(start: I64, end: I64, tid: I64, at: I64, at_tid: I64) -> I64:
    """For each (at, at_tid): the index of the latest-starting interval on that thread that
    contains `at` (start ≤ at ≤ end), looking back through NESTING intervals; -1 when none."""
    result = np.full(len(at), -1, np.int64)
    known = at >= 0
    if len(start) == 0 or not known.any():
        return result
    order = np.lexsort((start, tid))
    s, e, t = start[order], end[order], tid[order]
    for thread in distinct(at_tid[known]):
        lo, hi = np.searchsorted(t, thread, "left"), np.searchsorted(t, thread, "right")
        queries = np.flatnonzero(known & (at_tid == thread))
        when = at[queries]
        pos = lo + np.searchsorted(s[lo:hi], when, side="right") - 1
        for back in range(NESTING):
            j = pos - back
            hit = (j >= lo) & (result[queries] < 0)
            hit[hit] = e[j[hit]] >= when[hit]
            result[queries[hit]] = order[j[hit]]
    return result


def _kinds(
    trace: Trace, parsed: tuple[KernelName, ...], which: I64, record: I64, launched_by: I64
) -> I64:
    """The recorded collective's kind, else the issuing op's, else the kernel name's."""
    unknown = KINDS.index("unknown")
    by_name = np.array([KINDS.index(p.kind) for p in parsed], np.int64)[which]
    coll = trace.collectives
    record_names = {int(n) for n in distinct(take(coll.name.astype(np.int64), record, -1))}
    lookup = {n: KINDS.index(kind_of_record(trace.names[n])) for n in record_names if n >= 0}
    recorded = np.array(
        [lookup.get(int(n), unknown) for n in take(coll.name.astype(np.int64), record, -1)],
        np.int64,
    )
    op_names = {int(n) for n in distinct(launched_by) if n >= 0}
    op_lookup = {n: KINDS.index(op_kind(trace.names[n])) for n in op_names}
    by_op = np.array([op_lookup.get(int(n), unknown) for n in launched_by], np.int64)
    kind = np.where(recorded != unknown, recorded, by_op)
    return np.where(kind != unknown, kind, by_name)


def steps(trace: Trace) -> tuple[I64, I64, tuple[str, ...]]:
    """The ProfilerStep#N ranges (start, end, name), in time order (`stepranges.step_rows`)."""
    ops, rows = trace.ops, step_rows(trace)
    names = tuple(trace.names[n] for n in ops.name[rows])
    return ops.start[rows], ops.end[rows], names


def step_index(calls: Calls, lo: I64, hi: I64) -> I64:
    """Per call: the profiler step whose range holds the moment the host issued it (its kernel's
    start when the launch is unknown); -1 outside every step."""
    return slot(np.where(calls.anchor >= 0, calls.anchor, calls.start), lo, hi)
