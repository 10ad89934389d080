"""One case of the CLI mode from start to end: draw its command line and make its files, take
stock of its folder, run it, judge it; a passing case's files are removed, a failing one's stay
for `--save`."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.fuzz.cli_commands import plan
from tests.fuzz.cli_exec import execute
from tests.fuzz.cli_oracle import judge, prior, snapshot
from tests.fuzz.cli_seeds import CliSeeds
from tests.fuzz.runner import Case, Result

TIMEOUT_S = 60.0  # per command (the runner's own timeout, for the worker, must be longer)


@dataclass(frozen=True)
class CliJob:
    """The CLI mode's job for `runner.run`: one command line per case."""

    seeds: CliSeeds
    timeout: float = TIMEOUT_S
    orphans: bool = True  # `run`'s program may leave a process behind (gpuscope run ends it)

    def __call__(self, case: Case, root: Path, started: Callable[[str], None]) -> Result:
        folder = root / f"{case.format}-{case.number}"
        remove(folder)
        folder.mkdir(parents=True)
        # the command's TMPDIR, short: a process pool's socket path must fit in 108 bytes (a
        # long TMPDIR makes `analyze a b` fail: reported with ranks/engine.py)
        tmp = Path(tempfile.mkdtemp(prefix="gpuscope-fuzz-", dir="/tmp"))
        made = plan(case, self.seeds, folder, self.orphans)
        started("+".join(made.damage) or "none")
        before, was = snapshot(folder), prior(made)
        begin = time.perf_counter()
        ran = execute(made, folder, tmp, self.timeout)
        seconds = time.perf_counter() - begin
        outcome = judge(made, ran, before, was, folder, tmp)
        if not outcome.failed:
            remove(folder)
        remove(tmp)
        targets = ",".join(f"{o.option}={o.kind}" for o in made.outputs) or "no output"
        return Result(
            case, "; ".join(made.seeds) or "-", targets, "+".join(made.damage) or "none",
            outcome, seconds, str(folder), made.shown(),
        )  # fmt: skip


def remove(path: Path) -> None:
    """Remove a case's folder, read-only folders and unreadable files included."""
    if not os.path.lexists(path):
        return
    for top, dirs, _ in os.walk(path):
        for name in dirs:
            sub = os.path.join(top, name)
            if not os.path.islink(sub):
                os.chmod(sub, 0o755)
    os.chmod(path, 0o755)
    shutil.rmtree(path)
