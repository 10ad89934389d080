"""`--csv DIR`, `--parquet DIR` and `--png DIR`: a report's tables and figures as files.

    add_options(parser, png=True)
    check_folders(args, inputs)                # before any work: refuses a DIR that holds an input
    write_tables(args, report_tables(report))  # DIR/<table>.csv, DIR/<table>.parquet
    write_figures(args, plots)                 # DIR/<figure>.png

Every file goes through the safe writer (`gpuscope.output.writing`): whole or not at all, never
over an input. CSV needs nothing beyond the standard library; Parquet needs pyarrow and PNG
matplotlib (the `notebook` extra), checked before anything is read.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gpuscope.output import OutputError, printable_path

_EXTRA = "pip install 'gpuscope[notebook]'"


def add_options(parser: argparse.ArgumentParser, *, png: bool = False) -> None:
    parser.add_argument("--csv", metavar="DIR",
                        help="write every table of the report as DIR/<table>.csv")  # fmt: skip
    parser.add_argument("--parquet", metavar="DIR",
                        help="write every table as DIR/<table>.parquet (pyarrow)")  # fmt: skip
    if png:
        parser.add_argument("--png", metavar="DIR",
                            help="write the report's figures as DIR/<figure>.png (needs "
                            "matplotlib)")  # fmt: skip


def folders(args: argparse.Namespace) -> dict[str, str]:
    """`--csv` / `--parquet` / `--png` → the folder given, for those asked for."""
    given = {name: getattr(args, name, None) for name in ("csv", "parquet", "png")}
    return {f"--{name}": value for name, value in given.items() if value}


def check_folders(
    args: argparse.Namespace, inputs: Iterable[str | os.PathLike[str] | None]
) -> None:
    """OutputError before any work: a folder that is a file, that holds one of `inputs` or is
    one; a missing pyarrow (`--parquet`) or matplotlib (`--png`)."""
    import importlib.util

    paths = [os.path.realpath(p) for p in inputs if p is not None]
    for option, folder in folders(args).items():
        real = os.path.realpath(folder)
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise OutputError(f"{option} {printable_path(folder)}: is a file (expected a folder)")
        for path in paths:
            if path == real or path.startswith(real.rstrip(os.sep) + os.sep):
                raise OutputError(f"{option} {printable_path(folder)}: holds the input "
                                  f"{printable_path(path)} (choose another folder)")  # fmt: skip
    needs = {"--parquet": "pyarrow", "--png": "matplotlib"}
    for option, module in needs.items():
        if option in folders(args) and importlib.util.find_spec(module) is None:
            raise OutputError(f"{option} needs {module}: {_EXTRA}")


def file_name(name: str) -> str:
    """A table name as a file name: dots kept, anything else unusual as `_`."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name) or "table"


def write_tables(
    args: argparse.Namespace, tables: Mapping[str, list[dict[str, Any]]]
) -> list[Path]:
    """Each table as DIR/<name>.csv and / or DIR/<name>.parquet; the paths written."""
    written = []
    if getattr(args, "csv", None):
        written += [
            _csv(Path(args.csv) / f"{file_name(n)}.csv", rows) for n, rows in tables.items()
        ]
    if getattr(args, "parquet", None):
        written += [_parquet(Path(args.parquet) / f"{file_name(n)}.parquet", rows)
                    for n, rows in tables.items()]  # fmt: skip
    return written


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def _csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    import csv

    from gpuscope.output import writing

    with writing(path) as temp, open(temp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=_columns(rows), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gpuscope.output import writing

    columns = _columns(rows)
    table = pa.Table.from_pylist(rows) if rows else pa.table({c: [] for c in columns})
    with writing(path) as temp:
        pq.write_table(table, temp)
    return path


def write_figures(args: argparse.Namespace, plots: Any, stem: str = "") -> list[Path]:
    """Every figure of `plots` (gpuscope.frames.plot) as `--png` DIR/<stem><figure>.png."""
    if not getattr(args, "png", None):
        return []
    from gpuscope.frames.plot import save_all

    return save_all(plots, Path(args.png), stem)
