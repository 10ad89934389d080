"""The detectors of `patterns`: each looks for one known slow pattern and returns what it found
(the fields of a `patterns.Detected`) or None below its stated threshold."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import numpy as np

from gpuscope.analysis._finding import us
from gpuscope.analysis._nesting import Nesting, PythonLines
from gpuscope.analysis._opinputs import names_matching, per_op
from gpuscope.analysis._unique import unique
from gpuscope.analysis.categories import CATEGORIES
from gpuscope.analysis.patterns.context import Context, Found, found
from gpuscope.analysis.patterns.fp32 import fp32_matmul
from gpuscope.document.units import time_ns
from gpuscope.trace.model import ANNOTATION, DTOD, I64, MEMCPY, Mask

FOREACH_FIRES, FOREACH_WARNS, FOREACH_MIN_KERNELS = 0.01, 0.10, 10
NORM_FIRES, NORM_WARNS, NORM_MIN_CHAINS = 0.02, 0.05, 2
NHWC_FIRES, NHWC_WARNS = 0.01, 0.05
STAGING_FIRES, STAGING_WARNS, STAGING_MIN = 0.01, 0.05, 10
STAGING_WINDOW_NS = 50_000  # a copy ending / starting this close to an all-reduce is its staging

FUSED_OPS = ("aten::_fused_adam_", "aten::_fused_adamw_", "aten::_fused_sgd_",
             "aten::_fused_adagrad_")  # fmt: skip
FUSED_KERNEL = re.compile(r"fused_?(adam|sgd|adagrad)|FusedOptimizer", re.IGNORECASE)
ALL_REDUCE = re.compile(r"all_?reduce", re.IGNORECASE)
DDP = re.compile(r"DistributedDataParallel|Reducer|DDP", re.IGNORECASE)
NHWC = re.compile(r"nchw_?to_?nhwc|nhwc_?to_?nchw|nchw2nhwc|nhwc2nchw", re.IGNORECASE)
# op name -> one symbol, for matching normalisation chains on each thread's kernel-launching ops
SYMBOLS = {
    "aten::pow": "P", "aten::mean": "M", "aten::add": "A", "aten::add_": "A", "aten::rsqrt": "R",
    "aten::mul": "X", "aten::mul_": "X", "aten::copy_": "C", "aten::_to_copy": "C",
    "aten::to": "C", "aten::sub": "S", "aten::sqrt": "Q", "aten::div": "D", "aten::div_": "D",
}  # fmt: skip
CHAINS = {
    "RMSNorm": re.compile(r"C?PMARX(?:C?X)?"),  # pow, mean, add eps, rsqrt, mul (× weight)
    "LayerNorm": re.compile(r"C?MS[PX]MA[QR]S?[DX](?:XA)?"),  # mean, sub, square, mean, ...
}


# -- foreach optimizer ------------------------------------------------------------------------


def foreach_optimizer(c: Context) -> Found | None:
    trace = c.a.trace
    if names_matching(trace, lambda n: n in FUSED_OPS) or c.kernel_names(FUSED_KERNEL).any():
        return None
    mask = c.owned_by(names_matching(trace, lambda n: n.startswith("aten::_foreach_")))
    steps = _optimizer_steps(c)
    if len(steps):
        mask &= _inside(c, steps)
    time = c.time(mask)
    share = c.share(time)
    if share < FOREACH_FIRES or mask.sum() < FOREACH_MIN_KERNELS:
        return None
    names = trace.names
    optimizers = sorted({names[n].split("#")[1].split(".")[0] for n in trace.ops.name[steps]})
    scope = (
        f"in {', '.join(optimizers)}.step"
        if optimizers
        else "(no Optimizer.step ranges recorded: clipping / zero_grad foreach ops may be in it)"
    )
    ops = Counter(names[n] for n in trace.ops.name[unique(c.owner[mask])])
    return found(
        "foreach-optimizer",
        "optimizer runs as foreach ops, not fused",
        time,
        share,
        c.severity(share, FOREACH_WARNS),
        f"the optimizer update runs as {sum(ops.values()):,} foreach ops "
        f"({', '.join(sorted(ops))}) {scope}: {int(mask.sum()):,} multi_tensor_apply kernels, "
        f"{time_ns(time)}, {share:.1%} of kernel time, and no fused optimizer — fires at "
        f"≥ {FOREACH_FIRES:.0%}, warning at ≥ {FOREACH_WARNS:.0%} (a fused step does the whole "
        "update in one pass over each tensor chunk)",
        f"Create the optimizer with fused=True (torch.optim.{(optimizers or ['AdamW'])[0]}"
        "(params, ..., fused=True); Adam, AdamW, SGD and Adagrad support it on CUDA), or "
        "torch.compile the optimizer step.",
        {
            "ops": dict(ops),
            "kernels": int(mask.sum()),
            "time_us": us(time),
            "optimizers": optimizers,
            "top_kernels": c.top_kernels(mask, 3),
        },
    )


def _optimizer_steps(c: Context) -> I64:
    ops, names = c.a.trace.ops, c.a.trace.names
    annotated = ops.kind == ANNOTATION
    wanted = [i for i in unique(ops.name[annotated]) if names[i].startswith("Optimizer.step#")]
    return np.flatnonzero(annotated & np.isin(ops.name, wanted))


def _inside(c: Context, ranges: I64) -> Mask:
    """GPU rows whose launching operator lies inside one of the given ranges (op rows)."""
    ops = c.a.trace.ops
    nesting = Nesting(ops.start[ranges], ops.end[ranges], ops.tid[ranges])
    rows = unique(c.owner[c.owner >= 0])
    inside = rows[nesting.innermost(ops.tid[rows], ops.start[rows], ops.end[rows]) >= 0]
    result: Mask = (c.owner >= 0) & np.isin(c.owner, inside)
    return result


# -- unfused norms ----------------------------------------------------------------------------


def unfused_norm(c: Context) -> Found | None:
    ops = c.a.trace.ops
    rows = unique(c.owner[c.kernels & (c.owner >= 0)])
    rows = rows[np.lexsort((ops.start[rows], ops.tid[rows]))]
    text = _symbols(c, rows)
    chains = [
        (label, rows[m.start() : m.end()])
        for label, pattern in CHAINS.items()
        for m in pattern.finditer(text)
    ]
    if len(chains) < NORM_MIN_CHAINS:
        return None
    dur = np.where(c.kernels, c.a.trace.gpu.dur, 0)
    members = np.concatenate([r for _, r in chains])
    time = int(per_op(c.owner, dur, len(ops))[members].sum())
    share = c.share(time)
    if share < NORM_FIRES:
        return None
    kernels = int(per_op(c.owner, c.kernels.astype(float), len(ops))[members].sum())
    casts = members[np.isin(ops.name[members], names_matching(c.a.trace, _is_cast))]
    cast_time = int(per_op(c.owner, dur, len(ops))[casts].sum())
    firsts = np.array([r[0] for _, r in chains], np.int64)
    lines = Counter(ln for ln in PythonLines(c.a.trace).lines(firsts) if ln)
    line = lines.most_common(1)[0][0] if lines else ""
    kinds = Counter(label for label, _ in chains)
    return found(
        "unfused-norm",
        "normalisation computed by separate elementwise kernels",
        time,
        share,
        c.severity(share, NORM_WARNS),
        f"{len(chains):,} normalisations run unfused ("
        + ", ".join(f"{n}× {k}" for k, n in kinds.items())
        + f"): {kernels / len(chains):.1f} kernels each, {time_ns(time)}, {share:.1%} of "
        f"kernel time{f', at {line}' if line else ''}"
        + (
            f" (of it, {time_ns(cast_time)} are the chains' dtype casts, which "
            "dtype-conversions counts too)"
            if cast_time
            else ""
        )
        + f" — fires at ≥ {NORM_FIRES:.0%}, warning at ≥ {NORM_WARNS:.0%} (one fused kernel "
        "replaces each chain and reads the tensor once)",
        "Use a fused norm: torch.compile the model (Inductor fuses each chain into one kernel), "
        "or a fused RMSNorm / LayerNorm kernel (nn.LayerNorm is one kernel; Apex FusedRMSNorm, "
        "Liger, Transformer Engine; aiter / vLLM kernels on ROCm)."
        + (
            f" The trace is cpu-bound, so the {kernels - len(chains):,} launches it removes count "
            "as much as the kernel time."
            if c.a.verdict.bound == "cpu-bound"
            else ""
        ),
        {
            "chains": dict(kinds),
            "kernels": kernels,
            "time_us": us(time),
            "cast_time_us": us(cast_time),
            "python": line or None,
        },
    )


def _is_cast(name: str) -> bool:
    return SYMBOLS.get(name) == "C"


def _symbols(c: Context, rows: I64) -> str:
    """One character per operator row ('.' for others), '|' between threads."""
    names, ops = c.a.trace.names, c.a.trace.ops
    lookup = {int(i): SYMBOLS.get(names[i], ".") for i in unique(ops.name[rows])}
    symbols = [lookup[n] for n in ops.name[rows].tolist()]
    tids = ops.tid[rows]
    for i in reversed(np.flatnonzero(tids[1:] != tids[:-1]).tolist()):
        symbols.insert(i + 1, "|")
    return "".join(symbols)


# -- channels last ----------------------------------------------------------------------------


def channels_last(c: Context) -> Found | None:
    mask = c.kernel_names(NHWC)
    time = c.time(mask)
    share = c.share(time)
    if share < NHWC_FIRES:
        return None
    conv = c.a.categories["convolution"][1]
    return found(
        "channels-last",
        "NCHW↔NHWC transposes around convolutions",
        time,
        share,
        c.severity(share, NHWC_WARNS),
        f"{int(mask.sum()):,} layout-transpose kernels (nchwToNhwc / nhwcToNchw) take "
        f"{time_ns(time)}, {share:.1%} of kernel time (convolutions: "
        f"{time_ns(conv)}): tensor-core convolutions work in NHWC and transpose NCHW "
        f"tensors before and after — fires at ≥ {NHWC_FIRES:.0%}, warning at ≥ {NHWC_WARNS:.0%}",
        "Use channels_last: model = model.to(memory_format=torch.channels_last) and "
        "x = x.to(memory_format=torch.channels_last) for the inputs, so activations stay NHWC.",
        {"top_kernels": c.top_kernels(mask, 4), "time_us": us(time), "convolution_us": us(conv)},
    )


# -- all-reduce staging copies ----------------------------------------------------------------


def allreduce_staging(c: Context) -> Found | None:
    gpu = c.a.trace.gpu
    reduce = c.kernel_names(ALL_REDUCE) & (
        c.a.classes.category == CATEGORIES.index("communication")
    )
    copies = np.flatnonzero((gpu.kind == MEMCPY) & (gpu.copy == DTOD))
    if not reduce.any() or len(copies) < STAGING_MIN:
        return None
    device = gpu.device.astype(np.int64)
    near = copies[_near(gpu.start, gpu.end, device, np.flatnonzero(reduce), copies)]
    time = int(gpu.dur[near].sum())
    share = c.share(time)
    if len(near) < STAGING_MIN or share < STAGING_FIRES:
        return None
    ddp = _mentions(c, DDP)
    moved = int(gpu.bytes[near][gpu.bytes[near] > 0].sum())
    return found(
        "allreduce-staging",
        "device-to-device copies staged around all-reduces",
        time,
        share,
        c.severity(share, STAGING_WARNS),
        f"{len(near):,} device-to-device copies ({moved / 2**20:,.1f} MiB, {time / 1000:,.1f} "
        f"µs, equal to {share:.1%} of kernel time) run within {STAGING_WINDOW_NS // 1000} µs of "
        f"{int(reduce.sum()):,} all-reduce kernels: gradients copied into and out of "
        f"communication buffers — fires at ≥ {STAGING_FIRES:.0%}, warning at ≥ "
        f"{STAGING_WARNS:.0%}",
        ("" if ddp else "If this is DistributedDataParallel: ")
        + "DistributedDataParallel(model, gradient_as_bucket_view=True) makes the gradients "
        "views into the all-reduce buckets, which removes these copies (and the gradients' "
        "second copy in memory); a hand-written all-reduce should reduce one flat buffer the "
        "gradients already live in.",
        {
            "copies": len(near),
            "bytes": moved,
            "time_us": us(time),
            "ddp_seen": ddp,
            "all_reduce_kernels": int(reduce.sum()),
        },
    )


def _near(start: I64, end: I64, device: I64, reduce: I64, copies: I64) -> Mask:
    """Which copies lie within the window of an all-reduce kernel on their device."""
    result = np.zeros(len(copies), bool)
    for dev in unique(device[copies]).tolist():
        mine = device[copies] == dev
        rs = reduce[device[reduce] == dev]
        if len(rs) == 0:
            continue
        starts, ends = np.sort(start[rs]), np.sort(end[rs])
        cs, ce = start[copies[mine]], end[copies[mine]]
        after = np.searchsorted(starts, cs)  # the next all-reduce starting at or after the copy
        gap_next = np.where(
            after < len(starts), starts[np.minimum(after, len(starts) - 1)] - ce, 2**62
        )
        before = np.searchsorted(ends, ce, "right") - 1  # the last all-reduce ending before
        gap_prev = np.where(before >= 0, cs - ends[np.maximum(before, 0)], 2**62)
        result[mine] = (gap_next <= STAGING_WINDOW_NS) | (gap_prev <= STAGING_WINDOW_NS)
    return result


def _mentions(c: Context, pattern: re.Pattern[str]) -> bool:
    names, ops = c.a.trace.names, c.a.trace.ops
    return any(pattern.search(names[i]) for i in unique(ops.name))


def applies(rule: Callable[[Context], Found | None], c: Context) -> bool:
    """Whether the trace holds what `rule` looks at: operator links for the op-based ones,
    copies for the staging one; the name-based ones need kernels only."""
    if rule in (foreach_optimizer, unfused_norm):
        return bool((c.owner >= 0).any())
    if rule is allreduce_staging:
        return c.a.trace.provides("copies")
    return True


RULES: tuple[Callable[[Context], Found | None], ...] = (
    foreach_optimizer,
    unfused_norm,
    channels_last,
    fp32_matmul,
    allreduce_staging,
)
