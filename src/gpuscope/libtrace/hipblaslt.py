"""hipBLASLt bench log (HIPBLASLT_LOG_MASK=32): one `hipblaslt-bench …` line per matmul.

Library `hipblaslt`; config = the text from `hipblaslt-bench` with runs of spaces collapsed (the
library pads with double and trailing spaces; the command means the same).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from gpuscope.libtrace._args import dtype_name, first, options, to_int
from gpuscope.libtrace.call import LibraryCall

_BENCH = re.compile(r"hipblaslt-bench\s.*")


def parse(lines: Iterable[str]) -> Iterator[LibraryCall]:
    """Bench records among any other lines."""
    for line in lines:
        found = _BENCH.search(line)
        if found:
            yield bench_call(" ".join(found.group(0).split()))


def bench_call(config: str) -> LibraryCall:
    """One `hipblaslt-bench …` command."""
    opts = options(config.split()[1:])
    dtype = first(opts, "a_type", "precision") or ""
    compute = first(opts, "compute_type") or ""
    return LibraryCall(
        library="hipblaslt",
        config=config,
        op="grouped_gemm" if "grouped_gemm" in opts else "matmul",
        dtype=dtype_name(dtype) if dtype else "",
        compute_type=dtype_name(compute) if compute else "",
        trans_a=opts.get("transA", ""),
        trans_b=opts.get("transB", ""),
        m=to_int(opts.get("m")),
        n=to_int(opts.get("n")),
        k=to_int(opts.get("k")),
        batch=to_int(opts.get("batch_count")) or 1,
        lda=to_int(opts.get("lda")),
        ldb=to_int(opts.get("ldb")),
        ldc=to_int(opts.get("ldc")),
    )
