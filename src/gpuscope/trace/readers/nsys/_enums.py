"""The enumerations of the Nsight Systems export: read from its `ENUM_*` tables when present
(schema 3.x), else the values nsys documents ("SQLite Schema Event Values"), which the 2.x
exports use too: the same report exported by nsys 2022.2 (2.9.1, no ENUM tables) and 2025.3
(3.20.3) holds the same `copyKind`/`srcKind` numbers, and 3.20.3's ENUM tables name them as below.
Note that nsys's memory kinds are its own (7 = Unknown), not CUPTI's `CUpti_ActivityMemoryKind`.
"""

from __future__ import annotations

import re

import numpy as np

from gpuscope.trace._copies import copy_kind
from gpuscope.trace.model import (
    DRIVER,
    DTOD,
    DTOH,
    HTOD,
    HTOH,
    I8,
    I64,
    LIBRARY,
    OTHER_COPY,
    PAGEABLE,
    PINNED,
    PTOP,
    RUNTIME,
    UNKNOWN_MEMORY,
)
from gpuscope.trace.readers.nsys._db_columns import Database

# copyKind -> (label as nsys stats prints it, direction); ENUM_CUDA_MEMCPY_OPER when present
MEMCPY_KINDS: dict[int, tuple[str, int]] = {
    0: ("Unknown", OTHER_COPY),
    1: ("Host-to-Device", HTOD),
    2: ("Device-to-Host", DTOH),
    3: ("Host-to-Array", HTOD),  # CUDA arrays live in device memory
    4: ("Array-to-Host", DTOH),
    5: ("Array-to-Array", DTOD),
    6: ("Array-to-Device", DTOD),
    7: ("Device-to-Array", DTOD),
    8: ("Device-to-Device", DTOD),
    9: ("Host-to-Host", HTOH),
    10: ("Peer-to-Peer", PTOP),
    11: ("Unified Host-to-Device", HTOD),
    12: ("Unified Device-to-Host", DTOH),
    13: ("Unified Device-to-Device", DTOD),
}
UNIFIED_COPIES = (11, 12, 13)  # page migrations: no stream, no API call
# srcKind / dstKind / memKind -> label; ENUM_CUDA_MEM_KIND when present
MEMORY_KINDS = {
    0: "Pageable",
    1: "Pinned",
    2: "Device",
    3: "Array",
    4: "Managed",
    5: "Device Static",
    6: "Managed Static",
    7: "Unknown",
}
# CUPTI_ACTIVITY_KIND_RUNTIME.eventClass: the table holds driver calls too
EVENT_CLASS_DOMAIN = {0: RUNTIME, 1: DRIVER, 13: DRIVER, 28: LIBRARY, 29: LIBRARY}
for _library_class in (33, 34, 35, 36):  # cuDNN / cuBLAS start and finish
    EVENT_CLASS_DOMAIN[_library_class] = LIBRARY
# NVTX_EVENTS.eventType values that are user ranges (marks have no end)
NVTX_MARK, NVTX_PUSH_POP, NVTX_START_END = 34, 59, 60
# Sync records are named as Kineto names CUPTI's sync types (the analyses match these names).
# The API call a record belongs to says what it waited on; 2.x syncType values do not follow
# CUPTI's enum (a cudaDeviceSynchronize is syncType 1, "event", in the 2.9.1 sample), 3.x ones
# are named by ENUM_CUPTI_SYNC_TYPE.
SYNC_BY_API = (
    ("DeviceSynchronize", "Context Sync"),
    ("CtxSynchronize", "Context Sync"),
    ("StreamSynchronize", "Stream Sync"),
    ("EventSynchronize", "Event Sync"),
    ("StreamWaitEvent", "Stream Wait Event"),
)
SYNC_BY_SYMBOL = (
    ("CONTEXT_SYNCHRONIZE", "Context Sync"),
    ("STREAM_SYNCHRONIZE", "Stream Sync"),
    ("EVENT_SYNCHRONIZE", "Event Sync"),
    ("STREAM_WAIT_EVENT", "Stream Wait Event"),
)
_UNSET = 0xFFFFFFFF  # CUPTI's "no stream / no event / no device" value
_API_VERSION = re.compile(r"_v\d+$")


def enum_labels(db: Database, table: str, default: dict[int, str]) -> dict[int, str]:
    """id -> label from an `ENUM_*` table, the documented values where it is absent."""
    found = {}
    for row in db.records(table, ("id", "label")):
        ident, label = str(row.get("id")), row.get("label")
        if label is not None and ident.lstrip("-").isdigit():  # a damaged table: skip the row
            found[int(ident)] = str(label)
    return found or dict(default)


def memcpy_kinds(db: Database) -> dict[int, tuple[str, int]]:
    """copyKind -> (label, COPY_KINDS index)."""
    labels = enum_labels(db, "ENUM_CUDA_MEMCPY_OPER", {k: v[0] for k, v in MEMCPY_KINDS.items()})
    kinds = {}
    for value, label in labels.items():
        known = MEMCPY_KINDS.get(value)
        direction = known[1] if known and known[0] == label else _direction(label)
        kinds[value] = (label, direction)
    return kinds


def _direction(label: str) -> int:
    for known, direction in MEMCPY_KINDS.values():
        if label == known:
            return direction
    return copy_kind(label.replace("-to-", "To"))


def copy_direction_of_label(label: str) -> int:
    """COPY_KINDS index of an nsys memcpy label ('Unified Host-to-Device', 'Peer-to-Peer')."""
    return _direction(label)


def host_memory(src: I64, dst: I64, labels: dict[int, str]) -> I8:
    """PAGEABLE / PINNED when either side of each copy is, else UNKNOWN_MEMORY."""
    return host_memory_of_labels(_label_array(src, labels), _label_array(dst, labels))


def host_memory_of_labels(src: list[str] | np.ndarray, dst: list[str] | np.ndarray) -> I8:
    src_a, dst_a = np.asarray(src, object), np.asarray(dst, object)
    result = np.full(len(src_a), UNKNOWN_MEMORY, np.int8)
    result[(src_a == "Pinned") | (dst_a == "Pinned")] = PINNED
    result[(src_a == "Pageable") | (dst_a == "Pageable")] = PAGEABLE
    return result


def _label_array(values: I64, labels: dict[int, str]) -> np.ndarray:
    unique, inverse = np.unique(values, return_inverse=True)
    names = np.array([labels.get(int(v), "") for v in unique], object)
    return names[inverse]


def domains(event_class: I64) -> I8:
    """HostCalls.domain of each `eventClass` (RUNTIME for classes not listed)."""
    result = np.full(len(event_class), RUNTIME, np.int8)
    for value, domain in EVENT_CLASS_DOMAIN.items():
        result[event_class == value] = domain
    return result


def api_name(name: str) -> str:
    """`cudaLaunchKernel_v7000` -> `cudaLaunchKernel`, as `nsys stats` prints it."""
    return _API_VERSION.sub("", name)


def sync_types(db: Database) -> dict[int, str]:
    """3.x syncType -> Kineto's name (from the ENUM symbol); empty for 2.x exports."""
    found = {}
    for row in db.records("ENUM_CUPTI_SYNC_TYPE", ("id", "name", "label")):
        symbol = str(row.get("name") or "")
        name = next((n for part, n in SYNC_BY_SYMBOL if symbol.endswith(part)), None)
        if isinstance(row.get("id"), int) and row["id"] != 0:
            found[int(str(row["id"]))] = name or str(row.get("label") or symbol)
    return found


def sync_name(api: str | None, sync_type: int, types: dict[int, str]) -> str:
    for part, name in SYNC_BY_API:
        if api and part in api:
            return name
    return types.get(sync_type, "Synchronization")


def unset_to_missing(values: I64) -> I64:
    """CUPTI's 0xFFFFFFFF ("none") as -1."""
    result: I64 = np.where(values == _UNSET, -1, values)
    return result
