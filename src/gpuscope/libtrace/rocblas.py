"""rocBLAS logs (ROCBLAS_LAYER): bench lines (bit 2) and the profile YAML summary (bit 4).

Bench (one line per call): `./rocblas-bench -f gemm_ex --transposeA N … -m 1024 -n 16 -k 27 …`,
library `rocblas`, config = the text from `./rocblas-bench` (madengine's config).
Profile (written at clean exit, one entry per distinct call): `- { rocblas_function: "…", …,
call_count: N }`, library `rocblas_function`, config = the whole entry, calls = call_count
(madengine counted such a line once). Both describe the same calls: do not add the two
libraries' calls.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from gpuscope.libtrace._args import dtype_name, first, options, to_int
from gpuscope.libtrace.call import LibraryCall

_BENCH = re.compile(r"\./rocblas-bench\s.*")
_PROFILE = re.compile(r"^\s*-\s*\{\s*rocblas_function:.*\}\s*$")
_YAML_ITEM = re.compile(r"(\w+):\s*('[^']*'|\"[^\"]*\"|\([^)]*\)|[^,}]+)")


def parse(lines: Iterable[str]) -> Iterator[LibraryCall]:
    """Bench and profile records among any other lines."""
    for line in lines:
        bench = _BENCH.search(line)
        if bench:
            yield bench_call(bench.group(0).strip())
        elif _PROFILE.match(line):
            call = profile_call(line.strip())
            if call is not None:
                yield call


def bench_call(config: str) -> LibraryCall:
    """One `./rocblas-bench …` line."""
    opts = options(config.split()[1:])
    return _gemm_call("rocblas", config, opts, op=first(opts, "f", "function") or "")


def profile_call(entry: str) -> LibraryCall | None:
    """One profile YAML entry; None when it has no call_count (not a rocBLAS profile entry)."""
    items = {key: value.strip().strip("'\"") for key, value in _YAML_ITEM.findall(entry)}
    calls = to_int(items.get("call_count"))
    if calls is None:
        return None
    op = items.get("rocblas_function", "").removeprefix("rocblas_")
    return _gemm_call("rocblas_function", entry, items, op=op, calls=calls)


def _gemm_call(
    library: str, config: str, opts: Mapping[str, str], *, op: str, calls: int = 1
) -> LibraryCall:
    dtype = first(opts, "a_type", "r", "precision") or ""
    compute = first(opts, "compute_type") or ""
    return LibraryCall(
        library=library,
        config=config,
        calls=calls,
        op=op,
        dtype=dtype_name(dtype) if dtype else "",
        compute_type=dtype_name(compute) if compute else "",
        trans_a=first(opts, "transposeA", "transA") or "",
        trans_b=first(opts, "transposeB", "transB") or "",
        m=to_int(first(opts, "m", "M")),
        n=to_int(first(opts, "n", "N")),
        k=to_int(first(opts, "k", "K")),
        batch=to_int(first(opts, "batch_count")) or 1,
        lda=to_int(first(opts, "lda")),
        ldb=to_int(first(opts, "ldb")),
        ldc=to_int(first(opts, "ldc")),
    )
