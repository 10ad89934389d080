"""The real library logs under ../shared/reference/formats/, read in place (never copied into the
repo); a test that needs one is skipped with the reason when the reference folder is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "formats"


def reference_log(relative: str) -> Path:
    """A reference log, or skip the test saying which one is missing."""
    path = REFERENCE / relative
    if not path.is_file():
        pytest.skip(f"reference log {relative} not found under {REFERENCE}")
    return path
