"""GPU discovery from /proc and sysfs (a fake file tree stands in for the machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.tools.host import detect_host, gfx_name


@pytest.mark.parametrize(
    ("version", "name"),
    [(90402, "gfx942"), (90010, "gfx90a"), (110501, "gfx1151"), (90500, "gfx950"), (0, None)],
)
def test_gfx_name_from_kfd_target_version(version: int, name: str | None) -> None:
    assert gfx_name(version) == name


def _kfd_node(root: Path, index: int, simd: int, target: int, vram: int = 0) -> None:
    node = root / "sys/class/kfd/kfd/topology/nodes" / str(index)
    node.mkdir(parents=True)
    (node / "properties").write_text(f"cpu_cores_count 0\nsimd_count {simd}\n"
                                     f"gfx_target_version {target}\n")  # fmt: skip
    if vram:
        bank = node / "mem_banks" / "0"
        bank.mkdir(parents=True)
        (bank / "properties").write_text(f"heap_type 1\nsize_in_bytes {vram}\n")


def test_amd_gpus_from_the_kfd_topology(tmp_path: Path) -> None:
    _kfd_node(tmp_path, 0, 0, 0)  # the CPU node
    _kfd_node(tmp_path, 1, 304, 90402, vram=206_141_652_992)
    _kfd_node(tmp_path, 2, 80, 110501)
    (tmp_path / "opt/rocm/.info").mkdir(parents=True)
    (tmp_path / "opt/rocm/.info/version").write_text("6.4.1-120\n")
    host = detect_host(tmp_path, env={}, use_nvml=False)
    assert host.vendor == "AMD" and host.runtime == "ROCm 6.4.1-120"
    assert [(g.index, g.arch, g.memory_bytes) for g in host.gpus] == [
        (0, "gfx942", 206_141_652_992), (1, "gfx1151", None),
    ]  # fmt: skip


def test_nvidia_gpus_from_the_driver_proc_files(tmp_path: Path) -> None:
    proc = tmp_path / "proc/driver/nvidia"
    (proc / "gpus/0000:01:00.0").mkdir(parents=True)
    (proc / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Oct 28 2025\n"
    )
    (proc / "gpus/0000:01:00.0/information").write_text("Model: \t\t NVIDIA H100 80GB HBM3\n")
    host = detect_host(tmp_path, env={}, use_nvml=False)
    assert host.vendor == "NVIDIA" and host.driver == "580.159.04"
    assert [g.name for g in host.gpus] == ["NVIDIA H100 80GB HBM3"]


def test_no_gpu(tmp_path: Path) -> None:
    host = detect_host(tmp_path, env={}, use_nvml=False)
    assert host.vendor is None and host.gpus == ()
