"""Reader for rocmProfileData traces: the `.rpd` SQLite database written by rpd_tracer
(`runTracer.sh`), schema 2 and 3, and its `rpd2tracing.py` Chrome-trace JSON export.

The JSON carries the same ops in µs (truncated to whole µs by the 2024 exporter), so when both
sit in one directory (same key: the path without its extension) the database is read.

    >>> from gpuscope.trace.registry import read_trace
    >>> trace = read_trace("trace.rpd")                  # doctest: +SKIP
"""

from __future__ import annotations

from gpuscope.errors import ReaderError
from gpuscope.trace import _sniff, _sql
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace.model import Trace
from gpuscope.trace.readers.rpd import _json

# every input is sniffed with this module (a Kineto JSON too): the database reader loads on read

EXPECTED = "an RPD trace (.rpd from rpd_tracer, or its rpd2tracing.py JSON)"


class RpdReader:
    """`Reader` for `.rpd` databases and rpd2tracing JSON."""

    name = "rpd"
    priority = 10  # below rocpd / rocprofv3 outputs of the same process

    def sniff(self, path: str) -> bool:
        names = _sniff.sqlite_names(path)
        if names:
            # any other rocpd_* database that rocpd did not claim: say what is missing on read
            return "rocpd_op" in names or (
                any(n.startswith("rocpd_") for n in names) and "rocpd_info_agent" not in names
            )
        if _sniff.is_sqlite(path):
            return _sql.head_mentions(path, "rocpd_op", "rocpd_api")
        return _json.sniff(path)

    def read(self, path: str, progress: Progress | None = None) -> Trace:
        if not _sniff.is_sqlite(path):
            return _json.read(path, progress)
        from gpuscope.trace.readers.rpd import _db

        with _sql.database(path, EXPECTED) as db:
            return _db.read(db, path, progress)

    def read_group(self, paths: list[str], progress: Progress | None = None) -> Trace:
        """One process's files: the database when there is one, else the JSON export."""
        if not paths:
            raise ReaderError(f"no file given; expected {EXPECTED}")
        databases = [p for p in paths if _sniff.is_sqlite(p)]
        return self.read((databases or paths)[0], progress)
