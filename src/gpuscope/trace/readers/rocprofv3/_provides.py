"""What a set of rocprofv3 files records (`TraceMeta.provides`), its variant and event counts.

rocprofv3 writes a CSV only when its table has rows (and every JSON table it traced), so the
files present say what was traced: a kernel trace alone gives kernels with timestamps and launch
parameters but no host API; a stats file gives per-name totals only.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from gpuscope.trace.readers.rocprofv3 import _files as files
from gpuscope.trace.readers.rocprofv3._tables import Part

_FAMILIES = (
    ("HIP_", "hip_api"),
    ("HSA_", "hsa_api"),
    ("MARKER_", "marker_api"),
    ("RCCL_", "rccl_api"),
    ("ROCDECODE_", "rocdecode_api"),
    ("ROCJPEG_", "rocjpeg_api"),
)
_KIND_ORDER = (files.KERNEL_TRACE, files.JSON, files.COUNTERS)


def provides(parts: list[Part]) -> frozenset[str]:
    found: set[str] = set()
    traced = any(p.dispatches for p in parts)
    if traced:
        found |= {"kernels", "timestamps", "launch_params"}
    counters = [c for p in parts for c in p.counters]
    if counters:
        found |= {"counters", "launch_params"}
        if not traced and all(c.timed for c in counters):
            found |= {"kernels", "timestamps"}
    if any(p.copies for p in parts):
        found |= {"copies", "timestamps"}
        if any(p.copy_bytes for p in parts if p.copies):
            found.add("copy_bytes")
    found |= _api_keys(parts, device_work=bool(found & {"kernels", "copies"}))
    if any(a.is_gpu for p in parts for a in p.agents):
        found.add("devices")
    if any(s.kind != "domain" for p in parts for s in p.stats):
        found.add("totals")
    return frozenset(found)


def _api_keys(parts: list[Part], device_work: bool) -> set[str]:
    families = set(_families(parts))
    found = set()
    if families - {"marker_api"}:
        found.add("host_api")
    if "marker_api" in families:
        found.add("markers")
    if "hip_api" in families and device_work:
        found.add("links")  # kernels and copies carry the correlation id of their HIP call
    return found


def _families(parts: list[Part]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for calls in (c for p in parts for c in p.calls):
        domains, sizes = np.unique(np.array(calls.domains, dtype=object), return_counts=True)
        for domain, size in zip(domains.tolist(), sizes.tolist(), strict=True):
            counts[_family(str(domain))] += int(size)
    return counts


def _family(domain: str) -> str:
    upper = domain.upper()
    for prefix, family in _FAMILIES:
        if upper.startswith(prefix):
            return family
    return domain.lower()


def event_counts(parts: list[Part]) -> dict[str, int]:
    """Rows read per kind: kernel_dispatch, memory_copy, hip_api, ..., counter values, stats."""
    counts: Counter[str] = Counter()
    for part in parts:
        counts["kernel_dispatch"] += sum(len(d) for d in part.dispatches)
        counts["memory_copy"] += sum(len(c) for c in part.copies)
        counts["counter_collection"] += sum(len(c.names) for c in part.counters)
        counts["agent_info"] += len(part.agents)
        counts["stats"] += sum(len(s) for s in part.stats)
    counts.update(_families(parts))
    return {key: value for key, value in counts.items() if value}


def schema(parts: list[Part]) -> str:
    """The header generation ('rocm7', 'rocm6.2', 'rocpd-convert', 'json', ...) of the files."""
    ranked = sorted(parts, key=lambda p: _rank(p.kind))
    variants = list(dict.fromkeys(p.variant for p in ranked if p.variant))
    if not variants:
        return "csv"
    return variants[0] if len(variants) == 1 else "+".join(variants)


def _rank(kind: str) -> int:
    return _KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER)
