"""Typed structs for rocprofv3's `--output-format json` (`<prefix>_results.json`).

Only the fields gpuscope uses are declared: msgspec skips the rest (HIP call arguments, code
objects, PC samples, ...) without building Python objects for them. Every field has a default,
so older and newer writers (ROCm 6.2 to 7.x: `stream_id`, `rccl_api`, `rocjpeg_api` appeared
over time) decode with the same structs. Layout: rocprofiler-sdk `lib/output/generateJSON.cpp`
and `cxx/serialization/save.hpp` (cereal); see formats.md §3.7.
"""

from __future__ import annotations

import msgspec


class Handle(msgspec.Struct, gc=False):
    handle: int = -1


class Correlation(msgspec.Struct, gc=False):
    internal: int = -1
    external: int = 0


class Dim3(msgspec.Struct, gc=False):
    x: int = -1
    y: int = -1
    z: int = -1


_NO_HANDLE = msgspec.field(default_factory=Handle)
_NO_CORRELATION = msgspec.field(default_factory=Correlation)
_NO_DIMS = msgspec.field(default_factory=Dim3)


class DispatchInfo(msgspec.Struct, gc=False):
    agent_id: Handle = _NO_HANDLE
    queue_id: Handle = _NO_HANDLE
    kernel_id: int = -1
    dispatch_id: int = -1
    private_segment_size: int = -1
    group_segment_size: int = -1
    workgroup_size: Dim3 = _NO_DIMS
    grid_size: Dim3 = _NO_DIMS


_NO_INFO = msgspec.field(default_factory=DispatchInfo)


class KernelDispatch(msgspec.Struct, gc=False):
    thread_id: int = -1
    correlation_id: Correlation = _NO_CORRELATION
    start_timestamp: int = -1
    end_timestamp: int = -1
    dispatch_info: DispatchInfo = _NO_INFO
    stream_id: Handle | None = None


class ApiCall(msgspec.Struct, gc=False):
    """hip_api, hsa_api, marker_api, rccl_api, rocdecode_api, rocjpeg_api records."""

    kind: int = -1
    operation: int = -1
    correlation_id: Correlation = _NO_CORRELATION
    start_timestamp: int = -1
    end_timestamp: int = -1
    thread_id: int = -1


class MemoryCopy(msgspec.Struct, gc=False):
    kind: int = -1
    operation: int = -1
    thread_id: int = -1
    correlation_id: Correlation = _NO_CORRELATION
    start_timestamp: int = -1
    end_timestamp: int = -1
    dst_agent_id: Handle = _NO_HANDLE
    src_agent_id: Handle = _NO_HANDLE
    bytes: int = -1
    stream_id: Handle | None = None


class CounterValue(msgspec.Struct, gc=False):
    counter_id: Handle = _NO_HANDLE
    value: float = 0.0


class DispatchData(msgspec.Struct, gc=False):
    correlation_id: Correlation = _NO_CORRELATION
    start_timestamp: int = -1
    end_timestamp: int = -1
    dispatch_info: DispatchInfo = _NO_INFO


class CounterRecord(msgspec.Struct, gc=False):
    thread_id: int = -1
    dispatch_data: DispatchData = msgspec.field(default_factory=DispatchData)
    records: list[CounterValue] = msgspec.field(default_factory=list)
    stream_id: Handle | None = None


class Agent(msgspec.Struct):
    id: Handle = _NO_HANDLE
    type: int = 0  # 1 CPU, 2 GPU
    name: str = ""
    product_name: str = ""
    vendor_name: str = ""
    model_name: str = ""
    node_id: int = -1
    logical_node_id: int = -1
    logical_node_type_id: int = -1
    cu_count: int = 0
    simd_count: int = 0
    wave_front_size: int = 0
    num_xcc: int = 0
    max_engine_clk_fcompute: int = 0
    local_mem_size: int = 0
    gfx_target_version: int = 0
    device_id: int = 0
    gpu_id: int = 0


class CounterInfo(msgspec.Struct):
    id: Handle = _NO_HANDLE
    name: str = ""


class KernelSymbol(msgspec.Struct, gc=False):
    kernel_id: int = 0
    kernel_name: str = ""
    formatted_kernel_name: str = ""
    demangled_kernel_name: str = ""
    sgpr_count: int = -1
    arch_vgpr_count: int = -1
    accum_vgpr_count: int = -1


class KindNames(msgspec.Struct):
    kind: str = ""
    operations: list[str] = msgspec.field(default_factory=list)


class KeyValue(msgspec.Struct):
    key: int = -1
    value: str = ""


# cereal writes a std::map as [{"key": k, "value": v}, ...]; a JSON object is accepted too
KeyedNames = list[KeyValue] | dict[str, str]


class ExternalNames(msgspec.Struct):
    external: KeyedNames = msgspec.field(default_factory=list)


class Strings(msgspec.Struct):
    buffer_records: list[KindNames] = msgspec.field(default_factory=list)
    marker_api: KeyedNames = msgspec.field(default_factory=list)
    correlation_id: ExternalNames = msgspec.field(default_factory=ExternalNames)


class Metadata(msgspec.Struct):
    pid: int = -1
    init_time: int = -1
    fini_time: int = -1
    command: list[str] | str = msgspec.field(default_factory=list)


def keyed(names: KeyedNames) -> dict[int, str]:
    """`{key: value}` of a cereal map, keys as integers (unparsable keys are dropped)."""
    if isinstance(names, dict):
        return {int(k): v for k, v in names.items() if k.lstrip("-").isdigit()}
    return {entry.key: entry.value for entry in names}


class BufferRecords(msgspec.Struct):
    kernel_dispatch: list[KernelDispatch] = msgspec.field(default_factory=list)
    memory_copy: list[MemoryCopy] = msgspec.field(default_factory=list)
    hip_api: list[ApiCall] = msgspec.field(default_factory=list)
    hsa_api: list[ApiCall] = msgspec.field(default_factory=list)
    marker_api: list[ApiCall] = msgspec.field(default_factory=list)
    rccl_api: list[ApiCall] = msgspec.field(default_factory=list)
    rocdecode_api: list[ApiCall] = msgspec.field(default_factory=list)
    rocdecoder_api: list[ApiCall] = msgspec.field(default_factory=list)  # older schema spelling
    rocjpeg_api: list[ApiCall] = msgspec.field(default_factory=list)

    def api_tables(self) -> list[tuple[str, list[ApiCall]]]:
        return [
            ("hip_api", self.hip_api),
            ("hsa_api", self.hsa_api),
            ("marker_api", self.marker_api),
            ("rccl_api", self.rccl_api),
            ("rocdecode_api", self.rocdecode_api + self.rocdecoder_api),
            ("rocjpeg_api", self.rocjpeg_api),
        ]


class CallbackRecords(msgspec.Struct):
    counter_collection: list[CounterRecord] = msgspec.field(default_factory=list)


class Process(msgspec.Struct):
    """One element of the `rocprofiler-sdk-tool` list: one profiled process."""

    metadata: Metadata = msgspec.field(default_factory=Metadata)
    agents: list[Agent] = msgspec.field(default_factory=list)
    counters: list[CounterInfo] = msgspec.field(default_factory=list)
    strings: Strings = msgspec.field(default_factory=Strings)
    kernel_symbols: list[KernelSymbol] = msgspec.field(default_factory=list)
    buffer_records: BufferRecords = msgspec.field(default_factory=BufferRecords)
    callback_records: CallbackRecords = msgspec.field(default_factory=CallbackRecords)


class Document(msgspec.Struct):
    processes: list[Process] = msgspec.field(name="rocprofiler-sdk-tool")
