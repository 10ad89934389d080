"""What a rocpd database says about itself: its runs (one per uuid-suffixed set of tables), the
agents (GPUs) they ran on, and which rocprofv3 tracing options were on — from which
`TraceMeta.provides` is declared.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.trace import _sql
from gpuscope.trace.model import I64, Device

DISPATCH = "rocpd_kernel_dispatch"
_SUFFIX = re.compile(r"^rocpd_kernel_dispatch(_[0-9A-Za-z_]+)?$")

# rocprofv3 options (ROCPROF_<NAME> in the process environment, <name> in newer config JSON)
_API_TRACES = (
    "hip_runtime_api_trace",
    "hip_compiler_api_trace",
    "hsa_core_api_trace",
    "hsa_amd_ext_api_trace",
    "hsa_image_ext_api_trace",
    "hsa_finalizer_ext_api_trace",
    "rccl_api_trace",
    "rocdecode_api_trace",
    "rocjpeg_api_trace",
)
_DISPATCH_OPTIONS = ("kernel_trace", "counter_collection")
_OPTIONS = (*_API_TRACES, *_DISPATCH_OPTIONS, "memory_copy_trace", "marker_api_trace")
# extdata keys of a GPU agent kept as Device.properties
_AGENT_KEYS = (
    "cu_count",
    "simd_count",
    "num_xcc",
    "wave_front_size",
    "max_waves_per_cu",
    "lds_size_in_kb",
    "max_engine_clk_fcompute",
    "gfx_target_version",
    "device_id",
    "location_id",
    "drm_render_minor",
)


@dataclass(frozen=True)
class Run:
    """One profiled process: its tables carry `suffix` (views without it when it is alone)."""

    suffix: str
    tables: frozenset[str]

    def table(self, base: str) -> str | None:
        """The physical table of this run, else the un-suffixed view, else None."""
        for name in (base + self.suffix, base):
            if name in self.tables:
                return name
        return None


@dataclass
class Process:
    """The process rows of all runs: options, span, command."""

    options: dict[str, bool] = field(default_factory=dict)
    span: tuple[int, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def runs(names: dict[str, str]) -> list[Run]:
    """Runs found by their physical kernel-dispatch tables (the uuid suffix is read, not known)."""
    suffixes = sorted(
        match.group(1) or ""
        for name, kind in names.items()
        if kind == "table" and (match := _SUFFIX.match(name))
    )
    tables = frozenset(names)
    if not suffixes:  # only the views exist (or a hand-made database): read through them
        return [Run("", tables)]
    return [Run(suffix, tables) for suffix in suffixes]


def metadata(db: sqlite3.Connection, run: Run) -> dict[str, str]:
    table = run.table("rocpd_metadata")
    if table is None:
        return {}
    rows = db.execute(f"SELECT tag, value FROM {_sql.quote(table)}")
    return {str(tag): str(value) for tag, value in rows}


@dataclass(frozen=True)
class Agents:
    """The run's agents: the device id of each (its logical node index, as rocprofv3's CSV and
    JSON write `Agent N`) and the GPUs as `Device`s under that id."""

    logical: dict[int, int]
    gpus: dict[int, Device]  # by agent id

    def device_ids(self, agent_ids: I64) -> I64:
        keys = np.array(sorted(self.logical), np.int64)
        values = np.array([self.logical[k] for k in sorted(self.logical)], np.int64)
        at = _sql.lookup(keys, agent_ids)
        result: I64 = np.where(at >= 0, values[np.maximum(at, 0)] if len(keys) else -1, agent_ids)
        return result


def agents(db: sqlite3.Connection, run: Run) -> Agents:
    table = run.table("rocpd_info_agent")
    if table is None:
        return Agents({}, {})
    sql = (
        "SELECT id, type, logical_index, absolute_index, type_index, name, model_name, "
        f"vendor_name, product_name, extdata FROM {_sql.quote(table)}"
    )
    logical: dict[int, int] = {}
    gpus: dict[int, Device] = {}
    for row in db.execute(sql):
        if not isinstance(row[0], int):
            continue
        logical[row[0]] = row[2] if isinstance(row[2], int) else row[0]
        if row[1] == "GPU":
            gpus[row[0]] = _device(logical[row[0]], row)
    return Agents(logical, gpus)


def _device(device_id: int, row: tuple[Any, ...]) -> Device:
    agent_id, _, _, absolute, type_index, name, model, vendor, product, extdata = row
    info = _json(extdata)
    properties: dict[str, Any] = {
        "agent_id": agent_id,
        "absolute_index": absolute,
        "type_index": type_index,
        "vendor": vendor or "",
        "model_name": model or "",
    }
    properties.update({key: info[key] for key in _AGENT_KEYS if key in info})
    cus = info.get("cu_count")
    return Device(
        id=device_id,
        name=str(product or name or f"agent {agent_id}"),
        properties=properties,
        arch=str(name or ""),
        compute_units=cus if isinstance(cus, int) and cus > 0 else 0,
    )


def process(db: sqlite3.Connection, all_runs: list[Run]) -> Process:
    """Tracing options, the process span and its command, merged over every run."""
    result = Process()
    for run in all_runs:
        table = run.table("rocpd_info_process")
        if table is None:
            continue
        sql = f'SELECT "start", "end", command, environment, extdata FROM {_sql.quote(table)}'
        for start, end, command, environment, extdata in db.execute(sql):
            _merge_options(result.options, _json(environment), _json(extdata))
            _merge_span(result, start, end)
            if command and "command" not in result.extra:
                result.extra["command"] = str(command)
            _mpi(result.extra, _json(extdata))
    return result


def _merge_options(options: dict[str, bool], env: dict[str, Any], config: dict[str, Any]) -> None:
    for option in _OPTIONS:
        for value in (env.get("ROCPROF_" + option.upper()), config.get(option)):
            if value is not None:
                options[option] = options.get(option, False) or _truthy(value)


def _merge_span(result: Process, start: Any, end: Any) -> None:
    if not (isinstance(start, int) and isinstance(end, int) and 0 < start <= end):
        return
    if result.span is None:
        result.span = (start, end)
    else:
        result.span = (min(start, result.span[0]), max(end, result.span[1]))


def _mpi(extra: dict[str, Any], config: dict[str, Any]) -> None:
    rank, size = config.get("mpi_rank"), config.get("mpi_size")
    if isinstance(rank, int) and isinstance(size, int) and size > 1 and rank >= 0:
        extra["mpi_rank"], extra["mpi_size"] = rank, size


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _json(value: Any) -> dict[str, Any]:
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return {}
    if not isinstance(value, str):
        return {}
    try:
        parsed = json.loads(value)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def provides(options: dict[str, bool], found: dict[str, int]) -> frozenset[str]:
    """What the recorded options say the database holds; from the tables when none is known.

    `found` counts rows per kind ("kernels", "copies", "host_api", "markers", "counters").
    """
    if options:
        traced = {
            "kernels": any(options.get(o) for o in _DISPATCH_OPTIONS),
            "copies": bool(options.get("memory_copy_trace")),
            "host_api": any(options.get(o) for o in _API_TRACES),
            "markers": bool(options.get("marker_api_trace")),
            "counters": bool(options.get("counter_collection")),
        }
    else:
        traced = {kind: found.get(kind, 0) > 0 for kind in _KINDS}
    keys = {"devices"}
    if traced["kernels"]:
        keys |= {"kernels", "timestamps", "launch_params"}
    if traced["copies"]:
        keys |= {"copies", "copy_bytes", "timestamps"}
    if traced["host_api"]:
        keys.add("host_api")
        if traced["kernels"] or traced["copies"]:
            keys.add("links")
    keys |= {kind for kind in ("markers", "counters") if traced[kind]}
    return frozenset(keys)


_KINDS = ("kernels", "copies", "host_api", "markers", "counters")
