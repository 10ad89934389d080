"""Reader for rocprofv3's SQLite output, the rocpd database (`<pid>_results.db`, ROCm ≥ 7).

Every table carries its run's uuid as a suffix (`rocpd_kernel_dispatch_0000…`) and is exposed
through an un-suffixed view; a merged database holds several runs (one suffix and guid each).
The suffixes are discovered from the schema and each run is read from its own tables, so no
`guid` join is ever needed; with several runs their correlation and stream ids are offset by
`run << 40` so they cannot collide. Times are CLOCK_BOOTTIME ns, kept as integers.

    >>> from gpuscope.trace.registry import read_trace
    >>> trace = read_trace("out/host/15_results.db")    # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuscope.errors import ReaderError
from gpuscope.trace import _sniff, _sql
from gpuscope.trace._builder import TraceParts, trace_meta
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace.model import Device, Trace
from gpuscope.trace.readers.rocpd import _meta as about
from gpuscope.trace.readers.rocpd._meta import DISPATCH, Run

# every input is sniffed with this module (a Kineto JSON too): the read path is imported on read
if TYPE_CHECKING:
    from gpuscope.trace._sql_scan import Scan
    from gpuscope.trace.readers.rocpd._run import RunReader

EXPECTED = "a rocprofv3 rocpd database (<pid>_results.db)"
SUFFIX = "_results.db"


class RocpdReader:
    """`Reader` for rocpd SQLite databases written by rocprofv3."""

    name = "rocpd"
    priority = 30  # a process's rocpd database wins over its CSV / JSON outputs

    def sniff(self, path: str) -> bool:
        names = _sniff.sqlite_names(path)
        if not names:
            return _sql.head_mentions(path, DISPATCH)
        return "rocpd_metadata" in names and any(n.startswith(DISPATCH) for n in names)

    def group_key(self, path: str) -> str:
        """`out/host/15_results.db` -> `out/host/15`, the key of that process's CSV / JSON."""
        file = Path(path)
        name = file.name
        prefix = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name.rsplit(".", 1)[0]
        return str(file.parent / prefix)

    def read(self, path: str, progress: Progress | None = None) -> Trace:
        from gpuscope.trace._sql_scan import Scan

        with _sql.database(path, EXPECTED) as db:
            names = _sql.objects(db)
            _check_schema(names)
            views = frozenset(name for name, kind in names.items() if kind == "view")
            return _read(Scan(path, db, views, progress), names)


def _check_schema(names: dict[str, str]) -> None:
    if not any(name.startswith("rocpd_metadata") for name in names):
        raise ReaderError("a SQLite file but not a rocpd database: no rocpd_metadata table")
    if not any(name.startswith(DISPATCH) for name in names):
        raise ReaderError(f"a SQLite file but not a rocpd database: no {DISPATCH} table")


def _read(scan: Scan, names: dict[str, str]) -> Trace:
    from gpuscope.trace.readers.rocpd._run import RUN_BITS, RunReader

    db, path = scan.db, scan.path
    runs = about.runs(names)
    parts = TraceParts()
    devices: dict[int, Device] = {}
    counts: dict[str, int] = {}
    units: dict[str, str] = {}
    for index, run in enumerate(runs):
        agents = about.agents(db, run)
        for device in agents.gpus.values():
            devices.setdefault(device.id, device)
        offset = index << RUN_BITS if len(runs) > 1 else 0
        reader = RunReader(scan, run, parts, offset, agents, counts)
        units.update(_read_run(reader))
    trace = parts.build(trace_meta(path, "rocpd"))
    meta = _meta(db, path, runs, trace, devices, counts, units)
    return dataclasses.replace(trace, meta=meta)


def _read_run(reader: RunReader) -> dict[str, str]:
    from gpuscope.trace.readers.rocpd import _gpu, _host

    events, first = _gpu.kernels(reader)
    _gpu.copies(reader)
    _host.regions(reader)
    _host.marks(reader)
    return _gpu.counters(reader, events, first)


def _meta(
    db: sqlite3.Connection,
    path: str,
    runs: list[Run],
    trace: Trace,
    devices: dict[int, Device],
    counts: dict[str, int],
    units: dict[str, str],
) -> Any:
    from gpuscope.trace.readers.rocpd._run import RUN_BITS

    process = about.process(db, runs)
    info = [about.metadata(db, run) for run in runs]
    used = {int(d) for d in set(trace.gpu.device.tolist())}
    found = {
        "kernels": counts.get("kernel_dispatch", 0),
        "copies": counts.get("memory_copy", 0),
        "host_api": counts.get("region", 0),
        "markers": counts.get("marker", 0),
        "counters": counts.get("pmc_event", 0),
    }
    extra: dict[str, Any] = {"guids": [m.get("guid", "") for m in info], **process.extra}
    extra["tracing_options"] = dict(sorted(process.options.items()))
    warnings = []
    if len(runs) > 1:
        warnings.append(
            f"{len(runs)} merged runs (processes) read as one trace; their correlation and "
            f"stream ids are offset by run << {RUN_BITS}"
        )
    return trace_meta(
        path,
        "rocpd",
        schema="/".join(sorted({m.get("schema_version", "?") for m in info})),
        vendor="amd",
        devices=tuple(devices[d] for d in sorted(used) if d in devices),
        profiler_span=process.span,
        rank=extra.get("mpi_rank"),
        world_size=extra.get("mpi_size"),
        event_counts=dict(counts),
        warnings=tuple(warnings),
        extra=extra,
        provides=about.provides(process.options, found),
        clock="boot",
        counter_units=units,
    )
