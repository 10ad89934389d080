"""Library tracers: turn the logs that math and collective libraries write into typed calls.

Each supported library has one parser module (`rocblas`, `hipblaslt`, `tensile`, `miopen`, `nccl`,
`cublas`, `cublaslt`, `cudnn`) that reads log lines and yields `LibraryCall` records; `table`
aggregates them (madengine's `calls` = how many identical configs were logged) and writes
`library_trace.csv`; `collect.LibraryTraceCollector` is what `gpuscope run` uses: the environment
that makes each library log into the run directory, and `finish()` to write the CSV.

    >>> from gpuscope.libtrace.collect import LibraryTraceCollector
    >>> c = LibraryTraceCollector(run_dir, ["cublas_trace"], jobid="0", model="m")  # doctest: +SKIP
    >>> child_env.update(c.env()); ...; c.finish()                                  # doctest: +SKIP
"""

from __future__ import annotations

from gpuscope.libtrace._args import options, to_int

__all__ = ["options", "to_int"]  # the parsers' argument helpers, shared with libperf's configs
