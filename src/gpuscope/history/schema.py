"""The history database's tables, built and upgraded by numbered migrations.

Each migration runs once, in a transaction, and is recorded in `schema_migrations` (version,
description, applied_at). Opening a database applies the ones it lacks — under the write lock
(SQLite) or an advisory lock (PostgreSQL), so that processes opening a new database at once
migrate it once. A database written by a newer gpuscope (a version above `LATEST`) is refused
rather than guessed at. Never edit a released migration: add the next one (tests load a
version-1 file, tests/data/history/history_v1.sqlite, and migrate it).

    workloads  id, name (unique), created_at
    results    id, workload_id, kind, recorded_at (UTC ISO 8601), commit_sha, dirty, branch,
               host, gpu_model, gpu_count, driver, rocm, cuda, torch, gpuscope_version,
               tags (JSON list), artefacts (a path), source (what was recorded),
               extra (v2: JSON object of further context)
    metrics    id, result_id, name, value, unit, direction ('lower' | 'higher'),
               samples (JSON list or NULL)
    result_tags (v2) result_id, tag — one row per tag, for filtering
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

from gpuscope.history.sql import Database, DatabaseError, redacted


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


MIGRATIONS = (
    Migration(1, "workloads, results, metrics with their samples", _v1),
    Migration(2, "results.extra; result_tags", _v2),
)
LATEST = MIGRATIONS[-1].version


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
