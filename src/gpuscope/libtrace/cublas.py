"""cuBLAS API log (CUBLAS_LOGINFO_DBG=1, CUBLAS_LOGDEST_DBG=<file>): one record per API call.

    I! cuBLAS (v13.1.0) function cublasStatus_t cublasSgemm_v2(cublasHandle_t, …) called:
    i!  transa: type=cublasOperation_t; val=CUBLAS_OP_N(0)
    i!  m: type=int; val=128
    …
    i! Time: … / i!Process=…; Thread=…; GPU=0; … / i! COMPILED WITH: …

Handle, stream, workspace and math-mode calls are skipped. Library `cublas`; config = the function
and its non-pointer arguments (`cublasSgemm_v2 transa=N transb=N m=128 n=256 k=512 lda=128 …`).
Shapes are column-major: torch `A[256x512] @ B[512x128]` is logged as m=128, n=256, k=512.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from gpuscope.libtrace._args import dtype_name, to_int
from gpuscope.libtrace.call import LibraryCall

_HEADER = re.compile(r"^I! cuBLAS \([^)]*\) function .*?\b(cublas\w+)\(.*\) called:")
_ARG = re.compile(r"^i!\s+(\w+): type=[^;]*; val=(.*)$")
_SKIP = re.compile(r"^cublas(Create|Destroy|Set|Get|Logger|Xt)")
_ENUM = re.compile(r"^(?:CUBLAS_OP_|CUDA_|CUBLAS_)?(\w+?)(?:\(\d+\))?$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_PREFIX_DTYPE = {"S": "f32", "D": "f64", "H": "f16", "C": "c32", "Z": "c64"}


def parse(lines: Iterable[str]) -> Iterator[LibraryCall]:
    """Compute-call records among any other lines; a record cut off by a kill (no `Time:` line
    after its arguments) is dropped."""
    function: str | None = None
    args: dict[str, str] = {}
    for line in lines:
        header = _HEADER.match(line)
        if header:
            function, args = header.group(1), {}
        elif function is not None and line.startswith("i! Time:"):
            if is_logged_call(function):
                yield api_call(function, args)
            function = None
        elif function is not None:
            arg = _ARG.match(line.rstrip("\n"))
            if arg:
                args[arg.group(1)] = arg.group(2).strip()


def is_logged_call(function: str) -> bool:
    """Whether a cuBLAS function is compute work (not handle/stream/mode bookkeeping)."""
    return _SKIP.match(function) is None


def api_call(function: str, args: dict[str, str]) -> LibraryCall:
    """One call record (skipped functions are filtered by the caller through `parse`)."""
    values = {name: _value(raw) for name, raw in args.items() if not raw.startswith("POINTER")}
    config = " ".join([function, *(f"{name}={value}" for name, value in values.items())])
    dtype = dtype_name(values["Atype"]) if "Atype" in values else _prefix_dtype(function)
    compute = values.get("computeType")
    return LibraryCall(
        library="cublas",
        config=config,
        op=_op_name(function),
        dtype=dtype,
        compute_type=dtype_name(compute) if compute else _prefix_dtype(function),
        trans_a=values.get("transa", ""),
        trans_b=values.get("transb", ""),
        m=to_int(values.get("m")),
        n=to_int(values.get("n")),
        k=to_int(values.get("k")),
        batch=to_int(values.get("batchCount")) or (1 if "gemm" in function.lower() else None),
        lda=to_int(values.get("lda")),
        ldb=to_int(values.get("ldb")),
        ldc=to_int(values.get("ldc")),
    )


def _value(raw: str) -> str:
    enum = _ENUM.match(raw)
    return enum.group(1) if enum and not raw.lstrip("-").isdigit() else raw


def _op_name(function: str) -> str:
    name = function.removeprefix("cublas").removesuffix("_v2").removesuffix("_64")
    if name[:1] in _PREFIX_DTYPE and name[1:2].islower():
        name = name[1:]
    return _CAMEL.sub("_", name).lower()


def _prefix_dtype(function: str) -> str:
    name = function.removeprefix("cublas")
    return _PREFIX_DTYPE.get(name[:1], "") if name[1:2].islower() else ""
