"""Nsight Compute's own rule rows beside gpuscope's label, and why the two may differ (`collect`
gathers the rows of each kernel).

The details page of `ncu --csv` carries ncu's rule results (`Rule Name`, `Rule Type`, `Rule
Description`, `Estimated Speedup Type`, `Estimated Speedup`; the ncu reader keeps them in
`meta.extra["ncu_rules"]`). Its speed-of-light rule, `SOLBottleneck`, names one bottleneck per
launch, in one of these phrasings (ncu 2023–2025):

- "This kernel grid is too small to fill the available resources on this device, resulting in
  only N full waves across all SMs" — a wave being SMs × the blocks one SM holds at once;
- "Memory is more heavily utilized than Compute" / "Compute is more heavily utilized than Memory";
- "… utilizing greater than 80.0% of the available compute or memory performance … Start by
  analyzing DRAM / workloads in the Compute Workload Analysis section";
- "Compute and Memory are well-balanced";
- "… low compute throughput and memory bandwidth utilization … below 60.0% of peak typically
  indicate latency issues".

>>> ncu_bottleneck([{"rule": "SOLBottleneck", "description": "Memory is more heavily utilized "
...                  "than Compute: Look at the Memory Workload Analysis section"}]).kind
'memory-bound'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuscope.analysis.grid import Fill
    from gpuscope.counters.label import Label

SOL_RULE = "SOLBottleneck"
_PHRASES = (  # (words of ncu's description, the bottleneck they name)
    ("too small to fill", "small grid"),
    ("memory is more heavily utilized", "memory-bound"),
    ("compute is more heavily utilized", "compute-bound"),
    ("well-balanced", "balanced"),
    ("latency issues", "latency-bound"),
    ("low compute throughput and memory", "latency-bound"),
)


@dataclass(frozen=True)
class Bottleneck:
    kind: str  # "small grid", "memory-bound", "compute-bound", "balanced", "latency-bound", "other"
    says: str  # ncu's first sentence


def ncu_bottleneck(rules: list[dict[str, Any]]) -> Bottleneck | None:
    """What ncu's SOLBottleneck rule says, or None when it did not run (no SpeedOfLight section)."""
    rule = next((r for r in rules if r.get("rule") == SOL_RULE), None)
    if rule is None:
        return None
    text = str(rule.get("description", ""))
    says = text.split(": ")[0].split(". ")[0].rstrip(".")
    low = text.lower()
    if "greater than 80" in low:  # at the roof of its busiest unit
        kind = "memory-bound" if "memory workload" in low or "dram" in low else "compute-bound"
        return Bottleneck(kind, says)
    for words, kind in _PHRASES:
        if words in low:
            return Bottleneck(kind, says)
    return Bottleneck("other", says)


def compare(
    label: Label,
    ncu: Bottleneck,
    fill: Fill | None,
    sol: dict[str, float],
    blocks: int = -1,
) -> dict[str, Any]:
    """gpuscope's label beside ncu's bottleneck: whether they agree, and why not where they
    differ. `sol` holds ncu's own % of peak sustained (`memory_…`, `sm_…`); `blocks` the grid's
    blocks (-1: unknown)."""
    agrees = label.label == ncu.kind
    why = f"both call it {label.label}" if agrees else _why(label, ncu, fill, sol, blocks)
    return {"bottleneck": ncu.kind, "says": ncu.says, "agrees": agrees, "explanation": why}


def _why(
    label: Label, ncu: Bottleneck, fill: Fill | None, sol: dict[str, float], blocks: int
) -> str:
    memory = sol.get("memory_throughput_pct_of_peak_sustained")
    sm = sol.get("sm_throughput_pct_of_peak_sustained")
    shares = (
        f"memory {memory:.3g}%, SM {sm:.3g}% of peak sustained"
        if memory is not None and sm is not None
        else "its throughput shares"
    )
    if ncu.kind == "small grid":
        return _why_small(label, fill, blocks)
    if label.label == "small grid":
        return (
            f"gpuscope: {label.why}; ncu ranks the units by {shares} and does not weigh the "
            "idle SMs — on a grid this small no unit can get near its peak"
        )
    if ncu.kind == "latency-bound":
        return (
            f"ncu calls a kernel latency-bound when neither its memory nor its SM throughput "
            f"reaches 60% of peak sustained ({shares}); gpuscope names the roof it is nearer "
            f"to ({label.why}) — that far below it, latency limits it, as ncu says"
        )
    if ncu.kind == "balanced":
        return (
            f"ncu finds memory and SM throughput close ({shares}); gpuscope names one side "
            f"({label.why})"
        )
    if label.label == "unknown":
        return f"gpuscope cannot place it ({label.why}); ncu ranks the units by {shares}"
    return (
        f"gpuscope places it by the roofline ({label.why}); ncu ranks its busiest units by "
        f"{shares}: traffic the DRAM roofline does not count (L1 / L2 / shared memory) can keep "
        "memory units busier than the DRAM bytes suggest, and pipes other than the FLOP "
        "counters' can keep the SMs busy"
    )


def _why_small(label: Label, fill: Fill | None, blocks: int) -> str:
    """ncu says the grid is too small, gpuscope does not."""
    grid = f"the grid of {blocks:,} blocks" if blocks > 0 else "the grid"
    if fill is None:
        return (
            f"this file does not give the GPU's SM count (no LaunchStats section, no device name; "
            f"`--device NAME` gives it), so gpuscope cannot weigh {grid} and its "
            f"{label.label} only says which unit is busier ({label.why}); ncu, which knows the "
            "GPU, finds the grid short of one full wave"
        )
    if fill.resident:
        short = (
            f"a full wave is {fill.units:,} {fill.unit}s × {fill.resident} resident blocks, "
            f"and {grid} is {fill.waves:.2g} of one"
        )
    else:
        short = (
            f"a full wave is {fill.units:,} {fill.unit}s × the blocks one {fill.unit} holds at "
            f"once, which {grid} does not reach"
        )
    return (
        f"ncu calls the grid too small because {short}; every {fill.unit} gets a block here "
        f"(no {fill.unit} idles), so gpuscope judges it by its roof ({label.label}: {label.why})"
    )
