"""`_sql_scan.Scan.ints`: guarded columns first read bare, literals filled in numpy, the guards
used again once a range holds a NULL / text / real value — every value checked against a plain
row-by-row fetch converted in Python here."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpuscope.errors import ReaderError
from gpuscope.trace import _sql, _sql_scan
from gpuscope.trace._sql_scan import Scan

ROWS = 5000


def _make(path: Path, bad: dict[int, Any]) -> None:
    """A table t(a, b, c) of ROWS rows and an event table e joined on b; `bad` puts a value
    that is not an integer into column c of the given rowids."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, c)")
    db.execute("CREATE TABLE e (id INTEGER PRIMARY KEY, s INTEGER)")
    db.executemany(
        "INSERT INTO t VALUES (?, ?, ?, ?)",
        [(i, i * 7, i % 300, bad.get(i, i * 3)) for i in range(1, ROWS + 1)],
    )
    db.executemany("INSERT INTO e VALUES (?, ?)", [(i, 1000 + i) for i in range(0, 250)])
    db.commit()
    db.close()


def _expected(path: Path) -> dict[str, list[int]]:
    """What each expression should give, from a plain fetch and Python conversion."""
    db = sqlite3.connect(path)
    rows = db.execute("SELECT t.a, t.c, e.s FROM t LEFT JOIN e ON e.id = t.b ORDER BY t.id")
    out: dict[str, list[int]] = {"a": [], "c_case": [], "c_null": [], "s": []}
    for a, c, s in rows:
        out["a"].append(a)
        out["c_case"].append(c if type(c) is int else -1)
        out["c_null"].append(-5 if c is None else c)
        out["s"].append(-1 if s is None else s)
    db.close()
    return out


@pytest.fixture(params=[1, 2], ids=["one-worker", "two-workers"])
def small_ranges(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sql_scan, "CHUNK", 512)  # ten ranges
    monkeypatch.setattr(_sql_scan, "WORKERS", request.param)


@pytest.mark.parametrize(
    "bad",
    [{}, {3000: "x"}, {10: None, 4000: 2.5}, {i: "" for i in range(1, ROWS + 1)}],
    ids=["clean", "text-late", "null-and-real", "all-text"],
)
def test_guarded_columns_and_literals_match_a_plain_fetch(
    tmp_path: Path, small_ranges: None, bad: dict[int, Any]
) -> None:
    path = tmp_path / "t.db"
    _make(path, bad)
    want = _expected(path)
    with _sql.database(str(path), "a test database") as db:
        scan = Scan(str(path), db)
        exprs = ("T.a", "-1", _sql.integer("T.c"), "ifnull(E.s, -1)", "7")
        got = scan.ints("t", exprs, "t", "T", "LEFT JOIN e E ON E.id = T.b")
    assert [len(c) for c in got] == [ROWS] * 5
    assert got[0].tolist() == want["a"]
    assert got[1].tolist() == [-1] * ROWS
    assert got[2].tolist() == want["c_case"]
    assert got[3].tolist() == want["s"]
    assert got[4].tolist() == [7] * ROWS
    assert all(c.dtype == np.int64 for c in got)


def test_ifnull_default_is_kept(tmp_path: Path, small_ranges: None) -> None:
    path = tmp_path / "t.db"
    _make(path, {20: None, 4999: None})
    with _sql.database(str(path), "a test database") as db:
        (c,) = Scan(str(path), db).ints("t", ("ifnull(T.c, -5)",), "t")
    assert c.tolist() == _expected(path)["c_null"]


def test_an_unguarded_text_value_is_still_an_error(tmp_path: Path, small_ranges: None) -> None:
    path = tmp_path / "t.db"
    _make(path, {1234: "oops"})
    expected = "unexpected value 'oops' in t; expected integers"
    with pytest.raises(ReaderError, match=expected), _sql.database(str(path), "a db") as db:
        Scan(str(path), db).ints("t", ("T.a", "T.c"), "t")


def test_only_literals_still_count_the_rows(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    _make(path, {})
    with _sql.database(str(path), "a test database") as db:
        got = Scan(str(path), db).ints("t", ("-1", "3"), "t")
    assert [c.tolist() for c in got] == [[-1] * ROWS, [3] * ROWS]


def test_lookup_sorted_and_unsorted_keys() -> None:
    """Positions of wanted ids in keys (-1: absent), against a dict built here."""
    rng = np.random.default_rng(1)
    keys = np.sort(rng.choice(10_000, 3_000, replace=False)).astype(np.int64)
    wanted = rng.integers(-5, 10_010, 4_000).astype(np.int64)
    for ordered in (keys, rng.permutation(keys)):
        where = {int(k): i for i, k in enumerate(ordered)}
        expected = [where.get(int(w), -1) for w in wanted]
        assert _sql.lookup(ordered, wanted).tolist() == expected
    repeated = np.array([5, 5, 6], np.int64)  # not strictly increasing: the sorting path
    assert _sql.lookup(repeated, np.array([5, 6, 7], np.int64)).tolist() == [0, 2, -1]
