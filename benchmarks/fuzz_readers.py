"""Fuzz every trace reader through `gpuscope analyze` (the long mode of tests/fuzz; `make fuzz`).

Each case damages a copy of one real input (truncation, byte flips, wrong JSON types, CSV column
shuffles, SQLite schema and page damage, ...) and runs the CLI on it in a worker process with a
timeout. Prints per-format counts of each outcome; failures are kept under `--save` with the
case's stderr or traceback, and `--replay FORMAT:NUMBER` rebuilds and reruns one of them.

    .venv/bin/python benchmarks/fuzz_readers.py --per-format 10000 --seed 1 --jobs 2 \\
        --json fuzz-summary.json
    .venv/bin/python benchmarks/fuzz_readers.py --seed 1 --replay rocprof:4711
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fuzz.long_run import run_long  # noqa: E402
from tests.fuzz.oracle import PASSED  # noqa: E402
from tests.fuzz.runner import Case, ReaderJob, run_case  # noqa: E402
from tests.fuzz.seeds import catalogue  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-format", type=int, default=1000, metavar="N")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per input (20)")
    parser.add_argument("--formats", nargs="*", help="reader names (default: every one)")
    parser.add_argument("--start", type=int, default=0, help="first case number (0)")
    parser.add_argument("--save", default="fuzz-failures", help="folder for failing inputs")
    parser.add_argument("--json", metavar="FILE", help="write the counts and failures as JSON")
    parser.add_argument("--replay", metavar="FORMAT:NUMBER", help="rerun one case here")
    parser.add_argument(
        "--no-locks", action="store_true", help="no locked-database cases (as the quick subset)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gpuscope-fuzz-") as scratch:
        seeds = catalogue(Path(scratch) / "synthetic")
        if args.replay:
            return _replay(args, seeds, Path(scratch))
        formats = args.formats or list(seeds)
        missing = [f for f in formats if f not in seeds]
        if missing:
            parser.error(f"no seeds for {missing}; have {list(seeds)}")
        numbers = range(args.start, args.start + args.per_format)
        cases = [Case(f, n, args.seed) for n in numbers for f in formats]
        job = ReaderJob(seeds, not args.no_locks)
        return run_long(args, cases, job, Path(scratch) / "cases", PASSED)


def _replay(args: argparse.Namespace, seeds: Any, scratch: Path) -> int:
    name, _, number = args.replay.partition(":")
    case = Case(name, int(number), args.seed)
    result = run_case(case, seeds, Path(args.save).resolve() / "replay", locks=not args.no_locks)
    print(f"{case.id}: seed {result.seed}, damaged {result.damaged}, {result.mutation}")
    print(f"outcome {result.outcome.status} in {result.seconds:.2f} s; input under {result.folder}")
    print(result.outcome.detail)
    return 1 if result.outcome.failed else 0


if __name__ == "__main__":
    sys.exit(main())
