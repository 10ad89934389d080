"""The `launch_config` part of the report as a document section (views never compute)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuscope.document import units as fmt
from gpuscope.document.model import Cell, Facts, Section, Table, Text


def launch_config_section(part: Mapping[str, Any]) -> Section:
    small = part["small_grid"]
    rule = part["rule"]
    facts = Facts(
        (
            ("GPU size", "; ".join(_device(d) for d in part["devices"])),
            (
                "launches",
                f"{fmt.count(part['launches'])} in {fmt.count(part['configs'])} "
                "kernel × grid × block groups",
            ),
            (
                "small grids",
                f"{fmt.count(small['configs'])} groups, {fmt.count(small['launches'])} launches, "
                f"{fmt.duration(small['time_us'])} ({fmt.percent(small['share'])} of kernel "
                f"time), up to {fmt.duration(small['at_stake_us'])} at stake "
                f"({fmt.percent(small['at_stake_share'])})",
            ),
            (
                "rule",
                "small = fewer blocks than SMs (CUs); at stake = (duration − "
                f"{fmt.duration(rule['fixed_launch_us'])}) × the share of SMs left idle; a "
                f"finding from {fmt.percent(rule['info_share'])} of kernel time at stake, a "
                f"warning from {fmt.percent(rule['warning_share'])}",
            ),
        ),
        "launch configuration",
    )
    rows = tuple(_row(g) for g in part["groups"])
    headers = ("kernel", "grid", "block", "launches", "time", "share", "waves",
               "idle SMs", "at stake")  # fmt: skip
    numeric = (False, False, False, True, True, True, True, True, True)
    table = Table(headers, rows, numeric, "launch groups, longest first", optional=(0, 2, 3, 0, 0,
                  0, 0, 0, 1))  # fmt: skip
    blocks = (facts, table) if rows else (facts, Text("No launch with a known grid."))
    return Section("Launch configuration", blocks, anchor="launch-config")


def _device(d: Mapping[str, Any]) -> str:
    if d["units"] is None:
        return f"device {d['id']}: {d['unit']} count unknown (not in the trace nor the datasheet)"
    return f"device {d['id']}: {d['units']:,} {d['unit']}s ({d['units_from']})"


def _row(g: Mapping[str, Any]) -> tuple[Cell, ...]:
    fill = g.get("fill") or {}
    waves = "—"
    idle = "—"
    if fill:
        waves = f"{fill['waves']:.3g}" + ("" if fill["resident_per_unit"] else " (÷ SMs)")
        idle = f"{fill['idle_units']:,} of {fill['units']:,}"
    stake = fmt.duration(g["at_stake_us"]) if g["judged"] else "not judged"
    return (
        Cell(g["kernel"], g["kernel"], code=True, name=True),
        Cell(_dims(g["grid"])),
        Cell(_dims(g["block"])),
        Cell(fmt.count(g["launches"])),
        Cell(fmt.duration(g["time_us"])),
        Cell(fmt.percent(g["share"])),
        Cell(waves),
        Cell(idle),
        Cell(stake),
    )


def _dims(dims: list[int]) -> str:
    return "×".join(str(d) for d in dims if d > 0) or "?"
