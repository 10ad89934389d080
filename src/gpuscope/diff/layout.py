"""One diff dict (schema `gpuscope.diff/1`) → the document every renderer draws.

Only display choices live here; every number is read from the dict. `brief=True` is the short
form for a pull-request comment: the verdict, caveats, the headline numbers and the top movers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath
from typing import Any

from gpuscope.document import units as fmt
from gpuscope.document.model import (
    Bar,
    Block,
    Cell,
    Chart,
    Document,
    Facts,
    Level,
    Note,
    Section,
    Table,
    Text,
)
from gpuscope.document.names import short_name
from gpuscope.errors import InputError
from gpuscope.schemas import DIFF as SCHEMA

Report = Mapping[str, Any]
BRIEF_METRICS = ("gpu_time_us", "kernel_time_us", "kernels", "gpu_busy_us", "span_us")
BRIEF_MOVERS = 10
MOVERS_SHOWN = 25
LISTED = 15  # new / vanished kernels listed
NAME_WIDTH = 72
_QUALIFIER = re.compile(r"\b[A-Za-z_]\w*::")
_LAMBDAS = re.compile(r"::\{lambda[^}]*\}|::operator(?: const)?")  # noise in a normalised name
MATCH_TEXT = {
    "exact": "same name",
    "name": "same normalised name",
    "family": "same family (tile / config differs)",
    "shape": "same op and shape",
    "arch": "same family, other architecture",
    "op": "same op, other shapes",
    "new": "new",
    "vanished": "vanished",
}


def diff_document(report: Report, brief: bool = False) -> Document:
    """The document of one diff; `brief` for a pull-request comment."""
    _check(report)
    footer = f"schema {SCHEMA} · gpuscope {report.get('gpuscope_version', '?')}"
    return Document("gpuscope diff", _sections(report, brief), title(report), footer)


def _sections(report: Report, brief: bool) -> tuple[Section, ...]:
    head = Section("Verdict", tuple(_verdict_blocks(report, brief)))
    if brief:
        return (head, _summary(report, BRIEF_METRICS), _movers(report, BRIEF_MOVERS, brief=True))
    return (
        head,
        _profiles(report),
        _summary(report, tuple(report["summary"])),
        _categories(report),
        _movers(report, MOVERS_SHOWN, brief=False),
        *_only_one_side(report),
        _matching(report),
        _findings(report["findings"]),
    )


def _check(report: Report) -> None:
    schema = report.get("schema") if isinstance(report, Mapping) else None
    if schema != SCHEMA:
        raise InputError(
            f"diff report has schema {schema!r}, expected {SCHEMA!r}: pass the dict of "
            "gpuscope.diff.diff(before, after).to_dict() or a file written by "
            "`gpuscope diff --json`"
        )


def title(report: Report) -> str:
    return f"{_file(report['before'])} → {_file(report['after'])}"


def _file(side: Report) -> str:
    return PurePath(str(side["path"])).name


# -- verdict ----------------------------------------------------------------------------------


def _verdict_blocks(report: Report, brief: bool) -> list[Block]:
    verdict = report["verdict"]
    blocks: list[Block] = [Note(_level(verdict), _verdict_title(verdict), str(verdict["text"]))]
    blocks += [Note("warning", f"Caveat: {c['id']}", str(c["message"])) for c in report["caveats"]]
    bound = verdict["bound"]
    items = [
        ("before", f"{_file(report['before'])} · {_where(report['before'])}"),
        ("after", f"{_file(report['after'])} · {_where(report['after'])}"),
        ("paced by", f"{bound['before']['bound']} → {bound['after']['bound']}"),
    ]
    if not brief:
        items += _significance_items(verdict["significance"])
    findings = report["findings"]
    if findings["appeared"] or findings["disappeared"]:
        items.append(("findings", _finding_change_text(findings)))
    blocks.append(Facts(tuple(items)))
    return blocks


def _level(verdict: Report) -> Level:
    significant = verdict["significance"]["significant"]
    if not significant:
        return "info"
    return "warning" if verdict["direction"] == "slower" else "ok"


def _verdict_title(verdict: Report) -> str:
    direction = verdict["direction"]
    significant = verdict["significance"]["significant"]
    judged = {True: "significant", False: "within the noise", None: "cannot be called significant"}
    if verdict["change"] is not None and direction not in ("unknown", "unchanged"):
        direction = f"{direction} ({_signed_percent(verdict['change'])})"
    return f"{direction} · {judged[significant]}"


def _where(side: Report) -> str:
    devices = ", ".join(side["devices"]) or "device not recorded"
    return f"{side['vendor']} · {devices} · {side['format']}"


def _significance_items(s: Report) -> list[tuple[str, str]]:
    if s["method"] is None:
        return [("significance", str(s["reason"]))]
    low, high = s["ci95_delta_us"]
    return [
        ("significance", str(s["reason"])),
        (
            "test",
            f"Welch's t-test on {s['samples']}: n = {s['before_n']} / {s['after_n']}, "
            f"t = {s['t']}, df = {s['df']}, p = {s['p_value']}; 95% CI of the change "
            f"{_signed(low)} … {_signed(high)}",
        ),
    ]


def _finding_change_text(findings: Report) -> str:
    parts = []
    if findings["appeared"]:
        parts.append("appeared: " + ", ".join(str(f["id"]) for f in findings["appeared"]))
    if findings["disappeared"]:
        parts.append("disappeared: " + ", ".join(str(f["id"]) for f in findings["disappeared"]))
    return "; ".join(parts)


# -- numbers ----------------------------------------------------------------------------------


def _profiles(report: Report) -> Section:
    rows = []
    for label in ("before", "after"):
        side = report[label]
        rows.append((
            Cell(label),
            Cell(_file(side), full=str(side["path"]), code=True),
            Cell(str(side["vendor"])),
            Cell(", ".join(side["devices"]) or "—"),
            Cell(str(side["format"])),
            Cell(fmt.count(side["steps"])),
            Cell(", ".join(side["integrity"]) or "—"),
        ))  # fmt: skip
    headers = ("", "file", "vendor", "devices", "format", "steps", "integrity flags")
    optional = (0, 0, 2, 1, 3, 0, 0)  # a narrow terminal leaves out format, vendor, devices
    table = Table(headers, tuple(rows), (False,) * 5 + (True, False), optional=optional)
    return Section("Profiles", (table,))


def _summary(report: Report, keys: Sequence[str]) -> Section:
    rows = tuple(_metric_row(key, report["summary"][key]) for key in keys)
    table = Table(("", "before", "after", "Δ", "change"), rows, (False, True, True, True, True))
    return Section("Headline numbers", (table,))


def _metric_row(key: str, m: Report) -> tuple[Cell, ...]:
    show: Callable[[float | None], str] = fmt.count
    delta: Callable[[float | None], str] = _signed_count
    if key.endswith("_us"):
        show, delta = fmt.duration, _signed
    elif key in ("utilization", "gemm_share"):
        show, delta = fmt.percent, _signed_points
    return (
        Cell(str(m["label"])),
        Cell(show(m["before"])),
        Cell(show(m["after"])),
        Cell(delta(m["delta"])),
        Cell(_signed_percent(m["change"])),
    )


def _categories(report: Report) -> Section:
    categories = report["categories"]
    if not categories:
        return Section("Categories", (Text("No GPU activity on either side."),))
    rows = tuple(
        (
            Cell(name),
            Cell(f"{fmt.duration(c['before']['time_us'])} ({fmt.count(c['before']['count'])})"),
            Cell(f"{fmt.duration(c['after']['time_us'])} ({fmt.count(c['after']['count'])})"),
            Cell(_signed(c["delta_us"])),
            Cell(_signed_count(c["delta_count"])),
        )
        for name, c in categories.items()
    )
    headers = ("category", "before (count)", "after (count)", "Δ time", "Δ count")
    return Section("Categories", (Table(headers, rows, (False, True, True, True, True)),))


# -- kernels ----------------------------------------------------------------------------------


def _movers(report: Report, limit: int, brief: bool) -> Section:
    kernels = report["kernels"]
    movers = [c for c in kernels["changes"] if c["mover"]]
    if not movers:
        return Section("Top movers", (Text("No kernel time changed."),))
    shown = movers[:limit]
    share = kernels["movers"]["explained_share"]
    note = Text(
        f"{len(movers)} kernel change(s) explain {fmt.percent(share)} of the gross change "
        f"({fmt.duration(kernels['gross_change_us'])}: gains and losses both counted; net "
        f"{_signed(kernels['delta_us'])})"
        + (f"; the first {len(shown)} shown." if len(shown) < len(movers) else ".")
    )
    rows = tuple(_mover_row(i, c, brief) for i, c in enumerate(shown, 1))
    headers: tuple[str, ...] = ("#", "kernel", "match", "category", "before", "after", "Δ", "ratio")
    numeric: tuple[bool, ...] = (True, False, False, False, True, True, True, True)
    if not brief:
        headers, numeric = (*headers, "per-call p"), (*numeric, True)
    optional = (0, 0, 3, 4, 2, 1, 0, 0, 5)[: len(headers)]  # p, match, category, before
    table = Table(headers, rows, numeric, optional=optional)
    bars = tuple(
        Bar(
            _kernel_label(c, 48), _kernel_full(c), abs(float(c["delta_us"])), _signed(c["delta_us"])
        )
        for c in shown
    )
    # the chart in the brief form too: a PNG beside a --md file, left out of the text elsewhere
    blocks: list[Block] = [Chart("|Δ| kernel time of the top movers", bars), note, table]
    return Section("Top movers", tuple(blocks))


def _mover_row(index: int, c: Report, brief: bool) -> tuple[Cell, ...]:
    cells = (
        Cell(str(index)),
        # the short form leaves out the full names (a PR comment stays short)
        Cell(_kernel_label(c, NAME_WIDTH), full="" if brief else _kernel_full(c), code=True),
        Cell(MATCH_TEXT.get(str(c["match"]), str(c["match"]))),
        Cell(str(c["category"])),
        Cell(_side_text(c["before"])),
        Cell(_side_text(c["after"])),
        Cell(_signed(c["delta_us"])),
        Cell(f"{c['ratio']:.2f}×" if c["ratio"] is not None else "—"),
    )
    if brief:
        return cells
    test = c["per_call"]
    p = "—" if test is None else f"{test['p_value']:.2g}" + (" *" if test["significant"] else "")
    return (*cells, Cell(p))


def _kernel_label(c: Report, width: int) -> str:
    before, after = c["before"]["names"], c["after"]["names"]
    if c["match"] in ("shape", "op"):
        shape = c["shape"]
        where = f"{shape['op']} {_dims(shape['input_dims'])}".strip() if shape else str(c["key"])
        return f"{where}: {_short(before, width)} → {_short(after, width)}"
    if c["match"] == "arch":
        return f"{_short(before, width)} → {_short(after, width)}"
    if c["match"] == "name" and before[:1] != after[:1]:
        return short_name(_LAMBDAS.sub("", str(c["key"])), width)
    if c["match"] == "family" and before[:1] != after[:1]:
        return f"{_short(before, width)} → {_short(after, width)}"
    return _short(before or after, width)


def _kernel_full(c: Report) -> str:
    before, after = c["before"]["names"], c["after"]["names"]
    if before == after:
        return "; ".join(before)
    return f"before: {'; '.join(before) or '—'} | after: {'; '.join(after) or '—'}"


def _short(names: Sequence[str], width: int) -> str:
    if not names:
        return "—"
    more = f" (+{len(names) - 1})" if len(names) > 1 else ""
    return _display(str(names[0]), max(width, 16)) + more


def _display(name: str, width: int) -> str:
    """A Tensile / hipBLASLt name by its layout and macro tile (`Cijk_Alik_Bljk…MT128x144x64`),
    any other by `short_name`."""
    tokens = name.split("_")
    tile = next((t for t in tokens if t.startswith("MT") and "x" in t), "")
    if name.startswith("Cijk_") and tile:
        return "_".join(tokens[:3]) + "…" + tile
    whole = _head(name)
    return whole if len(whole) <= width else short_name(name, width)


def _head(name: str) -> str:
    """The name with its template arguments in full but without namespaces, return type and
    argument list, so that `add<int>` and `add<float>` stay apart:
    `vectorized_elementwise_kernel<4,CUDAFunctor_add<int>,Array<char*,3>>`."""
    text = name.strip().removeprefix("void ").replace("(anonymous namespace)::", "")
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "<") - (ch == ">")
        if ch == "(" and depth == 0 and i > 0:
            text = text[:i]
            break
    return _QUALIFIER.sub("", text).replace(", ", ",").replace("> >", ">>")


def _dims(text: str) -> str:
    """`[[141,512],[512,512],[]]` → `141×512, 512×512` (tensor arguments only)."""
    try:
        dims = json.loads(text) if text else []
    except ValueError:
        return text
    shapes = ["×".join(str(d) for d in arg) for arg in dims if isinstance(arg, list) and arg]
    return f"({', '.join(shapes)})" if shapes else ""


def _side_text(side: Report) -> str:
    if not side["count"]:
        return "—"
    return f"{fmt.duration(side['time_us'])} ({fmt.count(side['count'])}×)"


def _only_one_side(report: Report) -> list[Section]:
    sections = []
    for kind, heading in (
        ("new", "New kernels (only after)"),
        ("vanished", "Vanished kernels (only before)"),
    ):
        found = [c for c in report["kernels"]["changes"] if c["match"] == kind]
        if not found:
            continue
        rows = tuple(
            (
                Cell(_kernel_label(c, NAME_WIDTH), full=_kernel_full(c), code=True),
                Cell(str(c["category"])),
                Cell(_side_text(c["after" if kind == "new" else "before"])),
            )
            for c in found[:LISTED]
        )
        caption = f"{len(found)} in all" + (
            f"; the first {LISTED} shown" if len(found) > LISTED else ""
        )
        table = Table(("kernel", "category", "time (calls)"), rows, (False, False, True), caption)
        sections.append(Section(heading, (table,)))
    return sections


def _matching(report: Report) -> Section:
    kernels = report["kernels"]
    counts = ", ".join(f"{MATCH_TEXT[k]} {fmt.count(v)}" for k, v in kernels["matches"].items())
    text = Text(
        "Kernels are matched by name first, then by normalised name (no template arguments, "
        "types, hashes), then by family (no tile / configuration suffixes), then — for names "
        "that cannot match, as across vendors or architectures — by category, launching "
        "operator and recorded input shape, by family without the architecture (volta_ / "
        "ampere_, sm80, gfx942), and by category and launching operator alone; what is left is "
        "new or vanished. Per-call p: Welch's t-test of the mean call duration (* below 0.05)."
    )
    totals = (
        f"{fmt.duration(kernels['before']['time_us'])} ({fmt.count(kernels['before']['count'])}) "
        f"→ {fmt.duration(kernels['after']['time_us'])} ({fmt.count(kernels['after']['count'])})"
    )
    facts = Facts((("kernel time (calls)", totals), ("matched groups", counts)))
    return Section("Kernel matching", (facts, text))


def _findings(findings: Report) -> Section:
    blocks: list[Block] = []
    for key, heading in (("appeared", "Appeared"), ("disappeared", "Disappeared")):
        for f in findings[key]:
            level: Level = "warning" if f.get("severity") in ("warning", "critical") else "info"
            blocks.append(Note(level, f"{heading}: {f['id']}", str(f["message"])))
    persisted = ", ".join(findings["persisted"]) or "none"
    blocks.append(Text(f"On both sides: {persisted}."))
    return Section("Findings", tuple(blocks))


# -- formatting -------------------------------------------------------------------------------


def _signed(us: float | None) -> str:
    if us is None:
        return "—"
    sign = "+" if us > 0 else "−" if us < 0 else "±"
    return sign + fmt.duration(abs(us))


def _signed_count(n: float | None) -> str:
    if n is None:
        return "—"
    return ("+" if n > 0 else "−" if n < 0 else "±") + fmt.count(abs(n))


def _signed_points(share: float | None) -> str:
    if share is None:
        return "—"
    return f"{'+' if share >= 0 else '−'}{abs(share) * 100:.1f} pt"


def _signed_percent(change: float | None) -> str:
    if change is None:
        return "—"
    return f"{'+' if change >= 0 else '−'}{abs(change) * 100:.1f}%"
