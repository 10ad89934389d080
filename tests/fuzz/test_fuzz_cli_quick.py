"""The quick subset of the CLI mode in `make test`: 60 random command lines, seeded, on 2
workers; and the CLI oracle itself, shown each kind of failure.

The long mode (10,000 command lines) is `make fuzz-cli` / benchmarks/fuzz_cli.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.fuzz.cli_case import CliJob
from tests.fuzz.cli_commands import Plan, draw_commands, plan
from tests.fuzz.cli_exec import Ran, session_members
from tests.fuzz.cli_oracle import EXIT_2, OK, REFUSED, judge, prior, snapshot
from tests.fuzz.cli_seeds import cli_catalogue
from tests.fuzz.cli_targets import FAIL, REFUSE, WRITE, Output
from tests.fuzz.runner import Case, Result, run

SEED = 20261127
CASES = 60


def describe(result: Result) -> str:
    return (f"{result.case.id} {result.outcome.status}: {result.command}\n"
            f"{result.outcome.detail}\n(replay: benchmarks/fuzz_cli.py --seed {SEED} --replay "
            f"{result.case.id})")  # fmt: skip


def test_every_command_survives_the_quick_fuzz(tmp_path: Path) -> None:
    job = CliJob(cli_catalogue(tmp_path / "seeds"))
    cases = draw_commands(SEED, 0, CASES)
    results = list(run(cases, job, tmp_path / "cases", 2, 120.0))
    assert sorted(r.case.id for r in results) == sorted(c.id for c in cases)
    failures = [describe(r) for r in results if r.outcome.failed]
    assert not failures, "\n\n".join(failures)
    outcomes = Counter(r.outcome.status for r in results)
    assert outcomes[OK] and outcomes[REFUSED] and outcomes[EXIT_2], outcomes


def test_a_case_is_the_same_command_line_every_time(tmp_path: Path) -> None:
    seeds = cli_catalogue(tmp_path / "seeds")
    made = []
    for attempt in range(2):
        folder = tmp_path / f"case{attempt}"
        folder.mkdir()
        made.append(plan(Case("analyze", 7, SEED), seeds, folder).shown().replace(str(folder), ""))
    assert made[0] == made[1]


# -- the oracle: a failure of each kind is caught --------------------------------------------


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "case"
    path.mkdir()
    (path / "in.json").write_text('{"traceEvents": []}')
    (tmp_path / "tmp").mkdir()
    return path


def judged(folder: Path, plan: Plan, rc: int, stderr: str = "", stdout: bytes = b"") -> str:
    before, was = snapshot(folder), prior(plan)
    ran = Ran(os.getpid(), rc, stdout, stderr.encode())
    return judge(plan, ran, before, was, folder, folder.parent / "tmp").status


def out(kind: str, expect: str = WRITE, path: str = "", stream: str = "") -> Output:
    return Output("--json", "x", kind, expect, "json", path=path, stream=stream)


@pytest.mark.parametrize(
    ("rc", "stderr", "outputs", "status"),
    [
        (0, "", [], OK),
        (2, "error: in.json: bad\n", [], EXIT_2),
        (1, "Traceback (most recent call last):\nKeyError: 1\n", [], "traceback"),
        (1, "", [], "bad-exit"),
        (2, "", [], "bad-stderr"),
        (2, "error: in.json: first line\nsecond line\n", [], "bad-stderr"),
        (0, "error: in.json: bad\n", [], "bad-stderr"),
        (0, "", [out("same-as-input", REFUSE)], "not-refused"),
        (2, "error: --json in.json: is the input\n", [out("same-as-input", REFUSE)], REFUSED),
        (0, "", [out("dev-full", FAIL)], "write-error-hidden"),
        (0, "", [out("dash", stream="stdout")], "bad-output"),  # nothing on stdout
    ],
)
def test_the_oracle_tells_each_outcome(
    folder: Path, rc: int, stderr: str, outputs: list[Output], status: str
) -> None:
    assert judged(folder, Plan("analyze", [], outputs), rc, stderr) == status


def test_the_oracle_sees_an_input_changed_and_a_temporary_file(folder: Path) -> None:
    plan = Plan("analyze", [], [])
    before = snapshot(folder)
    (folder / "in.json").write_text("{}")
    ran = Ran(os.getpid(), 0, b"", b"")
    tmp = folder.parent / "tmp"
    assert judge(plan, ran, before, {}, folder, tmp).status == "input-changed"
    (folder / "in.json").write_text('{"traceEvents": []}')
    (folder / ".report.json.tmp123").write_text("{")
    assert judge(plan, ran, before, {}, folder, tmp).status == "temp-left"


def test_the_oracle_sees_a_link_replaced_and_an_output_written_on_error(folder: Path) -> None:
    (folder / "link.json").symlink_to("in.json")
    target = str(folder / "report.json")
    plan = Plan("analyze", [], [out("new", path=target)])
    before, was = snapshot(folder), prior(plan)
    (folder / "link.json").unlink()
    (folder / "link.json").write_text("{}")
    ran = Ran(os.getpid(), 2, b"", b"error: x\n")
    assert judge(plan, ran, before, was, folder, folder.parent / "tmp").status == "link-replaced"
    (folder / "link.json").unlink()
    (folder / "link.json").symlink_to("in.json")
    Path(target).write_text('{"schema": "gpuscope.analysis/1"}')
    status = judge(plan, ran, before, was, folder, folder.parent / "tmp").status
    assert status == "written-on-error"


def test_a_process_left_in_the_session_is_seen() -> None:
    with subprocess.Popen(
        ["sh", "-c", "sleep 30 & echo $!"], stdout=subprocess.PIPE, start_new_session=True
    ) as child:
        assert child.stdout is not None
        orphan = int(child.stdout.readline())
    try:
        assert any(line.split()[0] == str(orphan) for line in session_members(child.pid))
    finally:
        os.kill(orphan, signal.SIGKILL)
