"""Communication events for the analysis tests' TraceBuilder: torch's record_param_comms ops with
their sizes, NCCL kernels with known times, profiler steps, and a plain-Python recount of the
exposed communication time to check the analysis against."""

from __future__ import annotations

from typing import Any

from tests.unit.analysis.conftest import TraceBuilder

ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
ALL_GATHER = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
SEND_RECV = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"
COMM_STREAM = 20


def record(
    b: TraceBuilder,
    collective: str,
    ts: float,
    elems: int,
    ranks: int,
    out_elems: int | None = None,
    dtype: str = "Float",
    group: str = "0",
    dur: float = 10.0,
) -> int:
    """A record_param_comms op (torch ≥ 2.1 arguments); returns its External id."""
    ext = b._id()
    args: dict[str, Any] = {
        "External id": ext,
        "Collective name": collective,
        "In msg nelems": elems,
        "Out msg nelems": elems if out_elems is None else out_elems,
        "dtype": dtype,
        "Group size": ranks,
        "Process Group Name": group,
    }
    b.events.append(_x("cpu_op", "record_param_comms", ts, dur, args))
    return ext


def collective(
    b: TraceBuilder,
    kernel: str,
    start: float,
    dur: float,
    *,
    at: float | None = None,
    ext: int = -1,
    stream: int = COMM_STREAM,
) -> None:
    """A communication kernel launched at `at` (default: just before it starts), linked to the
    op with External id `ext` the way current Kineto writes it."""
    corr = b._id()
    launched = start - 5.0 if at is None else at
    b.runtime("cuLaunchKernelEx", launched, 2.0, corr, ext)
    b.kernel(kernel, start, dur, corr, ext, stream=stream)


def step(b: TraceBuilder, number: int, ts: float, dur: float) -> None:
    b.annotation(f"ProfilerStep#{number}", ts, dur)


def compute(b: TraceBuilder, start: float, dur: float, stream: int = 7) -> None:
    b.kernel(GEMM, start, dur, stream=stream)


def _x(cat: str, name: str, ts: float, dur: float, args: dict[str, Any]) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": 100, "tid": 100, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


def exposed_recount(
    comm: list[tuple[float, float]], compute: list[tuple[float, float]]
) -> tuple[float, float]:
    """(communication time, exposed time) by a plain sweep line: counters of open comm and
    compute intervals; a slice between two boundaries is communication while a comm interval is
    open, exposed while no compute interval is. Independent of the analysis' numpy code."""
    events = [(s, 1, 0) for s, _ in comm] + [(e, -1, 0) for _, e in comm]
    events += [(s, 0, 1) for s, _ in compute] + [(e, 0, -1) for _, e in compute]
    events.sort()
    open_comm = open_compute = 0
    total = exposed = 0.0
    last = events[0][0] if events else 0.0
    for t, d_comm, d_compute in events:
        if open_comm > 0:
            total += t - last
            exposed += (t - last) if open_compute == 0 else 0.0
        open_comm += d_comm
        open_compute += d_compute
        last = t
    return total, exposed
