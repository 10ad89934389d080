"""SQLite damage: the schema of another version (tables, views or columns dropped or renamed, a
column retyped), values no writer should leave (NULL, text in an integer column, huge or negative
numbers, blobs), corrupt or swapped pages, a cut file, WAL mode, and a locked database."""

from __future__ import annotations

import contextlib
import random
import sqlite3
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.fuzz.mutate import Mutation, visible_cut

LOCKED_SHARE = 0.005  # a locked database costs the readers' busy timeouts: seconds per case
VALUES: tuple[Any, ...] = (
    None,
    "",
    "abc",
    "12",
    "NaN",
    -1,
    0,
    2**63 - 1,
    -(2**63),
    1.5,
    1e308,
    -1e308,
    float("inf"),
    b"\x00\xff",
)


def mutate(path: Path, rng: random.Random, locks: bool) -> Mutation:
    locked = rng.random() < LOCKED_SHARE  # drawn either way: a case is the same with locks off
    op = rng.choice(_OPS)
    if locked and locks:
        return Mutation("sqlite.locked", locked=True)
    if op in _FILE_FUNCS:
        data = path.read_bytes()
        out, must_warn = _FILE_FUNCS[op](data, rng)
        path.write_bytes(out)
        return Mutation(f"sqlite.{op}", must_warn)
    with _open(path) as db:
        done = _SCHEMA_FUNCS[op](db, rng)
    return Mutation(f"sqlite.{op}" if done else "sqlite.none")


@contextlib.contextmanager
def _open(path: Path) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA legacy_alter_table = ON")  # a rename must not fail on views
        db.execute("PRAGMA foreign_keys = OFF")
        yield db
    finally:
        db.close()


def _tables(db: sqlite3.Connection, kinds: tuple[str, ...] = ("table",)) -> list[str]:
    marks = ",".join("?" * len(kinds))
    rows = db.execute(
        f"SELECT name FROM sqlite_master WHERE type IN ({marks}) AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name",
        kinds,
    )
    return [str(r[0]) for r in rows]


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [str(r[1]) for r in db.execute(f'PRAGMA table_info("{table}")')]


def _pick(db: sqlite3.Connection, rng: random.Random) -> tuple[str, str] | None:
    """A random table with at least one column, and one of its columns."""
    tables = _tables(db)
    if not tables:
        return None
    table = rng.choice(tables)
    columns = _columns(db, table)
    return (table, rng.choice(columns)) if columns else None


def _try(db: sqlite3.Connection, *statements: str, args: tuple[Any, ...] = ()) -> bool:
    try:
        db.execute("BEGIN")
        for statement in statements:
            db.execute(statement, args if "?" in statement else ())
        db.execute("COMMIT")
        return True
    except sqlite3.Error:
        db.execute("ROLLBACK")
        return False


def _drop(db: sqlite3.Connection, rng: random.Random) -> bool:
    names = _tables(db, ("table", "view"))
    if not names:
        return False
    name = rng.choice(names)
    kind = db.execute("SELECT type FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
    return _try(db, f'DROP {kind.upper()} "{name}"')


def _empty(db: sqlite3.Connection, rng: random.Random) -> bool:
    tables = _tables(db)
    return bool(tables) and _try(db, f'DELETE FROM "{rng.choice(tables)}"')


def _rebuild(db: sqlite3.Connection, table: str, select: list[str]) -> bool:
    """`table` replaced by a plain table of the `select` expressions (keeps the name)."""
    return _try(
        db,
        f'CREATE TABLE "fuzz_new" AS SELECT {", ".join(select)} FROM "{table}"',
        f'DROP TABLE "{table}"',
        f'ALTER TABLE "fuzz_new" RENAME TO "{table}"',
    )


def _drop_column(db: sqlite3.Connection, rng: random.Random) -> bool:
    picked = _pick(db, rng)
    if picked is None:
        return False
    table, column = picked
    keep = [f'"{c}"' for c in _columns(db, table) if c != column]
    return bool(keep) and _rebuild(db, table, keep)


def _retype(db: sqlite3.Connection, rng: random.Random) -> bool:
    picked = _pick(db, rng)
    if picked is None:
        return False
    table, column = picked
    kind = rng.choice(("TEXT", "REAL", "BLOB"))
    select = [
        f'CAST("{c}" AS {kind}) AS "{c}"' if c == column else f'"{c}"' for c in _columns(db, table)
    ]
    return _rebuild(db, table, select)


def _rename(db: sqlite3.Connection, rng: random.Random) -> bool:
    picked = _pick(db, rng)
    if picked is None:
        return False
    table, column = picked
    if rng.random() < 0.5:
        return _try(db, f'ALTER TABLE "{table}" RENAME TO "{table}_old"')
    return _try(db, f'ALTER TABLE "{table}" RENAME COLUMN "{column}" TO "{column}_x"')


def _values(db: sqlite3.Connection, rng: random.Random) -> bool:
    """Some cells (or a whole column) of one table set to a value of the wrong kind."""
    picked = _pick(db, rng)
    if picked is None:
        return False
    table, column = picked
    value = rng.choice(VALUES)
    set_ = f'UPDATE "{table}" SET "{column}" = ?'
    if rng.random() < 0.3:
        return _try(db, set_, args=(value,))
    try:
        ids = [r[0] for r in db.execute(f'SELECT rowid FROM "{table}"')]
    except sqlite3.Error:  # WITHOUT ROWID
        return _try(db, set_, args=(value,))
    chosen = rng.sample(ids, min(len(ids), rng.choice((1, 1, 3, 20))))
    return bool(chosen) and _try(
        db, set_ + f" WHERE rowid IN ({','.join(map(str, chosen))})", args=(value,)
    )


def _duplicate_rows(db: sqlite3.Connection, rng: random.Random) -> bool:
    tables = _tables(db)
    if not tables:
        return False
    table = rng.choice(tables)
    columns = ", ".join(f'"{c}"' for c in _columns(db, table))
    return _try(db, f'INSERT INTO "{table}" ({columns}) SELECT {columns} FROM "{table}"')


def _wal(db: sqlite3.Connection, rng: random.Random) -> bool:
    db.execute("PRAGMA journal_mode = WAL")
    return True


def _page_size(data: bytes) -> int:
    size = struct.unpack(">H", data[16:18])[0] if len(data) >= 18 else 4096
    return 65536 if size == 1 else max(size, 512)


def _page(data: bytes, rng: random.Random) -> tuple[bytes, bool]:
    """One page zeroed, filled with junk, flipped here and there, or its b-tree header hit."""
    size = _page_size(data)
    pages = max(1, len(data) // size)
    start = rng.randrange(pages) * size
    out = bytearray(data)
    choice = rng.randrange(4)
    if choice == 0:
        out[start : start + size] = bytes(size)
    elif choice == 1:
        out[start : start + size] = rng.randbytes(size)
    else:
        head = 100 if start == 0 else 0  # page 1 starts with the file header
        span = 12 if choice == 2 else size - head
        for _ in range(rng.choice((1, 2, 8))):
            out[start + head + rng.randrange(span)] ^= rng.randrange(1, 256)
    return bytes(out[: len(data)]), False


def _swap_pages(data: bytes, rng: random.Random) -> tuple[bytes, bool]:
    size = _page_size(data)
    pages = len(data) // size
    if pages < 3:
        return _page(data, rng)
    a, b = rng.sample(range(1, pages), 2)
    out = bytearray(data)
    out[a * size : (a + 1) * size], out[b * size : (b + 1) * size] = (
        data[b * size : (b + 1) * size],
        data[a * size : (a + 1) * size],
    )
    return bytes(out), False


def _file_header(data: bytes, rng: random.Random) -> tuple[bytes, bool]:
    """A field of the 100-byte file header: page size, page count, schema, encoding, versions."""
    out = bytearray(data)
    offset = rng.choice((16, 18, 19, 20, 28, 32, 40, 44, 48, 56, 60, 92, 96))
    out[offset : offset + 4] = rng.randbytes(4)
    return bytes(out[: len(data)]), False


def _truncate(data: bytes, rng: random.Random) -> tuple[bytes, bool]:
    size = _page_size(data)
    if rng.random() < 0.5:
        cut = rng.randrange(len(data))
    else:
        cut = rng.randrange(max(1, len(data) // size)) * size
    return data[:cut], visible_cut(data, cut, "sqlite")


_SCHEMA_FUNCS = {
    "drop": _drop,
    "empty": _empty,
    "drop-column": _drop_column,
    "retype": _retype,
    "rename": _rename,
    "values": _values,
    "duplicate-rows": _duplicate_rows,
    "wal": _wal,
}
_FILE_FUNCS = {
    "page": _page,
    "swap-pages": _swap_pages,
    "file-header": _file_header,
    "truncate": _truncate,
}
_OPS = (
    ("drop",) * 4
    + ("drop-column",) * 4
    + ("values",) * 8
    + ("retype", "retype", "rename", "rename", "empty", "duplicate-rows", "wal")
    + ("page",) * 4
    + ("truncate",) * 4
    + ("swap-pages", "file-header")
)
