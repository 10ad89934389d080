"""Fuzz the commands, not only the readers: random gpuscope command lines (the CLI mode of
tests/fuzz; `make fuzz-cli`).

Each case draws a subcommand and its flags, good or damaged copies of real inputs, and output
targets of every kind (an input under another name, /dev/null, /dev/full, a FIFO, `-`, a read-only
folder, a name that is not UTF-8, ...), runs `python -m gpuscope …` in its own session and
checks every file in its folder before and after, the exit status, stderr, the outputs and the
processes left (tests/fuzz/cli_oracle.py). Prints the counts per command; failures are kept
under `--save`, and `--replay COMMAND:NUMBER` rebuilds and reruns one of them.

    .venv/bin/python benchmarks/fuzz_cli.py --cases 10000 --seed 1 --jobs 2 --json fuzz-cli.json
    .venv/bin/python benchmarks/fuzz_cli.py --seed 1 --replay analyze:4711
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fuzz.cli_case import TIMEOUT_S, CliJob  # noqa: E402
from tests.fuzz.cli_commands import WEIGHTS, draw_commands  # noqa: E402
from tests.fuzz.cli_oracle import PASSED  # noqa: E402
from tests.fuzz.cli_seeds import cli_catalogue  # noqa: E402
from tests.fuzz.long_run import run_long  # noqa: E402
from tests.fuzz.runner import Case  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=1000, metavar="N")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--commands", nargs="*", help=f"only these (default: {' '.join(WEIGHTS)})")
    parser.add_argument("--start", type=int, default=0, help="first case number (0)")
    parser.add_argument("--save", default="fuzz-failures", help="folder for failing cases")
    parser.add_argument("--json", metavar="FILE", help="write the counts and failures as JSON")
    parser.add_argument("--replay", metavar="COMMAND:NUMBER", help="rerun one case here")
    parser.add_argument(
        "--no-orphans",
        dest="orphans",
        action="store_false",
        help="no run program that leaves a process behind (sleep 30 &), which run must end",
    )
    args = parser.parse_args(argv)
    args.timeout = 2 * TIMEOUT_S  # the worker's: each command has its own (TIMEOUT_S)
    with tempfile.TemporaryDirectory(prefix="gpuscope-fuzz-cli-") as scratch:
        job = CliJob(cli_catalogue(Path(scratch) / "seeds"), orphans=args.orphans)
        if args.replay:
            return _replay(args, job)
        cases = draw_commands(args.seed, args.start, args.cases)
        if args.commands:
            cases = [c for c in cases if c.format in args.commands]
        return run_long(args, cases, job, Path(scratch) / "cases", PASSED, group="command")


def _replay(args: argparse.Namespace, job: CliJob) -> int:
    name, _, number = args.replay.partition(":")
    case = Case(name, int(number), args.seed)
    result = job(case, Path(args.save).resolve() / "replay", lambda damage: None)
    print(f"{case.id}: {result.command}")
    print(f"inputs {result.seed}, damage {result.mutation}, outputs {result.damaged}")
    print(f"outcome {result.outcome.status} in {result.seconds:.2f} s; files under {result.folder}")
    print(result.outcome.detail)
    return 1 if result.outcome.failed else 0


if __name__ == "__main__":
    sys.exit(main())
