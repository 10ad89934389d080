"""Cheap, cached looks at a file for the readers' `sniff`: its first bytes (gzip undone), whether
it is SQLite, and the tables and views of a SQLite file. Readers open SQLite read-only here."""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import zlib
from collections import OrderedDict
from contextlib import closing
from pathlib import Path
from urllib.parse import quote

from gpuscope.errors import ReaderError

HEAD_BYTES = 1 << 20
SQLITE_MAGIC = b"SQLite format 3\x00"


def _stamp(path: str) -> tuple[str, int, int]:
    stat = os.stat(path)
    return os.path.abspath(path), stat.st_size, stat.st_mtime_ns


def head(path: str, size: int = HEAD_BYTES) -> bytes:
    """The first `size` bytes of the file, decompressed when it is gzip; b"" if unreadable.
    Several readers sniff the same file: the heads are cached, up to HEAD_CACHE_BYTES in all
    (least recently used first out), so a folder of many big files does not hold 1 MB each."""
    try:
        key = (*_stamp(path), size)
    except OSError:
        return b""
    with _LOCK:
        found = _HEADS.get(key)
        if found is not None:
            _HEADS.move_to_end(key)
            return found
    try:
        with open(path, "rb") as handle:
            start = handle.read(size)
        data = start if start[:2] != b"\x1f\x8b" else gunzip_head(path, size)
    except OSError:
        return b""
    _remember(key, data)
    return data


HEAD_CACHE_BYTES = 32 << 20
_HEADS: OrderedDict[tuple[str, int, int, int], bytes] = OrderedDict()
_held = [0]  # bytes in _HEADS
_LOCK = threading.Lock()  # readers may sniff from several threads


def forget() -> None:
    """Let every cached head go (a caller whose workers read the files themselves)."""
    with _LOCK:
        _HEADS.clear()
        _held[0] = 0


def _remember(key: tuple[str, int, int, int], data: bytes) -> None:
    with _LOCK:
        if key in _HEADS:
            return
        _HEADS[key] = data
        _held[0] += len(data)
        while _held[0] > HEAD_CACHE_BYTES and len(_HEADS) > 1:
            _, dropped = _HEADS.popitem(last=False)
            _held[0] -= len(dropped)


def gunzip_head(path: str, size: int) -> bytes:
    """Up to `size` bytes of a gzip file's content: as much as decompresses when the stream is
    cut short or corrupt further on (the readers say what is wrong with it)."""
    inflater = zlib.decompressobj(wbits=31)
    out = bytearray()
    with open(path, "rb") as handle:
        while len(out) < size and not inflater.eof and (block := handle.read(1 << 16)):
            try:
                out += inflater.decompress(block)
            except zlib.error:
                break
    return bytes(out[:size])


def is_sqlite(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def sqlite_cut(path: str) -> str:
    """Why a SQLite file looks cut short ("" when it does not): it is smaller than its header
    says, or not a whole number of pages. SQLite reads such a file without complaint as long as
    no query touches a missing page."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
        size = os.path.getsize(path)
    except OSError:
        return ""
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        return ""
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(header[28:32], "big")
    if pages and header[24:28] == header[92:96] and size < pages * page:  # a valid page count
        return f"the database is {size:,} bytes where its header says {pages * page:,}"
    if page >= 512 and size % page:
        return f"the database is {size:,} bytes, not a whole number of {page:,}-byte pages"
    return ""


def sqlite_names(path: str) -> frozenset[str]:
    """Names of the tables and views of a SQLite file (empty when it is not one or unreadable)."""
    if not is_sqlite(path):
        return frozenset()
    try:
        return _sqlite_names(*_stamp(path))
    except (OSError, sqlite3.Error, ValueError):  # ValueError: a name that is not UTF-8
        return frozenset()


@functools.lru_cache(maxsize=64)
def _sqlite_names(path: str, _size: int, _mtime: int) -> frozenset[str]:
    with closing(connect(path)) as db:  # a connection's own `with` ends a transaction, not it
        rows = db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        return frozenset(str(row[0]) for row in rows)


def connect(path: str) -> sqlite3.Connection:
    """A read-only connection: gpuscope never writes to a profiler's database — nor beside it:
    a database in WAL mode opened with mode=ro gets NAME-shm and NAME-wal files created next to
    it, so one whose WAL is empty (no NAME-wal file) is opened immutable."""
    resolved = Path(path).resolve()
    flags = "immutable=1" if _wal_mode(resolved) and not _beside(resolved, "-wal") else "mode=ro"
    uri = f"file:{quote(os.fsencode(resolved))}?{flags}"  # any name's bytes
    try:
        return sqlite3.connect(uri, uri=True, timeout=2.0, check_same_thread=False)
    except sqlite3.Error as error:
        raise ReaderError(f"cannot open the SQLite database ({error})") from None


def _wal_mode(path: Path) -> bool:
    """The database header's read / write versions (bytes 18, 19) are 2 in WAL mode."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return False
    return header.startswith(b"SQLite format 3\x00") and header[18:20] == b"\x02\x02"


def _beside(path: Path, suffix: str) -> bool:
    return path.with_name(path.name + suffix).exists()


def sqlite_error(error: sqlite3.Error | UnicodeDecodeError, expected: str) -> ReaderError:
    """A one-line ReaderError for a database that cannot be read as `expected`, told apart by
    SQLite's result code (Python ≥ 3.11) or the exception's class, never by its message."""
    if isinstance(error, UnicodeDecodeError):  # text (or SQLite's message quoting it) not UTF-8
        return ReaderError(f"corrupt SQLite database (text that is not UTF-8: {error.reason}); "
                           f"expected {expected}")  # fmt: skip
    text = str(error)
    code = getattr(error, "sqlite_errorcode", None)  # the extended code; its low byte the primary
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in _SQLITE_BUSY:
        return ReaderError(f"the database is locked by another process ({text}); retry when the "
                           "profiler has finished writing it")  # fmt: skip
    corrupt = primary in _SQLITE_CORRUPT if primary is not None else _corrupt_by_class(error)
    if corrupt:
        return ReaderError(f"corrupt SQLite database ({text}); expected {expected}")
    if primary is None and isinstance(error, sqlite3.OperationalError):  # locked, among others
        return ReaderError(f"cannot read as {expected} ({text}); if a profiler is still writing "
                           "it, retry when it has finished")  # fmt: skip
    return ReaderError(f"cannot read as {expected} ({text})")


_SQLITE_BUSY = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
_SQLITE_CORRUPT = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB


def _corrupt_by_class(error: sqlite3.Error) -> bool:
    """Python 3.10 has no result code: SQLite's CORRUPT and NOTADB come as a DatabaseError
    proper, BUSY and LOCKED as an OperationalError (with other failures)."""
    return type(error) is sqlite3.DatabaseError


def varint(data: bytes, pos: int) -> tuple[int, int]:
    """A protobuf varint at `pos`: (value, next position), or (-1, -1) when it is cut or too
    long (the protobuf readers sniff their files' first fields with it)."""
    value = shift = 0
    for _ in range(10):
        if pos >= len(data):
            return -1, -1
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos
    return -1, -1
