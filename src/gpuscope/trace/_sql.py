"""SQLite helpers shared by the rocpd and RPD readers: a read-only connection whose every failure
is a one-line `ReaderError`, integer columns fetched in batches straight into numpy, string
tables looked up only for the ids a trace uses, and names interned through `TraceParts`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import chain
from typing import Any

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace import _sniff
from gpuscope.trace._builder import TraceParts
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace.model import F64, I32, I64

BATCH = 1 << 16  # rows per fetchmany: bounds the Python tuples alive at once
_IN_CHUNK = 500  # ids per `IN (...)` look-up (below every SQLite's variable limit)


@contextmanager
def database(path: str, expected: str) -> Iterator[sqlite3.Connection]:
    """A read-only connection; any SQLite failure inside the block becomes a ReaderError."""
    if not _sniff.is_sqlite(path):
        raise ReaderError(f"not a SQLite database; expected {expected}")
    db = _sniff.connect(path)
    try:
        yield db
    except (sqlite3.Error, UnicodeDecodeError) as error:
        raise _sniff.sqlite_error(error, expected) from None
    finally:
        db.close()


def head_mentions(path: str, *tables: str) -> bool:
    """For a SQLite file whose schema could not be read (locked, truncated, corrupt): do its
    first bytes name every one of `tables` (in the schema text or in sqlite_sequence)? Such a
    file is claimed, so that reading it says what is wrong with it."""
    head = _sniff.head(path)
    return _sniff.is_sqlite(path) and all(table.encode() in head for table in tables)


def objects(db: sqlite3.Connection) -> dict[str, str]:
    """name -> type ('table' / 'view') of everything in the schema; reading it also proves the
    file is a readable, unlocked database."""
    rows = db.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')")
    return {str(name): str(kind) for name, kind in rows}


def columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in db.execute(f"PRAGMA table_info({quote(table)})")]


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def integer(expression: str) -> str:
    """SQL for a column that should hold an integer but may hold '' or NULL (then -1)."""
    return f"(CASE WHEN typeof({expression}) = 'integer' THEN {expression} ELSE -1 END)"


def count(db: sqlite3.Connection, table: str) -> int:
    return int(db.execute(f"SELECT count(*) FROM {quote(table)}").fetchone()[0])


def int_columns(
    db: sqlite3.Connection,
    sql: str,
    width: int,
    what: str,
    total: int = 0,
    progress: Progress | None = None,
) -> list[I64]:
    """The `width` integer columns of a query as int64 arrays, fetched BATCH rows at a time
    (small tables and views; big tables go through `_sql_scan`). Every value must be an integer:
    wrap nullable columns in `ifnull` / `integer`."""
    cursor = db.execute(sql)
    out = Columns(width, total)
    while rows := cursor.fetchmany(BATCH):
        out.add(_matrix(rows, width, what))
        if progress is not None:
            progress(out.done, max(total, out.done))
    return out.columns()


class Columns:
    """int64 columns filled chunk by chunk (rows × width matrices), allocated once from the
    expected row count so that the peak memory is the columns plus one chunk."""

    def __init__(self, width: int, total: int = 0) -> None:
        self.data = [np.empty(max(total, 0), np.int64) for _ in range(width)]
        self.done = 0

    def add(self, chunk: Any) -> None:
        size = len(chunk)
        if self.done + size > len(self.data[0]):
            self.data = [_grown(column, self.done, size) for column in self.data]
        for i, column in enumerate(self.data):
            column[self.done : self.done + size] = chunk[:, i]
        self.done += size

    def columns(self) -> list[I64]:
        return [column[: self.done] for column in self.data]


def _grown(column: I64, used: int, more: int) -> I64:
    grown = np.empty(max(2 * used, used + more), np.int64)
    grown[:used] = column[:used]
    return grown


def _matrix(rows: list[Any], width: int, what: str) -> Any:
    """rows × width int64; a NULL, text or real value is an error (never truncated to 0)."""
    bad = next((v for row in rows for v in row if type(v) is not int), _NONE)
    if bad is not _NONE:
        raise ReaderError(f"unexpected value {bad!r} in {what}; expected integers")
    flat = np.fromiter(chain.from_iterable(rows), np.int64, count=len(rows) * width)
    return flat.reshape(len(rows), width)


_NONE = object()


def float_columns(db: sqlite3.Connection, sql: str, width: int) -> list[F64]:
    """The columns of a query as float64 (ids stay exact below 2**53; NULL or text -> nan)."""
    chunks: list[Any] = []
    cursor = db.execute(sql)
    while rows := cursor.fetchmany(BATCH):
        flat = chain.from_iterable(rows)
        try:
            chunk = np.fromiter(flat, np.float64, count=len(rows) * width)
        except (TypeError, ValueError):
            chunk = np.array([_as_float(v) for row in rows for v in row], np.float64)
        chunks.append(chunk.reshape(len(rows), width))
    matrix = np.concatenate(chunks) if chunks else np.zeros((0, width), np.float64)
    return [np.ascontiguousarray(matrix[:, i]) for i in range(width)]


def _as_float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def strings(db: sqlite3.Connection, table: str, ids: Iterable[int]) -> dict[int, str]:
    """id -> string of a string table, for the wanted ids only (the table may be huge)."""
    wanted = sorted({int(i) for i in ids})
    found: dict[int, str] = {}
    name = quote(table)
    for lo in range(0, len(wanted), _IN_CHUNK):
        chunk = wanted[lo : lo + _IN_CHUNK]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(f"SELECT id, string FROM {name} WHERE id IN ({marks})", chunk)
        found.update((int(i), "" if s is None else str(s)) for i, s in rows)
    return found


def factorize(ids: I64) -> tuple[I64, I64]:
    """(distinct values, index of each row's value among them), like np.unique with
    return_inverse, but by counting instead of sorting when the ids are small non-negative
    integers (string and symbol ids nearly always are)."""
    if len(ids) and ids.min() >= 0 and int(ids.max()) < 4 * len(ids) + (1 << 20):
        present = np.bincount(ids) > 0
        unique = np.flatnonzero(present)
        position = np.cumsum(present) - 1
        return unique.astype(np.int64), position[ids].astype(np.int64)
    unique, inverse = np.unique(ids, return_inverse=True)
    return unique, inverse.reshape(-1).astype(np.int64)


def per_id(ids: I64, decide: Callable[[int], int | None], missing: int = -1) -> I64:
    """decide(id) once per distinct id, spread back to every row (None -> missing)."""
    unique, inverse = factorize(ids)
    values = [decide(int(i)) for i in unique]
    table = np.array([missing if v is None else v for v in values], np.int64)
    result: I64 = table[inverse] if len(unique) else np.zeros(0, np.int64)
    return result


def intern_ids(parts: TraceParts, ids: I64, text: dict[int, str], default: str = "") -> I32:
    """Name index of each id: each distinct id is looked up and interned once."""
    if len(ids) == 0:
        return np.zeros(0, np.int32)
    unique, inverse = factorize(ids)
    names = parts.intern(text.get(int(i), default) for i in unique)
    result: I32 = names[inverse]
    return result


def lookup(keys: I64, wanted: I64) -> I64:
    """Position in `keys` of each wanted value (-1 where absent); keys need not be sorted."""
    result = np.full(len(wanted), -1, np.int64)
    if len(keys) == 0 or len(wanted) == 0:
        return result
    if bool(np.all(keys[1:] > keys[:-1])):  # ids read in rowid order: nearly always sorted
        pos = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        hit = keys[pos] == wanted
        result[hit] = pos[hit]
        return result
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    pos = np.clip(np.searchsorted(ordered, wanted), 0, len(keys) - 1)
    hit = ordered[pos] == wanted
    result[hit] = order[pos[hit]]
    return result


def ceil_div(items: I64, group: I64) -> I64:
    """Work-groups from work-items per dimension (ceil); -1 where either side is unknown."""
    ok = (items >= 0) & (group > 0)
    safe = np.where(ok, group, 1)
    result: I64 = np.where(ok, -(-items // safe), -1)
    return result
