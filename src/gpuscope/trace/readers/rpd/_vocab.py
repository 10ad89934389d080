"""The vocabulary of rocmProfileData (RPD) traces, shared by the `.rpd` and `rpd2tracing` JSON
readers: what an op type is on the device timeline, which domain an API call belongs to, which
rows are the tracer's own bookkeeping, and in which unit a launch's grid was recorded.

Sources: rocmProfileData `rpd_tracer/` (RoctracerDataSource, RocprofDataSource, RoctxDataSource,
Logger, ApiTable) — see the notes next to each rule.
"""

from __future__ import annotations

import re

from gpuscope.trace._copies import copy_kind
from gpuscope.trace.model import (
    DRIVER,
    DTOD,
    DTOH,
    HSA,
    HTOD,
    HTOH,
    KERNEL,
    LIBRARY,
    MEMCPY,
    MEMSET,
    OTHER_COPY,
    RUNTIME,
)

MARK = -1  # a user range (ROCTX / NVTX / rpd_rangePush), not an API call
OVERHEAD = -2  # the tracer timing itself (`OpTable::writeRows`, `hcc_activity_callback`, ...)
USER_MARKER = "UserMarker"  # apiName of ROCTX / NVTX rows; the message is in args
# Logger::createOverheadRecord and rpd_rangePush rows are written in the annotation id space
# (ApiTable::insertRoctx): the upper half of each session's 2**32 id block.
ANNOTATION_ID_BIT = 1 << 31
_OVERHEAD_NAME = re.compile(r"^(hcc_activity_callback|rpdflush|BLOCKING|\w+::\w+|overhead.*)$")
_MARKER_DOMAINS = ("roctx", "nvtx")
# hipMemcpyKind (also cudaMemcpyKind) in rocpd_copyapi.kind, for ops that do not say a direction
_MEMCPY_KIND = {0: HTOH, 1: HTOD, 2: DTOH, 3: DTOD}
# roctracer source: these launch APIs record globalWorkSize (work-items), the others numBlocks
_WORK_ITEM_LAUNCHES = frozenset({"hipHccModuleLaunchKernel", "hipExtModuleLaunchKernel"})


def op_kind(op_type: str) -> int | None:
    """KERNEL / MEMCPY / MEMSET for an op type; None for barriers and markers (not work).

    roctracer: KernelExecution, Task, CopyHostToDevice[2D], CopyDeviceToHost[2D],
    CopyDeviceToDevice[2D], FillBuffer; rocprofiler-sdk source: MEMORY_COPY_*; CLR / CUPTI
    sources: Memcpy, Memset.
    """
    low = op_type.lower()
    if "kernel" in low or op_type == "Task":
        return KERNEL
    if "fill" in low or "memset" in low:
        return MEMSET
    if "copy" in low or "memcpy" in low:
        return MEMCPY
    return None


def copy_direction(op_type: str, memcpy_kind: int) -> int:
    """COPY_KINDS index from the op type, else from the API's hipMemcpyKind argument."""
    found = copy_kind(op_type)
    return found if found != OTHER_COPY else _MEMCPY_KIND.get(memcpy_kind, OTHER_COPY)


def api_domain(name: str, domain: str, api_id: int) -> int:
    """HostCalls.domain of an API row, or MARK / OVERHEAD.

    `domain` is the schema-3 domain string ("hip", "roctx", ...; "" in schema 2).
    """
    if name == USER_MARKER or domain in _MARKER_DOMAINS:
        return MARK
    if api_id & ANNOTATION_ID_BIT:
        return OVERHEAD if is_overhead(name) else MARK
    if name.startswith(("hip", "__hip", "cuda")):
        return RUNTIME
    if name.startswith("hsa_") or domain == "hsa":
        return HSA
    if re.match(r"^cu[A-Z]", name):
        return DRIVER
    return RUNTIME if domain in ("hip", "cuda") else LIBRARY


def is_overhead(name: str) -> bool:
    """A tracer bookkeeping record, by name (the JSON export has no ids to go by)."""
    return _OVERHEAD_NAME.match(name) is not None


def grid_in_work_items(api_name: str, rocprofiler_source: bool) -> bool:
    """rocprofiler-sdk dispatch records always give the AQL grid (work-items)."""
    return rocprofiler_source or api_name in _WORK_ITEM_LAUNCHES


def is_rocprofiler_source(api_names: set[str], op_types: set[str]) -> bool:
    """True when rpd_tracer's rocprofiler-sdk data source wrote the file (else roctracer/CUPTI)."""
    if any(name.startswith("RocprofDataSource::") for name in api_names):
        return True
    return any(op.startswith("MEMORY_COPY_") for op in op_types)
