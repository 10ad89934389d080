"""A Measurement or a Comparison laid out as a document (`gpuscope bench`), which every renderer
draws: the statistics as facts, A and B side by side, the verdict, the correctness check, the
warnings. It formats; it never computes.
"""

from __future__ import annotations

from gpuscope.document.model import Block, Cell, Document, Facts, Level, Note, Section, Table, Text
from gpuscope.document.units import duration
from gpuscope.timing.ab import FASTER, INCORRECT, SAME, SLOWER, Comparison
from gpuscope.timing.diagnostics import warnings_for
from gpuscope.timing.measurement import Measurement

_VERDICT_LEVEL: dict[str, Level] = {
    FASTER: "ok", SLOWER: "critical", SAME: "info", INCORRECT: "critical"
}  # fmt: skip


def us(value: float | None) -> str:
    """A measured time: 4 significant digits (a bench's interval is that narrow)."""
    return duration(value, digits=4)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.2%}"


def _title(m: Measurement) -> str:
    auto = " (auto: µs-scale, profiler kernel time)" if "hot_median_us" in m.options else ""
    return f"{m.name} — mode {m.mode}{auto} ({m.timer}) on {m.env.device}"


def measurement_rows(m: Measurement) -> list[tuple[str, str]]:
    s = m.stats
    rows = [
        (
            "median",
            f"{us(s.p50)}  (95 % CI {us(s.ci_low)} – {us(s.ci_high)}, ±{_pct(s.ci_halfwidth)})",
        ),
        ("mean ± std", f"{us(s.mean)} ± {us(s.std)}  (CV {_pct(s.cv)})"),
        ("min", us(s.min)),
        ("p10 / p90", f"{us(s.p10)} / {us(s.p90)}"),
        ("p99 / max", f"{us(s.p99)} / {us(s.max)}"),
        ("IQR", us(s.iqr)),
        ("samples", f"{s.n} × {m.calls_per_sample} call(s); stopped: {m.stop_reason}"),
        ("first call", us(m.first_call_us)),
    ]
    hot = m.options.get("hot_median_us")
    if isinstance(hot, float):
        rows.append(("hot (events) / call", f"{us(hot)}  (includes the device's start gaps)"))
    if m.host_us_per_call is not None:
        rows.append(("host enqueue / call", us(m.host_us_per_call)))
    if m.kernels_per_call is not None:
        rows.append(("kernels / call", f"{m.kernels_per_call:g}"))
    rows.extend(_power_rows(m))
    rows.extend(_rate_rows(m))
    return rows


_STATE_TEXT = {
    "sustained": "sustained (power-limited; sampled after the load settled)",
    "unlimited": "no power limit reached (burst = sustained)",
    "unsettled": "power-limited, NOT settled within the sustain budget",
    "burst": "burst (short run; not loaded to a sustained state)",
}


def _power_rows(m: Measurement) -> list[tuple[str, str]]:
    p = m.power
    if p is None:
        return []
    state = _STATE_TEXT.get(p.reported, p.reported)
    if p.stop != "not-run":
        state += f"; {p.load_s:.1f} s of load ({p.stop})"
    if p.sampled_mhz:
        state += f"; SM {p.sampled_mhz:.0f} MHz"
    rows = [("power state", state)]
    burst = p.burst_median_us
    if burst and p.reported in ("sustained", "unsettled") and m.stats.p50 > 0:
        at = f" at SM {p.burst_mhz:.0f} MHz" if p.burst_mhz else ""
        rows.append(("burst median", f"{us(burst)}  ({burst / m.stats.p50 - 1:+.1%}){at}"))
    return rows


def _rate_rows(m: Measurement) -> list[tuple[str, str]]:
    r = m.rates
    if r is None:
        return []
    out = []
    if r.tflops is not None:
        frac = f" ({_pct(r.tflops_fraction)} of peak)" if r.tflops_fraction else ""
        out.append(("compute", f"{r.tflops:.1f} TFLOP/s{frac}"))
    if r.gbps is not None:
        frac = f" ({_pct(r.gbps_fraction)} of peak)" if r.gbps_fraction else ""
        out.append(("bandwidth", f"{r.gbps:.1f} GB/s{frac}"))
    return out


def _warnings(lines: list[str]) -> list[Block]:
    return [Note("warning", "warning", line) for line in lines]


def measurement_document(m: Measurement) -> Document:
    """One measurement: its statistics, then what makes them less trustworthy."""
    blocks: list[Block] = [Facts(tuple(measurement_rows(m))), *_warnings(warnings_for(m))]
    return Document("gpuscope bench", (Section(_title(m), tuple(blocks)),))


def comparison_document(c: Comparison) -> Document:
    """An A/B comparison (or a run against its baseline): both sides, the verdict with its
    interval, the correctness check, the warnings of each side."""
    blocks: list[Block] = []
    if c.a is not None and c.b is not None:
        blocks.append(_side_by_side(c.a, c.b))
    blocks += [_verdict(c), Text(_correctness_line(c))]
    for label, m in (("A", c.a), ("B", c.b)):
        if m is not None:
            blocks += _warnings([f"{label}: {w}" for w in warnings_for(m)])
    title = _ab_title(c.a) if c.a is not None else "A/B"
    return Document("gpuscope bench", (Section(title, tuple(blocks)),))


def _ab_title(a: Measurement) -> str:
    return f"A/B — mode {a.mode} ({a.timer}) on {a.env.device}"


def _side_by_side(a: Measurement, b: Measurement) -> Table:
    sa, sb = a.stats, b.stats
    rows = (
        ("median", us(sa.p50), us(sb.p50)),
        ("95 % CI of median", f"±{_pct(sa.ci_halfwidth)}", f"±{_pct(sb.ci_halfwidth)}"),
        ("CV", _pct(sa.cv), _pct(sb.cv)),
        ("samples × calls", f"{sa.n} × {a.calls_per_sample}", f"{sb.n} × {b.calls_per_sample}"),
        ("first call", us(a.first_call_us), us(b.first_call_us)),
    )
    cells = tuple(tuple(Cell(x) for x in row) for row in rows)
    return Table(("", f"A: {a.name}", f"B: {b.name}"), cells, (False, True, True))


def _verdict(c: Comparison) -> Note:
    text = "no timing: the outputs differ" if c.verdict == INCORRECT else "no ratio measured"
    if c.ratio is not None and c.speedup_ci is not None and c.speedup is not None:
        lo, hi = c.speedup_ci
        text = (
            f"B/A time ratio {c.ratio:.4f} (95 % CI {c.ci_low:.4f}–{c.ci_high:.4f}); "
            f"speedup {c.speedup:.3f}× ({lo:.3f}–{hi:.3f}); threshold ±{c.threshold:.1%}; "
            f"{c.rounds} rounds × {c.block}, stopped: {c.stop_reason}"
        )
    return Note(_VERDICT_LEVEL.get(c.verdict, "warning"), f"verdict: {c.verdict}", text)


def _g(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _correctness_line(c: Comparison) -> str:
    k = c.correctness
    if not k.checked:
        return f"correctness: not checked ({k.detail})"
    state = "ok" if k.ok else f"FAILED ({k.detail})"
    line = (
        f"correctness vs {k.against}: {state}; max abs err {_g(k.max_abs)}, "
        f"max rel err {_g(k.max_rel)} (rtol {_g(k.rtol)}, atol {_g(k.atol)})"
    )
    a = c.correctness_a
    if a is not None and a.checked:
        line += f"; A vs reference: {'ok' if a.ok else 'FAILED'} (max abs err {_g(a.max_abs)})"
    return line
