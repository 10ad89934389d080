"""The history store: results of workloads over time, in SQLite or PostgreSQL (sql.py).

    >>> store = Store.open("sqlite:////tmp/h.db")          # migrates a new or older database
    >>> rid = store.add(result)                             # one transaction: all of it or none
    >>> store.latest("resnet50", limit=10)                  # newest first, with their metrics
    >>> store.close()

Every write is one transaction, so concurrent writers (8 CI jobs recording at once) lose
nothing: SQLite serialises them under its write lock (WAL mode, readers never wait), PostgreSQL
runs them side by side. Results are ordered by `recorded_at`, then by id.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from gpuscope.history import schema
from gpuscope.history.model import Context, Metric, Result
from gpuscope.history.sql import Database, DatabaseError, connect, peek, redacted, sqlite_path

_RESULT_COLUMNS = (
    "r.id, w.name, r.kind, r.recorded_at, r.commit_sha, r.dirty, r.branch, r.host, r.gpu_model, "
    "r.gpu_count, r.driver, r.rocm, r.cuda, r.torch, r.gpuscope_version, r.tags, r.artefacts, "
    "r.source, r.extra"
)
_NEWEST = "ORDER BY r.recorded_at DESC, r.id DESC"
_IN_CHUNK = 500  # ids per IN (...) list


@dataclass(frozen=True)
class WorkloadSummary:
    name: str
    results: int
    first: str | None
    last: str | None
    metrics: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "results": self.results,
            "first": self.first,
            "last": self.last,
            "metrics": list(self.metrics),
        }


class Store:
    """Results in a database; `open` creates or migrates it."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @classmethod
    def open(cls, url: str) -> Store:
        """The history in `url`, created or migrated. DatabaseError, the database untouched, when
        it is another program's (schema.refuse_foreign): a SQLite file is looked at read-only
        before it is opened for writing."""
        path = sqlite_path(url)
        if path is not None:
            schema.refuse_foreign(url, peek(url, path, schema.MARK_TABLE, schema.MARK_KEY))
        db = connect(url)
        try:
            with db.errors():
                if db.dialect != "sqlite":
                    schema.refuse_foreign(url, db.found(schema.MARK_TABLE, schema.MARK_KEY))
                schema.migrate(db)
        except BaseException:
            db.close()
            raise
        return cls(db)

    @property
    def url(self) -> str:
        return redacted(self.db.url)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing --------------------------------------------------------------------------------

    def add(self, result: Result) -> int:
        """Store `result` (one transaction); its id."""
        return self.add_many([result])[0]

    def add_many(self, results: Sequence[Result]) -> list[int]:
        """Store every result in one transaction (an import is all or nothing)."""
        for result in results:
            validate(result)
        with self.db.errors(), self.db.transaction():
            workloads = {name: self._workload_id(name) for name in {r.workload for r in results}}
            return [self._insert(r, workloads[r.workload]) for r in results]

    def _workload_id(self, name: str) -> int:
        self.db.execute(
            "INSERT INTO workloads (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
            (name, schema._now()),
        )
        return int(self.db.query("SELECT id FROM workloads WHERE name = ?", (name,))[0][0])

    def _insert(self, result: Result, workload_id: int) -> int:
        c = result.context
        rid = self.db.insert(
            "INSERT INTO results (workload_id, kind, recorded_at, commit_sha, dirty, branch, host, "
            "gpu_model, gpu_count, driver, rocm, cuda, torch, gpuscope_version, tags, artefacts, "
            "source, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                workload_id,
                result.kind,
                c.recorded_at,
                c.commit,
                None if c.dirty is None else int(c.dirty),
                c.branch,
                c.host,
                c.gpu_model,
                c.gpu_count,
                c.driver,
                c.rocm,
                c.cuda,
                c.torch,
                c.gpuscope_version,
                json.dumps(list(c.tags)),
                c.artefacts,
                result.source,
                json.dumps(c.extra, sort_keys=True, default=str),
            ),
        )
        self.db.executemany(
            "INSERT INTO metrics (result_id, name, value, unit, direction, samples) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(rid, m.name, m.value, m.unit, m.direction, _samples(m)) for m in result.metrics],
        )
        self.db.executemany(
            "INSERT INTO result_tags (result_id, tag) VALUES (?, ?)",
            [(rid, tag) for tag in dict.fromkeys(c.tags)],
        )
        return rid

    # -- reading --------------------------------------------------------------------------------

    def workloads(self) -> list[WorkloadSummary]:
        with self.db.errors():
            rows = self.db.query(
                "SELECT w.name, COUNT(r.id), MIN(r.recorded_at), MAX(r.recorded_at) "
                "FROM workloads w LEFT JOIN results r ON r.workload_id = w.id "
                "GROUP BY w.id, w.name ORDER BY w.name"
            )
            return [
                WorkloadSummary(name, int(n), first, last, tuple(self._metric_names(name)))
                for name, n, first, last in rows
            ]

    def _metric_names(self, workload: str) -> list[str]:
        """The metrics of the workload's newest result (cheap: one result, not all)."""
        newest = self._result_rows(workload, limit=1)
        if not newest:
            return []
        rows = self.db.query(
            "SELECT name FROM metrics WHERE result_id = ? ORDER BY id", (newest[0][0],)
        )
        return [str(r[0]) for r in rows]

    def has_workload(self, workload: str) -> bool:
        with self.db.errors():
            return bool(self.db.query("SELECT 1 FROM workloads WHERE name = ?", (workload,)))

    def latest(
        self,
        workload: str,
        limit: int | None = None,
        commit: str | None = None,
        tag: str | None = None,
    ) -> list[Result]:
        """The workload's results, newest first, with their metrics; `commit`: only those of
        that commit (a prefix of its SHA); `tag`: only those carrying it."""
        with self.db.errors():
            rows = self._result_rows(workload, limit, commit, tag)
            return self._with_metrics(rows)

    def get(self, result_id: int) -> Result | None:
        with self.db.errors():
            rows = self.db.query(
                f"SELECT {_RESULT_COLUMNS} FROM results r JOIN workloads w "
                "ON w.id = r.workload_id WHERE r.id = ?",
                (result_id,),
            )
            found = self._with_metrics(rows)
        return found[0] if found else None

    def count(self) -> int:
        with self.db.errors():
            return int(self.db.query("SELECT COUNT(*) FROM results")[0][0])

    def all_results(self, workload: str | None = None) -> Iterable[Result]:
        """Every result (of one workload), oldest first, in pages (an export of a big store
        does not hold it all in memory)."""
        last_id = 0
        where = "w.name = ? AND " if workload else ""
        while True:
            params: tuple[Any, ...] = (workload, last_id) if workload else (last_id,)
            with self.db.errors():
                rows = self.db.query(
                    f"SELECT {_RESULT_COLUMNS} FROM results r JOIN workloads w "
                    f"ON w.id = r.workload_id WHERE {where}r.id > ? ORDER BY r.id LIMIT 1000",
                    params,
                )
                page = self._with_metrics(rows)
            if not page:
                return
            yield from page
            last_id = int(rows[-1][0])

    def _result_rows(
        self,
        workload: str,
        limit: int | None = None,
        commit: str | None = None,
        tag: str | None = None,
    ) -> list[tuple[Any, ...]]:
        ids = self.db.query("SELECT id FROM workloads WHERE name = ?", (workload,))
        if not ids:
            return []
        where, params = ["r.workload_id = ?"], [ids[0][0]]
        if commit:
            where.append("r.commit_sha LIKE ?")
            params.append(commit.replace("%", "").replace("_", "") + "%")
        if tag:
            where.append("r.id IN (SELECT result_id FROM result_tags WHERE tag = ?)")
            params.append(tag)
        sql = (
            f"SELECT {_RESULT_COLUMNS} FROM results r JOIN workloads w ON w.id = r.workload_id "
            f"WHERE {' AND '.join(where)} {_NEWEST}"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return self.db.query(sql, params)

    def _with_metrics(self, rows: Sequence[tuple[Any, ...]]) -> list[Result]:
        metrics: dict[int, list[Metric]] = {}
        ids = [int(r[0]) for r in rows]
        for start in range(0, len(ids), _IN_CHUNK):
            chunk = ids[start : start + _IN_CHUNK]
            marks = ", ".join("?" * len(chunk))
            for rid, name, value, unit, direction, samples in self.db.query(
                "SELECT result_id, name, value, unit, direction, samples FROM metrics "
                f"WHERE result_id IN ({marks}) ORDER BY id",
                chunk,
            ):
                metric = Metric(name, float(value), unit, direction, _parse_samples(samples))
                metrics.setdefault(int(rid), []).append(metric)
        return [_result(row, tuple(metrics.get(int(row[0]), ()))) for row in rows]


def _result(row: tuple[Any, ...], metrics: tuple[Metric, ...]) -> Result:
    (
        rid,
        workload,
        kind,
        recorded_at,
        commit,
        dirty,
        branch,
        host,
        gpu_model,
        gpu_count,
        driver,
        rocm,
        cuda,
        torch,
        version,
        tags,
        artefacts,
        source,
        extra,
    ) = row
    context = Context(
        recorded_at=recorded_at,
        commit=commit,
        dirty=None if dirty is None else bool(dirty),
        branch=branch,
        host=host,
        gpu_model=gpu_model,
        gpu_count=gpu_count,
        driver=driver,
        rocm=rocm,
        cuda=cuda,
        torch=torch,
        gpuscope_version=version,
        tags=tuple(schema._tags(tags)),
        artefacts=artefacts,
        extra=_parse_extra(extra),
    )
    return Result(workload, kind, context, metrics, source, int(rid))


def validate(result: Result) -> None:
    """DatabaseError when `result` cannot be stored: no workload, or a value (or a sample) that
    is not a finite number."""
    if not result.workload.strip():
        raise DatabaseError("a result needs a workload name (--workload NAME)")
    for metric in result.metrics:
        values = (metric.value, *metric.samples)
        if not all(isinstance(v, float | int) and math.isfinite(v) for v in values):
            raise DatabaseError(
                f"{result.workload}: metric {metric.name} has a value that is not a finite number"
            )


def _samples(metric: Metric) -> str | None:
    return json.dumps(list(metric.samples)) if metric.samples else None


def _parse_samples(text: str | None) -> tuple[float, ...]:
    if not text:
        return ()
    return tuple(float(v) for v in json.loads(text))


def _parse_extra(text: str | None) -> dict[str, Any]:
    try:
        found = json.loads(text or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
