"""The TracePackets of a `.pftrace`, parsed one at a time with the perfetto package's classes,
paired into slices and laid out as a `Trace`.

- Interned strings (event names, categories, annotation names) are kept per packet sequence and
  dropped when a packet says the sequence's incremental state was cleared.
- A slice is a begin and the next end on the same track (the SDK nests them per track).
- Kernels (`kernel_dispatch`; rocprofv2 `KERNELS`, else its `HIP_OPS` with a kernel name) are
  on device `agent` (`Agent ID`), stream `stream_ID` (else queue `queue` / `Queue ID`); their
  launch is given as products only: `grid_size` work-items (`GRD`) and `workgroup_size` (`WGR`),
  kept as a 1-D grid of ceil(grid / work-group) work-groups.
- A record's correlation is its `corr_id`, else its flow id (rocprofv2 writes the correlation id
  only as a process-scoped flow: the API call and its kernel share it).
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from gpuscope.errors import ReaderError
from gpuscope.trace._builder import TraceParts, trace_meta
from gpuscope.trace._copies import copy_kind
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace._sniff import varint
from gpuscope.trace.model import ANNOTATION, HSA, KERNEL, LIBRARY, MEMCPY, RUNTIME, Trace

EXTRA = "perfetto"  # the extra that installs the perfetto package's classes
_KERNEL = {"kernel_dispatch", "kernels"}
_COPY = {"memory_copy", "mem_copies"}
_API = {"hip_api": RUNTIME, "hsa_api": HSA, "rccl_api": LIBRARY, "rocdecode_api": LIBRARY,
        "rocjpeg_api": LIBRARY, "hipfile_api": LIBRARY}  # fmt: skip
_MARKER = {"marker_api", "roctx_api"}
_NUMBER = re.compile(r"(\d+)\D*$")
_CLEARED = 1  # TracePacket.SEQ_INCREMENTAL_STATE_CLEARED


@dataclass
class _Slice:
    category: str
    name: str
    start: int
    end: int
    track: int
    args: dict[str, Any]
    flow: int


@dataclass
class _State:
    """What the packets said so far: interned strings per sequence, tracks, open slices."""

    interned: dict[int, dict[str, dict[int, str]]] = field(default_factory=dict)
    tracks: dict[int, tuple[str, int]] = field(default_factory=dict)  # uuid -> (name, tid)
    open: dict[int, list[_Slice]] = field(default_factory=lambda: defaultdict(list))
    slices: list[_Slice] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


def read(path: str, progress: Progress | None = None) -> Trace:
    packet_type = _packet_class()
    state = _State()
    cut = False
    for data, truncated in _packets(path, progress):
        cut |= truncated
        if data is None:
            break
        try:
            packet = packet_type.FromString(data)
        except Exception:  # protobuf's DecodeError, by any of its names
            why = "a TracePacket does not decode: not a Perfetto trace, or damaged"
            raise ReaderError(why) from None
        _take(packet, state)
    if not state.slices and not state.tracks:
        raise ReaderError("no track events in this Perfetto trace")
    return _layout(path, state, cut)


def _packet_class() -> Any:
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2
    except ImportError:
        raise ReaderError(
            f"reading a Perfetto trace (.pftrace) needs the perfetto package: pip install "
            f"'gpuscope[{EXTRA}]' (or write rocprofv3's CSV / JSON / rocpd output instead)"
        ) from None
    return perfetto_trace_pb2.TracePacket


def _packets(path: str, progress: Progress | None) -> Any:
    """(packet bytes, False) for each packet; (None, True) when the file ends inside one."""
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        data = handle.read()
    pos = 0
    while pos < len(data):
        if data[pos] != 0x0A:
            raise ReaderError(f"byte {pos:,} is not a TracePacket (field 1): not a Perfetto trace")
        length, start = varint(data, pos + 1)
        if length < 0 or start + length > len(data):
            yield None, True
            return
        yield data[start : start + length], False
        pos = start + length
        if progress is not None:
            progress(pos, size)


def _take(packet: Any, state: _State) -> None:
    sequence = packet.trusted_packet_sequence_id
    if packet.sequence_flags & _CLEARED or sequence not in state.interned:
        state.interned[sequence] = {"cat": {}, "name": {}, "arg": {}}
    strings = state.interned[sequence]
    if packet.HasField("interned_data"):
        data = packet.interned_data
        strings["cat"].update((e.iid, e.name) for e in data.event_categories)
        strings["name"].update((e.iid, e.name) for e in data.event_names)
        strings["arg"].update((e.iid, e.name) for e in data.debug_annotation_names)
    if packet.HasField("track_descriptor"):
        track = packet.track_descriptor
        tid = track.thread.tid if track.HasField("thread") else -1
        name = track.name or (track.thread.thread_name if track.HasField("thread") else "")
        state.tracks[track.uuid] = (name, tid)
    if packet.HasField("track_event"):
        _event(packet, strings, state)


def _event(packet: Any, strings: dict[str, dict[int, str]], state: _State) -> None:
    event = packet.track_event
    track = event.track_uuid
    kind = event.type
    if kind == 2:  # TYPE_SLICE_END: closes the track's innermost open slice
        stack = state.open.get(track)
        if stack:
            done = stack.pop()
            done.end = packet.timestamp
            state.slices.append(done)
        else:
            state.counts["unpaired_end"] += 1
        return
    if kind not in (1, 3):  # counters, states
        state.counts["counter"] += 1
        return
    categories = [strings["cat"].get(i, "") for i in event.category_iids] or list(event.categories)
    name = strings["name"].get(event.name_iid, "") if event.name_iid else event.name
    args = {_arg_name(a, strings): _arg_value(a) for a in event.debug_annotations}
    flows = list(event.flow_ids) or list(event.terminating_flow_ids)
    found = _Slice((categories or [""])[0], name, packet.timestamp, packet.timestamp, track, args,
                   flows[0] if flows else -1)  # fmt: skip
    if kind == 3:
        state.slices.append(found)
    else:
        state.open[track].append(found)


def _arg_name(annotation: Any, strings: dict[str, dict[int, str]]) -> str:
    if annotation.name_iid:
        return strings["arg"].get(annotation.name_iid, "")
    return str(annotation.name)


def _arg_value(annotation: Any) -> Any:
    which = annotation.WhichOneof("value")
    return getattr(annotation, which) if which else None


def _layout(path: str, state: _State, cut: bool) -> Trace:
    slices = sorted(state.slices, key=lambda s: (s.start, s.end))
    categories = {s.category.lower() for s in slices}
    kernel_categories = _KERNEL if categories & _KERNEL else _KERNEL | {"hip_ops"}
    parts = TraceParts()
    gpu: dict[str, list[Any]] = defaultdict(list)
    launch: dict[str, list[Any]] = defaultdict(list)
    host: dict[str, list[Any]] = defaultdict(list)
    ops: dict[str, list[Any]] = defaultdict(list)
    counts: Counter[str] = Counter()
    for item in slices:
        category = item.category.lower()
        if category in kernel_categories and (category != "hip_ops" or "Copy" not in item.name):
            _launch(launch, item.args, len(gpu["kind"]))
            _gpu(gpu, item, KERNEL)
            counts["kernel"] += 1
        elif category in _COPY:
            _gpu(gpu, item, MEMCPY)
            counts["memcpy"] += 1
        elif category in _API:
            host["name"].append(item.name)
            host["start"].append(item.start)
            host["dur"].append(max(item.end - item.start, 0))
            host["tid"].append(_tid(item, state))
            host["correlation"].append(_correlation(item))
            host["domain"].append(_API[category])
            counts["host_api"] += 1
        else:
            ops["name"].append(item.name)
            ops["start"].append(item.start)
            ops["dur"].append(max(item.end - item.start, 0))
            ops["tid"].append(_tid(item, state))
            counts["marker" if category in _MARKER else "other"] += 1
    for table, columns in (("gpu", gpu), ("host", host)):
        if columns:
            columns["name"] = list(parts.intern(columns["name"]))
            parts.add(table, len(columns["name"]), **columns)
    if launch:
        parts.add("launch_params", len(launch["row"]), **launch)
    if ops:
        ops["name"] = list(parts.intern(ops["name"]))
        parts.add("ops", len(ops["name"]), kind=[ANNOTATION] * len(ops["name"]), **ops)
    counts.update({k: v for k, v in state.counts.items() if v})
    return parts.build(_meta(path, categories, counts, gpu, launch, host, ops, cut, state))


def _gpu(gpu: dict[str, list[Any]], item: _Slice, kind: int) -> None:
    args = item.args
    gpu["kind"].append(kind)
    gpu["name"].append(item.name)
    gpu["start"].append(item.start)
    gpu["dur"].append(max(item.end - item.start, 0))
    gpu["device"].append(_number(args.get("agent", args.get("Agent ID", args.get("dst_agent")))))
    stream = _number(args.get("stream_ID"))
    queue = _number(args.get("queue", args.get("Queue ID")))
    gpu["stream"].append(stream if stream >= 0 else queue)
    gpu["correlation"].append(_correlation(item))
    size = _number(args.get("copy_bytes"))
    gpu["bytes"].append(size if kind == MEMCPY and size >= 0 else -1)
    gpu["copy"].append(copy_kind(item.name) if kind == MEMCPY else -1)


def _launch(launch: dict[str, list[Any]], args: dict[str, Any], row: int) -> None:
    grid = _number(args.get("grid_size", args.get("GRD")))
    group = _number(args.get("workgroup_size", args.get("WGR")))
    if grid < 0 or group <= 0:
        return
    launch["row"].append(row)
    launch["grid_x"].append(-(-grid // group))
    launch["grid_y"].append(1)
    launch["grid_z"].append(1)
    launch["block_x"].append(group if group < 2**31 else -1)
    launch["block_y"].append(1)
    launch["block_z"].append(1)
    launch["shared_mem"].append(_number(args.get("LDS_Block_Size", args.get("LDS"))))
    launch["scratch"].append(_number(args.get("Scratch_Size", args.get("SCR"))))
    launch["registers"].append(_small(args.get("VGPR_Count", args.get("Arch. VGPR"))))
    launch["accum_registers"].append(_small(args.get("Accum_VGPR_Count",
                                                     args.get("Accumulation Vgpr"))))  # fmt: skip
    launch["scalar_registers"].append(_small(args.get("SGPR_Count", args.get("SGPR"))))


def _meta(
    path: str,
    categories: set[str],
    counts: Counter[str],
    gpu: dict[str, list[Any]],
    launch: dict[str, list[Any]],
    host: dict[str, list[Any]],
    ops: dict[str, list[Any]],
    cut: bool,
    state: _State,
) -> Any:
    written = {s.category for s in state.slices}  # v3 writes them in lower case, v2 in upper
    schema = ("rocprofv3" if written & {"kernel_dispatch", "memory_copy", "hip_api", "hsa_api"}
              else "rocprofv2" if written & {"KERNELS", "HIP_OPS", "MEM_COPIES", "HIP_API"}
              else "perfetto")  # fmt: skip
    provides = {"kernels", "timestamps"} if gpu else set()
    if MEMCPY in gpu["kind"] or categories & _COPY:
        provides.add("copies")
    if any(b >= 0 for b in gpu["bytes"]):
        provides.add("copy_bytes")
    if host:
        provides |= {"host_api", "links"}
    if ops:
        provides.add("markers")
    if launch:
        provides.add("launch_params")
    warnings = []
    if cut:
        warnings.append("truncated file: it ends inside a TracePacket (the writer died?); "
                        "read every packet before it")  # fmt: skip
    open_slices = sum(len(s) for s in state.open.values())
    if open_slices:
        warnings.append(f"{open_slices:,} slices begin without an end and were left out")
    return trace_meta(
        path, "pftrace",
        schema=schema, vendor="amd" if schema != "perfetto" else "unknown",
        event_counts=dict(counts), truncated=cut, warnings=tuple(warnings),
        provides=frozenset(provides), clock="boot" if schema != "perfetto" else "",
        extra={"categories": sorted(categories - {""})},
    )  # fmt: skip


def _tid(item: _Slice, state: _State) -> int:
    """The `tid` annotation, else the track's thread, else the tid in its name (`HIP API 42`)."""
    tid = _number(item.args.get("tid"))
    name, thread = state.tracks.get(item.track, ("", -1))
    if tid < 0 and thread < 0 and name.startswith(("HIP API ", "HSA API ")):
        tid = _number(name)
    return tid if tid >= 0 else thread


def _correlation(item: _Slice) -> int:
    found = _number(item.args.get("corr_id"))
    if found >= 0:
        return found
    return item.flow % (2**63) if item.flow >= 0 else -1


def _number(value: Any) -> int:
    """A whole number from an annotation (int, or text ending in digits: `GPU-1`); -1."""
    if isinstance(value, bool) or value is None:
        return -1
    if isinstance(value, int):
        return value if 0 <= value < 2**63 else -1
    if isinstance(value, float):
        return int(value) if 0 <= value < 2**62 and value == int(value) else -1
    found = _NUMBER.search(str(value))
    return int(found.group(1)) if found and len(found.group(1)) < 19 else -1


def _small(value: Any) -> int:
    number = _number(value)
    return number if number < 2**31 else -1
