"""Host activity of one rocpd run: regions (API calls with a duration) become host calls, or user
ranges when they are ROCTX markers; ROCTX marks (no duration) are kept in `rocpd_sample`.

rocprofv3 stores a ROCTX range under the marker function's name (`roctxRangePushA`) with the
user's message in the event's extdata; the message is the range's name here, as in rocprofv3's
CSV output. An API call whose start equals its end also lands in `rocpd_sample`, without its
function name: those are counted, not read.
"""

from __future__ import annotations

import numpy as np

from gpuscope.trace import _sql
from gpuscope.trace.model import ANNOTATION, I64
from gpuscope.trace.readers.rocpd._run import (
    MARK,
    MARKER_CATEGORIES,
    RunReader,
    domain_of,
    external,
    message,
)


def regions(reader: RunReader) -> None:
    table, event = reader.run.table("rocpd_region"), reader.table("rocpd_event")
    if table is None:
        return
    stack, extern, join = reader.event_join("R")
    category = "ifnull(E.category_id, -1)" if event else "-1"
    exprs = ('R."start"', 'R."end"', "R.tid", "R.name_id", category, "R.id", stack, extern)
    columns = reader.scan.ints(table, exprs, "regions", "R", join)
    start, end, tid, name, cat, ids, corr, ext = columns
    domain = _domains(reader, cat, name)
    calls, tids = domain != MARK, reader.tids(tid)
    reader.parts.add(
        "host",
        int(calls.sum()),
        name=_sql.intern_ids(reader.parts, name[calls], reader.text(name[calls])),
        start=start[calls],
        dur=(end - start)[calls],
        tid=tids[calls],
        correlation=reader.correlation(corr[calls]),
        external_id=external(ext[calls]),
        domain=domain[calls].astype(np.int8),
    )
    reader.counts["region"] = reader.counts.get("region", 0) + int(calls.sum())
    ranges = ~calls
    names = _marker_names(reader, ids[ranges], name[ranges])
    _add_ranges(reader, start[ranges], (end - start)[ranges], tids[ranges], names)


def _domains(reader: RunReader, categories: I64, names: I64) -> I64:
    """Domain per row, decided once per distinct (category, name) pair."""
    keys = (categories << 32) | (names & 0xFFFFFFFF)
    unique, inverse = np.unique(keys, return_inverse=True)
    cats, funcs = unique >> 32, unique & 0xFFFFFFFF
    text = reader.text(np.concatenate([cats, funcs]))
    table = [
        domain_of(text.get(int(c), ""), text.get(int(f), ""))
        for c, f in zip(cats, funcs, strict=True)
    ]
    result: I64 = np.array(table, np.int64)[inverse.reshape(-1)]
    return result


def _marker_names(reader: RunReader, region_ids: I64, name_ids: I64) -> list[str]:
    """The ROCTX message of each marker region, else its function name."""
    if len(region_ids) == 0:
        return []
    table, event = reader.table("rocpd_region"), reader.table("rocpd_event")
    found: dict[int, str] = {}
    if event is not None:
        sql = (
            f"SELECT R.id, E.extdata FROM {table} R JOIN {event} E ON E.id = R.event_id "
            f"WHERE E.category_id IN ({_marker_category_ids(reader)})"
        )
        found = {int(i): message(extdata) for i, extdata in reader.db.execute(sql)}
    text = reader.text(name_ids)
    return [
        found.get(int(r)) or text.get(int(n), "") for r, n in zip(region_ids, name_ids, strict=True)
    ]


def _marker_category_ids(reader: RunReader) -> str:
    table = reader.table("rocpd_string")
    marks = ",".join("?" * len(MARKER_CATEGORIES))
    rows = reader.db.execute(f"SELECT id FROM {table} WHERE string IN ({marks})", MARKER_CATEGORIES)
    return ",".join(str(int(row[0])) for row in rows) or "-1"


def _add_ranges(reader: RunReader, start: I64, dur: I64, tid: I64, names: list[str]) -> None:
    size = len(names)
    reader.parts.add(
        "ops",
        size,
        kind=np.full(size, ANNOTATION, np.int8),
        name=reader.parts.intern(names),
        start=start,
        dur=dur,
        tid=tid,
    )
    reader.counts["marker"] = reader.counts.get("marker", 0) + size


def marks(reader: RunReader) -> None:
    """ROCTX marks: samples of a marker category, with the message of their event."""
    table, event = reader.table("rocpd_sample"), reader.table("rocpd_event")
    track = reader.table("rocpd_track")
    if table is None or event is None or track is None:
        return
    sql = (
        f'SELECT S."timestamp", ifnull(T.tid, -1), E.extdata FROM {table} S '
        f"JOIN {event} E ON E.id = S.event_id LEFT JOIN {track} T ON T.id = S.track_id "
        f"WHERE E.category_id IN ({_marker_category_ids(reader)})"
    )
    rows = [r for r in reader.db.execute(sql) if type(r[0]) is int]
    skipped = _sql.count(reader.db, reader.run.table("rocpd_sample") or "") - len(rows)
    if skipped:
        reader.counts["sample_without_name"] = skipped
    if rows:
        start = np.array([r[0] for r in rows], np.int64)
        tids = reader.tids(np.array([r[1] if type(r[1]) is int else -1 for r in rows], np.int64))
        names = [message(r[2]) or "roctxMark" for r in rows]
        _add_ranges(reader, start, np.zeros(len(rows), np.int64), tids, names)
