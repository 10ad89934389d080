"""Shared by the reader tests: the reference outputs of real profilers, read in place.

They live in the sibling checkout's `shared/reference/formats/` (third-party files that the
repository must not carry); a test that needs one is skipped with the reason when it is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
FORMATS = REPO / ".." / "shared" / "reference" / "formats"
GOLDEN = REPO / "tests" / "data" / "golden" / "formats"


def reference_file(relative: str) -> Path:
    """`shared/reference/formats/<relative>`, or skip the test saying what is missing."""
    path = FORMATS / relative
    if not path.exists():
        pytest.skip(f"reference output {relative} not found under {FORMATS.resolve()}")
    return path
