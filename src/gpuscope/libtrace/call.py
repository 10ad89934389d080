"""`LibraryCall`: one library call (or one aggregated profile entry) read from a library's log.

Shapes are what the library saw: BLAS libraries are column-major, so a PyTorch row-major
`x @ W.T` appears with m and n swapped (see docs/libtrace.md). Fields a log does not carry stay
None (written as empty CSV cells).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# Element sizes in bytes for the normalized dtype names used in `LibraryCall.dtype`.
DTYPE_BYTES: dict[str, int] = {
    "f64": 8, "f32": 4, "tf32": 4, "f16": 2, "bf16": 2, "f8": 1, "bf8": 1,
    "i64": 8, "u64": 8, "i32": 4, "u32": 4, "i8": 1, "u8": 1, "c64": 16, "c32": 8,
}  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class LibraryCall:
    """One call as logged by a library.

    `library` is madengine's label (rocblas, rocblas_function, hipblaslt, tensile, miopen) or
    gpuscope's (rccl, nccl, cublas, cublaslt, cudnn). `config` identifies the call: identical
    configs are one row of library_trace.csv, whose `calls` sums their `calls`. `calls` is 1 for
    a per-call log line and the logged count for an aggregated entry (rocBLAS profile YAML).
    """

    library: str
    config: str
    calls: int = 1
    op: str = ""
    dtype: str = ""
    compute_type: str = ""
    trans_a: str = ""
    trans_b: str = ""
    m: int | None = None
    n: int | None = None
    k: int | None = None
    batch: int | None = None
    lda: int | None = None
    ldb: int | None = None
    ldc: int | None = None
    conv: ConvShape | None = None
    collective: Collective | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConvShape:
    """A convolution problem: NCHW sizes, filter, padding/stride/dilation, direction, layout.

    `direction` is fwd, bwd_data, bwd_weight or all (MIOpenDriver -F 0).
    """

    n: int | None = None
    c: int | None = None
    h: int | None = None
    w: int | None = None
    k: int | None = None
    y: int | None = None
    x: int | None = None
    pad_h: int | None = None
    pad_w: int | None = None
    stride_h: int | None = None
    stride_w: int | None = None
    dilation_h: int | None = None
    dilation_w: int | None = None
    groups: int | None = None
    direction: str = ""
    layout: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Collective:
    """A collective (NCCL/RCCL): `count` elements per rank buffer as passed, and its bytes."""

    name: str
    count: int
    datatype: str
    reduce_op: str = ""
    nranks: int | None = None
    root: int | None = None

    @property
    def bytes(self) -> int | None:
        size = DTYPE_BYTES.get(self.datatype)
        return None if size is None else size * self.count


def with_calls(call: LibraryCall, calls: int) -> LibraryCall:
    """The same call with another `calls` count (aggregation)."""
    return dataclasses.replace(call, calls=calls)
