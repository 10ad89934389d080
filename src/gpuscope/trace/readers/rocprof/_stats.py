"""rocprof v1 summary CSVs: `*.stats.csv` (kernels), `*.hip_stats.csv` / `*.hsa_stats.csv` (API
calls, host time) and `*.copy_stats.csv` (copies and fills).

All four share the header `"Name","Calls","TotalDurationNs","AverageNs","Percentage"`, so what a
file sums up comes from its name. Before ROCm 6.0 only the header was quoted: a name holding
commas spills over several fields, so a row is mended as "the last four fields are numbers, the
rest is the name".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace import _csv
from gpuscope.trace._csv import Header
from gpuscope.trace.model import API, I8, KERNEL, MEMCPY, MEMSET
from gpuscope.trace.readers.rocprof._piece import (
    BARRIER_NAMES,
    Piece,
    Table,
    full,
    strip_kd,
    truncation,
)

_HEADER = ["name", "calls", "totaldurationns", "averagens", "percentage"]
_WIDTH = len(_HEADER)


def stats_header(path: str) -> Header | None:
    """The header of a rocprof v1 stats CSV (exactly the five columns), or None."""
    return _csv.find_header(path, is_stats_header, scan=2)


def is_stats_header(cells: tuple[str, ...]) -> bool:
    return [_csv.norm(c) for c in cells] == _HEADER


def stats_kind(path: str) -> str:
    """ "kernels", "hip", "hsa" or "copies", from the file name rocprof gave it."""
    name = Path(path).name.lower()
    for suffix, kind in (("hip_stats.csv", "hip"), ("hsa_stats.csv", "hsa")):
        if name.endswith(suffix):
            return kind
    return "copies" if name.endswith("copy_stats.csv") else "kernels"


def read_stats(path: str) -> Piece:
    header = stats_header(path)
    if header is None:
        raise ReaderError('expected rocprof\'s stats header "Name","Calls","TotalDurationNs",'
                          '"AverageNs","Percentage"')  # fmt: skip
    columns = _csv.read_columns(
        path,
        header,
        ints={"calls": 1, "total": 2, "average": 3},
        texts={"name": 0},
        fix_row=_mend,
        what="rocprof stats",
    )
    _check(columns)
    kind = stats_kind(path)
    names = columns.texts("name")
    totals = _table(kind, names, columns)
    if kind == "kernels":  # barrier packets of the op trace are not kernels
        totals = totals.take(np.array([n not in BARRIER_NAMES for n in totals.names], bool))
    unquoted = _unquoted(path, header)
    said, cut = truncation(columns.warnings)
    return Piece(
        path,
        f"{kind}-stats" + ("/unquoted" if unquoted else ""),
        kind="stats",
        summary=kind,
        totals=totals,
        provides={"totals"},
        warnings=said,
        truncated=cut,
    )


def _table(kind: str, names: list[str], columns: _csv.Columns) -> Table:
    size = columns.rows
    return Table(
        strip_kd(names) if kind == "kernels" else list(names),
        {
            "kind": _kinds(kind, names),
            "count": columns.ints("calls"),
            "total_ns": columns.ints("total"),
            "min_ns": full(size, -1),
            "max_ns": full(size, -1),
        },
    )


def _mend(row: list[str]) -> list[str]:
    """A pre-ROCm-6 row whose unquoted name held commas: re-join everything before the numbers."""
    if len(row) <= _WIDTH:
        return row
    return [",".join(row[: -(_WIDTH - 1)]), *row[-(_WIDTH - 1) :]]


def _check(columns: _csv.Columns) -> None:
    """rocprof writes AverageNs = TotalDurationNs // Calls: rows that disagree were mis-split."""
    calls, total, average = columns.ints("calls"), columns.ints("total"), columns.ints("average")
    called = calls > 0
    expected = total[called] // calls[called]
    if (expected != average[called]).any() or (calls < 0).any():
        raise ReaderError("stats rows whose numbers do not add up (AverageNs is not "
                          "TotalDurationNs / Calls): a name was split at its commas")  # fmt: skip


def _kinds(kind: str, names: list[str]) -> I8:
    if kind in ("kernels", "hip", "hsa"):
        return np.full(len(names), KERNEL if kind == "kernels" else API, np.int8)
    return np.array([MEMSET if "fill" in n.lower() else MEMCPY for n in names], np.int8)


def _unquoted(path: str, header: Header) -> bool:
    lines = _csv.first_lines(path, header.line + 2)
    return len(lines) > header.line + 1 and not lines[header.line + 1].startswith('"')
