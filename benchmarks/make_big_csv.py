"""Make a large rocprofv3 `kernel_trace.csv` (ROCm 7 layout) from the real file's header and rows.

The header is read at run time from AMD's ROCm 7 sample
`rocprofv3/amd-docs-rocm7-2025-08/kernel_trace.csv`, so the columns, their order and quoting are
exactly what rocprofv3 writes ("Kind" and "Agent_Id" quoted as text, `"Agent 4"`). The rows are
the kernel dispatches of `make_big_sqlite.Workload` — the same synthetic workload the rocpd and
RPD generators write (seed 0, so a CSV and a database of the same `--rows` hold the same kernels
at the same times): its kernel name vocabulary (300 names: Tensile `Cijk_*` GEMMs, ATen
elementwise and reduction kernels, four of them the real file's kernels), log-normal durations,
two streams (queue and stream ids one apart), 1-D grids.

Every id of the real file is shifted, never reused as is: Dispatch_Id and Correlation_Id count on
from the real file's largest id, Kernel_Id numbers the names on from its largest kernel id, and
timestamps start at the real file's first Start_Timestamp, queue and stream ids count from the
real first row's. Thread, agent and the register / LDS / scratch columns are the real rows'
values (cycled per kernel name).

    python benchmarks/make_big_csv.py --kernels 1000000
    # -> bench-data/big_1010101_kernel_trace.csv (1,010,101 ops, 1,000,000 kernels)

`--rows` counts GPU ops as in make_big_sqlite.py (every 100th op there is a memory copy, which
a kernel trace does not hold): `kernels_for_rows` says how many CSV rows that gives, `--kernels`
picks the op count that gives exactly that many.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_big_sqlite import FORMATS, START_NS, Workload, kernel_names  # noqa: E402

REFERENCE = FORMATS / "rocprofv3" / "amd-docs-rocm7-2025-08" / "kernel_trace.csv"
BATCH = 1 << 16  # rows formatted at once
REAL_NAME_AT, REAL_NAME_EVERY = 7, 31  # where the real file's kernel names go among 300
ONE_D = {f"{what}_Size_{axis}": "1" for what in ("Workgroup", "Grid") for axis in "YZ"}
VARYING = (
    "Queue_Id",
    "Stream_Id",
    "Dispatch_Id",
    "Correlation_Id",
    "Start_Timestamp",
    "End_Timestamp",
    "Workgroup_Size_X",
    "Grid_Size_X",
)


def kernels_for_rows(rows: int) -> int:
    """Kernel dispatches among `rows` Workload ops (every 100th op is a copy)."""
    return rows - rows // 100


def rows_for_kernels(kernels: int) -> int:
    """The smallest `--rows` whose Workload holds exactly `kernels` kernel dispatches."""
    rows = kernels + kernels // 99
    while kernels_for_rows(rows) < kernels:
        rows += 1
    while rows > 0 and kernels_for_rows(rows - 1) >= kernels:
        rows -= 1
    if kernels_for_rows(rows) != kernels:
        raise ValueError(f"no op count gives exactly {kernels} kernels")
    return rows


class Reference:
    """The real file: its header line (verbatim) and rows as dicts."""

    def __init__(self, path: Path) -> None:
        with open(path, newline="") as handle:
            self.header_line = handle.readline()
            handle.seek(0)
            self.rows = list(csv.DictReader(handle))
        if not self.rows:
            raise SystemExit(f"{path}: no rows")
        self.columns = list(self.rows[0].keys())

    def largest(self, column: str) -> int:
        return max(int(row[column]) for row in self.rows)


def make_csv(path: Path, rows: int, reference: Path = REFERENCE, seed: int = 0) -> int:
    """Write the kernel dispatches of Workload(rows, seed); returns how many were written."""
    ref = Reference(reference)
    work = Workload(rows, seed)
    base = min(int(row["Start_Timestamp"]) for row in ref.rows)
    shift = base - START_NS  # the Workload starts at START_NS: move it to the real file's clock
    first_id = ref.largest("Dispatch_Id") + 1
    first_kernel_id = ref.largest("Kernel_Id") + 1
    names = kernel_names()
    for j, real in enumerate(sorted({row["Kernel_Name"] for row in ref.rows})):
        names[REAL_NAME_AT + REAL_NAME_EVERY * j] = real  # the real kernels among the others
    by_name = [ref.rows[i % len(ref.rows)] for i in range(len(names))]  # register columns
    templates = _templates(ref, names, by_name, first_kernel_id)
    keep = ~work.copy
    columns: dict[str, Any] = {
        "Dispatch_Id": np.arange(work.rows, dtype=np.int64)[keep] + first_id,
        "Start_Timestamp": work.start[keep] + shift,
        "End_Timestamp": work.end[keep] + shift,
        "Workgroup_Size_X": work.block[keep],
        "Grid_Size_X": work.grid[keep] * work.block[keep],  # rocprofv3 grid: work-items
        "Stream_Id": work.stream[keep] + int(ref.rows[0]["Stream_Id"]),
        "Queue_Id": work.stream[keep] + int(ref.rows[0]["Queue_Id"]),
        "name": work.kernel[keep],
    }
    columns["Correlation_Id"] = columns["Dispatch_Id"]
    written = int(keep.sum())
    with open(path, "w", newline="") as out:
        out.write(ref.header_line)
        for lo in range(0, written, BATCH):
            out.write(_lines(ref, templates, columns, lo, min(lo + BATCH, written)))
    return written


def _templates(
    ref: Reference, names: list[str], by_name: list[dict[str, str]], first_kernel_id: int
) -> list[str]:
    """Per kernel name, its line as a %-template: the real row's cells, but the name and
    Kernel_Id, with `%d` where a column varies per dispatch (VARYING, in that order)."""
    templates = []
    for index, (name, row) in enumerate(zip(names, by_name, strict=True)):
        cells = dict(row, Kernel_Name=name, Kernel_Id=str(first_kernel_id + index), **ONE_D)
        line = []
        for column in ref.columns:
            if column in VARYING:
                line.append("%d")
            else:
                line.append(_cell(column, cells[column]).replace("%", "%%"))
        templates.append(",".join(line) + "\n")
    return templates


_QUOTED = {"Kind", "Agent_Id", "Kernel_Name"}  # rocprofv3 quotes its text columns


def _lines(ref: Reference, templates: list[str], columns: dict[str, Any], lo: int, hi: int) -> str:
    order = [c for c in ref.columns if c in VARYING]
    values = zip(*(columns[c][lo:hi].tolist() for c in order), strict=True)
    names = columns["name"][lo:hi].tolist()
    return "".join(templates[n] % row for n, row in zip(names, values, strict=True))


def _cell(column: str, value: str) -> str:
    return '"' + value.replace('"', '""') + '"' if column in _QUOTED else value


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="Workload ops (see below)")
    parser.add_argument("--kernels", type=int, help="exact kernel rows (overrides --rows)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HERE.parent / "bench-data")
    parser.add_argument("--reference", type=Path, default=REFERENCE)
    args = parser.parse_args(argv[1:])
    rows = rows_for_kernels(args.kernels) if args.kernels else args.rows
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"big_{rows}_kernel_trace.csv"
    began = time.perf_counter()
    written = make_csv(target, rows, args.reference, args.seed)
    seconds = time.perf_counter() - began
    size = target.stat().st_size / 1e6
    print(f"wrote {target} ({written} kernels, {size:.0f} MB) in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
