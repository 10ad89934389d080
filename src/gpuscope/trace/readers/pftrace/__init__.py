"""Perfetto protobuf traces (`.pftrace`) of ROCm's profilers: `rocprofv3 --output-format
pftrace` and `rocprofv2 --plugin perfetto`, read with the `perfetto` package's own TracePacket
classes (the `perfetto` extra); no trace processor binary is downloaded or run."""

from gpuscope.trace.readers.pftrace.reader import PftraceReader

__all__ = ["PftraceReader"]
