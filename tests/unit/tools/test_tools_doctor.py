"""gpuscope doctor: tool readiness, environment traps, device support."""

from __future__ import annotations

from pathlib import Path

from gpuscope.doctor.diagnose import diagnose, env_traps, profiling_permission
from gpuscope.tools.config import load_catalog
from gpuscope.tools.host import Gpu, HostInfo

AMD_RDNA = HostInfo("AMD", (Gpu(0, "AMD gfx1151", "AMD", "gfx1151"),), runtime="ROCm 7.0")
AMD_MI300 = HostInfo("AMD", (Gpu(0, "AMD gfx942", "AMD", "gfx942"),))


def _status(report: object, name: str) -> tuple[bool, str]:
    tool = next(t for t in report.tools if t.name == name)  # type: ignore[attr-defined]
    return tool.ok, tool.detail


def test_traps_in_the_environment() -> None:
    env = {"PYTORCH_TUNABLEOP_ENABLED": "1", "CUDA_LAUNCH_BLOCKING": "1",
           "HIP_LAUNCH_BLOCKING": "0", "HIP_VISIBLE_DEVICES": ""}  # fmt: skip
    ids = [f.id for f in env_traps(env)]
    assert ids == ["pytorch_tunableop_enabled", "cuda_launch_blocking", "hip_visible_devices"]


def test_fakes_on_path_make_the_amd_tools_ready(fake_path: str) -> None:
    report = diagnose(load_catalog(), env={"PATH": fake_path}, host=AMD_MI300)
    assert _status(report, "rocprofv3_compute")[0]
    assert _status(report, "rpd")[0]
    assert _status(report, "gpu_info_power_profiler")[0]  # the fake rocm-smi is a backend
    ok, detail = _status(report, "nsys")
    assert not ok and detail == "for NVIDIA GPUs; this is AMD"


def test_consumer_rdna_has_no_counter_presets_but_tracing_works(fake_path: str) -> None:
    report = diagnose(load_catalog(), env={"PATH": fake_path}, host=AMD_RDNA)
    ok, detail = _status(report, "rocprofv3_compute")
    assert not ok and "no hardware counters" in detail
    assert _status(report, "rocprofv3_lightweight")[0] and _status(report, "torch_profiler")[0]
    (finding,) = report.device
    assert finding.id == "no_hardware_counters" and "gfx1151" in finding.message
    assert "torch_profiler" in finding.action


def test_missing_binary_says_what_to_install(tmp_path: Path) -> None:
    report = diagnose(load_catalog(), env={"PATH": str(tmp_path)}, host=AMD_MI300)
    ok, detail = _status(report, "rocprof")
    assert not ok
    assert detail == ("rocprofv3 not found on PATH: install ROCm's rocprofiler-sdk (rocprofv3, "
                      "ROCm 6.2 or later), or drop the rocprof tool")  # fmt: skip


def test_no_gpu_is_reported(tmp_path: Path) -> None:
    report = diagnose(load_catalog(), env={"PATH": str(tmp_path)}, host=HostInfo(None))
    assert [f.id for f in report.device] == ["no_gpu"]
    assert report.to_dict()["schema"] == "gpuscope.doctor/1"


def test_nvidia_counters_restricted_to_admins(tmp_path: Path) -> None:
    params = tmp_path / "proc/driver/nvidia/params"
    params.parent.mkdir(parents=True)
    params.write_text("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\n")
    assert [f.id for f in profiling_permission(tmp_path, euid=1000)] == [
        "nvidia_counters_admin_only"
    ]
    assert profiling_permission(tmp_path, euid=0) == []
    params.write_text("RmProfilingAdminOnly: 0\n")
    assert profiling_permission(tmp_path, euid=1000) == []
