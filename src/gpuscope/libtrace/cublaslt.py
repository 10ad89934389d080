"""cuBLASLt log (CUBLASLT_LOG_LEVEL=2 or CUBLASLT_LOG_MASK with bit 2, CUBLASLT_LOG_FILE=<file>):
one `[Trace]` line per matmul with decoded descriptors.

    [2026-11-22 01:45:06][cublasLt][774][Trace][cublasLtHSHMatmul] A=0X… Adesc=[type=R_16F rows=128
    cols=512 ld=128] … computeDesc=[computeType=COMPUTE_32F scaleType=R_32F transa=OP_T …]
    algo=[algoId=66 tile=MATMUL_TILE_64x8 …] workSpace=0X0 workSpaceSizeInBytes=0 beta=0 …

Library `cublaslt`; config = the function and every descriptor with pointers removed (so the chosen
algorithm is part of it). m, n = rows and columns of D; k = A's columns (rows when transa=T);
column-major like cuBLAS. `[Api]`/`[Info]`/`[Hints]` lines are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from gpuscope.libtrace._args import dtype_name, to_int
from gpuscope.libtrace.call import LibraryCall

_LINE = re.compile(r"\[cublasLt\]\[\d+\]\[Trace\]\[(\w*Matmul\w*)\] (.*)")
_POINTER = re.compile(r" ?\b\w+=0[xX][0-9A-Fa-f]+\b")
_ITEM = re.compile(r"(\w+)=(\[[^\]]*\]|\S+)")


def parse(lines: Iterable[str]) -> Iterator[LibraryCall]:
    """Matmul trace records among any other lines."""
    for line in lines:
        found = _LINE.search(line)
        if found and "AlgoGetHeuristic" not in found.group(1):
            yield matmul_call(found.group(1), found.group(2).strip())


def matmul_call(function: str, body: str) -> LibraryCall:
    """One `[Trace]` matmul record: its function name and the text after it."""
    config = f"{function} {_POINTER.sub('', body).strip()}"
    items = dict(_ITEM.findall(body))
    a, b, c, d = (_descriptor(items.get(f"{x}desc", "")) for x in "ABCD")
    compute = _descriptor(items.get("computeDesc", ""))
    trans_a = compute.get("transa", "OP_N").removeprefix("OP_")
    return LibraryCall(
        library="cublaslt",
        config=config,
        op="matmul",
        dtype=dtype_name(a.get("type", "")),
        compute_type=dtype_name(compute.get("computeType", "")),
        trans_a=trans_a,
        trans_b=compute.get("transb", "OP_N").removeprefix("OP_"),
        m=to_int(d.get("rows")),
        n=to_int(d.get("cols")),
        k=to_int(a.get("rows" if trans_a == "T" else "cols")),
        batch=to_int(a.get("batchCount")) or 1,
        lda=to_int(a.get("ld")),
        ldb=to_int(b.get("ld")),
        ldc=to_int(c.get("ld")),
    )


def _descriptor(text: str) -> dict[str, str]:
    return dict(_ITEM.findall(text.strip("[]")))
