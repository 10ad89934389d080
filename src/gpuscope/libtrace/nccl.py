"""NCCL / RCCL collective log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS including COLL), one line per
collective per rank:
`host:pid:tid [dev] NCCL INFO AllReduce: opCount 0 sendbuff 0x… recvbuff 0x… count 1048576
datatype 7 op 0 root 0 comm 0x… [nranks=2] stream (nil)` (RCCL appends `task N globalrank N` and may
print `acc 0x…` after recvbuff).

Records are found anywhere in a line: ranks interleave, launchers prefix lines, and two records can
share a line or lose their prefix. The config drops what changes between ranks and calls (pointers,
opCount, comm, stream), so `calls` counts one per rank per collective. `count` is the element count
of the buffer as passed (AllGather: per-rank send count; ReduceScatter: per-rank receive count).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from gpuscope.libtrace.call import Collective, LibraryCall

_RECORD = re.compile(
    r"\b(?P<name>[A-Z][A-Za-z]+): opCount \w+ sendbuff \S+ recvbuff \S+(?: acc \S+)?"
    r" count (?P<count>\d+) datatype (?P<dtype>\d+) op (?P<op>\d+) root (?P<root>-?\d+)"
    r" comm \S+(?: \[nranks=(?P<nranks>\d+)\])?"
)
# ncclDataType_t and ncclRedOp_t enums (nccl.h; RCCL uses the same numbering).
_DTYPES = ("i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16", "f8", "bf8")
_OPS = ("sum", "prod", "max", "min", "avg")


def parse(lines: Iterable[str], library: str = "nccl") -> Iterator[LibraryCall]:
    """Collective records among any other lines; `library` labels them (nccl or rccl)."""
    for line in lines:
        for found in _RECORD.finditer(line):
            yield record_call(found, library)


def looks_like_rccl(text: str) -> bool:
    """Whether a log comes from RCCL (its version banner or its `globalrank` suffix)."""
    return "RCCL" in text or "globalrank" in text


def record_call(found: re.Match[str], library: str) -> LibraryCall:
    """One matched collective record."""
    dtype_code, op_code = int(found["dtype"]), int(found["op"])
    collective = Collective(
        name=found["name"],
        count=int(found["count"]),
        datatype=_DTYPES[dtype_code] if dtype_code < len(_DTYPES) else f"type{dtype_code}",
        reduce_op=_OPS[op_code] if op_code < len(_OPS) else f"op{op_code}",
        nranks=int(found["nranks"]) if found["nranks"] else None,
        root=int(found["root"]),
    )
    return LibraryCall(
        library=library,
        config=_config(collective),
        op=collective.name,
        dtype=collective.datatype,
        collective=collective,
    )


def _config(c: Collective) -> str:
    nranks = "" if c.nranks is None else f" nranks {c.nranks}"
    return f"{c.name} count {c.count} datatype {c.datatype} op {c.reduce_op} root {c.root}{nranks}"
