"""Run directories are never reused; manifest.json is versioned and written atomically."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from gpuscope.run.manifest import SCHEMA, Manifest, read_manifest, utc_iso
from gpuscope.run.rundir import create_run_dir, list_files, new_run_id

NOW = datetime(2026, 11, 22, 1, 45, 2, 123456, tzinfo=timezone.utc)


def test_run_id_is_utc_time_plus_token() -> None:
    assert new_run_id(NOW, "3f9a") == "20261122-014502-3f9a"


def test_an_existing_run_directory_is_never_reused(tmp_path: Path) -> None:
    taken = tmp_path / "20261122-014502-aaaa"
    taken.mkdir()
    (taken / "keep.txt").write_text("old run")
    tokens = iter(["aaaa", "aaaa", "bbbb"])
    run_id, run_dir = create_run_dir(tmp_path, NOW, token=lambda: next(tokens))
    assert run_id == "20261122-014502-bbbb" and run_dir.is_dir()
    assert (taken / "keep.txt").read_text() == "old run"
    assert list(run_dir.iterdir()) == []


def test_output_dir_is_created(tmp_path: Path) -> None:
    _, run_dir = create_run_dir(tmp_path / "a" / "b", NOW)
    assert run_dir.parent == tmp_path / "a" / "b"


def test_files_are_listed_relative_without_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.csv").write_text("abc")
    (tmp_path / "manifest.json").write_text("{}")
    assert list_files(tmp_path) == [{"path": "sub/x.csv", "bytes": 3}]


def test_manifest_round_trips_with_schema_first(tmp_path: Path) -> None:
    manifest = Manifest(
        run_id="r", run_dir=str(tmp_path), gpuscope_version="0", command=["app"],
        cwd="/", host={}, gpu_vendor=None, gpus=[], started_at=utc_iso(NOW),
    )  # fmt: skip
    manifest.write()
    text = (tmp_path / "manifest.json").read_text()
    assert text.startswith('{\n  "schema": "gpuscope.run/1"')
    data = read_manifest(tmp_path)
    assert data["schema"] == SCHEMA and data["status"] == "running"
    assert data["started_at"] == "2026-11-22T01:45:02.123Z"
    assert data["exit_code"] is None
    assert data["signals"] == {
        "received": [],
        "forwarded": [],
        "killed_after_s": None,
        "cleanup_s": None,
    }
    assert not list(tmp_path.glob(".manifest.json.tmp*"))
    assert json.loads(text) == data
