"""One `gpuscope libperf` run as a library call: load, dedupe, replay, rank, report.

>>> done = run(Path("gpuscope-runs/20261122-…/library_trace.csv"), Options())  # doctest: +SKIP
>>> done.rows[0].result.time_us, done.report["top"][0]["label"]               # doctest: +SKIP
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuscope.libperf import configs, output, replay, report
from gpuscope.libperf.torch_replay import TorchReplay, owns_no_group, process_group
from gpuscope.peaks import PeakTable


@dataclass
class Done:
    trace: configs.TraceFile
    rows: list[output.PerfRow]
    report: dict[str, Any]
    device: str
    peaks: PeakTable
    rank: int = 0  # this process's rank in a process group (only rank 0 writes files)
    warnings: list[str] = field(default_factory=list)


def run(
    path: Path,
    options: replay.Options,
    *,
    measure_peaks: bool = True,
    under: float = 0.5,
    progress: replay.Progress | None = None,
    torch: ModuleType | None = None,
) -> Done:
    """Replay every config of a library_trace.csv; `torch` None = find a GPU PyTorch here."""
    options.validate()
    started = time.monotonic()
    trace = configs.load(path)
    found = configs.dedupe(trace.calls)
    if torch is None and "torch" in options.backends:
        from gpuscope.timing import gpu_torch

        torch = gpu_torch()
    replayer = group = None
    owned = False
    if torch is not None and "torch" in options.backends:
        owned = owns_no_group(torch)
        group = process_group(torch)
        replayer = TorchReplay(
            torch, budget_s=options.config_budget_s, group=group, triton=options.triton,
            state=options.state, allocations=options.allocations,
        )  # fmt: skip
    device, peaks, warnings = describe_device(torch, measure_peaks)
    try:
        pairs = replay.replay(found, options, torch_replay=replayer, progress=progress)
        rank = int(group.get_rank()) if group is not None else 0
    finally:
        if group is not None and owned:
            group.destroy_process_group()
    rows = output.rank(
        output.PerfRow(c, r, output.metrics(c, r, peaks)) for c, r in pairs
    )  # fmt: skip
    built = report.build(rows, source=str(path), device=device, peaks=peaks, under=under,
                         elapsed_s=round(time.monotonic() - started, 3))  # fmt: skip
    return Done(trace, rows, built, device, peaks, rank, warnings)


def describe_device(torch: ModuleType | None, measure: bool) -> tuple[str, PeakTable, list[str]]:
    """The device's name and its ceilings: gpuscope's measured ones (cached per device) where
    asked, the datasheet's for the rest."""
    if torch is None:
        return "no GPU visible to PyTorch", PeakTable(), []
    from gpuscope.peaks import peaks_for
    from gpuscope.timing.harness import bench, environment
    from gpuscope.trace.model import Device

    index = int(torch.cuda.current_device())
    props = torch.cuda.get_device_properties(index)
    name = str(torch.cuda.get_device_name(index))
    units = int(getattr(props, "multi_processor_count", 0) or 0)
    datasheet = peaks_for(Device(id=index, name=name, compute_units=units))
    warnings: list[str] = []
    measured = None
    if measure:
        from gpuscope.timing.peaks import device_peaks

        try:
            measured = device_peaks(torch, environment(torch), bench)
        except Exception as error:  # the ceilings are context: the replay goes on without them
            warnings.append(f"could not measure the device's peaks ({error}); datasheet only")
    return name, PeakTable(measured=measured, datasheet=datasheet), warnings
