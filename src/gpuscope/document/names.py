"""Kernel names made short enough for one table line, and still unique among the rows.

C++ kernel names run to hundreds of characters (`void at::native::reduce_kernel<512, 1,
at::native::ReduceOp<float, …>>(…)`); what tells two apart is usually the function, its first
template arguments and the end of the name. `short_name` keeps those; `short_names` makes sure no
two different kernels of one table read the same.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

NAME_WIDTH = 80
_QUALIFIER = re.compile(r"\b[A-Za-z_]\w*::")


def short_name(name: str, width: int = NAME_WIDTH) -> str:
    """Shorten a C++ kernel name for a table: drop `void `, the argument list and nested template
    arguments, then cut the middle. The full name is shown elsewhere (tooltip, list)."""
    return fit(_simplified(name, depth=2), width)


def short_names(names: Sequence[str], width: int = NAME_WIDTH) -> list[str]:
    """`short_name` of each, unique among `names`: where different names would read the same, each
    shows one more level of template arguments, around the place where they differ (then the
    argument lists, where only those differ)."""
    shown = [short_name(n, width) for n in names]
    for group in _groups(names, shown).values():
        for depth, arguments in ((3, False), (99, False), (99, True)):
            texts = [_simplified(names[i], depth, arguments) for i in group]
            if len(set(texts)) == len({names[i] for i in group}):
                break
        _show_differences(shown, group, texts, width)
    return shown


def _simplified(name: str, depth: int, arguments: bool = False) -> str:
    text = name.strip().removeprefix("void ").replace("(anonymous namespace)", "(anon)")
    if not arguments:
        text = _drop_arguments(text)
    return _unqualify_arguments(_collapse_templates(text, depth))


def clip(name: str, width: int) -> str:
    """`name` cut at its end to `width` characters, the last one "…" (for a name inside a
    sentence, where its beginning says what it is)."""
    return name if len(name) <= width else name[: width - 1] + "…"


def fit(text: str, width: int) -> str:
    """`text` cut in the middle to `width` (head two thirds, tail one third)."""
    if len(text) <= width:
        return text
    keep = width - 1
    return text[: keep - keep // 3] + "…" + text[len(text) - keep // 3 :]


def _groups(names: Sequence[str], shown: list[str]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i, text in enumerate(shown):
        groups.setdefault(text, []).append(i)
    return {k: g for k, g in groups.items() if len({names[i] for i in g}) > 1}


def _show_differences(shown: list[str], group: list[int], texts: list[str], width: int) -> None:
    """Each of `group` as its text when it fits, else its head and the window around the first
    place where the texts differ."""
    first = min(_first_difference(texts[0], t) for t in texts[1:] if t != texts[0])
    head = max(8, width // 3)
    for i, text in zip(group, texts, strict=True):
        if len(text) <= width:
            shown[i] = text
            continue
        start = _token_start(text, max(head, first - width // 6))
        window = text[start : start + width - head - 2]
        tail = "…" if start + len(window) < len(text) else ""
        shown[i] = (text[:head] + "…" + window + tail)[:width]


def _token_start(text: str, at: int) -> int:
    """`at` moved back to the start of the word it falls in (after `<`, `,`, ` ` or `:`)."""
    for i in range(at, max(at - 16, 0), -1):
        if text[i - 1] in "<, :(":
            return i
    return at


def _first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


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


def _collapse_templates(text: str, keep: int = 2) -> str:
    """Keep `keep - 1` levels of template arguments; deeper `<…>` and `(…)` groups are elided."""
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch in "<(":
            depth += 1
            if depth <= keep:
                out.append(ch if depth < keep else ch + "…")
        elif ch in ">)":
            depth = max(depth - 1, 0)
            if depth < keep:
                out.append(ch)
        elif depth < keep:
            out.append(ch)
    return "".join(out)
