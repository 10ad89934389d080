"""Reader for rocprofv3 (ROCprofiler-SDK, ROCm 6.2 - 7.x) CSV and JSON outputs.

One profiled process writes several files sharing a prefix (`<dir>/<host>/<pid>_kernel_trace.csv`,
`_hip_api_trace.csv`, `_agent_info.csv`, `_counter_collection.csv`, `_kernel_stats.csv`, ... or one
`<pid>_results.json`); they become one `Trace`. Files are recognised by their header cells (the
JSON by its `rocprofiler-sdk-tool` key), columns are matched by name across every header
generation, times are integer ns on CLOCK_BOOTTIME. When a process has both JSON and CSV files,
the JSON is read: it alone records the size of each memory copy. The rocpd SQLite database is
another reader's (`rocpd`), preferred over these files when both exist.

Not read: memory allocation, scratch memory, PC sampling and thread-trace outputs, Perfetto and
OTF2 traces.

    >>> from gpuscope.trace import read_trace
    >>> trace = read_trace("out/myhost/1234_kernel_trace.csv")      # doctest: +SKIP
    >>> trace.meta.schema, trace.provides("kernels", "host_api")    # doctest: +SKIP
    ('rocm7', False)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuscope.errors import ReaderError
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace.model import Trace
from gpuscope.trace.readers.rocprofv3 import _files as files

# every input is sniffed with this module (a Kineto JSON too): the read path is imported on read
if TYPE_CHECKING:
    from gpuscope.trace.readers.rocprofv3._tables import Part

_EXPECTED = (
    "expected a rocprofv3 output: a CSV with its header (kernel_trace, *_api_trace, "
    "memory_copy_trace, agent_info, counter_collection, *_stats) or results.json"
)


class Rocprofv3Reader:
    """`Reader` for rocprofv3 CSV files and `--output-format json` files."""

    name = "rocprofv3"
    priority = 20  # below rocpd (30): the database of the same run holds everything

    def sniff(self, path: str) -> bool:
        try:
            return files.file_kind(path) is not None
        except (OSError, ValueError):
            return False

    def group_key(self, path: str) -> str:
        """`out/host/123_kernel_trace.csv` -> `out/host/123`; no prefix: the directory."""
        return files.prefix_key(path)

    def read(self, path: str, progress: Progress | None = None) -> Trace:
        return self.read_group([path], progress)

    def read_group(self, paths: list[str], progress: Progress | None = None) -> Trace:
        """One Trace from the files of one process: its JSON when there is a readable one."""
        kinds = {path: files.file_kind(path) for path in paths}
        readable = sorted(p for p, k in kinds.items() if k is not None)
        if not readable:
            raise ReaderError(f"{_EXPECTED}; found none of them")
        jsons = [p for p in readable if kinds[p] == files.JSON]
        csvs = [p for p in readable if kinds[p] != files.JSON]
        notes: list[str] = []
        if jsons:
            try:
                return _group(paths, jsons, kinds, progress, notes)
            except ReaderError as error:
                if not csvs:
                    raise
                names = ", ".join(Path(p).name for p in jsons)
                notes.append(f"{names}: {error}; read the CSV files of the process instead")
        return _group(paths, csvs, kinds, progress, notes)


def _group(
    paths: list[str],
    chosen: list[str],
    kinds: dict[str, str | None],
    progress: Progress | None,
    notes: list[str],
) -> Trace:
    from gpuscope.trace.readers.rocprofv3._build import build

    parts, failures = _read_all(chosen, kinds, progress)
    json = any(kinds[p] == files.JSON for p in chosen)
    if not any(p.rows for p in parts) and not json:  # a JSON is complete even when empty
        raise ReaderError(_nothing(parts, failures))
    key = files.prefix_key(chosen[0]) if len(paths) > 1 else chosen[0]
    extra: dict[str, Any] = {}
    unread = [Path(p).name for p in paths if p not in chosen]
    if unread:
        extra["not_read"] = unread
    notes = [*notes, *(f"{f}; read the other files" for f in failures)]
    return build(key, parts, notes, extra)


def _read_all(
    paths: list[str], kinds: dict[str, str | None], progress: Progress | None
) -> tuple[list[Part], list[str]]:
    parts: list[Part] = []
    failures: list[str] = []
    sizes = [os.path.getsize(path) for path in paths]
    for done, path in enumerate(paths):
        try:
            parts.extend(_read_one(path, kinds[path]))
        except ReaderError as error:
            if len(paths) == 1:
                raise
            failures.append(f"{Path(path).name}: {error}")
        if progress is not None:
            progress(sum(sizes[: done + 1]), sum(sizes))
    return parts, failures


def _read_one(path: str, kind: str | None) -> list[Part]:
    if kind == files.JSON:
        from gpuscope.trace.readers.rocprofv3._json import read_json

        return read_json(path)
    if kind is None:
        raise ReaderError(_EXPECTED)
    return [_csv_reader(kind)(path)]


def _csv_reader(kind: str) -> Callable[[str], Part]:
    from gpuscope.trace.readers.rocprofv3 import _csv_parts as csv_
    from gpuscope.trace.readers.rocprofv3._info import read_agent_info, read_stats

    readers: dict[str, Callable[[str], Part]] = {
        files.KERNEL_TRACE: csv_.read_kernel_trace,
        files.API_TRACE: csv_.read_api_trace,
        files.MEMORY_COPY: csv_.read_memory_copies,
        files.COUNTERS: csv_.read_counters,
        files.AGENT_INFO: read_agent_info,
        files.STATS: read_stats,
    }
    return readers[kind]


def _nothing(parts: list[Part], failures: list[str]) -> str:
    if failures and not parts:
        return "; ".join(failures)
    names = ", ".join(Path(p.path).name for p in parts)
    if all("unread" in p.extra for p in parts):
        return (f"{names}: statistics of marker ranges, allocations or counter collection only, "
                "which gpuscope does not read; expected kernel, API or copy traces")  # fmt: skip
    return (f"no rows in {names}: the header is there but no records (the profiler stopped "
            "before writing any, or nothing was traced)")  # fmt: skip
