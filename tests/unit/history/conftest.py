"""Databases for the history tests: a SQLite file, and a database on a real PostgreSQL server
that the tests start (tests/postgres.py; skipped with the reason where PostgreSQL is missing)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres import Server

_names = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    with Server.start() as server:
        yield server


@pytest.fixture
def pg_url(pg_server: Server) -> str:
    return pg_server.create_database(f"gpuscope_test_{next(_names)}")


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'history.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url
