"""One formatter per kind of quantity — time, bytes, rate, count, share — used by every view and
every finding's message, so that a report never shows `532,802.4 µs` beside `4.159 s`. Each is
auto-scaled to 3 significant digits. Pure string functions of one value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
_TIME_UNITS = ((1e-3, "ns"), (1.0, "µs"), (1e3, "ms"), (1e6, "s"))  # (µs per unit, unit)
_ACRONYMS = {
    "gpu": "GPU",
    "cpu": "CPU",
    "api": "API",
    "gemm": "GEMM",
    "dtoh": "DtoH",
    "htod": "HtoD",
}


def duration(us: float | None, digits: int = 3) -> str:
    """µs → a time in the unit that keeps it short, to 3 significant digits, the same in every
    view: `duration(14501.706) == "14.5 ms"`, `duration(0.532) == "532 ns"`; None → "—".
    `digits=4` for measurements whose confidence interval is that narrow (gpuscope bench)."""
    if us is None:
        return "—"
    magnitude = abs(us)
    if magnitude == 0:
        return "0 µs"
    edge = 1000 - 0.5 * 10 ** (3 - digits)  # what rounds up to 1000 of a unit
    for scale, unit in _TIME_UNITS:
        if magnitude < edge * scale or unit == "s":
            return f"{_significant(us / scale, digits)} {unit}"
    raise AssertionError("unreachable")


def time_ns(ns: float | None) -> str:
    """ns → `duration`: the formatter of every time in a finding's message."""
    return duration(None if ns is None else ns / 1000)


def delta(us: float | None) -> str:
    """A signed change of time: `delta(-1250.0) == "−1.25 ms"`, `delta(3.0) == "+3.00 µs"`."""
    if us is None:
        return "—"
    sign = "+" if us > 0 else "−" if us < 0 else "±"
    return f"{sign}{duration(abs(us))}"


def rate(value: float | None, unit: str) -> str:
    """A rate (or any SI quantity: FLOP, B/s, W) in decimal prefixes, 3 significant digits:
    `rate(1.36e10, "B/s") == "13.6 GB/s"`,
    `rate(7.98e14, "FLOP/s") == "798 TFLOP/s"`."""
    if value is None:
        return "—"
    magnitude, prefixes = abs(value), ("", "k", "M", "G", "T", "P", "E")
    step = 0
    while magnitude >= 999.5 and step < len(prefixes) - 1:
        magnitude /= 1000
        step += 1
    return f"{_three(value / 1000**step)} {prefixes[step]}{unit}"


def _three(x: float) -> str:
    """3 significant digits (never fewer than the integer part): 1.60, 14.5, 510, 1,290."""
    return _significant(x, 3)


def _significant(x: float, digits: int) -> str:
    magnitude = abs(x)
    for decimals in range(digits - 1, 0, -1):
        if magnitude < 10 ** (digits - decimals) - 0.5 * 10**-decimals:
            return f"{x:.{decimals}f}"
    return f"{x:,.0f}"


def bound(us: float) -> str:
    """A round bucket edge in µs, without trailing zeros: `bound(1000.0) == "1 ms"`."""
    if us >= 1_000_000:
        return f"{us / 1_000_000:g} s"
    if us >= 1000:
        return f"{us / 1000:g} ms"
    return f"{us:g} µs"


def percent(share: float | None) -> str:
    """A 0..1 share → `"38.5%"`; tiny non-zero shares stay visible as `"<0.1%"`."""
    if share is None:
        return "—"
    if 0 < share < 0.0005:
        return "<0.1%"
    return f"{share * 100:.1f}%"


def excess(share: float | None) -> str:
    """How far a value is above a reference, as `max / mean - 1`: `"+42.0%"` up to twice the
    reference, then a ratio (`"3.51×"`), which reads better than `"+251.0%"`."""
    if share is None:
        return "—"
    if share < 1:
        return f"+{share * 100:.1f}%"
    return f"{_three(share + 1)}×"


def count(n: float | None) -> str:
    """`count(7160) == "7,160"`; floats keep up to two decimals."""
    if n is None:
        return "—"
    if isinstance(n, float) and not n.is_integer():
        return f"{n:,.2f}"
    return f"{int(n):,}"


def nbytes(n: float | None) -> str:
    """Bytes in binary units, 3 significant digits: `nbytes(10241769) == "9.77 MiB"`."""
    if n is None:
        return "—"
    value = float(n)
    for unit in _BYTE_UNITS:
        if abs(value) < 1023.5 or unit == _BYTE_UNITS[-1]:
            return f"{int(value)} {unit}" if unit == "B" else f"{_three(value)} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def label(key: str) -> str:
    """A dict key → a column/row label: `label("cpu_op_time_us") == "CPU op time"`."""
    words = key.removesuffix("_us").split("_")
    return " ".join(_ACRONYMS.get(w.lower(), w) for w in words if w) or key


def value(key: str, v: Any) -> str:
    """Format `v` by what its key says it holds (`*_us` time, `*share` ratio, `*bytes` size)."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        return _number(key, v)
    if isinstance(v, str):
        return v
    if isinstance(v, Mapping):  # never raw JSON in a view: `label value; label (nested …)`
        return "; ".join(_item(str(k), x) for k, x in v.items()) or "—"
    if isinstance(v, (list, tuple)):
        return ", ".join(value(key, x) for x in v) or "—"
    return str(v)


def _item(key: str, v: Any) -> str:
    shown = value(key, v)
    return (
        f"{label(key)} ({shown})"
        if isinstance(v, (Mapping, list, tuple))
        else f"{label(key)} {shown}"
    )


def _number(key: str, v: float) -> str:
    if key.endswith("_us") or key == "time":
        return duration(v)
    if key.endswith(("share", "utilization", "fraction")):
        return percent(v)
    if key.endswith("bytes"):
        return nbytes(v)
    return count(v)
