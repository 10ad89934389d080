"""Lay out trace-viewer events (as jax.profiler writes them, or as xprof converts an XSpace) as
a `Trace`.

- Process `/device:GPU:N`, thread `Stream #S(...)`: kernels, copies (`memcpy_details`, or a
  `Memcpy…` / `Copy…` name) and memsets, on device N, stream S. A kernel's `kernel_details`
  gives its grid and block (in blocks and threads, as XLA launches them), registers and shared
  memory (NVIDIA: static + dynamic; AMD: `group_mem`), `correlation_id` its launching host call.
  The derived thread `XLA Modules` (xprof adds it) gives the modules' device spans, kept as GPU
  annotations; the other derived threads (XLA Ops, Framework Ops, Source code, ...) repeat the
  kernels and are left out.
- Process `/host:CPU`: an event with a `correlation_id` is a runtime / driver call (XLA names
  a kernel launch's host event after the kernel: it is kept as the launch it is,
  `cuLaunchKernel` / `hipModuleLaunchKernel`); a `$file:line function` event is a Python frame;
  every other event is a TraceMe range (an annotation).
- XLA ops: the kernels of one launch (one correlation id) with one `hlo_op` become one operator
  named after the HLO instruction (`fusion.3`, `custom-call.1`, `command_buffer_1`), at its
  launching call's time and thread; the kernels carry its External id, so a kernel's launching
  op is its HLO op. The modules (`hlo_module`) are listed in `meta.extra["hlo_modules"]`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.trace._builder import TraceParts, trace_meta
from gpuscope.trace._copies import copy_kind
from gpuscope.trace._kernel_names import without_suffixes
from gpuscope.trace.model import (
    ANNOTATION,
    DRIVER,
    HSA,
    I64,
    KERNEL,
    LIBRARY,
    MEMCPY,
    MEMSET,
    OP,
    OTHER_COPY,
    PYTHON,
    RUNTIME,
    Device,
    Trace,
)

FORMAT = "jax"
_GPU = re.compile(r"^/device:GPU:(\d+)$")
_STREAM = re.compile(r"^Stream #(\d+)")
_API = re.compile(r"^(cu|cuda|hip|hsa|nccl|rccl|nvtx|roctx)[A-Z_]")
_GRAPH_SUFFIX = re.compile(r"\s*\(CudaGraph:\d+\)$")
_SHORT_COPY = {"H2D": "HtoD", "D2H": "DtoH", "D2D": "DtoD", "P2P": "PtoP", "H2H": "HtoH"}
_SHORT_COPY_WORD = re.compile(r"(H2D|D2H|D2D|P2P|H2H)")
_LIMIT_NS = 2**61


@dataclass(frozen=True)
class Source:
    """Where the events came from, and what the container around them said."""

    path: str
    schema: str  # "trace-json" or "xplane"
    truncated: bool = False
    warnings: tuple[str, ...] = ()
    devices: tuple[Device, ...] = ()
    vendor: str = ""
    base_time_ns: int | None = None
    profiler_span: tuple[int, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Gpu:
    """Device rows in file order; per row what the Trace columns need."""

    kind: list[int] = field(default_factory=list)
    name: list[str] = field(default_factory=list)
    ts: list[Any] = field(default_factory=list)
    dur: list[Any] = field(default_factory=list)
    device: list[int] = field(default_factory=list)
    stream: list[int] = field(default_factory=list)
    correlation: list[int] = field(default_factory=list)
    bytes: list[int] = field(default_factory=list)
    copy: list[int] = field(default_factory=list)
    op: list[str] = field(default_factory=list)  # hlo_op, "" when none
    details: list[str] = field(default_factory=list)  # kernel_details, "" when none


@dataclass
class _Host:
    name: list[str] = field(default_factory=list)
    ts: list[Any] = field(default_factory=list)
    dur: list[Any] = field(default_factory=list)
    tid: list[int] = field(default_factory=list)
    correlation: list[int] = field(default_factory=list)


@dataclass
class _Ops:
    kind: list[int] = field(default_factory=list)
    name: list[str] = field(default_factory=list)
    ts: list[Any] = field(default_factory=list)
    dur: list[Any] = field(default_factory=list)
    tid: list[int] = field(default_factory=list)


def build(events: Sequence[Any], source: Source) -> Trace:
    processes, threads = _names(events)
    gpu, host, ops = _Gpu(), _Host(), _Ops()
    annotations: list[tuple[str, Any, Any, int]] = []
    counts: Counter[str] = Counter()
    modules: set[str] = set()
    for event in events:
        if event.ph != "X":
            continue
        pid, tid = _int(event.pid), _int(event.tid)
        process = processes.get(pid, "")
        args = event.args if isinstance(event.args, dict) else {}
        device = _GPU.match(process)
        if device:
            line = threads.get((pid, tid), "")
            stream = _STREAM.match(line)
            if stream:
                _add_gpu(gpu, event, args, int(device.group(1)), int(stream.group(1)))
                modules.add(_text(args.get("hlo_module")))
                counts[("kernel", "memcpy", "memset")[gpu.kind[-1]]] += 1
            elif line.startswith("XLA Modules"):
                annotations.append((_text(event.name), event.ts, event.dur, int(device.group(1))))
                counts["xla_module"] += 1
            else:
                counts["derived"] += 1
        elif process.startswith("/host:"):
            correlation = _int(args.get("correlation_id"))
            if correlation >= 0:
                _append(host, _text(event.name), event, tid, correlation)
                counts["host_api"] += 1
            else:
                name = _text(event.name)
                kind = PYTHON if name.startswith("$") else ANNOTATION
                _append_op(ops, kind, name, event, tid)
                counts["python" if kind == PYTHON else "traceme"] += 1
        else:
            counts["other"] += 1
    modules.discard("")
    return _trace(gpu, host, ops, annotations, counts, sorted(modules), source)


def _names(events: Sequence[Any]) -> tuple[dict[int, str], dict[tuple[int, int], str]]:
    processes: dict[int, str] = {}
    threads: dict[tuple[int, int], str] = {}
    for event in events:
        if event.ph != "M" or not isinstance(event.args, dict):
            continue
        if event.name == "process_name":
            processes[_int(event.pid)] = _text(event.args.get("name"))
        elif event.name == "thread_name":
            threads[(_int(event.pid), _int(event.tid))] = _text(event.args.get("name"))
    return processes, threads


def _add_gpu(gpu: _Gpu, event: Any, args: dict[str, Any], device: int, stream: int) -> None:
    name = _text(event.name)
    copy_details = _text(args.get("memcpy_details"))
    set_details = _text(args.get("memset_details"))
    if copy_details or (not args.get("kernel_details") and name.startswith(("Memcpy", "Copy"))):
        kind, details = MEMCPY, copy_details
    elif set_details or (not args.get("kernel_details") and name.startswith("Memset")):
        kind, details = MEMSET, set_details
    else:
        kind, details = KERNEL, ""
    fields = _details(details)
    size = _int(fields.get("size"))
    gpu.kind.append(kind)
    gpu.name.append(name)
    gpu.ts.append(event.ts)
    gpu.dur.append(event.dur)
    gpu.device.append(device)
    gpu.stream.append(stream)
    gpu.correlation.append(_int(args.get("correlation_id")))
    gpu.bytes.append(size if size > 0 else -1)  # XLA writes size:0 when it does not know
    gpu.copy.append(_direction(name, fields.get("kind", "")) if kind == MEMCPY else -1)
    gpu.op.append(_text(args.get("hlo_op")) if kind == KERNEL else "")
    gpu.details.append(_text(args.get("kernel_details")) if kind == KERNEL else "")


def _append(host: _Host, name: str, event: Any, tid: int, correlation: int) -> None:
    host.name.append(name)
    host.ts.append(event.ts)
    host.dur.append(event.dur)
    host.tid.append(tid)
    host.correlation.append(correlation)


def _append_op(ops: _Ops, kind: int, name: str, event: Any, tid: int) -> None:
    ops.kind.append(kind)
    ops.name.append(name)
    ops.ts.append(event.ts)
    ops.dur.append(event.dur)
    ops.tid.append(tid)


def _trace(
    gpu: _Gpu,
    host: _Host,
    ops: _Ops,
    annotations: list[tuple[str, Any, Any, int]],
    counts: Counter[str],
    modules: list[str],
    source: Source,
) -> Trace:
    vendor = source.vendor or _vendor(gpu, host)
    host_names = _host_names(host, gpu, vendor)
    gpu_external, host_external, op_rows = _xla_ops(gpu, host)
    parts = TraceParts()
    size = len(gpu.kind)
    parts.add(
        "gpu", size,
        kind=gpu.kind, name=parts.intern(without_suffixes(gpu.name)), start=us_to_ns(gpu.ts),
        dur=_durations(gpu.dur), device=gpu.device, stream=gpu.stream,
        correlation=gpu.correlation, external_id=gpu_external, bytes=gpu.bytes, copy=gpu.copy,
    )  # fmt: skip
    launch = _launch_params(gpu)
    if launch:
        parts.add("launch_params", **launch)
    host_start, host_dur = us_to_ns(host.ts), _durations(host.dur)
    parts.add(
        "host", len(host.name),
        name=parts.intern(host_names), start=host_start, dur=host_dur, tid=host.tid,
        correlation=host.correlation, external_id=host_external,
        domain=[_domain(n) for n in host_names],
    )  # fmt: skip
    _add_ops(parts, ops, op_rows, host_start, host_dur, host.tid, us_to_ns(gpu.ts))
    if annotations:
        names, ts, durs, devices = zip(*annotations, strict=True)
        parts.add(
            "gpu_annotations", len(annotations),
            name=parts.intern(names), start=us_to_ns(list(ts)), dur=_durations(list(durs)),
            device=devices,
        )  # fmt: skip
    counts["xla_op"] = len(op_rows)
    meta = trace_meta(
        source.path, FORMAT,
        schema=source.schema, vendor=vendor, devices=_devices(source.devices, gpu.device),
        base_time_ns=source.base_time_ns, profiler_span=source.profiler_span,
        event_counts={k: v for k, v in counts.items() if v}, truncated=source.truncated,
        warnings=source.warnings, extra={**source.extra, "hlo_modules": modules},
        provides=_provides(gpu, host, op_rows, ops, launch, source), clock="xla",
    )  # fmt: skip
    return parts.build(meta)


def _add_ops(
    parts: TraceParts,
    ops: _Ops,
    op_rows: list[tuple[str, int, int]],
    host_start: I64,
    host_dur: I64,
    host_tid: list[int],
    gpu_start: I64,
) -> None:
    """The XLA op rows (at their launching call, else as a point at their first kernel), then
    the host's TraceMe ranges and Python frames."""
    names, starts, durs, tids, ids = [], [], [], [], []
    for external, (name, call, first) in enumerate(op_rows):
        names.append(name)
        if call >= 0:
            starts.append(int(host_start[call]))
            durs.append(int(host_dur[call]))
            tids.append(host_tid[call])
        else:
            starts.append(int(gpu_start[first]))
            durs.append(0)
            tids.append(-1)
        ids.append(external)
    if names:
        parts.add("ops", len(names), kind=[OP] * len(names), name=parts.intern(names),
                  start=starts, dur=durs, tid=tids, external_id=ids)  # fmt: skip
    if ops.kind:
        parts.add("ops", len(ops.kind), kind=ops.kind, name=parts.intern(ops.name),
                  start=us_to_ns(ops.ts), dur=_durations(ops.dur), tid=ops.tid)  # fmt: skip


def _xla_ops(gpu: _Gpu, host: _Host) -> tuple[list[int], list[int], list[tuple[str, int, int]]]:
    """External ids of the GPU rows and host calls, and the op rows (hlo_op, launching host
    call or -1, first kernel row): one op per (correlation id, device, hlo_op)."""
    first_call: dict[int, int] = {}
    for row, correlation in enumerate(host.correlation):
        first_call.setdefault(correlation, row)
    groups: dict[tuple[int, int, str], int] = {}
    op_rows: list[tuple[str, int, int]] = []
    gpu_external = [-1] * len(gpu.kind)
    host_external = [-1] * len(host.name)
    for row, op in enumerate(gpu.op):
        if not op:
            continue
        correlation = gpu.correlation[row]
        key = (correlation, gpu.device[row], op) if correlation >= 0 else (-1 - row, 0, op)
        found = groups.get(key)
        if found is None:
            call = first_call.get(correlation, -1) if correlation >= 0 else -1
            found = groups[key] = len(op_rows)
            op_rows.append((op, call, row))
            if call >= 0:
                host_external[call] = found
        gpu_external[row] = found
    return gpu_external, host_external, op_rows


def _host_names(host: _Host, gpu: _Gpu, vendor: str) -> list[str]:
    """API names as the runtime knows them: `cuGraphLaunch (CudaGraph:10)` is cuGraphLaunch; a
    launch XLA named after its kernel is `cuLaunchKernel` (`hipModuleLaunchKernel` on ROCm), a
    copy named after its direction `cuMemcpyAsync` (`hipMemcpyAsync`)."""
    copies = {c for k, c in zip(gpu.kind, gpu.correlation, strict=True) if k != KERNEL and c >= 0}
    prefix = "hip" if vendor == "amd" else "cu"
    launch = "hipModuleLaunchKernel" if vendor == "amd" else "cuLaunchKernel"
    names = []
    for name, correlation in zip(host.name, host.correlation, strict=True):
        name = _GRAPH_SUFFIX.sub("", name)
        if not _API.match(name):
            name = f"{prefix}MemcpyAsync" if correlation in copies else launch
        names.append(name)
    return names


def _domain(name: str) -> int:
    if name.startswith(("nccl", "rccl")):
        return LIBRARY
    if name.startswith("hsa"):
        return HSA
    if name.startswith("cu") and not name.startswith("cuda"):
        return DRIVER
    return RUNTIME


def _launch_params(gpu: _Gpu) -> dict[str, Any]:
    """`kernel_details` as launch parameters: `regs:154 static_shared:0 dynamic_shared:98328
    grid:128,1,1 block:128,1,1` (CUDA), ` grid:16,1,1 block:512,1,1 private_mem:0
    group_mem:2112` (ROCm). A register count past 65,535 (ROCm builds of XLA that did not
    read it write garbage there) is unknown."""
    columns: dict[str, list[int]] = defaultdict(list)
    for row, text in enumerate(gpu.details):
        fields = _details(text)
        grid, block = _dims(fields.get("grid", "")), _dims(fields.get("block", ""))
        if grid is None or block is None:
            continue
        columns["row"].append(row)
        for axis, g, b in zip("xyz", grid, block, strict=True):
            columns[f"grid_{axis}"].append(g)
            columns[f"block_{axis}"].append(b if b < 2**31 else -1)
        registers = _int(fields.get("regs"))
        columns["registers"].append(registers if 0 <= registers < 65536 else -1)
        shared = [_int(fields.get(k)) for k in ("static_shared", "dynamic_shared", "group_mem")]
        known = [s for s in shared if s >= 0]
        columns["shared_mem"].append(sum(known) if known else -1)
        columns["scratch"].append(_int(fields.get("private_mem")))
    return dict(columns)


def _details(text: str) -> dict[str, str]:
    """`key:value key:value` as a dict."""
    found = {}
    for token in text.split():
        key, _, value = token.partition(":")
        if value:
            found[key] = value
    return found


def _dims(text: str) -> tuple[int, int, int] | None:
    parts = text.split(",")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    x, y, z = (int(p) for p in parts)
    return (x, y, z) if max(x, y, z) < 2**62 else None


def _direction(name: str, kind: str) -> int:
    for text in (name, kind):
        found = copy_kind(_SHORT_COPY_WORD.sub(lambda m: _SHORT_COPY[m.group(1)], text))
        if found != OTHER_COPY:
            return found
    return OTHER_COPY


def _vendor(gpu: _Gpu, host: _Host) -> str:
    calls = {n[:3] for n in set(host.name)}
    kernels = set(gpu.name)
    if "hip" in calls or any(k.endswith(".kd") or k.startswith("__amd") for k in kernels):
        return "amd"
    if calls & {"cuL", "cuG", "cuM", "cuS", "cuE", "cud"} or any(
        k.startswith(("nvjet", "sm90_", "sm80_", "ampere_", "cutlass")) for k in kernels
    ):
        return "nvidia"
    return "unknown"


def _devices(known: tuple[Device, ...], used: list[int]) -> tuple[Device, ...]:
    """The devices that ran work, as the XSpace describes them (the JSON does not)."""
    ids = set(used)
    return tuple(d for d in known if d.id in ids)


def _provides(
    gpu: _Gpu,
    host: _Host,
    op_rows: list[tuple[str, int, int]],
    ops: _Ops,
    launch: dict[str, Any],
    source: Source,
) -> frozenset[str]:
    """XLA's profiler records kernels, copies and their launching calls always; sizes, launch
    parameters, ops and device properties where this file has them."""
    found = {"kernels", "timestamps", "copies"}
    if host.name:
        found |= {"host_api", "links"}
    if any(b >= 0 for k, b in zip(gpu.kind, gpu.bytes, strict=True) if k != KERNEL):
        found.add("copy_bytes")
    if op_rows:
        found.add("cpu_ops")
    if ANNOTATION in ops.kind:
        found.add("markers")
    if launch:
        found.add("launch_params")
    if source.devices:
        found.add("devices")
    return frozenset(found)


def us_to_ns(values: list[Any]) -> I64:
    """Trace-viewer µs (a float with ns in its 3 decimals, or an int) → int64 ns, exact below
    2**43 µs: the whole and the fractional µs are converted apart. Junk and values past ±2**61
    ns become 0."""
    us = np.array([v if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0
                   for v in values], np.float64)  # fmt: skip
    us = np.where(np.isfinite(us) & (np.abs(us) * 1000 < _LIMIT_NS), us, 0.0)
    whole = np.floor(us)
    ns: I64 = whole.astype(np.int64) * 1000 + np.rint((us - whole) * 1000).astype(np.int64)
    return ns


def _durations(values: list[Any]) -> I64:
    ns = us_to_ns(values)
    result: I64 = np.maximum(ns, 0)
    return result


def _int(value: Any) -> int:
    """An int from an int or a decimal string (XLA writes stats as strings); -1 otherwise."""
    if isinstance(value, bool):
        return -1
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else -1
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit() and len(text) < 20:
            return int(text)
    return -1


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)
