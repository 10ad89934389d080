"""The replay loop: configs in order of estimated cost, each through the chosen backends, within
`--limit` and `--budget-s`; every config ends with at least one Result (a time or a status).

    >>> replayer = TorchReplay(torch)                                        # doctest: +SKIP
    >>> pairs = replay(configs, Options(budget_s=60), torch_replay=replayer)  # doctest: +SKIP
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpuscope.errors import ConfigError
from gpuscope.libperf import vendor_bench
from gpuscope.libperf.configs import Comm, Config, estimated_us
from gpuscope.libperf.result import Result, skipped
from gpuscope.libperf.torch_replay import BACKEND as TORCH
from gpuscope.libperf.torch_replay import TorchReplay

BACKENDS = ("torch", "vendor")
NOT_REPLAYED = "not replayed"

Progress = Callable[[int, int, str], None]  # (configs done, configs in all, the next label)
Clock = Callable[[], float]


@dataclass(frozen=True)
class Options:
    """What to replay and how long. `budget_s` bounds the whole replay (the configs left when
    it is spent get `not replayed: budget`); `config_budget_s` is gpuscope.bench's sampling
    budget per config and `state` its power state (burst: a short run per config, as the
    replays of many configs can afford; sustained: each config loads the GPU until a
    power-limited one settles, 0.5 to 15 s more); `timeout_s` ends a vendor binary;
    `allocations` is how many fresh operand sets a GEMM / convolution is timed on (the
    per-config budget is shared between them; the median of their medians is reported)."""

    backends: tuple[str, ...] = BACKENDS
    limit: int | None = None
    budget_s: float | None = None
    config_budget_s: float = 0.5
    timeout_s: float = 120.0
    triton: bool = False
    state: str = "burst"  # gpuscope.bench's power state per config (see docs/libperf.md)
    allocations: int = 5

    def validate(self) -> None:
        unknown = [b for b in self.backends if b not in BACKENDS]
        if unknown or not self.backends:
            raise ConfigError(
                f"--backends {','.join(self.backends) or '(none)'}: expected a comma-separated "
                f"list of {', '.join(BACKENDS)}"
            )
        if self.state not in ("burst", "sustained", "both"):
            raise ConfigError(f"--state {self.state}: expected burst, sustained or both")
        if self.allocations < 1:
            raise ConfigError(f"--allocations {self.allocations}: expected a count >= 1")
        if self.limit is not None and self.limit < 0:
            raise ConfigError(f"--limit {self.limit}: expected a count >= 0")
        for name, value in (("--budget-s", self.budget_s), ("--timeout-s", self.timeout_s),
                            ("--config-budget-s", self.config_budget_s)):  # fmt: skip
            if value is not None and value <= 0:
                raise ConfigError(f"{name} {value:g}: expected a number of seconds > 0")


def order(configs: Sequence[Config]) -> list[Config]:
    """Most estimated time (nominal device, all calls) first; ties keep the trace's order."""
    return sorted(configs, key=lambda c: -estimated_us(c))


def replay(
    configs: Sequence[Config],
    options: Options,
    *,
    torch_replay: TorchReplay | None = None,
    torch_missing: str = "no PyTorch with a usable GPU here",
    which: Callable[[str], str | None] = shutil.which,
    progress: Progress | None = None,
    clock: Clock = time.monotonic,
) -> list[tuple[Config, Result]]:
    """Replay every config (see the module doc); (config, result) pairs in replay order."""
    options.validate()
    queue = order(configs)
    out: list[tuple[Config, Result]] = []
    start = clock()
    for index, config in enumerate(queue):
        if progress is not None:
            progress(index, len(queue), label(config))
        reason = _stop_reason(index, options, clock() - start)
        if isinstance(config.problem, Comm) and torch_replay is not None:
            reason = reason if torch_replay.agree(reason is None) else reason or "budget"
        if reason is not None:
            out.append((config, Result("", f"{NOT_REPLAYED}: {reason}")))
            continue
        for result in _backends(config, options, torch_replay, torch_missing, which):
            out.append((config, result))
    if progress is not None:
        progress(len(queue), len(queue), "")
    return out


def _stop_reason(index: int, options: Options, elapsed_s: float) -> str | None:
    if options.limit is not None and index >= options.limit:
        return "limit"
    if options.budget_s is not None and elapsed_s >= options.budget_s:
        return "budget"
    return None


def _backends(
    config: Config,
    options: Options,
    torch_replay: TorchReplay | None,
    torch_missing: str,
    which: Callable[[str], str | None],
) -> list[Result]:
    results: list[Result] = []
    if "torch" in options.backends:
        if torch_replay is None:
            results.append(Result(TORCH, skipped(torch_missing)))
        else:
            results += torch_replay.run(config)
    if "vendor" in options.backends:
        commands = vendor_bench.commands_for(config)
        if isinstance(commands, str):
            results.append(Result("vendor", skipped(commands)))
        else:
            results += [vendor_bench.run(c, config, options.timeout_s, which) for c in commands]
    return results


def label(config: Config) -> str:
    """A short human name of a config: `bf16 GEMM TN 1536×2048×512 bias`, …"""
    from gpuscope.libperf.configs import Conv, Gemm, Opaque

    p = config.problem
    if isinstance(p, Gemm):
        batch = f" ×{p.batch}" if p.batch > 1 else ""
        extra = f" {p.epilogue}" if p.epilogue else ""
        return f"{p.dtype} GEMM {p.trans_a}{p.trans_b} {p.m}×{p.n}×{p.k}{batch}{extra}"
    if isinstance(p, Conv):
        space = "×".join(map(str, p.spatial))
        kernel = "×".join(map(str, p.kernel))
        return (f"{p.dtype} conv {p.direction} n{p.n} c{p.c} {space} k{p.k} {kernel}"
                f"{' s' + str(p.stride[-1]) if p.stride[-1] != 1 else ''} {p.layout}")  # fmt: skip
    if isinstance(p, Comm):
        ranks = f" ×{p.nranks} ranks" if p.nranks else ""
        return f"{p.name} {p.dtype} {_size(p.bytes)}{ranks}"
    assert isinstance(p, Opaque)
    text = p.config if len(p.config) <= 60 else p.config[:59] + "…"
    return f"{p.library}: {text}"


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
