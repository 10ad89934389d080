"""Processes holding GPU memory: the NVML and amdsmi calls (faked), and how a run names them."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpuscope.run.gpu_processes import GpuProcess, query
from gpuscope.run.manifest import read_manifest
from gpuscope.run.session import RunRequest, run
from gpuscope.tools.host import HostInfo

GIB = 2**30


class _NvmlError(Exception):
    pass


def _fake_pynvml(per_device: list[list[Any] | None]) -> SimpleNamespace:
    """None for a device: the query fails there (e.g. not supported)."""

    def processes(handle: int) -> list[Any]:
        found = per_device[handle]
        if found is None:
            raise _NvmlError("Not Supported")
        return found

    return SimpleNamespace(
        NVMLError=_NvmlError,
        nvmlInit=lambda: None,
        nvmlShutdown=lambda: None,
        nvmlDeviceGetCount=lambda: len(per_device),
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetComputeRunningProcesses=processes,
    )


def test_nvml_every_devices_compute_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_pynvml(
        [
            [SimpleNamespace(pid=4242, usedGpuMemory=3 * GIB)],
            None,
            [SimpleNamespace(pid=7, usedGpuMemory=None)],  # pynvml's "not available"
        ]
    )
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert query("NVIDIA") == [GpuProcess(0, 4242, 3 * GIB), GpuProcess(2, 7, None)]


def test_amdsmi_dicts_and_the_older_process_handles(monkeypatch: pytest.MonkeyPatch) -> None:
    lists = {
        "gpu0": [{"pid": 11, "mem": 5, "memory_usage": {"vram_mem": GIB}}],
        "gpu1": ["proc-handle"],  # ROCm 6.0: handles, looked up one by one
    }
    fake = SimpleNamespace(
        AmdSmiException=RuntimeError,
        AmdSmiInitFlags=SimpleNamespace(INIT_AMD_GPUS=2),
        amdsmi_init=lambda flags: None,
        amdsmi_shut_down=lambda: None,
        amdsmi_get_processor_handles=lambda: ["gpu0", "gpu1"],
        amdsmi_get_gpu_process_list=lambda handle: lists[handle],
        amdsmi_get_gpu_process_info=lambda handle, proc: {"pid": 12, "mem": 2 * GIB},
    )
    monkeypatch.setitem(sys.modules, "amdsmi", fake)
    assert query("AMD") == [GpuProcess(0, 11, GIB), GpuProcess(1, 12, 2 * GIB)]


def test_no_library_or_no_vendor_is_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` fails
    assert query("NVIDIA") == [] and query(None) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_a_run_names_its_process_still_holding_gpu_memory(tmp_path: Path) -> None:
    """The fake driver reports a process the command left behind (it was ended, but the GPU
    may still list it) and a stranger: only the first is this run's, and warned about."""
    ready = tmp_path / "pid"
    code = f"import os, time; open({str(ready)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    wait = f"while [ ! -s {ready} ]; do sleep 0.02; done"
    command = ("/bin/sh", "-c", f'"{sys.executable}" -c "$0" & {wait}', code)

    def gpus() -> list[GpuProcess]:
        return [GpuProcess(0, int(ready.read_text()), 3 * GIB), GpuProcess(1, 1, None)]

    request = RunRequest(command=command, output_dir=tmp_path / "runs")
    result = run(request, host=HostInfo(vendor=None), gpu_processes=gpus)
    assert result.exit_code == 0
    manifest = read_manifest(result.run_dir)
    ours, stranger = manifest["gpu_processes"]
    assert ours["of_this_run"] and ours["command"] == [sys.executable, "-c", code]
    assert ours["used_bytes"] == 3 * GIB and not stranger["of_this_run"]
    (held,) = [w for w in manifest["warnings"] if "still holds" in w]
    assert held.startswith(f"GPU 0: pid {ours['pid']} `{sys.executable[:20]}")
    assert held.endswith("` of this run still holds 3,072 MiB of GPU memory after the run")
    assert manifest["survivors"][0]["pid"] == ours["pid"]
