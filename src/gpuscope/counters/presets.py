"""Counter sets to collect, derived from the metrics they feed: `roofline`, `memory`,
`compute`, `all`.

For each metric the first formula whose counters this GPU has is taken (metrics it cannot
compute are named, not guessed), following `ratio` formulas to the metrics they read.

>>> from gpuscope.counters.capability import capability_for
>>> from gpuscope.counters.metrics import family_for
>>> needed = preset_counters("roofline", family_for("gfx90a"), capability_for("gfx90a"))
>>> "SQ_INSTS_VALU_MFMA_MOPS_F16" in needed.counters, needed.impossible
(True, ())
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuscope.counters.capability import Capability
from gpuscope.counters.evaluate import DURATION
from gpuscope.counters.metrics import Family

PRESETS: dict[str, tuple[str, ...]] = {
    "roofline": ("flops", "bytes_dram", "bytes_l2", "matrix_instructions"),
    "memory": ("bytes_dram", "bytes_l2", "bytes_l1", "bytes_lds", "l1_hit_rate", "l2_hit_rate",
               "lds_bank_conflict_share", "sol_dram", "sol_memory"),
    "compute": ("flops", "matrix_instructions", "valu_thread_efficiency", "mix_valu", "mix_mfma",
                "mix_salu", "mix_vmem", "mix_lds", "mix_smem", "mix_branch", "mix_fma",
                "mix_alu", "mix_lsu", "mix_tensor", "stall_dependency", "stall_issue",
                "stall_lds", "stall_long_scoreboard", "stall_barrier", "waves", "sol_sm",
                "achieved_occupancy", "theoretical_occupancy"),
}  # fmt: skip
CORE = frozenset({"flops", "bytes_dram"})  # named as impossible where a family lacks them


@dataclass(frozen=True)
class Needed:
    counters: tuple[str, ...]  # in the order the metrics name them
    impossible: tuple[str, ...]  # metrics of the preset this GPU cannot compute


def preset_counters(name: str, family: Family, cap: Capability | None) -> Needed:
    """The counters behind preset `name` (or every metric for "all") on `cap`'s GPU; without a
    capability (NVIDIA) each metric's first formula."""
    wanted = [m.id for m in family.metrics] if name == "all" else list(PRESETS[name])
    counters: dict[str, None] = {}
    impossible = []
    for metric_id in wanted:
        if metric_id not in family.ids:
            impossible += [metric_id] if metric_id in CORE else []
            continue
        found = _counters(family, metric_id, cap, set())
        if found is None:
            impossible.append(metric_id)
        else:
            counters.update(dict.fromkeys(found))
    return Needed(tuple(counters), tuple(impossible))


def _counters(
    family: Family, metric_id: str, cap: Capability | None, seen: set[str]
) -> list[str] | None:
    if metric_id in seen:
        return []
    seen.add(metric_id)
    for alt in family.metric(metric_id).alternatives:
        found: list[str] = []
        for name in sorted(alt.formula.names, key=lambda n: (alt.formula.text.find(n), n)):
            if name == DURATION or name in family.constants:
                continue
            if alt.combine == "ratio" and name in family.ids:
                inner = _counters(family, name, cap, seen)
                if inner is None:
                    break
                found += inner
            elif cap is None or cap.supports(name):
                found.append(name)
            else:
                break
        else:
            return found
    return None
