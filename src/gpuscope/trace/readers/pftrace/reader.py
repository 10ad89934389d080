"""Reader for Perfetto protobuf traces (`.pftrace`) written by ROCm's profilers.

A `.pftrace` is a `perfetto.protos.Trace`: a stream of TracePackets (field 1). rocprofv3's
writer (rocprofiler-sdk `generatePerfetto.cpp`) and rocprofv2's perfetto plugin emit track
events through the Perfetto SDK: slices (begin / end pairs) on tracks named for threads, queues
or streams, with a category per kind of record (`kernel_dispatch`, `memory_copy`, `hip_api`,
`hsa_api`, `marker_api`, `rccl_api`; rocprofv2: `KERNELS`, `HIP_OPS`, `MEM_COPIES`, `HIP_API`,
`HSA_API`, `ROCTX_API`) and debug annotations holding the record's fields (`corr_id`,
`copy_bytes`, `grid_size`, `workgroup_size`, `LDS_Block_Size`, `VGPR_Count`, ...).

Sniffing needs nothing but the bytes; reading needs the `perfetto` package (`pip install
'gpuscope[perfetto]'`).

    >>> from gpuscope.trace.registry import read_trace
    >>> trace = read_trace("results.pftrace")      # doctest: +SKIP
"""

from __future__ import annotations

from gpuscope.trace._jsonstream import Progress
from gpuscope.trace._sniff import varint
from gpuscope.trace.model import Trace

# TracePacket fields that a Perfetto SDK trace's first packets hold: trusted_packet_sequence_id,
# track_event, interned_data, sequence_flags, track_descriptor, trace_config, clock_snapshot
_PACKET_FIELDS = {10, 11, 12, 13, 60, 33, 6}


class PftraceReader:
    """`Reader` for Perfetto protobuf traces of rocprofv3 / rocprofv2."""

    name = "pftrace"

    def sniff(self, path: str) -> bool:
        try:
            with open(path, "rb") as handle:
                head = handle.read(1 << 16)
        except OSError:
            return False
        return looks_like_trace(head)

    def read(self, path: str, progress: Progress | None = None) -> Trace:
        from gpuscope.trace.readers.pftrace import _read

        return _read.read(path, progress)


def looks_like_trace(head: bytes) -> bool:
    """The head of a Perfetto Trace: length-delimited field-1 records (packets) whose own fields
    include ones only a TracePacket has (an XSpace's planes, also field 1, hold fields 1-6)."""
    pos, seen, packets = 0, set(), 0
    while pos < len(head) and packets < 32:
        if head[pos] != 0x0A:
            return False
        size, start = varint(head, pos + 1)
        if size < 0:
            return False
        end = start + size
        seen |= _field_numbers(head[start : min(end, len(head))])
        packets += 1
        pos = end
    return packets > 0 and bool(seen & _PACKET_FIELDS)


def _field_numbers(data: bytes) -> set[int]:
    """The field numbers of a message's leading fields (as many as parse)."""
    found, pos = set(), 0
    while pos < len(data):
        key, pos = varint(data, pos)
        if key < 8:
            break
        wire = key & 7
        if wire == 0:
            _, pos = varint(data, pos)
        elif wire == 2:
            size, pos = varint(data, pos)
            pos += max(size, 0)
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            break
        if pos < 0 or pos > len(data):
            break
        found.add(key >> 3)
    return found
