"""Options of `gpuscope.bench`, validated once; unknown names are refused with the valid list."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from gpuscope.errors import ConfigError, OptionError
from gpuscope.timing.clocks import Monitor
from gpuscope.timing.loop import StopRule
from gpuscope.timing.measurement import Environment, OptionValue
from gpuscope.timing.sustain import DEFAULT_STATE, STATES, SustainRule
from gpuscope.timing.timer import Clock, Timer

MODES = ("auto", "hot", "cold", "graph", "kernel", "cpu")
GPU_MODES = ("hot", "cold", "graph", "kernel")
DEFAULT_GPU_MODE = "hot"
# In "auto" mode, a callable whose hot time per call is under this is re-timed by the profiler:
# back-to-back kernels on one stream start ~1 µs apart, so no event timing resolves µs kernels.
AUTO_KERNEL_BELOW_US = 20.0


def refuse_unknown(options_class: type, options: dict[str, Any], what: str) -> None:
    """OptionError (a TypeError and a ConfigError) naming every unknown option and the valid
    ones (no silent typos)."""
    known = {f.name for f in dataclasses.fields(options_class)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise OptionError(
            f"unknown {what} option(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}"
        )


@dataclass(frozen=True)
class BenchOptions:
    """Keyword options of `bench()`. Times in seconds, `target_ci` as a fraction.

    mode: "auto" (GPU → hot, then kernel if hot < 20 µs per call; else cpu), "hot", "cold",
    "graph", "kernel" or "cpu".
    kwargs: keyword arguments for the callable. name: label in reports.
    target_ci: stop once the median's 95 % CI half-width is below this (0.01 = ±1 %).
    budget_s: stop sampling after this long even if the target is not reached.
    flush: kernel mode only — flush the cache before each call (cold kernel time).
    flops / bytes: work per call, for TFLOP/s and GB/s. peaks: measure the device's peaks
    (once per device, cached) to report fractions of them.
    state: "sustained" (default on a GPU: load the device until a power-limited callable runs
    at its sustained, power-capped speed, then sample — what a real loop gets), "burst" (a short
    run only: boost clocks for heavy kernels) or "both" (burst samples, then the sustained ones
    reported, the burst kept beside them). sustain_budget_s: the longest load phase.
    timer, clock, env, monitor: injection points for tests and custom timers.
    """

    mode: str = "auto"
    kwargs: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    target_ci: float = 0.01
    level: float = 0.95
    budget_s: float = 1.0
    min_samples: int = 10
    max_samples: int = 10_000
    warmup_budget_s: float = 0.5
    kernel_calls: int | None = None
    flush: bool = False
    flush_bytes: int | None = None
    flops: float | None = None
    bytes: float | None = None
    peaks: bool = True
    state: str = DEFAULT_STATE
    sustain_budget_s: float = SustainRule.budget_s
    device: int | None = None
    timer: Timer | None = None
    clock: Clock | None = None
    env: Environment | None = None
    monitor: Monitor | None = None

    @classmethod
    def from_kwargs(cls, options: dict[str, Any]) -> BenchOptions:
        refuse_unknown(cls, options, "bench")
        opts = cls(**options)
        opts.validate()
        return opts

    def validate(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"mode {self.mode!r} is not one of {', '.join(MODES)}")
        if not 0 < self.target_ci < 1:
            raise ConfigError(f"target_ci {self.target_ci} must be a fraction in (0, 1), e.g. 0.01")
        if self.budget_s <= 0 or self.min_samples < 1 or self.max_samples < self.min_samples:
            raise ConfigError(
                "budget_s must be > 0 and 1 <= min_samples <= max_samples "
                f"(got {self.budget_s}, {self.min_samples}, {self.max_samples})"
            )
        if self.state not in STATES:
            raise ConfigError(f"state {self.state!r} is not one of {', '.join(STATES)}")
        if self.sustain_budget_s <= 0:
            raise ConfigError(f"sustain_budget_s {self.sustain_budget_s} must be > 0 seconds")
        if self.flush and self.mode != "kernel":
            raise ConfigError("flush=True applies to mode 'kernel'; use mode 'cold' to time cold")

    def stop_rule(self) -> StopRule:
        return StopRule(
            target_ci=self.target_ci,
            level=self.level,
            min_samples=self.min_samples,
            max_samples=self.max_samples,
            budget_s=self.budget_s,
            warmup_budget_s=self.warmup_budget_s,
        )

    def sustain_rule(self) -> SustainRule:
        return SustainRule(budget_s=self.sustain_budget_s)

    def recorded(self) -> dict[str, OptionValue]:
        """The options worth keeping in the Measurement (plain values only)."""
        keep = ("target_ci", "level", "budget_s", "min_samples", "max_samples")
        out: dict[str, OptionValue] = {k: getattr(self, k) for k in keep}
        out["requested_mode"] = self.mode
        out["state"] = self.state
        if self.mode == "kernel":
            out["flush"] = self.flush
        if self.flush_bytes is not None:
            out["flush_bytes"] = self.flush_bytes
        return out
