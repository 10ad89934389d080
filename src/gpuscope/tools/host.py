"""What GPUs this machine has, found cheaply (no subprocess): NVML if installed, else the
NVIDIA driver's /proc files; AMD from the KFD topology in sysfs.

`root` lets tests point at a fake file tree.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

KFD_NODES = "sys/class/kfd/kfd/topology/nodes"


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    vendor: str
    arch: str | None = None
    memory_bytes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class HostInfo:
    vendor: str | None  # the vendor of the GPUs found first ("NVIDIA" or "AMD"), None if none
    gpus: tuple[Gpu, ...] = ()
    driver: str | None = None
    runtime: str | None = None  # CUDA driver API version or ROCm version


def detect_host(
    root: Path = Path("/"), env: Mapping[str, str] | None = None, use_nvml: bool = True
) -> HostInfo:
    env = os.environ if env is None else env
    nvidia = (_nvml() if use_nvml else None) or _nvidia_proc(root)
    if nvidia is not None:
        return nvidia
    amd = _amd_kfd(root, env)
    return amd if amd is not None else HostInfo(vendor=None)


def _nvml() -> HostInfo | None:
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # not installed, no driver, no GPU: all mean "not via NVML"
        return None
    try:
        return _nvml_info(pynvml)
    finally:
        pynvml.nvmlShutdown()


def _nvml_info(pynvml: Any) -> HostInfo:
    gpus = []
    for index in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        name = pynvml.nvmlDeviceGetName(handle)
        memory = pynvml.nvmlDeviceGetMemoryInfo(handle).total
        name = name.decode() if isinstance(name, bytes) else str(name)
        gpus.append(Gpu(index, name, "NVIDIA", memory_bytes=int(memory)))
    cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()
    driver = pynvml.nvmlSystemGetDriverVersion()
    return HostInfo(
        vendor="NVIDIA",
        gpus=tuple(gpus),
        driver=driver.decode() if isinstance(driver, bytes) else str(driver),
        runtime=f"CUDA {cuda // 1000}.{cuda % 1000 // 10}",
    )


def _nvidia_proc(root: Path) -> HostInfo | None:
    version = root / "proc/driver/nvidia/version"
    if not version.is_file():
        return None
    driver = next((w for w in _read(version).split() if w[:1].isdigit() and "." in w), None)
    gpus: list[Gpu] = []
    for index, info in enumerate(sorted((root / "proc/driver/nvidia/gpus").glob("*/information"))):
        model = _field(_read(info), "Model")
        gpus.append(Gpu(index, model or "NVIDIA GPU", "NVIDIA"))
    return HostInfo(vendor="NVIDIA", gpus=tuple(gpus), driver=driver)


def _amd_kfd(root: Path, env: Mapping[str, str]) -> HostInfo | None:
    gpus: list[Gpu] = []
    for node in sorted((root / KFD_NODES).glob("*"), key=lambda p: _int(p.name)):
        props = _properties(node / "properties")
        if props.get("simd_count", 0) <= 0:
            continue  # a CPU node
        arch = gfx_name(props.get("gfx_target_version", 0))
        gpus.append(Gpu(len(gpus), f"AMD {arch or 'GPU'}", "AMD", arch, _vram(node)))
    if not gpus:
        return None
    return HostInfo(vendor="AMD", gpus=tuple(gpus), driver=_amdgpu(root), runtime=_rocm(root, env))


def gfx_name(target_version: int) -> str | None:
    """KFD's gfx_target_version (90402) as the arch name (gfx942); 90010 -> gfx90a."""
    if target_version <= 0:
        return None
    major, minor, step = target_version // 10000, target_version // 100 % 100, target_version % 100
    return f"gfx{major}{minor:x}{step:x}"


def _vram(node: Path) -> int | None:
    banks = node.glob("mem_banks/*/properties")
    sizes = [_properties(bank).get("size_in_bytes", 0) for bank in banks]
    return sum(sizes) or None


def _amdgpu(root: Path) -> str | None:
    text = _read(root / "sys/module/amdgpu/version").strip()
    return text or None


def _rocm(root: Path, env: Mapping[str, str]) -> str | None:
    base = env.get("ROCM_PATH", "/opt/rocm").lstrip("/")
    info = root / base / ".info/version"
    return f"ROCm {_read(info).strip()}" if info.is_file() else None


def _properties(path: Path) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in _read(path).splitlines() if path.is_file() else []:
        key, _, value = line.partition(" ")
        if value.strip().lstrip("-").isdigit():
            values[key] = int(value)
    return values


def _field(text: str, key: str) -> str | None:
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == key:
            return value.strip()
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _int(text: str) -> int:
    return int(text) if text.isdigit() else 1 << 30
