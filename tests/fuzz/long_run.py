"""The long mode's loop, shared by both fuzzers (benchmarks/fuzz_readers.py, fuzz_cli.py): run
the cases, print each failure as it comes, keep its input under `--save`, print the counts per
group (a reader, or a command) and write them as JSON."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tests.fuzz.runner import Case, Job, Result, run


def run_long(
    args: argparse.Namespace,
    cases: list[Case],
    job: Job,
    scratch: Path,
    columns: Sequence[str],
    group: str = "format",
) -> int:
    """Run `cases` on `args.jobs` workers; `columns`: the passing outcomes, counted by name (the
    failures are counted by kind after them). Returns 1 when a case failed."""
    groups = list(dict.fromkeys(case.format for case in cases))
    counts: dict[str, Counter[str]] = {g: Counter() for g in groups}
    seconds: dict[str, float] = dict.fromkeys(groups, 0.0)
    failures: list[dict[str, Any]] = []
    begin = time.monotonic()
    for done, result in enumerate(run(cases, job, scratch, args.jobs, args.timeout), 1):
        counts[result.case.format][result.outcome.status] += 1
        seconds[result.case.format] += result.seconds
        if result.outcome.failed:
            failures.append(save(result, Path(args.save)))
            lines = result.outcome.detail.strip().splitlines()
            said = list(dict.fromkeys(lines[:1] + lines[-1:]))  # the reason, the last line
            print(f"FAIL {result.case.id} {result.outcome.status} {result.mutation} "
                  f"{result.seed}: {said}", flush=True)  # fmt: skip
        if done % 500 == 0:
            print(f"{done}/{len(cases)} cases, {time.monotonic() - begin:.0f} s", flush=True)
    wall = time.monotonic() - begin
    print(table(counts, seconds, columns, group))
    print(f"{len(cases)} cases in {wall:.0f} s with {args.jobs} jobs; {len(failures)} failures")
    if args.json:
        data = summary(args, counts, seconds, failures, wall)
        Path(args.json).write_text(json.dumps(data, indent=1))
    return 1 if failures else 0


def save(result: Result, save: Path) -> dict[str, Any]:
    """Keep the failing input and what happened; the record says how to replay it."""
    target = save / f"{result.case.format}-{result.case.number}"
    shutil.rmtree(target, ignore_errors=True)
    if Path(result.folder).exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(result.folder, target)  # FIFOs and device nodes included
        except OSError:  # another file system: a copy, without them
            shutil.copytree(result.folder, target, symlinks=True, ignore=_special)
            shutil.rmtree(result.folder, ignore_errors=True)
    record = {**asdict(result), "case": result.case.id, "saved": str(target)}
    target.mkdir(parents=True, exist_ok=True)
    (target / "case.json").write_text(json.dumps(record, indent=1))
    return record


def _special(folder: str, names: list[str]) -> list[str]:
    """FIFOs, sockets and device nodes: not copied."""
    paths = (os.path.join(folder, name) for name in names)
    return [os.path.basename(p) for p in paths if not (os.path.isdir(p) or os.path.isfile(p))
            and not os.path.islink(p)]  # fmt: skip


def table(
    counts: dict[str, Counter[str]],
    seconds: dict[str, float],
    columns: Sequence[str],
    group: str = "format",
) -> str:
    """A Markdown table: per group, the count of each passing outcome, of each kind of failure
    seen, and the mean time of a case."""
    failed = sorted({s for c in counts.values() for s in c if s not in columns})
    heads = [*columns, *failed] if failed else [*columns, "failures"]
    lines = [
        f"| {group} | cases | " + " | ".join(heads) + " | mean ms |",
        "|---|" + "---:|" * (len(heads) + 2),
    ]
    for name, count in counts.items():
        total = sum(count.values())
        mean = 1000 * seconds[name] / total if total else 0.0
        cells = [str(count[c]) for c in heads]
        lines.append(f"| {name} | {total} | " + " | ".join(cells) + f" | {mean:.0f} |")
    return "\n".join(lines)


def summary(
    args: argparse.Namespace,
    counts: dict[str, Counter[str]],
    seconds: dict[str, float],
    failures: list[dict[str, Any]],
    wall: float,
) -> dict[str, Any]:
    return {
        "schema": "gpuscope.fuzz-summary/1",
        "command": sys.argv,
        **{k: v for k, v in vars(args).items() if k not in ("json", "replay")},
        "wall_s": round(wall, 1),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"node": platform.node(), "cpus": os.cpu_count(), "python": sys.version},
        "counts": {name: dict(count) for name, count in counts.items()},
        "case_seconds": {name: round(s, 2) for name, s in seconds.items()},
        "failures": failures,
    }
