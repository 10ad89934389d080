"""The reading floor for `bench_readers.py`: a plain read of the rows `gpuscope analyze` needs,
into numpy, and nothing else (no model, no analysis). Run as its own process; its wall time and
peak RSS are measured from outside.

Two scopes:

- `same`: every table and column the gpuscope reader of that format reads (the same joins), so
  the floor moves the same data out of the file. The lists below are written out by hand from
  the readers' SELECTs, raw columns (the reader's NULL / text guards left out: these files hold
  integers only).
- `kernels`: only what a kernel table needs: start, end, device, stream, name (and, for rpd,
  the op type that tells kernels from copies).

SQLite: `np.fromiter(chain.from_iterable(cursor), int64)` over one plain `SELECT` per table —
the fastest of the plain reads tried (fetchall + np.array: 1.25-1.5×, structured-dtype
fromiter: the same, zip(*rows): 1.8×). CSV: `np.loadtxt` (numpy's C parser) of the integer
columns, then of the text columns as objects — ~10× faster than the `csv` module's row loop.

    python benchmarks/_read_floor.py rpd|rocpd|nsys|csv same|kernels FILE
"""

from __future__ import annotations

import sqlite3
import sys
import time
from itertools import chain
from urllib.parse import quote

import numpy as np

_JOIN = "LEFT JOIN {event} E ON E.id = {alias}.event_id"
_EVENT = ("E.stack_id", "E.correlation_id")

# (table, alias, columns, join) per format and scope; {sfx} = the rocpd run's uuid suffix
SQLITE = {
    ("rpd", "same"): [
        ("rocpd_api", "A", ("id", "tid", "start", "end", "apiName_id", "args_id"), ""),
        ("rocpd_op", "O", ("id", "gpuId", "queueId", "start", "end", "description_id",
                           "opType_id"), ""),
        ("rocpd_api_ops", "L", ("api_id", "op_id"), ""),
        ("rocpd_kernelapi", "K", ("api_ptr_id", "gridX", "gridY", "gridZ", "workgroupX",
                                  "workgroupY", "workgroupZ", "groupSegmentSize",
                                  "privateSegmentSize", "kernelName_id"), ""),
        ("rocpd_copyapi", "C", ("api_ptr_id", "size", "kind"), ""),
    ],
    ("rpd", "kernels"): [
        ("rocpd_op", "O", ("start", "end", "gpuId", "queueId", "description_id", "opType_id"),
         ""),
    ],
    ("rocpd", "same"): [
        ("rocpd_kernel_dispatch{sfx}", "K", (
            "K.start", "K.end", "K.agent_id", "K.kernel_id", "K.stream_id", "K.tid",
            "K.grid_size_x", "K.grid_size_y", "K.grid_size_z", "K.workgroup_size_x",
            "K.workgroup_size_y", "K.workgroup_size_z", "K.group_segment_size",
            "K.private_segment_size", "K.event_id", *_EVENT), _JOIN),
        ("rocpd_memory_copy{sfx}", "M", (
            "M.start", "M.end", "M.name_id", "M.dst_agent_id", "M.src_agent_id", "M.size",
            "M.stream_id", "M.tid", *_EVENT), _JOIN),
        ("rocpd_region{sfx}", "R", (
            "R.start", "R.end", "R.tid", "R.name_id", "E.category_id", "R.id", *_EVENT), _JOIN),
    ],
    ("rocpd", "kernels"): [
        ("rocpd_kernel_dispatch{sfx}", "K", (
            "K.start", "K.end", "K.agent_id", "K.stream_id", "K.kernel_id"), ""),
    ],
    ("nsys", "same"): [
        ("CUPTI_ACTIVITY_KIND_KERNEL", "K", (
            "start", "end", "deviceId", "streamId", "correlationId", "globalPid", "demangledName",
            "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
            "registersPerThread", "staticSharedMemory", "dynamicSharedMemory",
            "localMemoryPerThread"), ""),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", "M", (
            "start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes",
            "copyKind", "srcKind", "dstKind"), ""),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", "R", (
            "start", "end", "eventClass", "globalTid", "correlationId", "nameId"), ""),
    ],
    ("nsys", "kernels"): [
        ("CUPTI_ACTIVITY_KIND_KERNEL", "K", (
            "start", "end", "deviceId", "streamId", "shortName"), ""),
    ],
}  # fmt: skip

# CSV columns by header name: (integer columns, text columns)
CSV = {
    "same": (
        (
            "Start_Timestamp", "End_Timestamp", "Queue_Id", "Stream_Id", "Thread_Id",
            "Dispatch_Id", "Correlation_Id", "Workgroup_Size_X", "Workgroup_Size_Y",
            "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z", "LDS_Block_Size",
            "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count",
        ),
        ("Kernel_Name", "Agent_Id"),
    ),
    "kernels": (("Start_Timestamp", "End_Timestamp", "Stream_Id"), ("Kernel_Name", "Agent_Id")),
}  # fmt: skip


def read_sqlite(fmt: str, scope: str, path: str) -> int:
    db = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
    names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    sfx = ""
    if fmt == "rocpd":  # the run's uuid suffix (one run per benchmark file)
        sfx = next(n for n in names if n.startswith("rocpd_kernel_dispatch_"))[21:]
    event = f"rocpd_event{sfx}"
    rows = 0
    arrays = []
    for table, alias, columns, join in SQLITE[(fmt, scope)]:
        name = table.format(sfx=sfx)
        on = join.format(event=event, alias=alias)
        sql = f"SELECT {', '.join(columns)} FROM {name} {alias} {on}"
        flat = np.fromiter(chain.from_iterable(db.execute(sql)), np.int64)
        matrix = flat.reshape(-1, len(columns))
        arrays += [np.ascontiguousarray(matrix[:, i]) for i in range(len(columns))]
        rows += len(matrix)
        del flat, matrix
    if fmt == "nsys":  # the names the rows point at
        rows += len(dict(db.execute("SELECT id, value FROM StringIds")))
    elif fmt == "rpd" or scope == "same":
        strings = "rocpd_string" if fmt == "rpd" else f"rocpd_string{sfx}"
        text = dict(db.execute(f"SELECT id, string FROM {strings}"))
        rows += len(text)
    if fmt == "rocpd":
        symbols = dict(db.execute(f"SELECT id, display_name FROM rocpd_info_kernel_symbol{sfx}"))
        rows += len(symbols)
    return rows


def read_csv(scope: str, path: str) -> int:
    with open(path, encoding="utf-8") as handle:
        header = [cell.strip('"') for cell in handle.readline().rstrip("\n").split(",")]
    ints, texts = CSV[scope]
    options = {"delimiter": ",", "quotechar": '"', "skiprows": 1, "comments": None, "ndmin": 2}
    numbers = np.loadtxt(path, np.int64, usecols=[header.index(c) for c in ints], **options)
    words = np.loadtxt(path, object, usecols=[header.index(c) for c in texts], **options)
    columns = [np.ascontiguousarray(numbers[:, i]) for i in range(len(ints))]
    texts_read = [words[:, i].tolist() for i in range(len(texts))]  # as lists of str
    del numbers, words
    assert all(len(t) == len(columns[0]) for t in texts_read)
    return len(columns[0])


def main(argv: list[str]) -> int:
    fmt, scope, path = argv[1:4]
    began = time.perf_counter()
    rows = read_csv(scope, path) if fmt == "csv" else read_sqlite(fmt, scope, path)
    print(f"{fmt} {scope}: {rows} rows read in {time.perf_counter() - began:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
