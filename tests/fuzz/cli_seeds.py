"""The inputs of the CLI mode: the reader seeds (`seeds.catalogue`) for analyze, diff, export and
counters, and what the other commands read: library logs (libtrace), library_trace.csv files
made from them (libperf), tools.json and madengine context files (doctor, run).

Reference files are read in place; when `shared/reference` is absent, small made-up logs (the
libraries' documented line formats, as in tests/integration/test_libperf_cli.py) stand in.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from tests.fuzz.seeds import REFERENCE, REPO, Seed, catalogue

LOG_FOLDERS = (
    "rocblas-log",
    "hipblaslt-log",
    "miopen-log",
    "nccl-rccl-log",
    "cublas-log",
    "cublaslt-log",
    "cudnn-log",
    "tensile-log",
)
MAX_LOG_BYTES = 200_000  # the 1.8 MB cuDNN logs make a case slow without reaching new code
SYNTHETIC_LOGS = {
    "rocblas_bench.log": "./rocblas-bench -f gemm_ex --transposeA N --transposeB N -m 256 -n 128 "
    "-k 64 --alpha 1 --a_type f32_r --lda 256 --b_type f32_r --ldb 64 --beta 0 --c_type f32_r "
    "--ldc 256 --d_type f32_r --ldd 256 --compute_type f32_r --algo 0 --solution_index 0 "
    "--flags 0\n" * 3,
    "libtrace_stderr.log": "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 2 "
    "-c 3 -H 32 -W 32 -k 8 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1\n",
    "nccl_debug.node1.11.log": "node1:11:11 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f01 "
    "recvbuff 0x7f02 count 1048576 datatype 7 op 0 root 0 comm 0x55 [nranks=2] stream 0x0\n",
}


@dataclass(frozen=True)
class CliSeeds:
    traces: dict[str, list[Seed]]  # reader name → seeds
    logs: tuple[Path, ...]  # library logs
    library_traces: tuple[Path, ...]  # library_trace.csv files
    tools_configs: tuple[Path, ...]  # tools.json
    contexts: tuple[Path, ...]  # madengine --additional-context-file JSON

    def counter_traces(self) -> list[Seed]:
        """Seeds of the readers that carry hardware counters."""
        return [s for name in ("ncu", "rocprof", "rocprofv3") for s in self.traces.get(name, [])]


def cli_catalogue(scratch: Path) -> CliSeeds:
    """Every seed of the CLI mode; `scratch`: a folder for the generated ones."""
    logs = _reference_logs() + _synthetic_logs(scratch / "logs")
    configs = [REPO / "src" / "gpuscope" / "tools" / "defaults" / "tools.json"]
    madengine = REFERENCE / "madengine"
    if (madengine / "tools.json").is_file():
        configs.append(madengine / "tools.json")
    contexts = sorted((madengine / "profiling-configs").glob("*.json"))
    synthetic_context = scratch / "context.json"
    synthetic_context.write_text('{"tools": [], "gpu_vendor": "AMD"}\n')
    return CliSeeds(
        traces=catalogue(scratch / "synthetic"),
        logs=tuple(logs),
        library_traces=tuple(_library_traces(logs, scratch / "library")),
        tools_configs=tuple(configs),
        contexts=(*contexts, synthetic_context),
    )


def _reference_logs() -> list[Path]:
    found = []
    for folder in LOG_FOLDERS:
        root = REFERENCE / "formats" / folder
        if root.is_dir():
            found += sorted(
                p
                for p in root.iterdir()
                if p.is_file() and p.name != "PROVENANCE.md" and p.stat().st_size <= MAX_LOG_BYTES
            )
    return found


def _synthetic_logs(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in SYNTHETIC_LOGS.items():
        (folder / name).write_text(text)
    return [folder / name for name in SYNTHETIC_LOGS]


def _library_traces(logs: list[Path], folder: Path) -> list[Path]:
    """One library_trace.csv per log that holds library calls, and one of every log together."""
    from gpuscope.libtrace.rebuild import calls_from_paths
    from gpuscope.libtrace.table import write_csv

    now = dt.datetime(2026, 11, 27, tzinfo=dt.timezone.utc)
    made = []
    for number, group in enumerate([[log] for log in logs] + [logs]):
        calls = calls_from_paths(group, [])
        if calls:
            path = folder / str(number) / "library_trace.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            made.append(write_csv(path, calls, jobid="7", model="fuzz", now=now))
    return made
