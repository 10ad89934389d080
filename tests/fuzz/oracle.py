"""Run `gpuscope analyze INPUT --json OUT -q` in this process and judge what it did.

Allowed: exit 0 with the report written whole (only `warning:` lines on stderr, at least one when
the input was visibly cut), or exit 2 with one `error:` line naming the input and no report
(a directory of several traces may name several of its files, and still writes the rest).
Anything else is a failure: a traceback, another exit code, stray stderr lines, a report that is
missing, half-written or not JSON, a temporary file left beside it, a Python warning, or a visible
cut read without a word. Hangs are caught by the caller (runner.py), which kills the process.
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fuzz.mutate import Mutation

OK, OK_WARNING, EXIT_2 = "ok", "ok-with-warning", "exit-2"
TRACEBACK, HANG, CRASH = "traceback", "hang", "crash"
PASSED = (OK, OK_WARNING, EXIT_2)


@dataclass(frozen=True)
class Outcome:
    status: str  # one of `passing`, or what went wrong
    detail: str = ""  # the stderr, traceback or reason
    passing: tuple[str, ...] = PASSED  # the statuses of a pass (the CLI mode has its own)

    @property
    def failed(self) -> bool:
        return self.status not in self.passing


def judge(target: Path, damaged: Path, out_dir: Path, mutation: Mutation) -> Outcome:
    """Analyse `target` (the `damaged` file, or a directory holding it) and judge the result."""
    report = out_dir / "report.json"
    out_dir.mkdir(parents=True, exist_ok=True)
    stderr = io.StringIO()
    with (
        _held_lock(damaged if mutation.locked else None),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        try:
            rc = _run(["analyze", str(target), "--json", str(report), "-q"], stderr)
        except BaseException:
            return Outcome(TRACEBACK, traceback.format_exc(limit=-8))
    text = stderr.getvalue()
    if caught:
        first = caught[0]
        where = f"{first.filename}:{first.lineno}"
        return Outcome("python-warning", f"{where}: {first.category.__name__}: {first.message}")
    leftovers = [p.name for p in out_dir.iterdir() if p.name != report.name]
    if leftovers:
        return Outcome("half-written", f"left beside the report: {leftovers}\n{text}")
    if rc == 0:
        return _judge_success(report, text, mutation.must_warn and _read(target, damaged))
    if rc == 2:
        return _judge_error(target, report, text)
    return Outcome("bad-exit", f"exit {rc}\n{text}")


def _read(target: Path, damaged: Path) -> bool:
    """Whether the damaged file was read: a reader still claims it and, in a directory, it is
    among the sources read (a file no reader claims, or one of a process whose other outputs
    are preferred, is passed over without a word)."""
    from gpuscope.errors import GpuscopeError
    from gpuscope.trace.registry import find_sources, sniff

    if not target.is_dir():
        return sniff(str(damaged)) is not None
    try:
        return any(str(damaged) in s.paths for s in find_sources(str(target)))
    except GpuscopeError:
        return False


def _run(argv: list[str], stderr: io.StringIO) -> int:
    from gpuscope.cli import main

    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        return main(argv)


@contextlib.contextmanager
def _held_lock(path: Path | None) -> Iterator[None]:
    """An exclusive lock on the database for the duration, as a profiler still writing holds."""
    if path is None:
        yield
        return
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("BEGIN EXCLUSIVE")
        yield
    finally:
        db.close()


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _judge_success(report: Path, text: str, must_warn: bool) -> Outcome:
    lines = _lines(text)
    stray = [line for line in lines if not line.startswith("warning: ")]
    if stray:
        return Outcome("bad-stderr", text)
    problem = _report_problem(report)
    if problem:
        return Outcome("bad-report", problem)
    if must_warn and not lines:
        return Outcome("cut-without-warning", "the input was cut mid-way; no warning said so")
    return Outcome(OK_WARNING if lines else OK, text)


def _report_problem(report: Path) -> str:
    if not report.exists():
        return "exit 0 but no report written"
    try:
        data: Any = json.loads(report.read_bytes(), parse_constant=_no_constant)
    except ValueError as error:
        return f"report is not strict JSON: {error}"
    if not isinstance(data, dict) or "schema" not in data:
        return "report has no schema field"
    return ""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} in the report")


def _judge_error(target: Path, report: Path, text: str) -> Outcome:
    lines = _lines(text)
    errors = [line for line in lines if line.startswith("error: ")]
    stray = [line for line in lines if not line.startswith(("error: ", "warning: "))]
    if stray or not errors:
        return Outcome("bad-stderr", text)
    if not all(str(target) in line for line in errors):
        return Outcome("unnamed-file", text)
    if target.is_dir():
        problem = _report_problem(report) if report.exists() else ""
        return Outcome("bad-report", problem) if problem else Outcome(EXIT_2, text)
    if len(errors) != 1:
        return Outcome("bad-stderr", f"{len(errors)} error lines\n{text}")
    if report.exists():
        return Outcome("half-written", f"exit 2 but a report was written\n{text}")
    return Outcome(EXIT_2, text)
