"""The library tracers `gpuscope run` offers: each one's environment, log files and parser.

Every library writes its log itself, into the run directory, through its own destination variable,
so the program's stdout and stderr stay untouched. Tensile and MIOpen have no destination variable:
they print to stdout (Tensile) and stderr (MIOpen), which the runner tees into the run directory
(`Tracer.streams`; file names in `STREAM_FILES`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gpuscope.libtrace import cublas, cublaslt, cudnn, hipblaslt, miopen, nccl, rocblas, tensile
from gpuscope.libtrace.call import LibraryCall

Parse = Callable[[Iterable[str]], Iterator[LibraryCall]]

# Where the runner copies a child's stream when a tracer needs it (`Tracer.streams`).
STREAM_FILES = {"stdout": "libtrace_stdout.log", "stderr": "libtrace_stderr.log"}


@dataclass(frozen=True)
class Tracer:
    """One library tracer: `env(run_dir)` makes the library log into `logs` (globs in run_dir)."""

    tool: str
    library: str
    parse: Parse
    env: Callable[[Path], dict[str, str]]
    logs: tuple[str, ...] = ()
    streams: tuple[str, ...] = ()

    def log_files(self, run_dir: Path) -> list[Path]:
        """The log files this tracer's library wrote (or the tee'd streams it reads)."""
        names = self.logs + tuple(STREAM_FILES[s] for s in self.streams)
        return sorted({p for name in names for p in run_dir.glob(name) if p.is_file()})


def _rccl(lines: Iterable[str]) -> Iterator[LibraryCall]:
    return nccl.parse(lines, library="rccl")


def _nccl_env(run_dir: Path) -> dict[str, str]:
    # %h.%p: one file per host and process, so ranks never write into each other's file.
    return {
        "NCCL_DEBUG": "INFO",
        "NCCL_DEBUG_SUBSYS": "INIT,COLL",
        "NCCL_DEBUG_FILE": str(run_dir / "nccl_debug.%h.%p.log"),
    }


TRACERS: dict[str, Tracer] = {
    t.tool: t
    for t in (
        Tracer(
            "rocblas_trace", "rocblas", rocblas.parse,
            lambda d: {
                "ROCBLAS_LAYER": "6",  # 2 bench + 4 profile
                "ROCBLAS_LOG_BENCH_PATH": str(d / "rocblas_bench.log"),
                "ROCBLAS_LOG_PROFILE_PATH": str(d / "rocblas_profile.yaml"),
            },
            logs=("rocblas_bench.log", "rocblas_profile.yaml"),
        ),
        Tracer(
            "hipblaslt_trace", "hipblaslt", hipblaslt.parse,
            lambda d: {
                "HIPBLASLT_LOG_MASK": "32",  # bench lines
                "HIPBLASLT_LOG_FILE": str(d / "hipblaslt_bench.%i.log"),  # %i: process id
            },
            logs=("hipblaslt_bench.*.log",),
        ),
        Tracer(
            "tensile_trace", "tensile", tensile.parse,
            lambda d: {"TENSILE_DB": "0x8000"},  # `Running kernel: …` on stdout
            streams=("stdout",),
        ),
        Tracer(
            "miopen_trace", "miopen", miopen.parse,
            lambda d: {"MIOPEN_ENABLE_LOGGING_CMD": "1"},  # driver commands on stderr
            streams=("stderr",),
        ),
        Tracer("rccl_trace", "rccl", _rccl, _nccl_env, logs=("nccl_debug.*.log",)),
        Tracer("nccl_trace", "nccl", nccl.parse, _nccl_env, logs=("nccl_debug.*.log",)),
        Tracer(
            "cublas_trace", "cublas", cublas.parse,
            lambda d: {
                "CUBLAS_LOGINFO_DBG": "1",
                "CUBLAS_LOGDEST_DBG": str(d / "cublas_api.%i.log"),
            },
            logs=("cublas_api.*.log",),
        ),
        Tracer(
            "cublaslt_trace", "cublaslt", cublaslt.parse,
            lambda d: {
                "CUBLASLT_LOG_LEVEL": "2",  # Trace: one line per matmul
                "CUBLASLT_LOG_FILE": str(d / "cublaslt_trace.%i.log"),  # %i: process id
            },
            logs=("cublaslt_trace.*.log",),
        ),
        Tracer(
            "cudnn_trace", "cudnn", cudnn.parse,
            lambda d: {
                "CUDNN_LOGLEVEL_DBG": "3",  # info: the API records
                "CUDNN_LOGDEST_DBG": str(d / "cudnn_api.%i.log"),
            },
            logs=("cudnn_api.*.log",),
        ),
    )
}  # fmt: skip
