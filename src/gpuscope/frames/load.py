"""`gpuscope.load(*paths)`: the traces of any files or folders `gpuscope analyze` reads.

    >>> t = gpuscope.load("trace.json.gz")      # one trace: a TraceFrame    # doctest: +SKIP
    >>> job = gpuscope.load("run/")              # a folder of ranks: a TraceSet
    >>> job.kernels().groupby("rank").duration_ns.sum()

One trace gives a `TraceFrame`; several (a folder of ranks, several files) a `TraceSet`, which
is a list of TraceFrames with the same table methods: their rows one after the other, with a
`trace` column (the position in the set) and a `rank` column (the rank the trace records, NA
when it records none).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from gpuscope.frames._columns import check_backend
from gpuscope.frames.trace import TraceFrame


def load(*paths: str | os.PathLike[str]) -> TraceFrame | TraceSet:
    """Read every trace in `paths` (files or folders, any supported format).

    Returns a `TraceFrame` when they hold one trace, a `TraceSet` when several; `ReaderError`
    names a file that cannot be read."""
    from gpuscope.errors import InputError
    from gpuscope.trace.registry import find_sources, read_source, together

    if not paths:
        raise InputError("load(): give at least one trace file or folder")
    sources = together([s for path in paths for s in find_sources(os.fspath(path))])
    frames = [TraceFrame(read_source(source)) for source in sources]
    return frames[0] if len(frames) == 1 else TraceSet(frames)


class TraceSet(list[TraceFrame]):
    """Several traces (ranks of a job, or files given together) with the tables of all of them;
    each table has `trace` (position in the set) and `rank` columns first."""

    def __repr__(self) -> str:
        return (
            f"<TraceSet of {len(self)} traces: "
            + ", ".join(t.meta.path for t in self[:3])
            + (", …>" if len(self) > 3 else ">")
        )

    def _joined(self, method: Callable[[TraceFrame, str], Any], backend: str) -> Any:
        check_backend(backend)
        if backend == "pandas":
            import pandas as pd

            parts = [self._marked_pandas(i, t, method(t, "pandas")) for i, t in enumerate(self)]
            return pd.concat(parts, ignore_index=True)
        import pyarrow as pa

        tables = [self._marked_arrow(i, t, method(t, "arrow")) for i, t in enumerate(self)]
        table = pa.concat_tables(tables, promote_options="permissive").unify_dictionaries()
        if backend == "arrow":
            return table
        import polars as pl

        return pl.from_arrow(table)

    @staticmethod
    def _marked_pandas(index: int, trace: TraceFrame, df: Any) -> Any:
        import pandas as pd

        df.insert(0, "rank", pd.array([trace.meta.rank] * len(df), dtype="Int64"))
        df.insert(0, "trace", index)
        return df

    @staticmethod
    def _marked_arrow(index: int, trace: TraceFrame, table: Any) -> Any:
        import pyarrow as pa

        rank = (
            pa.nulls(len(table), pa.int64())
            if trace.meta.rank is None
            else pa.array([trace.meta.rank] * len(table), pa.int64())
        )
        table = table.add_column(0, "rank", rank)
        return table.add_column(0, "trace", pa.array([index] * len(table), pa.int64()))

    def kernels(self, backend: str = "pandas") -> Any:
        """`TraceFrame.kernels()` of every trace, one after the other."""
        return self._joined(TraceFrame.kernels, backend)

    def copies(self, backend: str = "pandas") -> Any:
        """`TraceFrame.copies()` of every trace."""
        return self._joined(TraceFrame.copies, backend)

    def api_calls(self, backend: str = "pandas") -> Any:
        """`TraceFrame.api_calls()` of every trace."""
        return self._joined(TraceFrame.api_calls, backend)

    def ops(self, backend: str = "pandas") -> Any:
        """`TraceFrame.ops()` of every trace."""
        return self._joined(TraceFrame.ops, backend)

    def markers(self, backend: str = "pandas") -> Any:
        """`TraceFrame.markers()` of every trace."""
        return self._joined(TraceFrame.markers, backend)

    def counters(self, backend: str = "pandas") -> Any:
        """`TraceFrame.counters()` of every trace."""
        return self._joined(TraceFrame.counters, backend)

    def queue_length(self, backend: str = "pandas") -> Any:
        """`TraceFrame.queue_length()` of every trace: each rank's streams."""
        return self._joined(TraceFrame.queue_length, backend)

    def memory_bandwidth(self, backend: str = "pandas") -> Any:
        """`TraceFrame.memory_bandwidth()` of every trace."""
        return self._joined(TraceFrame.memory_bandwidth, backend)

    def memory(self, backend: str = "pandas") -> Any:
        """`TraceFrame.memory()` of every trace (the traces without allocator events add no
        rows)."""
        return self._joined(TraceFrame.memory, backend)

    def idle_time(self, backend: str = "pandas") -> Any:
        """`TraceFrame.idle_time()` of every trace: idle time per rank and stream."""
        return self._joined(TraceFrame.idle_time, backend)

    def steps(self, backend: str = "pandas") -> Any:
        """`TraceFrame.steps()` of every trace."""
        return self._joined(TraceFrame.steps, backend)
