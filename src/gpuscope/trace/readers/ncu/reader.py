"""Reader for Nsight Compute `ncu --csv` output: the raw page and the details page.

ncu serializes and replays every profiled kernel, so there is no timeline: each kernel becomes
a KERNEL row with its `gpu__time_duration.sum` (raw page) or `Duration` (details page) in ns and
start -1, its launch configuration, and every numeric metric as a counter in base units. The
device attributes (`device__attribute_*`, constant per GPU) describe the devices instead.

    >>> from gpuscope.trace.registry import read_trace
    >>> trace = read_trace("ncu_raw.csv")                      # doctest: +SKIP
    >>> trace.meta.counter_units["dram__bytes.sum"]            # doctest: +SKIP
    'byte'

`gpuscope run --tools ncu` exports a report as both pages (`ncu_raw.csv`, `ncu_details.csv`):
they are one source (group key `ncu`) — kernels and metrics from the raw page, the rules of the
details page (`meta.extra["ncu_rules"]`, by ncu's kernel ID; `meta.extra["ncu_ids"]` the ID of
each row of `trace.gpu`) added. Each profiled launch is its own row with its own grid and block:
two launches of one kernel on different grids are never merged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.trace import _sniff
from gpuscope.trace._builder import TraceParts, trace_meta
from gpuscope.trace._csv import parse_int
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace.model import KERNEL, Device, Trace

# every input is sniffed with this module (a Kineto JSON too): the read path is imported on read
if TYPE_CHECKING:
    from gpuscope.trace.readers.ncu._page import Kernel, Page

_HEADER = re.compile(rb'^\s*"?ID"?,"?Process ID"?,', re.MULTILINE)
_NCU_LINE = re.compile(rb"^==(PROF|WARNING|ERROR)== ", re.MULTILINE)
_PAGE_SUFFIX = re.compile(r"^(?P<stem>.+?)[_-](raw|details)$")
_DIMS = re.compile(r"^\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)$")
DEVICE_ATTRIBUTE = "device__attribute_"
# metric names on the raw page, then on the details page
DURATION = ("gpu__time_duration.sum", "Duration")
REGISTERS = ("launch__registers_per_thread", "Registers Per Thread")
SHARED_STATIC = ("launch__shared_mem_per_block_static", "Static Shared Memory Per Block")
SHARED_DYNAMIC = ("launch__shared_mem_per_block_dynamic", "Dynamic Shared Memory Per Block")
SMS = ("device__attribute_multiprocessor_count", "# SMs")


class NcuReader:
    """`Reader` for `ncu --csv` output (raw and details pages)."""

    name = "ncu"
    priority = 20

    def sniff(self, path: str) -> bool:
        head = _sniff.head(path)
        if _HEADER.search(head):
            return True
        if b"\x00" in head:
            return False
        # ncu ran but its CSV went elsewhere (--log-file): say so rather than "unknown format"
        named = "ncu" in Path(path).name.lower() and path.endswith(".csv")
        return named or _NCU_LINE.search(head) is not None

    def read(self, path: str, progress: Progress | None = None) -> Trace:
        return self.read_group([path], progress)

    def group_key(self, path: str) -> str:
        """`out/ncu` for `out/ncu_raw.csv` and `out/ncu_details.csv` (one report's pages)."""
        where = Path(path)
        stem = where.name.rsplit(".", 1)[0]
        found = _PAGE_SUFFIX.match(stem)
        return str(where.parent / (found.group("stem") if found else stem))

    def read_group(self, paths: Sequence[str], progress: Progress | None = None) -> Trace:
        from gpuscope.trace.readers.ncu._page import read_page

        pages = [read_page(path) for path in paths]
        raw = next((p for p in pages if p.layout == "raw"), None)
        details = next((p for p in pages if p.layout == "details"), None)
        main = raw or details
        assert main is not None  # read_page returns one of the two layouts
        builder = _Builder(main)
        if raw is not None and details is not None:
            builder.add_rules(details)
        for page in pages:
            if page is not raw and page is not details:
                builder.warnings.append(
                    f"{Path(page.path).name}: another {page.layout} page of "
                    "the same report name; not read"
                )
        return builder.build(list(paths))


class _Builder:
    def __init__(self, page: Page) -> None:
        self.page = page
        self.parts = TraceParts()
        self.warnings = list(page.warnings)
        self.rules: dict[str, list[dict[str, Any]]] = {}
        self.layout = page.layout
        for kernel in page.kernels:
            if kernel.rules:
                self.rules[kernel.id] = kernel.rules

    def add_rules(self, details: Page) -> None:
        """The details page's rules, for the launches it shares with this page.

        A launch is matched by ID, grid and block, not by name: ncu prints one kernel's name
        differently with different options (`(T1::Params)` / `(Params)`, `at::<unnamed>` /
        `unnamed>`), so names only decide nothing."""
        launches = {_launch(k) for k in self.page.kernels}
        others = [k for k in details.kernels if _launch(k) not in launches]
        if others:
            self.warnings.append(
                f"{Path(details.path).name} describes {len(others)} kernel launch(es) "
                f"that {Path(self.page.path).name} does not (by ID, grid and block): another "
                "run? Their rules are left out"
            )
        for kernel in details.kernels:
            if kernel.rules and _launch(kernel) in launches:
                self.rules[kernel.id] = kernel.rules
        self.warnings.extend(details.warnings)
        self.layout = "raw+details"

    def build(self, paths: list[str]) -> Trace:
        kernels = self.page.kernels
        size = len(kernels)
        durations = np.array([_ns(_first(k.values, DURATION)) for k in kernels], np.int64)
        self.parts.add(
            "gpu",
            size,
            kind=np.full(size, KERNEL, np.int8),
            name=self.parts.intern(k.name for k in kernels),
            start=np.full(size, -1, np.int64),
            dur=durations,
            device=[_int32(parse_int(k.ident.get("Device", ""))) for k in kernels],
            stream=[parse_int(k.ident.get("Stream", "")) for k in kernels],
        )
        self._launch_params(kernels)
        counters = self._counters(kernels)
        devices = _devices(kernels)
        return self.parts.build(self._meta(paths, durations, counters, devices))

    def _launch_params(self, kernels: list[Kernel]) -> None:
        grids = [_dims(k.ident.get("Grid Size", "")) for k in kernels]
        blocks = [_dims(k.ident.get("Block Size", "")) for k in kernels]
        static = [_first(k.values, SHARED_STATIC) for k in kernels]
        dynamic = [_first(k.values, SHARED_DYNAMIC) for k in kernels]
        self.parts.add(
            "launch_params",
            len(kernels),
            row=np.arange(len(kernels), dtype=np.int64),
            **{f"grid_{a}": [g[i] for g in grids] for i, a in enumerate("xyz")},
            **{f"block_{a}": [_int32(b[i]) for b in blocks] for i, a in enumerate("xyz")},
            registers=[_int32(_ns(_first(k.values, REGISTERS))) for k in kernels],
            shared_mem=[_ns(_add_known(s, d)) for s, d in zip(static, dynamic, strict=True)],
        )

    def _counters(self, kernels: list[Kernel]) -> int:
        rows: list[int] = []
        names: list[str] = []
        values: list[float] = []
        for row, kernel in enumerate(kernels):
            for name, value in kernel.values.items():
                if not name.startswith(DEVICE_ATTRIBUTE):
                    rows.append(row)
                    names.append(name)
                    values.append(value)
        self.parts.add("counters", len(rows), row=rows, name=self.parts.intern(names), value=values)
        return len(rows)

    def _meta(self, paths: list[str], durations: Any, counters: int, devices: Any) -> Any:
        provides = {"launch_params", "devices"}
        if len(durations) and (durations >= 0).all():
            provides.add("kernels")
        if counters:
            provides.add("counters")
        extra: dict[str, Any] = {}
        if self.rules:
            extra["ncu_rules"] = self.rules
            extra["ncu_ids"] = [k.id for k in self.page.kernels]  # per row of trace.gpu
        self._process_warning()
        return trace_meta(
            paths[0] if len(paths) == 1 else self.page.path,
            "ncu",
            schema=self.layout,
            vendor="nvidia",
            devices=devices,
            event_counts={
                "kernel": len(durations),
                "counter": counters,
                "rule": sum(len(r) for r in self.rules.values()),
            },
            truncated=self.page.truncated,
            warnings=tuple(self.warnings),
            extra=extra,
            provides=frozenset(provides),
            files=tuple(paths),
            counter_units={k: v for k, v in self.page.units.items() if v},
        )

    def _process_warning(self) -> None:
        pids = sorted({k.ident.get("Process ID", "") for k in self.page.kernels})
        if len(pids) > 1:
            self.warnings.append(
                f"kernels of {len(pids)} processes (pid {', '.join(pids[:8])}) "
                "are read as one trace"
            )


def _launch(kernel: Kernel) -> tuple[str, str, str]:
    ident = kernel.ident
    return kernel.id, ident.get("Grid Size", ""), ident.get("Block Size", "")


def _first(values: dict[str, float], names: tuple[str, ...]) -> float:
    for name in names:
        if name in values:
            return values[name]
    return -1.0


def _add_known(a: float, b: float) -> float:
    """a + b of the two that are known (>= 0); -1 when neither is."""
    known = [v for v in (a, b) if v >= 0]
    return sum(known) if known else -1.0


def _int32(value: int) -> int:
    return value if -(2**31) <= value < 2**31 else -1


def _ns(value: float) -> int:
    """A non-negative number rounded to an integer (ns, bytes, registers); -1 when unknown."""
    return round(value) if 0 <= value < 2**63 else -1  # NaN, infinity, past int64: unknown


def _dims(text: str) -> tuple[int, int, int]:
    found = _DIMS.match(text.strip())
    if not found:
        return -1, -1, -1
    x, y, z = (int(v) if int(v) < 2**63 else -1 for v in found.groups())
    return x, y, z


def _devices(kernels: list[Kernel]) -> tuple[Device, ...]:
    found: dict[int, Device] = {}
    for kernel in kernels:
        number = parse_int(kernel.ident.get("Device", ""))
        if number in found or number < 0:
            continue
        attributes = {
            k: v
            for k, v in {**kernel.values, **kernel.texts}.items()
            if k.startswith(DEVICE_ATTRIBUTE)
        }
        major, _, minor = kernel.ident.get("CC", "").partition(".")
        found[number] = Device(
            id=number,
            name=str(kernel.texts.get(DEVICE_ATTRIBUTE + "display_name", "")),
            properties=attributes,
            arch=f"sm_{major}{minor}" if major.isdigit() and minor.isdigit() else "",
            compute_units=max(_ns(_first(kernel.values, SMS)), 0),
        )
    return tuple(found[d] for d in sorted(found))
