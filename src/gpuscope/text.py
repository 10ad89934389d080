"""Text from a trace made safe to show: names can hold anything the profiled program wrote.

A kernel or marker name with `ESC [ 2 J` would clear the reader's terminal; a U+202E would turn
a table row around; a file name that is not UTF-8 cannot be encoded at all. Every view (terminal,
Markdown, HTML) draws `printable_data(report)`; the JSON keeps the exact text (JSON escapes it).
"""

from __future__ import annotations

import dataclasses
from typing import Any

# C0 and C1 controls, DEL, the bidirectional overrides and isolates, line/paragraph separators
_CONTROLS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029]
_CONTROLS += [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_ESCAPES = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" for code in _CONTROLS}


def printable(text: str) -> str:
    """`text` with control characters as visible escapes (`\\x1b`) and the undecodable bytes of a
    file name as `\\xff`; ordinary text is returned unchanged."""
    if text.isprintable():
        return text
    shown = text.translate(_ESCAPES)
    try:  # the bytes of a file name as os.fsdecode kept them: `\xff`
        return shown.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # any other lone surrogate: `\udcff`
        return shown.encode("utf-8", "backslashreplace").decode("utf-8")


def printable_data(data: Any) -> Any:
    """A copy of `data` (dicts, lists, tuples, strings, numbers, and frozen dataclasses of them
    such as a `document.model.Document`) with every string (keys too) made printable; the same
    object when nothing needs it."""
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, dict):
        return {printable_data(k): printable_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(printable_data(v) for v in data)
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        changed = {f.name: printable_data(getattr(data, f.name)) for f in dataclasses.fields(data)
                   if f.init}  # fmt: skip
        return dataclasses.replace(data, **changed)
    return data
