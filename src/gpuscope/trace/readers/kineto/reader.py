"""Reader for Kineto / Chrome-trace JSON written by torch.profiler (`.json`, `.json.gz`).

Current and legacy schemas, CUDA and ROCm builds of PyTorch. The file is streamed in batches
(`_jsonstream`), each batch is decoded into typed structs and turned into numpy columns at once,
so neither the raw text nor a dict tree of the whole file is ever held.
"""

from __future__ import annotations

import os
import re
import sys
from collections import defaultdict, deque
from concurrent.futures import BrokenExecutor
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from gpuscope._read_workers import read_workers
from gpuscope.errors import ReaderError
from gpuscope.trace import _jsonstream, _sniff
from gpuscope.trace._copies import copy_kind, host_memory
from gpuscope.trace._jsonstream import (
    NO_REPAIRS,
    TAIL_CUT,
    EventStream,
    Progress,
    Repairs,
    StreamReport,
    array_start,
    closing_bracket,
    decode_span,
    finish,
    new_report,
    piece,
)
from gpuscope.trace.model import (
    ANNOTATION,
    DRIVER,
    I64,
    KERNEL,
    MEMCPY,
    MEMSET,
    OP,
    PYTHON,
    RUNTIME,
    Collectives,
    CpuOps,
    Device,
    Flows,
    GpuAnnotations,
    GpuOps,
    HostCalls,
    LaunchParams,
    MemoryEvents,
    Syncs,
    Trace,
    TraceMeta,
)
from gpuscope.trace.readers.kineto import _decode as dec
from gpuscope.trace.readers.kineto._grid import in_work_groups

EXACT_LIMIT_US = float(2**43)  # below this a float µs value still pins down the exact ns

# category (as written by current and legacy Kineto) -> table
_GPU_KIND = {
    "kernel": KERNEL,
    "Kernel": KERNEL,
    "gpu_memcpy": MEMCPY,
    "Memcpy": MEMCPY,
    "gpu_memset": MEMSET,
    "Memset": MEMSET,
}
_HOST = {"cuda_runtime": RUNTIME, "Runtime": RUNTIME, "cuda_driver": DRIVER, "Driver": DRIVER}
_OPS = {
    "cpu_op": OP,
    "Operator": OP,
    "user_annotation": ANNOTATION,
    "User annotation": ANNOTATION,
    "python_function": PYTHON,
}
_FLOW = {"ac2g", "async_gpu", "async_cpu_to_gpu"}
MEMORY_EVENT = "[memory]"  # name of the allocator's instant events (cat cpu_instant_event)
_LEGACY = {"Kernel", "Runtime", "Memcpy", "Memset", "Operator", "async_gpu"}


class KinetoReader:
    """`Reader` for Kineto / Chrome-trace JSON."""

    name = "kineto"

    def sniff(self, path: str) -> bool:
        head = _head(path, 1 << 20).lstrip()
        return head[:1] in (b"{", b"[") and (b'"traceEvents"' in head or b'"ph"' in head)

    def read(self, path: str, progress: Progress | None = None) -> Trace:
        workers = read_workers(path)
        if workers > 1:
            try:
                return _read_pieces(path, progress, workers)
            except _NotPlain:
                pass  # gzip, damage, a truncated file: the workers decode what this one reads
            except (BrokenExecutor, OSError):
                workers = 1
        if workers > 1:
            try:
                return _read_in_processes(path, progress, workers)
            except (_WrongCut, BrokenExecutor, OSError):
                pass  # a `}, {` inside a string, or no processes to be had: read it here
        builder = _Builder()
        stream = EventStream(path, builder.decode, progress)
        for batch in stream:
            builder.add(batch)
        return builder.finish(path, stream.report)


class _WrongCut(Exception):
    """A span cut at a `}` that did not end an event."""


class _NotPlain(Exception):
    """A file that `_read_pieces` leaves to the stream: gzip, a cut that was not between
    events, damage, or an event array that does not end."""


PIECE_MARGIN = 1 << 20  # bytes a worker reads past its piece to find where the piece ends


def _read_pieces(path: str, progress: Progress | None, workers: int) -> Trace:
    """An uncompressed file read by the workers themselves, one piece of its event array each
    (`_jsonstream.piece`), merged here in file order: this process reads only the header and
    what follows the array, and sends offsets, not bytes. Pieces are checked in order: the first
    starts at the array, and a piece that starts right decodes only if it also ends right, so a
    piece either fails (then the file is read as a stream) or ends where the next one starts,
    up to the one in which the array closes."""
    from concurrent.futures import Future, ProcessPoolExecutor

    with open(path, "rb") as handle:
        if handle.read(2) == b"\x1f\x8b":
            raise _NotPlain
    found = array_start(path)
    if found is None:
        raise _NotPlain
    start, header = found
    size = os.path.getsize(path)
    report = new_report(header, size)
    builder = _Builder()
    pending: deque[Future[tuple[_Partial | None, int]]] = deque()
    closed, done = -1, start

    step = _jsonstream.BATCH

    def take() -> int:
        nonlocal done
        partial, end = _piece_result(pending.popleft())
        builder.merge(partial)
        done = min(size, done + step)
        if progress is not None:
            progress(done, size)
        return end

    with ProcessPoolExecutor(max_workers=workers, mp_context=_start_method()) as pool:
        try:
            for lo in range(start, size, step):
                task = (path, lo, lo + step, lo == start, size)
                pending.append(pool.submit(_columns_of_piece, *task))
                while len(pending) > workers and closed < 0:  # bounded: pieces hold memory
                    closed = take()
                if closed >= 0:
                    break
            while pending and closed < 0:
                closed = take()
        finally:
            for future in pending:
                future.cancel()
    if closed < 0:
        raise _NotPlain  # the array does not end: a truncated file
    with open(path, "rb") as handle:
        handle.seek(closed)
        finish(report, handle.read(), is_object=bool(header))
    return builder.finish(path, report)


def _piece_result(future: Any) -> tuple[_Partial, int]:
    partial, end = future.result()
    if partial is None:
        raise _NotPlain
    return partial, end


def _columns_of_piece(
    path: str, lo: int, hi: int, first: bool, size: int
) -> tuple[_Partial | None, int]:
    """In a worker: the events of the piece of the event array from the first event boundary
    at or after byte `lo` to the first at or after `hi` (see `_read_pieces`) as columns, and
    where the array closes (the offset of its `]`; -1: it goes on); (None, -1) when the piece is
    not whole events."""
    with open(path, "rb") as handle:
        handle.seek(lo)
        buf = handle.read(hi - lo + PIECE_MARGIN)
        while True:
            at_eof = lo + len(buf) >= size
            begin, end = piece(buf, lo, hi, first, at_eof)
            if begin >= 0 or at_eof or len(buf) > hi - lo + _jsonstream.MAX_EVENT:
                break
            buf += handle.read(len(buf))
    builder = _Builder()
    if begin == end == 0:
        return builder.partial(NO_REPAIRS), -1  # no boundary between its two ends: no events
    if begin < 0 or begin >= len(buf) or buf[begin] != ord("{"):
        return None, -1
    decoded = decode_span(builder.decode, buf, begin, end)
    if decoded is None:
        return None, -1
    events, stop, repairs = decoded
    builder.add(events)
    bracket = stop if stop < end else closing_bracket(buf, stop)
    return builder.partial(repairs), (lo + bracket if bracket >= 0 else -1)


def _read_in_processes(path: str, progress: Progress | None, workers: int) -> Trace:
    """Batches decoded and turned into columns in worker processes, merged here in file order
    (the result is the same Trace as a reading in this process: same names, same indices); the
    end of the file, where truncation and trailing keys are handled, is read here."""
    from concurrent.futures import Future, ProcessPoolExecutor

    builder = _Builder()
    stream = EventStream(path, builder.decode, progress)
    context = _start_method()
    pending: deque[Future[_Partial | None]] = deque()
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        # a first task starts every worker now (fork: all at once), before the stream starts
        # the thread that inflates a gzip file ahead
        pool.submit(int)
        for kind, item in stream.walk(cut=True):
            if kind == "span":
                pending.append(pool.submit(_columns_of_span, item))
                while len(pending) > workers:  # bounded: spans in flight hold memory
                    builder.merge(_result(pending.popleft()))
                continue
            while pending:
                builder.merge(_result(pending.popleft()))
            builder.add(item)
        while pending:
            builder.merge(_result(pending.popleft()))
    return builder.finish(path, stream.report)


def _start_method() -> Any:
    """fork on Linux when this process runs no other thread (workers start in ms, sharing what
    is imported); forkserver otherwise (a thread, e.g. a progress bar's, may hold a lock that a
    forked child would wait on forever), whose workers start from a fresh interpreter (~0.3 s)."""
    import multiprocessing
    import threading

    methods = multiprocessing.get_all_start_methods()
    if sys.platform == "linux" and "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    from gpuscope._read_workers import server_start_method

    method = server_start_method()
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload([__name__])
    return context


_CANONICAL: dict[bytes, bytes] = {}  # recorded text -> canonical text, kept across spans


def _canonical(text: bytes) -> bytes:
    """The canonical JSON text of a recorded value (b"" for none), cached in this process: a
    worker's builder is new for every span, the values are mostly the same from span to span."""
    found = _CANONICAL.get(text)
    if found is None:
        found = dec.raw_text(msgspec.Raw(text)) if text else b""
        if len(_CANONICAL) >= 1 << 16:
            _CANONICAL.clear()
        _CANONICAL[text] = found
    return found


def _result(future: Any) -> _Partial:
    partial: _Partial | None = future.result()
    if partial is None:
        raise _WrongCut
    return partial


def _columns_of_span(span: bytes) -> _Partial | None:
    """In a worker: one span's events as columns (None: the span did not decode)."""
    builder = _Builder()
    decoded = decode_span(builder.decode, span, 0, len(span))
    if decoded is None:
        return None
    events, end, repairs = decoded
    if end != len(span):  # the array closed inside the span: the rest is not events
        return None
    builder.add(events)
    return builder.partial(repairs)


@dataclass
class _Partial:
    """What a worker's builder made of one span, to merge into the reading builder."""

    names: tuple[str, ...]
    parts: dict[str, list[dict[str, Any]]]
    counts: dict[str, int]
    span: tuple[int, int] | None
    overhead: list[list[Any]]
    loose_batches: int
    repairs: Repairs
    gpu_rows: int
    op_rows: int


# the columns of each table that hold indices into the names
_NAME_COLUMNS = {
    "gpu": ("name",), "host": ("name",), "ops": ("name", "input_dims", "input_types", "concrete"),
    "syncs": ("name",), "gpu_annotations": ("name",), "collectives": ("name", "group"),
}  # fmt: skip


def _head(path: str, size: int) -> bytes:
    try:
        with open(path, "rb") as handle:
            magic = handle.read(2)
        if magic == b"\x1f\x8b":
            return _sniff.gunzip_head(path, size)
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


class _Builder:
    """Accumulates numpy columns batch by batch; picks the decode mode the file needs."""

    def __init__(self) -> None:
        self.mode = "fast"
        self._decoders = {
            "fast": dec.decoder(dec.Event),
            "exact": dec.decoder(dec.ExactEvent),
            "loose": dec.decoder(dec.LooseEvent),
        }
        self.names: dict[str, int] = {}
        self.parts: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.counts: dict[str, int] = defaultdict(int)
        self.span: tuple[int, int] | None = None
        self.overhead: list[list[Any]] = []  # the tracer's own records: [name, start ns, dur ns]
        self.loose_batches = 0
        self.gpu_rows = 0
        self.op_rows = 0
        self.input_ids: dict[bytes, int] = {}  # dims, types, concrete texts -> input_table row
        self.input_table: list[list[int]] = []  # their name indices
        self.repairs = NO_REPAIRS  # what workers repaired in their spans (see `merge`)

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, text: bytes | bytearray) -> list[Any]:
        if self.mode == "loose":
            return self._decode_loose(text)
        try:
            events = self._decoders[self.mode](text)
        except msgspec.ValidationError:
            return self._decode_loose(text)
        if self.mode == "fast" and _needs_exact(events, text):
            self.mode = "exact"
            events = self._decoders["exact"](text)
        return events

    def _decode_loose(self, text: bytes | bytearray) -> list[Any]:
        self.loose_batches += 1
        return [_normalise(e) for e in self._decoders["loose"](text)]

    # -- columns ----------------------------------------------------------------------------
    def add(self, events: list[Any]) -> None:
        groups: dict[str, list[Any]] = defaultdict(list)
        for event in events:
            groups[event.cat].append(event)
        for cat, group in groups.items():
            self.counts[cat or "(none)"] += len(group)
            self._add_group(cat, group)

    def _add_group(self, cat: str, group: list[Any]) -> None:
        if cat in _FLOW:
            if not set(map(_PH, group)) <= {"s", "f", "t"}:
                group = [e for e in group if e.ph in ("s", "f", "t")]
            self._add_flows(group)
            return
        if cat == "cpu_instant_event":  # the allocator's `[memory]` events (profile_memory)
            self._add_memory(group)
            return
        if set(map(_PH, group)) != {"X"}:
            group = [e for e in group if e.ph == "X"]
        if not group:
            return
        if cat in _GPU_KIND:
            self._add_gpu(_GPU_KIND[cat], group)
        elif cat in _HOST:
            self._add_host(_HOST[cat], group)
        elif cat in _OPS:
            self._add_ops(_OPS[cat], group)
        elif cat == "cuda_sync":
            self._add_syncs(group)
        elif cat == "gpu_user_annotation":
            self._add_gpu_annotations(group)
        elif cat == "Trace":
            self._add_span(group)
        elif cat == "overhead":  # CUPTI's records: lazy module loading, activity buffer requests
            cols = self._common(group)
            times = zip(cols["start"].tolist(), cols["dur"].tolist(), strict=True)
            self.overhead += [[str(e.name), t, d] for e, (t, d) in zip(group, times, strict=True)]

    def _ts(self, group: list[Any]) -> I64:
        if isinstance(group[0], dec.LooseEvent):  # a batch the typed decoders refused
            return np.array([dec.text_us_to_ns(e.ts) for e in group], np.int64)
        if self.mode == "fast":
            return float_us_to_ns(np.fromiter(map(_TS, group), np.float64, len(group)))
        if self.mode == "exact":
            return dec.raw_us_to_ns([e.ts for e in group])
        return np.array([dec.text_us_to_ns(e.ts) for e in group], np.int64)

    def _common(self, group: list[Any]) -> dict[str, Any]:
        durs = np.fromiter(map(_DUR, group), np.float64, len(group))
        return {
            "name": self._intern(group),
            "start": self._ts(group),
            "dur": np.maximum(np.rint(_sane_us(durs) * 1000.0), 0).astype(np.int64),
        }

    def _intern(self, group: list[Any]) -> Any:
        index = self.names
        get = index.get
        names = list(map(_NAME, group))
        try:  # every name known: one pass (a new one is None, which fromiter refuses)
            return np.fromiter(map(get, names), np.int32, len(names))
        except TypeError:
            pass
        for name in dict.fromkeys(names):  # new names get the next indices, in order of first
            if name not in index:  # appearance
                index[name] = len(index)
        return np.fromiter(map(index.__getitem__, names), np.int32, len(names))

    def _add_gpu(self, kind: int, group: list[Any]) -> None:
        cols = self._common(group)
        count = len(group)
        cols["kind"] = np.full(count, kind, np.int8)
        args = list(map(_ARGS, group))
        cols["device"] = _devices_of(group, args)
        cols["stream"] = _column(args, "stream")
        cols["correlation"] = _column(args, "correlation")
        cols["external_id"] = _external_ids(args)
        cols["bytes"] = _column(args, "bytes")
        cols["copy"], cols["host_memory"] = self._copy_columns(kind, cols["name"])
        if kind == KERNEL:
            self._add_launch_params(args)
        self.gpu_rows += count
        self.parts["gpu"].append(cols)

    def _copy_columns(self, kind: int, names: Any) -> tuple[Any, Any]:
        """Direction and host memory of each copy, parsed once per distinct name."""
        size = len(names)
        if kind != MEMCPY:
            return np.full(size, -1, np.int8), np.full(size, -1, np.int8)
        text = {index: name for name, index in self.names.items()}
        unique, inverse = np.unique(names, return_inverse=True)
        kinds = np.array([copy_kind(text[int(i)]) for i in unique], np.int8)
        memory = np.array([host_memory(text[int(i)]) for i in unique], np.int8)
        return kinds[inverse], memory[inverse]

    def _add_launch_params(self, args: list[Any]) -> None:
        grid, block = _dims_columns([a.grid for a in args], [a.block for a in args])
        rows = np.flatnonzero(grid[:, 0] >= 0)
        if not len(rows):
            return
        registers = _column(args, "registers")
        shared = _column(args, "shared_memory")
        self.parts["launch_params"].append(
            {
                "row": rows + self.gpu_rows,
                **{f"grid_{axis}": grid[rows, i] for i, axis in enumerate("xyz")},
                **{f"block_{axis}": block[rows, i] for i, axis in enumerate("xyz")},
                "registers": registers[rows],
                "shared_mem": shared[rows],
            }
        )

    def _add_host(self, domain: int, group: list[Any]) -> None:
        cols = self._common(group)
        count = len(group)
        args = list(map(_ARGS, group))
        cols["tid"] = _column(group, "tid")
        cols["correlation"] = _column(args, "correlation")
        cols["external_id"] = _external_ids(args)
        cols["domain"] = np.full(count, domain, np.int8)
        self.parts["host"].append(cols)

    def _add_ops(self, kind: int, group: list[Any]) -> None:
        cols = self._common(group)
        count = len(group)
        cols["kind"] = np.full(count, kind, np.int8)
        args = list(map(_ARGS, group))
        cols["tid"] = _column(group, "tid")
        cols["external_id"] = _external_ids(args)
        if kind == OP:
            cols["input_dims"], cols["input_types"], cols["concrete"] = self._intern_inputs(args)
            cols["sequence"] = _column(args, "sequence")
            self._add_collectives(args)
        self.op_rows += count
        self.parts["ops"].append(cols)

    def _intern_inputs(self, args: list[Any]) -> Any:
        """(3, n) name indices of each operator's recorded input dims, types and concrete
        values (-1 where none was recorded). The three texts of an operator are one key, looked
        up once; each distinct text is canonicalised and interned once."""
        # the values are msgspec.Raw in every decode mode: valid JSON text, which holds no byte
        # below 0x20 outside whitespace; joined by one and split by another they make the keys
        # in a third of the time of bytes() on each
        keys = b"\x00".join(map(_JOIN_FIELDS, map(_INPUTS, args))).split(b"\x00")
        if len(keys) != len(args):
            keys = [b"\x01".join(map(bytes, _INPUTS(a))) for a in args]
        known = self.input_ids
        rows = list(map(known.get, keys))
        if None in rows:
            # new keys in the order they first appear, so that name indices (and every ordering
            # that ties on them) are the same in every run, whatever the hash seed
            for key in [k for k in dict.fromkeys(keys) if k not in known]:
                known[key] = len(self.input_table)
                self.input_table.append([self._intern_text(t) for t in key.split(b"\x01")])
            rows = list(map(known.__getitem__, keys))
        table = np.array(self.input_table, np.int32).reshape(-1, 3)
        return np.ascontiguousarray(table[np.array(rows, np.int64)].T)

    def _intern_text(self, text: bytes) -> int:
        """The name index of a recorded JSON value's canonical text (-1: none recorded)."""
        canonical = _canonical(text)
        if not canonical:
            return -1
        return self.names.setdefault(canonical.decode("utf-8", "replace"), len(self.names))

    def _add_collectives(self, args: list[Any]) -> None:
        sized = _column(args, "in_elems") >= 0
        if not sized.any() and not any(map(_COLLECTIVE, args)):
            return  # the common case: no collective in the batch
        named = np.fromiter(map(bool, map(_COLLECTIVE, args)), bool, len(args))
        rows = np.flatnonzero(named | sized)
        if not len(rows):
            return
        chosen = [args[i] for i in rows.tolist()]
        intern = self.names.setdefault
        self.parts["collectives"].append(
            {
                "op": np.array(rows, np.int64) + self.op_rows,
                "name": np.array([intern(a.collective, len(self.names)) for a in chosen]),
                "in_elems": _ints([a.in_elems for a in chosen]),
                "out_elems": _ints([a.out_elems for a in chosen]),
                "elem_bytes": np.array([dtype_bytes(a.dtype) for a in chosen], np.int32),
                "group_size": _ints([a.group_size for a in chosen]),
                "group": np.array(
                    [intern(a.group, len(self.names)) if a.group else -1 for a in chosen]
                ),
            }
        )

    def _add_syncs(self, group: list[Any]) -> None:
        cols = self._common(group)
        args = list(map(_ARGS, group))
        cols["device"] = np.array([a.device for a in args], np.int32)
        cols["stream"] = _column(args, "stream")
        self.parts["syncs"].append(cols)

    def _add_gpu_annotations(self, group: list[Any]) -> None:
        cols = self._common(group)
        cols["device"] = _devices_of(group, list(map(_ARGS, group)))
        self.parts["gpu_annotations"].append(cols)

    def _add_flows(self, group: list[Any]) -> None:
        if not group:
            return
        self.parts["flows"].append(
            {
                "id": _column(group, "id"),
                "phase": np.fromiter(map("s".__ne__, map(_PH, group)), np.int8, len(group)),
                "start": self._ts(group),
                "pid": _column(group, "pid"),
                "tid": _column(group, "tid"),
            }
        )

    def _add_memory(self, group: list[Any]) -> None:
        if set(map(_NAME, group)) != {MEMORY_EVENT}:
            group = [e for e in group if e.name == MEMORY_EVENT]
        if not group:
            return
        args = list(map(_ARGS, group))
        self.parts["memory"].append(
            {
                "start": self._ts(group),
                "tid": _column(group, "tid"),
                "device": np.clip(_column(args, "device_id"), -1, 2**31 - 1).astype(np.int32),
                "addr": _column(args, "addr"),
                "bytes": _column(args, "mem_bytes"),
                "allocated": _column(args, "allocated"),
                "reserved": _column(args, "reserved"),
            }
        )

    def _add_span(self, group: list[Any]) -> None:
        starts = self._ts(group)
        durs = _sane_us(np.array([e.dur for e in group], np.float64))
        ends = starts + np.rint(durs * 1000).astype(np.int64)
        lo, hi = int(starts.min()), int(ends.max())
        if self.span is not None:
            lo, hi = min(lo, self.span[0]), max(hi, self.span[1])
        self.span = (lo, hi)

    # -- batches read elsewhere ---------------------------------------------------------------
    def partial(self, repairs: Repairs) -> _Partial:
        return _Partial(
            names=tuple(self.names), parts=dict(self.parts), counts=dict(self.counts),
            span=self.span, overhead=self.overhead, loose_batches=self.loose_batches,
            repairs=repairs, gpu_rows=self.gpu_rows, op_rows=self.op_rows,
        )  # fmt: skip

    def merge(self, other: _Partial) -> None:
        """Append a partial built from the next span, its name indices mapped onto ours."""
        intern = self.names.setdefault
        remap = np.array([intern(name, len(self.names)) for name in other.names], np.int64)
        for key, parts in other.parts.items():
            for cols in parts:
                for column in _NAME_COLUMNS.get(key, ()):
                    ids = cols.get(column)  # annotations have no recorded inputs
                    if ids is not None and len(remap):
                        mapped = np.where(ids >= 0, remap[np.maximum(ids, 0)], ids)
                        cols[column] = mapped.astype(ids.dtype)
                if key == "launch_params":
                    cols["row"] = cols["row"] + self.gpu_rows
                elif key == "collectives":
                    cols["op"] = cols["op"] + self.op_rows
                self.parts[key].append(cols)
        for cat, count in other.counts.items():
            self.counts[cat] += count
        if other.span is not None:
            lo, hi = other.span
            self.span = (min(lo, self.span[0]), max(hi, self.span[1])) if self.span else (lo, hi)
        self.overhead += other.overhead
        self.loose_batches += other.loose_batches
        self.repairs += other.repairs
        self.gpu_rows += other.gpu_rows
        self.op_rows += other.op_rows

    def _sorted_names(self) -> tuple[str, ...]:
        """The names in sorted order, every name index in the parts renumbered to match: the
        order of first appearance depends on where batches were cut (block sizes, gzip or
        not), and ties between rows follow name indices in the analyses — sorted, the same
        trace gives the same report however it was stored or read."""
        names = tuple(self.names)
        order = sorted(range(len(names)), key=names.__getitem__)
        renumber = np.empty(len(names), np.int64)
        renumber[order] = np.arange(len(names))
        for key, parts in self.parts.items():
            for cols in parts:
                for column in _NAME_COLUMNS.get(key, ()):
                    ids = cols.get(column)
                    if ids is not None and len(ids):
                        cols[column] = np.where(ids >= 0, renumber[np.maximum(ids, 0)], ids).astype(
                            ids.dtype
                        )
        return tuple(names[i] for i in order)

    # -- result -----------------------------------------------------------------------------
    def finish(self, path: str, report: StreamReport) -> Trace:
        report.repairs += self.repairs
        if not self.counts:
            raise ReaderError("the traceEvents array holds no events")
        names = self._sorted_names()
        tables = {
            key: _concat(table, self.parts.pop(key, []))
            for key, table in (
                ("gpu", GpuOps),
                ("host", HostCalls),
                ("ops", CpuOps),
                ("syncs", Syncs),
                ("gpu_annotations", GpuAnnotations),
                ("flows", Flows),
            )
        }
        launch = _concat(LaunchParams, self.parts.pop("launch_params", []))
        tables["launch_params"] = in_work_groups(launch, tables["gpu"], tables["host"], names)
        tables["collectives"] = _concat(Collectives, self.parts.pop("collectives", []))
        tables["memory"] = _concat(MemoryEvents, self.parts.pop("memory", []))
        meta = self._meta(path, report, names, tables)
        return Trace(meta=meta, names=names, **tables)

    def _meta(
        self, path: str, report: StreamReport, names: tuple[str, ...], tables: dict[str, Any]
    ) -> TraceMeta:
        host, gpu = tables["host"], tables["gpu"]
        header = report.header
        warnings: list[str] = []
        if report.truncated:
            recovered = sum(self.counts.values())
            warnings.insert(
                0,
                f"truncated file: it ends in the middle of the event array (the writer died?); "
                f"analysed the {recovered:,} complete events, dropped the last "
                f"{report.dropped_bytes:,} bytes of {report.total_bytes:,}",
            )
        if report.tail_cut:
            warnings.insert(0, TAIL_CUT)
        if report.repairs:
            warnings.append(report.repairs.warning())
        if self.loose_batches:
            warnings.append("some fields had unexpected types; they were read leniently")
        distributed = header.get("distributedInfo") or {}
        all_devices = _devices(header.get("deviceProperties"))
        used = set(np.unique(gpu.device).tolist())
        devices = tuple(d for d in all_devices if d.id in used)
        missing = sorted(used - {d.id for d in all_devices} - {-1})
        if missing and len({(d.name, d.compute_units) for d in all_devices}) == 1:
            # ROCm's Kineto numbers a kernel's device by HSA agent (CPU agents first), not by the
            # HIP device the header lists: with one kind of GPU listed, it is one of those
            devices += tuple(replace(all_devices[0], id=i) for i in missing)
        return TraceMeta(
            path=path,
            format="kineto",
            schema="legacy" if _LEGACY & set(self.counts) else "current",
            vendor=_vendor(header, all_devices, names, host),
            devices=devices,
            base_time_ns=_opt_int(header.get("baseTimeNanoseconds")),
            profiler_span=self.span,
            rank=_opt_int(distributed.get("rank")) if isinstance(distributed, dict) else None,
            world_size=_opt_int(distributed.get("world_size"))
            if isinstance(distributed, dict)
            else None,
            event_counts=dict(self.counts),
            truncated=report.truncated or report.tail_cut,
            warnings=tuple(warnings),
            extra={k: v for k, v in header.items() if isinstance(v, (str, int, float))}
            | ({"overhead": self.overhead} if self.overhead else {}),
            provides=_provides(header, tables),
            clock="kineto",
            files=(path,),
        )


def _provides(header: dict[str, Any], tables: dict[str, Any]) -> frozenset[str]:
    """A Kineto trace records all of these; devices and sizes only when the file has them."""
    found = {"kernels", "timestamps", "copies", "host_api", "links", "cpu_ops", "markers"}
    if isinstance(header.get("deviceProperties"), list) and header["deviceProperties"]:
        found.add("devices")
    gpu = tables["gpu"]
    if (gpu.bytes[gpu.kind != KERNEL] >= 0).any():
        found.add("copy_bytes")
    if len(tables["launch_params"]):
        found.add("launch_params")
    if len(tables["memory"]):
        found.add("memory")
    return frozenset(found)


def float_us_to_ns(us: Any) -> I64:
    """µs floats → int64 ns, exact for |µs| < 2**43 (integer and fraction converted apart)."""
    us = _sane_us(us)
    whole = np.floor(us)
    frac_ns = np.rint((us - whole) * 1000.0).astype(np.int64)
    result: I64 = whole.astype(np.int64) * 1000 + frac_ns
    return result


def _dims_columns(grids: list[Any], blocks: list[Any]) -> tuple[Any, Any]:
    """(n, 3) int64 grid and block columns; a row is -1 where either is not three whole
    numbers that fit its column (grid < 2**63, block < 2**31). One numpy conversion when every
    kernel has both (the common case), value by value otherwise."""
    if None not in grids and None not in blocks:
        try:
            grid, block = np.array(grids, np.int64), np.array(blocks, np.int64)
        except (TypeError, ValueError, OverflowError):
            pass  # ragged, or a value past int64
        else:
            if grid.ndim == 2 and grid.shape[1] == 3 and block.shape == grid.shape:
                bad = (grid < 0).any(axis=1) | ((block < 0) | (block >= 2**31)).any(axis=1)
                grid[bad] = -1
                return grid, block
    pairs = [
        (g, b) if g is not None and b is not None and _dims(g, 2**63) and _dims(b, 2**31) else None
        for g, b in zip(grids, blocks, strict=True)
    ]
    grid = np.array([p[0] if p else (-1, -1, -1) for p in pairs], np.int64).reshape(-1, 3)
    block = np.array([p[1] if p else (-1, -1, -1) for p in pairs], np.int64).reshape(-1, 3)
    return grid, block


def _dims(value: Any, limit: int) -> bool:
    """A launch dimension [x, y, z] of whole numbers that fit its column."""
    return len(value) == 3 and all(type(v) is int and 0 <= v < limit for v in value)


def _sane_us(us: Any) -> Any:
    """µs that fit int64 ns; NaN, infinities and values past ±9e15 µs (285 years) become 0."""
    us = np.asarray(us, np.float64)
    return np.where(np.isfinite(us) & (np.abs(us) < 9e15), us, 0.0)


def _needs_exact(events: list[Any], text: bytes | bytearray) -> bool:
    """True when timestamps are large epoch µs with fractions that a float cannot hold.

    A sample of the batch is enough: timestamps of one trace share their magnitude.
    """
    if not events:
        return False
    sample = events[:: max(1, len(events) // 256)] + events[-1:]
    if max(abs(e.ts) for e in sample) < EXACT_LIMIT_US:
        return False
    return _has_fractional_ts(text)


def _has_fractional_ts(text: bytes | bytearray) -> bool:
    return re.search(rb'"ts"\s*:\s*-?\d+\.\d', text) is not None


def _ints(values: list[Any]) -> I64:
    """int64 column from ints, numeric strings ('0x0') or junk (-1)."""
    try:
        return np.array(values, np.int64)
    except (TypeError, ValueError, OverflowError):
        return np.array([dec.as_int(v) for v in values], np.int64)


_PH, _TS, _DUR, _ARGS = attrgetter("ph"), attrgetter("ts"), attrgetter("dur"), attrgetter("args")
_NAME = attrgetter("name")
_INPUTS = attrgetter("input_dims", "input_types", "concrete")
_JOIN_FIELDS = b"\x01".join
_COLLECTIVE = attrgetter("collective")


def _column(items: list[Any], attribute: str) -> I64:
    """int64 column of one attribute of every item: ints, numeric strings ('0x0') or junk (-1).
    (`np.fromiter` over an attrgetter: half the time of a list comprehension.)"""
    try:
        return np.fromiter(map(attrgetter(attribute), items), np.int64, len(items))
    except (TypeError, ValueError, OverflowError):
        return np.array([dec.as_int(getattr(x, attribute)) for x in items], np.int64)


def _external_ids(args: list[Any]) -> I64:
    """`External id` (current schema) or `external id` (legacy), -1 when neither."""
    current = _column(args, "external_id")
    if (current != -1).all():
        return current
    legacy = _column(args, "legacy_external_id")
    return np.where(current != -1, current, legacy)


def _devices_of(group: list[Any], args: list[Any]) -> Any:
    """The device of each GPU event: args.device when it fits int32, else the pid when that is
    an int that fits (older ROCm traces), else -1."""
    device = _column(args, "device")
    fits = (device >= 0) & (device < 2**31)
    if fits.all():
        return device.astype(np.int32)
    pids = list(map(attrgetter("pid"), group))
    pid = np.array([p if type(p) is int and 0 <= p < 2**31 else -1 for p in pids], np.int64)
    return np.where(fits, device, pid).astype(np.int32)


def _normalise(event: dec.LooseEvent) -> dec.LooseEvent:
    args = dec.loose_args(event.args)
    clean = dec.Args(
        correlation=dec.as_int(args.correlation),
        external_id=dec.as_int(args.external_id),
        legacy_external_id=dec.as_int(args.legacy_external_id),
        stream=dec.as_int(args.stream),
        device=max(-1, min(dec.as_int(args.device), 2**31 - 1)),
        bytes=dec.as_int(args.bytes),
        grid=dec.dims(args.grid),
        block=dec.dims(args.block),
        registers=dec.as_int(args.registers),
        shared_memory=dec.as_int(args.shared_memory),
        input_dims=msgspec.Raw(dec.raw_text(args.input_dims)),
        input_types=msgspec.Raw(dec.raw_text(args.input_types)),
        concrete=msgspec.Raw(dec.raw_text(args.concrete)),
        sequence=dec.as_int(args.sequence),
        collective=dec.as_str(args.collective),
        in_elems=dec.as_int(args.in_elems),
        out_elems=dec.as_int(args.out_elems),
        group_size=dec.as_int(args.group_size),
        dtype=dec.as_str(args.dtype),
        group=dec.as_str(args.group),
        addr=dec.as_int(args.addr),
        mem_bytes=dec.as_int(args.mem_bytes, 0),
        allocated=dec.as_int(args.allocated),
        reserved=dec.as_int(args.reserved),
        device_id=max(-1, min(dec.as_int(args.device_id), 2**31 - 1)),
    )
    dur = event.dur if isinstance(event.dur, (int, float)) else dec.as_int(event.dur)
    return dec.LooseEvent(
        ph=dec.as_str(event.ph),
        cat=dec.as_str(event.cat),
        name=dec.as_str(event.name),
        pid=dec.as_int(event.pid),
        tid=dec.as_int(event.tid),
        ts=event.ts if isinstance(event.ts, (int, float, str)) else 0,
        dur=float(dur) if dur is not None and abs(dur) < 2**62 else 0.0,
        id=dec.as_int(event.id),
        args=clean,
    )


def _concat(table: Any, parts: list[dict[str, Any]]) -> Any:
    """One table from column dicts; a column some parts lack is -1 in their rows. The parts
    are emptied column by column as they are joined, so the peak memory is the columns plus
    one column, not twice the columns."""
    if not parts:
        return table.empty()
    keys = sorted({key for part in parts for key in part})
    sizes = [len(next(iter(part.values()))) for part in parts]
    columns = {}
    for key in keys:
        pieces = [
            p.pop(key) if key in p else np.full(n, -1, np.int64)
            for p, n in zip(parts, sizes, strict=True)
        ]
        columns[key] = np.concatenate(pieces)
        del pieces
    parts.clear()
    return table.from_columns(columns)


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _devices(properties: Any) -> tuple[Device, ...]:
    if not isinstance(properties, list):
        return ()
    devices = []
    for entry in properties:
        if isinstance(entry, dict) and isinstance(entry.get("id"), int):
            devices.append(
                Device(
                    entry["id"],
                    dec.as_str(entry.get("name")),
                    dict(entry),
                    arch=_arch(entry),
                    compute_units=max(0, dec.as_int(entry.get("numSms", 0))),
                )
            )
    return tuple(devices)


def _arch(entry: dict[str, Any]) -> str:
    """gfx target (AMD: gcnArchName when recorded) or sm_XY from the compute capability."""
    gcn = entry.get("gcnArchName")
    if isinstance(gcn, str) and gcn:
        return gcn.split(":")[0]
    major, minor = entry.get("computeMajor"), entry.get("computeMinor")
    if entry.get("warpSize") == 64 or not isinstance(major, int) or not isinstance(minor, int):
        return ""
    return f"sm_{major}{minor}"


def _vendor(
    header: dict[str, Any], devices: tuple[Device, ...], names: tuple[str, ...], host: HostCalls
) -> str:
    if any(k in header for k in ("roctracer_version", "hip_runtime_version", "hip_driver_version")):
        return "amd"
    if any(k in header for k in ("cupti_version", "cuda_runtime_version", "cuda_driver_version")):
        return "nvidia"
    if any(d.properties.get("warpSize") == 64 for d in devices):
        return "amd"
    api = {names[i][:3] for i in np.unique(host.name)}
    if "hip" in api:
        return "amd"
    if api & {"cud", "cuL", "cuM", "cuS", "cuE", "cuG"}:
        return "nvidia"
    if any(d.name.startswith(("NVIDIA", "Tesla", "A100", "H100")) for d in devices):
        return "nvidia"
    return "unknown"


_DTYPE_BYTES = {
    "float": 4, "float32": 4, "double": 8, "float64": 8, "half": 2, "float16": 2,
    "bfloat16": 2, "c10::bfloat16": 2, "c10::half": 2, "int": 4, "int32": 4, "long": 8,
    "int64": 8, "long int": 8, "short": 2, "int16": 2, "char": 1, "int8": 1, "uint8": 1,
    "unsigned char": 1, "bool": 1, "signed char": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
    "c10::float8_e4m3fn": 1, "c10::float8_e5m2": 1, "c10::float8_e4m3fnuz": 1,
    "c10::float8_e5m2fnuz": 1, "c10::complexfloat": 8, "c10::complexdouble": 16,
}  # fmt: skip


def dtype_bytes(name: str) -> int:
    """Bytes per element of a dtype as torch.profiler writes it ("c10::BFloat16", "Float"); -1."""
    return _DTYPE_BYTES.get(name.strip().lower().removeprefix("torch."), -1)
