#!/usr/bin/env python3
"""Fake rocmProfileData runTracer.sh (test double): `runTracer.sh [-o FILE] APP [ARGS]` runs
the app and writes FILE (default trace.rpd) as SQLite with RPD's table names and columns
(rocpd_metadata, rocpd_string, rocpd_op, rocpd_api, rocpd_api_ops) holding two kernels."""

import os
import sqlite3
import sys

from _fakelib import KERNELS, boot_ns, log, run_app

TABLES = (
    "CREATE TABLE rocpd_metadata (id integer PRIMARY KEY AUTOINCREMENT, tag varchar(4096) NOT NULL, value varchar(4096) NOT NULL)",
    "CREATE TABLE rocpd_string (id integer PRIMARY KEY AUTOINCREMENT, string varchar(4096) NOT NULL)",
    "CREATE TABLE rocpd_op (id integer PRIMARY KEY AUTOINCREMENT, gpuId integer NOT NULL, queueId integer NOT NULL, sequenceId integer NOT NULL, completionSignal varchar(18) NOT NULL, start integer NOT NULL, end integer NOT NULL, description_id bigint NOT NULL, opType_id bigint NOT NULL)",
    "CREATE TABLE rocpd_api (id integer PRIMARY KEY AUTOINCREMENT, pid integer NOT NULL, tid integer NOT NULL, start integer NOT NULL, end integer NOT NULL, apiName_id bigint NOT NULL, args_id bigint NOT NULL)",
    "CREATE TABLE rocpd_api_ops (id integer PRIMARY KEY AUTOINCREMENT, api_id bigint NOT NULL, op_id bigint NOT NULL)",
)


def write_rpd(path, pid, start):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    for table in TABLES:
        db.execute(table)
    db.execute("INSERT INTO rocpd_metadata (tag, value) VALUES ('schema_version', '2')")
    db.executemany("INSERT INTO rocpd_string (string) VALUES (?)",
                   [("",), ("KernelExecution",), ("hipLaunchKernel",)] + [(k,) for k, _ in KERNELS])
    t = start
    for n, (_, dur) in enumerate(KERNELS):
        db.execute("INSERT INTO rocpd_api (pid, tid, start, end, apiName_id, args_id) VALUES (?, ?, ?, ?, 3, 1)",
                   (pid, pid, t - 900, t - 100))
        db.execute("INSERT INTO rocpd_op (gpuId, queueId, sequenceId, completionSignal, start, end, description_id, opType_id) VALUES (0, 0, ?, '', ?, ?, ?, 2)",
                   (n, t, t + dur, 4 + n))
        db.execute("INSERT INTO rocpd_api_ops (api_id, op_id) VALUES (?, ?)", (n + 1, n + 1))
        t += dur + 5_000
    db.commit()
    db.close()


def main(argv):
    log("runTracer.sh", argv)
    out = "trace.rpd"
    if argv[:1] == ["-o"]:
        out, argv = argv[1], argv[2:]
    start = boot_ns()
    code, pid = run_app(argv)
    write_rpd(out, pid, start)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
