"""The step-time breakdown and the critical path, laid out: what the judged time went to (each
part with what it means and what removing it could save at most), each step's parts, and the
links of the path that set the step time.

Only display choices live here: every number is read from the report dict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuscope.document import units as fmt
from gpuscope.document.model import Block, Cell, Facts, Section, Stack, StackedBars, Table, Text
from gpuscope.document.names import short_name

Report = Mapping[str, Any]
STEPS_SHOWN = 20
LINKS_SHOWN = 12
SHOWN_SHARE = 0.005  # parts under this share of the judged time are left out of the tables


def breakdown_line(report: Report) -> str:
    """`step time 24.3 ms (6 steps): host work outside operators 90% · launch / dispatch 8.0% ·
    compute 0.6%` — the headline's parts, largest first."""
    part = report.get("breakdown")
    if not part or not part["wall_us"]:
        return ""
    shown = _ranked(part)[:4]
    parts = " · ".join(f"{part['labels'][p]} {fmt.percent(part['share'][p])}" for p in shown)
    return f"{_scope(part)}: {parts}"


def _scope(part: Mapping[str, Any]) -> str:
    if part["judged"] == "steps":
        steps = part["judged_steps"]
        each = fmt.duration(part["wall_us"] / steps) if steps else ""
        warm = f", {part['warmup_steps']} warm-up left out" if part["warmup_steps"] else ""
        return f"step time {each} ({steps} step{'s' * (steps != 1)}{warm})"
    return f"active span {fmt.duration(part['wall_us'])} (no steps)"


def _ranked(part: Mapping[str, Any]) -> list[str]:
    shares = part["share"]
    return [p for p in sorted(shares, key=lambda p: -shares[p]) if shares[p] >= SHOWN_SHARE]


def breakdown_section(report: Report) -> Section | None:
    part = report.get("breakdown")
    if not part:
        return None
    rows = report.get("step_breakdown") or []
    blocks: list[Block] = [Facts(tuple(_facts(part))), _parts_table(part), _bars(part, rows)]
    if part["steps"]:
        blocks.append(_steps_table(part, rows))
    path = report.get("critical_path") or []
    if path:
        blocks.append(_path_table(part, rows, path))
    blocks.append(Text(_note(part)))
    return Section("Step-time breakdown and critical path", tuple(blocks))


def _facts(part: Mapping[str, Any]) -> list[tuple[str, str]]:
    source = {
        "ProfilerStep": "ProfilerStep ranges",
        "optimizer": "optimizer steps (Optimizer.step# ranges; no ProfilerStep)",
        "device": "ProfilerStep ranges on the device's clock (the host runs ahead)",
    }.get(str(part["steps_from"]), "none: the device's active span is judged whole")
    return [
        ("judged", _scope(part)),
        ("steps from", source),
        ("host data", str(part["host_data"])),
    ]


def _parts_table(part: Mapping[str, Any]) -> Table:
    at_most = part["at_most_us"]
    rows = tuple(
        (
            Cell(part["labels"][p]),
            Cell(fmt.duration(part["time_us"][p])),
            Cell(fmt.percent(part["share"][p])),
            Cell(fmt.duration(at_most[p]) if p in at_most else "—"),
            Cell(part["meaning"][p]),
        )
        for p in _ranked(part)
    )
    headers = ("part", "time", "share", "removing it saves at most", "what it is")
    return Table(headers, rows, (False, True, True, True, False), "where the judged time went",
                 optional=(0, 0, 0, 1, 1))  # fmt: skip


def _bars(part: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> StackedBars:
    """Each step (the active span without steps) as one bar of its parts: they sum to its time."""
    columns = [p for p in part["parts"] if any(r[f"{p}_us"] for r in rows)]
    columns = sorted(columns, key=lambda p: -part["share"][p])
    stacks = tuple(
        Stack(
            str(r["step"]) + (" (warm-up)" if r["warmup"] else ""),
            tuple(float(r[f"{p}_us"]) for p in columns),
            text=fmt.duration(r["wall_us"]),
        )
        for r in rows[:STEPS_SHOWN]
    )
    caption = "each step's time by part, in µs: the parts sum to the step's time"
    return StackedBars(
        "Step time by part", tuple(part["labels"][p] for p in columns), stacks, caption
    )


def _steps_table(part: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> Table:
    columns = [p for p in part["parts"] if any(r[f"{p}_us"] for r in rows)]
    columns = sorted(columns, key=lambda p: -part["share"][p])[:6]
    body = tuple(
        (
            Cell(str(r["step"]) + (" (warm-up)" if r["warmup"] else ""), code=True),
            Cell(fmt.duration(r["wall_us"])),
            *(Cell(fmt.duration(r[f"{p}_us"])) for p in columns),
        )
        for r in rows[:STEPS_SHOWN]
    )
    headers = ("step", "time", *(part["labels"][p] for p in columns))
    optional = (0, 0, *(1 if i >= 3 else 0 for i in range(len(columns))))
    return Table(headers, body, (False, True, *(True for _ in columns)), "per step",
                 optional=optional)  # fmt: skip


def _path_table(
    part: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], path: Sequence[Mapping[str, Any]]
) -> Table:
    """The path of the first judged step (else the span), its links in the order they start."""
    judged = [r["step"] for r in rows if not r["warmup"]]
    step = judged[0] if judged else rows[0]["step"] if rows else "active span"
    links = [link for link in path if link["step"] == step][:LINKS_SHOWN]
    labels = part["labels"]
    body = tuple(
        (
            Cell(fmt.duration(link["first_us"])),
            Cell(str(link["on"])),
            Cell(labels.get(link["part"], str(link["part"]))),
            _what(link),
            Cell(fmt.count(link["count"])),
            Cell(fmt.duration(link["time_us"])),
        )
        for link in links
    )
    headers = ("from", "on", "part", "what", "count", "time")
    return Table(headers, body, (True, False, False, False, True, True),
                 f"critical path of {step}", optional=(1, 0, 0, 0, 1, 0))  # fmt: skip


def _what(link: Mapping[str, Any]) -> Cell:
    """A kernel's name shortened from the middle; an operator, frame or annotation as it is."""
    what = str(link["what"]) or "—"
    shown = short_name(what, 60) if link["on"] == "device" else what
    return Cell(shown, full=what, code=True)


def _note(part: Mapping[str, Any]) -> str:
    return (
        "Each step's time is cut, µs by µs, into what the device ran (compute; communication or "
        "copies with no kernel beside them) and, while it idled, what the thread that launches "
        "its next work was doing; the parts sum to the step's time. The critical path says who "
        "set the pace: the device when its next work was already waiting for it, else the host "
        "state that kept it waiting — device time the host's dispatch overlapped is on the "
        'host\'s side. "Saves at most" bounds what removing a part could shorten the judged '
        "steps by: the time itself for a host state; for syncs and device work, no more than "
        "the step less what the device and the host would still have to do."
    )
