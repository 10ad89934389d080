"""The cached file heads of `trace._sniff`: bounded in bytes, least recently used out first,
and a changed file is read again."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from gpuscope.trace import _sniff


@pytest.fixture(autouse=True)
def empty_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    _sniff.forget()
    monkeypatch.setattr(_sniff, "HEAD_CACHE_BYTES", 3000)


def files(tmp_path: Path, count: int, size: int = 1000) -> list[str]:
    paths = []
    for i in range(count):
        path = tmp_path / f"f{i}.json"
        path.write_bytes(bytes([65 + i % 26]) * size)
        paths.append(str(path))
    return paths


def test_the_cache_holds_at_most_its_bytes_and_drops_the_least_recent(tmp_path: Path) -> None:
    a, b, c, d = files(tmp_path, 4)
    for path in (a, b, c):
        assert _sniff.head(path) == Path(path).read_bytes()
    assert _sniff.head(a)  # a is now the most recent: b goes first
    _sniff.head(d)
    cached = [key[0] for key in _sniff._HEADS]
    assert cached == [os.path.abspath(p) for p in (c, a, d)]
    assert _sniff._held[0] == 3000


def test_gzip_heads_and_a_changed_file(tmp_path: Path) -> None:
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(b'{"traceEvents": []}'))
    assert _sniff.head(str(path)) == b'{"traceEvents": []}'
    path.write_bytes(gzip.compress(b'{"other": 1, "longer": true}'))
    os.utime(path, ns=(1, 2))  # a new mtime (and size): not the cached head
    assert _sniff.head(str(path)) == b'{"other": 1, "longer": true}'
    assert _sniff.head(str(tmp_path / "missing.json")) == b""
    _sniff.forget()
    assert not _sniff._HEADS and _sniff._held[0] == 0
