"""Damage one file in place, the way a crash, a disk, an editor or another tool version would.

`mutate(path, rng)` picks a family by the file's kind (SQLite, gzip, JSON, text/CSV) and one
mutation in it, rewrites the file and returns what it did. `must_warn` is set for a cut the
reader can see (the text stops mid-line, the JSON document is open, the gzip stream or the
SQLite file is shorter than it says): a reader that still succeeds must say so in a warning.
"""

from __future__ import annotations

import csv
import gzip
import random
from dataclasses import dataclass
from pathlib import Path

from tests.fuzz.seeds import kind_of

# bytes that mean something to some parser: quotes, separators, brackets, line ends, NUL,
# invalid or cut UTF-8, numbers no reader should take at face value
TOKENS = (
    b"\x00",
    b"\xff\xfe",
    b"\xe2\x82",
    b'"',
    b",",
    b",,",
    b"\n",
    b"\r",
    b"\r\n",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b"\\",
    b"\t",
    b"NaN",
    b"-1",
    b"1e999",
    b"-9223372036854775809",
    b"99999999999999999999999999",
)


@dataclass(frozen=True)
class Mutation:
    name: str  # family.operation, e.g. "csv.drop-column"
    must_warn: bool = False  # a visible cut: success must carry a warning
    locked: bool = False  # hold an exclusive lock on the database while it is read


def mutate(path: Path, rng: random.Random, locks: bool = True) -> Mutation:
    """Rewrite `path` damaged; `locks=False` leaves out the (slow) locked-database case."""
    from tests.fuzz import mutate_csv, mutate_json, mutate_sqlite

    kind = kind_of(path)
    if kind == "sqlite":
        return mutate_sqlite.mutate(path, rng, locks)
    data = path.read_bytes()
    if kind == "gzip":
        out, mutation = _gzip(data, rng)
    elif kind == "json" and rng.random() < 0.6:
        out, mutation = mutate_json.mutate(data, rng)
    elif kind == "text" and rng.random() < 0.6:
        out, mutation = mutate_csv.mutate(data, rng)
    else:
        out, mutation = mutate_bytes(data, rng, kind)
    path.write_bytes(out)
    return mutation


def _gzip(data: bytes, rng: random.Random) -> tuple[bytes, Mutation]:
    from tests.fuzz import mutate_json

    if rng.random() < 0.25:
        out, mutation = mutate_bytes(data, rng, "gzip")
        return out, Mutation(f"gzip.{mutation.name}", mutation.must_warn)
    raw = gzip.decompress(data)
    if rng.random() < 0.6:
        raw, mutation = mutate_json.mutate(raw, rng)
    else:
        raw, mutation = mutate_bytes(raw, rng, "json")
    return gzip.compress(raw, compresslevel=1, mtime=0), mutation


def visible_cut(data: bytes, cut: int, kind: str) -> bool:
    """Whether a reader can tell that `data[:cut]` lost something."""
    rest, kept = data[cut:], data[:cut]
    if kind in ("gzip", "sqlite"):
        return cut < len(data)
    if not rest.strip():
        return False  # only trailing blanks were lost
    if kind == "json":
        return True
    return _row_cut_short(data, kept)


def _row_cut_short(data: bytes, kept: bytes) -> bool:
    """Text: the last line kept has fewer fields than the CSV header, or an open quote.

    A cut at a line end, or inside the last field, looks like a complete file (real profilers'
    CSVs and AMD's documented samples often lack the final line end): no reader can see it."""
    if kept.endswith((b"\n", b"\r")):
        return False
    last = kept.rsplit(b"\n", 1)[-1].decode("utf-8", "replace")
    if last.count('"') % 2:
        return True
    lines = data[:65536].decode("utf-8", "replace").splitlines()
    try:
        widths = [len(row) for row in csv.reader(lines[:400])]
        fields = len(next(csv.reader([last]), []))
    except csv.Error:
        return False
    header = next((w for w in widths if w >= 2), 0)
    return fields < header


def mutate_bytes(data: bytes, rng: random.Random, kind: str) -> tuple[bytes, Mutation]:
    """One byte-level change; names start with "bytes."."""
    if not data:
        return data, Mutation("bytes.empty")
    op = rng.choice(_BYTE_OPS)
    if op == "truncate":
        cut = rng.randrange(len(data))
        return data[:cut], Mutation("bytes.truncate", visible_cut(data, cut, kind))
    return _BYTE_FUNCS[op](data, rng), Mutation(f"bytes.{op}")


def _flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4, 16))):
        out[rng.randrange(len(out))] ^= rng.randrange(1, 256)
    return bytes(out)


def _insert(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data) + 1)
    junk = rng.choice(TOKENS) if rng.random() < 0.7 else rng.randbytes(rng.randrange(1, 64))
    return data[:at] + junk + data[at:]


def _delete(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data))
    return data[:at] + data[at + rng.randrange(1, 65) :]


def _duplicate(data: bytes, rng: random.Random) -> bytes:
    start = rng.randrange(len(data))
    chunk = data[start : start + rng.randrange(1, 4096)]
    at = rng.randrange(len(data) + 1)
    return data[:at] + chunk + data[at:]


def _line_ends(data: bytes, rng: random.Random) -> bytes:
    return data.replace(b"\n", rng.choice((b"\r\n", b"\r", b"\n\n")))


def _bom(data: bytes, rng: random.Random) -> bytes:
    return rng.choice((b"\xef\xbb\xbf", b"\xff\xfe", b"\x00")) + data


def _empty(data: bytes, rng: random.Random) -> bytes:
    return rng.choice((b"", b"\n", b" ", b"\x00"))


_BYTE_FUNCS = {
    "flip": _flip,
    "insert": _insert,
    "delete": _delete,
    "duplicate": _duplicate,
    "line-ends": _line_ends,
    "bom": _bom,
    "empty": _empty,
}
# truncation is the damage a crashed profiler leaves: weighted up
_BYTE_OPS = (
    ("truncate",) * 5
    + ("flip",) * 3
    + ("insert", "insert", "delete", "delete")
    + (
        "duplicate",
        "line-ends",
        "bom",
        "empty",
    )
)
