"""rocprofv3's `*_agent_info.csv` (the agents) and `--stats` CSVs (per-name totals).

A stats file's header is the same for kernels, API calls and copies, so what its rows are comes
from the file name (`<prefix>_kernel_stats.csv`, `_hip_api_stats.csv`, `_memory_copy_stats.csv`,
`_domain_stats.csv`); a renamed file is judged by its row names.
"""

from __future__ import annotations

import csv
import re
from typing import Any

from gpuscope.errors import ReaderError
from gpuscope.trace import _csv
from gpuscope.trace.model import API, KERNEL, MEMCPY
from gpuscope.trace.readers.rocprofv3 import _files as files
from gpuscope.trace.readers.rocprofv3._csv_parts import read_columns
from gpuscope.trace.readers.rocprofv3._tables import Agent, Part, Stats

_APIS = ("hip", "hsa", "rccl", "rocdecode", "rocjpeg", "hipfile", "rocshmem", "ompt")
_STATS_KIND: dict[str, int | str] = {
    "kernel_stats": KERNEL,
    "memory_copy_stats": MEMCPY,
    "domain_stats": "domain",
    **{f"{api}_api_stats": API for api in _APIS},
}
# marker ranges, allocations, scratch and counter-collection stats have no Totals kind
_DOMAIN_ROW = re.compile(r"^[A-Z][A-Z0-9_]*(_API|_DISPATCH|_COPY|_MEMORY|_ALLOCATION)$")
_API_ROW = re.compile(r"^(hip|hsa_|__hip|nccl|roctx|rocDec|rocJpeg|rocshmem)")


def read_agent_info(path: str) -> Part:
    """`*_agent_info.csv`: one row per CPU and GPU agent (Name = gfx target for GPUs)."""
    rows, warnings = _rows(path)
    if not rows:
        raise ReaderError("the rocprofv3 agent_info CSV has a header but no agent rows")
    agents = [_agent(row) for row in rows]
    part = Part(path=path, kind=files.AGENT_INFO, agents=agents, warnings=warnings)
    part.truncated = bool(warnings)
    return part


def _rows(path: str) -> tuple[list[dict[str, str]], list[str]]:
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            table = list(csv.reader(handle))
    except csv.Error as error:
        raise ReaderError(f"cannot read the rocprofv3 agent_info CSV ({error})") from None
    table = [row for row in table if any(cell.strip() for cell in row)]
    header = [_csv.norm(cell) for cell in table[0]] if table else []
    if "agent_type" not in header or not {"node_id", "logical_node_id"} & set(header):
        raise ReaderError("expected a rocprofv3 agent_info header with Node_Id and Agent_Type")
    body = table[1:]
    warnings = []
    if body and len(body[-1]) < len(header):
        body = body[:-1]
        warnings.append("the last agent row is cut short (the writer died?): dropped it")
    return [dict(zip(header, row, strict=False)) for row in body], warnings


def _agent(row: dict[str, str]) -> Agent:
    node = _csv.parse_int(row.get("node_id", ""))
    logical = _csv.parse_int(row.get("logical_node_id", "")) if "logical_node_id" in row else node
    return Agent(
        node_id=node,
        logical_id=logical if logical >= 0 else node,
        type_index=-1,
        is_gpu=row.get("agent_type", "").strip().upper() == "GPU",
        name=row.get("name", ""),
        product=row.get("product_name", ""),
        compute_units=_csv.parse_int(row.get("cu_count", "")),
        properties={key: _value(text) for key, text in row.items()},
    )


def _value(text: str) -> Any:
    value = text.strip()
    return int(value) if re.fullmatch(r"-?\d+", value) else value


def read_stats(path: str) -> Part:
    """A `--stats` CSV: Name, Calls, TotalDurationNs, AverageNs, Percentage, Min/MaxNs, StdDev."""
    header = _csv.find_header(path, lambda c: files.kind_of_cells(c) == files.STATS, scan=2)
    if header is None:
        raise ReaderError("expected a rocprofv3 stats CSV header (Name,Calls,TotalDurationNs,...)")
    spec = {"calls": "Calls", "total": "TotalDurationNs", "min": "MinNs", "max": "MaxNs"}
    columns = read_columns(
        path,
        header,
        files.STATS,
        ints={key: header.index(name) for key, name in spec.items()},
        texts={"name": header.index("Name")},
    )
    names = columns.texts("name")
    kind = stats_kind(path, names)
    part = Part(path=path, kind=files.STATS, warnings=list(columns.warnings))
    part.truncated = any("cut short" in w for w in columns.warnings)
    if kind is None:
        part.extra["unread"] = "statistics of a domain gpuscope has no totals for"
        return part
    c = columns.ints
    part.stats.append(Stats(kind, names, c("calls"), c("total"), c("min"), c("max")))
    return part


def stats_kind(path: str, names: list[str]) -> int | str | None:
    """KERNEL / MEMCPY / API / "domain" for a stats file, None for one without a Totals kind."""
    kind = files.name_kind(path)
    if kind:
        return _STATS_KIND.get(kind)
    if names and all(_DOMAIN_ROW.match(n) for n in names):
        return "domain"
    if names and all(n.startswith("MEMORY_COPY_") for n in names):
        return MEMCPY
    if names and all(_API_ROW.match(n) for n in names):
        return API
    return KERNEL
