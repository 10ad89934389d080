"""Write `.pftrace` files laid out as ROCm's profilers write them: no real rocprofv3 / rocprofv2
Perfetto trace is in any public repository, so these are made with the `perfetto` package's
TracePacket classes following the writers' source:

- `rocprofv3_results.pftrace` — rocprofiler-sdk `source/lib/output/generatePerfetto.cpp`
  (ROCm/rocm-systems, 2026): one thread track per host thread (the main thread as the process's
  thread track, the others `THREAD <n> (<tid>)`), kernels and copies on `STREAM [" <id> "] `
  tracks (HIP initialized: grouped by stream), categories `hip_api`, `marker_api`,
  `kernel_dispatch`, `memory_copy`, and the writer's debug annotations (`begin_ns`, `end_ns`,
  `delta_ns`, `corr_id`, `agent`, `queue`, `tid`, `kernel_id`, `Scratch_Size`,
  `LDS_Block_Size`, `VGPR_Count`, `Accum_VGPR_Count`, `SGPR_Count`, `workgroup_size`,
  `grid_size`, `stream_ID`; copies: `src_agent`, `dst_agent`, `copy_bytes`), a `COPY BYTES to
  AGENT [n] (GPU)` counter track; names, categories and annotation names interned per sequence
  as the Perfetto SDK does. The agent's text (`as_string("-")`) is written `GPU-0` here: its
  exact spelling was not checked, the reader takes its last number.
- `rocprofv2_output.pftrace` — rocprofiler (v2) `plugin/perfetto/perfetto.cpp`: `HIP API <tid>`
  tracks (category `HIP_API`), kernels on `Dev <agent> Queue <queue>` (`KERNELS`, annotations
  `Agent ID`, `Queue ID`, `GRD`, `WGR`, `LDS`, `SCR`, `Arch. VGPR`, `Accumulation Vgpr`,
  `SGPR`, `Wave Size`), copies on `MEM COPIES(<tid>): ` (`MEM_COPIES`), ROCTX on `ROCTX
  Markers`; the correlation id only as a process-scoped flow id (the API call and its kernel
  share it).

The program traced is the same in both: hipMalloc, a 4 MiB host-to-device copy, three
`vecadd` kernels and one Tensile GEMM inside a `step` ROCTX range, a device-to-host copy and a
synchronize, on one MI300X (agent 0), one host thread launching and a second allocating.

    python tests/data/pftrace/make_pftrace.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

HERE = Path(__file__).resolve().parent
PID, MAIN_TID, OTHER_TID = 4242, 4242, 4250
T0 = 7_301_000_000_000  # CLOCK_BOOTTIME ns, about 2 hours after boot
VECADD = "void vecadd<float>(float*, float const*, float const*, int)"
GEMM = "Cijk_Ailk_Bljk_SB_MT64x64x8_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_GRVW4_ISA942"
FLOW_SALT = 0x3C5A_9F11_0000_0000  # Flow::ProcessScoped mixes the process into the id
# (name, start offset ns, duration ns, correlation id, thread)
API = [
    ("hipMalloc", 1_000, 52_000, 1, OTHER_TID),
    ("hipMemcpyAsync", 60_000, 9_000, 2, MAIN_TID),
    ("hipLaunchKernel", 80_000, 6_000, 3, MAIN_TID),
    ("hipLaunchKernel", 90_000, 4_000, 4, MAIN_TID),
    ("hipLaunchKernel", 96_000, 4_000, 5, MAIN_TID),
    ("hipExtModuleLaunchKernel", 102_000, 7_000, 6, MAIN_TID),
    ("hipMemcpyAsync", 112_000, 5_000, 7, MAIN_TID),
    ("hipDeviceSynchronize", 118_000, 700_000, 8, MAIN_TID),
]
# (name, start, duration, correlation, grid work-items, work-group, LDS, VGPRs, AGPRs, SGPRs)
KERNELS = [
    (VECADD, 120_000, 41_000, 3, 1 << 20, 256, 0, 12, 0, 16),
    (VECADD, 162_000, 40_500, 4, 1 << 20, 256, 0, 12, 0, 16),
    (VECADD, 203_000, 40_250, 5, 1 << 20, 256, 0, 12, 0, 16),
    (GEMM, 244_000, 388_000, 6, 256 * 64 * 16, 256, 16384, 128, 64, 96),
]
# (name, start, duration, correlation, bytes, source agent, destination agent)
COPIES = [
    ("MEMORY_COPY_HOST_TO_DEVICE", 70_000, 45_000, 2, 4 << 20, "CPU-0", "GPU-0"),
    ("MEMORY_COPY_DEVICE_TO_HOST", 640_000, 160_000, 7, 4 << 20, "GPU-0", "CPU-0"),
]
MARKER = ("step", 75_000, 560_000, 9, MAIN_TID)


class Writer:
    """One packet sequence with the SDK's interning: strings get iids on first use."""

    def __init__(self) -> None:
        self.trace = pb.Trace()
        self.iids: dict[str, dict[str, int]] = {"cat": {}, "name": {}, "arg": {}}
        self.first = True

    def packet(self, ts: int | None = None) -> Any:
        packet = self.trace.packet.add()
        packet.trusted_packet_sequence_id = 1
        if ts is not None:
            packet.timestamp = ts
        packet.sequence_flags = 1 if self.first else 2
        self.first = False
        return packet

    def iid(self, packet: Any, kind: str, text: str) -> int:
        table = self.iids[kind]
        if text not in table:
            table[text] = len(table) + 1
            field = {"cat": "event_categories", "name": "event_names",
                     "arg": "debug_annotation_names"}[kind]  # fmt: skip
            entry = getattr(packet.interned_data, field).add()
            entry.iid, entry.name = table[text], text
        return table[text]

    def track(self, uuid: int, name: str = "", tid: int = -1) -> None:
        packet = self.packet()
        packet.track_descriptor.uuid = uuid
        if name:
            packet.track_descriptor.name = name
        if tid >= 0:
            packet.track_descriptor.thread.pid = PID
            packet.track_descriptor.thread.tid = tid

    def slice(self, category: str, name: str, track: int, start: int, end: int,
              args: list[tuple[str, Any]], flow: int | None = None) -> None:  # fmt: skip
        begin = self.packet(start)
        event = begin.track_event
        event.type = pb.TrackEvent.TYPE_SLICE_BEGIN
        event.track_uuid = track
        event.category_iids.append(self.iid(begin, "cat", category))
        event.name_iid = self.iid(begin, "name", name)
        if flow is not None:
            event.flow_ids.append(flow)
        for key, value in args:
            annotation = event.debug_annotations.add()
            annotation.name_iid = self.iid(begin, "arg", key)
            if isinstance(value, str):
                annotation.string_value = value
            elif value < 0:
                annotation.int_value = value
            else:
                annotation.uint_value = value
        end_packet = self.packet(end)
        end_packet.track_event.type = pb.TrackEvent.TYPE_SLICE_END
        end_packet.track_event.track_uuid = track
        end_packet.track_event.category_iids.append(self.iid(end_packet, "cat", category))

    def counter(self, track: int, ts: int, value: int) -> None:
        packet = self.packet(ts)
        packet.track_event.type = pb.TrackEvent.TYPE_COUNTER
        packet.track_event.track_uuid = track
        packet.track_event.counter_value = value


def times(start: int, duration: int) -> tuple[int, int, list[tuple[str, Any]]]:
    begin, end = T0 + start, T0 + start + duration
    return begin, end, [("begin_ns", begin), ("end_ns", end), ("delta_ns", duration)]


def rocprofv3() -> bytes:
    out = Writer()
    process = out.packet()
    process.track_descriptor.uuid = 1
    process.track_descriptor.process.pid = PID
    process.track_descriptor.process.process_name = "vecadd"
    threads = {MAIN_TID: 2, OTHER_TID: OTHER_TID}
    out.track(2, tid=MAIN_TID)  # ThreadTrack::Current()
    out.track(OTHER_TID, f"THREAD 1 ({OTHER_TID})")
    out.track(3, 'STREAM [" 1 "] ')
    out.track(4, "COPY BYTES to AGENT [0] (GPU)")
    for name, start, duration, corr, tid in API:
        begin, end, args = times(start, duration)
        args += [("tid", tid), ("kind", 2), ("operation", 0), ("corr_id", corr),
                 ("ancestor_id", 0), ("stream_ID", 1)]  # fmt: skip
        out.slice("hip_api", name, threads[tid], begin, end, args)
    name, start, duration, corr, tid = MARKER
    begin, end, args = times(start, duration)
    args += [("tid", tid), ("kind", 5), ("operation", 1), ("corr_id", corr), ("ancestor_id", 0)]
    out.slice("marker_api", name, threads[tid], begin, end, args)
    for name, start, duration, corr, size, source, target in COPIES:
        begin, end, args = times(start, duration)
        args += [("kind", 10), ("operation", 1 if "TO_DEVICE" in name else 2),
                 ("src_agent", source), ("dst_agent", target), ("copy_bytes", size),
                 ("corr_id", corr), ("tid", MAIN_TID), ("stream_ID", 1)]  # fmt: skip
        out.slice("memory_copy", name, 3, begin, end, args)
    for kernel_id, (name, start, duration, corr, grid, group, lds, vgpr, agpr, sgpr) in enumerate(
        KERNELS, 1
    ):
        begin, end, args = times(start, duration)
        args += [("kind", 11), ("agent", "GPU-0"), ("agent_type", "GPU"), ("corr_id", corr),
                 ("queue", 0), ("tid", MAIN_TID), ("kernel_id", kernel_id),
                 ("Scratch_Size", 0), ("LDS_Block_Size", lds), ("VGPR_Count", vgpr),
                 ("Accum_VGPR_Count", agpr), ("SGPR_Count", sgpr), ("workgroup_size", group),
                 ("grid_size", grid), ("stream_ID", 1)]  # fmt: skip
        out.slice("kernel_dispatch", name, 3, begin, end, args)
    for _, start, duration, _, size, _, _ in COPIES:
        out.counter(4, T0 + start, size // 1024)
        out.counter(4, T0 + start + duration, 0)
    return bytes(out.trace.SerializeToString())


def rocprofv2() -> bytes:
    out = Writer()
    process = out.packet()
    process.track_descriptor.uuid = 1
    process.track_descriptor.process.pid = PID
    process.track_descriptor.process.process_name = "Node: mi300x-01"
    tracks = {MAIN_TID: 10, OTHER_TID: 11}
    out.track(10, f"HIP API {MAIN_TID}")
    out.track(11, f"HIP API {OTHER_TID}")
    out.track(12, "Dev 1 Queue 0")
    out.track(13, f"MEM COPIES({MAIN_TID}): ")
    out.track(14, "ROCTX Markers")
    for name, start, duration, corr, tid in API:
        out.slice("HIP_API", name, tracks[tid], T0 + start, T0 + start + duration, [],
                  flow=corr ^ FLOW_SALT)  # fmt: skip
    name, start, duration, corr, _ = MARKER
    out.slice("ROCTX_API", name, 14, T0 + start, T0 + start + duration,
              [("Timestamp(ns)", T0 + start), ("RocTx ID", corr)])  # fmt: skip
    for name, start, duration, corr, _, _, _ in COPIES:
        short = "CopyHostToDevice" if "TO_DEVICE" in name else "CopyDeviceToHost"
        out.slice("MEM_COPIES", short, 13, T0 + start, T0 + start + duration,
                  [("Process ID", PID)], flow=corr ^ FLOW_SALT)  # fmt: skip
    for name, start, duration, corr, grid, group, lds, vgpr, agpr, sgpr in KERNELS:
        args = [("Full Kernel Name", name), ("Agent ID", 1), ("Queue ID", 0), ("GRD", grid),
                ("WGR", group), ("LDS", lds), ("SCR", 0), ("Arch. VGPR", vgpr),
                ("Accumulation Vgpr", agpr), ("SGPR", sgpr), ("Wave Size", 64),
                ("Signal", 140_000_000 + corr)]  # fmt: skip
        out.slice("KERNELS", name, 12, T0 + start, T0 + start + duration, args,
                  flow=corr ^ FLOW_SALT)  # fmt: skip
    return bytes(out.trace.SerializeToString())


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else HERE
    for name, data in (("rocprofv3_results.pftrace", rocprofv3()),
                       ("rocprofv2_output.pftrace", rocprofv2())):  # fmt: skip
        (out / name).write_bytes(data)
        print(f"wrote {name} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
