"""Plot a run's power and VRAM samples over time, the workload window shaded.

The sampler CSVs are found by their header (`time,Power(Watt) GPU…` / `time,vram(%) GPU…`), so
renamed outputs (POWER_OUTPUT_FILE) are plotted too. The x axis is seconds on the monotonic clock
shared by both CSVs; the window runs from the first `workload_start` mark to the last
`workload_end` (or the last sample, when the run was cut short). matplotlib is imported here only.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuscope.errors import ToolError

PNG_NAME = "gpu_info_profiler.png"
_PANELS = (("Power(Watt) GPU", "power (W)"), ("vram(%) GPU", "VRAM used (%)"))


@dataclass
class _Series:
    """One CSV's samples: monotonic ns, value columns, and mark times."""

    prefix: str
    times_ns: list[int] = field(default_factory=list)
    columns: dict[str, list[float]] = field(default_factory=dict)
    marks: list[tuple[int, str]] = field(default_factory=list)


def plot_run(run_dir: Path) -> Path | None:
    """Write `run_dir/gpu_info_profiler.png`; None when the run has no sampler rows."""
    figure = _figure(Path(run_dir))
    if figure is None:
        return None
    path = Path(run_dir) / PNG_NAME
    figure.savefig(path, dpi=110)
    return path


def plot_run_svg(run_dir: Path) -> str | None:
    """The same plot as an SVG document (to embed in an HTML report); None without samples."""
    figure = _figure(Path(run_dir))
    if figure is None:
        return None
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg")
    return buffer.getvalue()


def read_series(run_dir: Path) -> list[_Series]:
    """Every sampler CSV in run_dir with at least one row, power first."""
    found: list[_Series] = []
    for prefix, _ in _PANELS:
        for path in sorted(run_dir.glob("*.csv")):
            series = _read(path, prefix)
            if series is not None and series.times_ns:
                found.append(series)
    return found


def _read(path: Path, prefix: str) -> _Series | None:
    with path.open(newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv.DictReader(handle)
        names = reader.fieldnames or []
        if not names or names[0] != "time" or "monotonic_ns" not in names:
            return None
        columns = [n for n in names if n.startswith(prefix)]
        if not columns:
            return None
        series = _Series(prefix, columns={c: [] for c in columns})
        for row in reader:
            _add_row(series, row)
    return series


def _add_row(series: _Series, row: dict[str, str]) -> None:
    try:
        when = int(row["monotonic_ns"])
    except (KeyError, TypeError, ValueError):  # a row cut off by a kill
        return
    series.times_ns.append(when)
    for column, values in series.columns.items():
        values.append(_float(row.get(column)))
    if row.get("mark"):
        series.marks.append((when, row["mark"]))


def _float(text: str | None) -> float:
    try:
        return float(text) if text else math.nan
    except ValueError:
        return math.nan


def _figure(run_dir: Path) -> Any:
    series = read_series(run_dir)
    if not series:
        return None
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as missing:
        raise ToolError("plotting needs matplotlib: pip install matplotlib") from missing
    origin = min(s.times_ns[0] for s in series)
    window = _window(series, origin)
    figure = Figure(figsize=(10, 2.8 * len(series)), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(series), 1, sharex=True, squeeze=False)[:, 0]
    for ax, s in zip(axes, series, strict=True):
        _panel(ax, s, origin, window)
    axes[-1].set_xlabel("time since first sample (s)")
    figure.suptitle(f"GPU power and memory — {run_dir.name}")
    return figure


def _window(series: list[_Series], origin: int) -> tuple[float, float] | None:
    marks = sorted(m for s in series for m in s.marks)
    starts = [t for t, label in marks if label == "workload_start"]
    if not starts:
        return None
    ends = [t for t, label in marks if label == "workload_end"]
    end = max(ends) if ends else max(s.times_ns[-1] for s in series)
    return (starts[0] - origin) / 1e9, (end - origin) / 1e9


def _panel(ax: Any, s: _Series, origin: int, window: tuple[float, float] | None) -> None:
    seconds = [(t - origin) / 1e9 for t in s.times_ns]
    for column, values in s.columns.items():
        ax.plot(seconds, values, linewidth=1.2, label=f"GPU{column.removeprefix(s.prefix)}")
    if window is not None:
        ax.axvspan(*window, color="tab:orange", alpha=0.15, label="workload")
    ax.set_ylabel(dict(_PANELS)[s.prefix])
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", fontsize="small")
