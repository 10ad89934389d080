"""Kernel launches: link each GPU op to the host call that launched it, then launch statistics.

Links use the correlation id (Kineto writes it on both sides); when a GPU op has none, the flow
events (`ac2g`, legacy `async_gpu`) with the same id are used. A graph launch (`cudaGraphLaunch`,
`hipGraphLaunch`) shares one correlation with every kernel of the graph: it is modelled as one
launch of many kernels, and its kernels are kept out of per-kernel launch-delay statistics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.analysis._intervals import take
from gpuscope.analysis._unique import unique
from gpuscope.analysis.links import Links
from gpuscope.analysis.stepranges import slot, step_rows
from gpuscope.trace.model import I64, KERNEL, Trace

LAUNCH_API = re.compile(
    r"^(cudaLaunchKernel|cudaLaunchKernelExC|cudaLaunchKernelEx|cudaLaunchCooperativeKernel|"
    r"cuLaunchKernel|cuLaunchKernelEx|cuLaunchCooperativeKernel|cudaGraphLaunch|cuGraphLaunch|"
    r"hipLaunchKernel|hipExtLaunchKernel|hipExtModuleLaunchKernel|hipModuleLaunchKernel|"
    r"hipLaunchCooperativeKernel|hipGraphLaunch|hipExtLaunchMultiKernelMultiDevice)(_ptsz|_spt)?$"
)
GRAPH_API = re.compile(r"^(cudaGraphLaunch|cuGraphLaunch|hipGraphLaunch)")
SHORT_KERNEL_NS = 10_000  # "thin sliver" threshold: kernels shorter than 10 µs


def link(trace: Trace) -> Links:
    host, gpu = trace.host, trace.gpu
    names = trace.names
    launch_names = {i for i in unique(host.name) if LAUNCH_API.match(names[i])}
    graph_names = {i for i in launch_names if GRAPH_API.match(names[i])}
    is_launch = np.isin(host.name, list(launch_names)) if launch_names else _false(len(host))
    is_graph = np.isin(host.name, list(graph_names)) if graph_names else _false(len(host))
    index = _match(host.correlation, gpu.correlation)
    missing = index < 0
    if missing.any():
        index[missing] = _match_by_flows(trace, missing)
    graph = np.zeros(len(gpu), bool)
    linked = index >= 0
    graph[linked] = is_graph[index[linked]]
    return Links(index, graph, is_launch, is_graph)


def _false(size: int) -> np.ndarray[Any, np.dtype[np.bool_]]:
    return np.zeros(size, bool)


def _match(keys: I64, wanted: I64) -> I64:
    """Index into `keys` of each wanted value (-1 where absent or the value is -1)."""
    result = np.full(len(wanted), -1, np.int64)
    if len(keys) == 0 or len(wanted) == 0:
        return result
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    pos = np.clip(np.searchsorted(sorted_keys, wanted), 0, len(keys) - 1)
    hit = (sorted_keys[pos] == wanted) & (wanted >= 0)
    result[hit] = order[pos[hit]]
    return result


def _match_by_flows(trace: Trace, missing: Any) -> I64:
    """Link GPU ops without a correlation through flow start/finish pairs sharing an id."""
    flows, host, gpu = trace.flows, trace.host, trace.gpu
    result = np.full(int(missing.sum()), -1, np.int64)
    if len(flows) == 0:
        return result
    starts, finishes = flows.take(flows.phase == 0), flows.take(flows.phase == 1)
    # finish event sits at the GPU op's start time; start event at the launch call's start time
    finish_at = _match(finishes.start, gpu.start[missing])
    ok = finish_at >= 0
    start_at = np.full(len(result), -1, np.int64)
    start_at[ok] = _match(starts.id, finishes.id[finish_at[ok]])
    ok &= start_at >= 0
    result[ok] = _match(host.start, starts.start[start_at[ok]])
    return result


GRAPH_REPLAYED = 0.50  # share of kernels launched by graph launches: the trace already uses graphs


@dataclass(frozen=True)
class LaunchStats:
    kernels: int
    linked: int
    graph_launches: int
    graph_kernels: int
    launch_calls: int
    launch_api_ns: int
    queue_ns: I64  # launch start → kernel start, non-graph linked kernels
    negative_queue: int  # kernels that start before their launch call (clock skew)
    short_kernels: int
    short_kernel_ns: int
    kernel_ns: int
    steps: int
    kernels_per_step: list[int]
    kernel_span_ns: int

    @property
    def graph_share(self) -> float:
        """The share of kernels launched by graph launches."""
        return self.graph_kernels / self.kernels if self.kernels else 0.0

    @property
    def graph_replayed(self) -> bool:
        """The trace already replays its kernels from graphs (GRAPH_REPLAYED of them)."""
        return bool(self.kernels) and self.graph_share >= GRAPH_REPLAYED


def launch_stats(trace: Trace, links: Links) -> LaunchStats:
    gpu, host = trace.gpu, trace.host
    kernel = gpu.kind == KERNEL
    linked = kernel & (links.host_index >= 0)
    plain = linked & ~links.graph
    queue = gpu.start[plain] - host.start[links.host_index[plain]]
    durations = gpu.dur[kernel]
    short = durations < SHORT_KERNEL_NS
    span = int(gpu.end[kernel].max() - gpu.start[kernel].min()) if kernel.any() else 0
    return LaunchStats(
        kernels=int(kernel.sum()),
        linked=int(linked.sum()),
        graph_launches=int(links.is_graph_launch.sum()),
        graph_kernels=int((linked & links.graph).sum()),
        launch_calls=int(links.is_launch.sum()),
        launch_api_ns=int(host.dur[links.is_launch].sum()),
        queue_ns=np.maximum(queue, 0),
        negative_queue=int((queue < 0).sum()),
        short_kernels=int(short.sum()),
        short_kernel_ns=int(durations[short].sum()),
        kernel_ns=int(durations.sum()),
        steps=_step_count(trace),
        kernels_per_step=_kernels_per_step(trace, links, kernel),
        kernel_span_ns=span,
    )


def _step_count(trace: Trace) -> int:
    return len(step_rows(trace))


def _kernels_per_step(trace: Trace, links: Links, kernel: Any) -> list[int]:
    """Kernels launched (host-side launch time) inside each ProfilerStep#N range; by kernel
    start if unlinked."""
    rows = step_rows(trace)
    if len(rows) == 0:
        return []
    index = links.host_index[kernel]
    when = take(trace.host.start, index, trace.gpu.start[kernel])
    step = slot(when, trace.ops.start[rows], trace.ops.end[rows])
    return [int(n) for n in np.bincount(step[step >= 0], minlength=len(rows))]
