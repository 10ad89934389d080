"""Reader for AMD's legacy `rocprof` (rocprofiler 1.x / roctracer, ROCm ≤ 6): one run's files.

A run writes `<prefix>.csv` (kernel trace, or counters with `--pmc`), `<prefix>.stats.csv`,
`.hip_stats.csv`, `.hsa_stats.csv`, `.copy_stats.csv` (totals), `<prefix>.json` (Chrome trace of
kernels, copies, HIP/HSA calls and ROCTX ranges), `<prefix>.db` (rocprof's own SQLite) and
`<prefix>.sysinfo.txt` (rocminfo). Every file is recognised by its content; the files sharing
`<dir>/<prefix>` are one run and become one `Trace` (see `_merge` for which file
supplies what). Times are ns on the HSA system clock (CLOCK_BOOTTIME).

    >>> from gpuscope.trace import read_trace
    >>> trace = read_trace("rocprof_out/")                  # doctest: +SKIP
    >>> trace.meta.format, trace.provides("kernels")        # doctest: +SKIP
    ('rocprof', True)
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

from gpuscope.errors import ReaderError
from gpuscope.trace import _csv, _sniff
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace.model import Trace
from gpuscope.trace.readers.rocprof._dispatch_csv import is_dispatch_header, read_dispatch_csv
from gpuscope.trace.readers.rocprof._json import is_rocprof_json, read_json
from gpuscope.trace.readers.rocprof._piece import Piece
from gpuscope.trace.readers.rocprof._stats import is_stats_header, read_stats
from gpuscope.trace.readers.rocprof._sysinfo import is_sysinfo, read_sysinfo

# every input is sniffed with this module (a Kineto JSON too): the modules with the file kinds'
# tests are imported with it, the database reader and the merge on read

_HEADER_LINES = 5


class RocprofReader:
    """`Reader` for rocprof v1 outputs (results.csv / .stats.csv / .json / .db / .sysinfo.txt)."""

    name = "rocprof"
    priority = 15  # below rocpd / rocprofv3 (20+) when their outputs share a prefix

    def sniff(self, path: str) -> bool:
        try:
            return file_kind(path) is not None
        except (csv.Error, ValueError, OSError):  # sniffing never raises
            return False

    def group_key(self, path: str) -> str:
        """`out/results.stats.csv` -> `out/results`: every file of one run shares it."""
        where = Path(path)
        return str(where.parent / where.name.split(".", 1)[0])

    def read(self, path: str, progress: Progress | None = None) -> Trace:
        return self.read_group([path], progress)

    def read_group(self, paths: list[str], progress: Progress | None = None) -> Trace:
        from gpuscope.trace.readers.rocprof._merge import merge

        pieces: list[Piece] = []
        failures: list[str] = []
        for path in sorted(paths):
            try:
                pieces.append(_read_one(path, progress))
            except ReaderError as error:
                if len(paths) == 1:
                    raise
                failures.append(f"{Path(path).name}: {error}")
        if not any(p.kind != "sysinfo" for p in pieces):
            raise ReaderError(_nothing_read(paths, failures))
        key = self.group_key(paths[0]) if len(paths) > 1 else paths[0]
        warnings = [f"{failure}; read the other files of the run" for failure in failures]
        return merge(key, pieces, warnings)


def _read_one(path: str, progress: Progress | None) -> Piece:
    if _sniff.is_sqlite(path):  # read_db says why a database cannot be read (locked, corrupt)
        from gpuscope.trace.readers.rocprof._db import read_db

        return read_db(path)
    kind = file_kind(path)
    if kind is None:
        raise ReaderError("not a rocprof v1 output (results.csv, *.stats.csv, results.json, "
                          "results.db or results.sysinfo.txt)")  # fmt: skip
    if kind == "json":
        return read_json(path, progress)
    return _READERS[kind](path)


_READERS: dict[str, Callable[[str], Piece]] = {  # a database ("db") is read above
    "csv": read_dispatch_csv,
    "stats": read_stats,
    "sysinfo": read_sysinfo,
}


def file_kind(path: str) -> str | None:
    """ "csv", "stats", "json", "db" or "sysinfo" when the content is rocprof v1's, else None."""
    if _sniff.is_sqlite(path):
        from gpuscope.trace.readers.rocprof._db import is_rocprof_db

        return "db" if is_rocprof_db(path) else None
    head = _sniff.head(path)
    if is_rocprof_json(head):
        return "json"
    text = head[: 1 << 16].decode("utf-8", "replace")
    if is_sysinfo(text):
        return "sysinfo"
    for line in text.splitlines()[:_HEADER_LINES]:
        cells = tuple(_csv.csv_row(line))
        if is_dispatch_header(cells):
            return "csv"
        if is_stats_header(cells):
            return "stats"
    return None


def _nothing_read(paths: list[str], failures: list[str]) -> str:
    if failures:
        return "; ".join(failures)
    names = ", ".join(Path(p).name for p in paths)
    return (f"only a rocminfo dump ({names}): expected rocprof's results.csv, *.stats.csv, "
            "results.json or results.db next to it")  # fmt: skip
