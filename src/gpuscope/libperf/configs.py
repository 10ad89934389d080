"""The unique problems in a library_trace.csv: each row's call turned into a hashable problem
(GEMM, convolution, collective, or an opaque config no replay can rebuild), rows of one problem
merged into one `Config` that keeps the call count.

    >>> configs = dedupe(load(Path("library_trace.csv")).calls)       # doctest: +SKIP
    >>> configs[0].problem, configs[0].calls, configs[0].libraries    # doctest: +SKIP
    (Gemm(dtype='bf16', …, m=1536, n=2048, k=512, …), 12, ('cublas', 'cublaslt'))

Calls: rows of one library that describe the same problem (cuBLASLt rows that differ only in the
algorithm it chose) add up; libraries that log the same calls at different layers (cuBLAS and
the cuBLASLt under it, rocBLAS bench lines and its profile, rocBLAS and the hipBLASLt it hands
GEMMs to) are not added: the problem's count is the largest of its libraries' counts.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gpuscope.errors import InputError
from gpuscope.libtrace import hipblaslt, miopen, options, rocblas, tensile, to_int
from gpuscope.libtrace.call import DTYPE_BYTES, Collective, ConvShape, LibraryCall
from gpuscope.libtrace.table import MADENGINE_COLUMNS

AMD_LIBRARIES = ("rocblas", "rocblas_function", "hipblaslt", "tensile", "miopen", "rccl")


@dataclass(frozen=True)
class Gemm:
    """A GEMM as the BLAS library saw it (column-major): D(m×n) = op(A)(m×k) · op(B)(k×n),
    `batch` of them `stride_*` elements apart (strides None for one matrix)."""

    dtype: str
    compute_type: str
    trans_a: str
    trans_b: str
    m: int
    n: int
    k: int
    batch: int = 1
    lda: int | None = None
    ldb: int | None = None
    ldc: int | None = None
    stride_a: int | None = None
    stride_b: int | None = None
    stride_c: int | None = None
    epilogue: str = ""  # "", "bias", "relu_bias", "gelu_bias", or the library's other name

    @property
    def flops(self) -> float:
        complex_factor = 4 if self.dtype in ("c32", "c64") else 1
        return 2.0 * self.m * self.n * self.k * self.batch * complex_factor

    def min_bytes(self, accumulate: bool) -> float:
        """A and B read once, D written once (C read too when beta is not 0)."""
        size = DTYPE_BYTES.get(self.dtype, 4)
        out = self.m * self.n * (2 if accumulate else 1)
        return float(size * self.batch * (self.m * self.k + self.k * self.n + out))


@dataclass(frozen=True)
class Conv:
    """A 2-D (d, z = None) or 3-D convolution: input N×C×[D×]H×W, K filters of C/groups×[Z×]Y×X."""

    dtype: str
    n: int
    c: int
    h: int
    w: int
    k: int
    y: int
    x: int
    pad: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    groups: int = 1
    direction: str = "fwd"  # fwd, bwd_data, bwd_weight, all
    layout: str = "NCHW"
    d: int | None = None
    z: int | None = None
    transposed: bool = False

    @property
    def spatial(self) -> tuple[int, ...]:
        return (self.h, self.w) if self.d is None else (self.d, self.h, self.w)

    @property
    def kernel(self) -> tuple[int, ...]:
        return (self.y, self.x) if self.z is None else (self.z, self.y, self.x)

    @property
    def out_spatial(self) -> tuple[int, ...]:
        return tuple(
            (size + 2 * p - dil * (f - 1) - 1) // s + 1
            for size, f, p, s, dil in zip(
                self.spatial, self.kernel, self.pad, self.stride, self.dilation, strict=True
            )
        )

    @property
    def flops(self) -> float:
        """2·N·K·(C/groups)·out·filter per direction (bwd data and weight cost the same)."""
        per = 2.0 * self.n * self.k * (self.c // max(self.groups, 1))
        for value in (*self.out_spatial, *self.kernel):
            per *= value
        return per * (3 if self.direction == "all" else 1)

    def min_bytes(self) -> float:
        size = DTYPE_BYTES.get(self.dtype, 4)
        inputs = self.n * self.c * _product(self.spatial)
        weights = self.k * (self.c // max(self.groups, 1)) * _product(self.kernel)
        outputs = self.n * self.k * _product(self.out_spatial)
        return float(size * (inputs + weights + outputs) * (3 if self.direction == "all" else 1))


@dataclass(frozen=True)
class Comm:
    """A collective: `count` elements per rank buffer as passed (see docs/libtrace.md)."""

    name: str
    count: int
    dtype: str
    reduce_op: str
    nranks: int | None
    root: int | None

    @property
    def bytes(self) -> int:
        """nccl-tests' size: the whole gathered / scattered buffer for AllGather, ReduceScatter
        and AllToAll, the buffer itself for the others."""
        size = DTYPE_BYTES.get(self.dtype, 4) * self.count
        if self.name in ("AllGather", "ReduceScatter", "AllToAll") and self.nranks:
            return size * self.nranks
        return size


@dataclass(frozen=True)
class Opaque:
    """A config no replay can rebuild from its fields; vendor bench binaries may still run it."""

    library: str
    config: str
    reason: str


Problem = Gemm | Conv | Comm | Opaque


@dataclass
class Config:
    """One unique problem: the libraries that logged it, their config texts, the call count."""

    problem: Problem
    calls: int
    library: str  # the first library that logged it (madengine's `library` column)
    config: str  # that library's config text (madengine's `config` column)
    libraries: tuple[str, ...]
    texts: dict[str, str] = field(default_factory=dict)  # library -> first config text
    op: str = ""
    accumulate: bool = False  # beta != 0: C is read and added

    @property
    def flops(self) -> float | None:
        return self.problem.flops if isinstance(self.problem, Gemm | Conv) else None

    @property
    def bytes(self) -> float | None:
        p = self.problem
        if isinstance(p, Gemm):
            return p.min_bytes(self.accumulate)
        if isinstance(p, Conv):
            return p.min_bytes()
        return float(p.bytes) if isinstance(p, Comm) else None

    @property
    def amd(self) -> bool:
        """Logged by an AMD library (whose bench binaries apply)."""
        return any(lib in AMD_LIBRARIES for lib in self.libraries)


@dataclass(frozen=True)
class TraceFile:
    """The rows of one library_trace.csv as calls, with its madengine job id and model."""

    path: Path
    jobid: str
    model: str
    calls: tuple[LibraryCall, ...]


def load(path: Path) -> TraceFile:
    """Read a library_trace.csv written by `gpuscope run` / `gpuscope libtrace` (or madengine's
    six-column file, whose configs are parsed again); InputError naming the file otherwise."""
    try:
        with path.open(newline="", encoding="utf-8", errors="replace") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror or error})") from None
    except csv.Error as error:
        raise InputError(f"{path}: not a CSV file ({error})") from None
    header = set(rows[0]) if rows else set()
    missing = [c for c in MADENGINE_COLUMNS if c not in header]
    if not rows or missing:
        what = "no rows" if not rows else f"no {', '.join(missing)} column"
        raise InputError(
            f"{path}: expected a library_trace.csv (gpuscope run / gpuscope libtrace) with the "
            f"columns {','.join(MADENGINE_COLUMNS)}, …; found {what}"
        )
    calls = tuple(row_call(row) for row in rows)
    return TraceFile(path, rows[0].get("jobid") or "0", rows[0].get("model") or "", calls)


def row_call(row: Mapping[str, str | None]) -> LibraryCall:
    """One CSV row back into the call it describes."""
    library, config = (row.get("library") or "").strip(), row.get("config") or ""
    calls = to_int(row.get("calls")) or 1
    if "op" not in row:  # madengine's six columns: parse the config text again
        return _reparse(library, config, calls)

    def cell(name: str) -> str:
        return (row.get(name) or "").strip()

    def num(name: str) -> int | None:
        return to_int(cell(name))

    conv = None
    if cell("conv_direction") or cell("conv_n"):
        conv = ConvShape(
            n=num("conv_n"), c=num("conv_c"), h=num("conv_h"), w=num("conv_w"),
            k=num("conv_k"), y=num("conv_y"), x=num("conv_x"),
            pad_h=num("pad_h"), pad_w=num("pad_w"), stride_h=num("stride_h"),
            stride_w=num("stride_w"), dilation_h=num("dilation_h"),
            dilation_w=num("dilation_w"), groups=num("groups"),
            direction=cell("conv_direction"), layout=cell("layout"),
        )  # fmt: skip
    collective = None
    count = num("count")
    if cell("collective") and count is not None:
        collective = Collective(
            name=cell("collective"), count=count, datatype=cell("dtype"),
            reduce_op=cell("reduce_op"), nranks=num("nranks"), root=num("root"),
        )  # fmt: skip
    return LibraryCall(
        library=library, config=config, calls=calls, op=cell("op"), dtype=cell("dtype"),
        compute_type=cell("compute_type"), trans_a=cell("transA"), trans_b=cell("transB"),
        m=num("m"), n=num("n"), k=num("k"), batch=num("batch"), lda=num("lda"),
        ldb=num("ldb"), ldc=num("ldc"), conv=conv, collective=collective,
    )  # fmt: skip


def _reparse(library: str, config: str, calls: int) -> LibraryCall:
    text = config.strip()
    call: LibraryCall | None = None
    if library == "rocblas":
        found = re.search(r"rocblas-bench\s.*", text)
        call = rocblas.bench_call(found.group(0) if found else f"./rocblas-bench {text}")
    elif library == "rocblas_function":
        call = rocblas.profile_call(text)
    elif library == "hipblaslt":
        call = hipblaslt.bench_call(
            text if "hipblaslt-bench" in text else f"hipblaslt-bench {text}"
        )
    elif library == "miopen":
        call = miopen.command_call(text if "MIOpenDriver" in text else f"MIOpenDriver {text}")
    elif library == "tensile":
        call = tensile.kernel_call(text)
    if call is None:
        return LibraryCall(library=library, config=config, calls=calls)
    return dataclasses.replace(call, config=config, calls=calls)


# ---------------------------------------------------------------------------------------------
# call -> problem


def problem_of(call: LibraryCall) -> Problem:
    """The problem a call solves; Opaque (with the reason) when its fields cannot rebuild it."""
    if call.collective is not None:
        c = call.collective
        return Comm(c.name, c.count, c.datatype, c.reduce_op, c.nranks, c.root)
    if call.conv is not None and call.op.startswith("conv"):
        conv = _conv(call)
        if conv is not None:
            return conv
        return Opaque(call.library, call.config, "the log does not give every convolution size")
    if _is_gemm(call):
        return _gemm(call)
    return Opaque(call.library, call.config, _why_opaque(call))


def _is_gemm(call: LibraryCall) -> bool:
    op = call.op.lower()
    sizes = None not in (call.m, call.n, call.k)
    kind = op == "matmul" or ("gemm" in op and "gemv" not in op)
    return sizes and kind and call.library != "cudnn"


def _why_opaque(call: LibraryCall) -> str:
    if call.library == "tensile":
        return "Tensile kernel names carry no sizes"
    if call.library == "cudnn":
        return f"cuDNN {call.op or 'operation'} graphs are not replayed (convolutions are)"
    if call.op:
        return f"{call.op} is not a GEMM, convolution or collective"
    return f"no sizes in this {call.library or 'library'} config"


def _gemm(call: LibraryCall) -> Gemm:
    assert call.m is not None and call.n is not None and call.k is not None
    batch = call.batch or 1
    strides = _strides(call) if batch > 1 else (None, None, None)
    return Gemm(
        dtype=call.dtype or "f32",
        compute_type=call.compute_type or call.dtype or "f32",
        trans_a=(call.trans_a or "N").upper(),
        trans_b=(call.trans_b or "N").upper(),
        m=call.m, n=call.n, k=call.k, batch=batch,
        lda=call.lda, ldb=call.ldb, ldc=call.ldc,
        stride_a=strides[0], stride_b=strides[1], stride_c=strides[2],
        epilogue=epilogue(call),
    )  # fmt: skip


_STRIDE = {
    x: re.compile(rf"(?:--stride_{x}\s+|\bstride_{x}:\s*|\bstride{x.upper()}=)(\d+)") for x in "abc"
}
_LT_STRIDE = {x: re.compile(rf"\b{x.upper()}desc=\[[^\]]*stridedBatchOffset=(\d+)") for x in "abc"}


def _strides(call: LibraryCall) -> tuple[int | None, int | None, int | None]:
    """Batch strides (elements) from the config text: rocBLAS / hipBLASLt `--stride_a`, the
    rocBLAS profile's `stride_a:`, cuBLAS `strideA=`, cuBLASLt `Adesc=[… stridedBatchOffset=]`."""
    found: list[int | None] = []
    for x in "abc":
        hit = _STRIDE[x].search(call.config) or _LT_STRIDE[x].search(call.config)
        found.append(int(hit.group(1)) if hit else None)
    return found[0], found[1], found[2]


_LT_EPILOGUE = re.compile(r"\bepilogue=EPILOGUE_(\w+)")
_ACTIVATION = re.compile(r"--activation_type\s+(\w+)")


def epilogue(call: LibraryCall) -> str:
    """What the GEMM adds after the product: cuBLASLt's epilogue, hipBLASLt's bias/activation."""
    lt = _LT_EPILOGUE.search(call.config)
    if lt:
        name = lt.group(1).lower()
        return "" if name == "default" else name
    activation = _ACTIVATION.search(call.config)
    act = activation.group(1).lower() if activation else "none"
    bias = re.search(r"--bias_vector\b", call.config) is not None
    parts = ([] if act == "none" else [act]) + (["bias"] if bias else [])
    return "_".join(parts)


_BETA = re.compile(r"(?:--beta\s+|\bbeta:\s*|(?<![\w.])beta=)(-?[\d.]+(?:[eE][-+]?\d+)?)")


def accumulates(call: LibraryCall) -> bool | None:
    """beta != 0 (C is read), None when the log does not say (cuBLAS passes it by pointer)."""
    found = _BETA.search(call.config)
    return None if found is None else float(found.group(1)) != 0.0


def _conv(call: LibraryCall) -> Conv | None:
    c = call.conv
    assert c is not None
    sizes = (c.n, c.c, c.h, c.w, c.k, c.y, c.x)
    if any(v is None for v in sizes):
        return None
    n, ch, h, w, k, y, x = (int(v) for v in sizes if v is not None)
    pad: tuple[int, ...] = (c.pad_h or 0, c.pad_w or 0)
    stride: tuple[int, ...] = (c.stride_h or 1, c.stride_w or 1)
    dilation: tuple[int, ...] = (c.dilation_h or 1, c.dilation_w or 1)
    d = z = None
    depth = _depth(call)
    if depth is not None:
        d, z, pad_d, stride_d, dilation_d = depth
        pad, stride, dilation = (pad_d, *pad), (stride_d, *stride), (dilation_d, *dilation)
    transposed = re.search(r"(?:^|\s)(?:-m|--mode)\s+trans\b", call.config) is not None
    return Conv(
        dtype=call.dtype or "f32", n=n, c=ch, h=h, w=w, k=k, y=y, x=x,
        pad=pad, stride=stride, dilation=dilation, groups=c.groups or 1,
        direction=c.direction or "fwd", layout=c.layout or "NCHW", d=d, z=z,
        transposed=transposed,
    )  # fmt: skip


def _depth(call: LibraryCall) -> tuple[int, int, int, int, int] | None:
    """3-D convolutions: (depth, filter depth, pad, stride, dilation) along D, else None."""
    if call.library == "cudnn":
        return _cudnn_depth(call.config)
    if call.library == "miopen" and re.search(r"(?:--spatial_dim|-_)\s+3\b", call.config):
        opts = options(call.config.split()[2:])

        def get(long: str, short: str, default: int) -> int:
            value = to_int(opts.get(long, opts.get(short)))
            return default if value is None else value

        return (
            get("in_d", "!", 1), get("fil_d", "@", 1), get("pad_d", "$", 0),
            get("conv_stride_d", "#", 1), get("dilation_d", "^", 1),
        )  # fmt: skip
    return None


def _cudnn_depth(config: str) -> tuple[int, int, int, int, int] | None:
    def dims(*names: str) -> list[int]:
        for name in names:
            found = re.search(rf"(?:^|\s){name}=\[([-\d,\s]*)\]", config)
            if found:
                return [int(v) for v in re.findall(r"-?\d+", found.group(1))]
        return []

    x, wt = dims("x", "dx"), dims("w", "dw")
    if len(x) != 5 or len(wt) != 5:
        return None
    pad, stride, dilation = dims("lowerPadA", "padA"), dims("strideA"), dims("dilationA")
    return (
        x[2], wt[2], pad[0] if len(pad) == 3 else 0,
        stride[0] if len(stride) == 3 else 1, dilation[0] if len(dilation) == 3 else 1,
    )  # fmt: skip


def _product(values: Iterable[int]) -> int:
    out = 1
    for value in values:
        out *= value
    return out


# ---------------------------------------------------------------------------------------------
# dedupe


@dataclass
class _Group:
    problem: Problem
    per_library: dict[str, int] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    op: str = ""
    accumulate: bool | None = None

    def add(self, call: LibraryCall) -> None:
        self.per_library[call.library] = self.per_library.get(call.library, 0) + call.calls
        self.texts.setdefault(call.library, call.config)
        self.op = self.op or call.op
        if self.accumulate is None:
            self.accumulate = accumulates(call)

    def config(self) -> Config:
        library = next(iter(self.texts))
        return Config(
            problem=self.problem,
            calls=max(self.per_library.values()),
            library=library,
            config=self.texts[library],
            libraries=tuple(self.per_library),
            texts=dict(self.texts),
            op=self.op,
            accumulate=bool(self.accumulate),
        )


def dedupe(calls: Iterable[LibraryCall]) -> list[Config]:
    """One Config per problem, in order of first appearance (see the module doc for calls)."""
    groups: dict[Problem, _Group] = {}
    for call in calls:
        problem = problem_of(call)
        groups.setdefault(problem, _Group(problem)).add(call)
    return [group.config() for group in groups.values()]


# For --limit and the order of replay: a nominal device (1 PFLOP/s, 2 TB/s memory, 100 GB/s
# links) turns work into an estimated time, so the configs costing the most come first.
_NOMINAL_FLOPS, _NOMINAL_BYTES, _NOMINAL_LINK = 1e15, 2e12, 1e11


def estimated_us(config: Config) -> float:
    """Nominal time of all calls of a config, for ordering only (never reported as a time)."""
    p = config.problem
    if isinstance(p, Comm):
        return config.calls * p.bytes / _NOMINAL_LINK * 1e6
    flops, size = config.flops or 0.0, config.bytes or 0.0
    return config.calls * max(flops / _NOMINAL_FLOPS, size / _NOMINAL_BYTES) * 1e6
