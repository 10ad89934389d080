"""Every table of a report dict (analysis, set, ranks, diff, counters, bench, libperf), found by
its shape, as rows: what `.tables()` turns into DataFrames and `--csv` / `--parquet` write.

    >>> rows = report_tables(analysis.to_dict())       # doctest: +SKIP
    >>> sorted(rows)[:3]                                # ['categories', 'devices', 'families']

A table is
- a list of objects (`top_kernels`, `findings`, `gaps.histogram`, `ranks.per_rank`, ...): one
  row per object;
- an object of objects keyed by name (`categories`, `families`, `memcpy.by_kind`,
  `gaps.attribution`, `sync.by_name`): one row per key, the key in the first column (named
  after the table: `category`, `family`, `kind`, `cause`, `name`; else `key`).

- an object with a `names` list and other lists of its length (`ranks.steps`: per step, the
  rank that computed most and the imbalance): one row per name.

Rows that hold lists of that length beside such a `names` list (`ranks.steps.per_rank`: each
rank's wall, busy, compute ... time per step) are one row per (row, name): long form, the name
in a column (`step`). A table's name is its path in the report, joined by dots. Objects nested
inside a row (a diff's `before` / `after`) become dotted columns (`before.time_us`); a list of
plain values is its values joined by ", " (a rank's `devices`); deeper values and a finding's
`evidence` are JSON text: every table has plain columns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

Rows = list[dict[str, Any]]
_KEY_COLUMN = {
    "categories": "category",
    "families": "family",
    "by_kind": "kind",
    "by_name": "name",
    "attribution": "cause",
    "metrics": "metric",
}
_KEEP = {"evidence"}  # kept whole, as JSON text
_NAMED = {"steps": "step"}  # the column that holds a `names` list's entries, by the object's key
_ALWAYS = ("top_kernels", "findings", "integrity", "regions", "kernels", "failed")


def report_tables(report: Mapping[str, Any]) -> dict[str, Rows]:
    """name → rows, for every table in `report` (see the module's docstring)."""
    found: dict[str, Rows] = {}
    _walk(report, (), found)
    for name in _ALWAYS:
        if isinstance(report.get(name), list) and name not in found:
            found[name] = []  # no rows, but the table a user asks for is there
    return found


def _walk(node: Mapping[str, Any], path: tuple[str, ...], found: dict[str, Rows]) -> None:
    names = _names(node)
    named = _NAMED.get(path[-1] if path else "", "name")
    if names is not None:
        found[".".join(path)] = _by_name(node, names, named)
    for key, value in node.items():
        here = (*path, str(key))
        if _is_rows(value):
            rows: list[Mapping[str, Any]] = list(value)
            found[".".join(here)] = _plain(rows if names is None else _long(rows, names, named))
        elif _is_keyed(value):
            column = _KEY_COLUMN.get(str(key), "key")
            found[".".join(here)] = _plain([{column: k, **row} for k, row in value.items()])
        elif isinstance(value, Mapping):
            _walk(value, here, found)


def _names(node: Mapping[str, Any]) -> list[Any] | None:
    """The `names` list of an object that holds other lists of its length, else None."""
    names = node.get("names")
    if not _is_values(names) or not names:
        return None
    beside = [k for k, v in node.items() if k != "names" and _is_values(v) and len(v) == len(names)]
    return list(names) if beside else None


def _by_name(node: Mapping[str, Any], names: list[Any], column: str) -> Rows:
    """One row per name: the entry of each list of the names' length."""
    lists = {k: v for k, v in node.items()
             if k != "names" and _is_values(v) and len(v) == len(names)}  # fmt: skip
    return [{column: name, **{k: v[i] for k, v in lists.items()}} for i, name in enumerate(names)]


def _long(rows: list[Mapping[str, Any]], names: list[Any], column: str) -> Rows:
    """Rows whose lists run over `names`, one row per (row, name); others as they are."""
    result: Rows = []
    for row in rows:
        lists = [k for k, v in row.items() if _is_values(v) and len(v) == len(names)]
        if not lists:
            result.append(dict(row))
            continue
        for i, name in enumerate(names):
            entry = {k: v for k, v in row.items() if k not in lists}
            result.append({**entry, column: name, **{k: row[k][i] for k in lists}})
    return result


def _is_values(value: Any) -> bool:
    """A list of plain values (numbers, text, None)."""
    return isinstance(value, list) and not any(isinstance(v, (Mapping, list)) for v in value)


def _is_rows(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _is_keyed(value: Any) -> bool:
    """An object whose values are all objects of mostly plain values (records by key)."""
    if not isinstance(value, Mapping) or not value:
        return False
    rows = list(value.values())
    if not all(isinstance(row, Mapping) and row for row in rows):
        return False
    flat = _plain(rows)
    plain = sum(
        not isinstance(v, str) or not v.startswith(("{", "[")) for r in flat for v in r.values()
    )
    return plain * 2 > sum(len(row) for row in flat)


def _plain(rows: Sequence[Mapping[str, Any]]) -> Rows:
    """The rows with the objects some of them hold under a key spread into dotted columns
    (`before.time_us`; not a finding's `evidence`), and deeper values as JSON text."""
    spread = {k for row in rows for k, v in row.items() if isinstance(v, Mapping)} - _KEEP
    return [_row(row, spread) for row in rows]


def _row(row: Mapping[str, Any], spread: set[Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in row.items():
        if key in spread:
            if isinstance(value, Mapping):
                result.update({f"{key}.{k}": _cell(v) for k, v in value.items()})
        else:
            result[str(key)] = _cell(value)
    return result


def _cell(value: Any) -> Any:
    if _is_values(value):
        return ", ".join("" if v is None else str(v) for v in value)
    return json.dumps(value, sort_keys=True) if isinstance(value, (Mapping, list)) else value


def set_tables(
    reports: Sequence[Mapping[str, Any]],
    ranks: Mapping[str, Any] | None = None,
    failed: list[tuple[str, str]] | None = None,
    extra: Sequence[Mapping[str, Rows]] = (),
) -> dict[str, Rows]:
    """The tables of several reports (an analysis-set): every trace's tables under the names one
    report has, with `trace` (position) and `rank` columns first (the rank the trace records, or
    the one the cross-rank report gave it, e.g. from a `rank<R>/` folder); `extra[i]`: more
    tables of trace i, joined the same way; the cross-rank report's under `ranks.`
    (`ranks.per_rank`, ...); the inputs not read as `failed`."""
    rows: dict[str, Rows] = {}
    known = {r.get("path"): r.get("rank") for r in (ranks or {}).get("per_rank") or []}
    for index, report in enumerate(reports):
        source = report["source"]
        rank = source.get("rank") if source.get("rank") is not None else known.get(source["path"])
        more = extra[index] if index < len(extra) else {}
        for name, table in {**report_tables(report), **more}.items():
            rows.setdefault(name, []).extend({"trace": index, "rank": rank, **r} for r in table)
    if ranks is not None:
        rows.update({f"ranks.{name}": table for name, table in report_tables(ranks).items()})
    if failed:
        rows["failed"] = [{"path": path, "error": error} for path, error in failed]
    return rows
