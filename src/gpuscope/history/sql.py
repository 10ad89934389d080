"""The one module that speaks SQL to a database: SQLite (the standard library) or PostgreSQL
(psycopg 3, the `postgres` extra), chosen by URL.

    >>> db = connect("sqlite:////tmp/history.db")      # or "postgresql://user@host/db"
    >>> with db.transaction():
    ...     db.execute("INSERT INTO workloads (name) VALUES (?)", ("resnet",))
    >>> db.query("SELECT id, name FROM workloads")
    [(1, 'resnet')]

Queries are written once, with `?` placeholders and the SQL both dialects share; `{id}` in DDL is
each dialect's auto-incremented primary key, `{float}` its double-precision type. The few things
that differ live here and nowhere else:

- concurrent writers: SQLite in WAL mode with a busy timeout, every write in `BEGIN IMMEDIATE`
  (one writer at a time, the others wait instead of failing); PostgreSQL in transactions, and
  the schema migrations under an advisory lock;
- placeholders (`?` → `%s`) and the DDL types above;
- looking at what a database holds before anything is written (`Found`): a SQLite file is
  looked at read-only, through a connection that creates nothing beside it (`peek`), before
  `connect` switches it to WAL mode; a PostgreSQL database through its catalog.

URLs: `sqlite:///relative/file.db`, `sqlite:////absolute/file.db` (SQLAlchemy's spelling), or a
plain path; `postgresql://…` / `postgres://…` as libpq takes them. psycopg is imported only
when a PostgreSQL URL is opened.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from gpuscope.errors import InputError

BUSY_TIMEOUT_MS = 60_000  # a SQLite writer waits this long for another one to finish
_DDL = {
    "sqlite": {"id": "INTEGER PRIMARY KEY", "float": "DOUBLE PRECISION"},
    "postgresql": {"id": "BIGSERIAL PRIMARY KEY", "float": "DOUBLE PRECISION"},
}
_MIGRATION_LOCK = 0x67707573  # "gpus": PostgreSQL advisory lock key held while migrating

Row = tuple[Any, ...]


class DatabaseError(InputError):
    """The history database cannot be opened or used (exit 2, one line naming it)."""


@dataclass(frozen=True)
class Found:
    """What an existing database holds, seen without changing it: its tables and views (SQLite's
    own `sqlite_*` left out), SQLite's `application_id` and `user_version` header fields (0 for
    PostgreSQL), and the value under `mark_key` in the table `mark_table` when there is one."""

    tables: frozenset[str]
    application_id: int = 0
    user_version: int = 0
    mark: str | None = None


class Database:
    """A connection and its dialect; `execute`/`query` take `?` placeholders."""

    def __init__(self, connection: Any, dialect: str, url: str) -> None:
        self.connection = connection
        self.dialect = dialect
        self.url = url
        self._depth = 0

    # -- statements -------------------------------------------------------------------------

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        cursor = self.connection.cursor()
        cursor.execute(self._sql(sql), tuple(params))
        return cursor

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.connection.cursor().executemany(self._sql(sql), [tuple(r) for r in rows])

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return [tuple(row) for row in self.execute(sql, params).fetchall()]

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        """An INSERT of one row; its new `id`."""
        row = self.execute(f"{sql} RETURNING id", params).fetchone()
        return int(row[0])

    def ddl(self, sql: str) -> str:
        """DDL with `{id}` and `{float}` spelled for this dialect."""
        return sql.format(**_DDL[self.dialect])

    def _sql(self, sql: str) -> str:
        if self.dialect == "sqlite":
            return sql
        return sql.replace("%", "%%").replace("?", "%s")

    # -- transactions ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Database]:
        """One atomic unit of writes; nested blocks join the outer one. SQLite takes the write
        lock at the start (BEGIN IMMEDIATE), so two writers never deadlock on an upgrade."""
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        with self._begin():
            self._depth = 1
            try:
                yield self
            finally:
                self._depth = 0

    @contextlib.contextmanager
    def _begin(self) -> Iterator[None]:
        if self.dialect == "postgresql":
            with self.connection.transaction():
                yield
            return
        self.execute("BEGIN IMMEDIATE")  # autocommit connection: the transaction is ours
        try:
            yield
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def lock_for_migration(self) -> None:
        """Inside a transaction: make other processes migrating the same database wait."""
        if self.dialect == "postgresql":
            self.execute(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
        # SQLite: BEGIN IMMEDIATE already holds the one write lock

    def table_exists(self, name: str) -> bool:
        if self.dialect == "sqlite":
            sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        else:
            sql = "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"  # noqa: E501
        return bool(self.query(sql, (name,)))

    def tables(self) -> frozenset[str]:
        """The tables and views of the database (of the current schema in PostgreSQL)."""
        if self.dialect == "sqlite":
            sql = "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
        else:
            sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"  # noqa: E501
        names = (str(row[0]) for row in self.query(sql))
        return frozenset(n for n in names if not n.startswith("sqlite_"))

    def found(self, mark_table: str, mark_key: str) -> Found:
        """What the database holds (`Found`); reads only."""
        tables = self.tables()
        mark = None
        if mark_table in tables:
            rows = self.query(f"SELECT value FROM {mark_table} WHERE key = ?", (mark_key,))
            mark = str(rows[0][0]) if rows else ""
        if self.dialect != "sqlite":
            return Found(tables, mark=mark)
        application_id = int(self.query("PRAGMA application_id")[0][0])
        user_version = int(self.query("PRAGMA user_version")[0][0])
        return Found(tables, application_id, user_version, mark)

    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """A failure of the database itself (locked past the timeout, connection lost, disk
        full) as one DatabaseError naming it."""
        try:
            yield
        except DatabaseError:
            raise
        except Exception as error:
            if not _is_db_error(error):
                raise
            detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise DatabaseError(
                f"--db {redacted(self.url)}: {type(error).__name__}: {detail}"
            ) from error

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.connection.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(url: str) -> Database:
    """Open the database `url` names (a SQLite file is created, with its folder)."""
    if re.match(r"postgres(ql)?(\+\w+)?://", url):
        return _postgresql(url)
    if url.startswith("sqlite:"):
        return _sqlite(url, _sqlite_path(url))
    if "://" in url:
        scheme = url.split("://", 1)[0]
        raise DatabaseError(
            f"--db {url}: unknown database kind {scheme!r} (expected sqlite:///FILE, "
            "postgresql://… or a file path)"
        )
    return _sqlite(url, Path(url))


def sqlite_path(url: str) -> Path | None:
    """The file a SQLite URL names (None for another database)."""
    if url.startswith("sqlite:"):
        return _sqlite_path(url)
    return None if "://" in url else Path(url)


def _sqlite_path(url: str) -> Path:
    rest = url[len("sqlite:") :]
    if not rest.startswith("///") or len(rest) == 3:
        raise DatabaseError(
            f"--db {url}: expected sqlite:///relative/file.db or sqlite:////absolute/file.db"
        )
    return Path(rest[3:])


SQLITE_MAGIC = b"SQLite format 3\0"


def peek(url: str, path: Path, mark_table: str, mark_key: str) -> Found | None:
    """What the SQLite file `path` holds, looked at read-only (None: no file, or an empty one:
    a new database). Nothing is created beside it: a database in WAL mode whose WAL is empty
    (no NAME-wal file) is opened immutable, as mode=ro would make NAME-shm and NAME-wal.
    DatabaseError for a file that is not a SQLite database."""
    import sqlite3

    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise DatabaseError(
            f"--db {url}: {path} is a directory (expected a database file)"
        ) from None
    except OSError as error:
        raise DatabaseError(f"--db {url}: cannot read ({error.strerror or error})") from None
    if not header:
        return None
    if not header.startswith(SQLITE_MAGIC):
        raise DatabaseError(
            f"--db {url}: not a SQLite database (expected a gpuscope history database or a new "
            "file): left untouched"
        )
    wal = header[18:20] == b"\x02\x02" and not Path(f"{path}-wal").exists()
    uri = f"file:{quote(os.fsencode(path.resolve()))}?{'immutable=1' if wal else 'mode=ro'}"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        with contextlib.closing(connection):
            return Database(connection, "sqlite", url).found(mark_table, mark_key)
    except sqlite3.Error as error:
        raise DatabaseError(f"--db {url}: cannot read the SQLite database ({error})") from None


def _sqlite(url: str, path: Path) -> Database:
    import sqlite3

    if path.is_dir():
        raise DatabaseError(f"--db {url}: {path} is a directory (expected a database file)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA synchronous = NORMAL")  # durable in WAL at each checkpoint
    except (sqlite3.Error, OSError) as error:
        raise DatabaseError(f"--db {url}: cannot open the SQLite database ({error})") from None
    return Database(connection, "sqlite", url)


def _postgresql(url: str) -> Database:
    try:
        import psycopg
    except ImportError:
        raise DatabaseError(
            f"--db {redacted(url)}: PostgreSQL needs psycopg 3: pip install 'gpuscope[postgres]'"
        ) from None
    try:
        connection = psycopg.connect(_libpq_url(url), autocommit=True)
    except psycopg.Error as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DatabaseError(f"--db {redacted(url)}: cannot connect ({message})") from None
    return Database(connection, "postgresql", url)


def _libpq_url(url: str) -> str:
    """`postgres+psycopg://` (SQLAlchemy's spelling) → `postgresql://` for libpq."""
    return re.sub(r"^postgres(ql)?(\+\w+)?://", "postgresql://", url)


def redacted(url: str) -> str:
    """The URL with its password hidden, for messages."""
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", url)


def default_url(env: Mapping[str, str] | None = None) -> str:
    """$GPUSCOPE_DB, else one SQLite file under the user's data directory
    ($XDG_DATA_HOME/gpuscope/history.db, ~/.local/share/gpuscope/history.db)."""
    env = os.environ if env is None else env
    if env.get("GPUSCOPE_DB"):
        return env["GPUSCOPE_DB"]
    base = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return "sqlite:///" + os.path.join(os.path.abspath(base), "gpuscope", "history.db")


def _is_db_error(error: Exception) -> bool:
    module = type(error).__module__
    return module.startswith(("sqlite3", "psycopg"))
