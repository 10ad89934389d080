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

A table's name is its path in the report, joined by dots. Objects nested inside a row (a
diff's `before` / `after`) become dotted columns (`before.time_us`); deeper values, lists and a
finding's `evidence` JSON text: every table has plain columns.
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
    for key, value in node.items():
        here = (*path, str(key))
        if _is_rows(value):
            found[".".join(here)] = _plain(list(value))
        elif _is_keyed(value):
            column = _KEY_COLUMN.get(str(key), "key")
            found[".".join(here)] = _plain([{column: k, **row} for k, row in value.items()])
        elif isinstance(value, Mapping):
            _walk(value, here, found)


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


def _plain(rows: list[Mapping[str, Any]]) -> Rows:
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
