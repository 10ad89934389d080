"""The `rank<R>/` folders of a `gpuscope run` directory, one per rank of a multi-process job
(run/ranks.py makes them). Every layer that reads a run directory finds its ranks here: the
library tracers' logs (libtrace), the profilers' outputs and the manifest (tools)."""

from __future__ import annotations

from pathlib import Path


def rank_folders(run_dir: Path) -> list[Path]:
    """The `rank<R>/` folders of a run, by rank."""
    found = [p for p in run_dir.glob("rank*") if p.is_dir() and p.name[4:].isdigit()]
    return sorted(found, key=lambda p: int(p.name[4:]))
