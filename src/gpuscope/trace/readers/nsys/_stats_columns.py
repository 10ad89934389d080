"""Columns of a big `nsys stats` CSV (`cuda_gpu_trace` of a long run: millions of rows) read in
chunks: each chunk of cells becomes numpy arrays at once, and text columns become codes into a
vocabulary (a few hundred kernel names), so memory stays near the size of the result.

Empty cells (a memcpy has no grid, a kernel no size) are -1 / NaN. A last row cut short (the
file does not end with a newline) is dropped with a warning, as `_csv` does.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from operator import itemgetter
from typing import Any

import numpy as np

from gpuscope.trace._csv import parse_float, parse_int
from gpuscope.trace.model import F64, I32, I64

CHUNK = 1 << 16


@dataclass
class Columns:
    """The columns read, with the accessors of `_csv.Columns` plus `coded` text columns."""

    rows: int = 0
    data: dict[str, Any] = field(default_factory=dict)
    vocab: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    truncated: bool = False

    def ints(self, key: str) -> I64:
        value: I64 = self.data[key]
        return value

    def floats(self, key: str) -> F64:
        value: F64 = self.data[key]
        return value

    def coded(self, key: str) -> tuple[I32, list[str]]:
        """(code of each row, the distinct values): `values[codes[i]]` is row i's text."""
        codes: I32 = self.data[key]
        return codes, self.vocab[key]

    def texts(self, key: str) -> list[str]:
        codes, values = self.coded(key)
        return [values[c] for c in codes]


def read(
    rows: Iterable[list[str]],
    width: int,
    ints: dict[str, int | None],
    floats: dict[str, int | None],
    texts: dict[str, int | None],
    few: frozenset[str] = frozenset(),
) -> Columns:
    """Columns (key -> position, None = absent) of `rows`; rows shorter than `width` skipped.

    Integer columns named in `few` hold few distinct values (grid and block sizes, streams):
    they are coded like text and each distinct value converted once."""
    chunks = _Chunks(width, {k: v for k, v in ints.items() if k not in few}, floats,
                     {**texts, **{k: v for k, v in ints.items() if k in few}})  # fmt: skip
    iterator = iter(rows)
    while chunk := list(islice(iterator, CHUNK)):
        chunks.add(chunk)
    out = chunks.result()
    for key in few & ints.keys():
        _decode(out, key, [parse_int(v) if v else -1 for v in out.vocab.pop(key)], np.int64)
    for key in few & floats.keys():
        _decode(out, key, [parse_float(v) for v in out.vocab.pop(key)], np.float64)
    return out


def _decode(out: Columns, key: str, values: list[Any], dtype: Any) -> None:
    codes = out.data[key]
    out.data[key] = np.array(values, dtype)[codes] if values else codes.astype(dtype)


class _Chunks:
    """Converts the rows chunk by chunk; text columns are coded as they come."""

    def __init__(
        self,
        width: int,
        ints: dict[str, int | None],
        floats: dict[str, int | None],
        texts: dict[str, int | None],
    ) -> None:
        self.width = width
        self.ints, self.floats, self.texts = ints, floats, texts
        self.parts: dict[str, list[Any]] = {key: [] for key in (*ints, *floats, *texts)}
        self.codes: dict[str, dict[str, int]] = {key: {} for key in texts}
        self.short = 0

    def add(self, chunk: list[list[str]]) -> None:
        if min(map(len, chunk)) < self.width:
            self.short += sum(1 for row in chunk if 0 < len(row) < self.width)
            chunk = [row for row in chunk if len(row) >= self.width]
        size = len(chunk)
        for key, at in self.ints.items():
            self.parts[key].append(_ints(_cells(chunk, at)) if at is not None else _fill(size, -1))
        for key, at in self.floats.items():
            column = _floats(_cells(chunk, at)) if at is not None else _fill(size, math.nan)
            self.parts[key].append(column)
        for key, at in self.texts.items():
            column = _cells(chunk, at) if at is not None else [""] * size
            self.parts[key].append(_code(column, self.codes[key]))

    def result(self) -> Columns:
        out = Columns()
        for key, pieces in self.parts.items():
            dtype = (
                np.int32 if key in self.texts else np.float64 if key in self.floats else np.int64
            )
            out.data[key] = np.concatenate(pieces) if pieces else np.zeros(0, dtype)
        out.vocab = {key: list(codes) for key, codes in self.codes.items()}
        out.rows = len(next(iter(out.data.values()))) if out.data else 0
        if self.short:
            out.warnings.append(f"skipped {self.short:,} rows with fewer fields than the header")
        return out


def _cells(chunk: list[list[str]], at: int) -> list[str]:
    return list(map(itemgetter(at), chunk))


def _fill(size: int, value: float) -> Any:
    return np.full(size, value, np.int64 if value == -1 else np.float64)


def _code(column: list[str], codes: dict[str, int]) -> I32:
    """Codes of the values (new values get the next codes), two C-level passes."""
    found = list(map(codes.get, column))
    if None in found:
        for value in dict.fromkeys(column):
            codes.setdefault(value, len(codes))
        found = list(map(codes.get, column))
    return np.array(found, np.int32)


def _ints(cells: list[str]) -> I64:
    try:  # empty cells are common (a memcpy has no grid): still the fast path
        return np.array([int(c) if c else -1 for c in cells], np.int64)
    except (ValueError, OverflowError):  # "1,024", "12.0", junk: the lenient parser
        return np.array([parse_int(c) if c else -1 for c in cells], np.int64)


def _floats(cells: list[str]) -> F64:
    try:
        return np.array([float(c) if c else math.nan for c in cells], np.float64)
    except ValueError:
        return np.array([parse_float(c) if c else math.nan for c in cells], np.float64)


def read_file(
    path: str,
    skip: int,
    width: int,
    ints: dict[str, int | None],
    floats: dict[str, int | None],
    texts: dict[str, int | None],
    few: frozenset[str] = frozenset(),
) -> Columns:
    """`read` of the csv rows of `path` after its first `skip` lines. A last row without its
    newline (the writer died mid-row) is dropped with a warning."""
    cut = not _ends_with_newline(path)
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        for _ in range(skip):
            handle.readline()
        found = read(
            _all_but_last(csv.reader(handle)) if cut else csv.reader(handle),
            width,
            ints,
            floats,
            texts,
            few,
        )
    if cut:
        found.truncated = True
        found.warnings.insert(
            0,
            f"the last row is cut short (the writer died?): read the {found.rows:,} complete rows",
        )
    return found


def _all_but_last(rows: Iterator[list[str]]) -> Iterator[list[str]]:
    previous: list[str] | None = None
    for row in rows:
        if previous is not None:
            yield previous
        previous = row


def _ends_with_newline(path: str) -> bool:
    size = os.path.getsize(path)
    if size == 0:
        return True
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1) in (b"\n", b"\r")
