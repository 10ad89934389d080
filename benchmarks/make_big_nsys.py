"""Make a large Nsight Systems SQLite export from a real one (nsys 2025.3, schema 3.20.3).

The reference `nsys/vectoraddition-a100-nsys2022.2/stats-by-nsys2025.3/
va4_reexported_nsys2025.3.sqlite` (a real A100 report re-exported by nsys 2025.3.1) is copied
whole — every table, ENUM_*, TARGET_INFO_*, PROCESSES, StringIds and their values — and its CUDA
activity is replaced by the GPU ops of `make_big_sqlite.Workload` (seed 0, the workload of the
rpd / rocpd / CSV generators): kernels into CUPTI_ACTIVITY_KIND_KERNEL, every 100th op a
host-to-device copy into CUPTI_ACTIVITY_KIND_MEMCPY, and one `cudaLaunchKernel_v7000` /
`cudaMemcpyAsync_v3020` runtime call per op into CUPTI_ACTIVITY_KIND_RUNTIME. The kernels' other
columns (context, process, launch type, cache config, local memory) are the real kernel row's.

Times are ns since the session start as nsys writes them: the workload is moved so that its
first op starts 1 s into the session. Correlation ids count from 1 (the real file's are gone with
its rows); kernel names are new StringIds after the real file's largest id.

    python benchmarks/make_big_nsys.py --rows 1010101     # -> bench-data/big_1010101.nsys.sqlite
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_big_sqlite import FORMATS, START_NS, Workload, insert, kernel_names  # noqa: E402

REFERENCE = (
    FORMATS
    / "nsys"
    / "vectoraddition-a100-nsys2022.2"
    / "stats-by-nsys2025.3"
    / "va4_reexported_nsys2025.3.sqlite"
)
CUPTI = "CUPTI_ACTIVITY_KIND_"
REPLACED = ("KERNEL", "MEMCPY", "MEMSET", "RUNTIME", "DRIVER", "SYNCHRONIZATION")
SESSION_OFFSET_NS = 1_000_000_000  # the first op starts 1 s after the session start
HTOD, PAGEABLE, DEVICE, RUNTIME_CLASS = 1, 0, 2, 0  # ENUM_CUDA_MEMCPY_OPER / _MEM_KIND / class


def make_nsys(path: Path, rows: int, reference: Path = REFERENCE, seed: int = 0) -> None:
    path.unlink(missing_ok=True)
    shutil.copyfile(reference, path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    real = _real_kernel(db)
    thread = db.execute(f"SELECT globalTid FROM {CUPTI}RUNTIME LIMIT 1").fetchone()
    for table in REPLACED:
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (CUPTI + table,)).fetchone():
            db.execute(f"DELETE FROM {CUPTI}{table}")
    work = Workload(rows, seed)
    strings = _strings(db, [*kernel_names(), "cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020"])
    names, (launch, memcpy) = np.array(strings[:-2], np.int64), strings[-2:]
    shift = SESSION_OFFSET_NS - START_NS
    corr = np.arange(1, rows + 1, dtype=np.int64)
    _kernels(db, work, real, names, corr, shift)
    _copies(db, work, real, corr, shift)
    insert(
        db,
        f"{CUPTI}RUNTIME",
        "start,end,eventClass,globalTid,correlationId,nameId,returnValue",
        zip(
            (work.launch + shift).tolist(),
            (work.launch + work.launch_dur + shift).tolist(),
            [RUNTIME_CLASS] * rows,
            [thread[0] if thread else 0] * rows,
            corr.tolist(),
            np.where(work.copy, memcpy, launch).tolist(),
            [0] * rows,
            strict=True,
        ),
    )
    db.execute("COMMIT")
    db.execute("VACUUM")
    db.close()


def _real_kernel(db: sqlite3.Connection) -> dict[str, Any]:
    cursor = db.execute(f"SELECT * FROM {CUPTI}KERNEL LIMIT 1")
    row = cursor.fetchone()
    if row is None:
        raise SystemExit("the reference has no kernel row")
    return {d[0]: v for d, v in zip(cursor.description, row, strict=True)}


def _strings(db: sqlite3.Connection, texts: list[str]) -> list[int]:
    first = int(db.execute("SELECT max(id) FROM StringIds").fetchone()[0]) + 1
    ids = list(range(first, first + len(texts)))
    insert(db, "StringIds", "id,value", zip(ids, texts, strict=True))
    return ids


def _kernels(
    db: sqlite3.Connection, work: Workload, real: dict[str, Any], names: Any, corr: Any, shift: int
) -> None:
    keep = ~work.copy
    size = int(keep.sum())
    fixed = {
        column: [real[column]] * size
        for column in (
            "deviceId", "contextId", "globalPid", "launchType", "cacheConfig",
            "staticSharedMemory", "dynamicSharedMemory", "localMemoryPerThread",
            "localMemoryTotal", "sharedMemoryExecuted", "sharedMemoryLimitConfig",
        )
    }  # fmt: skip
    one = [1] * size
    columns: dict[str, Any] = {
        "start": (work.start[keep] + shift).tolist(),
        "end": (work.end[keep] + shift).tolist(),
        "streamId": (work.stream[keep] + real["streamId"]).tolist(),
        "correlationId": corr[keep].tolist(),
        "demangledName": names[work.kernel[keep]].tolist(),
        "shortName": names[work.kernel[keep]].tolist(),
        "registersPerThread": (32 + 8 * (work.kernel[keep] % 4)).tolist(),
        "gridX": work.grid[keep].tolist(),
        "gridY": one,
        "gridZ": one,
        "blockX": work.block[keep].tolist(),
        "blockY": one,
        "blockZ": one,
        "gridId": corr[keep].tolist(),
        **fixed,
    }
    insert(db, f"{CUPTI}KERNEL", ",".join(columns), zip(*columns.values(), strict=True))


def _copies(
    db: sqlite3.Connection, work: Workload, real: dict[str, Any], corr: Any, shift: int
) -> None:
    copy = work.copy
    size = int(copy.sum())
    columns: dict[str, Any] = {
        "start": (work.start[copy] + shift).tolist(),
        "end": (work.end[copy] + shift).tolist(),
        "deviceId": [real["deviceId"]] * size,
        "contextId": [real["contextId"]] * size,
        "streamId": (work.stream[copy] + real["streamId"]).tolist(),
        "correlationId": corr[copy].tolist(),
        "globalPid": [real["globalPid"]] * size,
        "bytes": (work.dur[copy] * 10).tolist(),
        "copyKind": [HTOD] * size,
        "srcKind": [PAGEABLE] * size,
        "dstKind": [DEVICE] * size,
    }
    insert(db, f"{CUPTI}MEMCPY", ",".join(columns), zip(*columns.values(), strict=True))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="GPU ops (1 in 100 a copy)")
    parser.add_argument("--out", type=Path, default=HERE.parent / "bench-data")
    parser.add_argument("--reference", type=Path, default=REFERENCE)
    args = parser.parse_args(argv[1:])
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"big_{args.rows}.nsys.sqlite"
    began = time.perf_counter()
    make_nsys(target, args.rows, args.reference)
    seconds = time.perf_counter() - began
    print(f"wrote {target} ({target.stat().st_size / 1e6:.0f} MB) in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
