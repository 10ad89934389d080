"""Host hot spots: the CPU operators the host spends its time in, and the Python that calls them.

Operators nest on their thread by time (a child starts and ends inside its parent). An operator's
*self* time is its duration minus the time of its direct operator children (clipped to it), so the
self times of a thread add up to the time any operator ran on it; its *inclusive* time counts each
outermost instance of a name once (`aten::mean` inside `aten::mean` is not counted twice).

Python frames (`with_stack=True`, kind PYTHON) are named `file(line): function`, where the line is
the function's first line, as torch.profiler records it. An operator is attributed to the innermost
enclosing frame on its thread that is *user code*: a `file(line): function` frame whose top-level
package is neither torch (nor functorch, triton, torchgen), nor the Python standard library
(`sys.stdlib_module_names`), nor Inductor's generated code (`torchinductor_*`). Built-ins
(`<built-in method …>`), `<frozen …>` / `<string>` frames and `nn.Module: …` markers are never
user code. So `aten::addmm` under `linear.py(130): forward` under `modeling_llama.py(62): forward`
is attributed to `modeling_llama.py(62): forward`. Library model code (transformers, vllm) counts
as user code: that is where an engineer changes the model. A user file named like a standard
library module (`inspect.py`) is taken for the library: the names carry no more than that.

When the verdict is CPU-bound, the finding names the operators whose self time fills the
host-wait gaps: device idle intervals whose next GPU op was launched only after the device went
idle (the timeline's `host_wait` cause).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis._finding import Finding, us
from gpuscope.analysis._intervals import merge, overlap_with
from gpuscope.analysis._unique import unique, unique_inverse
from gpuscope.analysis.hoststate import STATES
from gpuscope.document import units as fmt
from gpuscope.document.model import Cell, Facts, Section, Table, Text
from gpuscope.document.names import short_name
from gpuscope.trace.model import I64, OP, PYTHON, Mask, Trace

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

NAME = "host_ops"
TOP = 10
HOTSPOT_WARNING_SHARE = 0.05  # an op's self time in host-wait gaps, over the GPU span
COMPILED = re.compile(r"^(CompiledFunction(Backward)?|Torch-Compiled Region|TorchDynamo Cache)")
INTERNAL_PACKAGES = frozenset({"torch", "functorch", "torchgen", "triton"})
_FRAME = re.compile(r"^(?P<path>.+)\((?P<line>\d+)\): (?P<func>.+)$")
_SITE = re.compile(r"^.*/(?:site|dist)-packages/")
_STDLIB_PATH = re.compile(r"/lib/python3[\d.]*/")


@dataclass(frozen=True)
class OpStat:
    name: str
    count: int
    self_ns: int
    inclusive_ns: int  # outermost instances of the name only
    wait_ns: int  # self time inside host-wait gaps (-1: no timeline)
    caller: str  # the user Python frame with most of this op's self time ("" if none)
    caller_ns: int


@dataclass(frozen=True)
class Caller:
    frame: str
    self_ns: int  # operator self time attributed to this frame
    ops: int


@dataclass(frozen=True)
class HostWait:
    gaps: int
    gap_ns: int
    op_self_ns: int  # operator self time inside those gaps (any thread)
    covered_ns: int  # gap time during which some operator ran


@dataclass(frozen=True)
class HostOps:
    ops: int
    threads: int
    self_ns: int  # all operator self time (= time any operator ran, summed over threads)
    by_self: list[OpStat]
    by_inclusive: list[OpStat]
    by_wait: list[OpStat]  # the operators with the most self time in host-wait gaps
    callers: list[Caller] | None  # None: the trace has no Python frames
    python_events: int
    python_frames: int  # distinct Python function names
    launch_calls: int | None
    launch_api_ns: int | None
    host_wait: HostWait | None
    gpu_span_ns: int | None


# -- nesting ----------------------------------------------------------------------------------


def parents(tid: I64, start: I64, end: I64) -> I64:
    """Row of the direct parent of each interval among the intervals of its thread (-1: none).

    Vectorised: with intervals sorted by (start, longest first), an interval's depth is the number
    sorted before it that are still open at its start, and its parent is the last interval before
    it one level up. Zero-length intervals get half a unit so they nest inside one that starts at
    the same time instead of ending before it.
    """
    parent = np.full(len(start), -1, np.int64)
    for thread in unique(tid):
        rows = np.flatnonzero(tid == thread)
        parent[rows] = _thread_parents(start[rows], end[rows], rows)
    return parent


def _thread_parents(start: I64, end: I64, rows: I64) -> I64:
    base = start.min()
    lo = (start - base) * 2
    hi = np.where(end > start, (end - base) * 2, lo + 1)
    order = np.lexsort((np.arange(len(lo)), -hi, lo))
    ended = np.searchsorted(np.sort(hi), lo[order], side="right")
    depth = np.arange(len(order)) - ended  # open intervals sorted before each one
    n = len(order) + 1
    key = depth * n + np.arange(len(order))
    sorted_key = np.sort(key)
    below = np.searchsorted(sorted_key, (depth - 1) * n + np.arange(len(order))) - 1
    candidate = np.clip(below, 0, len(order) - 1)
    ok = (depth > 0) & (below >= 0) & (sorted_key[candidate] // n == depth - 1)
    result = np.full(len(order), -1, np.int64)
    result[order[ok]] = rows[order[sorted_key[candidate[ok]] % n]]
    return result


def self_times(start: I64, end: I64, parent: I64) -> I64:
    """Duration minus the direct children's time, each child clipped to its parent."""
    child = np.flatnonzero(parent >= 0)
    up = parent[child]
    inside = np.minimum(end[child], end[up]) - np.maximum(start[child], start[up])
    taken = np.bincount(up, weights=np.maximum(inside, 0), minlength=len(start))
    result: I64 = np.maximum(end - start - taken.astype(np.int64), 0)
    return result


def outermost_of_name(name: Any, parent: I64) -> Mask:
    """True where no ancestor has the same name (recursion is counted once)."""
    outer = np.ones(len(parent), bool)
    current = parent.copy()
    while (current >= 0).any():
        alive = current >= 0
        outer[alive] &= name[current[alive]] != name[alive]
        current[alive] = parent[current[alive]]
    return outer


# -- Python frames ----------------------------------------------------------------------------


def is_user_frame(name: str) -> bool:
    """`model.py(12): forward` is user code; torch, the standard library, built-ins are not."""
    match = _FRAME.match(name)
    if match is None or name.startswith(("<", "nn.Module:")):
        return False
    path = match["path"].replace("\\", "/")
    if path.startswith("<") or "torchinductor_" in path or _STDLIB_PATH.search(path):
        return False
    top = _SITE.sub("", path).lstrip("/").split("/", 1)[0].removesuffix(".py")
    return top not in INTERNAL_PACKAGES and top not in sys.stdlib_module_names


def user_callers(trace: Trace) -> I64:
    """Per row of trace.ops: the row of the innermost enclosing user Python frame (-1: none)."""
    ops = trace.ops
    result = np.full(len(ops), -1, np.int64)
    python = ops.kind == PYTHON
    if not python.any():
        return result
    names = unique(ops.name[python])
    user_names = [i for i in names if is_user_frame(trace.names[i])]
    is_user = python & np.isin(ops.name, user_names)
    parent = parents(ops.tid, ops.start, ops.end)
    current = parent.copy()
    pending = current >= 0
    while pending.any():
        rows = np.flatnonzero(pending)
        hit = is_user[current[rows]]
        result[rows[hit]] = current[rows[hit]]
        current[rows] = np.where(hit, -1, parent[current[rows]])
        pending = current >= 0
    return result


# -- host-wait gaps ---------------------------------------------------------------------------


def host_wait_gaps(a: Analysis) -> tuple[I64, I64] | None:
    """The device's idle time during which its host was dispatching work or doing its own (the
    `launch` and `host_work` host states), merged; None without a timeline or launch links."""
    if a.breakdown is None or not a.inputs.launch:
        return None
    pieces = a.breakdown.idle.pieces
    late = np.isin(pieces.state, [STATES.index("launch"), STATES.index("host_work")])
    return merge(pieces.start[late], pieces.end[late])


# -- the analysis -----------------------------------------------------------------------------


def analyse(a: Analysis) -> HostOps | None:
    trace = a.trace
    ops = trace.ops
    chosen = np.flatnonzero((ops.kind == OP) & (ops.start >= 0))
    if not a.inputs.cpu or len(chosen) == 0:
        return None
    start, end, tid = ops.start[chosen], ops.end[chosen], ops.tid[chosen]
    name = ops.name[chosen].astype(np.int64)
    parent = parents(tid, start, end)
    own = self_times(start, end, parent)
    outer = outermost_of_name(name, parent)
    gaps = host_wait_gaps(a)
    wait = _wait_self(gaps, start, end, parent) if gaps is not None else None
    caller = user_callers(trace)[chosen]
    stats = _op_stats(trace, name, own, np.where(outer, end - start, 0), wait, caller)
    python = ops.kind == PYTHON
    return HostOps(
        ops=len(chosen),
        threads=len(unique(tid)),
        self_ns=int(own.sum()),
        by_self=sorted(stats, key=lambda s: (-s.self_ns, s.name))[:TOP],
        by_inclusive=sorted(stats, key=lambda s: (-s.inclusive_ns, s.name))[:TOP],
        by_wait=sorted((s for s in stats if s.wait_ns > 0), key=lambda s: (-s.wait_ns, s.name))[
            :TOP
        ],
        callers=_callers(trace, caller, own) if python.any() else None,
        python_events=int(python.sum()),
        python_frames=len(unique(ops.name[python])),
        launch_calls=a.launch.launch_calls if a.inputs.launch else None,
        launch_api_ns=a.launch.launch_api_ns if a.inputs.launch else None,
        host_wait=_host_wait(gaps, start, end, wait)
        if gaps is not None and wait is not None
        else None,
        gpu_span_ns=a.timeline.device_span_ns if a.timeline is not None else None,
    )


def _wait_self(gaps: tuple[I64, I64], start: I64, end: I64, parent: I64) -> I64:
    """Each op's self time that falls inside the host-wait gaps."""
    inside = overlap_with(gaps[0], gaps[1], start, end)
    child = np.flatnonzero(parent >= 0)
    taken = np.bincount(parent[child], weights=inside[child], minlength=len(start))
    result: I64 = np.maximum(inside - taken.astype(np.int64), 0)
    return result


def _host_wait(gaps: tuple[I64, I64], start: I64, end: I64, wait: I64) -> HostWait:
    gap_start, gap_end = gaps
    busy_start, busy_end = merge(start, end)  # any op on any thread
    covered = overlap_with(busy_start, busy_end, gap_start, gap_end)
    return HostWait(
        gaps=len(gap_start),
        gap_ns=int((gap_end - gap_start).sum()),
        op_self_ns=int(wait.sum()),
        covered_ns=int(covered.sum()),
    )


def _op_stats(
    trace: Trace, name: I64, own: I64, inclusive: I64, wait: I64 | None, caller: I64
) -> list[OpStat]:
    keys, inverse = unique_inverse(name)
    count = np.bincount(inverse, minlength=len(keys))
    self_sum = np.bincount(inverse, weights=own, minlength=len(keys))
    incl_sum = np.bincount(inverse, weights=inclusive, minlength=len(keys))
    wait_sum = np.bincount(inverse, weights=wait, minlength=len(keys)) if wait is not None else None
    frame = np.where(caller >= 0, trace.ops.name[np.maximum(caller, 0)], -1)
    top_caller = _top_caller(inverse, frame, own, len(keys))
    return [
        OpStat(
            name=trace.names[int(keys[i])],
            count=int(count[i]),
            self_ns=int(self_sum[i]),
            inclusive_ns=int(incl_sum[i]),
            wait_ns=int(wait_sum[i]) if wait_sum is not None else -1,
            caller=trace.names[top_caller[i][0]] if top_caller[i][0] >= 0 else "",
            caller_ns=top_caller[i][1],
        )
        for i in range(len(keys))
    ]


def _top_caller(inverse: I64, frame: I64, own: I64, groups: int) -> list[tuple[int, int]]:
    """Per op name: (name of the caller frame with the most self time or -1, that time)."""
    result = [(-1, 0)] * groups
    known = frame >= 0
    if not known.any():
        return result
    pair = inverse[known] * (int(frame.max()) + 1) + frame[known]
    pairs, pair_inverse = unique_inverse(pair)
    time = np.bincount(pair_inverse, weights=own[known], minlength=len(pairs))
    group, name = np.divmod(pairs, int(frame.max()) + 1)
    order = np.lexsort((time, group))  # within a group, the largest time comes last
    last = order[np.r_[group[order][1:] != group[order][:-1], True]]
    for i in last:
        result[int(group[i])] = (int(name[i]), int(time[i]))
    return result


def _callers(trace: Trace, caller: I64, own: I64) -> list[Caller]:
    """User Python frames by the operator self time under them (frames grouped by name)."""
    known = caller >= 0
    frame_names = trace.ops.name[caller[known]]
    keys, inverse = unique_inverse(frame_names)
    time = np.bincount(inverse, weights=own[known], minlength=len(keys))
    count = np.bincount(inverse, minlength=len(keys))
    found = [
        Caller(trace.names[int(keys[i])], int(time[i]), int(count[i])) for i in range(len(keys))
    ]
    return sorted(found, key=lambda c: (-c.self_ns, c.frame))[:TOP]


# -- report -----------------------------------------------------------------------------------


def to_dict(result: HostOps) -> dict[str, Any]:
    total = result.self_ns
    return {
        "ops": result.ops,
        "threads": result.threads,
        "op_self_us": us(total),
        "by_self": [_stat_dict(s, total) for s in result.by_self],
        "by_inclusive": [
            {
                "name": s.name,
                "count": s.count,
                "inclusive_us": us(s.inclusive_ns),
                "self_us": us(s.self_ns),
            }
            for s in result.by_inclusive
        ],
        "callers": None
        if result.callers is None
        else [
            {
                "frame": c.frame,
                "ops": c.ops,
                "self_us": us(c.self_ns),
                "share": _share(c.self_ns, total),
            }
            for c in result.callers
        ],
        "python": {"events": result.python_events, "frames": result.python_frames}
        if result.python_events
        else None,
        "launch": None
        if result.launch_calls is None or result.launch_api_ns is None
        else {
            "calls": result.launch_calls,
            "api_us": us(result.launch_api_ns),
            "share_of_op_self": _share(result.launch_api_ns, total),
        },
        "host_wait": _wait_dict(result.host_wait, result.by_wait),
    }


def _stat_dict(stat: OpStat, total: int) -> dict[str, Any]:
    return {
        "name": stat.name,
        "count": stat.count,
        "self_us": us(stat.self_ns),
        "self_share": _share(stat.self_ns, total),
        "inclusive_us": us(stat.inclusive_ns),
        "host_wait_self_us": us(stat.wait_ns) if stat.wait_ns >= 0 else None,
        "caller": stat.caller or None,
        "caller_share": _share(stat.caller_ns, stat.self_ns) if stat.caller else None,
    }


def _wait_dict(wait: HostWait | None, ranked: list[OpStat]) -> dict[str, Any] | None:
    if wait is None:
        return None
    return {
        "gaps": wait.gaps,
        "gap_us": us(wait.gap_ns),
        "op_self_us": us(wait.op_self_ns),
        "covered_share": _share(wait.covered_ns, wait.gap_ns),
        "top": [
            {"name": s.name, "self_us": us(s.wait_ns), "share": _share(s.wait_ns, wait.op_self_ns)}
            for s in ranked
        ],
    }


def _share(part: float, whole: float) -> float:
    return round(part / whole, 6) if whole else 0.0


def findings(a: Analysis, result: HostOps) -> list[Finding]:
    """None: the operators that fill the host-wait gaps are the launch / dispatch cause's
    evidence (`analysis.causes`), its critical path names them; this section lists them all."""
    return []


def section(part: dict[str, Any]) -> Section:
    blocks: list[Any] = [Facts(tuple(_facts(part)))]
    blocks.append(_self_table(part["by_self"]))
    blocks.append(_inclusive_table(part["by_inclusive"]))
    if part.get("callers"):
        blocks.append(_callers_table(part["callers"]))
    blocks.append(
        Text(
            "Self time = an operator's time minus its direct child operators'; inclusive time "
            "counts nested instances of one name once. Callers are the innermost enclosing "
            "Python frames that are user code (not torch, the standard library or built-ins); "
            "the line is the function's first line."
        )
    )
    return Section("Host operators", tuple(blocks))


def _facts(part: dict[str, Any]) -> list[tuple[str, str]]:
    items = [
        ("operators", f"{fmt.count(part['ops'])} on {fmt.count(part['threads'])} thread(s)"),
        ("operator self time", fmt.duration(part["op_self_us"])),
    ]
    launch = part.get("launch")
    if launch:
        items.append(
            (
                "launch API",
                f"{fmt.count(launch['calls'])} calls, {fmt.duration(launch['api_us'])} "
                f"({fmt.percent(launch['share_of_op_self'])} of operator self time)",
            )
        )
    python = part.get("python")
    items.append(
        (
            "Python frames",
            f"{fmt.count(python['events'])} events, {fmt.count(python['frames'])} functions"
            if python
            else "none recorded (with_stack=False)",
        )
    )
    wait = part.get("host_wait")
    if wait:
        items.append(
            (
                "host-wait gaps",
                f"{fmt.count(wait['gaps'])}, {fmt.duration(wait['gap_us'])}; operators ran "
                f"{fmt.percent(wait['covered_share'])} of it",
            )
        )
    return items


def _self_table(rows: list[dict[str, Any]]) -> Table:
    cells = tuple(
        (
            Cell(short_name(r["name"]), full=r["name"], code=True),
            Cell(fmt.count(r["count"])),
            Cell(fmt.duration(r["self_us"])),
            Cell(fmt.percent(r["self_share"])),
            Cell(fmt.duration(r["inclusive_us"])),
            Cell(fmt.duration(r["host_wait_self_us"])),
            Cell(short_name(r["caller"] or "—"), full=r["caller"] or "", code=bool(r["caller"])),
        )
        for r in rows
    )
    headers = (
        "operator",
        "count",
        "self",
        "share",
        "inclusive",
        "self in host-wait gaps",
        "called from",
    )
    return Table(headers, cells, (False, True, True, True, True, True, False), "by self time")


def _inclusive_table(rows: list[dict[str, Any]]) -> Table:
    cells = tuple(
        (
            Cell(short_name(r["name"]), full=r["name"], code=True),
            Cell(fmt.count(r["count"])),
            Cell(fmt.duration(r["inclusive_us"])),
            Cell(fmt.duration(r["self_us"])),
        )
        for r in rows
    )
    headers = ("operator", "count", "inclusive", "self")
    return Table(headers, cells, (False, True, True, True), "by inclusive time")


def _callers_table(rows: list[dict[str, Any]]) -> Table:
    cells = tuple(
        (
            Cell(short_name(r["frame"]), full=r["frame"], code=True),
            Cell(fmt.count(r["ops"])),
            Cell(fmt.duration(r["self_us"])),
            Cell(fmt.percent(r["share"])),
        )
        for r in rows
    )
    headers = ("Python function (user code)", "operators", "operator self time", "share")
    return Table(headers, cells, (False, True, True, True), "callers")
