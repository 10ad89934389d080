"""What a communication kernel's name (or the collective torch recorded) says it is.

NCCL and RCCL name their kernels after the function they are specialised for:
`ncclKernel_AllReduce_RING_LL_Sum_float` (NCCL ≤ 2.18: collective, algorithm, protocol,
reduction, element type) and `ncclDevKernel_AllReduce_Sum_f32_RING_LL` (NCCL ≥ 2.19:
collective, reduction, type, algorithm, protocol). A name is the kernel's *specialisation*, not
necessarily what ran: one kernel per collective and type is compiled with the LL protocol inlined
and runs the other protocols through a function table, and NCCL ≥ 2.19 names every reduction
"Sum" and every algorithm but TREE "RING" (`best_kernel` in NCCL's src/device/generate.py).
The algorithm and protocol NCCL chose are in its own log (NCCL_DEBUG=INFO,
NCCL_DEBUG_SUBSYS=TUNING), never in the trace. RCCL's `ncclDevKernel_Generic*` and custom
all-reduce kernels say less; the collective torch recorded (`record_param_comms`) says more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "broadcast",
    "reduce",
    "send_recv",
    "send",
    "recv",
    "barrier",
    "unknown",
)

# nccl-tests' bus-bandwidth factors (doc/PERFORMANCE.md of NVIDIA/nccl-tests): the share of the
# data that crosses the slowest link, so that bus bandwidth compares across collectives and
# rank counts: all-reduce 2(n-1)/n, all-gather / reduce-scatter / all-to-all (n-1)/n, the others
# 1. The size they multiply is the larger of the input and output buffers.
_TWICE_RING = ("all_reduce",)
_RING = ("all_gather", "reduce_scatter", "all_to_all")
_WHOLE = ("broadcast", "reduce", "send_recv", "send", "recv")
_POINT_TO_POINT = ("send_recv", "send", "recv")

_NCCL = re.compile(r"^(?:void )?(?P<lib>nccl|rccl)(?P<dev>Dev)?Kernel_(?P<rest>[A-Za-z0-9_]+)")
_COLL = {
    "AllReduce": "all_reduce",
    "AllGather": "all_gather",
    "AllGatherV": "all_gather",
    "ReduceScatter": "reduce_scatter",
    "AllToAll": "all_to_all",
    "AllToAllPivot": "all_to_all",
    "Broadcast": "broadcast",
    "Reduce": "reduce",
    "SendRecv": "send_recv",
    "Generic": "unknown",
}
_ALGOS = ("COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS_TREE", "TREE", "RING", "COLLNET", "NVLS", "PAT")
_PROTOS = ("LL128", "LL", "SIMPLE")
_REDOPS = ("Sum", "Prod", "MinMax", "Min", "Max", "PreMulSum", "SumPostDiv", "Avg")
_TYPES = {
    "int8_t": "i8",
    "uint8_t": "u8",
    "int32_t": "i32",
    "uint32_t": "u32",
    "int64_t": "i64",
    "uint64_t": "u64",
    "half": "f16",
    "float": "f32",
    "double": "f64",
    "__nv_bfloat16": "bf16",
    "hip_bfloat16": "bf16",
    "rccl_bfloat16": "bf16",
    "__nv_fp8_e4m3": "f8e4m3",
    "__nv_fp8_e5m2": "f8e5m2",
    "rccl_float8": "f8e4m3",
    "rccl_bfloat8": "f8e5m2",
}
# "uint8_t" holds "int8_t" and "__nv_bfloat16" holds "float": replace the longest first
_LONGEST_FIRST = sorted(_TYPES, key=len, reverse=True)
_SHORT_TYPES = frozenset(_TYPES.values()) | {"f8e4m3", "f8e5m2"}

# kernels of other libraries: (pattern, library); the collective comes from _KIND_WORDS
_LIBRARIES = (
    (re.compile(r"multimem", re.I), "symmetric memory"),
    (re.compile(r"one_shot_all_reduce|two_shot_all_reduce|symm_?mem", re.I), "symmetric memory"),
    (re.compile(r"cross_device_reduce|custom_?all_?reduce", re.I), "custom all-reduce"),
    (re.compile(r"allreduce_fusion|lamport", re.I), "TensorRT-LLM all-reduce"),
    (re.compile(r"deep_?ep", re.I), "DeepEP"),
    (re.compile(r"msccl", re.I), "MSCCL"),
    (re.compile(r"nvshmem", re.I), "NVSHMEM"),
    (re.compile(r"userbuffers", re.I), "userbuffers"),
)
_KIND_WORDS = (
    (re.compile(r"all_?reduce|cross_device_reduce|lamport", re.I), "all_reduce"),
    (re.compile(r"all_?gather", re.I), "all_gather"),
    (re.compile(r"reduce_?scatter", re.I), "reduce_scatter"),
    (re.compile(r"all_?to_?all|deep_?ep.*(dispatch|combine)", re.I), "all_to_all"),
    (re.compile(r"broadcast", re.I), "broadcast"),
    (re.compile(r"send_?recv", re.I), "send_recv"),
)


@dataclass(frozen=True)
class KernelName:
    """What one communication kernel's name says. Fields the name does not hold are None."""

    library: str  # "NCCL", "RCCL", "symmetric memory", "custom all-reduce", ... or "other"
    kind: str  # one of KINDS
    algorithm: str | None
    protocol: str | None
    dtype: str | None
    reduction: str | None
    nccl_generation: str  # "ncclDevKernel" (NCCL ≥ 2.19), "ncclKernel" (older), "" for others


def parse_kernel(name: str, vendor: str = "unknown") -> KernelName:
    """`parse_kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...)").algorithm == "RING"`."""
    found = _NCCL.match(name)
    if found is None:
        return _other(name)
    library = "RCCL" if vendor == "amd" or found["lib"] == "rccl" else "NCCL"
    rest = found["rest"]
    for long in _LONGEST_FIRST:  # type names hold underscores: shorten them first
        rest = rest.replace(long, _TYPES[long])
    words = [w for w in rest.split("_") if w]
    coll = words[0] if words else ""
    fields = _fields(words[1:])
    generation = "ncclDevKernel" if found["dev"] else "ncclKernel"
    return KernelName(library, _COLL.get(coll, "unknown"), *fields, nccl_generation=generation)


def _fields(words: list[str]) -> tuple[str | None, str | None, str | None, str | None]:
    """(algorithm, protocol, dtype, reduction) from the words after the collective's name."""
    algorithm = protocol = dtype = reduction = None
    i = 0
    while i < len(words):
        pair = "_".join(words[i : i + 2])
        if pair in _ALGOS:
            algorithm, i = pair, i + 2
            continue
        word = words[i]
        if word in _ALGOS:
            algorithm = word
        elif word in _PROTOS:
            protocol = word
        elif word in _SHORT_TYPES:
            dtype = word
        elif word in _REDOPS:
            reduction = word
        i += 1
    return algorithm, protocol, dtype, reduction


def _other(name: str) -> KernelName:
    library = next((lib for pattern, lib in _LIBRARIES if pattern.search(name)), "other")
    kind = next((k for pattern, k in _KIND_WORDS if pattern.search(name)), "unknown")
    return KernelName(library, kind, None, None, None, None, "")


# torch's record_param_comms "Collective name" (c10d) → kind
_RECORD_KINDS = (
    (re.compile(r"reduce_?scatter", re.I), "reduce_scatter"),
    (re.compile(r"all_?reduce", re.I), "all_reduce"),
    (re.compile(r"all_?gather", re.I), "all_gather"),
    (re.compile(r"all_?to_?all", re.I), "all_to_all"),
    (re.compile(r"broadcast", re.I), "broadcast"),
    (re.compile(r"^_?reduce", re.I), "reduce"),
    (re.compile(r"send", re.I), "send"),
    (re.compile(r"recv", re.I), "recv"),
    (re.compile(r"barrier", re.I), "barrier"),
)


def record_kind(name: str) -> str:
    """`record_kind("_allgather_base") == "all_gather"`; "unknown" when nothing matches."""
    return next((kind for pattern, kind in _RECORD_KINDS if pattern.search(name)), "unknown")


# the ops that launch collectives: c10d::allreduce_, nccl:all_reduce, nccl:send 0->1, ...
OP_NAME = re.compile(r"^(c10d::|c10d_functional::|_c10d_functional::|nccl:|rccl:)")


def op_kind(name: str) -> str:
    """The kind an op's name says (`c10d::alltoall_base_` → all_to_all)."""
    return record_kind(OP_NAME.sub("", name))


def bus_factor(kind: str, ranks: int) -> float | None:
    """nccl-tests' factor from algorithm to bus bandwidth: `bus_factor("all_reduce", 8) == 1.75`;
    None for an unknown kind, or a collective of fewer than 2 ranks (nothing crosses a link).
    Point-to-point calls are 1 whatever the group size."""
    if kind in _POINT_TO_POINT:
        return 1.0
    if ranks < 2:
        return None
    if kind in _TWICE_RING:
        return 2 * (ranks - 1) / ranks
    if kind in _RING:
        return (ranks - 1) / ranks
    return 1.0 if kind in _WHOLE else None
