"""Integrity flags: what makes a number unreliable for this particular trace."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis._unique import unique
from gpuscope.analysis.inputs import describe, missing_flags
from gpuscope.document.units import duration, time_ns
from gpuscope.trace.model import API, KERNEL, MEMCPY

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis


def _flag(flag_id: str, message: str, affects: list[str]) -> dict[str, Any]:
    return {"id": flag_id, "message": message, "affects": affects}


def integrity(a: Analysis) -> list[dict[str, Any]]:
    trace, launch, line = a.trace, a.launch, a.timeline
    meta = trace.meta
    flags = [
        _flag("truncated" if w.startswith("truncated") else "reader-repair", w, ["all"])
        for w in meta.warnings
    ]
    flags += [_flag(*missing) for missing in missing_flags(trace, a.inputs)]
    gpu_events = len(trace.gpu) + int(trace.totals.count[trace.totals.kind != API].sum())
    if gpu_events == 0:
        flags.append(
            _flag(
                "no-gpu-events",
                "the trace holds no kernels, memcpys or memsets (CPU-only trace, or GPU activity "
                "was not recorded): device numbers are zero",
                ["kernels", "gpu_busy_us", "categories", "launch"],
            )
        )
    if launch.graph_kernels:
        flags.append(
            _flag(
                "graph-replay",
                f"{launch.graph_kernels:,} kernels were replayed by {launch.graph_launches:,} "
                "graph launches: one launch runs many kernels, so per-kernel launch delay "
                "excludes them and host launch cost is per graph",
                ["launch"],
            )
        )
    unlinked = launch.kernels - launch.linked
    if a.inputs.launch and launch.kernels and unlinked:
        flags.append(
            _flag(
                "unlinked-kernels",
                f"{unlinked:,} of {launch.kernels:,} kernels have no linked launch call: launch "
                "delay and gap attribution cover only the linked ones",
                ["launch", "gaps"],
            )
        )
    if line is not None and line.overlap_count:
        flags.append(
            _flag(
                "same-stream-overlap",
                f"{line.overlap_count:,} GPU ops overlap their predecessor on the same stream "
                f"({time_ns(line.overlap_clipped_ns)}); busy time counts the overlap once "
                "(clipped), kernel time sums raw durations",
                ["gpu_busy_us", "kernels"],
            )
        )
    if line is not None and gpu_events and meta.profiler_span is None:
        flags.append(
            _flag(
                "window-cut",
                "no profiler span in the trace (cut from a bigger one?): the window runs from the "
                "first to the last event",
                ["window_us", "sync"],
            )
        )
    if not trace.provides("devices"):
        flags.append(
            _flag(
                "no-metadata",
                f"no device information in {describe(trace)} (deviceProperties, agent info): "
                "device names and vendor come from event names only",
                ["source"],
            )
        )
    annotations = trace.gpu_annotations
    if len(annotations):
        total = int(annotations.dur.sum()) / 1000
        flags.append(
            _flag(
                "annotations-excluded",
                f"{len(annotations):,} gpu_user_annotation spans ({duration(total)}) lie over "
                "kernels and were excluded from busy time",
                ["gpu_busy_us"],
            )
        )
    if a.inputs.launch and launch.negative_queue:
        flags.append(
            _flag(
                "clock-skew",
                f"{launch.negative_queue:,} kernels start before their launch call returns a "
                "start time (host/device clock skew): their queue delay counts as 0",
                ["launch"],
            )
        )
    flags += _copies_not_traced(a)
    kernels = int((trace.gpu.kind == KERNEL).sum())
    if kernels and a.classes.unclassified / kernels > 0.2:
        flags.append(
            _flag(
                "many-unclassified",
                f"{a.classes.unclassified:,} of {kernels:,} kernels match no category rule; "
                "extend the rules with --categories",
                ["categories", "gemm_share"],
            )
        )
    return flags


_HOW = {  # how the profiler that made the trace records copies
    "rocprof": " (rocprof records them with --hip-trace / --sys-trace)",
    "rocprofv3": " (rocprofv3 records them with --memory-copy-trace)",
    "rocpd": " (rocprofv3 records them with --memory-copy-trace)",
    "nsys": " (nsys records them with --trace=cuda)",
}
_COPY_CALL = re.compile(r"^(?:cuda|hip|cu)Memcpy|^hsa_amd_memory_async_copy")


def _copies_not_traced(a: Analysis) -> list[dict[str, Any]]:
    """Copy API calls on the host, but no copy on the device timeline: the profiler was not
    tracing copies (rocprof without --memory-copy-trace, a kernel-only capture), so copy time
    is missing from busy and idle time."""
    trace = a.trace
    if not trace.provides("host_api") or (trace.gpu.kind == MEMCPY).any():
        return []
    wanted = [int(n) for n in unique(trace.host.name) if _COPY_CALL.search(trace.names[n])]
    if not wanted:
        return []
    calls = [trace.names[n] for n in wanted]
    count = int(np.isin(trace.host.name, wanted).sum())
    return [
        _flag(
            "copies-not-traced",
            f"{count:,} copy calls ({', '.join(sorted(calls)[:3])}) on the host but no copy on "
            f"the device timeline: copy tracing was off{_HOW.get(trace.meta.format, '')}: copy "
            "time is missing from busy and idle time and from the copy numbers",
            ["memcpy", "gpu_busy_us", "idle_us", "gaps"],
        )
    ]
