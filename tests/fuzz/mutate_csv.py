"""CSV damage: columns dropped, duplicated, shuffled or renamed, the header lost or repeated, rows
dropped, shuffled, cut or widened, and cells holding what a numeric column should never hold."""

from __future__ import annotations

import csv
import io
import random
import sys

from tests.fuzz.mutate import Mutation, mutate_bytes

Row = list[str]
Rows = list[list[str]]
Table = tuple[Row, Rows]

CELLS = (
    "",
    " ",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "-1",
    "0",
    "1.5",
    "-9223372036854775808",
    "9223372036854775807",
    "9223372036854775808",
    "99999999999999999999999999",
    "1e308",
    "1e999",
    "-1e308",
    "abc",
    "0x1f",
    "n/a",
    "1,234",
    '"',
    "1_000",
    "\u0661\u0662",  # Arabic-Indic digits: int() takes them
    "\u22121",  # a minus sign that is not ASCII
    "\x00",
)


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, Mutation]:
    """A change of the CSV's columns, header, rows or cells; bytes when there is no header."""
    text = data.decode("utf-8", "replace")
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error:
        return mutate_bytes(data, rng, "text")
    at = next((i for i, row in enumerate(rows[:400]) if len(row) >= 2), None)
    if at is None:
        return mutate_bytes(data, rng, "text")
    op = rng.choice(_OPS)
    head, header, body = rows[:at], rows[at], rows[at + 1 :]
    header, body = _FUNCS[op](header, body, rng)
    return _write(head, header, body, rng), Mutation(f"csv.{op}")


def _write(head: Rows, header: Row, body: Rows, rng: random.Random) -> bytes:
    out = io.StringIO()
    ending = rng.choice(("\n", "\n", "\r\n"))
    quoting = rng.choice((csv.QUOTE_MINIMAL,) * 3 + (csv.QUOTE_ALL,))
    writer = csv.writer(out, lineterminator=ending, quoting=quoting)
    for row in head:
        out.write(",".join(row) + ending)  # ncu's ==PROF== lines and similar: as they were
    if header:
        writer.writerow(_writable(header))
    writer.writerows(map(_writable, body))
    return out.getvalue().replace(_NUL_STAND_IN, "\x00").encode()


# Python 3.10's csv writer refuses a NUL ("need to escape"), which 3.11 and later write as it is
# (unquoted, as any other character): a stand-in written instead and put back makes the same bytes
_NUL_STAND_IN = "\x00" if sys.version_info >= (3, 11) else "\ue000"


def _writable(row: Row) -> Row:
    return [cell.replace("\x00", _NUL_STAND_IN) for cell in row]


def _column(header: Row, rng: random.Random) -> int:
    return rng.randrange(len(header))


def _drop_column(header: Row, body: Rows, rng: random.Random) -> Table:
    j = _column(header, rng)
    return header[:j] + header[j + 1 :], [row[:j] + row[j + 1 :] for row in body]


def _duplicate_column(header: Row, body: Rows, rng: random.Random) -> Table:
    j, k = _column(header, rng), _column(header, rng)

    def copy(row: Row) -> Row:
        return row[:k] + row[j : j + 1] + row[k:] if j < len(row) else row

    return copy(header), [copy(row) for row in body]


def _shuffle_columns(header: Row, body: Rows, rng: random.Random) -> Table:
    order = rng.sample(range(len(header)), len(header))

    def move(row: Row) -> Row:
        return [row[i] for i in order if i < len(row)] + row[len(header) :]

    return move(header), [move(row) for row in body]


def _rename_header(header: Row, body: Rows, rng: random.Random) -> Table:
    j = _column(header, rng)
    old = header[j]
    new = rng.choice(("", "x", old.upper(), f" {old} ", old[:-1], old + "_2", rng.choice(header)))
    return [*header[:j], new, *header[j + 1 :]], body


def _swap_values(header: Row, body: Rows, rng: random.Random) -> Table:
    """Two columns' values exchanged under their headers (start after end, names in numbers)."""
    j, k = _column(header, rng), _column(header, rng)
    out = []
    for row in body:
        row = list(row)
        if j < len(row) and k < len(row):
            row[j], row[k] = row[k], row[j]
        out.append(row)
    return header, out


def _cells(header: Row, body: Rows, rng: random.Random) -> Table:
    out = [list(row) for row in body]
    for _ in range(rng.choice((1, 1, 2, 5, 20))):
        if not out:
            break
        row = rng.choice(out)
        if row:
            row[rng.randrange(len(row))] = rng.choice(CELLS)
    return header, out


def _whole_column(header: Row, body: Rows, rng: random.Random) -> Table:
    j, value = _column(header, rng), rng.choice(CELLS)
    return header, [[*row[:j], value, *row[j + 1 :]] if j < len(row) else row for row in body]


def _rows(header: Row, body: Rows, rng: random.Random) -> Table:
    choice = rng.randrange(5)
    if choice == 0:
        return header, rng.sample(body, len(body))
    if choice == 1:
        return header, [row for row in body if rng.random() < 0.5]
    if choice == 2:
        return header, []
    if choice == 3:
        return header, body + body
    return header, body[::-1]


def _row_width(header: Row, body: Rows, rng: random.Random) -> Table:
    out = [list(row) for row in body]
    if out:
        i = rng.randrange(len(out))
        n = rng.randrange(1, 4)
        out[i] = out[i][:-n] if rng.random() < 0.5 else out[i] + ["x"] * n
    return header, out


def _header_place(header: Row, body: Rows, rng: random.Random) -> Table:
    if rng.random() < 0.5 or not body:
        return [], body  # no header at all
    at = rng.randrange(len(body))
    return header, [*body[:at], header, *body[at:]]


_FUNCS = {
    "drop-column": _drop_column,
    "duplicate-column": _duplicate_column,
    "shuffle-columns": _shuffle_columns,
    "rename-header": _rename_header,
    "swap-values": _swap_values,
    "cells": _cells,
    "whole-column": _whole_column,
    "rows": _rows,
    "row-width": _row_width,
    "header-place": _header_place,
}
_OPS = (*tuple(_FUNCS), "cells", "cells", "whole-column", "drop-column")
