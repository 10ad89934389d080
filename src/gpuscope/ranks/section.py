"""The cross-rank part of a report (the `"ranks"` dict) as a document section, drawn by every
view (terminal, Markdown, HTML). Display only: every number is read from the dict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuscope.analysis.layout import SEVERITY_LEVEL
from gpuscope.document import units as fmt
from gpuscope.document.model import Block, Cell, Facts, Section, Stack, StackedBars, Table, Text
from gpuscope.ranks.verdicts import label

Part = Mapping[str, Any]
STEP_MATRIX_RANKS = 16  # the per-step × per-rank table only up to this many ranks


def section(part: Part) -> Section:
    blocks: list[Block] = [_facts(part), _findings(part["findings"]), _per_rank(part)]
    bars = per_rank_bars(part)
    blocks += [bars] if bars else []
    blocks += [b for b in (_verdicts(part), _step_means(part), _steps(part), _kinds(part),
                           _worst(part), _bandwidth(part)) if b]  # fmt: skip
    title = f"Across ranks ({_of(part)})"
    return Section(title, tuple(blocks), anchor="ranks")


def _of(part: Part) -> str:
    world = part.get("world_size")
    seen = part["ranks_analysed"]
    return f"{seen} of {world} ranks" if world and world != seen else f"{seen} ranks"


def _facts(part: Part) -> Facts:
    clock = part["clock"]
    coll = part["collectives"]
    residual = clock.get("residual") or {}
    unaligned = clock["unaligned_ranks"]
    items = [
        ("hosts", ", ".join(part["hosts"]) or "not recorded"),
        ("clocks", _clock_text(clock)),
        ("aligned to", f"{fmt.duration(residual.get('p50_us'))} median, "
                       f"{fmt.duration(residual.get('max_us'))} max (spread of a collective's "
                       "ends across ranks after alignment)" if residual else "—"),
        ("not aligned", ", ".join(str(r) for r in unaligned) if unaligned else "none"),
        ("collectives", f"{fmt.count(coll['matched'])} matched across ranks; "
                        f"{fmt.count(coll['calls_unmatched'])} of {fmt.count(coll['calls'])} "
                        "calls in no other analysed rank's trace"),
        ("waiting", f"{fmt.duration(coll['wait_total_us'])} in total for the last rank to "
                    f"arrive (skew median {fmt.duration((coll.get('skew') or {}).get('p50_us'))})"),
    ]  # fmt: skip
    return Facts(tuple(items))


def _clock_text(clock: Part) -> str:
    spread = clock.get("spread_of_offsets_us")
    text = f"aligned on {clock['aligned_on']} to rank {clock['reference_rank']}"
    if spread is not None:
        text += f"; offsets span {fmt.duration(spread)}"
    return text + f" (ends agree within {fmt.duration(clock['tolerance_us'])})"


def _findings(findings: Sequence[Part]) -> Section:
    if not findings:
        return Section("Findings across ranks", (Text("No cross-rank rule fired."),))
    children = []
    for f in findings:
        blocks = (Text(str(f["message"])), Text(str(f["action"]), "Action"))
        level = SEVERITY_LEVEL.get(str(f["severity"]), "info")
        children.append(Section(str(f["id"]), blocks, badge=str(f["severity"]), level=level))
    return Section(f"Findings across ranks ({len(findings)})", tuple(children))


def _per_rank(part: Part) -> Table:
    hosts = any(r["host"] for r in part["per_rank"])
    headers = ("rank", *(("host",) if hosts else ()), "verdict", "busy", "own work", "compute",
               "comm", "exposed %", "last at", "others wait", "waited")  # fmt: skip
    rows = tuple(
        (
            Cell(str(r["rank"])),
            *((Cell(r["host"] or "—"),) if hosts else ()),
            Cell(label(r["verdict"]) if r.get("verdict") else "—"),
            Cell(fmt.duration(r["busy_us"])),
            Cell(fmt.percent((r.get("verdict") or {}).get("own_work_utilization"))),
            Cell(fmt.duration(r["compute_us"])),
            Cell(fmt.duration(r["communication_us"])),
            Cell(fmt.percent(r["exposed_share_of_span"])),
            Cell(f"{r['last']} of {r['collectives_aligned']}"),
            Cell(fmt.duration(r["others_wait_us"])),
            Cell(fmt.duration(r["waited_us"])),
        )
        for r in part["per_rank"]
    )
    numeric = (False, *((False,) if hosts else ()), False, *([True] * 8))
    optional = (0, *((1,) if hosts else ()), 0, 0, 0, 2, 3, 4, 0, 0, 0)
    caption = (
        "per rank (verdict read with the job; own work: busy time less the waits for later "
        "ranks, over the GPU span; exposed % of the GPU span; last at: collectives it arrived "
        "last at; waited: for later ranks)"
    )
    return Table(headers, rows, numeric, caption, optional)


SPAN_PARTS = ("compute", "exposed communication", "other busy", "idle")


def per_rank_bars(part: Part) -> StackedBars | None:
    """Each rank's GPU span as parts that do not overlap: compute, communication not hidden by
    compute, the rest of the busy time (copies, …), idle — they add up to the span. None when a
    rank lacks the numbers (a source without a timeline)."""
    rows = []
    for r in part["per_rank"]:
        span, busy = r.get("span_us"), r.get("busy_us")
        compute, exposed = r.get("compute_us"), r.get("exposed_communication_us")
        if None in (span, busy, compute, exposed):
            return None
        other = max(busy - compute - exposed, 0.0)
        values = (compute, exposed, other, max(span - busy, 0.0))
        rows.append(Stack(f"rank {r['rank']}", values, str(r.get("path") or ""),
                          f"{fmt.duration(span)} span"))  # fmt: skip
    if not rows:
        return None
    caption = (
        "per rank, its GPU span in parts that do not overlap: compute, communication not "
        "hidden by compute, other busy time (copies, …), idle"
    )
    return StackedBars("GPU span per rank", SPAN_PARTS, tuple(rows), caption)


def _verdicts(part: Part) -> Block | None:
    """Each rank's verdict with its reason (few ranks), else how many ranks have each."""
    verdicts = [(r["rank"], r["verdict"]) for r in part["per_rank"] if r.get("verdict")]
    if not verdicts:
        return None
    if len(verdicts) <= STEP_MATRIX_RANKS:  # ranks that read alike share one line
        groups: dict[str, list[tuple[int, Part]]] = {}
        for rank, v in verdicts:
            groups.setdefault(label(v), []).append((rank, v))
        lines: list[tuple[str, str]] = []
        for name, members in groups.items():
            (first, verdict), many = members[0], len(members) > 1
            who = f"ranks {', '.join(str(r) for r, _ in members)}" if many else f"rank {first}"
            said = f"{name}: {verdict['reason']}"
            lines.append((who, f"{said} (rank {first}'s numbers; see the table)" if many else said))
        return Facts(tuple(lines), "each rank's verdict, read with the job")
    counts: dict[str, list[int]] = {}
    for rank, v in verdicts:
        counts.setdefault(label(v), []).append(rank)
    items = tuple(
        (name, f"{len(ranks)} ranks ({', '.join(str(r) for r in ranks[:8])}"
               f"{', …' if len(ranks) > 8 else ''})")
        for name, ranks in sorted(counts.items(), key=lambda kv: -len(kv[1]))
    )  # fmt: skip
    return Facts(items, "verdicts read with the job (the JSON holds each rank's reason)")


def _step_means(part: Part) -> Table | None:
    """Per rank, the mean per matched step of what the findings and verdicts cite."""
    steps = part.get("steps")
    if not steps:
        return None
    names = ("wall", "compute", "waited", "after_sync", "host_wait")
    headers = ("rank", "wall", "compute", "waited", "host late after sync", "host wait")
    rows = tuple(
        (Cell(str(r["rank"])), *(Cell(fmt.duration(_mean(r[f"{n}_us"]))) for n in names))
        for r in steps["per_rank"]
    )
    caption = (
        f"mean per step over {len(steps['names'])} steps (waited: for later ranks, in "
        "collectives; host late after sync: GPU idle from a blocking sync's return to the next "
        "launch; host wait: GPU idle until work launched after it went idle)"
    )
    return Table(headers, rows, (False, *([True] * 5)), caption)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _steps(part: Part) -> Table | None:
    steps = part.get("steps")
    if not steps:
        return None
    per_rank = steps["per_rank"]
    names = steps["names"]
    matrix = per_rank if len(per_rank) <= STEP_MATRIX_RANKS else []
    headers = ("step", "wall min … max", "compute min … max", "most compute",
               *(f"rank {r['rank']} wall / compute" for r in matrix))  # fmt: skip
    rows = tuple(
        (
            Cell(name),
            Cell(_span([r["wall_us"][i] for r in per_rank])),
            Cell(_span([r["compute_us"][i] for r in per_rank])),
            Cell(
                f"rank {steps['most_compute_rank'][i]} "
                f"({fmt.excess(steps['compute_imbalance'][i])})"
            ),
            *(
                Cell(f"{fmt.duration(r['wall_us'][i])} / {fmt.duration(r['compute_us'][i])}")
                for r in matrix
            ),
        )
        for i, name in enumerate(names)
    )
    # a narrow terminal keeps the ranges and leaves out the per-rank columns, the last first
    optional = (0, 0, 0, 0, *range(1, len(matrix) + 1))
    numeric = (False, True, True, False, *([True] * len(matrix)))
    return Table(headers, rows, numeric, _step_caption(steps), optional)


def _span(values: Sequence[float | None]) -> str:
    known = [v for v in values if v is not None]
    if not known:
        return "—"
    low, high = min(known), max(known)
    return fmt.duration(low) if low == high else f"{fmt.duration(low)} … {fmt.duration(high)}"


def _step_caption(steps: Part) -> str:
    return (
        f"per step (matched by {steps['matched_by']}; min … max over the ranks; most compute: "
        "the rank that computes most in the step, and by how much over the ranks' mean)"
    )


def _kinds(part: Part) -> Table | None:
    kinds = part["collectives"]["by_kind"]
    if not kinds:
        return None
    headers = ("collective", "matched", "others wait", "skew p50", "skew max", "time p50",
               "last rank (times)")  # fmt: skip
    rows = tuple(
        (
            Cell(k["kind"]),
            Cell(fmt.count(k["count"])),
            Cell(fmt.duration(k["wait_us"])),
            Cell(fmt.duration(k["skew"]["p50_us"])),
            Cell(fmt.duration(k["skew"]["max_us"])),
            Cell(fmt.duration(k["transfer"]["p50_us"])),
            Cell(", ".join(f"{r} ({n})" for r, n in _top(k["last_rank_counts"]))),
        )
        for k in kinds
    )
    caption = "collectives matched across ranks (time = the last arriver's kernel)"
    return Table(headers, rows, (False, *([True] * 5), False), caption)


def _top(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: -kv[1])[:3]


def _worst(part: Part) -> Table | None:
    worst = part["collectives"]["worst"]
    if not worst:
        return None
    headers = ("collective", "size", "step", "last rank", "late by", "others wait", "time")
    rows = tuple(
        (
            Cell(w["kind"]),
            Cell(fmt.nbytes(w["bytes"])),
            Cell(w["step"] or "—"),
            Cell(str(w["last_rank"])),
            Cell(fmt.duration(w["late_us"])),
            Cell(fmt.duration(w["wait_us"])),
            Cell(fmt.duration(w["transfer_us"])),
        )
        for w in worst
    )
    return Table(headers, rows, (False, True, False, True, True, True, True), "longest waits")


def _bandwidth(part: Part) -> Table | None:
    rows_in = part["bandwidth"]
    if not rows_in:
        return None
    headers = ("collective", "size", "ranks", "calls", "time p50", "algbw", "busbw", "best busbw")
    rows = tuple(
        (
            Cell(b["kind"]),
            Cell(fmt.nbytes(b["bytes"])),
            Cell(fmt.count(b["group_size"])),
            Cell(fmt.count(b["count"])),
            Cell(fmt.duration(b["time_p50_us"])),
            Cell(_gbs(b["algbw_gbs"])),
            Cell(_gbs(b["busbw_gbs"])),
            Cell(_gbs(b["busbw_best_gbs"])),
        )
        for b in rows_in
    )
    caption = "achieved bandwidth (nccl-tests formulas; GB/s = 1e9 B/s)"
    optional = (0, 0, 2, 3, 0, 0, 0, 1)  # a narrow terminal leaves out calls, ranks, best busbw
    return Table(headers, rows, (False, *([True] * 7)), caption, optional)


def _gbs(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f} GB/s"
