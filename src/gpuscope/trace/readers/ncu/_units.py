"""Nsight Compute's metric units -> base units (ns, byte, hz, byte/second, cycle, ...).

ncu 2025.3 writes base units with `--csv` unless `--print-units auto` is given (older versions
scaled by default): `us`, `msecond`, `Kbyte`, `Mbyte/second`, `Ghz`, `Kcycle`. Scaled units are
a decimal prefix (K, M, G, T; SI, as ncu prints them) on a base unit, or a time unit; `%`, ratios
and unit-less values are kept as they are.
"""

from __future__ import annotations

_TIME = {
    "ns": 1.0,
    "nsecond": 1.0,
    "us": 1e3,
    "usecond": 1e3,
    "ms": 1e6,
    "msecond": 1e6,
    "s": 1e9,
    "second": 1e9,
}
_PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BASES = {"byte", "hz", "cycle", "inst", "sector", "request", "warp", "thread", "block", "bit"}


def to_base(unit: str) -> tuple[str, float]:
    """(base unit, factor): value_in_base = value * factor. Unknown units are kept (factor 1)."""
    unit = unit.strip()
    if unit in _TIME:
        return "ns", _TIME[unit]
    head, slash, rest = unit.partition("/")
    base, factor = _scaled(head)
    if not slash:
        return base, factor
    if rest in _TIME:  # rates: per second
        return f"{base}/second", factor * 1e9 / _TIME[rest]
    return f"{base}/{rest}", factor


def _scaled(head: str) -> tuple[str, float]:
    low = head.lower()
    if low in _BASES:
        return low, 1.0
    if len(head) > 1 and head[0] in _PREFIX and head[1:].lower() in _BASES:
        return head[1:].lower(), _PREFIX[head[0]]
    return head, 1.0
