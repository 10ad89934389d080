"""CSV files of the profilers (rocprof, rocprofv3, nsys stats, ncu): columns by header name.

Every tool has renamed, reordered and added columns across versions, so columns are found by
name (case-insensitive, several spellings allowed) and never by position. Kernel names hold
commas and quotes: fields are parsed with a real CSV parser.

Fast path: numpy's C `loadtxt` reads the wanted numeric columns and the text columns straight
from the file (faster than the csv module's bare loop). Anything it cannot take — empty cells,
`n/a`, thousands separators, a row cut short, rows with extra unquoted commas — goes through the
csv module row by row, where `fix_row` may repair a row and a last row cut mid-way is dropped with
a warning.
"""

from __future__ import annotations

import csv
import io
import math
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace.model import F64, I64

HEADER_SCAN_LINES = 400  # ncu writes its ==PROF== lines and the app's output first
_TAIL = 1 << 16


def norm(name: str) -> str:
    """A header cell as compared: stripped, lower case, BOM and quotes removed."""
    return name.strip().strip('"').lstrip("\ufeff").strip().lower()


@dataclass(frozen=True)
class Header:
    """Where the header is and its cells."""

    line: int  # 0-based line number of the header
    cells: tuple[str, ...]

    def index(self, *spellings: str) -> int | None:
        """Position of the first of `spellings` present (case-insensitive), else None."""
        wanted = [norm(s) for s in spellings]
        normalised = [norm(c) for c in self.cells]
        for name in wanted:
            if name in normalised:
                return normalised.index(name)
        return None

    def has(self, *spellings: str) -> bool:
        return self.index(*spellings) is not None


def first_lines(path: str, count: int = HEADER_SCAN_LINES, size: int = 1 << 20) -> list[str]:
    """Up to `count` lines from the head of a text file (invalid UTF-8 replaced)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(size)
    except OSError:
        return []
    text = head.decode("utf-8", "replace")
    lines = text.splitlines()
    if len(head) == size and lines:
        lines = lines[:-1]  # the last one may be cut by the read size
    return lines[:count]


def find_header(
    path: str, test: Callable[[tuple[str, ...]], bool], scan: int = HEADER_SCAN_LINES
) -> Header | None:
    """The first line (within `scan` lines) whose cells pass `test`."""
    for number, line in enumerate(first_lines(path, scan)):
        if "," not in line:
            continue
        cells = tuple(next(csv.reader([line]), []))
        if test(cells):
            return Header(number, cells)
    return None


@dataclass
class Columns:
    """The columns read from one CSV file, by the spelling the reader asked for."""

    path: str
    header: Header
    rows: int
    data: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def ints(self, key: str) -> I64:
        value: I64 = self.data[key]
        return value

    def floats(self, key: str) -> F64:
        value: F64 = self.data[key]
        return value

    def texts(self, key: str) -> list[str]:
        value: list[str] = self.data[key]
        return value


def read_columns(
    path: str,
    header: Header,
    *,
    ints: dict[str, int | None] | None = None,
    floats: dict[str, int | None] | None = None,
    texts: dict[str, int | None] | None = None,
    skip_after_header: int = 0,
    fix_row: Callable[[list[str]], list[str]] | None = None,
    what: str = "CSV",
) -> Columns:
    """Read the named columns (key -> column position, None = absent) of the rows below `header`.

    Absent int columns are -1, absent float columns NaN, absent text columns "". Integer cells
    that hold floats are truncated; invalid integers are -1 and invalid floats NaN.
    """
    ints, floats, texts = ints or {}, floats or {}, texts or {}
    width = len(header.cells)
    skip = header.line + 1 + skip_after_header
    columns = Columns(path, header, 0)
    if not _tail_is_complete(path, width):
        return _read_slow(path, columns, skip, ints, floats, texts, width, fix_row, what, True)
    try:
        columns = _read_fast(path, columns, skip, ints, floats, texts)
    except (
        ValueError,
        IndexError,
        UnicodeDecodeError,
        OverflowError,
        csv.Error,
        DeprecationWarning,
    ):
        return _read_slow(path, columns, skip, ints, floats, texts, width, fix_row, what)
    if not columns.rows and ends_mid_line(path):  # the header, whole fields, is the last line
        columns.warnings.append("the header line is cut short (the writer died?): no rows")
    return columns


def _present(spec: dict[str, int | None]) -> dict[str, int]:
    return {k: v for k, v in spec.items() if v is not None}


def _read_fast(
    path: str,
    out: Columns,
    skip: int,
    ints: dict[str, int | None],
    floats: dict[str, int | None],
    texts: dict[str, int | None],
) -> Columns:
    options: dict[str, Any] = {
        "delimiter": ",",
        "quotechar": '"',
        "comments": None,
        "skiprows": skip,
        "encoding": "utf-8",
        "ndmin": 2,
    }
    rows: int | None = None
    for spec, dtype in ((ints, np.int64), (floats, np.float64), (texts, object)):
        present = _present(spec)
        if not present:
            continue
        keys = list(present)
        with warnings.catch_warnings():  # a header without rows is read as zero rows
            warnings.filterwarnings("ignore", "loadtxt: input contained no data", UserWarning)
            # numpy 1.2x parses an integer cell that is not one through a float, with a
            # DeprecationWarning (newer releases refuse it): a cell for the careful reader too
            warnings.simplefilter("error", DeprecationWarning)
            table = np.loadtxt(path, dtype=dtype, usecols=[present[k] for k in keys], **options)
        if rows is not None and len(table) != rows:
            raise ValueError("columns of different lengths")
        rows = len(table)
        for i, key in enumerate(keys):
            column = table[:, i]
            out.data[key] = column.tolist() if dtype is object else np.ascontiguousarray(column)
    if rows is None:
        rows = _count_rows(path, skip)
    out.rows = rows
    _fill_absent(out, ints, floats, texts)
    return out


def _count_rows(path: str, skip: int) -> int:
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        return sum(1 for row in csv.reader(handle) if row) - skip


def _fill_absent(
    out: Columns,
    ints: dict[str, int | None],
    floats: dict[str, int | None],
    texts: dict[str, int | None],
) -> None:
    for key, position in ints.items():
        if position is None:
            out.data[key] = np.full(out.rows, -1, np.int64)
    for key, position in floats.items():
        if position is None:
            out.data[key] = np.full(out.rows, math.nan, np.float64)
    for key, position in texts.items():
        if position is None:
            out.data[key] = [""] * out.rows


def ends_mid_line(path: str) -> bool:
    """True when the file's last byte is not a line end (a profiler's CSV always has one)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.path.getsize(path) - 1))
            return handle.read(1) not in (b"", b"\n", b"\r")
    except OSError:
        return False


def _tail_is_complete(path: str, width: int) -> bool:
    """False when the last line looks cut (fewer fields than the header, an open quote)."""
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        handle.seek(max(0, size - _TAIL))
        tail = handle.read()
    if not tail.strip() or tail.endswith(b"\n"):
        return True
    last = tail.rsplit(b"\n", 1)[-1].decode("utf-8", "replace")
    if last.count('"') % 2:
        return False
    try:
        return len(next(csv.reader([last]), [])) >= width
    except csv.Error:  # a lone \r, a NUL: the careful path decides
        return False


def _read_slow(
    path: str,
    out: Columns,
    skip: int,
    ints: dict[str, int | None],
    floats: dict[str, int | None],
    texts: dict[str, int | None],
    width: int,
    fix_row: Callable[[list[str]], list[str]] | None,
    what: str,
    tail_cut: bool = False,
) -> Columns:
    """Row by row; `tail_cut`: the last line is known to be cut (an open quote, too few fields),
    so it is dropped whatever it parses to."""
    wanted = {**_present(ints), **_present(floats), **_present(texts)}
    values: dict[str, list[str]] = {key: [] for key in wanted}
    bad = 0
    last_cut = False
    with _rows(path, skip) as rows:
        for row in rows:
            if tail_cut and rows.at_end():
                last_cut = True
                break
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if fix_row is not None:
                row = fix_row(row)
            if len(row) < width:
                if rows.at_end():
                    last_cut = True
                    break
                bad += 1
                continue
            for key, position in wanted.items():
                values[key].append(row[position])
    out.rows = len(next(iter(values.values()))) if values else 0
    for key in _present(ints):
        out.data[key] = _to_ints(values[key])
    for key in _present(floats):
        out.data[key] = _to_floats(values[key])
    for key in _present(texts):
        out.data[key] = values[key]
    _fill_absent(out, ints, floats, texts)
    if last_cut:
        out.warnings.append(
            f"the last row is cut short (the writer died?): read the {out.rows:,} complete rows"
        )
    elif tail_cut:  # no row below the header: the header is the line cut
        out.warnings.append("the header line is cut short (the writer died?): no rows")
    if bad:
        out.warnings.append(f"skipped {bad:,} rows with fewer fields than the {what} header")
    if rows.error:
        out.warnings.append(f"stopped at a row the CSV parser rejects ({rows.error}): read "
                            f"the {out.rows:,} rows before it")  # fmt: skip
    return out


class _Rows:
    """csv rows of a file from line `skip` on; `at_end()` says whether the last row was read."""

    def __init__(self, path: str, skip: int) -> None:
        self.handle = open(path, encoding="utf-8", errors="replace", newline="")  # noqa: SIM115
        for _ in range(skip):
            self.handle.readline()
        self.reader = csv.reader(self.handle)
        self.error = ""
        self.pending = self._next()

    def __enter__(self) -> _Rows:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def _next(self) -> list[str] | None:
        try:
            return next(self.reader)
        except StopIteration:
            return None
        except csv.Error as error:  # e.g. a field over the size limit: the rest is unreadable
            self.error = str(error)
            return None

    def __iter__(self) -> _Rows:
        return self

    def __next__(self) -> list[str]:
        row = self.pending
        if row is None:
            self.handle.close()
            raise StopIteration
        self.pending = self._next()
        return row

    def at_end(self) -> bool:
        return self.pending is None


def _rows(path: str, skip: int) -> _Rows:
    try:
        return _Rows(path, skip)
    except OSError as error:
        raise ReaderError(f"cannot read ({error.strerror or error})") from None


def _to_ints(values: Sequence[str]) -> I64:
    try:
        return np.array(values, np.int64)
    except (ValueError, OverflowError):
        return np.array([parse_int(v) for v in values], np.int64)


def _to_floats(values: Sequence[str]) -> F64:
    try:
        return np.array(values, np.float64)
    except ValueError:
        return np.array([parse_float(v) for v in values], np.float64)


def parse_int(text: str) -> int:
    """An integer cell: '12', '1,980,000', '12.0', '0x1f'; -1 for anything else."""
    text = text.strip().replace(",", "")
    try:
        value = int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        number = parse_float(text)
        return int(number) if math.isfinite(number) and abs(number) < 2**63 else -1
    return value if -(2**63) <= value < 2**63 else -1


def parse_float(text: str) -> float:
    """A float cell ('1,234.5', '4.671e-04'); NaN for empty, 'n/a' and junk."""
    try:
        return float(text.strip().replace(",", ""))
    except ValueError:
        return math.nan


def csv_row(line: str) -> list[str]:
    """One line parsed as CSV (split at commas when the CSV parser rejects it)."""
    try:
        return next(csv.reader(io.StringIO(line)), [])
    except csv.Error:  # a lone \r, a field over the size limit
        return line.split(",")
