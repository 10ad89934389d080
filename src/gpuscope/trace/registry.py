"""The reader registry: find the reader for a file by its content, never by its extension alone.

Third-party readers register the same way the built-ins do (`register(MyReader())`); a second
reader under an existing name raises.
"""

from __future__ import annotations

import os
from typing import Protocol

from gpuscope.errors import InputError, ReaderError
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace.model import Trace


class Reader(Protocol):
    name: str

    def sniff(self, path: str) -> bool: ...

    def read(self, path: str, progress: Progress | None = None) -> Trace: ...


_READERS: dict[str, Reader] = {}


def register(reader: Reader) -> None:
    if reader.name in _READERS:
        raise ValueError(f"a trace reader named {reader.name!r} is already registered")
    _READERS[reader.name] = reader


def readers() -> dict[str, Reader]:
    _register_builtins()
    return dict(_READERS)


def _register_builtins() -> None:
    if "kineto" not in _READERS:
        from gpuscope.trace.readers.kineto import KinetoReader

        register(KinetoReader())


def read_trace(path: str, progress: Progress | None = None) -> Trace:
    """Read any supported trace file; raise ReaderError naming the file when it is not one."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    if os.path.getsize(path) == 0:
        raise ReaderError(f"{path}: the file is empty; expected a Kineto/Chrome trace JSON")
    for reader in readers().values():
        if reader.sniff(path):
            return _read(reader, path, progress)
    known = ", ".join(sorted(_READERS))
    raise ReaderError(
        f"{path}: not a trace this version can read; expected one of: {known} "
        "(Kineto/Chrome trace JSON written by torch.profiler, .json or .json.gz)"
    )


def _read(reader: Reader, path: str, progress: Progress | None) -> Trace:
    try:
        return reader.read(path, progress)
    except ReaderError as error:
        message = str(error)
        raise ReaderError(message if message.startswith(path) else f"{path}: {message}") from None
    except (OSError, EOFError) as error:
        raise ReaderError(f"{path}: cannot read ({error})") from None
