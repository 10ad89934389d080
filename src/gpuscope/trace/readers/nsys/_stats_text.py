"""The text output of `nsys stats` (its default `--format`): one section per report,

     ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):

     Time (%)  Total Time (ns)  Instances  ...  Name
     --------  ---------------  ---------  ...  ----
        100.0      130,855,114          1  ...  add(int, float *, float *)

right-aligned numbers with thousands separators. The dash line gives the column spans (names
may hold commas and spaces, so the line is sliced, not split); the last column runs to the end
of the line. Reports that found no data print `SKIPPED: <db> does not contain <what>.`
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SECTION = re.compile(r"^\s*\*\*\s+(.+?)\s+\((\w+)\):\s*$")
SKIPPED = re.compile(r"^SKIPPED:\s+(.+?)\s*$")
PROCESSING = re.compile(r"^Processing \[.+?\] with \[.+?\.py\]")
_DASHES = re.compile(r"-+")


@dataclass
class TextTable:
    report: str  # cuda_gpu_kern_sum, osrt_sum, ...
    header: list[str]
    rows: list[list[str]]


@dataclass
class TextStats:
    tables: list[TextTable] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "report1.sqlite does not contain ..."


def looks_like_text_stats(lines: list[str]) -> bool:
    """True for `nsys stats` text printed to the terminal (not the progress log of a run that
    wrote CSV files, whose `Processing` lines say `to [file.csv]`)."""
    if any(SECTION.match(line) for line in lines):
        return True
    return any(PROCESSING.match(line) and " to [" not in line for line in lines)


def parse(text: str) -> TextStats:
    lines = text.splitlines()
    found = TextStats()
    index = 0
    while index < len(lines):
        line = lines[index]
        skipped, section = SKIPPED.match(line), SECTION.match(line)
        if skipped:
            found.skipped.append(skipped.group(1).rstrip("."))
        if section:
            table, index = _table(section.group(2), lines, index + 1)
            if table is not None:
                found.tables.append(table)
            continue
        index += 1
    return found


def _table(report: str, lines: list[str], index: int) -> tuple[TextTable | None, int]:
    """The table after a section title; returns it and the index of the line after it."""
    while index < len(lines) and not lines[index].strip():
        index += 1
    if index + 1 >= len(lines) or not set(lines[index + 1].strip()) <= {"-", " "}:
        return None, index
    spans = [(m.start(), m.end()) for m in _DASHES.finditer(lines[index + 1])]
    if not spans:
        return None, index
    header = _cells(lines[index], spans)
    rows = []
    index += 2
    while index < len(lines) and lines[index].strip():
        rows.append(_cells(lines[index], spans))
        index += 1
    return TextTable(report, header, rows), index


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    cells = [line[start:end].strip() for start, end in spans[:-1]]
    cells.append(line[spans[-1][0] :].strip())
    return cells
