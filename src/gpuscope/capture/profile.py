"""Profile one callable the way a performance engineer would by hand, in one call.

1. the first call, timed on its own (compilation, autotuning, lazy module loading, allocator
   growth happen here, and must not pollute the profile);
2. warm-up calls, timed one by one, until the steady state is reached;
3. a scheduled torch.profiler window (one profiler warm-up step, then `iterations` active steps)
   with CPU and device activities and input shapes (torch.profiler synchronizes the device
   as the window stops, after the last step);
4. the `key_averages` table sorted by self device time, the Chrome trace, and `analyze`'s report
   of that trace.

    >>> result = profile(model, batch, iterations=10, out_dir="prof/")    # doctest: +SKIP
    >>> result.analysis.to_dict()["verdict"]                               # doctest: +SKIP

Without a GPU the same steps run on the CPU (CPU activities only), labelled as such.
"""

from __future__ import annotations

import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from gpuscope.errors import InputError, ToolError
from gpuscope.schemas import PROFILE as SCHEMA

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

TRACE_FILE = "trace.json.gz"
TABLE_FILE = "key_averages.txt"
ANALYSIS_FILE = "analysis.json"
SUMMARY_FILE = "profile.json"
FIRST_CALL_SLOW = 2.0  # a first call this many times a warm call: compile / lazy-init time


@dataclass(frozen=True)
class ProfileResult:
    """What `profile` measured and wrote. Times in seconds (wall clock, device synchronised)."""

    name: str
    device: str  # "cuda" / "rocm" / "cpu"
    first_call_s: float
    warm_calls_s: list[float]
    iterations: int
    out_dir: Path
    trace: Path
    table: Path
    analysis: Analysis
    notes: list[str] = field(default_factory=list)

    @property
    def warm_call_s(self) -> float:
        """Median of the warm-up calls after the first (the steady per-call wall time)."""
        return statistics.median(self.warm_calls_s) if self.warm_calls_s else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "name": self.name,
            "device": self.device,
            "first_call_ms": round(self.first_call_s * 1e3, 6),
            "warm_call_ms": round(self.warm_call_s * 1e3, 6),
            "warm_calls_ms": [round(t * 1e3, 6) for t in self.warm_calls_s],
            "first_call_over_warm": round(self.first_call_s / self.warm_call_s, 3)
            if self.warm_calls_s and self.warm_call_s > 0
            else None,
            "iterations": self.iterations,
            "files": {
                "trace": self.trace.name,
                "key_averages": self.table.name,
                "analysis": ANALYSIS_FILE,
            },
            "notes": self.notes,
        }


def profile(
    fn: Callable[..., Any],
    *args: Any,
    iterations: int = 10,
    warmup: int = 3,
    out_dir: str | Path = "gpuscope-profile",
    name: str | None = None,
    with_stack: bool = False,
    device: str = "auto",
    **kwargs: Any,
) -> ProfileResult:
    """Profile `fn(*args, **kwargs)`: first call, warm-up, a scheduled profiler window, report."""
    if iterations < 1 or warmup < 0:
        raise InputError(f"iterations {iterations}, warmup {warmup}: expected ≥ 1 and ≥ 0")
    torch = _torch()
    on_gpu = device != "cpu" and bool(torch.cuda.is_available())
    if device == "gpu" and not on_gpu:
        raise ToolError("profile --device gpu: PyTorch sees no CUDA or ROCm device here")
    sync = torch.cuda.synchronize if on_gpu else _nothing
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    label = name or getattr(fn, "__qualname__", None) or type(fn).__name__

    def call() -> float:
        begin = time.perf_counter()
        fn(*args, **kwargs)
        sync()
        return time.perf_counter() - begin

    sync()
    first = call()
    warm = [call() for _ in range(warmup)]
    trace, table = _profile_window(torch, fn, args, kwargs, on_gpu, iterations, with_stack, out)
    from gpuscope.analysis.pipeline import analyze_file

    analysis = analyze_file(trace)
    result = ProfileResult(
        name=label,
        device=_device_kind(torch) if on_gpu else "cpu",
        first_call_s=first,
        warm_calls_s=warm,
        iterations=iterations,
        out_dir=out,
        trace=trace,
        table=table,
        analysis=analysis,
        notes=_notes(first, warm, on_gpu),
    )
    _write_json(out / ANALYSIS_FILE, analysis.to_dict())
    _write_json(out / SUMMARY_FILE, result.to_dict())
    return result


def _profile_window(
    torch: ModuleType,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    on_gpu: bool,
    iterations: int,
    with_stack: bool,
    out: Path,
) -> tuple[Path, Path]:
    prof = torch.profiler
    activities = [prof.ProfilerActivity.CPU]
    if on_gpu:
        activities.append(prof.ProfilerActivity.CUDA)  # also HIP on ROCm builds
    trace, table = out / TRACE_FILE, out / TABLE_FILE
    written: list[bool] = []

    def ready(p: Any) -> None:
        p.export_chrome_trace(str(trace))
        table.write_text(_table(p, on_gpu) + "\n", encoding="utf-8")
        written.append(True)

    schedule = prof.schedule(wait=0, warmup=1, active=iterations, repeat=1)
    with warnings.catch_warnings():  # torch's note that a cycle clears its events: intended
        warnings.filterwarnings("ignore", message=".*clears events at the end of each cycle")
        with prof.profile(
            activities=activities,
            schedule=schedule,
            on_trace_ready=ready,
            record_shapes=True,
            with_stack=with_stack,
        ) as p:
            for step in range(iterations + 1):  # one profiler warm-up step, then active ones
                with prof.record_function(f"gpuscope.profile#{step}"):
                    fn(*args, **kwargs)
                # no synchronize of ours before the last step(): torch.profiler synchronizes as
                # the window stops, after the last step, so that step is timed like the others
                p.step()
    if not written:
        raise ToolError(
            "profile: torch.profiler produced no trace (its schedule never became active)"
        )
    return trace, table


def _table(p: Any, on_gpu: bool) -> str:
    averages = p.key_averages()
    for key in (("self_device_time_total", "self_cuda_time_total") if on_gpu else ()) + (
        "self_cpu_time_total",
    ):
        try:
            text: str = averages.table(sort_by=key, row_limit=30)
        except (AttributeError, KeyError, ValueError):
            continue
        return text
    return str(averages.table(row_limit=30))


def _notes(first: float, warm: list[float], on_gpu: bool) -> list[str]:
    notes = []
    if not on_gpu:
        notes.append("no GPU: CPU activities only, timed on the host wall clock")
    if warm:
        steady = statistics.median(warm)
        if steady > 0 and first >= FIRST_CALL_SLOW * steady:
            notes.append(
                f"the first call took {first * 1e3:,.2f} ms, {first / steady:,.1f}× a warm call "
                f"({steady * 1e3:,.3f} ms): compilation, autotuning or lazy initialisation; it "
                "is kept out of the profile"
            )
        if len(warm) >= 2 and warm[-1] > 1.2 * min(warm):
            notes.append(
                "the warm-up calls were still slowing or varying at the end "
                f"({', '.join(f'{t * 1e3:.3f}' for t in warm)} ms): consider --warmup more"
            )
    return notes


def _device_kind(torch: ModuleType) -> str:
    return "rocm" if getattr(torch.version, "hip", None) else "cuda"


def _torch() -> ModuleType:
    import importlib

    try:
        return importlib.import_module("torch")
    except ImportError:
        raise ToolError("profile needs PyTorch (pip install torch)") from None


def _nothing() -> None:
    return None


def _write_json(path: Path, data: Any) -> None:
    import msgspec

    from gpuscope.output import write

    write(path, msgspec.json.format(msgspec.json.encode(data), indent=1))
