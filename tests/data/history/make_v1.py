"""Writes history_v1.sqlite: a history database as gpuscope wrote it at schema version 1 (the
DDL frozen here, not imported, so the file keeps the old format whatever schema.py becomes).
tests/unit/history/test_store.py loads it and migrates it to the latest version.

    python tests/data/history/make_v1.py
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

V1 = """
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL,
    applied_at TEXT NOT NULL);
CREATE TABLE workloads (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL);
CREATE TABLE results (
    id INTEGER PRIMARY KEY,
    workload_id BIGINT NOT NULL REFERENCES workloads (id),
    kind TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    commit_sha TEXT, dirty INTEGER, branch TEXT,
    host TEXT, gpu_model TEXT, gpu_count INTEGER, driver TEXT,
    rocm TEXT, cuda TEXT, torch TEXT, gpuscope_version TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    artefacts TEXT, source TEXT);
CREATE TABLE metrics (
    id INTEGER PRIMARY KEY,
    result_id BIGINT NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    name TEXT NOT NULL, value DOUBLE PRECISION NOT NULL, unit TEXT NOT NULL DEFAULT '',
    direction TEXT NOT NULL, samples TEXT);
CREATE INDEX results_by_workload ON results (workload_id, recorded_at, id);
CREATE INDEX metrics_by_result ON metrics (result_id);
INSERT INTO schema_migrations VALUES (1, 'workloads, results, metrics with their samples',
    '2026-11-20T10:00:00Z');
"""


def main() -> None:
    path = Path(__file__).with_name("history_v1.sqlite")
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.executescript(V1)
    db.execute("INSERT INTO workloads VALUES (1, 'resnet50', '2026-11-20T10:00:00Z')")
    for i, value in enumerate((1510.0, 1498.5, 1503.2, 1471.0), start=1):
        tags = json.dumps(["nightly", "mi300x"] if i % 2 else ["nightly"])
        db.execute(
            "INSERT INTO results (id, workload_id, kind, recorded_at, commit_sha, dirty, branch, "
            "host, gpu_model, gpu_count, driver, rocm, torch, gpuscope_version, tags, artefacts, "
            "source) VALUES (?, 1, 'run', ?, ?, 0, 'main', 'node1', 'AMD gfx942', 8, "
            "'6.8.5', '6.2.0', '2.5.0', '0.1.0', ?, ?, 'gpuscope run --record -- ./run.sh')",
            (i, f"2026-11-2{i}T10:00:00.000Z", f"{i:040x}", tags, f"gpuscope-runs/r{i}"),
        )
        db.execute(
            "INSERT INTO metrics (result_id, name, value, unit, direction, samples) VALUES "
            "(?, 'samples_per_second', ?, '', 'higher', ?)",
            (i, value, json.dumps([value - 1, value, value + 1])),
        )
        db.execute(
            "INSERT INTO metrics (result_id, name, value, unit, direction, samples) VALUES "
            "(?, 'wall_s', ?, 's', 'lower', NULL)",
            (i, 60.0 + i),
        )
    db.commit()
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main()
