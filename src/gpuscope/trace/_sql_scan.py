"""Integer columns of a big SQLite table, read without a Python object per value.

Fetching rows through the `sqlite3` module costs about a microsecond per row and ~0.1 µs per
value, all of it under the GIL. Here the table is cut into rowid ranges; for each range SQLite
itself formats the selected values as one text (`printf` + `group_concat`, which needs no GIL)
in a pool of worker threads with their own read-only connections, and numpy parses that text in
C. A range whose text does not parse to exactly count × width integers is re-read row by row.
Views (no rowid) are read row by row.

Integer literals among the expressions are not asked of SQLite (filled in numpy), and a guarded
column (`ifnull(X, -1)`, `_sql.integer(X)`) is first read bare: the guard costs SQLite a function
call per value (the typeof CASE ~50 % more time) and only matters where the value is NULL, text
or real, which makes the bare text fail to parse. Such a range is re-read with the guards, and
so are the table's later ranges (one wasted range per table at most).

The columns are allocated once from the table's row count: the peak memory is the columns plus
the texts in flight.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import warnings
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.trace import _sniff, _sql
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace.model import I64

CHUNK = 1 << 14  # rowids per range: a few MB of text each
WORKERS = max(1, min(8, os.cpu_count() or 1))
_BLOCK_BITS = 20  # a sparse table's rowids are grouped in blocks of 2**20 before cutting
_LITERAL = re.compile(r"-?[0-9]+")
_GUARDS = (
    re.compile(r"ifnull\((?P<x>[^(),]+), -?[0-9]+\)"),
    re.compile(r"\(CASE WHEN typeof\((?P<x>[^()]+)\) = 'integer' THEN (?P=x) ELSE -?[0-9]+ END\)"),
)


@dataclass
class Scan:
    """The database being read: its path (workers open their own connections) and its
    connection; `progress(rows_done, rows_total)` is called after each range."""

    path: str
    db: sqlite3.Connection
    views: frozenset[str] = frozenset()
    progress: Progress | None = None
    _local: threading.local = field(default_factory=threading.local)
    _opened: list[sqlite3.Connection] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def ints(
        self, table: str, exprs: Sequence[str], what: str, alias: str = "T", join: str = ""
    ) -> list[I64]:
        """SELECT exprs FROM table AS alias [join], every value an integer (wrap nullable
        columns in `ifnull` / `_sql.integer`), as int64 columns."""
        source = f"{_sql.quote(table)} {alias} {join}"
        if table in self.views:
            sql = f"SELECT {', '.join(exprs)} FROM {source}"
            total = _sql.count(self.db, table)
            return _sql.int_columns(self.db, sql, len(exprs), what, total, self.progress)
        asked = [i for i, e in enumerate(exprs) if not _LITERAL.fullmatch(e)]
        if not asked:
            asked = [0]  # every expression a literal: still one value per row to count them
        guarded = [exprs[i] for i in asked]
        bare = [_bare(e) for e in guarded]
        ranges, total = _ranges(self.db, table)
        sqls = [_range_sql(source, alias, bare), _range_sql(source, alias, guarded)]
        state = _Guards(bare == guarded)
        out = _sql.Columns(len(asked), total)
        for (count, values), (lo, hi) in zip(self._map(sqls, state, ranges), ranges, strict=True):
            chunk = _parse(values, count, len(asked))
            if chunk is None and not state.on:  # a NULL, text or real value: now with the guards
                state.on = True
                count, values = self.db.execute(sqls[1], (lo, hi)).fetchone()
                chunk = _parse(values, count, len(asked))
            if chunk is None:  # not plain integers: re-read row by row, which says what it found
                chunk = self._rows(guarded, source, alias, lo, hi, what)
            out.add(chunk)
            if self.progress is not None:
                self.progress(out.done, max(total, out.done))
        return _with_literals(exprs, asked, out.columns())

    def _rows(
        self, exprs: Sequence[str], source: str, alias: str, lo: int, hi: int, what: str
    ) -> Any:
        sql = f"SELECT {', '.join(exprs)} FROM {source} WHERE {alias}.rowid >= {lo} AND {alias}.rowid <= {hi}"  # noqa: E501
        columns = _sql.int_columns(self.db, sql, len(exprs), what)
        return np.stack(columns, axis=1) if columns else np.zeros((0, len(exprs)), np.int64)

    def _map(
        self, sqls: list[str], state: _Guards, ranges: list[tuple[int, int]]
    ) -> Iterator[tuple[int, str | None]]:
        """Each range's (count, text), in order; at most WORKERS + 2 texts in flight. A range is
        asked with the guarded SQL (`sqls[1]`) once `state.on`, else with the bare one."""
        if WORKERS == 1 or len(ranges) < 2:
            yield from (self.db.execute(sqls[state.on], r).fetchone() for r in ranges)
            return
        try:
            with ThreadPoolExecutor(WORKERS, thread_name_prefix="gpuscope-sql") as pool:
                pending: deque[Future[Any]] = deque()
                for r in ranges:
                    pending.append(pool.submit(self._query, sqls[state.on], r))
                    if len(pending) >= WORKERS + 2:
                        yield pending.popleft().result()
                while pending:
                    yield pending.popleft().result()
        finally:
            self.close_workers()

    def _query(self, sql: str, params: tuple[int, int]) -> Any:
        return self._connection().execute(sql, params).fetchone()

    def _connection(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = _sniff.connect(self.path)
            with self._lock:
                self._opened.append(db)
        return db

    def close_workers(self) -> None:
        with self._lock:
            for db in self._opened:
                db.close()
            self._opened.clear()
        self._local = threading.local()


@dataclass
class _Guards:
    """Whether a table's ranges are read with their guards (after a bare range failed)."""

    on: bool


def _bare(expr: str) -> str:
    """The column inside an `ifnull(X, n)` / `_sql.integer(X)` guard, else the expression."""
    for guard in _GUARDS:
        match = guard.fullmatch(expr)
        if match:
            return match.group("x")
    return expr


def _range_sql(source: str, alias: str, exprs: Sequence[str]) -> str:
    text = ",".join(["%s"] * len(exprs))  # NULL, text or real break the parse: row by row
    return (
        f"SELECT count(*), group_concat(printf('{text}', {', '.join(exprs)})) FROM {source} "
        f"WHERE {alias}.rowid >= ? AND {alias}.rowid <= ?"
    )


def _with_literals(exprs: Sequence[str], asked: list[int], columns: list[I64]) -> list[I64]:
    """The columns of every expression: those read, and the literals as constant columns."""
    size = len(columns[0]) if columns else 0
    found = dict(zip(asked, columns, strict=True))
    return [
        found[i] if i in found else np.full(size, int(expr), np.int64)
        for i, expr in enumerate(exprs)
    ]


def _ranges(db: sqlite3.Connection, table: str) -> tuple[list[tuple[int, int]], int]:
    """[lo, hi] rowid ranges covering the table, and its row count (inclusive: a rowid may be
    2^63 - 1, past which SQLite takes no parameter)."""
    name = _sql.quote(table)
    lo, hi, total = db.execute(f"SELECT min(rowid), max(rowid), count(*) FROM {name}").fetchone()
    if not total:
        return [], 0
    blocks = [(lo, hi)]
    if hi - lo + 1 > 4 * total:  # sparse ids (rpd sessions and annotation ids are 2**31 apart)
        sql = f"SELECT min(rowid), max(rowid) FROM {name} GROUP BY rowid >> {_BLOCK_BITS}"
        blocks = [(int(a), int(b)) for a, b in db.execute(sql)]
    ranges = [(a, min(a + CHUNK - 1, b)) for lo, b in blocks for a in range(lo, b + 1, CHUNK)]
    return ranges, int(total)


def _parse(text: str | None, count: int, width: int) -> Any:
    """count × width int64 matrix from SQLite's text, or None when it is not exactly that."""
    if not count:
        return np.zeros((0, width), np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            flat = np.fromstring(text or "", dtype=np.int64, sep=",")
        except (ValueError, DeprecationWarning):
            return None
    return flat.reshape(count, width) if flat.size == count * width else None
