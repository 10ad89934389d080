"""AMD's legacy `rocprof` (rocprofiler 1.x / roctracer, ROCm ≤ 6): one run's files."""

from gpuscope.trace.readers.rocprof.reader import RocprofReader

__all__ = ["RocprofReader"]
