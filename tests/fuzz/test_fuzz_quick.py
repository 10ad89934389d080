"""The quick fuzz subset of `make test`: 40 damaged inputs per reader, seeded, on 2 workers.

The long mode (10,000 per reader) is `make fuzz` / benchmarks/fuzz_readers.py. Formats whose
reference files are absent are fuzzed from what is present (tests/data, the built rocprofv3 JSON).
"""

from __future__ import annotations

import io
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from tests.fuzz import mutate, oracle
from tests.fuzz.mutate import Mutation
from tests.fuzz.oracle import EXIT_2, OK, OK_WARNING, judge
from tests.fuzz.runner import Case, ReaderJob, Result, run
from tests.fuzz.seeds import catalogue

SEED = 20261123
PER_FORMAT = 40


def describe(result: Result) -> str:
    last = result.outcome.detail.strip().splitlines()[-1:]
    return (f"{result.case.id} {result.outcome.status} {result.mutation} on {result.seed}: "
            f"{last} (replay: benchmarks/fuzz_readers.py --no-locks --seed {SEED} --replay "
            f"{result.case.id})")  # fmt: skip


def test_every_reader_survives_the_quick_fuzz(tmp_path: Path) -> None:
    seeds = catalogue(tmp_path / "synthetic")
    cases = [Case(name, n, SEED) for n in range(PER_FORMAT) for name in seeds]
    results = list(run(cases, ReaderJob(seeds, locks=False), tmp_path / "cases", 2, 20.0))
    assert sorted(r.case.id for r in results) == sorted(c.id for c in cases)
    failures = [describe(r) for r in results if r.outcome.failed]
    assert not failures, "\n".join(failures)
    outcomes = Counter(r.outcome.status for r in results)
    assert outcomes[EXIT_2] and outcomes[OK] + outcomes[OK_WARNING]  # both ends are reached


def test_a_case_is_the_same_damage_every_time(tmp_path: Path) -> None:
    seeds = catalogue(tmp_path / "synthetic")
    name = sorted(seeds)[0]
    made = []
    for attempt in range(2):
        path = tmp_path / f"copy{attempt}.json"
        path.write_bytes(json.dumps({"traceEvents": [{"ph": "X", "ts": 1}] * 50}).encode())
        mutation = mutate.mutate(path, Case(name, 7, SEED).rng())
        made.append((mutation, path.read_bytes()))
    assert made[0] == made[1]


def test_visible_cuts() -> None:
    text = b'"a","b","c"\n1,2,3\n4,5,6\n'
    assert not mutate.visible_cut(text, len(b'"a","b","c"\n1,2,3\n'), "text")  # a line end
    assert mutate.visible_cut(text, len(b'"a","b","c"\n1,2,3\n4,'), "text")  # a short row
    assert not mutate.visible_cut(text, len(text) - 2, "text")  # inside the last field
    assert mutate.visible_cut(b'{"a": [1]}', 5, "json")
    assert not mutate.visible_cut(b'{"a": [1]}\n', 10, "json")  # only the line end
    assert mutate.visible_cut(b"\x1f\x8b...", 4, "gzip")


# -- the oracle itself: a failure of each kind is caught ------------------------------------


def fake_cli(monkeypatch: pytest.MonkeyPatch, rc: int, stderr: str, raises: bool = False) -> None:
    def fake(argv: list[str], err: io.StringIO) -> int:
        if raises:
            raise KeyError("boom")
        err.write(stderr)
        report = Path(argv[argv.index("--json") + 1])
        if rc == 0:
            report.write_text('{"schema": "x"}')
        return rc

    monkeypatch.setattr(oracle, "_run", fake)


@pytest.mark.parametrize(
    ("rc", "stderr", "raises", "cut", "status"),
    [
        (0, "", True, False, "traceback"),
        (2, "error: elsewhere: bad\n", False, False, "unnamed-file"),
        (2, "error: {path}: bad\nerror: {path}: again\n", False, False, "bad-stderr"),
        (2, "error: {path}: bad\n  File x\n", False, False, "bad-stderr"),
        (1, "error: {path}: bad\n", False, False, "bad-exit"),
        (0, "", False, True, "cut-without-warning"),
        (0, "warning: {path}: truncated\n", False, True, OK_WARNING),
        (2, "error: {path}: bad\n", False, False, EXIT_2),
        (0, "", False, False, OK),
    ],
)
def test_the_oracle_tells_each_outcome(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rc: int,
    stderr: str,
    raises: bool,
    cut: bool,
    status: str,
) -> None:
    path = tmp_path / "trace.json"
    path.write_text('{"traceEvents": []}')
    fake_cli(monkeypatch, rc, stderr.format(path=path), raises)
    outcome = judge(path, path, tmp_path / "out", Mutation("test", must_warn=cut))
    assert outcome.status == status, outcome.detail


def test_the_oracle_catches_a_python_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import warnings

    path = tmp_path / "trace.json"
    path.write_text("{}")

    def noisy(argv: list[str], err: io.StringIO) -> int:
        warnings.warn("overflow", RuntimeWarning, stacklevel=1)
        return 2

    monkeypatch.setattr(oracle, "_run", noisy)
    outcome = judge(path, path, tmp_path / "out", Mutation("test"))
    assert outcome.status == "python-warning" and "overflow" in outcome.detail


def test_every_json_and_byte_mutation_is_drawn() -> None:
    """Over many draws each kind of damage is chosen (the long mode depends on it)."""
    from tests.fuzz import mutate_json

    rng = random.Random(SEED)
    names: Counter[str] = Counter()
    data = json.dumps({"traceEvents": [{"ph": "X", "ts": 1.5, "name": "k"}] * 20}).encode()
    for _ in range(400):
        names[mutate.mutate_bytes(data, rng, "json")[1].name] += 1
        names[mutate_json.mutate(data, rng)[1].name] += 1
    byte_ops = {"truncate", "flip", "insert", "delete", "duplicate", "line-ends", "bom", "empty"}
    json_ops = {"truncate", "wrong-type", "bad-number", "reshape", "other-value", "deep"}
    assert {f"bytes.{op}" for op in byte_ops} | {f"json.{op}" for op in json_ops} <= set(names)
