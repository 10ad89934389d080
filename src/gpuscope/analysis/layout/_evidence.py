"""A finding's `evidence` (any JSON-shaped value) → readable blocks.

Scalars become facts, a dict of dicts a table (one row per key), a dict of scalars a two-column
table, a list of names a name list, a list of dicts a table, a dict holding any of these the same
blocks under its name. A value nested deeper still is one line of text (`fmt.value`), never JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuscope.document import units as fmt
from gpuscope.document.model import Block, Cell, Facts, Names, Table
from gpuscope.document.names import short_name

_NAME_KEYS = ("name", "kernel", "op")


def evidence_blocks(evidence: Any) -> list[Block]:
    if isinstance(evidence, Mapping):
        return _mapping_blocks(evidence)
    nested = _nested("evidence", evidence)
    return [nested] if nested else [Facts((("evidence", fmt.value("", evidence)),))]


def _mapping_blocks(evidence: Mapping[str, Any], caption: str = "") -> list[Block]:
    scalars = [(k, v) for k, v in evidence.items() if not _is_container(v)]
    blocks: list[Block] = []
    if scalars or caption:
        items = tuple((fmt.label(k), _scalar(k, v)) for k, v in scalars)
        blocks.append(Facts(items, caption))
    for key, value in evidence.items():
        if not _is_container(value):
            continue
        nested = _nested(key, value)
        if nested is not None:
            blocks.append(nested)
        elif isinstance(value, Mapping) and not caption:  # one level down: its own facts
            blocks += _mapping_blocks(value, fmt.label(key))
        else:
            blocks.append(Facts(((fmt.label(key), fmt.value(key, value)),)))
    return blocks


def _scalar(key: str, value: Any) -> str:
    """A fact's text; a kernel's name shortened (its full text is in the JSON)."""
    if isinstance(value, str) and key.startswith(("kernel", "before", "after")):
        return short_name(value, 96)
    return fmt.value(key, value)


def _nested(key: str, value: Any) -> Block | None:
    caption = fmt.label(key)
    if isinstance(value, Mapping) and value and all(isinstance(v, Mapping) for v in value.values()):
        return _rows_table(caption, [{"name": k, **v} for k, v in value.items()])
    if isinstance(value, Mapping) and not any(_is_container(v) for v in value.values()):
        rows = tuple((_name_cell(str(k)), Cell(fmt.value(key, v))) for k, v in value.items())
        return Table(("name", "value"), rows, (False, True), caption)
    if _is_list(value) and all(isinstance(v, str) for v in value):
        return Names(tuple(_name_cell(v) for v in value), caption)
    if _is_list(value) and value and all(isinstance(v, Mapping) for v in value):
        return _rows_table(caption, list(value))
    return None


def _rows_table(caption: str, rows: list[Mapping[str, Any]]) -> Table:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    cells = tuple(tuple(_cell(col, row.get(col)) for col in columns) for row in rows)
    numeric = tuple(col not in _NAME_KEYS for col in columns)
    return Table(tuple(fmt.label(c) for c in columns), cells, numeric, caption)


def _cell(key: str, value: Any) -> Cell:
    if key in _NAME_KEYS and isinstance(value, str):
        return _name_cell(value)
    return Cell(fmt.value(key, value))


def _name_cell(name: str) -> Cell:
    return Cell(short_name(name), full=name, code=True, name=True)


def _is_container(value: Any) -> bool:
    return isinstance(value, Mapping) or _is_list(value)


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))
