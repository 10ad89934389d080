"""Reader for Nsight Systems outputs: the SQLite export (schema 2.x and 3.x), the `.nsys-rep`
report (exported with `nsys export` when nsys is installed) and the `nsys stats` reports (CSV
files, CSV or text on stdout).

    >>> from gpuscope.trace.registry import read_trace
    >>> trace = read_trace("report1.sqlite")                  # doctest: +SKIP
    >>> trace.meta.schema, int((trace.gpu.kind == 0).sum())  # doctest: +SKIP
    ('3.20.3', 1)

In a directory, a report, its export and the stats files of the same name are one source
(`report1.nsys-rep`, `report1.sqlite`, `report1_cuda_gpu_trace.csv`): the export is read when
there is one, the stats files only without it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from gpuscope.errors import ReaderError
from gpuscope.trace import _csv, _sniff
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace.model import Trace
from gpuscope.trace.readers.nsys import _export
from gpuscope.trace.readers.nsys import _reports as rep
from gpuscope.trace.readers.nsys import _stats_text as text_stats

# every input is sniffed with this module (a Kineto JSON too): the read path is imported on read

EXPECTED = (
    "an Nsight Systems output: a SQLite export (nsys export --type sqlite), a .nsys-rep "
    "report, or nsys stats reports (cuda_gpu_kern_sum, cuda_gpu_trace, ... as CSV or "
    "text)"
)


class NsysReader:
    """`Reader` for Nsight Systems exports, reports and stats outputs."""

    name = "nsys"
    priority = 25

    def sniff(self, path: str) -> bool:
        return _kind(path) is not None

    def read(self, path: str, progress: Progress | None = None) -> Trace:
        return self.read_group([path], progress)

    def group_key(self, path: str) -> str:
        """`out/report1` for report1.nsys-rep, report1.sqlite and report1_cuda_*.csv."""
        where = Path(path)
        prefix = rep.file_prefix(path)
        stem = where.name.rsplit(".", 1)[0] if "." in where.name else where.name
        return str(where.parent / (prefix if prefix is not None else stem))

    def read_group(self, paths: Sequence[str], progress: Progress | None = None) -> Trace:
        kinds = {path: _kind(path) or _asked_for(path) for path in paths}
        reports = [p for p in paths if kinds[p] == "report"]
        databases = [p for p in paths if kinds[p] == "sqlite"]
        if reports:
            try:
                return _read_report(reports[0])
            except _export.NsysMissing:
                if not databases:
                    raise
                return _stale(databases[0], reports[0])
        if databases:
            from gpuscope.trace.readers.nsys import _db

            return _db.read_export(databases[0])
        stats = [p for p in paths if kinds[p] in ("csv", "text")]
        if not stats:
            raise ReaderError(f"not {EXPECTED}")
        return _read_stats(stats, kinds)


def _kind(path: str) -> str | None:
    """'sqlite', 'report', 'csv' or 'text' (stats output), else None."""
    if _sniff.is_sqlite(path):
        from gpuscope.trace.readers.nsys import _db

        return "sqlite" if _db.is_export(_sniff.sqlite_names(path)) else None
    if _export.is_report(path):
        return "report"
    lines = _csv.first_lines(path, 200)
    for line in lines:
        if "," in line and rep.report_of(_csv.csv_row(line)) is not None:
            return "csv"
    if text_stats.looks_like_text_stats(lines):
        return "text"
    return None


def _asked_for(path: str) -> str | None:
    """How to read a file given by name that `sniff` did not recognise: any SQLite file as an
    export (the reader then says what is wrong with it: locked, another schema), a file named
    like a report as a report (`nsys export` then says whether it is one)."""
    if _sniff.is_sqlite(path):
        return "sqlite"
    return "report" if path.endswith((".nsys-rep", ".qdrep")) else None


def _read_report(path: str) -> Trace:
    from gpuscope.trace.readers.nsys import _db

    report = Path(path)
    with _export.exported(report, _db.is_export) as export:
        trace = _db.read_export(str(export.sqlite))
    files = (path, str(export.sqlite)) if export.kept else (path,)
    meta = dataclasses.replace(
        trace.meta,
        path=path,
        files=files,
        warnings=(*export.warnings, *trace.meta.warnings),
    )
    return dataclasses.replace(trace, meta=meta)


def _stale(database: str, report: str) -> Trace:
    """The export beside a report when nsys is not there to export the report again."""
    from gpuscope.trace.readers.nsys import _db

    trace = _db.read_export(database)
    note = (
        f"{Path(database).name} is older than {Path(report).name} and nsys is not installed "
        "to export it again: read the older export"
    )
    meta = dataclasses.replace(trace.meta, warnings=(note, *trace.meta.warnings))
    return dataclasses.replace(trace, meta=meta)


def _read_stats(paths: list[str], kinds: dict[str, str | None]) -> Trace:
    from gpuscope.trace.readers.nsys import _stats

    builder = _stats.StatsBuilder()
    skipped: list[str] = []
    formats = set()
    for path in paths:
        if kinds[path] == "text":
            tables, reasons = _stats.text_tables(path)
            skipped += reasons
            formats.add("stats-text")
        else:
            tables = _stats.csv_tables(path)
            formats.add("stats-csv")
        for table in tables:
            builder.add(table)
    if builder.empty:
        raise ReaderError(_nothing_found(skipped))
    where = paths[0] if len(paths) == 1 else str(Path(paths[0]).parent)
    return builder.build(where, tuple(paths), "+".join(sorted(formats)))


def _nothing_found(skipped: list[str]) -> str:
    cuda = [s for s in skipped if "CUDA" in s or "GPU" in s]
    if cuda:
        return (
            f"these nsys stats hold no CUDA tables ({cuda[0]}): the report has no CUDA "
            "activity; profile with `nsys profile --trace=cuda,nvtx ...`"
        )
    return (
        f"no CUDA report in this nsys stats output; expected one of "
        f"{', '.join((*rep.SUMMARIES, *rep.TRACES))}"
    )
