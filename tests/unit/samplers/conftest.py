"""A fake clock for the samplers: time moves only when the sampler sleeps or a test advances it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "formats"
EPOCH_NS = 1_795_305_600_000_000_000  # 2026-11-22T00:00:00Z


class FakeClock:
    """Monotonic ns starting at 1 s; wall time = EPOCH_NS + monotonic."""

    def __init__(self) -> None:
        self.now = 1_000_000_000

    def monotonic_ns(self) -> int:
        return self.now

    def time_ns(self) -> int:
        return EPOCH_NS + self.now

    def sleep_ns(self, duration_ns: int) -> None:
        self.now += duration_ns

    def advance(self, duration_ns: int) -> None:
        self.now += duration_ns


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def reference_file(relative: str) -> Path:
    path = REFERENCE / relative
    if not path.is_file():
        pytest.skip(f"reference file {relative} not found under {REFERENCE}")
    return path
