"""AMD SMI through its Python bindings (`import amdsmi`, ROCm ≥ 6).

Power: `amdsmi_get_power_info` returns **watts** (the C struct documents W on Linux bare metal) in
`socket_power` (ROCm 7), `current_socket_power` (MI300 and later) or `average_socket_power` (MI200,
Navi); the others hold "N/A" or an all-ones sentinel. The first valid one is used, never divided by
1000 (madengine's bug). A secondary die of a multi-die package (MI250 GCD 1) reports no power:
its primary die reports the whole package.
Energy: `amdsmi_get_energy_count` → `energy_accumulator` (`power` before ROCm 6.4) ticks ×
`counter_resolution` µJ. VRAM: `amdsmi_get_gpu_vram_usage` → `vram_used` / `vram_total` (MiB).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from gpuscope.samplers.backends.base import BackendUnavailable, PowerReading, VramReading

_POWER_KEYS = ("socket_power", "current_socket_power", "average_socket_power")
_UNIT_SCALE = {"W": 1.0, "mW": 1e-3, "uW": 1e-6, "µW": 1e-6}
_MAX_PLAUSIBLE_W = 100_000.0  # above this a value is a "not supported" sentinel (UINT32_MAX …)


class AmdSmiBackend:
    """Readings from amdsmi for every GPU processor handle it returns."""

    name = "amdsmi"

    def __init__(self, amdsmi: Any) -> None:
        self._amdsmi = amdsmi
        self._handles = list(amdsmi.amdsmi_get_processor_handles())
        self._energy_ok = [True] * len(self._handles)

    @property
    def library(self) -> Any:
        """The initialized Python module, for queries beyond power and VRAM (gpu_processes.py)."""
        return self._amdsmi

    @property
    def handles(self) -> list[Any]:
        return list(self._handles)

    def device_count(self) -> int:
        return len(self._handles)

    def power(self, devices: Sequence[int], energy: bool = True) -> list[PowerReading]:
        return [self._power(d, energy) for d in devices]

    def vram(self, devices: Sequence[int]) -> list[VramReading]:
        readings = []
        for d in devices:
            usage = self._amdsmi.amdsmi_get_gpu_vram_usage(self._handles[d])
            readings.append(
                VramReading(_mib(usage.get("vram_used")), _mib(usage.get("vram_total")))
            )
        return readings

    def close(self) -> None:
        _release(self._amdsmi)

    def _power(self, device: int, energy: bool) -> PowerReading:
        info = self._amdsmi.amdsmi_get_power_info(self._handles[device])
        return PowerReading(watts_from_power_info(info), self._energy(device) if energy else None)

    def _energy(self, device: int) -> float | None:
        if not self._energy_ok[device]:
            return None
        try:
            return joules_from_energy_count(
                self._amdsmi.amdsmi_get_energy_count(self._handles[device])
            )
        except errors_of(self._amdsmi):  # not supported on this device: stop asking
            self._energy_ok[device] = False
            return None


def watts_from_power_info(info: Mapping[str, object]) -> float | None:
    """The first valid power field of `amdsmi_get_power_info`, in W."""
    for key in _POWER_KEYS:
        watts = _watts(info.get(key))
        if watts is not None:
            return watts
    return None


def joules_from_energy_count(count: Mapping[str, object]) -> float | None:
    """`energy_accumulator` (or `power`) ticks × `counter_resolution` µJ, in J."""
    ticks = count.get("energy_accumulator", count.get("power"))
    resolution = count.get("counter_resolution")
    if not isinstance(ticks, int | float) or not isinstance(resolution, int | float):
        return None
    return float(ticks) * float(resolution) / 1e6


def _watts(value: object) -> float | None:
    scale = 1.0
    if isinstance(value, Mapping):  # {"value": 250, "unit": "W"} in some releases
        scale = _UNIT_SCALE.get(str(value.get("unit", "W")), 1.0)
        value = value.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None  # "N/A"
    watts = float(value) * scale
    return watts if 0 <= watts < _MAX_PLAUSIBLE_W else None


# amdsmi's init/shut-down are process-wide: the power and VRAM samplers of one run each open a
# backend, so the library is initialized by the first and shut down by the last (NVML counts its
# own nvmlInit/nvmlShutdown calls).
_USERS_LOCK = threading.Lock()
_users = 0


def _acquire(amdsmi: Any) -> None:
    global _users
    with _USERS_LOCK:
        if _users == 0:
            amdsmi.amdsmi_init(amdsmi.AmdSmiInitFlags.INIT_AMD_GPUS)
        _users += 1


def _release(amdsmi: Any) -> None:
    global _users
    with _USERS_LOCK:
        _users = max(0, _users - 1)
        if _users == 0:
            amdsmi.amdsmi_shut_down()


def errors_of(amdsmi: Any) -> type[Exception]:
    """amdsmi's exception base class (every amdsmi error derives from it)."""
    base = getattr(amdsmi, "AmdSmiException", Exception)
    return base if isinstance(base, type) and issubclass(base, Exception) else Exception


def _mib(value: object) -> int | None:
    return int(value) * 2**20 if isinstance(value, int | float) else None


def open_amdsmi() -> AmdSmiBackend:
    """Initialize amdsmi; BackendUnavailable when the package, the driver or a GPU is missing."""
    try:
        import amdsmi
    except ImportError as missing:
        raise BackendUnavailable(
            "amdsmi not importable (install ROCm's amdsmi package)"
        ) from missing
    try:
        _acquire(amdsmi)
    except errors_of(amdsmi) as error:
        raise BackendUnavailable(f"amdsmi did not initialize ({error})") from error
    backend = AmdSmiBackend(amdsmi)
    if backend.device_count() == 0:
        backend.close()
        raise BackendUnavailable("amdsmi sees no GPU")
    return backend
