"""The events of rocprof v1's results.json, decoded batch by batch into columns per track.

Every field of an `X` event is a string (`"pid":"2"`), those of `M` and flow events are numbers;
fields are decoded as `Any` and turned into int64 columns with one conversion per batch.
"""

from __future__ import annotations

from collections import defaultdict
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from gpuscope.trace.model import I64
from gpuscope.trace.readers.rocprof._dispatch import LAUNCH_COLUMNS
from gpuscope.trace.readers.rocprof._piece import full, to_ints

EXT_PID, COPY_PID, HIP_PID, HSA_PID, GPU_BASE_PID, BARRIER_OFFSET = 0, 1, 2, 3, 6, 512
_COPY_APIS = ("hipMemcpy", "hipMemset", "hsa_amd_memory_async_copy")


class _Args(msgspec.Struct, frozen=True, gc=False):
    label: Any = msgspec.field(default=None, name="name")  # of "M" events
    begin: Any = msgspec.field(default=None, name="BeginNs")
    end: Any = msgspec.field(default=None, name="EndNs")
    dev_id: Any = msgspec.field(default=None, name="dev-id")
    gpu_id: Any = msgspec.field(default=None, name="gpu-id")  # dispatch records (KERN table)
    queue_id: Any = msgspec.field(default=None, name="queue-id")
    stream_id: Any = msgspec.field(default=None, name="stream-id")
    call: Any = msgspec.field(default=None, name="args")  # an API call's arguments
    tid: Any = None  # the thread (ROCTX ranges are drawn on lane 0)
    data: Any = msgspec.field(default=None, name="Data")
    grd: Any = None
    wgr: Any = None
    lds: Any = None
    scr: Any = None
    arch_vgpr: Any = None
    accum_vgpr: Any = None
    vgpr: Any = None
    sgpr: Any = None


_NO_ARGS = _Args()


class _Event(msgspec.Struct, gc=False):
    ph: Any = ""
    name: Any = ""
    pid: Any = -1
    tid: Any = -1
    ts: Any = -1
    dur: Any = -1
    id: Any = -1
    args: _Args = _NO_ARGS


_DECODE = msgspec.json.Decoder(list[_Event]).decode


class Collector:
    """Columns of each track, built batch by batch."""

    def __init__(self) -> None:
        self.labels: dict[int, str] = {}
        self.parts: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.loose = 0

    def decode(self, text: bytes | bytearray) -> list[Any]:
        try:
            return _DECODE(text)
        except msgspec.ValidationError:  # a field of an unexpected shape: event by event
            return [e for e in map(self._convert, msgspec.json.decode(text)) if e is not None]

    def _convert(self, item: Any) -> _Event | None:
        try:
            return msgspec.convert(item, _Event, strict=False)
        except msgspec.ValidationError:
            self.loose += 1
            return None

    def add(self, batch: list[_Event]) -> None:
        tracks: dict[str, list[_Event]] = defaultdict(list)
        track_of = _TRACKS.get
        for event in batch:
            if event.ph == "X":
                tracks[track_of(event.pid) or _track(event.pid)].append(event)
            elif event.ph in ("s", "t"):
                tracks["flows"].append(event)
            elif event.ph == "M" and isinstance(event.args.label, str):
                self.labels[_int(event.pid)] = event.args.label
        for track, events in tracks.items():
            if track != "skip":
                self.parts[track].append(_COLUMNS[track](events))

    def columns(self) -> dict[str, dict[str, Any]]:
        """Per track ("markers", "host", "ops", "flows"): its columns over every batch."""
        return {key: _concat(parts) for key, parts in self.parts.items()}


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def _track(pid: Any) -> str:
    number = _int(pid)
    if number == EXT_PID:
        return "markers"
    if number in (HIP_PID, HSA_PID):
        return "host"
    if number == COPY_PID or GPU_BASE_PID <= number < GPU_BASE_PID + BARRIER_OFFSET:
        return "ops"
    return "skip"  # KFD, OPS bookkeeping and barrier-packet tracks


# the tracks of the pids as written ("2"), so that most events need no conversion
_TRACKS = {str(pid): _track(pid) for pid in range(GPU_BASE_PID + 2 * BARRIER_OFFSET)}


def _field(items: list[Any], name: str) -> I64:
    return to_ints(list(map(attrgetter(name), items)))


def _common(events: list[_Event]) -> dict[str, Any]:
    args = [e.args for e in events]
    return {
        "name": [e.name if isinstance(e.name, str) else str(e.name) for e in events],
        "pid": _field(events, "pid"),
        "lane": _field(events, "tid"),
        "ts": _field(events, "ts"),
        "dur_us": _field(events, "dur"),
        "begin": _field(args, "begin"),
        "end": _field(args, "end"),
    }


def _op_columns(events: list[_Event]) -> dict[str, Any]:
    cols = _common(events)
    args = [e.args for e in events]
    dispatch = np.array([a.gpu_id is not None for a in args], bool)
    device = to_ints([a.dev_id if a.dev_id is not None else a.gpu_id for a in args])
    on_gpu = cols["pid"] >= GPU_BASE_PID
    cols["device"] = np.where((device < 0) & on_gpu, cols["pid"] - GPU_BASE_PID, device)
    stream = _field(args, "stream_id")
    # ROCm 4 wrote no stream-id: the lane (tid) is the stream; dispatch records have the queue
    fallback = np.where(dispatch, _field(args, "queue_id"), cols["lane"])
    cols["stream"] = np.where(stream >= 0, stream, fallback)
    cols["dispatch"] = dispatch
    cols["data"] = [a.data if isinstance(a.data, str) else "" for a in args]
    for key in LAUNCH_COLUMNS:  # only dispatch records carry them
        cols[key] = _field(args, key) if dispatch.any() else full(len(args), -1)
    return cols


def _host_columns(events: list[_Event]) -> dict[str, Any]:
    cols = _common(events)
    cols["call"] = [
        str(e.args.call) if str(e.name).startswith(_COPY_APIS) and e.args.call else ""
        for e in events
    ]
    return cols


def _flow_columns(events: list[_Event]) -> dict[str, Any]:
    return {
        "id": _field(events, "id"),
        "phase": np.array([e.ph == "t" for e in events], np.int8),
        "pid": _field(events, "pid"),
        "tid": _field(events, "tid"),
        "ts": _field(events, "ts"),
    }


def _marker_columns(events: list[_Event]) -> dict[str, Any]:
    cols = _common(events)
    thread = _field([e.args for e in events], "tid")
    cols["lane"] = np.where(thread >= 0, thread, cols["lane"])
    return cols


_COLUMNS = {
    "markers": _marker_columns,
    "host": _host_columns,
    "ops": _op_columns,
    "flows": _flow_columns,
}


def _concat(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, first in parts[0].items():
        if isinstance(first, list):
            out[key] = [value for part in parts for value in part[key]]
        else:
            out[key] = np.concatenate([part[key] for part in parts])
    return out
