"""Tensile kernel launches (TENSILE_DB=0x8000): `Running kernel: Cijk_Ailk_Bljk_SB_MT128x64x16_…`.

Tensile prints these on the program's stdout (no file destination exists), so `gpuscope run`
tees the child's stdout into the run directory (see collect.py). Library `tensile`; config = the
kernel name (madengine's config). The name encodes the operand layouts and types but not m/n/k:
`Ailk`/`Alik` → transA N/T, `Bljk`/`Bjlk` → transB N/T, the type code's first letter the input
type (S f32, D f64, H f16, B bf16, C/Z complex, I8 int8, F8/B8 fp8) and its third the compute
type (`HHS` = half in/out, single compute).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from gpuscope.libtrace.call import LibraryCall

_LINE = re.compile(r"Running kernel: (\S+)")
_NAME = re.compile(r"^Cijk_A(?P<a>[a-z]+)C?_B(?P<b>[a-z]+)C?_(?P<types>[A-Za-z0-9]+)")
_TYPE_LETTERS = {"S": "f32", "D": "f64", "H": "f16", "B": "bf16", "C": "c32", "Z": "c64"}


def parse(lines: Iterable[str]) -> Iterator[LibraryCall]:
    """Kernel launch records among any other lines."""
    for line in lines:
        found = _LINE.search(line)
        if found:
            yield kernel_call(found.group(1))


def kernel_call(name: str) -> LibraryCall:
    """What a Tensile kernel name says about its GEMM."""
    parsed = _NAME.match(name)
    if parsed is None:
        return LibraryCall(library="tensile", config=name, op="kernel")
    types = parsed.group("types")
    return LibraryCall(
        library="tensile",
        config=name,
        op="gemm",
        dtype=_input_type(types),
        compute_type=_TYPE_LETTERS.get(types[2], "") if len(types) >= 3 else _input_type(types),
        trans_a="N" if parsed.group("a") == "ilk" else "T",
        trans_b="N" if parsed.group("b") == "ljk" else "T",
    )


def _input_type(code: str) -> str:
    for prefix, dtype in (("I8", "i8"), ("4xi8", "i8"), ("F8", "f8"), ("B8", "bf8")):
        if code.startswith(prefix):
            return dtype
    return _TYPE_LETTERS.get(code[:1], "")
