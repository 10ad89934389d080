"""Kernel names as the programmer wrote them: AMD's code-object symbol suffix (`.kd`, rocprof's
` [clone .kd]`) dropped, the one rule every reader of an AMD format applies."""

from __future__ import annotations

import re
from collections.abc import Sequence

_SUFFIX = re.compile(r"(\s*\[clone \.kd\]|\.kd)$")


def without_suffix(name: str) -> str:
    """`gemm_fusion_dot.kd` → `gemm_fusion_dot`; `k(int) [clone .kd]` → `k(int)`."""
    return _SUFFIX.sub("", name)


def without_suffixes(names: Sequence[str]) -> list[str]:
    """`without_suffix` of each name, computed once per distinct name."""
    table = {name: without_suffix(name) for name in set(names)}
    return [table[name] for name in names]
