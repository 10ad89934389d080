"""Known slow patterns, each detected from evidence in the trace with the time it costs here.

- foreach-optimizer: `aten::_foreach_*` kernels inside Optimizer.step and no fused optimizer
  op → fused=True;
- unfused-norm: pow→mean→add→rsqrt→mul (RMSNorm) or mean→sub→pow→mean→add→sqrt→div
  (LayerNorm) chains of kernels → a fused norm / torch.compile;
- channels-last: cuDNN `nchwToNhwcKernel` / `nhwcToNchwKernel` around convolutions;
- fp32-matmul: compute-bound GEMM / convolution kernels in FP32 (recorded float inputs, else
  sgemm / scudnn / Tensile S names) on a device with faster bf16/fp16 tensor cores → AMP, TF32;
- allreduce-staging: device-to-device memcpys next to all-reduce kernels →
  gradient_as_bucket_view=True.

A pattern is reported only above the share of kernel time its message states; it is a warning
only when fixing it would save about 5 % of kernel time or more (see each WARNS).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuscope.analysis._finding import Finding, finding, us
from gpuscope.analysis.patterns import rules
from gpuscope.analysis.patterns.context import Context

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis
    from gpuscope.document.model import Section

NAME = "patterns"


@dataclass(frozen=True)
class Detected:
    """One pattern found: what it costs, how bad, and the evidence it rests on."""

    id: str
    title: str
    time_ns: int  # kernel (or copy) time the pattern accounts for
    share: float  # of kernel time
    severity: str
    message: str
    action: str
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    found: list[Detected]
    checked: list[str]  # the patterns looked for (those the trace has inputs for)
    kernel_ns: int


def analyse(a: Analysis) -> Result | None:
    """None without per-kernel durations: every pattern is weighed by kernel time."""
    if not a.inputs.durations or not a.kernel_times_known or a.kernel_ns <= 0:
        return None
    context = Context.of(a)
    applicable = [rule for rule in rules.RULES if rules.applies(rule, context)]
    found = [d for rule in applicable if (d := rule(context)) is not None]
    return Result(
        [Detected(**d) for d in sorted(found, key=lambda d: -d["time_ns"])],
        [r.__name__.replace("_", "-") for r in applicable],
        a.kernel_ns,
    )


def to_dict(result: Result) -> dict[str, Any]:
    return {
        "kernel_time_us": us(result.kernel_ns),
        "checked": result.checked,
        "found": [
            {
                "id": d.id,
                "title": d.title,
                "severity": d.severity,
                "time_us": us(d.time_ns),
                "share": round(d.share, 6),
                "message": d.message,
                "action": d.action,
                "evidence": d.evidence,
            }
            for d in result.found
        ],
    }


def findings(a: Analysis, result: Result) -> list[Finding]:
    """The patterns are PyTorch's (their actions name its APIs): a finding for a PyTorch program
    only; the section still lists what was found in any program."""
    if not a.program.is_("pytorch"):
        return []
    return [
        finding(
            d.id,
            d.severity,
            d.message,
            d.action,
            d.evidence,
            impact_ns=d.time_ns,
            cause=PATTERN_CAUSE.get(d.id),
        )
        for d in result.found
    ]


PATTERN_CAUSE = {
    "foreach-optimizer": "fusion",
    "unfused-norm": "fusion",
    "channels-last": "layout",
    "fp32-matmul": "precision",
    "allreduce-staging": "copies",
}


def section(part: dict[str, Any]) -> Section:
    from gpuscope.document import units as fmt
    from gpuscope.document.model import Cell, Section, Table, Text

    rows = tuple(
        (
            Cell(p["id"], code=True),
            Cell(p["severity"]),
            Cell(fmt.duration(p["time_us"])),
            Cell(fmt.percent(p["share"])),
            Cell(p["title"], full=p["message"]),
        )
        for p in part["found"]
    )
    table = Table(
        ("pattern", "severity", "time", "share", "what"), rows, (False, False, True, True, False)
    )
    checked = Text("Looked for: " + ", ".join(part["checked"]) + ".")
    blocks = (table, checked) if rows else (Text("No known slow pattern found."), checked)
    return Section("Known slow patterns", blocks, anchor="patterns")
