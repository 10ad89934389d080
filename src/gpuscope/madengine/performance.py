"""The workload's own metric, as madengine reads it: `performance: <value> <metric>` lines in the
command's output, or a model card's `multiple_results` CSV.

The pattern is madengine's own (`PERFORMANCE_LOG_PATTERN`, madengine/deployment/base.py): an
optional sign, a decimal or scientific value, an optional unit suffix and/or comma, then the
metric name — `performance: 14164/s, samples_per_second`, `performance: 1.2E+3 tokens/sec`.
Where no such line is printed, madengine falls back to HuggingFace Trainer's
`train_samples_per_second` (metric `samples_per_second`); so does gpuscope.

Unlike madengine, which keeps the first line it finds, every line is kept (in output order):
the first value of each metric is its value (madengine's), and a metric printed several times
(once per epoch) keeps all its values as samples.

    >>> [(p.value, p.metric) for p in parse("step 3\\nperformance: 14164/s, samples_per_second\\n")]
    [(14164.0, 'samples_per_second')]
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuscope.errors import InputError

PERFORMANCE_LOG_PATTERN = (
    r"performance:\s+"
    r"([+\-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+\-]?[0-9]+)?)"
    r"(?:,?\s*/[a-zA-Z]+\s*,?|,)?\s+"
    r"([^\s,]+)"
)
_PATTERN = re.compile(PERFORMANCE_LOG_PATTERN)
_HUGGINGFACE = re.compile(r"train_samples_per_second['\"\s:=]+([0-9][0-9.eE+-]*)")
_REQUIRED = ("model", "performance", "metric")
# metric names whose larger value is better (throughput); anything naming a time is lower
_HIGHER = (
    "per_s",
    "/s",
    "throughput",
    "flops",
    "samples",
    "tokens",
    "images",
    "requests",
    "fps",
    "bandwidth",
    "gb_s",
    "speedup",
    "accuracy",
    "score",
)
_LOWER = (
    "latency",
    "time",
    "duration",
    "seconds",
    "_ms",
    "_us",
    "_ns",
    "ms_",
    "loss",
    "error",
    "memory",
    "bytes",
    "wall",
    "ttft",
    "tpot",
    "itl",
)


@dataclass(frozen=True)
class PerfLine:
    """One performance value: `text` as printed (perf.csv keeps it so), `value` as a number."""

    value: float
    metric: str
    text: str
    source: str = "log"  # "log", "huggingface" (train_samples_per_second) or "multiple_results"

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "value": self.value,
            "text": self.text,
            "direction": direction_of(self.metric),
            "source": self.source,
        }


def parse(text: str) -> list[PerfLine]:
    """Every performance line of `text`, in order; else the HuggingFace fallback (one value)."""
    return _scan(text.splitlines())


def read_log(path: Path) -> list[PerfLine]:
    """The performance lines of a log file (bytes that are not UTF-8 are skipped, as
    madengine does); [] when the file does not exist."""
    try:
        with path.open("rb") as handle:
            lines = (raw.decode("utf-8", "ignore") for raw in handle)
            return _scan(lines)
    except FileNotFoundError:
        return []


def _scan(lines: Iterable[str]) -> list[PerfLine]:
    found: list[PerfLine] = []
    fallback: PerfLine | None = None
    for line in lines:
        found += [
            PerfLine(value, m.group(2).rstrip(","), m.group(1).strip())
            for m in _PATTERN.finditer(line)
            if (value := finite(m.group(1))) is not None  # `performance: 1e400 x` is no value
        ]
        if not found and fallback is None:
            fallback = next(iter(parse_huggingface(line)), None)
    return found or ([fallback] if fallback else [])


def parse_huggingface(line: str) -> list[PerfLine]:
    hf = _HUGGINGFACE.search(line)
    value = finite(hf.group(1)) if hf else None
    if hf is None or value is None:
        return []
    return [PerfLine(value, "samples_per_second", hf.group(1), "huggingface")]


def finite(text: str | None) -> float | None:
    """`text` as a finite number; None when it is none (empty, `abc`, `nan`, `1e400` = inf)."""
    try:
        value = float((text or "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class MultipleResult:
    """One row of a `multiple_results` CSV: its `model` suffix, performance (None when empty),
    metric, and its other columns (kept in perf.csv, as madengine does)."""

    model: str
    performance: str
    metric: str
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def value(self) -> float | None:
        """The performance as a finite number (None: empty, not a number, or not finite)."""
        return finite(self.performance)


def read_multiple_results(path: Path) -> list[MultipleResult]:
    """A model card's `multiple_results` CSV (columns model, performance, metric, any others;
    header names stripped as madengine strips them). InputError when it is missing or lacks a
    required column."""
    header, rows = csv_rows(path, f"--multiple-results {path}")
    missing = [c for c in _REQUIRED if c not in header]
    if missing:
        raise InputError(
            f"--multiple-results {path}: no {', '.join(missing)} column (expected a CSV with "
            "model, performance, metric columns, as madengine's multiple_results)"
        )
    return list(_rows((cells for _, cells in rows), header))


Numbered = list[tuple[int, list[str]]]  # (the line a row starts on, its cells)


def csv_rows(path: Path, where: str) -> tuple[list[str], Numbered]:
    """A madengine CSV's header (names stripped, as madengine strips them; a byte-order mark
    dropped) and its other rows with the line each starts on; InputError naming `where` (and
    the line) when it cannot be read. A field of any length is read: gpuscope's own perf.csv
    holds the command's arguments, longer than the csv module's default limit (131,072)."""
    try:
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as error:
        raise InputError(f"{where}: cannot read ({error.strerror or error})") from None
    return parse_csv(text, where)


def parse_csv(text: str, where: str) -> tuple[list[str], Numbered]:
    """The header (names stripped) and numbered rows of CSV `text` (see `csv_rows`)."""
    reader = csv.reader(io.StringIO(text))
    rows: Numbered = []
    with _field_limit(len(text) + 1):
        try:
            header = [h.strip() for h in next(reader, [])]
            start = reader.line_num + 1
            for cells in reader:
                rows.append((start, cells))
                start = reader.line_num + 1
        except csv.Error as error:
            raise InputError(f"{where}: line {reader.line_num}: not CSV ({error})") from None
    return header, rows


@contextlib.contextmanager
def _field_limit(size: int) -> Iterator[None]:
    """The csv module's field size limit (one for the whole process) raised while one text is
    parsed, then put back."""
    before = csv.field_size_limit()
    csv.field_size_limit(max(before, size))
    try:
        yield
    finally:
        csv.field_size_limit(before)


def _rows(reader: Iterable[list[str]], header: list[str]) -> Iterator[MultipleResult]:
    for cells in reader:
        if not any(c.strip() for c in cells):
            continue
        row = dict(zip(header, (c.strip() for c in cells), strict=False))
        extra = {k: v for k, v in row.items() if k not in _REQUIRED}
        yield MultipleResult(
            row.get("model", ""), row.get("performance", ""), row.get("metric", ""), extra
        )


def direction_of(metric: str) -> str:
    """ "higher" or "lower" is better, from the metric's name (throughput vs. time); madengine's
    metrics are mostly throughputs, so an unknown name counts as higher."""
    name = metric.lower()
    if any(word in name for word in _HIGHER):
        return "higher"
    return "lower" if any(word in name for word in _LOWER) else "higher"
