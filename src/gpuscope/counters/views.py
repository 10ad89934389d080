"""The counter report (`CounterAnalysis.to_dict()`) as document sections for every view.

Views never compute: everything drawn here is a number the report holds, formatted by its unit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from gpuscope.analysis.layout import finding_section
from gpuscope.document import units as fmt
from gpuscope.document.model import (
    Bar,
    Block,
    Cell,
    Document,
    Dot,
    Facts,
    Note,
    Roof,
    RooflineChart,
    Section,
    Table,
    Text,
)
from gpuscope.document.names import short_name

DETAILED = 5  # kernels shown with every metric
LISTED = 25  # kernels in the summary table
Part = Mapping[str, Any]


def counters_document(report: Part) -> Document:
    """The counters report (schema `gpuscope.counters/1`) as a document for every renderer."""
    paths = ", ".join(PurePath(str(p)).name for p in report["source"]["paths"][:4])
    sections = (section(report), findings_section(report["findings"]))
    footer = f"schema {report['schema']} · gpuscope {report.get('gpuscope_version', '?')}"
    return Document("gpuscope counters", sections, paths, footer)


def section(part: Part) -> Section:
    """The whole counter analysis: source, roofs, roofline, kernels, per-kernel metrics."""
    blocks: list[Block] = [_facts(part)]
    blocks += [Note("info", "Note", str(n)) for n in part.get("notes", [])]
    chart = roofline_chart(part)
    if chart is not None:
        blocks.append(chart)
    blocks.append(_kernel_table(part))
    blocks += [_kernel_section(part, i, k) for i, k in enumerate(part["kernels"][:DETAILED])]
    return Section("Hardware counters and roofline", tuple(blocks), anchor="counters")


def findings_section(findings: list[Mapping[str, Any]]) -> Section:
    if not findings:
        return Section("Findings", (Text("No rule fired on these counters."),))
    return Section(f"Findings ({len(findings)})", tuple(finding_section(f) for f in findings))


def value_text(unit: str, value: float | None) -> str:
    """A metric value in its unit: `value_text("B/s", 1.17e12) == "1.17 TB/s"`."""
    if value is None:
        return "—"
    if unit == "share":
        return fmt.percent(value)
    if unit == "B":
        return fmt.nbytes(value)
    if unit in ("FLOP", "OP", "FLOP/s", "B/s"):
        return fmt.rate(value, unit)
    if unit == "FLOP/B":
        return f"{value:.3g} FLOP/B"
    return f"{fmt.count(value)} {unit}"


def roofline_chart(part: Part) -> RooflineChart | None:
    """The chart of the kernels placed by counters (not by speed-of-light shares)."""
    roofs_part = part.get("ceilings") or {}
    bandwidth = (roofs_part.get("bandwidth_gbs") or 0.0) * 1e9
    placed = [
        (i, k)
        for i, k in enumerate(part["kernels"][:LISTED])
        if (k.get("roofline") or {}).get("intensity") and k["roofline"].get("flops_rate")
    ]
    keys = sorted({k["roofline"]["precision"] for _, k in placed if k["roofline"]["precision"]})
    tflops = roofs_part.get("tflops", {})
    roofs = tuple(Roof(f"{key} {fmt.rate(tflops[key] * 1e12, 'FLOP/s')}", tflops[key] * 1e12)
                  for key in keys if tflops.get(key))  # fmt: skip
    if not placed or not roofs or bandwidth <= 0:
        return None
    dots = tuple(_dot(i, k) for i, k in placed)
    bars = tuple(
        Bar(f"#{i + 1}", k["name"], k["roofline"].get("fraction") or 0.0,
            fmt.percent(k["roofline"].get("fraction")))
        for i, k in placed
    )  # fmt: skip
    title = f"Roofline ({roofs_part.get('kind', '')} roofs: {roofs_part.get('label', '')})"
    return RooflineChart(title, bars, bandwidth, f"{fmt.rate(bandwidth, 'B/s')} DRAM", roofs, dots)


def _dot(index: int, k: Mapping[str, Any]) -> Dot:
    point = k["roofline"]
    full = (
        f"#{index + 1} {k['name']}: {point['intensity']:.3g} FLOP/B, "
        f"{fmt.rate(point['flops_rate'], 'FLOP/s')}, {point.get('bound') or 'bound unknown'}"
        f" at {fmt.percent(point.get('fraction'))} of its roof"
    )
    return Dot(
        f"#{index + 1}", full, point["intensity"], point["flops_rate"], point.get("bound") or ""
    )


def _facts(part: Part) -> Facts:
    source = part["source"]
    roofs = part.get("ceilings")
    items = [
        ("GPU", source.get("device") or source.get("ceilings_for") or "not recorded"),
        (
            "family",
            f"{source['family_label']} (arch {source.get('arch') or '?'}, from "
            f"{source['arch_from']})",
        ),
        ("formats", ", ".join(source.get("formats", []))),
        (
            "counters",
            f"{len(part['counters'])}: "
            + ", ".join(part["counters"][:12])
            + (" ..." if len(part["counters"]) > 12 else ""),
        ),
    ]
    if roofs:
        peaks = ", ".join(f"{k} {v:g}" for k, v in roofs["tflops"].items())
        items.append(("roofs", f"{roofs['kind']}: {roofs['label']} — DRAM "
                               f"{roofs['bandwidth_gbs']} GB/s; TFLOP/s {peaks}"))  # fmt: skip
        items.append(("roof source", str(roofs["source"])))
    else:
        items.append(("roofs", "unknown device: pass --peaks FILE or --device NAME"))
    return Facts(tuple(items), "source")


def _kernel_table(part: Part) -> Table:
    headers = ("#", "kernel", "grid × block", "dispatches", "time", "share", "gpuscope", "ncu",
               "of roof", "DRAM B/s", "DRAM (ncu)", "FLOP/s", "FLOP/B", "occupancy")  # fmt: skip
    rows = []
    for i, k in enumerate(part["kernels"][:LISTED]):
        point = k.get("roofline") or {}
        occ = k.get("occupancy") or {}
        dram = (point.get("ncu") or {}).get("dram_throughput_pct_of_peak_sustained")
        rows.append((
            Cell(f"{i + 1}"),
            Cell(short_name(k["name"], 60), k["name"], code=True, name=True),
            Cell(launch_text(k)),
            Cell(fmt.count(k["dispatches"])),
            Cell(fmt.duration(k.get("time_us"))),
            Cell(fmt.percent(k.get("share"))),
            Cell(_label(k), (k.get("label") or {}).get("why", "")),
            Cell(_ncu_cell(k), ((k.get("ncu") or {}).get("explanation", ""))),
            Cell(fmt.percent(point.get("fraction"))),
            Cell(value_text("B/s", k["metrics"].get("dram_bandwidth"))),
            Cell("—" if dram is None else f"{dram:.3g}% of peak"),
            Cell(value_text("FLOP/s", k["metrics"].get("flops_rate"))),
            Cell(value_text("FLOP/B", k["metrics"].get("intensity_dram"))),
            Cell(_occupancy(occ)),
        ))  # fmt: skip
    numeric = (True, False, False, True, True, True, False, False, True, True, True, True, True,
               False)  # fmt: skip
    optional = (0, 0, 0, 3, 0, 0, 0, 2, 4, 6, 1, 7, 8, 5)
    roofs = part.get("ceilings") or {}
    caption = (
        f"kernels with counters ({len(part['kernels'])}) by launch configuration, hottest first; "
        f"of roof = achieved ÷ the {roofs.get('kind', 'unknown')} roof it is bound by; DRAM "
        "(ncu) = ncu's DRAM throughput, % of its peak sustained rate"
    )
    return Table(headers, tuple(rows), numeric, caption, optional)


def launch_text(k: Part) -> str:
    """`1×1×1 × 256` (grid × block) and the SMs it fills: `1 of 132 SMs`."""
    grid, block = dims_text(k.get("grid", ())), dims_text(k.get("block", ()))
    fill = k.get("fill")
    if not fill:
        return f"{grid} × {block}"
    if fill["small"]:
        return f"{grid} × {block} ({fill['blocks']:,} of {fill['units']:,} {fill['unit']}s)"
    return f"{grid} × {block} ({fill['waves']:.3g} waves)"


def dims_text(dims: Sequence[int]) -> str:
    """`(1056, 1, 1)` -> `1056`, `(8, 1, 8)` -> `8×1×8`: trailing unit dimensions dropped."""
    known = [d for d in dims if d > 0]
    while len(known) > 1 and known[-1] == 1:
        known.pop()
    return "×".join(str(d) for d in known) or "?"


def _label(k: Part) -> str:
    label = str((k.get("label") or {}).get("label") or "—")
    return label + _basis(k.get("roofline") or {}) if label.endswith("-bound") else label


def _ncu_cell(k: Part) -> str:
    ncu = k.get("ncu") or {}
    if "bottleneck" not in ncu:
        return "—"
    return str(ncu["bottleneck"]) + ("" if ncu["agrees"] else " (differs)")


def _occupancy(occ: Mapping[str, Any]) -> str:
    if not occ:
        return "—"
    limiter = "not limited" if occ["limiter"] == "none" else f"by {occ['limiter']}"
    return f"{fmt.percent(occ.get('share'))} ({limiter})"


def _basis(point: Mapping[str, Any]) -> str:
    return " (ncu SOL)" if point.get("basis") == "ncu speed-of-light" else ""


def _kernel_section(part: Part, index: int, k: Mapping[str, Any]) -> Section:
    units = part["metrics"]
    blocks: list[Block] = [_verdicts(k)]
    rules = (k.get("ncu") or {}).get("rules") or []
    if rules:
        blocks.append(_rules_table(rules))
    rows = tuple(
        (Cell(units[m]["title"]), Cell(value_text(units[m]["unit"], v)),
         Cell(k["formulas"].get(m, ""), code=True))
        for m, v in k["metrics"].items()
    )  # fmt: skip
    blocks.append(Table(("metric", "value", "formula"), rows, (False, True, False)))
    by_reason: dict[str, list[str]] = {}
    for metric, why in k["unavailable"].items():
        by_reason.setdefault(_shorter(why), []).append(units[metric]["title"])
    missing = tuple((Cell(why), Cell("; ".join(titles))) for why, titles in by_reason.items())
    if missing:
        caption = "not computed (never shown as 0)"
        blocks.append(Table(("why", "unavailable metrics"), missing, (), caption))
    return Section(f"#{index + 1} {short_name(k['name'], 70)}", tuple(blocks))


def _verdicts(k: Mapping[str, Any]) -> Facts:
    """The launch, gpuscope's label and ncu's verdict beside it."""
    items = [("launch", launch_text(k))]
    label = k.get("label")
    if label:
        items.append(("gpuscope", f"{label['label']}: {label['why']}"))
    ncu = k.get("ncu") or {}
    if "bottleneck" in ncu:
        items.append(("ncu", f"{ncu['bottleneck']}: “{ncu['says']}”"))
        items.append(("agreement", ("agree: " if ncu["agrees"] else "differ: ") +
                      ncu["explanation"]))  # fmt: skip
    sol = (k.get("roofline") or {}).get("ncu") or {}
    if sol:
        shares = (f"{_SOL_NAMES.get(name, name)} {v:.3g}%" for name, v in sol.items())
        items.append(("ncu throughput", ", ".join(shares) + " of peak sustained"))
    return Facts(tuple(items), "verdicts")


_SOL_NAMES = {
    "dram_throughput_pct_of_peak_sustained": "DRAM",
    "memory_throughput_pct_of_peak_sustained": "memory",
    "sm_throughput_pct_of_peak_sustained": "SM",
}


def _rules_table(rules: list[Mapping[str, Any]]) -> Table:
    rows = tuple(
        (Cell(str(r.get("rule", "")), code=True), Cell(str(r.get("type", ""))),
         Cell(_speedup(r)), Cell(fmt.count(r.get("dispatches"))),
         Cell(str(r.get("description", ""))))
        for r in rules
    )  # fmt: skip
    return Table(("ncu rule", "type", "est. speedup", "dispatches", "description"), rows,
                 (False, False, True, True, False), "ncu's own rule rows")  # fmt: skip


def _speedup(rule: Mapping[str, Any]) -> str:
    if rule.get("speedup") is None:
        return "—"
    kind = f" ({rule['speedup_type']})" if rule.get("speedup_type") else ""
    return f"{rule['speedup']:.3g}%{kind}"


def _shorter(reason: str, names: int = 4) -> str:
    """'missing A, B, C, D, E' -> 'missing A, B, C, D … (+1)'."""
    head, sep, rest = reason.partition("missing ")
    if not sep:
        return reason
    listed, paren, tail = rest.partition(" (or ")
    items = listed.split(", ")
    short = ", ".join(items[:names]) + (f" … (+{len(items) - names})" if len(items) > names else "")
    return head + sep + short + (paren + tail if paren else "")
