"""rocprofv3 (ROCprofiler-SDK, ROCm 6.2 - 7.x) CSV and JSON outputs."""

from gpuscope.trace.readers.rocprofv3.reader import Rocprofv3Reader

__all__ = ["Rocprofv3Reader"]
