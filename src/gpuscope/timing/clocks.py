"""Clock and throttle sampling during a run, through NVML (NVIDIA) or amdsmi (AMD).

Readings are taken between samples (never inside a timed window) and at most every
`interval_s`, so the monitor costs nothing measurable. Any failure of the vendor library makes
the monitor record nothing rather than break the benchmark; `source` says what was used.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Protocol

from gpuscope.timing.measurement import ClockSample, Environment
from gpuscope.timing.timer import Clock

# NVML clock-event ("throttle") reasons that mean the SM clock was held below what it could run
SW_POWER_CAP = 0x4
SLOWDOWN_REASONS = {
    SW_POWER_CAP: "software power cap",
    0x8: "hardware slowdown",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "power brake",
}


class Monitor(Protocol):
    source: str | None
    power_limit_w: float | None  # the enforced board power limit, where the library gives it

    def poll(self, force: bool = False) -> None: ...

    def samples(self) -> tuple[ClockSample, ...]: ...


class NullMonitor:
    """Records nothing (CPU mode, or no vendor library)."""

    source: str | None = None
    power_limit_w: float | None = None

    def poll(self, force: bool = False) -> None:
        del force

    def samples(self) -> tuple[ClockSample, ...]:
        return ()


class PollingMonitor:
    """Calls `read` at most every `interval_s`; stops reading after the first failure."""

    def __init__(
        self,
        source: str,
        read: Callable[[], ClockSample],
        clock: Clock,
        interval_s: float = 0.02,
        power_limit_w: float | None = None,
    ) -> None:
        self.source: str | None = source
        self.power_limit_w = power_limit_w
        self._read, self._clock, self._interval = read, clock, interval_s
        self._samples: list[ClockSample] = []
        self._last = float("-inf")

    def poll(self, force: bool = False) -> None:
        now = self._clock()
        if self.source is None or (not force and now - self._last < self._interval):
            return
        self._last = now
        try:
            self._samples.append(self._read())
        except Exception:  # vendor library failed mid-run: keep what we have, stop polling
            self.source = None

    def samples(self) -> tuple[ClockSample, ...]:
        return tuple(self._samples)


def _nvml_handle(pynvml: Any, torch: Any, index: int) -> Any:
    from gpuscope.timing.env import visible_index

    try:
        uuid = str(torch.cuda.get_device_properties(index).uuid)
        return pynvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else f"GPU-{uuid}")
    except Exception:  # older torch without .uuid, or a MIG/UUID format NVML rejects
        return pynvml.nvmlDeviceGetHandleByIndex(visible_index(index))


def _nvml_reader(
    torch: Any, index: int, clock: Clock
) -> tuple[Callable[[], ClockSample], float | None]:
    """NVML readings (SM clock, clock-event reasons, power, temperature, instantaneous power)
    and the enforced power limit in W."""
    with warnings.catch_warnings():  # some pynvml builds warn on import about packaging
        warnings.simplefilter("ignore")
        import pynvml

    pynvml.nvmlInit()
    handle = _nvml_handle(pynvml, torch, index)
    reasons = (
        getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
        or pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
    )
    instant = _InstantPower(pynvml, handle)

    def read() -> ClockSample:
        return ClockSample(
            t_s=clock(),
            sm_mhz=float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
            reasons=int(reasons(handle)),
            power_w=pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
            temp_c=float(pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)),
            power_now_w=instant(),
        )

    try:
        limit: float | None = pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0
    except Exception:  # not supported on this board or driver
        limit = None
    return read, limit


class _InstantPower:
    """NVML's instantaneous power field (nvmlDeviceGetPowerUsage averages over ~1 s on Hopper);
    None, and not asked again, where the driver or the bindings lack it."""

    def __init__(self, pynvml: Any, handle: Any) -> None:
        self._nv, self._handle = pynvml, handle
        self._field: int | None = getattr(pynvml, "NVML_FI_DEV_POWER_INSTANT", None)

    def __call__(self) -> float | None:
        if self._field is None:
            return None
        try:
            value = self._nv.nvmlDeviceGetFieldValues(self._handle, [self._field])[0]
            if value.nvmlReturn == 0:
                return float(value.value.uiVal) / 1000.0
        except Exception:
            pass
        self._field = None
        return None


def _amdsmi_reader(index: int, clock: Clock) -> tuple[Callable[[], ClockSample], float | None]:
    """amdsmi readings: GFX clock and socket power (current where the part reports it, MI300+;
    else the average); the power limit. amdsmi's throttle status bits differ from NVML's
    reasons, so `reasons` stays None and the sustain logic watches the clock instead.
    Not yet run on an AMD GPU by this project."""
    import amdsmi

    from gpuscope.timing.env import visible_index

    amdsmi.amdsmi_init()
    handle = amdsmi.amdsmi_get_processor_handles()[visible_index(index)]

    def power() -> dict[str, Any]:
        try:
            return dict(amdsmi.amdsmi_get_power_info(handle))
        except Exception:
            return {}

    def read() -> ClockSample:
        info = amdsmi.amdsmi_get_clock_info(handle, amdsmi.AmdSmiClkType.GFX)
        p = power()
        return ClockSample(
            t_s=clock(),
            sm_mhz=float(info["clk"]),
            power_w=amd_watts(p.get("average_socket_power")),
            power_now_w=amd_watts(p.get("current_socket_power")),
        )

    return read, amd_watts(power().get("power_limit"))


def amd_watts(value: Any) -> float | None:
    """A power field of amdsmi in W: "N/A" or UINT32_MAX (unsupported) → None; amdsmi
    versions that report µW (values above 100 kW) are scaled."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value <= 0 or value >= 0xFFFFFFFF:
        return None
    return float(value) / 1e6 if value > 100_000 else float(value)


def open_monitor(env: Environment, torch: Any, clock: Clock) -> Monitor:
    """The best monitor for `env`'s device; NullMonitor where none works."""
    if env.device_index is None:
        return NullMonitor()
    try:
        if env.vendor == "nvidia":
            read, limit = _nvml_reader(torch, env.device_index, clock)
            return PollingMonitor("nvml", read, clock, power_limit_w=limit)
        if env.vendor == "amd":
            read, limit = _amdsmi_reader(env.device_index, clock)
            return PollingMonitor("amdsmi", read, clock, power_limit_w=limit)
    except Exception:  # library missing or no permission: run without clock readings
        return NullMonitor()
    return NullMonitor()


def slowdowns(samples: tuple[ClockSample, ...], ignore: int = 0) -> list[str]:
    """Names of the slowdown reasons seen in any sample (bits in `ignore` left out)."""
    seen = 0
    for sample in samples:
        seen |= sample.reasons or 0
    return [name for bit, name in SLOWDOWN_REASONS.items() if seen & bit & ~ignore]
