"""`Sampler`: samples GPU power or VRAM at a fixed rate into a CSV, from a background thread."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal

from gpuscope.errors import ConfigError, ToolError
from gpuscope.samplers import ticker
from gpuscope.samplers.backends import Backend, open_backend
from gpuscope.samplers.backends.base import PowerReading, VramReading
from gpuscope.samplers.clock import SYSTEM_CLOCK, Clock
from gpuscope.samplers.csvout import SamplerCsv

Kind = Literal["power", "vram"]
# The energy counter is read on marked rows and at most every 5 s: NVML's query costs ~4 ms of
# busy CPU on Hopper (benchmarks/probe_nvml_costs.py); the marks give a workload's energy exactly.
ENERGY_PERIOD_NS = 5_000_000_000


@dataclass
class SamplerStats:
    """How the schedule went: scheduled samples taken, slots skipped, lateness (ns)."""

    samples: int = 0
    marks: int = 0
    skipped_slots: int = 0
    read_errors: int = 0
    max_late_ns: int = 0
    last_late_ns: int = 0
    last_slot: int = 0


class Sampler:
    """Sample `kind` ("power" or "vram") of `devices` every `rate_s` seconds into `out_csv`.

    A context manager: `__enter__` opens the backend (ToolError saying what to install when none
    works), writes the header and starts sampling; `__exit__` stops and closes the file.
    Sample k is taken at start + k·rate_s on the monotonic clock (no drift); a slot missed while
    a slow read was in progress is skipped. Samplers with the same rate share one thread
    (ticker.py). Each row is flushed when written. `mark(label)` writes a row at once (in the
    caller's thread), stamped with the time of the call. Power rows carry the energy counter on
    marked rows and every 5 s (ENERGY_PERIOD_NS).

        >>> with Sampler("power", run_dir / "gpu_info_power_profiler_output.csv") as s:
        ...     s.mark("workload_start"); run_workload(); s.mark("workload_end")

    `devices` is "all" or a comma list ("0,2") of the backend's indices (nvidia-smi / amd-smi
    order). With "all", power devices that report no power (the secondary die of an MI250 GCD
    pair, whose primary die reports the package) are left out, as madengine does. `dual_gcd`
    (madengine's POWER_DUAL_GCD) requires exactly two devices. `backend` is auto, nvml, amdsmi,
    rocm-smi, fake, or a Backend object; `clock` is injected by tests.
    """

    def __init__(
        self,
        kind: Kind,
        out_csv: Path,
        *,
        devices: str = "all",
        rate_s: float = 0.1,
        backend: str | Backend = "auto",
        dual_gcd: bool = False,
        clock: Clock | None = None,
    ) -> None:
        if kind not in ("power", "vram"):
            raise ConfigError(f"unknown sampler kind {kind!r}: expected power or vram")
        if not rate_s > 0:
            raise ConfigError(f"sampling rate {rate_s!r} s: expected a positive number of seconds")
        self.kind: Kind = kind
        self.out_csv = Path(out_csv)
        self.device_spec = devices
        self.rate_s = rate_s
        self.dual_gcd = dual_gcd
        self.devices: list[int] = []
        self.warnings: list[str] = []
        self.stats = SamplerStats()
        self._backend_spec = backend
        self._backend: Backend | None = None
        self._clock: Clock = clock or SYSTEM_CLOCK
        self._period_ns = max(1, round(rate_s * 1e9))
        self._ticker: ticker.Ticker | None = None
        self._member = self._sample  # one bound method: the ticker knows members by identity
        self._last_slot: int | None = None
        self._start_ns = 0
        self._next_energy_ns = 0
        self._csv: SamplerCsv | None = None
        self._io = threading.Lock()  # one reader/writer at a time: the ticker thread or mark()

    def __enter__(self) -> Sampler:
        self.open()
        assert self._ticker is not None
        self._ticker.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def start_ns(self) -> int:
        """Monotonic time of slot 0 (slot k is due at start_ns + k·period_ns)."""
        return self._start_ns

    @property
    def period_ns(self) -> int:
        """The sampling period in ns."""
        return self._period_ns

    def open(self) -> None:
        """Open the backend, choose the devices, write the header, join the schedule."""
        backend = self._backend_spec
        self._backend = open_backend(backend) if isinstance(backend, str) else backend
        try:
            self.devices = self._choose_devices(self._backend)
            self._csv = SamplerCsv(self.out_csv, self.kind, self.devices)
        except BaseException:
            self._backend.close()
            raise
        self._ticker = ticker.join(self._period_ns, self._clock, self._member)
        self._start_ns = self._ticker.start_ns

    def mark(self, label: str) -> None:
        """Record an event (e.g. workload_start): a row with a fresh reading, stamped now."""
        if self._csv is None:
            raise ToolError(f"mark({label!r}): the {self.kind} sampler is not running")
        monotonic_ns, time_ns = self._clock.monotonic_ns(), self._clock.time_ns()
        self._write_row(time_ns, monotonic_ns, label)
        self.stats.marks += 1

    def run(self, until_ns: int | None = None) -> None:
        """Run the shared schedule in this thread (tests: with a fake clock, up to `until_ns`)."""
        assert self._ticker is not None, "open() first"
        self._ticker.run(until_ns)

    def close(self) -> None:
        """Leave the schedule (stopping its thread if no other sampler uses it), close the file
        and the backend."""
        if self._ticker is not None:
            ticker.leave(self._ticker, self._member)
            self._ticker = None
        with self._io:
            if self._csv is not None:
                self._csv.close()
                self._csv = None
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    def _choose_devices(self, backend: Backend) -> list[int]:
        count = backend.device_count()
        devices = parse_devices(self.device_spec, count)
        if self.kind == "power" and self.device_spec == "all":
            devices = self._drop_powerless(backend, devices)
        if self.dual_gcd and len(devices) != 2:
            raise ToolError(
                f"dual-GCD sampling needs exactly 2 GPUs, {backend.name} shows {len(devices)}: "
                "set POWER_DUAL_GCD/VRAM_DUAL_GCD to false or expose one MI250 (2 GCDs)"
            )
        return devices

    def _drop_powerless(self, backend: Backend, devices: list[int]) -> list[int]:
        readings = backend.power(devices)
        kept = [d for d, r in zip(devices, readings, strict=True) if r.watts is not None]
        if not kept:
            self.warnings.append(f"{backend.name}: no GPU reports its power")
            return devices
        for d in sorted(set(devices) - set(kept)):
            self.warnings.append(
                f"GPU{d} reports no power (secondary die: its package's power is on another GPU); "
                "left out of the power CSV"
            )
        return kept

    def _sample(self, slot: int, due_ns: int) -> None:
        """The ticker's call for a due slot: stamp, read, write."""
        now_ns = self._clock.monotonic_ns()
        late = now_ns - due_ns
        stats = self.stats
        stats.samples += 1
        stats.last_late_ns = late
        stats.max_late_ns = max(stats.max_late_ns, late)
        if self._last_slot is not None:
            stats.skipped_slots += slot - self._last_slot - 1
        self._last_slot = stats.last_slot = slot
        self._write_row(self._clock.time_ns(), now_ns, "")

    def _write_row(self, time_ns: int, monotonic_ns: int, label: str) -> None:
        with self._io:
            if self._csv is None:
                return
            energy = bool(label) or monotonic_ns >= self._next_energy_ns
            if energy:
                self._next_energy_ns = monotonic_ns + ENERGY_PERIOD_NS
            self._csv.row(time_ns, monotonic_ns, self._read(energy), label)

    def _read(self, energy: bool) -> list[PowerReading] | list[VramReading] | None:
        assert self._backend is not None
        try:
            if self.kind == "power":
                return self._backend.power(self.devices, energy=energy)
            return self._backend.vram(self.devices)
        # Any error of a vendor library (GPU lost, driver reset) must not end the sampling
        # thread: the row keeps its timestamps with empty values, and the error is reported.
        except Exception as error:
            self.stats.read_errors += 1
            note = f"{self._backend.name} {self.kind} read failed: {error}"
            if note not in self.warnings:
                self.warnings.append(note)
            return None


def parse_devices(spec: str, count: int) -> list[int]:
    """ "all" → every device; "0,2" → [0, 2]; ToolError for an index the backend does not have."""
    if spec.strip().lower() == "all":
        return list(range(count))
    try:
        devices = [int(part) for part in spec.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"device list {spec!r}: expected all, 0 or 0,1,2") from None
    missing = [d for d in devices if not 0 <= d < count]
    if missing or not devices:
        raise ToolError(f"device list {spec!r}: this machine has GPUs 0..{count - 1}")
    return list(dict.fromkeys(devices))
