"""Which rank a trace is, on which host, and whether several traces are the ranks of one job.

A rank comes from the trace itself (Kineto's `distributedInfo.rank`), else from where it lies:
a `rank<R>/` folder of a `gpuscope run` directory (whose `rank.json` also names the host), or a
file name `rank<R>_<host>_<pid>.pt.trace.json.gz` as gpuscope's torch.profiler hook writes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RANK_DIR = re.compile(r"^rank(\d+)$")
RANK_FILE = re.compile(r"^rank(\d+)_(?P<host>.+)_(?P<pid>\d+)\.pt\.trace\.json")
RANK_JSON = "rank.json"


def rank_dir(path: str) -> Path | None:
    """The nearest enclosing `rank<R>/` folder of `path`, if any."""
    for parent in Path(path).parents:
        if RANK_DIR.match(parent.name):
            return parent
    return None


def rank_from_path(path: str) -> int | None:
    folder = rank_dir(path)
    if folder is not None:
        match = RANK_DIR.match(folder.name)
        return int(match.group(1)) if match else None
    named = RANK_FILE.match(Path(path).name)
    return int(named.group(1)) if named else None


def host_from_path(path: str) -> str | None:
    """The host that ran the rank: its `rank.json` (gpuscope run), else the trace's file name."""
    folder = rank_dir(path)
    if folder is not None:
        info = read_rank_json(folder)
        host = info.get("host") if info else None
        if isinstance(host, str):
            return host
    named = RANK_FILE.match(Path(path).name)
    return named.group("host") if named else None


def read_rank_json(folder: Path) -> dict[str, Any] | None:
    """What the rank hook recorded about the process(es) of one rank (None when absent)."""
    try:
        data = json.loads((folder / RANK_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_job(ranks: Sequence[int | None], world_sizes: Sequence[int | None]) -> bool:
    """Several traces are the ranks of one job when each has a rank, no rank repeats and the
    world sizes that are known agree (two rank-0 traces are a before/after pair, not a job)."""
    if len(ranks) < 2 or any(r is None for r in ranks):
        return False
    if len(set(ranks)) != len(ranks):
        return False
    known = {w for w in world_sizes if w is not None}
    pairs = zip(ranks, world_sizes, strict=True)
    return len(known) <= 1 and all(w is None or (r is not None and r < w) for r, w in pairs)
