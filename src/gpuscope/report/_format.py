"""Display formatting shared by every renderer: times, shares, bytes, counts, kernel names.

Pure string functions of one value; no analysis happens here.
"""

from __future__ import annotations

import json
import re
from typing import Any

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
_ACRONYMS = {
    "gpu": "GPU",
    "cpu": "CPU",
    "api": "API",
    "gemm": "GEMM",
    "dtoh": "DtoH",
    "htod": "HtoD",
}
NAME_WIDTH = 80
_QUALIFIER = re.compile(r"\b[A-Za-z_]\w*::")


def duration(us: float | None) -> str:
    """µs → a short readable time: `duration(14501.706) == "14.50 ms"`."""
    if us is None:
        return "—"
    magnitude = abs(us)
    if magnitude == 0:
        return "0 µs"
    if magnitude < 10:
        return f"{us:.2f} µs"
    if magnitude < 1000:
        return f"{us:.1f} µs"
    if magnitude < 1_000_000:
        return f"{us / 1000:.2f} ms"
    return f"{us / 1_000_000:.3f} s"


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


def count(n: float | None) -> str:
    """`count(7160) == "7,160"`; floats keep up to two decimals."""
    if n is None:
        return "—"
    if isinstance(n, float) and not n.is_integer():
        return f"{n:,.2f}"
    return f"{int(n):,}"


def nbytes(n: float | None) -> str:
    """Bytes in binary units: `nbytes(10241769) == "9.77 MiB"`."""
    if n is None:
        return "—"
    value = float(n)
    for unit in _BYTE_UNITS:
        if abs(value) < 1024 or unit == _BYTE_UNITS[-1]:
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.2f} {unit}"
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
    return json.dumps(v, ensure_ascii=False, default=str)


def _number(key: str, v: float) -> str:
    if key.endswith("_us") or key == "time":
        return duration(v)
    if key.endswith(("share", "utilization", "fraction")):
        return percent(v)
    if key.endswith("bytes"):
        return nbytes(v)
    return count(v)


def short_name(name: str, width: int = NAME_WIDTH) -> str:
    """Shorten a C++ kernel name for a table: drop `void `, the argument list and nested template
    arguments, then cut the middle. The full name is shown elsewhere (tooltip, list)."""
    text = name.strip().removeprefix("void ").replace("(anonymous namespace)", "(anon)")
    text = _unqualify_arguments(_collapse_templates(_drop_arguments(text)))
    if len(text) <= width:
        return text
    keep = width - 1
    return text[: keep - keep // 3] + "…" + text[len(text) - keep // 3 :]


def _drop_arguments(text: str) -> str:
    """Cut at the first `(` outside template brackets: `kernel<T>(int, float*)` → `kernel<T>`."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch == "(" and depth == 0 and i > 0 and not text[i:].startswith("(anon)"):
            return text[:i]
    return text


def _unqualify_arguments(text: str) -> str:
    """`kernel<at::native::Op<…>>` → `kernel<Op<…>>`: namespaces inside the arguments add little."""
    head, bracket, rest = text.partition("<")
    return head + bracket + _QUALIFIER.sub("", rest)


def _collapse_templates(text: str) -> str:
    """Keep the first level of template arguments; deeper `<…>` and `(…)` groups are elided."""
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch in "<(":
            depth += 1
            if depth <= 2:
                out.append(ch if depth == 1 else ch + "…")
        elif ch in ">)":
            depth = max(depth - 1, 0)
            if depth <= 1:
                out.append(ch)
        elif depth <= 1:
            out.append(ch)
    return "".join(out)
