"""What an nsys export says about the session: schema version, start time, span, GPUs and
processes. Only named keys are read from the metadata tables: `META_DATA_CAPTURE` also holds
every environment variable of the profiled process."""

from __future__ import annotations

from dataclasses import dataclass

from gpuscope.trace.model import Device
from gpuscope.trace.readers.nsys._db_columns import Database

METADATA_TABLES = ("META_DATA_EXPORT", "EXPORT_META_DATA")  # 3.x, 2.x
GPU_PROPERTIES = (
    *("id", "name", "busLocation", "chipName", "uuid", "totalMemory", "memoryBandwidth"),
    *("l2CacheSize", "clockRate", "smCount", "computeMajor", "computeMinor", "cuDevice"),
    *("threadsPerWarp", "maxShmemPerBlock", "maxRegistersPerSm", "maxWarpsPerSm"),
)
_CAPTURE_KEYS = ("CAPTURE_EVENT_TYPE",)  # plus PROCESS_<n>:COLLECT_CUDA_TRACE / _NVTX_TRACE


@dataclass(frozen=True)
class Session:
    schema: str
    product: str
    base_time_ns: int | None
    span: tuple[int, int] | None
    captured: frozenset[str]  # CAPTURE_EVENT_TYPE values ("Cuda", "NvtxEvents", ...)
    cuda_off: bool  # every profiled process had CUDA tracing off


def session(db: Database) -> Session:
    export = dict(p for table in METADATA_TABLES for p in db.pairs(table, "name", "value"))
    captured, cuda_flags = _capture(db)
    return Session(
        schema=export.get("EXPORT_SCHEMA_VERSION", ""),
        product=export.get("EXPORT_PRODUCT_VERSION", ""),
        base_time_ns=_start_time(db),
        span=_span(db),
        captured=captured,
        cuda_off=bool(cuda_flags) and all(flag == "false" for flag in cuda_flags),
    )


def _capture(db: Database) -> tuple[frozenset[str], list[str]]:
    where = (
        "WHERE name = 'CAPTURE_EVENT_TYPE' OR name LIKE 'PROCESS_%:COLLECT_CUDA_TRACE' "
        "OR name LIKE 'PROCESS_%:COLLECT_NVTX_TRACE'"
    )
    pairs = db.pairs("META_DATA_CAPTURE", "name", "value", where)
    captured = {value for name, value in pairs if name in _CAPTURE_KEYS}
    if any(name.endswith("COLLECT_NVTX_TRACE") and value == "true" for name, value in pairs):
        captured.add("NvtxEvents")
    cuda = [value.lower() for name, value in pairs if name.endswith("COLLECT_CUDA_TRACE")]
    return frozenset(captured), cuda


def _start_time(db: Database) -> int | None:
    rows = db.records("TARGET_INFO_SESSION_START_TIME", ("utcEpochNs",))
    value = rows[0].get("utcEpochNs") if rows else None
    return value if isinstance(value, int) else None


def _span(db: Database) -> tuple[int, int] | None:
    rows = db.records("ANALYSIS_DETAILS", ("startTime", "stopTime"))
    if not rows:
        return None
    start, stop = rows[0].get("startTime"), rows[0].get("stopTime")
    if isinstance(start, int) and isinstance(stop, int) and stop >= start:
        return start, stop
    return None


def devices(db: Database) -> dict[int, Device]:
    """The GPUs by the device id the activity tables use (the CUDA device id).

    3.x maps a process's CUDA ids to GPUs in `TARGET_INFO_CUDA_DEVICE` (CUDA_VISIBLE_DEVICES
    renumbers them); 2.x names the CUDA id in `TARGET_INFO_GPU.cuDevice`.
    """
    gpus = {_int(row.get("id")): row for row in db.records("TARGET_INFO_GPU", GPU_PROPERTIES)}
    found: dict[int, Device] = {}
    for cuda_id, gpu_id, sms in _cuda_ids(db, gpus):
        row = gpus.get(gpu_id, {})
        if cuda_id not in found:
            found[cuda_id] = _device(cuda_id, row, sms)
    return found


def _cuda_ids(db: Database, gpus: dict[int, dict[str, object]]) -> list[tuple[int, int, int]]:
    """(CUDA id, GPU id, SM count) triples."""
    rows = db.records("TARGET_INFO_CUDA_DEVICE", ("cudaId", "gpuId", "numMultiprocessors"))
    if rows:
        return [
            (_int(r.get("cudaId")), _int(r.get("gpuId")), _int(r.get("numMultiprocessors")))
            for r in rows
        ]
    return [
        (
            _int(row.get("cuDevice", gpu_id)) if row.get("cuDevice") is not None else gpu_id,
            gpu_id,
            -1,
        )
        for gpu_id, row in gpus.items()
    ]


def _device(cuda_id: int, row: dict[str, object], sms: int) -> Device:
    major, minor = row.get("computeMajor"), row.get("computeMinor")
    arch = f"sm_{major}{minor}" if isinstance(major, int) and isinstance(minor, int) else ""
    count = _int(row.get("smCount"))
    return Device(
        id=cuda_id,
        name=str(row.get("name") or ""),
        properties={k: v for k, v in row.items() if v is not None},
        arch=arch,
        compute_units=max(count if count > 0 else sms, 0),
    )


def process_names(db: Database, pids: set[int]) -> dict[int, str]:
    """Names of the given pids from `PROCESSES` (system-wide captures list thousands)."""
    if not pids or not db.has("PROCESSES"):
        return {}
    marks = ",".join(str(int(p)) for p in sorted(pids))
    rows = db.db.execute(f"SELECT pid, name FROM PROCESSES WHERE pid IN ({marks})")
    return {int(pid): str(name or "") for pid, name in rows}


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1
