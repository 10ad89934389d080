"""Which `nsys stats` report a table is, from its header cells, and where its columns are.

`nsys stats --format csv --output PREFIX` writes one `PREFIX_<report>.csv` per report; without
`--output` the tables go to stdout one after the other, between progress lines. Reports are told
apart by their header (older nsys named them `gpukernsum`, `cudaapisum`, ...); the OS-runtime
summary has the same header as the CUDA API summary, so a summary with `Num Calls` is read as
CUDA API only when its calls are CUDA's (`cu*`) or its file name says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gpuscope.trace._csv import Header, norm

KERN_SUM, API_SUM = "cuda_gpu_kern_sum", "cuda_api_sum"
MEM_TIME_SUM, MEM_SIZE_SUM = "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"
GPU_TRACE, KERN_EXEC_TRACE = "cuda_gpu_trace", "cuda_kern_exec_trace"
SUMMARIES = (KERN_SUM, API_SUM, MEM_TIME_SUM, MEM_SIZE_SUM)
TRACES = (GPU_TRACE, KERN_EXEC_TRACE)
OLD_NAMES = {  # nsys <= 2022
    "gpukernsum": KERN_SUM,
    "cudaapisum": API_SUM,
    "gpumemtimesum": MEM_TIME_SUM,
    "gpumemsizesum": MEM_SIZE_SUM,
    "gputrace": GPU_TRACE,
}
FILE_NAME = re.compile(
    r"^(?P<prefix>.+?)_(?P<report>" + "|".join((*SUMMARIES, *TRACES, *OLD_NAMES)) + r")\.csv$"
)

# report -> header cells that must all be there
REQUIRED = {
    GPU_TRACE: ("Start (ns)", "Duration (ns)", "Name"),
    KERN_EXEC_TRACE: ("Kernel Start (ns)", "Kernel Dur (ns)", "API Start (ns)", "Kernel Name"),
    MEM_SIZE_SUM: ("Total (MB)", "Count", "Operation"),
    MEM_TIME_SUM: ("Total Time (ns)", "Count", "Operation"),
    KERN_SUM: ("Total Time (ns)", "Instances", "Name"),
    API_SUM: ("Total Time (ns)", "Num Calls", "Name"),
}
# the cells that say "this is that report" (then a missing REQUIRED cell is an error)
SIGNATURE = {
    GPU_TRACE: ("Start (ns)", "Duration (ns)"),
    KERN_EXEC_TRACE: ("Kernel Start (ns)", "API Start (ns)"),
    MEM_SIZE_SUM: ("Total (MB)", "Operation"),
    MEM_TIME_SUM: ("Total Time (ns)", "Operation"),
    KERN_SUM: ("Total Time (ns)", "Instances"),
    API_SUM: ("Total Time (ns)", "Num Calls"),
}
_NOT_CUDA_FILES = ("osrt", "syscall", "openmp", "vulkan", "opengl", "dx1", "wddm", "nvtx", "mpi")
# column spellings across versions
COUNT = ("Instances", "Num Calls", "Count", "Calls")
TOTAL = ("Total Time (ns)", "Total Time")
MINIMUM = ("Min (ns)", "Minimum (ns)", "Minimum")
MAXIMUM = ("Max (ns)", "Maximum (ns)", "Maximum")
NAME = ("Name", "Operation")


@dataclass
class Table:
    """One report's table: its rows as text, or (a big trace file) the header to read below."""

    report: str
    path: str
    header: Header
    rows: list[list[str]] | None = None  # None: read the file below `header`
    skipped: int = 0  # rows whose field count differs from the header's
    cut: bool = False  # the file ends inside the table's last row


def report_of(cells: tuple[str, ...] | list[str]) -> str | None:
    """The report a header belongs to (by its signature cells), else None."""
    have = {norm(c) for c in cells}
    if "range" in have or "style" in have:  # nvtx_sum looks like a kernel summary
        return None
    for report, signature in SIGNATURE.items():
        if all(norm(cell) in have for cell in signature):
            return report
    return None


def missing(report: str, cells: tuple[str, ...] | list[str]) -> list[str]:
    have = {norm(c) for c in cells}
    return [cell for cell in REQUIRED[report] if norm(cell) not in have]


def is_cuda_api(path: str, first_name: str | None) -> bool:
    """An API summary of CUDA calls (not OS runtime / syscalls with the same header)."""
    if first_name:
        return first_name.startswith("cu")
    name = Path(path).name.lower()
    return not any(word in name for word in _NOT_CUDA_FILES)


def file_prefix(path: str) -> str | None:
    """`va4` of `va4_cuda_gpu_trace.csv`: the files of one `nsys stats --output` call."""
    found = FILE_NAME.match(Path(path).name)
    return found.group("prefix") if found else None


def canonical(report: str) -> str:
    return OLD_NAMES.get(report, report)
