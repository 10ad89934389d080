"""A `.nsys-rep` report is read through its SQLite export (`nsys export --type=sqlite`).

The export is written next to the report (`report.nsys-rep` -> `report.sqlite`, as `nsys stats`
does) so the next read is instant; it is made in a hidden temporary folder there and renamed into
place, so an interrupted export never leaves a half-written database behind. An existing export
that is older than the report is left untouched (it may be someone's file): the fresh one then
goes to a temporary folder that is removed after reading, as it is when the folder is read-only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from gpuscope.errors import ReaderError
from gpuscope.trace import _sniff

REPORT_MAGIC = b"NVIDIA Tegra Profiler Report"  # first bytes of .nsys-rep / .qdrep files


class NsysMissing(ReaderError):
    """The report needs `nsys export` and nsys is not installed."""


@dataclass
class Export:
    """The SQLite file to read for a report, and what to tell the user about it."""

    sqlite: Path
    kept: bool  # it stays next to the report (a temporary one is removed after reading)
    warnings: list[str] = field(default_factory=list)


def is_report(path: str) -> bool:
    return _sniff.head(path, len(REPORT_MAGIC)).startswith(REPORT_MAGIC)


IsExport = Callable[[frozenset[str]], bool]


def fresh_export(report: Path, is_export: IsExport) -> Path | None:
    """`report.sqlite` when it is an nsys export at least as new as the report."""
    sqlite = report.with_suffix(".sqlite")
    try:
        if sqlite.stat().st_mtime_ns < report.stat().st_mtime_ns:
            return None
    except OSError:
        return None
    return sqlite if is_export(_sniff.sqlite_names(str(sqlite))) else None


@contextmanager
def exported(report: Path, is_export: IsExport) -> Iterator[Export]:
    """The SQLite export of `report`: an up-to-date one next to it, else a new one."""
    existing = fresh_export(report, is_export)
    if existing is not None:
        yield Export(existing, kept=True)
        return
    nsys = shutil.which("nsys")
    if nsys is None:
        raise NsysMissing(
            f"{report.name} is an Nsight Systems report: reading it needs nsys "
            "(not found on PATH). Install Nsight Systems, or pass the SQLite export: "
            f"nsys export --type=sqlite {report.name}"
        )
    sibling = report.with_suffix(".sqlite")
    if not sibling.exists() and writable(report.parent):
        _export_beside(nsys, report, sibling)
        yield Export(sibling, kept=True)
        return
    with tempfile.TemporaryDirectory(prefix="gpuscope-nsys-") as folder:
        out = Path(folder) / sibling.name
        _run_export(nsys, report, out)
        export = Export(out, kept=False)
        if sibling.exists():
            export.warnings.append(
                f"{sibling.name} is older than {report.name} (or not an nsys "
                "export): exported again to a temporary file and left it "
                "as it is; re-export it to make the next read faster"
            )
        yield export


def writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK)


def _export_beside(nsys: str, report: Path, sqlite: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix=".gpuscope-nsys-export-", dir=report.parent))
    try:
        out = folder / sqlite.name
        _run_export(nsys, report, out)
        os.replace(out, sqlite)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_export(nsys: str, report: Path, out: Path) -> None:
    argv = [
        nsys,
        "export",
        "--type=sqlite",
        "--force-overwrite=true",
        f"--output={out}",
        str(report),
    ]
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        )
    except OSError as error:
        raise ReaderError(f"cannot run {nsys} export ({error.strerror or error})") from None
    if done.returncode != 0 or not out.exists():
        said = (done.stderr or done.stdout).strip().splitlines()
        why = said[-1] if said else f"exit status {done.returncode}"
        raise ReaderError(f"nsys export failed: {why}")
