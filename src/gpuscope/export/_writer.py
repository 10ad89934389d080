"""A Chrome trace JSON file written as a stream: events go out in chunks, never all in memory.

The file is `{"traceEvents": [...], "gpuscope": {...}}`; the metadata comes last so that it can
count what was written. A `.gz` name is gzip-compressed. The file appears whole or not at all
(written beside the target, renamed at the end).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from gpuscope._atomic import replacing

# gzip level 3: 2.5x faster than the default 9 on trace JSON for a ~10 % larger file
GZIP_LEVEL = 3


def us(ns: int) -> str:
    """ns → the µs text Chrome traces use, exact to the ns (`12.345`); ns must be ≥ 0."""
    whole, frac = divmod(ns, 1000)
    return f"{whole}.{frac:03d}"


class TraceWriter:
    """`with TraceWriter(path) as w: w.write(lines); w.finish(meta)` — each line one event."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.events = 0
        self._replacing = replacing(path)
        self._file: IO[bytes] | None = None

    def __enter__(self) -> TraceWriter:
        temp = self._replacing.__enter__()
        raw: IO[bytes] = open(temp, "wb")  # closed in __exit__
        if self.path.name.endswith(".gz"):
            raw = gzip.GzipFile(  # type: ignore[assignment]
                filename="", fileobj=raw, mode="wb", compresslevel=GZIP_LEVEL
            )
        self._file = raw
        raw.write(b'{"traceEvents":[\n')
        return self

    def write(self, lines: Iterable[str]) -> None:
        """Append events (each a JSON object's text)."""
        chunk = list(lines)
        if not chunk or self._file is None:
            return
        head = ",\n" if self.events else ""
        self._file.write((head + ",\n".join(chunk)).encode("utf-8"))
        self.events += len(chunk)

    def finish(self, metadata: dict[str, Any]) -> None:
        """Close the event array with the top-level `gpuscope` metadata."""
        assert self._file is not None
        tail = "\n],\n" + '"gpuscope":' + json.dumps(metadata, indent=1, default=str) + "}\n"
        self._file.write(tail.encode("utf-8"))

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._file is not None:
            inner = getattr(self._file, "fileobj", None)
            self._file.close()
            if inner is not None:
                inner.close()
        self._replacing.__exit__(kind, error, traceback)


def escaped(text: str) -> str:
    """A JSON string literal."""
    return json.dumps(text, ensure_ascii=False)
