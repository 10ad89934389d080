"""The history database's tables, built and upgraded by numbered migrations.

Each migration runs once, in a transaction, and is recorded in `schema_migrations` (version,
description, applied_at). Opening a database applies the ones it lacks — under the write lock
(SQLite) or an advisory lock (PostgreSQL), so that processes opening a new database at once
migrate it once. A database written by a newer gpuscope (a version above `LATEST`) is refused
rather than guessed at. Never edit a released migration: add the next one (tests load a
version-1 file, tests/data/history/history_v1.sqlite, and migrate it).

**The mark.** A history database says it is one (v3): the table `gpuscope_meta` holds
`schema = gpuscope.history`, and a SQLite file's header `application_id` is `APPLICATION_ID`.
Before anything is written, `refuse_foreign` looks at what a database holds and refuses one that
is not gpuscope's — another application id or mark, or any table that is not one of ours (an
nsys `.sqlite` export, an rpd or rocpd file, a database another program shares) — so that no
table is added to it and no SQLite file is switched to WAL. An empty database is new; one with
our tables and no mark was written by a gpuscope before v3, and is marked when it migrates.

    workloads  id, name (unique), created_at
    results    id, workload_id, kind, recorded_at (UTC ISO 8601), commit_sha, dirty, branch,
               host, gpu_model, gpu_count, driver, rocm, cuda, torch, gpuscope_version,
               tags (JSON list), artefacts (a path), source (what was recorded),
               extra (v2: JSON object of further context)
    metrics    id, result_id, name, value, unit, direction ('lower' | 'higher'),
               samples (JSON list or NULL)
    result_tags (v2) result_id, tag — one row per tag, for filtering
    gpuscope_meta (v3) key, value — `schema` = `gpuscope.history` (the mark)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

from gpuscope.history.sql import Database, DatabaseError, Found, redacted

APPLICATION_ID = 0x67707368  # "gpsh": SQLite's header field for the application that owns a file
MARK_TABLE, MARK_KEY, MARK = "gpuscope_meta", "schema", "gpuscope.history"
OWN_TABLES = frozenset(
    {"schema_migrations", "workloads", "results", "metrics", "result_tags", MARK_TABLE}
)


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    apply: Callable[[Database], None]


def _v1(db: Database) -> None:
    for sql in (
        """CREATE TABLE workloads (
            id {id}, name TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL)""",
        """CREATE TABLE results (
            id {id},
            workload_id BIGINT NOT NULL REFERENCES workloads (id),
            kind TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            commit_sha TEXT, dirty INTEGER, branch TEXT,
            host TEXT, gpu_model TEXT, gpu_count INTEGER, driver TEXT,
            rocm TEXT, cuda TEXT, torch TEXT, gpuscope_version TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            artefacts TEXT, source TEXT)""",
        """CREATE TABLE metrics (
            id {id},
            result_id BIGINT NOT NULL REFERENCES results (id) ON DELETE CASCADE,
            name TEXT NOT NULL, value {float} NOT NULL, unit TEXT NOT NULL DEFAULT '',
            direction TEXT NOT NULL, samples TEXT)""",
        "CREATE INDEX results_by_workload ON results (workload_id, recorded_at, id)",
        "CREATE INDEX metrics_by_result ON metrics (result_id)",
    ):
        db.execute(db.ddl(sql))


def _v2(db: Database) -> None:
    """Tags as rows (filtering by tag without scanning every result), and `extra`: context that
    has no column of its own (a madengine perf.csv row's docker image, a run's exit code)."""
    db.execute("ALTER TABLE results ADD COLUMN extra TEXT NOT NULL DEFAULT '{}'")
    db.execute(
        """CREATE TABLE result_tags (
            result_id BIGINT NOT NULL REFERENCES results (id) ON DELETE CASCADE,
            tag TEXT NOT NULL, PRIMARY KEY (result_id, tag))"""
    )
    db.execute("CREATE INDEX result_tags_by_tag ON result_tags (tag, result_id)")
    rows = db.query("SELECT id, tags FROM results WHERE tags <> '[]'")
    pairs = [(rid, tag) for rid, text in rows for tag in dict.fromkeys(_tags(text))]
    db.executemany("INSERT INTO result_tags (result_id, tag) VALUES (?, ?)", pairs)


def _tags(text: str) -> list[str]:
    try:
        found = json.loads(text)
    except ValueError:
        return []
    return [str(t) for t in found] if isinstance(found, list) else []


def _v3(db: Database) -> None:
    """The mark: what tells a gpuscope history database from any other (`refuse_foreign`)."""
    db.execute(f"CREATE TABLE {MARK_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute(f"INSERT INTO {MARK_TABLE} (key, value) VALUES (?, ?)", (MARK_KEY, MARK))
    if db.dialect == "sqlite":
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # in the transaction


MIGRATIONS = (
    Migration(1, "workloads, results, metrics with their samples", _v1),
    Migration(2, "results.extra; result_tags", _v2),
    Migration(3, "gpuscope_meta: the mark of a gpuscope history database", _v3),
)
LATEST = MIGRATIONS[-1].version


def refuse_foreign(url: str, found: Found | None) -> None:
    """DatabaseError, before anything is written, when `found` (what a database holds; None: a
    new file) is not a gpuscope history database, new or older."""
    why = _foreign(found) if found is not None else None
    if why is not None:
        raise DatabaseError(
            f"--db {redacted(url)}: not a gpuscope history database ({why}): left untouched; "
            "name a new database or one that gpuscope created"
        )


def _foreign(found: Found) -> str | None:
    if found.application_id not in (0, APPLICATION_ID):
        return f"another application's SQLite file, application_id {found.application_id:#x}"
    if found.mark is not None and found.mark != MARK:
        return f"its {MARK_TABLE} table says {found.mark[:40]!r}"
    others = sorted(found.tables - OWN_TABLES)
    if others:
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        return f"it holds other tables: {', '.join(others[:3])}{more}"
    if found.tables and "schema_migrations" not in found.tables:
        return f"it has {', '.join(sorted(found.tables))} but no schema_migrations table"
    if not found.tables and found.user_version != 0:
        return f"another application's SQLite file, user_version {found.user_version}"
    return None


def version(db: Database) -> int:
    """The schema version of `db` (0: empty)."""
    if not db.table_exists("schema_migrations"):
        return 0
    found = db.query("SELECT MAX(version) FROM schema_migrations")
    return int(found[0][0] or 0)


def migrate(db: Database, upto: int = LATEST) -> int:
    """Apply the migrations `db` lacks, up to `upto`; the version it has now."""
    current = version(db)
    _refuse_newer(db, current)
    if current >= upto:
        return current
    with db.transaction():
        db.lock_for_migration()
        db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
            "description TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        current = version(db)  # another process may have migrated while we waited
        for migration in MIGRATIONS:
            if current < migration.version <= upto:
                migration.apply(db)
                db.execute(
                    "INSERT INTO schema_migrations (version, description, applied_at) "
                    "VALUES (?, ?, ?)",
                    (migration.version, migration.description, _now()),
                )
                current = migration.version
    return current


def _refuse_newer(db: Database, current: int) -> None:
    if current > LATEST:
        raise DatabaseError(
            f"--db {redacted(db.url)}: schema version {current} was written by a newer gpuscope "
            f"(this one knows up to {LATEST}); upgrade gpuscope to use it"
        )


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
