"""Reading an Nsight Systems SQLite export column by column into numpy.

nsys exports lazily (only non-empty tables exist) and its schema grows columns between versions,
so every query names only the columns that exist and fills the others with -1. Rows arrive in
batches (`fetchmany`) straight into int64 arrays: a report with millions of kernels never becomes
a list of Python tuples. `StringIds` is read only for the ids the activity tables use: the same
table holds the profiled process's whole environment (secrets included).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from itertools import chain

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace.model import I64

BATCH = 1 << 16
_IN_CHUNK = 500  # ids per `IN (...)`: below SQLite's default variable limit


class Database:
    """A read-only export with its table names and (cached) column names."""

    def __init__(self, db: sqlite3.Connection, tables: Iterable[str]) -> None:
        self.db = db
        self.tables = frozenset(tables)
        self._columns: dict[str, frozenset[str]] = {}

    def has(self, table: str) -> bool:
        return table in self.tables

    def columns(self, table: str) -> frozenset[str]:
        if table not in self._columns:
            rows = self.db.execute(f'PRAGMA table_info("{table}")').fetchall()
            self._columns[table] = frozenset(str(row[1]) for row in rows)
        return self._columns[table]

    def ints(self, table: str, wanted: Sequence[str], where: str = "") -> I64:
        """Columns `wanted` of every row as an int64 array (rows × len(wanted)); a column the
        table lacks, and NULL cells, read as -1."""
        present = self.columns(table)
        select = ", ".join(f'COALESCE("{c}", -1)' if c in present else "-1" for c in wanted)
        cursor = self.db.execute(f'SELECT {select} FROM "{table}" {where}')
        chunks = []
        while rows := cursor.fetchmany(BATCH):
            chunks.append(_int_block(rows, table))
        if not chunks:
            return np.zeros((0, len(wanted)), np.int64)
        return np.concatenate(chunks) if len(chunks) > 1 else chunks[0]

    def texts(self, table: str, column: str, where: str = "") -> list[str | None]:
        if column not in self.columns(table):
            return []
        rows = self.db.execute(f'SELECT "{column}" FROM "{table}" {where}').fetchall()
        return [None if row[0] is None else str(row[0]) for row in rows]

    def strings(self, ids: Iterable[int]) -> dict[int, str]:
        """The `StringIds` values of `ids` (only those: the table also holds environments)."""
        wanted = sorted({int(i) for i in ids if i >= 0})
        if not wanted or not self.has("StringIds"):
            return {}
        found: dict[int, str] = {}
        for lo in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[lo : lo + _IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT id, value FROM StringIds WHERE id IN ({marks})"
            found.update((int(i), str(v)) for i, v in self.db.execute(query, chunk))
        return found

    def pairs(self, table: str, key: str, value: str, where: str = "") -> list[tuple[str, str]]:
        """(key, value) text pairs of a name/value table such as `META_DATA_EXPORT`."""
        if not self.has(table) or not {key, value} <= self.columns(table):
            return []
        rows = self.db.execute(f'SELECT "{key}", "{value}" FROM "{table}" {where}')
        return [(str(k), "" if v is None else str(v)) for k, v in rows]

    def records(self, table: str, wanted: Sequence[str]) -> list[dict[str, object]]:
        """Rows of a small table as dicts of the `wanted` columns that exist."""
        present = [c for c in wanted if c in self.columns(table)]
        if not self.has(table) or not present:
            return []
        select = ", ".join(f'"{c}"' for c in present)
        return [
            dict(zip(present, row, strict=True))
            for row in self.db.execute(f'SELECT {select} FROM "{table}"')
        ]


def _int_block(rows: list[tuple[object, ...]], table: str) -> I64:
    width = len(rows[0])
    try:  # one flat pass: faster than np.array over a list of tuples
        flat = np.fromiter(chain.from_iterable(rows), np.int64, count=len(rows) * width)
        return flat.reshape(len(rows), width)
    except (TypeError, ValueError, OverflowError):
        raise ReaderError(
            f"{table} holds a non-integer value where the nsys export schema has "
            "integers; the export is damaged — export it again"
        ) from None
