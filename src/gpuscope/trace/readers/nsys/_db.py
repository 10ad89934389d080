"""An Nsight Systems SQLite export (`nsys export --type sqlite`, schema 2.x and 3.x) -> `Trace`.

Kernels, memcpys and memsets come from the `CUPTI_ACTIVITY_KIND_*` tables, API calls from
`..._RUNTIME` (whose `eventClass` also marks driver calls) and `..._DRIVER`, synchronizations
from `..._SYNCHRONIZATION`, user ranges from `NVTX_EVENTS`. Times are ns since the session start
(`TARGET_INFO_SESSION_START_TIME.utcEpochNs` is the epoch of that zero). A table that is absent
holds no rows (nsys exports lazily); a report with no CUDA table at all is refused, since it
has nothing gpuscope analyses.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import Any

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace import _sniff
from gpuscope.trace._builder import TraceParts, trace_meta
from gpuscope.trace.model import (
    ANNOTATION,
    DRIVER,
    I64,
    KERNEL,
    LIBRARY,
    MEMCPY,
    MEMSET,
    OTHER_COPY,
    RUNTIME,
    Trace,
)
from gpuscope.trace.readers.nsys import _enums as enums
from gpuscope.trace.readers.nsys import _target as target
from gpuscope.trace.readers.nsys._db_columns import Database

EXPECTED = "an Nsight Systems SQLite export (nsys export --type sqlite)"
CUPTI = "CUPTI_ACTIVITY_KIND_"
KERNEL_T, MEMCPY_T, MEMSET_T = CUPTI + "KERNEL", CUPTI + "MEMCPY", CUPTI + "MEMSET"
RUNTIME_T, DRIVER_T, SYNC_T = CUPTI + "RUNTIME", CUPTI + "DRIVER", CUPTI + "SYNCHRONIZATION"
ACTIVITY_TABLES = (KERNEL_T, MEMCPY_T, MEMSET_T, RUNTIME_T, DRIVER_T, SYNC_T)
NVTX_T = "NVTX_EVENTS"
_NSYS_TABLES = ("META_DATA_EXPORT", "EXPORT_META_DATA", "TARGET_INFO_SESSION_START_TIME", NVTX_T)
# what a report without CUDA tables holds instead, for the error message
_CPU_ONLY = {
    "OSRT_API": "OS runtime calls",
    "COMPOSITE_EVENTS": "CPU samples",
    "SCHED_EVENTS": "thread scheduling",
    NVTX_T: "NVTX ranges",
}
_GPU_COMMON = ("start", "end", "deviceId", "streamId", "correlationId", "globalPid")
_LAUNCH = (
    *("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"),
    *("registersPerThread", "staticSharedMemory", "dynamicSharedMemory", "localMemoryPerThread"),
)
_KERNEL = (*_GPU_COMMON, "demangledName", "shortName", *_LAUNCH)
_MEMCPY = (*_GPU_COMMON, "bytes", "copyKind", "srcKind", "dstKind")
_MEMSET = (*_GPU_COMMON, "bytes", "memKind")
_API = ("start", "end", "eventClass", "globalTid", "correlationId", "nameId")
_SYNC = (*_GPU_COMMON, "syncType")
_NVTX = ("start", "end", "eventType", "textId", "globalTid")


def is_export(names: frozenset[str]) -> bool:
    """True for the table set of an nsys export (also one without CUDA activity)."""
    if "StringIds" not in names:
        return False
    return any(n.startswith(CUPTI) for n in names) or any(t in names for t in _NSYS_TABLES)


def read_export(path: str) -> Trace:
    try:
        with closing(_sniff.connect(path)) as connection:
            return _read(path, connection)
    except (sqlite3.Error, UnicodeDecodeError) as error:
        raise _sniff.sqlite_error(error, EXPECTED) from None


def _read(path: str, connection: sqlite3.Connection) -> Trace:
    tables = [str(r[0]) for r in connection.execute("SELECT name FROM sqlite_master")]
    db = Database(connection, tables)
    if not is_export(db.tables):
        raise ReaderError(
            f"not {EXPECTED}: it has no StringIds / CUPTI_ACTIVITY_KIND_* / META_DATA_EXPORT tables"
        )
    session = target.session(db)
    if not any(db.has(t) for t in ACTIVITY_TABLES):
        raise ReaderError(_no_cuda_message(db, session))
    return _Export(db, session).build(path)


def _no_cuda_message(db: Database, session: target.Session) -> str:
    held = [what for table, what in _CPU_ONLY.items() if db.has(table)]
    holds = f"it holds {', '.join(held)} only" if held else "it holds no GPU data"
    why = " (CUDA tracing was off for the profiled process)" if session.cuda_off else ""
    return (
        f"this Nsight Systems report has no CUDA activity: no CUPTI_ACTIVITY_KIND_* tables"
        f"{why}; {holds}. Profile with `nsys profile --trace=cuda,nvtx ...` to record "
        "kernels, copies and CUDA API calls"
    )


class _Export:
    """Reads the activity tables of one export into a `TraceParts`."""

    def __init__(self, db: Database, session: target.Session) -> None:
        self.db = db
        self.session = session
        self.parts = TraceParts()
        self.gpu: list[dict[str, Any]] = []
        self.host: list[dict[str, Any]] = []
        self.counts: dict[str, int] = {}
        self.warnings: list[str] = []
        self.processes: dict[int, str] = {}

    # -- device activity --------------------------------------------------------------------
    def kernels(self) -> None:
        table = self.db.ints(KERNEL_T, _KERNEL)
        col = _columns(_KERNEL, table)
        name_id = np.where(col["demangledName"] >= 0, col["demangledName"], col["shortName"])
        self._gpu(KERNEL, col, self._names(name_id), len(table))
        self.counts["kernel"] = len(table)
        self.parts.add(
            "launch_params",
            len(table),
            row=np.arange(len(table), dtype=np.int64),
            **{f"grid_{a}": col[f"grid{a.upper()}"] for a in "xyz"},
            **{f"block_{a}": col[f"block{a.upper()}"] for a in "xyz"},
            shared_mem=_sum_known(col["staticSharedMemory"], col["dynamicSharedMemory"]),
            scratch=col["localMemoryPerThread"],
            registers=col["registersPerThread"],
        )

    def memcpys(self) -> None:
        table = self.db.ints(MEMCPY_T, _MEMCPY)
        col = _columns(_MEMCPY, table)
        kinds = enums.memcpy_kinds(self.db)
        memory = enums.enum_labels(self.db, "ENUM_CUDA_MEM_KIND", enums.MEMORY_KINDS)
        unique, inverse = np.unique(col["copyKind"], return_inverse=True)
        known = [kinds.get(int(k), (f"kind {k}", OTHER_COPY)) for k in unique]
        directions = np.array([direction for _, direction in known], np.int8)
        names = self.parts.intern(f"[CUDA memcpy {label}]" for label, _ in known)
        unified = np.isin(col["copyKind"], enums.UNIFIED_COPIES)
        col["streamId"] = np.where(unified, -1, col["streamId"])  # migrations have no stream
        extra = {
            "bytes": col["bytes"],
            "copy": directions[inverse],
            "host_memory": enums.host_memory(col["srcKind"], col["dstKind"], memory),
        }
        self._gpu(MEMCPY, col, names[inverse], len(table), **extra)
        self.counts["memcpy"] = len(table)

    def memsets(self) -> None:
        table = self.db.ints(MEMSET_T, _MEMSET)
        col = _columns(_MEMSET, table)
        names = np.full(len(table), self.parts.intern_one("[CUDA memset]"), np.int32)
        self._gpu(MEMSET, col, names, len(table), bytes=col["bytes"])
        self.counts["memset"] = len(table)

    def _gpu(self, kind: int, col: dict[str, I64], names: Any, size: int, **extra: Any) -> None:
        self.gpu.append(
            {
                "kind": np.full(size, kind, np.int8),
                "name": names,
                "start": col["start"],
                "dur": np.maximum(col["end"] - col["start"], 0),
                "device": enums.unset_to_missing(col["deviceId"]),
                "stream": enums.unset_to_missing(col["streamId"]),
                "correlation": _correlation(col["correlationId"]),
                "pid": _pid(col["globalPid"]),
                **extra,
            }
        )

    # -- host activity ----------------------------------------------------------------------
    def api_calls(self) -> None:
        for table_name in (RUNTIME_T, DRIVER_T):
            if not self.db.has(table_name):
                continue
            table = self.db.ints(table_name, _API)
            col = _columns(_API, table)
            domain = enums.domains(col["eventClass"])
            if table_name == DRIVER_T:
                domain[:] = DRIVER
            self.host.append(
                {
                    "name": self._names(col["nameId"], enums.api_name),
                    "start": col["start"],
                    "dur": np.maximum(col["end"] - col["start"], 0),
                    "tid": np.where(col["globalTid"] >= 0, col["globalTid"] & 0xFFFFFF, -1),
                    "correlation": _correlation(col["correlationId"]),
                    "domain": domain,
                    "pid": _pid(col["globalTid"]),
                }
            )
            for value, name in ((RUNTIME, "runtime"), (DRIVER, "driver"), (LIBRARY, "library")):
                count = int((domain == value).sum())
                if count:
                    self.counts[name] = self.counts.get(name, 0) + count

    def syncs(self) -> None:
        table = self.db.ints(SYNC_T, _SYNC)
        col = _columns(_SYNC, table)
        apis = self._api_names(_correlation(col["correlationId"]), _pid(col["globalPid"]))
        types = enums.sync_types(self.db)
        names = [
            enums.sync_name(a, int(t), types) for a, t in zip(apis, col["syncType"], strict=True)
        ]
        self.parts.add(
            "syncs",
            len(table),
            name=self.parts.intern(names),
            start=col["start"],
            dur=np.maximum(col["end"] - col["start"], 0),
            device=enums.unset_to_missing(col["deviceId"]),
            stream=enums.unset_to_missing(col["streamId"]),
        )
        self.counts["sync"] = len(table)

    def _api_names(self, correlation: I64, pid: I64) -> list[str | None]:
        """The API call name of each correlation id (None when not found)."""
        if not self.host or not len(correlation):
            return [None] * len(correlation)
        keys = np.concatenate([_key(h["pid"], h["correlation"]) for h in self.host])
        if not len(keys):  # API tables present but empty
            return [None] * len(correlation)
        names = np.concatenate([h["name"] for h in self.host])
        order = np.argsort(keys, kind="stable")
        wanted = _key(pid, correlation)
        at = np.minimum(np.searchsorted(keys[order], wanted), len(keys) - 1)
        found = (keys[order][at] == wanted) & (correlation >= 0)
        text = list(self.parts.names)
        return [text[names[order][i]] if ok else None for i, ok in zip(at, found, strict=True)]

    def nvtx(self) -> None:
        present = self.db.columns(NVTX_T)
        where = "ORDER BY rowid"
        if "eventType" in present:
            kinds = (enums.NVTX_MARK, enums.NVTX_PUSH_POP, enums.NVTX_START_END)
            where = f"WHERE eventType IN {kinds} ORDER BY rowid"
        table = self.db.ints(NVTX_T, _NVTX, where)
        col = _columns(_NVTX, table)
        texts = self.db.texts(NVTX_T, "text", where) or [None] * len(table)
        by_id = self.db.strings(col["textId"])
        labels = [
            t if t is not None else by_id.get(int(i), "")
            for t, i in zip(texts, col["textId"], strict=True)
        ]
        mark = col["eventType"] == enums.NVTX_MARK
        open_range = (col["end"] < 0) & ~mark
        if open_range.any():
            self.warnings.append(
                f"{int(open_range.sum()):,} NVTX ranges never ended (the "
                "capture stopped inside them); they are left out"
            )
        keep = ~open_range
        self.parts.add(
            "ops",
            int(keep.sum()),
            kind=np.full(int(keep.sum()), ANNOTATION, np.int8),
            name=self.parts.intern(label for label, k in zip(labels, keep, strict=True) if k),
            start=col["start"][keep],
            dur=np.where(mark, 0, np.maximum(col["end"] - col["start"], 0))[keep],
            tid=np.where(col["globalTid"] >= 0, col["globalTid"] & 0xFFFFFF, -1)[keep],
        )
        self.counts["nvtx"] = int(keep.sum())

    # -- names ------------------------------------------------------------------------------
    def _names(self, ids: I64, transform: Any = None) -> Any:
        """Name indices of StringIds ids, each distinct id looked up once."""
        unique, inverse = np.unique(ids, return_inverse=True)
        texts = self.db.strings(unique)
        labels = [texts.get(int(u), f"<unnamed {u}>") for u in unique]
        if transform is not None:
            labels = [transform(label) for label in labels]
        return self.parts.intern(labels)[inverse]

    # -- result -----------------------------------------------------------------------------
    def build(self, path: str) -> Trace:
        steps = ((KERNEL_T, self.kernels), (MEMCPY_T, self.memcpys), (MEMSET_T, self.memsets))
        for table, step in steps:
            if self.db.has(table):
                step()
        self.api_calls()
        if self.db.has(SYNC_T):
            self.syncs()
        if self.db.has(NVTX_T):
            self.nvtx()
        self._processes()
        for rows in self.gpu:
            self.parts.add("gpu", **{k: v for k, v in rows.items() if k != "pid"})
        for rows in self.host:
            self.parts.add("host", **{k: v for k, v in rows.items() if k != "pid"})
        return self.parts.build(self._meta(path))

    def _processes(self) -> None:
        """Several processes with GPU work: one trace, correlation ids made unique per process."""
        pids = {int(p) for rows in self.gpu for p in np.unique(rows["pid"]) if p >= 0}
        self.processes = target.process_names(self.db, pids)
        if len(pids) < 2:
            return
        named = ", ".join(f"{p} ({self.processes.get(p, '?')})" for p in sorted(pids)[:8])
        self.warnings.append(
            f"{len(pids)} processes have GPU activity (pid {named}); they are "
            "read as one trace, correlation ids made unique per process "
            "(pid × 2^32 + id)"
        )
        for rows in (*self.gpu, *self.host):
            known = rows["correlation"] >= 0
            rows["correlation"] = np.where(known, _key(rows["pid"], rows["correlation"]), -1)

    def _meta(self, path: str) -> Any:
        gpu_devices = {int(d) for rows in self.gpu for d in np.unique(rows["device"])}
        devices = target.devices(self.db)
        return trace_meta(
            path,
            "nsys",
            schema=self.session.schema or "unknown",
            vendor="nvidia",
            devices=tuple(devices[d] for d in sorted(gpu_devices) if d in devices),
            base_time_ns=self.session.base_time_ns,
            profiler_span=self.session.span,
            event_counts=dict(self.counts),
            warnings=tuple(self.warnings),
            extra=self._extra(),
            provides=self._provides(bool(devices)),
            clock="session",
        )

    def _extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"nsys_version": self.session.product}
        if self.processes:
            extra["processes"] = {str(pid): name for pid, name in sorted(self.processes.items())}
        return extra

    def _provides(self, has_devices: bool) -> frozenset[str]:
        found = {"kernels", "timestamps", "copies", "copy_bytes", "launch_params"}
        if self.db.has(RUNTIME_T) or self.db.has(DRIVER_T):
            found |= {"host_api", "links"}
        if self.db.has(NVTX_T) or "NvtxEvents" in self.session.captured:
            found.add("markers")
        if has_devices:
            found.add("devices")
        return frozenset(found)


def _columns(names: tuple[str, ...], table: I64) -> dict[str, I64]:
    """Views of the columns (no copy: a million-row table is read once into one array)."""
    return {name: table[:, i] for i, name in enumerate(names)}


def _correlation(values: I64) -> I64:
    """CUPTI correlation ids start at 1: 0 (page migrations) and NULL mean none."""
    result: I64 = np.where(values > 0, values, -1)
    return result


def _pid(global_id: I64) -> I64:
    """The pid inside nsys's serialized GlobalId (globalPid / globalTid)."""
    result: I64 = np.where(global_id >= 0, (global_id >> 24) & 0xFFFFFF, -1)
    return result


def _key(pid: I64, correlation: I64) -> I64:
    result: I64 = np.maximum(pid, 0) * (1 << 32) + correlation
    return result


def _sum_known(a: I64, b: I64) -> I64:
    result: I64 = np.where((a >= 0) & (b >= 0), a + b, np.maximum(a, b))
    return result
