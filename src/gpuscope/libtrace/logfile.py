"""Reading library logs tolerantly: any encoding junk replaced, a cut-off last line dropped.

A library writes whole lines; a last line without its newline is what a killed writer leaves
behind, so it is dropped (and reported) rather than parsed into a wrong shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


class LogLines:
    """Iterate a log's complete lines; after iterating, `partial_tail` holds a dropped last line.

    >>> log = LogLines(path)                              # doctest: +SKIP
    >>> calls = list(cublas.parse(log)); log.partial_tail  # doctest: +SKIP
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.partial_tail: str | None = None

    def __iter__(self) -> Iterator[str]:
        self.partial_tail = None
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.endswith("\n"):
                    yield line
                elif line.strip():
                    self.partial_tail = line

    def warning(self) -> str | None:
        """A one-line note about the dropped last line, if any."""
        if self.partial_tail is None:
            return None
        return (
            f"{self.path}: ignored its last line, which has no newline (the writer was probably "
            f"killed mid-line): {self.partial_tail[:80]!r}"
        )
