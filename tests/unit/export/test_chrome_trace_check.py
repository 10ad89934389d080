"""The independent trace checker finds each problem it claims to find (else its "ok" is worth
nothing), and passes a small well-formed file."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.export.chrome_trace_check import check

GOOD: list[dict[str, Any]] = [
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "host"}},
    {"ph": "X", "name": "op", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 0.0, "dur": 10.0},
    {"ph": "X", "name": "launch", "cat": "runtime", "pid": 1, "tid": 1, "ts": 2.0, "dur": 3.0},
    {"ph": "B", "name": "range", "pid": 1, "tid": 2, "ts": 1.0},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 4.0},
    {"ph": "X", "name": "kernel", "cat": "kernel", "pid": 2, "tid": 3, "ts": 6.0, "dur": 2.5},
    {"ph": "s", "name": "launch", "cat": "launch", "id": 7, "pid": 1, "tid": 1, "ts": 3.5},
    {"ph": "f", "name": "launch", "cat": "launch", "id": 7, "pid": 2, "tid": 3, "ts": 7.0,
     "bp": "e"},
    {"ph": "C", "name": "GPU0 power", "pid": 3, "tid": 4, "ts": 0.0, "args": {"W": 85.5}},
    {"ph": "C", "name": "GPU0 power", "pid": 3, "tid": 4, "ts": 5.0, "args": {"W": 90}},
    {"ph": "i", "s": "g", "name": "workload_start", "pid": 3, "tid": 4, "ts": 0.5},
]  # fmt: skip


def _write(tmp_path: Path, events: list[dict[str, Any]], gz: bool = True) -> str:
    path = tmp_path / ("t.json.gz" if gz else "t.json")
    text = json.dumps({"traceEvents": events})
    if gz:
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return str(path)


@pytest.mark.parametrize("gz", [True, False])
def test_a_well_formed_file_passes(tmp_path: Path, gz: bool) -> None:
    report = check(_write(tmp_path, GOOD, gz))
    assert report.ok, report.errors
    assert report.phases["X"] == 3 and report.flows == 1 and report.counter_series == 1


def _broken(change: dict[str, Any], index: int) -> list[dict[str, Any]]:
    events = [dict(e) for e in GOOD]
    events[index].update(change)
    return [{k: v for k, v in e.items() if v is not None} for e in events]


@pytest.mark.parametrize(
    ("index", "change", "expected"),
    [
        (2, {"dur": 9.0}, "after the slice it starts in"),  # 2..11 starts in 0..10
        (1, {"dur": -1.0}, "negative dur"),
        (1, {"ts": None}, "missing ts"),
        (1, {"ts": "soon"}, "not a number"),
        (5, {"pid": None}, "missing pid"),
        (4, {"ph": "B", "name": "x"}, "never ended"),
        (3, {"ph": "E"}, "without a B"),
        (8, {"args": {"W": "high"}}, "counter GPU0 power.W"),
        (8, {"args": {}}, "non-empty object"),
        (9, {"ts": 0.0}, "two values at 0 ns"),
        (6, {"id": 8}, "0 start(s)"),
        (6, {"ts": 30.0}, "is in no slice"),
        (7, {"tid": 9}, "is in no slice"),
        (10, {"s": "x"}, "scope"),
        (1, {"ph": "Q"}, "unknown ph"),
    ],
)
def test_each_problem_is_found(
    tmp_path: Path, index: int, change: dict[str, Any], expected: str
) -> None:
    report = check(_write(tmp_path, _broken(change, index)))
    assert not report.ok
    assert any(expected in message for message in report.errors), report.errors


def test_ties_are_broken_by_file_order(tmp_path: Path) -> None:
    """Viewers sort stably: a child written before its same-ts parent does not nest in it."""
    parent = {"ph": "X", "name": "p", "pid": 1, "tid": 1, "ts": 0.0, "dur": 10.0}
    child = {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 0.0, "dur": 5.0}
    assert check(_write(tmp_path, [parent, child])).ok
    assert not check(_write(tmp_path, [child, parent])).ok


def test_not_json_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"traceEvents": [')
    assert not check(str(path)).ok
