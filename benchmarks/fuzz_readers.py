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
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fuzz.oracle import PASSED  # noqa: E402
from tests.fuzz.runner import Case, Result, run, run_case  # noqa: E402
from tests.fuzz.seeds import catalogue  # noqa: E402

COLUMNS = (*PASSED, "traceback", "hang", "other failures")


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
        return _long(args, cases, seeds, Path(scratch) / "cases", formats)


def _long(
    args: argparse.Namespace, cases: list[Case], seeds: Any, scratch: Path, formats: list[str]
) -> int:
    counts: dict[str, Counter[str]] = {f: Counter() for f in formats}
    seconds: dict[str, float] = dict.fromkeys(formats, 0.0)
    failures: list[dict[str, Any]] = []
    begin = time.monotonic()
    results = run(cases, seeds, scratch, args.jobs, args.timeout, locks=not args.no_locks)
    for done, result in enumerate(results, 1):
        counts[result.case.format][result.outcome.status] += 1
        seconds[result.case.format] += result.seconds
        if result.outcome.failed:
            failures.append(_save(result, Path(args.save)))
            last = result.outcome.detail.strip().splitlines()[-1:]
            print(f"FAIL {result.case.id} {result.outcome.status} {result.mutation} "
                  f"{result.seed}: {last}", flush=True)  # fmt: skip
        if done % 500 == 0:
            print(f"{done}/{len(cases)} cases, {time.monotonic() - begin:.0f} s", flush=True)
    wall = time.monotonic() - begin
    print(_table(counts, seconds))
    print(f"{len(cases)} cases in {wall:.0f} s with {args.jobs} jobs; {len(failures)} failures")
    if args.json:
        Path(args.json).write_text(
            json.dumps(_summary(args, counts, seconds, failures, wall), indent=1)
        )
    return 1 if failures else 0


def _save(result: Result, save: Path) -> dict[str, Any]:
    """Keep the failing input and what happened; the record says how to replay it."""
    target = save / f"{result.case.format}-{result.case.number}"
    shutil.rmtree(target, ignore_errors=True)
    if Path(result.folder).exists():
        shutil.copytree(result.folder, target)
        shutil.rmtree(result.folder, ignore_errors=True)
    record = {**asdict(result), "case": result.case.id, "saved": str(target)}
    target.mkdir(parents=True, exist_ok=True)
    (target / "case.json").write_text(json.dumps(record, indent=1))
    return record


def _table(counts: dict[str, Counter[str]], seconds: dict[str, float]) -> str:
    lines = [
        "| format | inputs | " + " | ".join(COLUMNS) + " | mean ms |",
        "|---|" + "---:|" * (len(COLUMNS) + 2),
    ]
    for name, count in counts.items():
        total = sum(count.values())
        other = total - sum(count[c] for c in COLUMNS[:-1])
        cells = [str(count[c]) for c in COLUMNS[:-1]] + [str(other)]
        mean = 1000 * seconds[name] / total if total else 0.0
        lines.append(f"| {name} | {total} | " + " | ".join(cells) + f" | {mean:.0f} |")
    return "\n".join(lines)


def _summary(
    args: argparse.Namespace,
    counts: dict[str, Counter[str]],
    seconds: dict[str, float],
    failures: list[dict[str, Any]],
    wall: float,
) -> dict[str, Any]:
    return {
        "schema": "gpuscope.fuzz-summary/1",
        "command": sys.argv,
        "seed": args.seed,
        "per_format": args.per_format,
        "start": args.start,
        "jobs": args.jobs,
        "timeout_s": args.timeout,
        "wall_s": round(wall, 1),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"node": platform.node(), "cpus": os.cpu_count(), "python": sys.version},
        "counts": {name: dict(count) for name, count in counts.items()},
        "case_seconds": {name: round(s, 2) for name, s in seconds.items()},
        "failures": failures,
    }


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
