"""Write files whole or not at all: a reader (or a crash) never sees half a file."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; when the block succeeds it replaces `path`.

    >>> with replacing(Path("out/report.json")) as temp:   # doctest: +SKIP
    ...     temp.write_text("{}")
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        yield temp
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def write_atomic(path: Path, data: bytes) -> Path:
    with replacing(path) as temp:
        temp.write_bytes(data)
    return path
