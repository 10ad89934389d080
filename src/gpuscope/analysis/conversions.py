"""Real dtype conversions, told apart from same-dtype copies by the operators' recorded types.

Copy kernels are launched by the innermost operator: `x.float()` is `aten::to → aten::_to_copy →
aten::copy_` and its kernel belongs to copy_. Each copy operator that launched device work is
classified once per distinct recorded input:

- `aten::copy_(dst, src)` converts when the two "Input type"s differ;
- `aten::_to_copy` / `aten::to` convert when the dtype code in "Concrete Inputs" differs from
  the input's type (c10::ScalarType codes: 5 half, 6 float, 15 bfloat16, ...);
- clone, contiguous, cat, slice_backward, constant_pad_nd and index copies move data in one
  dtype: layout / copy work.

Host↔device copies launched by these operators (`.cpu()`, `.cuda()`) are transfers, counted
apart: the core host-device-copies finding covers them. Rows name the outermost copy operator
(`aten::to`, `aten::contiguous`) and, when the trace has Python frames, the user's line.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis._finding import Finding, finding, us
from gpuscope.analysis._nesting import Nesting, PythonLines
from gpuscope.analysis._opinputs import Inputs, Recorded, distinct, dtype_code, short
from gpuscope.analysis._unique import unique, unique_inverse
from gpuscope.document.units import duration, time_ns
from gpuscope.trace.model import DTOD, KERNEL, MEMCPY, OP, Trace

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis
    from gpuscope.document.model import Section

NAME = "conversions"
CONVERSION_FIRES = 0.01  # share of kernel time
CONVERSION_WARNS = 0.05
LAYOUT_FIRES = 0.05
TOP = 20
CONVERT_OPS = ("aten::copy_", "aten::_to_copy", "aten::to")
LAYOUT_OPS = (
    "aten::clone", "aten::contiguous", "aten::cat", "aten::_cat", "aten::stack",
    "aten::slice_backward", "aten::select_backward", "aten::constant_pad_nd", "aten::index_copy_",
    "aten::index_put_", "aten::_index_put_impl_", "aten::narrow_copy", "aten::repeat",
    "aten::_copy_from", "aten::_copy_from_and_resize", "aten::copy", "aten::split_with_sizes_copy",
    "aten::unbind_copy", "aten::permute_copy", "aten::transpose_copy", "aten::expand_copy",
)  # fmt: skip
# operators the user calls that wrap a copy: the row names the outermost one
WRAPPERS = ("aten::to", "aten::_to_copy", "aten::contiguous", "aten::clone", "aten::type_as")
CONVERSION, COPY, UNKNOWN = "conversion", "copy", "unknown"


@dataclass(frozen=True)
class Row:
    kind: str  # conversion, copy, or unknown (types not recorded)
    op: str  # "aten::to → aten::copy_"
    source: str  # dtype names ('' when unknown)
    target: str
    shape: str
    line: str  # the user's Python line, '' without frames
    calls: int
    kernels: int
    time_ns: int


@dataclass(frozen=True)
class Result:
    rows: list[Row]  # largest time first
    kernel_ns: int
    transfers: tuple[int, int]  # host<->device copies launched by these ops: count, time
    memcpy_dtod: tuple[int, int]  # same-dtype DtoD memcpys (not kernel time): count, time
    python: bool  # the trace has Python frames

    def time(self, kind: str) -> int:
        return sum(r.time_ns for r in self.rows if r.kind == kind)


def analyse(a: Analysis) -> Result | None:
    """None when no copy operator launched linked device work (or no operators at all)."""
    if not a.inputs.cpu or not a.inputs.durations or not a.kernel_times_known:
        return None
    trace = a.trace
    if len(trace.ops) == 0:
        return None
    gpu = trace.gpu
    owner = a.owners
    names = trace.names
    copy_names = [i for i in unique(trace.ops.name) if names[i] in CONVERT_OPS + LAYOUT_OPS]
    owned = (owner >= 0) & np.isin(trace.ops.name[np.maximum(owner, 0)], copy_names)
    if not owned.any():
        return None
    transfer = owned & (gpu.kind == MEMCPY) & (gpu.copy != DTOD)
    dtod = owned & (gpu.kind == MEMCPY) & (gpu.copy == DTOD)
    kernels = owned & (gpu.kind == KERNEL)
    if not kernels.any():
        return None  # only host<->device transfers: the core copy analysis covers them
    lines = PythonLines(trace)
    return Result(
        _rows(a, owner, kernels, lines),
        a.kernel_ns,
        (int(transfer.sum()), int(gpu.dur[transfer].sum())),
        (int(dtod.sum()), int(gpu.dur[dtod].sum())),
        lines.available,
    )


def _rows(a: Analysis, owner: Any, kernels: Any, python: PythonLines) -> list[Row]:
    trace = a.trace
    rows, inverse = unique_inverse(owner[kernels])
    time = np.bincount(inverse, weights=trace.gpu.dur[kernels], minlength=len(rows))
    count = np.bincount(inverse, minlength=len(rows))
    recorded = Recorded(trace)
    firsts, group = distinct(trace, rows)
    classes = [
        _classify(trace.names[trace.ops.name[r]], recorded.inputs(r)) for r in firsts.tolist()
    ]
    kinds = [classes[g] for g in group.tolist()]
    labels = _labels(trace, rows)
    lines = python.lines(rows)
    merged: dict[tuple[str, str, str, str, str, str], list[int]] = {}
    for i, (kind, source, target, shape) in enumerate(kinds):
        key = (kind, labels[i], source, target, shape, lines[i])
        entry = merged.setdefault(key, [0, 0, 0])
        entry[0] += 1
        entry[1] += int(count[i])
        entry[2] += int(time[i])
    found = [
        Row(*key, calls, kernels, time_ns) for key, (calls, kernels, time_ns) in merged.items()
    ]
    return sorted(found, key=lambda r: -r.time_ns)


def _classify(name: str, x: Inputs) -> tuple[str, str, str, str]:
    """(kind, source dtype, target dtype, shape) of one copy operator call."""
    shape = _shape(x)
    if name == "aten::copy_":
        source, target = x.dtype(1), x.dtype(0)
    elif name in ("aten::_to_copy", "aten::to"):
        source, target = x.dtype(0), _to_target(name, x)
    else:  # one dtype in and out (cat of mixed dtypes promotes, rarely): a copy either way
        dtype = x.dtype(0) or _first_dtype(x) or ""
        return COPY, dtype, dtype, shape
    if source is None or target is None:
        return UNKNOWN, source or "", target or "", shape
    return (CONVERSION if source != target else COPY), source, target, shape


def _to_target(name: str, x: Inputs) -> str | None:
    """The dtype an `aten::_to_copy` / `aten::to` call produces.

    _to_copy(self, dtype, layout, device, ...) holds the dtype at 1; aten::to has overloads:
    to(self, dtype, ...), to(self, dtype, layout, device, ...), to(self, device, dtype, ...)
    and to(self, other, ...) — the tensor `other` gives the dtype.
    """
    if not x.concrete:
        return None  # Concrete Inputs not recorded: the target dtype is unknown
    if name == "aten::to":
        other = x.dtype(1)
        if other is not None:
            return other
        if len(x.concrete) == 6 and x.value(1) == "":  # to(self, device, dtype, ...)
            return dtype_code(x.value(2)) or x.dtype(0)
    return dtype_code(x.value(1)) or x.dtype(0)  # no dtype argument: the same dtype


def _first_dtype(x: Inputs) -> str | None:
    """The dtype of a TensorList input ('TensorList' type text): cat records no element types."""
    return next((d for i in range(len(x.types)) if (d := x.dtype(i)) is not None), None)


def _shape(x: Inputs) -> str:
    for i in range(len(x.dims)):
        value = x.dims[i]
        if isinstance(value, list) and value:
            return str(value).replace(" ", "")
    return ""


def _labels(trace: Trace, rows: Any) -> list[str]:
    """'aten::to → aten::copy_' for each owner op: the outermost enclosing wrapper, if any."""
    ops = trace.ops
    wrap_names = [i for i in unique(ops.name) if trace.names[i] in WRAPPERS]
    wrappers = np.flatnonzero((ops.kind == OP) & np.isin(ops.name, wrap_names))
    own = [trace.names[ops.name[r]] for r in rows]
    if len(wrappers) == 0:
        return own
    nesting = Nesting(ops.start[wrappers], ops.end[wrappers], ops.tid[wrappers])
    inner = nesting.innermost(ops.tid[rows], ops.start[rows], ops.end[rows])
    outer = nesting.outermost(inner)
    labels = []
    for name, index in zip(own, outer.tolist(), strict=True):
        top = trace.names[ops.name[wrappers[index]]] if index >= 0 else name
        labels.append(name if top == name else f"{top} → {name}")
    return labels


# -- report ---------------------------------------------------------------------------------


def _row_dict(r: Row, kernel_ns: int) -> dict[str, Any]:
    return {
        "kind": r.kind,
        "op": r.op,
        "from": r.source or None,
        "to": r.target or None,
        "shape": r.shape,
        "python": r.line or None,
        "calls": r.calls,
        "kernels": r.kernels,
        "time_us": us(r.time_ns),
        "share": round(r.time_ns / kernel_ns, 6) if kernel_ns else None,
    }


def to_dict(result: Result) -> dict[str, Any]:
    kernel = result.kernel_ns

    def total(kind: str) -> dict[str, Any]:
        time = result.time(kind)
        calls = sum(r.calls for r in result.rows if r.kind == kind)
        return {
            "calls": calls,
            "time_us": us(time),
            "share": round(time / kernel, 6) if kernel else None,
        }

    return {
        "kernel_time_us": us(kernel),
        "conversions": total(CONVERSION),
        "copies": total(COPY),
        "unknown": total(UNKNOWN),
        "transfers": {"count": result.transfers[0], "time_us": us(result.transfers[1])},
        "dtod_memcpy": {"count": result.memcpy_dtod[0], "time_us": us(result.memcpy_dtod[1])},
        "python_frames": result.python,
        "thresholds": {
            "conversion": CONVERSION_FIRES,
            "conversion_warning": CONVERSION_WARNS,
            "layout": LAYOUT_FIRES,
        },
        "rows": [_row_dict(r, kernel) for r in result.rows[:TOP]],
        "rows_total": len(result.rows),
    }


def findings(a: Analysis, result: Result) -> list[Finding]:
    part = to_dict(result)
    found = [_conversions(part, result), _layout(part, result)]
    return [f for f in found if f is not None]


def _top(result: Result, kind: str, count: int = 6) -> list[dict[str, Any]]:
    return [_row_dict(r, result.kernel_ns) for r in result.rows if r.kind == kind][:count]


def _conversions(part: dict[str, Any], result: Result) -> Finding | None:
    conv = part["conversions"]
    share = conv["share"] or 0.0
    if share < CONVERSION_FIRES:
        return None
    top = _top(result, CONVERSION)
    pairs = _pairs(result)
    where = f"; most at {top[0]['python']}" if top and top[0]["python"] else ""
    return finding(
        "dtype-conversions",
        "warning" if share >= CONVERSION_WARNS else "info",
        f"dtype conversions take {share:.1%} of kernel time ({duration(conv['time_us'])} in "
        f"{conv['calls']:,} ops: {pairs}){where} — fires at ≥ {CONVERSION_FIRES:.0%}, warning "
        f"at ≥ {CONVERSION_WARNS:.0%}; same-dtype copies are not counted",
        "Keep tensors in the compute dtype: create inputs and weights in it once (model.to(dtype), "
        "autocast around the whole forward) instead of .float()/.to() per call; upcasts inside a "
        "norm or softmax are done in registers by a fused kernel (torch.compile, a fused "
        "RMSNorm / LayerNorm) instead of as separate conversion kernels.",
        {"share": share, "time_us": conv["time_us"], "by_pair": pairs, "top": top},
        impact_ns=conv["time_us"] * 1000,
        cause="dtype",
    )


def _pairs(result: Result) -> str:
    """'float32→bfloat16 651.6 µs, bfloat16→float32 303.3 µs' (the three largest)."""
    times: dict[str, int] = {}
    for r in result.rows:
        if r.kind == CONVERSION:
            key = f"{short(r.source)}→{short(r.target)}"
            times[key] = times.get(key, 0) + r.time_ns
    ranked = sorted(times.items(), key=lambda kv: -kv[1])[:3]
    return ", ".join(f"{k} {time_ns(v)}" for k, v in ranked)


def _layout(part: dict[str, Any], result: Result) -> Finding | None:
    copies = part["copies"]
    share = copies["share"] or 0.0
    if share < LAYOUT_FIRES:
        return None
    top = _top(result, COPY)
    ops = sorted({r["op"].split(" → ")[0] for r in top})
    where = "; ".join(_row_text(r) for r in top[:3])
    growth, pieces = _cat_kinds(result)
    grown = (
        f"; {time_ns(growth)} of it is a tensor grown by cat (the first input at least "
        "twice the second: a cache extended every step)"
        if growth
        else ""
    )
    return finding(
        "layout-copies",
        "info",
        f"same-dtype copies (layout / copy work: {', '.join(ops)}) take {share:.1%} of kernel "
        f"time ({duration(copies['time_us'])} in {copies['calls']:,} ops; largest: {where})"
        f"{grown} — fires at ≥ {LAYOUT_FIRES:.0%}",
        _layout_action(ops, growth, pieces),
        {
            "share": share,
            "time_us": copies["time_us"],
            "cat_growth_us": us(growth),
            "cat_other_us": us(pieces),
            "top": top,
        },
        impact_ns=copies["time_us"] * 1000,
        cause="layout",
    )


def _row_text(row: dict[str, Any]) -> str:
    """'aten::cat 254.5 µs at cache_utils.py(129): update' (the shape without Python frames)."""
    where = f"at {row['python']}" if row["python"] else row["shape"]
    return f"{row['op']} {duration(row['time_us'])} {where}".rstrip()


def _cat_kinds(result: Result) -> tuple[int, int]:
    """Kernel time of cat / stack copies that grow a tensor (two inputs, the first at least
    twice the second: a cache extended by the new entries) and of the other ones."""
    growth = other = 0
    for row in result.rows:
        if row.kind != COPY or not any(k in row.op for k in ("cat", "stack")):
            continue
        try:
            shapes = json.loads(row.shape)
        except ValueError:
            shapes = None
        sizes = (
            [math.prod(s) for s in shapes]
            if isinstance(shapes, list) and all(isinstance(s, list) for s in shapes)
            else []
        )
        if len(sizes) == 2 and sizes[1] > 0 and sizes[0] >= 2 * sizes[1]:
            growth += row.time_ns
        else:
            other += row.time_ns
    return growth, other


def _layout_action(ops: list[str], growth: int, pieces: int) -> str:
    advice = []
    if growth:
        advice.append(
            "a tensor grown by torch.cat every step (a dynamic KV cache) is copied whole each "
            "time: preallocate it and write the new slice in place (a static cache, e.g. "
            "transformers' cache_implementation='static')"
        )
    if pieces:
        advice.append(
            "a cat that assembles a tensor from pieces (rotate_half in rotary embeddings) is "
            "fused into its consumer by torch.compile"
        )
    if growth and pieces > growth:
        advice.reverse()  # the larger one first
    if any(op in ("aten::contiguous", "aten::clone", "aten::copy_") for op in ops):
        advice.append(
            ".contiguous() after permute / transpose / slicing copies the tensor: keep one layout "
            "end to end, or let torch.compile fuse the copy into its consumer"
        )
    advice.append("torch.compile removes most standalone copy kernels")
    text = "; ".join(advice) + "."
    return text[0].upper() + text[1:]


def section(part: dict[str, Any]) -> Section:
    from gpuscope.document import units as fmt
    from gpuscope.document.model import Cell, Facts, Section, Table, Text

    def line(key: str) -> str:
        t = part[key]
        return (
            f"{fmt.count(t['calls'])} ops, {fmt.duration(t['time_us'])} "
            f"({fmt.percent(t['share'])} of kernel time)"
        )

    transfers = part["transfers"]
    facts = Facts(
        (
            ("dtype conversions", line("conversions")),
            ("same-dtype copies", line("copies")),
            ("types not recorded", line("unknown")),
            (
                "host↔device transfers",
                f"{fmt.count(transfers['count'])}, {fmt.duration(transfers['time_us'])} "
                "(not counted above)",
            ),
        )
    )
    rows = tuple(
        (
            Cell(r["op"].replace("aten::", ""), full=r["op"], code=True),
            Cell(_dtypes(r)),
            Cell(r["shape"]),
            Cell(fmt.count(r["calls"])),
            Cell(fmt.duration(r["time_us"])),
            Cell((r["python"] or "—").rsplit("/", 1)[-1], full=r["python"] or "", code=True),
        )
        for r in part["rows"]
    )
    headers = ("operator", "dtype", "shape", "calls", "GPU time", "Python line")
    frames = "" if part["python_frames"] else "; no Python frames recorded (with_stack=False)"
    table = Table(headers, rows, (False, False, False, True, True, False), "largest first" + frames)
    note = Text(
        "A conversion changes the element type (copy_ with different source and destination "
        "types, or to / _to_copy with a dtype other than the input's); a copy moves data in one "
        "dtype (clone, contiguous, cat, padding, index copies). GPU time is the kernels the "
        "operator launched; shares are of all kernel time."
    )
    return Section("dtype conversions and copies", (facts, table, note), anchor="conversions")


def _dtypes(r: dict[str, Any]) -> str:
    if r["kind"] == CONVERSION:
        return f"{short(r['from'])} → {short(r['to'])}"
    if r["kind"] == UNKNOWN:
        return "not recorded"
    return f"{short(r['from'])} copy" if r["from"] else "copy"
