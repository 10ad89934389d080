"""rocprofv3's SQLite output, the rocpd database (`<pid>_results.db`, ROCm ≥ 7)."""

from gpuscope.trace.readers.rocpd.reader import RocpdReader

__all__ = ["RocpdReader"]
