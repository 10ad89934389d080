"""Which counters a GPU can collect, and counter sets split into passes it can collect together.

The packaged table (`data/counters/capability.json`, generated from rocprofiler-sdk's
counter_defs.yaml by scripts/gen_counter_capability.py) lists per gfx target the hardware
counters with their block and the derived counters with the hardware counters they read.
`rocprofv3 --list-avail` output, when given, replaces it for that GPU. Each hardware block
counts only so many counters at once (SQ 8, TCC 4, ... per pass): a pass holds counters whose
hardware needs fit every block's limit.

>>> cap = capability_for("gfx1151")
>>> plan(["SQ_WAVES", "SQ_INSTS_VALU_FMA_F32"], cap).dropped
('SQ_INSTS_VALU_FMA_F32',)
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from gpuscope.counters.metrics import normalise_arch

PACKAGED = "packaged table (rocprofiler-sdk counter_defs.yaml)"
LIST_AVAIL = "rocprofv3 --list-avail"
DEFAULT_LIMIT = 1  # a block the table gives no limit for: one counter per pass
_PMC = re.compile(r"^\s*pmc\s*:\s*(.*)$", re.IGNORECASE)
_FIELD = re.compile(r"^\s*(GPU|Name|Counter_Name|Block|Expression)\s*:\s*(.*?)\s*$")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Capability:
    """The counters one GPU architecture exposes to rocprofv3."""

    arch: str
    hardware: dict[str, str]  # counter -> block
    derived: dict[str, tuple[str, ...]]  # counter -> hardware counters it reads
    limits: dict[str, int]  # block -> counters per pass
    source: str
    limits_assumed: bool = False

    def supports(self, counter: str) -> bool:
        return counter in self.hardware or counter in self.derived

    def needs(self, counter: str) -> frozenset[str]:
        """The hardware counters collecting `counter` takes."""
        if counter in self.hardware:
            return frozenset({counter})
        return frozenset(self.derived.get(counter, ()))

    def limit(self, block: str) -> int:
        return self.limits.get(block, DEFAULT_LIMIT)

    def fits(self, hardware: Iterable[str]) -> bool:
        used: dict[str, int] = {}
        for name in hardware:
            block = self.hardware[name]
            used[block] = used.get(block, 0) + 1
        return all(n <= self.limit(b) for b, n in used.items())


@dataclass(frozen=True)
class Plan:
    """A counter request checked against a GPU: the passes to run and what was left out."""

    arch: str
    passes: tuple[tuple[str, ...], ...]
    dropped: tuple[str, ...]  # counters this GPU does not have
    split: tuple[str, ...] = ()  # requested lines that were split to fit the block limits
    source: str = PACKAGED

    @property
    def counters(self) -> tuple[str, ...]:
        return tuple(c for p in self.passes for c in p)

    def message(self) -> str:
        """One line on what changed ('' when nothing did)."""
        parts = []
        if self.dropped:
            parts.append(f"{self.arch} cannot collect {', '.join(self.dropped)} (left out)")
        if self.split:
            parts.append(f"split into passes that fit the counter blocks: {'; '.join(self.split)}")
        return "; ".join(parts)

    def pmc_lines(self) -> list[str]:
        return [f"pmc: {' '.join(p)}" for p in self.passes]


@functools.cache
def _table() -> dict[str, Any]:
    text = resources.files("gpuscope").joinpath("data/counters/capability.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def packaged_archs() -> list[str]:
    return [a for members in _table()["members"].values() for a in members]


def capability_for(arch: str) -> Capability | None:
    """The packaged table's entry for `arch` (gfx942, gfx1151 ...), or None when unknown."""
    arch = normalise_arch(arch)
    table = _table()
    for group, members in table["members"].items():
        if arch in members:
            entry, limits = table["archs"][group], table["limits"][group]
            hardware = {c: block for block, names in entry["blocks"].items() for c in names}
            derived = {name: tuple(needs) for name, needs in entry["derived"].items()}
            return Capability(arch, hardware, derived, dict(limits["blocks"]), PACKAGED,
                              bool(limits["assumed"]))  # fmt: skip
    return None


def parse_list_avail(text: str) -> dict[str, Capability]:
    """`rocprofv3 --list-avail` output -> capability per architecture named in it.

    Block limits are not in that output: they come from the packaged table for the same arch.
    """
    found: dict[str, dict[str, Any]] = {}
    arch, counter = "", ""
    for line in text.splitlines():
        match = _FIELD.match(line)
        if not match:
            continue
        key, value = match.groups()
        if key == "Name" and value.startswith("gfx"):
            arch = normalise_arch(value)
            found.setdefault(arch, {"hardware": {}, "expressions": {}})
        elif key == "Counter_Name" and arch:
            counter = value
            found[arch]["expressions"].setdefault(counter, "")
        elif key == "Block" and arch and counter:
            found[arch]["hardware"][counter] = value
            found[arch]["expressions"].pop(counter, None)
        elif key == "Expression" and arch and counter:
            found[arch]["expressions"][counter] = value
    return {arch: _listed(arch, parts) for arch, parts in found.items()}


def _listed(arch: str, parts: dict[str, Any]) -> Capability:
    hardware: dict[str, str] = parts["hardware"]
    expressions: dict[str, str] = {k: v for k, v in parts["expressions"].items() if v}
    derived = {name: tuple(sorted(_needs(name, expressions, hardware))) for name in expressions}
    packaged = capability_for(arch)
    limits = dict(packaged.limits) if packaged else {}
    assumed = packaged.limits_assumed if packaged else True
    return Capability(arch, hardware, derived, limits, LIST_AVAIL, assumed)


def _needs(name: str, expressions: dict[str, str], hardware: dict[str, str]) -> set[str]:
    found: set[str] = set()
    for word in _WORD.findall(expressions[name]):
        if word in hardware:
            found.add(word)
        elif word in expressions and word != name:
            found |= _needs(word, expressions, hardware)
    return found


def plan(
    counters: Sequence[str] | Sequence[Sequence[str]], cap: Capability, merge: bool = False
) -> Plan:
    """Check a request against `cap`: unsupported counters dropped, each requested pass (a
    `pmc:` line; a flat list is one line) split where it overfills a block. `merge` packs every
    counter into as few passes as fit instead of keeping the requested lines."""
    lines = _lines(counters)
    dropped: list[str] = []
    kept: list[list[str]] = []
    for line in lines:
        dropped += [c for c in line if not cap.supports(c) and c not in dropped]
        kept.append([c for c in dict.fromkeys(line) if cap.supports(c)])
    if merge:
        passes = _pack([c for line in kept for c in line], cap)
        split: list[str] = []
    else:
        packed = [_pack(line, cap) for line in kept]
        passes = [p for group in packed for p in group]
        split = [" | ".join(" ".join(p) for p in group) for group in packed if len(group) > 1]
    return Plan(cap.arch, tuple(tuple(p) for p in passes if p), tuple(dropped), tuple(split),
                cap.source)  # fmt: skip


def _lines(counters: Sequence[str] | Sequence[Sequence[str]]) -> list[list[str]]:
    """A flat list of counters is one line."""
    if all(isinstance(c, str) for c in counters):
        return [[str(c) for c in counters]]
    return [[str(c) for c in line] for line in counters]


def _pack(counters: list[str], cap: Capability) -> list[list[str]]:
    """First-fit: each counter into the first pass whose blocks still hold its hardware needs."""
    out: list[list[str]] = []
    for counter in dict.fromkeys(counters):
        if any(counter in p for p in out):
            continue
        for p in out:
            used = set().union(*(cap.needs(c) for c in p))
            if cap.fits(used | cap.needs(counter)):
                p.append(counter)
                break
        else:
            out.append([counter])  # alone; rocprofv3 says so if even that does not fit
    return out


def read_pmc_lines(text: str) -> list[list[str]]:
    """The counters of each `pmc:` line of a rocprof / rocprofv3 text input file."""
    lines = []
    for line in text.splitlines():
        match = _PMC.match(line.split("#", 1)[0])
        if match and match.group(1).strip():
            lines.append(match.group(1).replace(",", " ").split())
    return lines


def rewrite_input(text: str, cap: Capability) -> tuple[str, Plan]:
    """The input file with its `pmc:` lines replaced by the plan's passes; other lines kept."""
    result = plan(read_pmc_lines(text), cap)
    out: list[str] = []
    written = False
    for line in text.splitlines():
        if _PMC.match(line.split("#", 1)[0]):
            if not written:
                out += result.pmc_lines()
                written = True
            continue
        out.append(line)
    return "\n".join(out) + "\n", result
