"""What every power/VRAM backend provides, in SI units (W, J, bytes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class BackendUnavailable(Exception):
    """This backend cannot work here; the message says why (missing package, no driver, no GPU)."""


@dataclass(frozen=True, slots=True)
class PowerReading:
    """Board/socket power in W; the device's cumulative energy counter in J (None: not reported)."""

    watts: float | None
    energy_j: float | None = None


@dataclass(frozen=True, slots=True)
class VramReading:
    """Device memory used and total, in bytes."""

    used_bytes: int | None
    total_bytes: int | None

    @property
    def percent(self) -> float | None:
        """used / total × 100 — the same definition on every backend."""
        if self.used_bytes is None or not self.total_bytes:
            return None
        return 100.0 * self.used_bytes / self.total_bytes


class Backend(Protocol):
    """One source of readings for the devices it enumerates (indices 0 … device_count()-1)."""

    name: str

    def device_count(self) -> int: ...

    def power(self, devices: Sequence[int], energy: bool = True) -> list[PowerReading]:
        """Power of each device; its energy counter too when `energy` (it may be costly)."""
        ...

    def vram(self, devices: Sequence[int]) -> list[VramReading]: ...

    def close(self) -> None: ...
