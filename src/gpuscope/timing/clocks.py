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
from gpuscope.timing.sampler import Clock

# NVML clock-event ("throttle") reasons that mean the SM clock was held below what it could run
SLOWDOWN_REASONS = {
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "power brake",
}


class Monitor(Protocol):
    source: str | None

    def poll(self, force: bool = False) -> None: ...

    def samples(self) -> tuple[ClockSample, ...]: ...


class NullMonitor:
    """Records nothing (CPU mode, or no vendor library)."""

    source: str | None = None

    def poll(self, force: bool = False) -> None:
        del force

    def samples(self) -> tuple[ClockSample, ...]:
        return ()


class PollingMonitor:
    """Calls `read` at most every `interval_s`; stops reading after the first failure."""

    def __init__(
        self, source: str, read: Callable[[], ClockSample], clock: Clock, interval_s: float = 0.02
    ) -> None:
        self.source: str | None = source
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


def _nvml_reader(torch: Any, index: int, clock: Clock) -> Callable[[], ClockSample]:
    with warnings.catch_warnings():  # some pynvml builds warn on import about packaging
        warnings.simplefilter("ignore")
        import pynvml

    from gpuscope.timing.env import visible_index

    pynvml.nvmlInit()
    try:
        uuid = str(torch.cuda.get_device_properties(index).uuid)
        handle = pynvml.nvmlDeviceGetHandleByUUID(
            uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"
        )
    except Exception:  # older torch without .uuid, or a MIG/UUID format NVML rejects
        handle = pynvml.nvmlDeviceGetHandleByIndex(visible_index(index))
    reasons = (
        getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
        or pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
    )

    def read() -> ClockSample:
        return ClockSample(
            t_s=clock(),
            sm_mhz=float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
            reasons=int(reasons(handle)),
            power_w=pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
            temp_c=float(pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)),
        )

    return read


def _amdsmi_reader(index: int, clock: Clock) -> Callable[[], ClockSample]:
    import amdsmi

    from gpuscope.timing.env import visible_index

    amdsmi.amdsmi_init()
    handle = amdsmi.amdsmi_get_processor_handles()[visible_index(index)]

    def read() -> ClockSample:
        info = amdsmi.amdsmi_get_clock_info(handle, amdsmi.AmdSmiClkType.GFX)
        return ClockSample(t_s=clock(), sm_mhz=float(info["clk"]))

    return read


def open_monitor(env: Environment, torch: Any, clock: Clock) -> Monitor:
    """The best monitor for `env`'s device; NullMonitor where none works."""
    if env.device_index is None:
        return NullMonitor()
    try:
        if env.vendor == "nvidia":
            return PollingMonitor("nvml", _nvml_reader(torch, env.device_index, clock), clock)
        if env.vendor == "amd":
            return PollingMonitor("amdsmi", _amdsmi_reader(env.device_index, clock), clock)
    except Exception:  # library missing or no permission: run without clock readings
        return NullMonitor()
    return NullMonitor()


def slowdowns(samples: tuple[ClockSample, ...]) -> list[str]:
    """Names of the slowdown reasons seen in any sample."""
    seen = 0
    for sample in samples:
        seen |= sample.reasons or 0
    return [name for bit, name in SLOWDOWN_REASONS.items() if seen & bit]
