"""Issue 25: the history store marks its database and refuses, untouched, one that is not
gpuscope's — a profiler's own SQLite database (nsys export, rpd, rocpd: the real files), one
with another application id or mark, a damaged one — while every gpuscope history database,
those of earlier releases included, still opens and migrates. On SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from gpuscope.history import schema
from gpuscope.history.sql import DatabaseError, connect
from gpuscope.history.store import Store
from tests.unit.history.test_store import V1, result

FORMATS = Path(__file__).resolve().parents[4] / "shared" / "reference" / "formats"
PROFILER_DBS = {
    "nsys": FORMATS / "nsys" / "vectoraddition-a100-nsys2022.2" / "report4.sqlite",
    "rpd": FORMATS / "rpd" / "matmul_result.rpd",
    "rocpd": FORMATS / "rocprofv3" / "rocpd-db-gfx942" / "15_results.db",
}
GPSH = 0x67707368  # "gpsh", independent of schema.APPLICATION_ID: a file's mark must not drift


def state(path: Path) -> tuple[str, list[str]]:
    """The file's bytes (hashed) and the names beside it (a -wal / -shm would show)."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, sorted(p.name for p in path.parent.iterdir())


def refused(url: str, *words: str) -> None:
    with pytest.raises(DatabaseError) as caught:
        Store.open(url)
    message = str(caught.value)
    assert "\n" not in message and len(message) < 400, message
    assert all(w in message for w in words), message


@pytest.mark.parametrize("kind", sorted(PROFILER_DBS))
def test_a_profilers_database_is_refused_untouched(kind: str, tmp_path: Path) -> None:
    """Before: five tables added and the file switched to WAL, exit 0."""
    source = PROFILER_DBS[kind]
    if not source.is_file():
        pytest.skip(f"needs {source} (../shared/reference)")
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    before = state(path)
    refused(f"sqlite:///{path}", "not a gpuscope history database", "other tables", "untouched")
    assert state(path) == before
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() != ("wal",)
        names = {n for (n,) in raw.execute("SELECT name FROM sqlite_master")}
    raw.close()
    assert not names & {"workloads", "results", "schema_migrations", "gpuscope_meta"}


def test_a_damaged_profiler_database_is_refused_untouched(tmp_path: Path) -> None:
    """Before: its tables were added to, and integrity_check failed afterwards."""
    source = PROFILER_DBS["nsys"]
    if not source.is_file():
        pytest.skip(f"needs {source} (../shared/reference)")
    path = tmp_path / "damaged.sqlite"
    data = bytearray(source.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 4096] = bytes(4096)  # one page in the middle zeroed
    path.write_bytes(bytes(data))
    before = state(path)
    refused(f"sqlite:///{path}", str(path), "untouched")
    assert state(path) == before


def test_another_application_id_or_mark_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as raw:
        raw.execute("PRAGMA application_id = 1234")
    raw.close()
    refused(f"sqlite:///{other}", "application_id 0x4d2")
    marked = tmp_path / "marked.db"
    with Store.open(f"sqlite:///{marked}") as store:
        store.add(result())
    with sqlite3.connect(marked) as raw:
        raw.execute("UPDATE gpuscope_meta SET value = 'someone.else' WHERE key = 'schema'")
    raw.close()
    before = state(marked)
    refused(f"sqlite:///{marked}", "'someone.else'")
    assert state(marked) == before


def test_our_tables_with_another_table_beside_them_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with Store.open(f"sqlite:///{path}") as store:
        store.db.execute("CREATE TABLE kernels (name TEXT)")
    refused(f"sqlite:///{path}", "other tables: kernels")


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database\n" * 20)
    refused(f"sqlite:///{path}", "not a SQLite database", "untouched")
    assert path.read_text() == "not a database\n" * 20


def test_new_and_empty_files_become_marked_history_databases(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    for path in (tmp_path / "new" / "history.db", empty):
        with Store.open(f"sqlite:///{path}") as store:
            store.add(result())
        with sqlite3.connect(path) as raw:
            assert raw.execute("PRAGMA application_id").fetchone() == (GPSH,)
            assert raw.execute("SELECT key, value FROM gpuscope_meta").fetchall() == [
                ("schema", "gpuscope.history")]  # fmt: skip
        raw.close()
        with Store.open(f"sqlite:///{path}") as again:
            assert again.count() == 1


def test_databases_of_earlier_releases_open_and_migrate(tmp_path: Path) -> None:
    """A version-1 file (tests/data) and a version-2 one, as the release before the mark made
    them: our tables, no mark, application_id 0."""
    v1 = tmp_path / "v1.sqlite"
    shutil.copyfile(V1, v1)
    v2 = tmp_path / "v2.sqlite"
    db = connect(f"sqlite:///{v2}")
    schema.migrate(db, upto=2)
    db.execute("INSERT INTO workloads (name, created_at) VALUES ('w', 'then')")
    db.close()
    for path, workloads in ((v1, 1), (v2, 1)):
        with sqlite3.connect(path) as raw:
            assert raw.execute("PRAGMA application_id").fetchone() == (0,)
        raw.close()
        with Store.open(f"sqlite:///{path}") as store:
            assert schema.version(store.db) == 3 and len(store.workloads()) <= workloads
        with sqlite3.connect(path) as raw:
            assert raw.execute("PRAGMA application_id").fetchone() == (GPSH,)
        raw.close()


def test_postgresql_refuses_a_database_with_other_tables(pg_url: str) -> None:
    db = connect(pg_url)
    db.execute("CREATE TABLE kernels (name TEXT)")
    db.close()
    refused(pg_url, "not a gpuscope history database", "other tables: kernels")
    db = connect(pg_url)
    assert db.tables() == {"kernels"}  # nothing added
    db.close()


def test_postgresql_refuses_another_mark_and_marks_its_own(pg_url: str) -> None:
    with Store.open(pg_url) as store:
        assert store.db.query("SELECT key, value FROM gpuscope_meta") == [
            ("schema", "gpuscope.history")]  # fmt: skip
        store.db.execute("UPDATE gpuscope_meta SET value = 'x' WHERE key = 'schema'")
    refused(pg_url, "gpuscope_meta table says 'x'")


def test_postgresql_database_of_an_earlier_release_migrates(pg_url: str) -> None:
    db = connect(pg_url)
    schema.migrate(db, upto=2)
    db.close()
    with Store.open(pg_url) as store:
        assert schema.version(store.db) == 3
        assert store.db.tables() >= {"gpuscope_meta", "workloads"}
