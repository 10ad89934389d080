"""Cases, worker processes and the per-input timeout.

A case is (format, number, seed): its random generator picks the seed input and the mutation, so
`--replay FORMAT:NUMBER --seed S` rebuilds the same damaged input anywhere. Workers are spawned
processes that build and judge one case at a time through a job (`ReaderJob`: the reader mode,
in-process; `cli_case.CliJob`: the CLI mode, one command per case); the parent kills a worker
whose case runs past the timeout (a hang, whatever the code was doing: Python or SQLite's C loop)
and starts a fresh one.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import random
import resource
import shutil
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Protocol

from tests.fuzz.mutate import Mutation, mutate
from tests.fuzz.oracle import CRASH, HANG, Outcome, judge
from tests.fuzz.seeds import Seed, claimed_files

MEMORY_LIMIT = 4 << 30  # a reader that allocates by a fuzzed count fails with MemoryError
RECYCLE_AFTER = 2000  # cases per worker process before a fresh one (caches, fragmentation)


@dataclass(frozen=True)
class Case:
    format: str
    number: int
    seed: int

    @property
    def id(self) -> str:
        return f"{self.format}:{self.number}"

    def rng(self) -> random.Random:
        return random.Random(f"{self.seed}/{self.format}/{self.number}")


@dataclass(frozen=True)
class Result:
    case: Case
    seed: str  # the seed input's label
    damaged: str  # the damaged file's name
    mutation: str
    outcome: Outcome
    seconds: float
    folder: str  # where the case's input still lies (failures only)
    command: str = ""  # the CLI mode: the command line as a shell would take it


class Job(Protocol):
    """What a worker does with one case (picklable: it is sent to spawned workers)."""

    def __call__(self, case: Case, root: Path, started: Callable[[str], None]) -> Result: ...


@dataclass(frozen=True)
class ReaderJob:
    """The reader mode: damage one seed input and judge `gpuscope analyze` on it in-process."""

    seeds: dict[str, list[Seed]]
    locks: bool = True

    def __call__(self, case: Case, root: Path, started: Callable[[str], None]) -> Result:
        return run_case(case, self.seeds, root, self.locks, started)


def build(
    case: Case, seeds: dict[str, list[Seed]], folder: Path, locks: bool
) -> tuple[Seed, Path, Path, Mutation]:
    """The damaged input of `case` under `folder`: (seed, analysed path, damaged file, how)."""
    rng = case.rng()
    seed = rng.choice(seeds[case.format])
    if seed.path.is_dir():
        target = folder / "in" / seed.path.name
        shutil.copytree(seed.path, target)
        damaged = rng.choice(claimed_files(target))
    else:
        target = damaged = folder / "in" / seed.path.name
        target.parent.mkdir(parents=True)
        shutil.copyfile(seed.path, target)
    return seed, target, damaged, mutate(damaged, rng, locks)


def run_case(
    case: Case,
    seeds: dict[str, list[Seed]],
    root: Path,
    locks: bool,
    started: Callable[[str], None] = lambda name: None,
) -> Result:
    folder = root / f"{case.format}-{case.number}"
    shutil.rmtree(folder, ignore_errors=True)
    seed, target, damaged, mutation = build(case, seeds, folder, locks)
    started(mutation.name)
    begin = time.perf_counter()
    outcome = judge(target, damaged, folder / "out", mutation)
    seconds = time.perf_counter() - begin
    if not outcome.failed:
        shutil.rmtree(folder, ignore_errors=True)
    return Result(case, seed.label, damaged.name, mutation.name, outcome, seconds, str(folder))


def _worker(conn: Connection, job: Job, root: str) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(MEMORY_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    while (case := conn.recv()) is not None:
        result = job(case, Path(root), lambda name: conn.send(("start", name)))
        conn.send(("done", result))


class _Slot:
    """One worker process and the case it is on."""

    def __init__(self, args: tuple[Any, ...]) -> None:
        self.args = args
        self.case: Case | None = None
        self.started = 0.0
        self.mutation = ""
        self.done = 0
        self._spawn()

    def _spawn(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker, args=(child, *self.args))
        self.process.start()
        child.close()

    def submit(self, case: Case) -> None:
        if self.done >= RECYCLE_AFTER:
            self.stop()
            self._spawn()
            self.done = 0
        self.case, self.started, self.mutation = case, time.monotonic(), "?"
        self.conn.send(case)

    def restart(self) -> None:
        self.process.kill()
        self.process.join()
        self.conn.close()
        self._spawn()
        self.case, self.done = None, 0

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def run(
    cases: list[Case], job: Job, root: Path, jobs: int = 2, timeout: float = 20.0
) -> Iterator[Result]:
    """Every case's result, in the order they finish."""
    root.mkdir(parents=True, exist_ok=True)
    slots = [_Slot((job, str(root))) for _ in range(max(1, jobs))]
    todo = deque(cases)
    try:
        while todo or any(s.case for s in slots):
            for slot in slots:
                if slot.case is None and todo:
                    slot.submit(todo.popleft())
            busy = [s for s in slots if s.case is not None]
            ready = wait([s.conn for s in busy], timeout=0.5)
            for slot in busy:
                result = _collect(slot, slot.conn in ready, timeout, root)
                if result is not None:
                    yield result
    finally:
        for slot in slots:
            slot.stop()


def _collect(slot: _Slot, ready: bool, timeout: float, root: Path) -> Result | None:
    case = slot.case
    assert case is not None
    if ready:
        try:
            kind, value = slot.conn.recv()
        except (EOFError, OSError):
            return _lost(slot, case, CRASH, f"worker died (exit {slot.process.exitcode})", root)
        if kind == "start":
            slot.mutation, slot.started = value, time.monotonic()
            return None
        slot.case, slot.done = None, slot.done + 1
        done: Result = value
        return done
    if time.monotonic() - slot.started > timeout:
        return _lost(slot, case, HANG, f"no result after {timeout:g} s", root)
    return None


def _lost(slot: _Slot, case: Case, status: str, detail: str, root: Path) -> Result:
    mutation = slot.mutation
    slot.restart()
    folder = root / f"{case.format}-{case.number}"
    return Result(case, "?", "?", mutation, Outcome(status, detail), 0.0, str(folder))
