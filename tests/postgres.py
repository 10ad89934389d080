"""A real PostgreSQL server for the history tests: `initdb` + `pg_ctl` in a temporary folder, on
a free port, as the `postgres` user when the tests run as root (PostgreSQL refuses to run as
root). Skips with the reason where PostgreSQL or psycopg is not installed (.ci/run installs
PostgreSQL on a Debian-like CI machine where it can; docs/history.md).

    with Server.start() as server:       # or the `postgres_url` fixture
        url = server.create_database("t1")
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

_SEARCH = ("/usr/local/bin", "/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin", "/opt/homebrew/bin")


def find_binaries() -> tuple[str, str] | None:
    """(initdb, pg_ctl) on PATH or where distributions install them; None without PostgreSQL."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb and pg_ctl:
        return initdb, pg_ctl
    for pattern in _SEARCH:
        for folder in sorted(glob.glob(pattern), reverse=True):
            a, b = Path(folder, "initdb"), Path(folder, "pg_ctl")
            if a.is_file() and b.is_file():
                return str(a), str(b)
    return None


def skip_reason() -> str | None:
    """Why the PostgreSQL tests cannot run here, or None."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg 3 is not installed (pip install 'psycopg[binary]'; it is in the test extra)"
    if find_binaries() is None:
        return "PostgreSQL (initdb, pg_ctl) is not installed (apt-get install postgresql)"
    if os.geteuid() == 0 and _postgres_user() is None:
        return "running as root and there is no `postgres` user to run the server as"
    return None


def _postgres_user() -> tuple[int, int] | None:
    import pwd

    try:
        entry = pwd.getpwnam("postgres")
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """A throw-away server; `url(db)` names a database on it."""

    def __init__(self, folder: Path, port: int, as_user: list[str], pg_ctl: str) -> None:
        self.folder, self.port, self.as_user, self.pg_ctl = folder, port, as_user, pg_ctl

    @classmethod
    @contextlib.contextmanager
    def start(cls) -> Iterator[Server]:
        reason = skip_reason()
        if reason:
            pytest.skip(reason)
        binaries = find_binaries()
        assert binaries is not None
        initdb, pg_ctl = binaries
        folder = Path(tempfile.mkdtemp(prefix="gpuscope-pg-"))
        as_user: list[str] = []
        if os.geteuid() == 0:
            ids = _postgres_user()
            assert ids is not None
            os.chown(folder, *ids)
            as_user = (
                ["runuser", "-u", "postgres", "--"]
                if shutil.which("runuser")
                else ["setpriv", f"--reuid={ids[0]}", f"--regid={ids[1]}", "--clear-groups"]
            )
        server = cls(folder, _free_port(), as_user, pg_ctl)
        try:
            server._run(initdb, "-D", str(folder / "data"), "-U", "postgres", "-A", "trust",
                        "--no-sync", "-E", "UTF8")  # fmt: skip
            options = (f"-p {server.port} -k {folder} -c listen_addresses=127.0.0.1 "
                       "-c fsync=off -c max_connections=60")  # fmt: skip
            server._run(pg_ctl, "-D", str(folder / "data"), "-o", options,
                        "-l", str(folder / "log"), "-w", "-t", "60", "start")  # fmt: skip
            yield server
        finally:
            with contextlib.suppress(Exception):
                server._run(pg_ctl, "-D", str(folder / "data"), "-m", "immediate", "-w", "stop")
            shutil.rmtree(folder, ignore_errors=True)

    def _run(self, *argv: str) -> None:
        done = subprocess.run([*self.as_user, *argv], capture_output=True, text=True,
                              timeout=120, cwd=self.folder)  # fmt: skip
        if done.returncode != 0:
            log = self.folder / "log"
            tail = log.read_text(errors="replace")[-2000:] if log.is_file() else ""
            raise RuntimeError(f"{' '.join(argv[:2])} failed: {done.stderr}{done.stdout}{tail}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        for _ in range(50):
            try:
                with psycopg.connect(self.url(), autocommit=True) as connection:
                    connection.execute(f'CREATE DATABASE "{name}"')
                return self.url(name)
            except psycopg.OperationalError:
                time.sleep(0.1)
        raise RuntimeError("the test server does not answer")
