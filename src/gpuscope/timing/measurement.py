"""`Measurement`: the raw samples of one benchmark with everything that produced them.

Statistics, rates and warnings are derived from it on demand; `record.to_json` writes them next
to the raw samples for readers of the file, and `from_json` reads only the raw record back.

    >>> m = gpuscope.bench(torch.matmul, a, b)                  # doctest: +SKIP
    >>> m.stats.median, m.stats.ci_halfwidth, m.mode             # doctest: +SKIP
    (171.9, 0.004, 'hot')
"""

from __future__ import annotations

from typing import Any

import msgspec

from gpuscope.errors import InputError
from gpuscope.peaks import Measured
from gpuscope.schemas import BENCH as SCHEMA
from gpuscope.timing.stats import Stats, summarize

OptionValue = str | float | int | bool | None


class Environment(msgspec.Struct, frozen=True, kw_only=True):
    """Where a measurement was taken. `vendor` is "nvidia", "amd" or "cpu"."""

    vendor: str
    device: str
    python: str
    platform: str
    gpuscope: str
    device_index: int | None = None
    driver: str | None = None
    runtime: str | None = None
    torch: str | None = None
    git_sha: str | None = None
    l2_bytes: int | None = None
    multiprocessors: int | None = None

    def same_hardware(self, other: Environment) -> bool:
        """True when both ran on the same kind of device, driver and runtime."""
        return (self.vendor, self.device, self.driver, self.runtime) == (
            other.vendor,
            other.device,
            other.driver,
            other.runtime,
        )


class ClockSample(msgspec.Struct, frozen=True, kw_only=True):
    """One reading of the device's state during the run (NVML / amdsmi)."""

    t_s: float
    sm_mhz: float | None = None
    reasons: int | None = None
    power_w: float | None = None  # as the vendor library averages it (NVML: over ~1 s)
    temp_c: float | None = None
    power_now_w: float | None = None  # instantaneous power, where the library reports it


class PowerState(msgspec.Struct, frozen=True, kw_only=True):
    """Burst or sustained: which power state `Measurement.samples_us` were taken in.

    Heavy kernels (large GEMMs) draw more than the board's power limit at boost clocks: the first
    ~0.1 s of a loop runs at boost, then the power cap lowers the SM clock, and the loop settles
    seconds later (H100: 8192³ bf16 1376 µs per call in a short run, 1613 µs sustained).
    `requested` is the `state` option (sustained, burst, both); `reported` is the state of the
    reported samples: "sustained" (taken after the load phase found a power limit and stable
    windows), "unlimited" (the load phase found no limit: burst and sustained are the same),
    "unsettled" (a limit, but the windows still moved when the sustain budget ran out) or
    "burst" (a short run, no load phase). `stop` says why the load phase ended: "stable",
    "no-limit", "budget" or "not-run". Times are seconds on the harness clock; µs per call.
    """

    requested: str
    reported: str
    stop: str
    signals: tuple[str, ...] = ()
    load_s: float = 0.0
    load_calls: int = 0
    load_us: tuple[float, ...] = ()
    window_s: float = 0.0
    windows_us: tuple[float, ...] = ()  # per-call mean of each load window
    window_medians_us: tuple[float, ...] = ()
    sampled_from_s: float | None = None
    burst_us: tuple[float, ...] = ()
    burst_mhz: float | None = None
    sampled_mhz: float | None = None
    power_limit_w: float | None = None

    @property
    def burst_median_us(self) -> float | None:
        return summarize(self.burst_us).p50 if self.burst_us else None


class Work(msgspec.Struct, frozen=True, kw_only=True):
    """Work done by one call, to turn time into TFLOP/s and GB/s."""

    flops: float | None = None
    bytes: float | None = None


class Rates(msgspec.Struct, frozen=True, kw_only=True):
    """Throughput at the median time, with the fraction of the measured peak where known."""

    tflops: float | None
    gbps: float | None
    tflops_fraction: float | None
    gbps_fraction: float | None


class Measurement(msgspec.Struct, frozen=True, kw_only=True):
    """Raw per-call times (µs) of one benchmark, its spec and its environment.

    `samples_us[i]` is the time per call of sample i (a sample times `calls_per_sample`
    back-to-back calls). `mode` says what was timed (hot, cold, graph, kernel, cpu) and `timer`
    how (device events with a guard kernel, graph replay, the profiler, the host wall clock).
    """

    schema: str = SCHEMA
    kind: str = "measurement"
    name: str
    mode: str
    timer: str
    samples_us: tuple[float, ...]
    calls_per_sample: int
    stop_reason: str
    target_ci: float
    elapsed_s: float
    env: Environment
    first_call_us: float | None = None
    warmup_us: tuple[float, ...] = ()
    warmup_converged: bool = True
    options: dict[str, OptionValue] = {}
    host_us_per_call: float | None = None
    guard_underruns: int = 0
    kernels_per_call: float | None = None
    kernel_names: tuple[str, ...] = ()
    clock_source: str | None = None
    clocks: tuple[ClockSample, ...] = ()
    power: PowerState | None = None
    work: Work | None = None
    peaks: Measured | None = None

    @property
    def stats(self) -> Stats:
        """n, min, p10, p50, p90, p99, max, mean, std, CV, IQR and the median's 95 % CI."""
        return summarize(self.samples_us)

    @property
    def median_us(self) -> float:
        return self.stats.p50

    @property
    def rates(self) -> Rates | None:
        """TFLOP/s and GB/s at the median time, or None when no work per call was given."""
        if self.work is None:
            return None
        return rates(self.work, self.median_us, self.peaks)


def rates(work: Work, median_us: float, peaks: Measured | None) -> Rates:
    """Rates of `work` done in `median_us`; fractions of `peaks` when measured."""
    seconds = median_us * 1e-6
    tflops = work.flops / seconds / 1e12 if work.flops and seconds > 0 else None
    gbps = work.bytes / seconds / 1e9 if work.bytes and seconds > 0 else None
    return Rates(
        tflops=tflops,
        gbps=gbps,
        tflops_fraction=tflops / peaks.tflops if tflops and peaks else None,
        gbps_fraction=gbps / peaks.gbps if gbps and peaks else None,
    )


def encode_json(data: Any) -> bytes:
    """Indented JSON; a name holding the undecodable bytes of a file name (lone surrogates, as
    os.fsdecode keeps them: `bench 'in\\xff/k.py:f'`) as JSON escapes that read back the same."""
    try:
        return msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n"
    except UnicodeEncodeError:  # msgspec refuses lone surrogates; the standard library does not
        import json

        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode(
            "utf-8", "backslashreplace"
        )


def from_builtins(obj: Any, where: str = "measurement") -> Measurement:
    """Read a measurement object back; raises InputError naming `where` on a wrong schema."""
    if not isinstance(obj, dict) or obj.get("schema") != SCHEMA:
        found = obj.get("schema") if isinstance(obj, dict) else type(obj).__name__
        raise InputError(f"{where}: expected schema {SCHEMA!r}, found {found!r}")
    try:
        return msgspec.convert(obj, Measurement)
    except msgspec.ValidationError as error:
        raise InputError(f"{where}: not a valid {SCHEMA} measurement ({error})") from error


def from_json(data: bytes | str, where: str = "measurement") -> Measurement:
    """Parse JSON written by `to_json` (derived fields are ignored and recomputed)."""
    try:
        obj = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as error:  # msgspec < 0.23 raises the second
        # for invalid UTF-8, later releases a DecodeError
        raise InputError(f"{where}: not JSON ({error})") from error
    return from_builtins(obj, where)
