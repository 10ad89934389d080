"""Which rocprofv3 output a file is (by its header or JSON head), and which process it belongs to.

rocprofv3 names every output `<prefix>_<kind>.csv` (`<prefix>_results.json` for JSON), the prefix
being `<hostname>/<pid>` by default or what `-o` said. The kind is recognised from the content
(header cells), never from the name; the name only gives the prefix that groups one process's
files. AMD's documentation samples carry no prefix (`kernel_trace.csv`): such files group by
their directory.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpuscope.trace import _csv, _sniff

KERNEL_TRACE = "kernel_trace"
API_TRACE = "api_trace"
MEMORY_COPY = "memory_copy"
AGENT_INFO = "agent_info"
COUNTERS = "counter_collection"
STATS = "stats"
JSON = "json"

# header cells (normalised) that identify each CSV kind; the first match wins
_HEADERS: tuple[tuple[str, frozenset[str]], ...] = (
    (COUNTERS, frozenset({"counter_name", "counter_value"})),
    (KERNEL_TRACE, frozenset({"kind", "kernel_name", "start_timestamp"})),
    (MEMORY_COPY, frozenset({"kind", "direction", "start_timestamp"})),
    (API_TRACE, frozenset({"domain", "function", "correlation_id"})),
    (AGENT_INFO, frozenset({"node_id", "agent_type"})),
    (STATS, frozenset({"name", "calls", "totaldurationns", "minns"})),
)
_JSON_START = re.compile(rb'^\{\s*"rocprofiler-sdk-tool"\s*:\s*\[')  # cereal writes it first

_APIS = ("hip", "hsa", "marker", "rccl", "rocdecode", "rocjpeg", "hipfile", "rocshmem", "ompt")
_OPERATIONS = ("memory_copy", "memory_allocation", "scratch_memory")
# every `<kind>` rocprofv3 writes after the prefix (CSV and JSON), to find where the prefix ends
_NAME_KINDS = (
    "agent_info",
    "kernel_trace",
    "counter_collection",
    "results",
    *(f"{api}_api_{what}" for api in _APIS for what in ("trace", "stats")),
    *(f"{op}_{what}" for op in _OPERATIONS for what in ("trace", "stats")),
    "kernel_stats",
    "domain_stats",
    "counter_collection_stats",
    "pc_sampling_host_trap",
    "pc_sampling_stochastic",
)  # fmt: skip
_NAME_KIND = re.compile(r"(?:^|_)(" + "|".join(_NAME_KINDS) + r")(?=\.|$)")


def file_kind(path: str) -> str | None:
    """One of the kinds above when the file is a rocprofv3 output this reader reads, else None."""
    head = _sniff.head(path)
    if _is_json(head):
        return JSON
    return kind_of_cells(_first_row(head))


def kind_of_cells(cells: tuple[str, ...]) -> str | None:
    """The CSV kind whose identifying header cells are all among `cells`, else None."""
    names = {_csv.norm(cell) for cell in cells}
    for kind, wanted in _HEADERS:
        if wanted <= names:
            return kind
    return None


def _is_json(head: bytes) -> bool:
    return _JSON_START.match(head[:4096].lstrip()) is not None


def _first_row(head: bytes) -> tuple[str, ...]:
    text = head[: 1 << 16].decode("utf-8", "replace")
    for line in text.splitlines()[:2]:
        if line.strip():
            return tuple(_csv.csv_row(line))
    return ()


def name_kind(path: str) -> str:
    """The `<kind>` part of a rocprofv3 file name ('kernel_stats', ...), '' when it has none."""
    stem = _stem(Path(path).name)
    found = list(_NAME_KIND.finditer(stem))
    return found[-1].group(1) if found else ""


def prefix_key(path: str) -> str:
    """`out/host/123_kernel_trace.csv` -> `out/host/123`; `docs/kernel_trace.csv` -> `docs/`."""
    where = Path(path)
    stem = _stem(where.name)
    found = list(_NAME_KIND.finditer(stem))
    prefix = stem[: found[-1].start()] if found else ""
    if not prefix:
        return str(where.parent / "_")[:-1]  # the directory itself, with its separator
    return str(where.parent / prefix)


def _stem(name: str) -> str:
    name = name.removesuffix(".gz")
    for extension in (".csv", ".json"):
        if name.lower().endswith(extension):
            return name[: -len(extension)]
    return name
