"""The kernels of two profiles matched to each other, with their time and count deltas.

Each side's kernels are first cut into atoms: one per (kernel name, category, launching operator
and its recorded input shapes), with the duration of every call. Atoms are then matched in
stages, each on what the atoms left unmatched by the stage before:

1. `exact`: the same name (hash-like tokens aside, `names.exact`);
2. `name`: the same normalised name (`names.normalised`: no types, numbers, argument lists);
3. `family`: the same name without tile / configuration suffixes (`names.family`);
4. `shape`: the same category, launching operator and recorded input dims — how a Tensile
   `Cijk_…` GEMM on an MI300X meets the cutlass / cuBLAS / nvjet GEMM of the same `aten::addmm`
   shape on an H100, whose names share nothing, and how `cutlass_80_tensorop_s1688gemm` on an
   A100 meets the `volta_sgemm` of the same shape on a V100;
5. `arch`: the same family once the architecture is taken out of the name
   (`names.architecture_neutral`: `volta_sgemm_128x64_nn` = `ampere_sgemm_128x64_nn`), for
   sources that record no launching operator (nsys, rocprof, ncu);
6. `op`: the same category and launching operator whatever the input dims — one side recorded no
   shapes, or the shapes changed (another batch size); collectives are left to their names;
7. what is left is `new` (only after) or `vanished` (only before), grouped by normalised name.

`movers` picks the largest changes that together explain at least MOVERS_SHARE of the gross
change (the sum of |Δ| over every kernel, so that gains and losses both count).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gpuscope.analysis.categories import CATEGORIES
from gpuscope.diff import names
from gpuscope.diff.significance import MIN_SAMPLES, Welch, welch
from gpuscope.trace.model import I64, KERNEL

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

MATCHES = ("exact", "name", "family", "shape", "arch", "op", "new", "vanished")
MOVERS_SHARE = 0.9


@dataclass(frozen=True)
class Shape:
    """The operator that launched a kernel and its recorded inputs (JSON text, "" if none)."""

    op: str
    dims: str
    types: str


@dataclass(frozen=True)
class Atom:
    """The calls of one kernel name, in one category, from one operator shape."""

    name: str
    category: str
    shape: Shape | None
    count: int
    time_ns: int  # -1: the source has no durations
    durations: I64  # per call; empty for summary-only sources


@dataclass(frozen=True)
class Side:
    """What one profile contributes to a change: its atoms, summed."""

    atoms: tuple[Atom, ...]

    @property
    def count(self) -> int:
        return sum(a.count for a in self.atoms)

    @property
    def time_ns(self) -> int:
        """Total device time (-1 when a duration is unknown)."""
        if any(a.time_ns < 0 for a in self.atoms):
            return -1
        return sum(a.time_ns for a in self.atoms)

    @property
    def names(self) -> list[str]:
        """Distinct kernel names, most time first."""
        totals: dict[str, int] = {}
        for atom in self.atoms:
            totals[atom.name] = totals.get(atom.name, 0) + max(atom.time_ns, 0)
        return sorted(totals, key=lambda n: -totals[n])

    @property
    def durations(self) -> I64:
        if not self.atoms:
            return np.zeros(0, np.int64)
        return np.concatenate([a.durations for a in self.atoms])


@dataclass(frozen=True)
class KernelChange:
    """One matched kernel (or kernel group) and how it changed from before to after."""

    key: str  # what matched: the (normalised) name, or "category: op dims" for a shape match
    match: str  # one of MATCHES
    category: str
    before: Side
    after: Side
    shape: Shape | None = None  # the shared shape of a shape match

    @property
    def known(self) -> bool:
        return self.before.time_ns >= 0 and self.after.time_ns >= 0

    @property
    def delta_ns(self) -> int | None:
        return self.after.time_ns - self.before.time_ns if self.known else None

    @property
    def delta_count(self) -> int:
        return self.after.count - self.before.count

    @property
    def per_call(self) -> Welch | None:
        """Welch's test of the mean call duration, when each side has MIN_SAMPLES calls."""
        before, after = self.before.durations, self.after.durations
        if not self.known or min(len(before), len(after)) < MIN_SAMPLES:
            return None
        return welch(before.tolist(), after.tolist())


# -- atoms -------------------------------------------------------------------------------------


def atoms(a: Analysis) -> list[Atom]:
    """The kernels of one analysed trace as atoms (from summary rows when it has no dispatches)."""
    trace = a.trace
    rows = np.flatnonzero(trace.gpu.kind == KERNEL)
    if len(rows) == 0:
        return [Atom(g.name, g.category, None, g.count, g.total_ns, np.zeros(0, np.int64))
                for g in a.groups]  # fmt: skip
    owner = a.owners[rows]
    ops = trace.ops
    has_owner = owner >= 0
    safe = np.where(has_owner, owner, 0)
    columns = np.stack(
        [
            trace.gpu.name[rows],
            a.classes.category[rows],
            np.where(has_owner, ops.name[safe] if len(ops) else -1, -1),
            np.where(has_owner, ops.input_dims[safe] if len(ops) else -1, -1),
            np.where(has_owner, ops.input_types[safe] if len(ops) else -1, -1),
        ],
        axis=1,
    ).astype(np.int64)
    keys, inverse = np.unique(columns, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    durations = trace.gpu.dur[rows]
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(keys) + 1))
    return [
        _atom(a, key, durations[order[bounds[i] : bounds[i + 1]]]) for i, key in enumerate(keys)
    ]


def _atom(a: Analysis, key: I64, durations: I64) -> Atom:
    text = a.trace.names
    name, category, op, dims, types = (int(v) for v in key)
    shape = None
    if op >= 0:
        shape = Shape(text[op], _canonical(text, dims), _canonical(text, types))
    known = bool((durations >= 0).all())
    return Atom(
        name=text[name],
        category=CATEGORIES[category],
        shape=shape,
        count=len(durations),
        time_ns=int(durations.sum()) if known else -1,
        durations=durations if known else np.zeros(0, np.int64),
    )


def _canonical(text: tuple[str, ...], index: int) -> str:
    """Recorded inputs as compact JSON, however the profiler spaced them ("" when none)."""
    if index < 0:
        return ""
    try:
        return json.dumps(json.loads(text[index]), separators=(",", ":"))
    except ValueError:
        return text[index]


# -- matching ----------------------------------------------------------------------------------


def match(before: list[Atom], after: list[Atom]) -> list[KernelChange]:
    """Every kernel of both sides in exactly one change, largest |Δ time| first."""
    changes: list[KernelChange] = []
    stages: tuple[tuple[str, Callable[[Atom], str | None]], ...] = (
        ("exact", lambda atom: names.exact(atom.name)),
        ("name", lambda atom: names.normalised(atom.name)),
        ("family", lambda atom: names.family(atom.name)),
        ("shape", _shape_key),
        ("arch", _arch_key),
        ("op", _op_key),
    )
    for kind, key in stages:
        found, before, after = _stage(kind, key, before, after)
        changes += found
    changes += _leftovers("vanished", before, after=False)
    changes += _leftovers("new", after, after=True)
    return sorted(changes, key=_order)


def _shape_key(atom: Atom) -> str | None:
    """Category, operator and input dims: only for kernels whose launching operator is known."""
    if atom.shape is None:
        return None
    dims = f" {atom.shape.dims}" if atom.shape.dims else ""
    return f"{atom.category}: {atom.shape.op}{dims}"


def _arch_key(atom: Atom) -> str | None:
    """Category and the architecture-neutral family, for names that carry an architecture."""
    neutral = names.architecture_neutral(atom.name)
    return f"{atom.category}: {neutral}" if neutral is not None else None


def _op_key(atom: Atom) -> str | None:
    """Category and launching operator, dims left out; not for collectives, whose wrapper
    operator (`record_param_comms`) is the same for an all-reduce and a send / receive."""
    if atom.shape is None or atom.category == "communication":
        return None
    return f"{atom.category}: {atom.shape.op}"


def _stage(
    kind: str, key: Callable[[Atom], str | None], before: list[Atom], after: list[Atom]
) -> tuple[list[KernelChange], list[Atom], list[Atom]]:
    """Changes for the keys both sides have; the atoms still unmatched on each side."""
    left, right = _group(before, key), _group(after, key)
    shared = [k for k in left if k in right]
    changes = [_change(k, kind, Side(tuple(left[k])), Side(tuple(right[k]))) for k in shared]
    matched = set(shared)
    return (
        changes,
        [atom for atom in before if key(atom) not in matched],
        [atom for atom in after if key(atom) not in matched],
    )


def _group(atoms_: Iterable[Atom], key: Callable[[Atom], str | None]) -> dict[str, list[Atom]]:
    groups: dict[str, list[Atom]] = {}
    for atom in atoms_:
        found = key(atom)
        if found is not None:
            groups.setdefault(found, []).append(atom)
    return groups


def _leftovers(kind: str, atoms_: list[Atom], after: bool) -> list[KernelChange]:
    groups = _group(atoms_, lambda atom: names.normalised(atom.name))
    empty = Side(())
    return [
        _change(k, kind, empty if after else Side(tuple(g)), Side(tuple(g)) if after else empty)
        for k, g in groups.items()
    ]


def _change(key: str, kind: str, before: Side, after: Side) -> KernelChange:
    largest = max(before.atoms + after.atoms, key=lambda atom: max(atom.time_ns, 0))
    shape = largest.shape if kind == "shape" else None
    if kind == "op" and largest.shape is not None:  # the dims differ or one side has none
        shape = Shape(largest.shape.op, "", "")
    return KernelChange(key, kind, largest.category, before, after, shape)


def _order(change: KernelChange) -> tuple[int, int, str]:
    delta = change.delta_ns
    if delta is None:
        return (1, -abs(change.delta_count), change.key)
    return (0, -abs(delta), change.key)


def movers(changes: list[KernelChange], share: float = MOVERS_SHARE) -> int:
    """How many of the first `changes` (sorted by |Δ|) explain `share` of the gross change."""
    deltas = [abs(c.delta_ns) for c in changes if c.delta_ns is not None]
    gross = sum(deltas)
    if gross == 0:
        return 0
    running = 0
    for count, delta in enumerate(deltas, 1):
        running += delta
        if running >= share * gross:
            return count
    return len(deltas)
