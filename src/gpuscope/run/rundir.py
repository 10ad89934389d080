"""One directory per run, `<output-dir>/<run-id>/`; an existing run is never touched.

The run id is the UTC start time plus a random suffix (`20261122-014502-3f9a`); the directory
is created with `exist_ok=False`, so two runs started in the same second still get two
directories.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from gpuscope.errors import InputError

_ATTEMPTS = 20


def new_run_id(now: datetime, token: str) -> str:
    return f"{now.astimezone(timezone.utc):%Y%m%d-%H%M%S}-{token}"


def create_run_dir(
    output_dir: Path,
    now: datetime,
    token: Callable[[], str] = lambda: os.urandom(2).hex(),
) -> tuple[str, Path]:
    """Create and return a fresh `(run_id, run_dir)` under `output_dir`."""
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"cannot create output directory {output_dir}: {error.strerror}") from None
    for _ in range(_ATTEMPTS):
        run_id = new_run_id(now, token())
        try:
            (output_dir / run_id).mkdir()
        except FileExistsError:
            continue
        except OSError as error:
            raise InputError(f"--output-dir {output_dir}: cannot create the run directory "
                             f"({error.strerror or error})") from None  # fmt: skip
        return run_id, output_dir / run_id
    raise InputError(f"could not create a new run directory under {output_dir}")


def list_files(run_dir: Path) -> list[dict[str, object]]:
    """Every file under the run directory (relative path, bytes), sorted."""
    files = [p for p in run_dir.rglob("*") if p.is_file() and not _is_manifest(run_dir, p)]
    return [
        {"path": p.relative_to(run_dir).as_posix(), "bytes": p.stat().st_size}
        for p in sorted(files)
    ]


def _is_manifest(run_dir: Path, path: Path) -> bool:
    return path.parent == run_dir and path.name in ("manifest.json", ".manifest.json.tmp")
