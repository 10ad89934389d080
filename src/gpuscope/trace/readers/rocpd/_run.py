"""Reading one rocpd run: the shared state of its table readers (`_gpu`, `_host`)
and the vocabulary of the format (categories, kernel names, ROCTX messages).

Each table is read with one `SELECT` of only the columns needed, joined to `rocpd_event` by its
integer primary key (a row-id look-up), fetched in batches into numpy. The link between a host
call and the GPU work it launched is rocprofiler's *internal* correlation id: `rocpd_event.stack_id`
on both sides (it is also the `region.id` of the call). `rocpd_event.correlation_id` is the
*external* id (0 when none): it becomes `external_id`.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.trace import _sql
from gpuscope.trace._builder import TraceParts
from gpuscope.trace._copies import copy_kind
from gpuscope.trace._kernel_names import without_suffix
from gpuscope.trace._sql_scan import Scan
from gpuscope.trace.model import HSA, I64, LIBRARY, RUNTIME
from gpuscope.trace.readers.rocpd._meta import Agents, Run

MARK = -1  # "domain" of a region that is a user range, not an API call
MARKER_CATEGORIES = ("MARKER_CORE_API", "MARKER_CORE_RANGE_API")
RUN_BITS = 40  # correlation / stream ids of merged run i are offset by i << RUN_BITS


@dataclass
class RunReader:
    """Reads one run into `parts`; ids are offset when several runs share the trace."""

    scan: Scan
    run: Run
    parts: TraceParts
    offset: int
    agents: Agents
    counts: dict[str, int] = field(default_factory=dict)
    _strings: dict[int, str] = field(default_factory=dict)
    _threads: tuple[I64, I64] | None = None

    @property
    def db(self) -> sqlite3.Connection:
        return self.scan.db

    def table(self, base: str) -> str | None:
        """The run's table (quoted for SQL), None when the database has none."""
        name = self.run.table(base)
        return None if name is None else _sql.quote(name)

    def text(self, ids: Any) -> dict[int, str]:
        """Strings of rocpd_string for these ids (cached across the run's tables)."""
        missing = {int(i) for i in _sql.factorize(np.asarray(ids))[0]} - self._strings.keys()
        table = self.run.table("rocpd_string")
        if missing and table is not None:
            self._strings.update(_sql.strings(self.db, table, missing))
        return self._strings

    def tids(self, thread_ids: I64) -> I64:
        """OS thread ids from rocpd_info_thread row ids (equal in rocprofv3's writer)."""
        if self._threads is None:
            table = self.table("rocpd_info_thread")
            sql = f"SELECT id, tid FROM {table}" if table else "SELECT 0, 0 WHERE 0"
            ids, tids = _sql.int_columns(self.db, sql, 2, "rocpd_info_thread")
            self._threads = (ids, tids)
        ids, tids = self._threads
        if not len(ids):  # no thread table rows: the ids are all there is
            return thread_ids
        at = _sql.lookup(ids, thread_ids)
        result: I64 = np.where(at >= 0, tids[np.maximum(at, 0)], thread_ids)
        return result

    def correlation(self, stack_ids: I64) -> I64:
        result: I64 = np.where(stack_ids > 0, stack_ids + self.offset, -1)
        return result

    def event_join(self, alias: str) -> tuple[str, str, str]:
        """(stack id, external id, JOIN clause) for rows that carry an `event_id`."""
        event = self.table("rocpd_event")
        if event is None:
            return "-1", "0", ""
        join = f"LEFT JOIN {event} E ON E.id = {alias}.event_id"
        return "ifnull(E.stack_id, -1)", "ifnull(E.correlation_id, 0)", join


def external(ids: I64) -> I64:
    result: I64 = np.where(ids > 0, ids, -1)
    return result


def kernel_name(symbol: str, display: str) -> str:
    """The name rocprofv3 shows (display name, else the symbol), without a `.kd` suffix."""
    name = display or symbol or "unknown_kernel"
    return without_suffix(str(name))  # str: a number where a damaged db had text


def domain_of(category: str, name: str) -> int:
    """HostCalls.domain of a region from its rocprofiler category (MARK: a ROCTX range)."""
    if category in MARKER_CATEGORIES:
        return MARK
    if category.startswith("HIP_"):
        return RUNTIME
    if category.startswith("HSA_"):
        return HSA
    if category:  # RCCL_API, ROCDECODE_API, ROCJPEG_API, MARKER_CONTROL_API, MARKER_NAME_API, ...
        return LIBRARY
    if name.startswith(("hip", "__hip")):
        return RUNTIME
    return HSA if name.startswith("hsa_") else LIBRARY


def message(extdata: Any) -> str:
    """The ROCTX message rocprofv3 keeps in the event's extdata ({"message": ...})."""
    if isinstance(extdata, bytes):
        extdata = extdata.decode("utf-8", "replace")
    if not isinstance(extdata, str) or "message" not in extdata:
        return ""
    try:
        value = json.loads(extdata)
    except ValueError:
        return ""
    text = value.get("message") if isinstance(value, dict) else None
    return text if isinstance(text, str) else ""


def copy_kinds(names: list[str]) -> Any:
    return np.array([copy_kind(n) for n in names], np.int8)
