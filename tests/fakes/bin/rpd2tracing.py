#!/usr/bin/env python3
"""Fake rpd2tracing.py (test double): `rpd2tracing.py IN.rpd OUT.json` writes the bare-array
Chrome trace layout (`[ {}, {...}, ... ]`) with one "X" event per rocpd_op row, µs strings."""

import json
import sqlite3
import sys

from _fakelib import log


def main(argv):
    log("rpd2tracing.py", argv)
    db = sqlite3.connect(argv[0])
    rows = db.execute(
        "SELECT o.gpuId, o.queueId, o.start, o.end, s.string FROM rocpd_op o "
        "JOIN rocpd_string s ON s.id = o.description_id"
    ).fetchall()
    events = [{}] + [
        {
            "pid": str(g),
            "tid": str(q),
            "name": name,
            "ts": str(start // 1000),
            "dur": str((end - start) // 1000),
            "ph": "X",
            "args": {"desc": name},
        }
        for g, q, start, end, name in rows
    ]
    with open(argv[1], "w", encoding="utf-8") as f:
        json.dump(events, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
