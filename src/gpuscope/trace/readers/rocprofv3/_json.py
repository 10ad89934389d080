"""rocprofv3 `--output-format json` (`<prefix>_results.json`, possibly gzipped) -> `Part`s.

The document is one object `{"rocprofiler-sdk-tool": [process, ...]}`; records refer to names
by number: `kind`/`operation` index `strings.buffer_records[kind].operations[operation]`,
`dispatch_info.kernel_id` the `kernel_symbols` entry of that id, agent handles the `agents`
entry whose `id.handle` matches, counter handles the `counters` entry. The whole file is decoded
once into typed structs (only the used fields), then each table is turned into numpy columns.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import msgspec
import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace.model import I64
from gpuscope.trace.readers.rocprofv3 import _files as files
from gpuscope.trace.readers.rocprofv3 import _jsontypes as js
from gpuscope.trace.readers.rocprofv3._tables import (
    Agent,
    Calls,
    Copies,
    CounterValues,
    Dispatches,
    Part,
)

T = TypeVar("T")
# lenient: numbers written as strings ("123") are taken too
_DECODER = msgspec.json.Decoder(js.Document, strict=False)
_INT64_MAX = 2**63 - 1


def read_json(path: str) -> list[Part]:
    """One `Part` per profiled process of the file."""
    document = _decode(_load(path))
    if not document.processes:
        raise ReaderError('the "rocprofiler-sdk-tool" list is empty: no process was recorded')
    return [_process(path, process) for process in document.processes]


def _load(path: str) -> bytes:
    with open(path, "rb") as handle:
        raw = handle.read()
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as error:
        raise ReaderError(f"the gzip stream is cut short or corrupt ({error})") from None


def _decode(raw: bytes) -> js.Document:
    if not raw.strip():
        raise ReaderError("the file is empty; expected rocprofv3 JSON")
    try:
        return _DECODER.decode(raw)
    except msgspec.ValidationError as error:
        raise ReaderError(f"not the rocprofv3 JSON layout ({error})") from None
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as error:
        raise ReaderError(
            f"not valid JSON, the file is truncated or damaged ({error}); rocprofv3 writes its "
            "JSON at exit: was the run cut short?"
        ) from None


class _Names:
    """Kind / operation / marker / kernel names of one process."""

    def __init__(self, process: js.Process) -> None:
        self.kinds = [entry.kind for entry in process.strings.buffer_records]
        self.operations = [entry.operations for entry in process.strings.buffer_records]
        self.markers = js.keyed(process.strings.marker_api)
        self.renamed = js.keyed(process.strings.correlation_id.external)
        self.symbols = {s.kernel_id: s for s in process.kernel_symbols if s.kernel_id > 0}

    def kind(self, kind: int) -> str:
        return self.kinds[kind] if 0 <= kind < len(self.kinds) else f"KIND_{kind}"

    def operation(self, kind: int, operation: int) -> str:
        names = self.operations[kind] if 0 <= kind < len(self.operations) else []
        return names[operation] if 0 <= operation < len(names) else f"OPERATION_{operation}"

    def kernel(self, kernel_id: int) -> str:
        symbol = self.symbols.get(kernel_id)
        if symbol is None:
            return f"kernel_id {kernel_id}"
        return symbol.formatted_kernel_name or symbol.demangled_kernel_name or symbol.kernel_name


def _process(path: str, process: js.Process) -> Part:
    names = _Names(process)
    agents = [_agent(a) for a in process.agents]
    handles = {a.handle: a.logical_id for a in agents}
    records = process.buffer_records
    part = Part(path=path, kind=files.JSON, variant="json", agents=agents, copy_bytes=True)
    if records.kernel_dispatch:
        part.dispatches.append(_dispatches(records.kernel_dispatch, names, handles))
    if records.memory_copy:
        part.copies.append(_copies(records.memory_copy, names, handles))
    for table, calls in records.api_tables():
        if calls:
            part.calls.append(_calls(calls, names, markers=table == "marker_api"))
    counted = process.callback_records.counter_collection
    if counted:
        part.counters.append(_counters(counted, process.counters, names, handles))
    part.extra.update(_metadata(process.metadata))
    return part


def _agent(agent: js.Agent) -> Agent:
    properties = {k: v for k, v in msgspec.structs.asdict(agent).items() if k != "id"}
    return Agent(
        node_id=agent.node_id,
        logical_id=agent.logical_node_id if agent.logical_node_id >= 0 else agent.node_id,
        type_index=agent.logical_node_type_id,
        is_gpu=agent.type == 2,
        name=agent.name,
        product=agent.product_name,
        compute_units=agent.cu_count,
        handle=agent.id.handle,
        properties=properties,
    )


def _dispatches(
    records: Sequence[js.KernelDispatch], names: _Names, handles: dict[int, int]
) -> Dispatches:
    infos = [r.dispatch_info for r in records]
    kernel_ids = column(infos, lambda i: i.kernel_id)
    external = column(records, lambda r: r.correlation_id.external)
    queue = column(infos, lambda i: i.queue_id.handle)
    return Dispatches(
        names=_kernel_names(kernel_ids, external, names),
        start=column(records, lambda r: r.start_timestamp),
        end=column(records, lambda r: r.end_timestamp),
        agent=lookup(column(infos, lambda i: i.agent_id.handle), handles),
        queue=queue,
        stream=_streams([r.stream_id for r in records], queue),
        thread=column(records, lambda r: r.thread_id),
        dispatch=column(infos, lambda i: i.dispatch_id),
        correlation=column(records, lambda r: r.correlation_id.internal),
        external=np.where(external > 0, external, -1),
        grid=_dims([i.grid_size for i in infos]),
        block=_dims([i.workgroup_size for i in infos]),
        lds=column(infos, lambda i: i.group_segment_size),
        scratch=column(infos, lambda i: i.private_segment_size),
        **_registers(kernel_ids, names),
    )


def _kernel_names(kernel_ids: I64, external: I64, names: _Names) -> list[str]:
    """Kernel name per dispatch; `--kernel-rename` names (by external correlation id) first."""
    unique, inverse = np.unique(kernel_ids, return_inverse=True)
    table = [names.kernel(int(k)) for k in unique]
    result = [table[i] for i in inverse]
    if names.renamed:
        for row in np.flatnonzero(np.isin(external, list(names.renamed))):
            result[row] = names.renamed[int(external[row])]
    return result


def _registers(kernel_ids: I64, names: _Names) -> dict[str, I64]:
    unique, inverse = np.unique(kernel_ids, return_inverse=True)
    found = {}
    for key, field in (("vgpr", "arch_vgpr_count"), ("accum", "accum_vgpr_count"),
                       ("sgpr", "sgpr_count")):  # fmt: skip
        values = [getattr(names.symbols.get(int(k)), field, -1) for k in unique]
        found[key] = _ints(values)[inverse]
    return found


def _copies(records: Sequence[js.MemoryCopy], names: _Names, handles: dict[int, int]) -> Copies:
    external = column(records, lambda r: r.correlation_id.external)
    return Copies(
        directions=_operation_names(records, names),
        start=column(records, lambda r: r.start_timestamp),
        end=column(records, lambda r: r.end_timestamp),
        src=lookup(column(records, lambda r: r.src_agent_id.handle), handles),
        dst=lookup(column(records, lambda r: r.dst_agent_id.handle), handles),
        stream=_streams([r.stream_id for r in records], np.full(len(records), -1, np.int64)),
        correlation=column(records, lambda r: r.correlation_id.internal),
        external=np.where(external > 0, external, -1),
        bytes=column(records, lambda r: r.bytes),
    )


def _calls(records: Sequence[js.ApiCall], names: _Names, markers: bool) -> Calls:
    kinds = column(records, lambda r: r.kind)
    correlation = column(records, lambda r: r.correlation_id.internal)
    external = column(records, lambda r: r.correlation_id.external)
    functions = _operation_names(records, names)
    if markers and names.markers:  # ROCTX messages, keyed by the call's internal correlation id
        for row in np.flatnonzero(np.isin(correlation, list(names.markers))):
            functions[row] = names.markers[int(correlation[row])]
    unique, inverse = np.unique(kinds, return_inverse=True)
    kind_names = [names.kind(int(k)) for k in unique]
    return Calls(
        domains=[kind_names[i] for i in inverse],
        functions=functions,
        start=column(records, lambda r: r.start_timestamp),
        end=column(records, lambda r: r.end_timestamp),
        tid=column(records, lambda r: r.thread_id),
        correlation=correlation,
        external=np.where(external > 0, external, -1),
    )


def _operation_names(records: Sequence[Any], names: _Names) -> list[str]:
    pairs = column(records, lambda r: r.kind) << 32 | column(records, lambda r: r.operation)
    unique, inverse = np.unique(pairs, return_inverse=True)
    table = [names.operation(int(p) >> 32, int(p) & 0xFFFFFFFF) for p in unique]
    return [table[i] for i in inverse]


def _counters(
    records: Sequence[js.CounterRecord],
    infos: Sequence[js.CounterInfo],
    names: _Names,
    handles: dict[int, int],
) -> CounterValues:
    """Values summed per (dispatch, counter) over dimension instances, as the CSV writer does."""
    dispatch = _dispatches([_as_dispatch(r) for r in records], names, handles)
    sizes = np.array([len(r.records) for r in records], np.int64)
    owner = np.repeat(np.arange(len(records)), sizes)
    counter = _ints([v.counter_id.handle for r in records for v in r.records])
    values = np.array([v.value for r in records for v in r.records], np.float64)
    counter_names = {info.id.handle: info.name for info in infos}
    unique, position = np.unique(counter, return_inverse=True)
    keys, inverse = np.unique(owner * len(unique) + position, return_inverse=True)
    sums = np.bincount(inverse, weights=values, minlength=len(keys)).astype(np.float64)
    labels = [counter_names.get(int(h), f"counter {int(h)}") for h in unique]
    timed = bool(len(dispatch)) and bool((dispatch.start > 0).all())
    return CounterValues(
        dispatch=dispatch.dispatch[keys // max(1, len(unique))],
        names=[labels[k % len(unique)] for k in keys],
        values=sums,
        kernels=dispatch,
        timed=timed,
    )


def _as_dispatch(record: js.CounterRecord) -> js.KernelDispatch:
    data = record.dispatch_data
    return js.KernelDispatch(
        thread_id=record.thread_id,
        correlation_id=data.correlation_id,
        start_timestamp=data.start_timestamp,
        end_timestamp=data.end_timestamp,
        dispatch_info=data.dispatch_info,
        stream_id=record.stream_id,
    )


def _metadata(metadata: js.Metadata) -> dict[str, Any]:
    found: dict[str, Any] = {"pid": metadata.pid}
    if metadata.command:
        command = metadata.command
        found["command"] = command if isinstance(command, str) else " ".join(command)
    if 0 < metadata.init_time <= metadata.fini_time:
        found["span"] = (metadata.init_time, metadata.fini_time)
    return found


def column(records: Sequence[T], get: Callable[[T], int]) -> I64:
    """An int64 column of one field of every record."""
    return _ints([get(r) for r in records])


def _ints(values: list[int]) -> I64:
    try:
        return np.array(values, np.int64)
    except OverflowError:  # 64-bit unsigned ids (external correlation hashes) beyond int64
        return np.array([v if -1 <= v <= _INT64_MAX else -1 for v in values], np.int64)


def _streams(streams: list[js.Handle | None], fallback: I64) -> I64:
    """HIP stream handles; `fallback` (the HSA queue) when the writer predates stream ids."""
    if all(s is None for s in streams):
        return fallback
    return _ints([s.handle if s is not None else -1 for s in streams])


def _dims(dims: list[js.Dim3]) -> I64:
    return _ints([v for d in dims for v in (d.x, d.y, d.z)]).reshape(-1, 3)


def lookup(keys: I64, table: dict[int, int]) -> I64:
    """`table[key]` for every key (-1 when absent), one dict look-up per distinct key."""
    unique, inverse = np.unique(keys, return_inverse=True)
    mapped = np.array([table.get(int(k), -1) for k in unique], np.int64)
    return mapped[inverse] if len(keys) else np.zeros(0, np.int64)
