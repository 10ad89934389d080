"""The history store on SQLite and on a real PostgreSQL server: results round-trip with their
context, metrics and samples; a version-1 database migrates; 8 processes recording at once lose
nothing; bad URLs and newer schemas are one clear error."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpuscope.history import schema, sql
from gpuscope.history.model import Context, Metric, Result, from_samples
from gpuscope.history.sql import DatabaseError, connect, default_url, sqlite_path
from gpuscope.history.store import Store

REPO = Path(__file__).resolve().parents[3]
V1 = REPO / "tests" / "data" / "history" / "history_v1.sqlite"


def result(
    workload: str = "resnet50", value: float = 1.0, at: int = 0, **context: object
) -> Result:
    ctx = Context(recorded_at=f"2026-11-27T10:00:{at:02d}.000Z", **context)  # type: ignore[arg-type]
    metrics = (Metric("samples_per_second", value, "", "higher"),
               from_samples("step_time_us", [10.0, 12.0, 11.0], "us"))  # fmt: skip
    return Result(workload, "run", ctx, metrics, source="test")


def test_a_result_round_trips_with_its_context_and_samples(db_url: str) -> None:
    context = dict(commit="3f2c" * 10, dirty=True, branch="main", host="node1",
                   gpu_model="NVIDIA H100", gpu_count=8, driver="580.1", rocm=None, cuda="13.0",
                   torch="2.11", gpuscope_version="0.1.0", tags=("nightly", "ci"),
                   artefacts="runs/r1", extra={"exit_code": 0})  # fmt: skip
    with Store.open(db_url) as store:
        rid = store.add(result(**context))
        (back,) = store.latest("resnet50")
    assert back.id == rid and back.source == "test" and back.kind == "run"
    assert back.context.to_dict() == {"recorded_at": "2026-11-27T10:00:00.000Z", **context,
                                      "tags": ["nightly", "ci"]}  # fmt: skip
    step = back.metric("step_time_us")
    assert step is not None and step.value == 11.0 and step.samples == (10.0, 12.0, 11.0)
    assert back.metric("samples_per_second") == Metric("samples_per_second", 1.0, "", "higher")


def test_newest_first_by_time_then_id_and_filters(db_url: str) -> None:
    with Store.open(db_url) as store:
        ids = store.add_many(
            [
                result(value=v, at=at, commit=c, tags=t)
                for v, at, c, t in [
                    (1, 5, "aaa1", ("x",)),
                    (2, 1, "bbb2", ()),
                    (3, 5, "aaa1", ("x",)),
                ]
            ]
        )
        assert [r.id for r in store.latest("resnet50")] == [ids[2], ids[0], ids[1]]
        assert [r.id for r in store.latest("resnet50", limit=1)] == [ids[2]]
        assert [r.id for r in store.latest("resnet50", commit="aaa")] == [ids[2], ids[0]]
        assert [r.id for r in store.latest("resnet50", tag="x")] == [ids[2], ids[0]]
        assert store.latest("nope") == [] and not store.has_workload("nope")
        (summary,) = store.workloads()
        assert (summary.name, summary.results) == ("resnet50", 3)
        assert summary.metrics == ("samples_per_second", "step_time_us")
        assert [r.id for r in store.all_results()] == ids
        assert store.get(ids[1]) is not None and store.get(10**9) is None


def test_a_result_that_is_not_a_number_is_refused_whole(db_url: str) -> None:
    bad = Result("w", "run", Context("2026-11-27T10:00:00.000Z"),
                 (Metric("ok", 1.0), Metric("t", float("nan"))))  # fmt: skip
    with Store.open(db_url) as store:
        with pytest.raises(DatabaseError, match="metric t has a value that is not a finite"):
            store.add_many([result(), bad])
        assert store.count() == 0  # the good one was not kept either


def test_a_version_1_database_migrates_and_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    shutil.copyfile(V1, path)
    with Store.open(f"sqlite:///{path}") as store:
        assert schema.version(store.db) == schema.LATEST == 3
        results = store.latest("resnet50")
        assert [r.metric("samples_per_second").value for r in results] == [  # type: ignore[union-attr]
            1471.0, 1503.2, 1498.5, 1510.0]  # fmt: skip
        assert results[0].context.gpu_model == "AMD gfx942" and results[0].context.extra == {}
        assert [r.id for r in store.latest("resnet50", tag="mi300x")] == [3, 1]  # v2's tag rows
        first = store.latest("resnet50")[-1].metric("samples_per_second")
        assert first is not None and first.samples == (1509.0, 1510.0, 1511.0)
        applied = store.db.query("SELECT version, description FROM schema_migrations")
        assert [v for v, _ in applied] == [1, 2, 3]
    with Store.open(f"sqlite:///{path}") as again:  # migrating twice changes nothing
        assert schema.version(again.db) == 3 and again.count() == 4
    with sqlite3.connect(path) as raw:  # marked as gpuscope's now (v3)
        assert raw.execute("PRAGMA application_id").fetchone() == (0x67707368,)
        assert raw.execute("SELECT value FROM gpuscope_meta").fetchall() == [("gpuscope.history",)]
    raw.close()


def test_a_v1_database_on_postgresql_migrates(pg_url: str) -> None:
    db = connect(pg_url)
    schema.migrate(db, upto=1)
    with db.transaction():
        db.execute("INSERT INTO workloads (name, created_at) VALUES ('w', 'then')")
        rid = db.insert("INSERT INTO results (workload_id, kind, recorded_at, tags) VALUES "
                        "(1, 'run', '2026-11-27T10:00:00.000Z', '[\"a\", \"b\"]')")  # fmt: skip
        db.execute("INSERT INTO metrics (result_id, name, value, direction) VALUES (?, 'm', 2.5, "
                   "'lower')", (rid,))  # fmt: skip
    db.close()
    with Store.open(pg_url) as store:
        assert schema.version(store.db) == 3
        (back,) = store.latest("w", tag="b")
        assert back.context.tags == ("a", "b") and back.metrics == (Metric("m", 2.5),)


def test_a_database_from_a_newer_gpuscope_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    Store.open(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO schema_migrations VALUES (99, 'future', 'later')")
    with pytest.raises(DatabaseError, match="schema version 99 was written by a newer gpuscope"):
        Store.open(f"sqlite:///{path}")


@pytest.mark.parametrize(
    ("url", "expected"),
    [("sqlite:///rel/h.db", Path("rel/h.db")), ("sqlite:////abs/h.db", Path("/abs/h.db")),
     ("plain/file.db", Path("plain/file.db")), ("postgresql://u@h/db", None)],
)  # fmt: skip
def test_urls(url: str, expected: Path | None) -> None:
    assert sqlite_path(url) == expected


@pytest.mark.parametrize(
    ("url", "message"),
    [("mysql://x/y", "unknown database kind 'mysql'"), ("sqlite://", "expected sqlite:///")],
)
def test_bad_urls_are_one_error(url: str, message: str) -> None:
    with pytest.raises(DatabaseError, match=message):
        connect(url)


def test_a_postgresql_url_that_cannot_connect_hides_the_password() -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(
        DatabaseError, match=r"postgresql://me:\*\*\*@127\.0\.0\.1:1/db\S*: cannot connect"
    ):
        connect("postgresql://me:secret@127.0.0.1:1/db?connect_timeout=2")


def test_default_url_is_gpuscope_db_else_the_data_directory(tmp_path: Path) -> None:
    assert default_url({"GPUSCOPE_DB": "postgresql://h/db"}) == "postgresql://h/db"
    assert default_url({"XDG_DATA_HOME": str(tmp_path)}) == (
        f"sqlite:///{tmp_path}/gpuscope/history.db"
    )
    home = default_url({"HOME": str(tmp_path)})
    assert home.startswith("sqlite:///") and home.endswith(".local/share/gpuscope/history.db")


_WRITER = textwrap.dedent("""
    import sys
    from gpuscope.history.model import Context, Metric, Result
    from gpuscope.history.store import Store
    url, who, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = Store.open(url)
    for i in range(n):
        ctx = Context(recorded_at=f"2026-11-27T10:{who:02d}:{i:02d}.000Z", tags=(f"p{who}",))
        store.add(Result(f"w{who % 2}", "run", ctx, (Metric("m", who * 1000 + i),)))
    store.close()
""")


def test_8_processes_recording_at_once_lose_nothing(db_url: str) -> None:
    """8 writers start together on a new database (they also race to create its tables)."""
    n = 25
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, db_url, str(who), str(n)], env=env,
                              stderr=subprocess.PIPE, text=True) for who in range(8)]  # fmt: skip
    errors = [p.communicate(timeout=240)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, errors
    with Store.open(db_url) as store:
        assert store.count() == 8 * n
        values = sorted(r.metrics[0].value for w in ("w0", "w1") for r in store.latest(w))
        assert values == sorted(who * 1000 + i for who in range(8) for i in range(n))
        assert len(store.latest("w1", tag="p3")) == n
        assert [v for (v,) in store.db.query("SELECT version FROM schema_migrations")] == [1, 2, 3]


def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'h.db'}") as store:
        assert store.db.query("PRAGMA journal_mode") == [("wal",)]
        assert store.db.query("PRAGMA busy_timeout") == [(sql.BUSY_TIMEOUT_MS,)]


def test_samples_are_stored_as_json(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    with Store.open(url) as store:
        store.add(result())
        rows = store.db.query("SELECT name, samples FROM metrics ORDER BY id")
    assert rows[0] == ("samples_per_second", None)
    assert json.loads(rows[1][1]) == [10.0, 12.0, 11.0]
