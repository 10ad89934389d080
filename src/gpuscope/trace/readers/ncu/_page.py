"""One `ncu --csv` output file -> a `Page`: its kernels and their metrics in base units.

The file is ncu's stdout: `==PROF==` lines and the application's own output come first, then
the CSV. Two layouts: the raw page (`--page raw`: row 1 metric names, row 2 units, one row per
kernel) and the details page (default: one row per kernel x metric, `Metric Unit` per row, and
rule rows whose metric cells are empty — ncu writes those rows shorter than the others). Every
cell is quoted; numbers carry thousands separators (`"1,980,000"`); `n/a` is a missing value.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from typing import Any

from gpuscope.errors import ReaderError
from gpuscope.trace._csv import csv_row, norm, parse_float
from gpuscope.trace.readers.ncu._units import to_base

IDENT = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)
DETAILS = ("Section Name", "Metric Name", "Metric Unit", "Metric Value")
RULES = (
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
)
EXPECTED = 'a header line starting "ID","Process ID",...,"Kernel Name" (the output of ncu --csv)'


@dataclass
class Kernel:
    """One profiled kernel launch: its identity columns and its metrics."""

    ident: dict[str, str]
    values: dict[str, float] = field(default_factory=dict)  # metric -> value in base units
    texts: dict[str, str] = field(default_factory=dict)  # non-numeric metric values
    rules: list[dict[str, Any]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.ident.get("ID", "")

    @property
    def name(self) -> str:
        return self.ident.get("Kernel Name", "")


@dataclass
class Page:
    path: str
    layout: str  # "raw" or "details"
    kernels: list[Kernel]
    units: dict[str, str]  # metric -> base unit
    warnings: list[str] = field(default_factory=list)
    truncated: bool = False


def is_header(cells: list[str]) -> bool:
    return (
        len(cells) > 4 and cells[0] == "ID" and cells[1] == "Process ID" and "Kernel Name" in cells
    )


def read_page(path: str) -> Page:
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        text = handle.read()
    lines = text.splitlines(keepends=True)
    start = next(
        (i for i, line in enumerate(lines) if is_header(csv_row(line.rstrip("\r\n")))), None
    )
    if start is None:
        count = sum(1 for line in lines if line.strip())
        raise ReaderError(
            f"no ncu CSV found: expected {EXPECTED}; the file holds {count:,} "
            "line(s) of other output (==PROF== lines, the application's prints). "
            "With --log-file ncu writes the CSV to that file"
        )
    rows = list(csv.reader(lines[start:]))
    header, body = rows[0], rows[1:]
    page = Page(path, "details" if all(c in header for c in DETAILS) else "raw", [], {})
    if not text.endswith(("\n", "\r")):  # the writer stopped mid-row
        page.truncated = True
        what = "last row" if body else "header line"
        body = body[:-1]
        page.warnings.append(
            f"the {what} is cut short (the writer died?): read the {len(body):,} complete rows"
        )
    if page.layout == "raw":
        _raw(page, header, body)
    else:
        _details(page, header, body)
    return page


def _raw(page: Page, header: list[str], body: list[list[str]]) -> None:
    units_row = body[0] if body and body[0][:1] == [""] else None
    if units_row is not None:
        body = body[1:]
    metrics = [(i, name) for i, name in enumerate(header) if name not in IDENT]
    scale = {}
    for i, name in metrics:
        unit = units_row[i] if units_row is not None and i < len(units_row) else ""
        base, factor = to_base(unit)
        scale[i] = factor
        if base:
            page.units[name] = base
    for row in body:
        if len(row) < len(header):
            page.warnings.append(
                f"skipped a row of {len(row)} fields (the header has {len(header)})"
            )
            continue
        kernel = Kernel({h: row[i] for i, h in enumerate(header) if h in IDENT})
        for i, name in metrics:
            _store(kernel, name, row[i], scale[i])
        page.kernels.append(kernel)


def _details(page: Page, header: list[str], body: list[list[str]]) -> None:
    at = {name: header.index(name) for name in (*IDENT, *DETAILS, *RULES) if name in header}
    kernels: dict[str, Kernel] = {}
    for row in body:
        if len(row) <= at["Metric Value"]:
            continue  # a stray line (application output after the CSV)
        row = row + [""] * (len(header) - len(row))
        key = row[at["ID"]]
        kernel = kernels.get(key)
        if kernel is None:
            kernel = kernels[key] = Kernel({h: row[at[h]] for h in IDENT if h in at})
        if row[at["Metric Name"]]:
            _metric(page, kernel, row, at)
        elif "Rule Name" in at and row[at["Rule Name"]]:
            kernel.rules.append(_rule(row, at))
    page.kernels = list(kernels.values())


def _metric(page: Page, kernel: Kernel, row: list[str], at: dict[str, int]) -> None:
    name = row[at["Metric Name"]]
    if name in kernel.values or name in kernel.texts:  # same name in another section
        name = f"{row[at['Section Name']]}: {name}"
    base, factor = to_base(row[at["Metric Unit"]])
    if base:
        page.units[name] = base
    _store(kernel, name, row[at["Metric Value"]], factor)


def _rule(row: list[str], at: dict[str, int]) -> dict[str, Any]:
    speedup = parse_float(row[at["Estimated Speedup"]]) if "Estimated Speedup" in at else math.nan
    rule: dict[str, Any] = {
        "section": row[at["Section Name"]],
        "rule": row[at["Rule Name"]],
        "type": row[at["Rule Type"]] if "Rule Type" in at else "",
        "description": row[at["Rule Description"]] if "Rule Description" in at else "",
    }
    if math.isfinite(speedup):
        rule["speedup"] = speedup
        kind = at.get("Estimated Speedup Type")
        rule["speedup_type"] = row[kind] if kind is not None else ""
    return rule


def _store(kernel: Kernel, name: str, cell: str, factor: float) -> None:
    value = parse_float(cell)
    if math.isfinite(value):
        kernel.values[name] = value * factor
    elif norm(cell) not in ("", "n/a"):
        kernel.texts[name] = cell
