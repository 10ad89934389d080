"""The parts of a kernel name that say what the kernel is.

A demangled name carries much that does not: template arguments that are element types
(`cutlass::bfloat16_t`, `c10::Half`), argument lists full of other libraries' namespaces
(`flashinfer::QuantizationSFLayout`), epilogue words (`relu`, `swiGlu`). Categories are decided on
the kernel's own name first (`RMSNormKernel`), then on its first-level template arguments that
are not types (`cutlass::Kernel<cutlass_80_tensorop_s1688gemm_…>` → the GEMM), then on its
namespace-qualified name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TYPE_ARG = re.compile(
    r"^(?:const\s+)?(?:unsigned\s+)?(?:[\w]+::)*"
    r"(?:bool|char|short|int|long|float|double|half|bfloat16|__half|__nv_\w+|__hip_\w+|"
    r"int\d+_t|uint\d+_t|\w+_t|Half|BFloat16|Float8\w*|float_e\w+|complex\w*|"
    r"(?:long\s+)+(?:long|int|double)?|[-\d.]+[a-zA-Z]*|true|false|nullptr)[\s*&]*$"
)


# ncu writes an anonymous namespace as `<unnamed>::`, and its base names as `unnamed>::`
_UNNAMED = re.compile(r"(?<![\w>])<?unnamed>::")


@dataclass(frozen=True)
class NameParts:
    base: str  # the function's own name: `RMSNormKernel`
    qualified: str  # with its namespaces: `flashinfer::norm::RMSNormKernel`
    templates: str  # first-level template arguments that are not types, space separated


_KD = re.compile(r"(?:\.kd| \[clone \.kd\])$")  # an AMD code object's kernel-descriptor symbol


def name_parts(name: str) -> NameParts:
    """`void ns::kern<cutlass::half_t, Op<…>>(args)` → base `kern`, qualified `ns::kern`,
    templates `Op`."""
    head = _head(_UNNAMED.sub("", _KD.sub("", name.strip())))
    qualified, arguments = _split_templates(head)
    qualified = qualified.split()[-1] if qualified.split() else qualified
    base = qualified.rsplit("::", 1)[-1]
    stripped = (_strip_nested(a) for a in arguments if not _TYPE_ARG.match(a.strip()))
    kept = [a for a in stripped if a and not _TYPE_ARG.match(a)]
    return NameParts(base=base, qualified=qualified, templates=" ".join(kept))


def _head(name: str) -> str:
    """The name without its argument list and without a leading return type."""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch == "(" and depth == 0 and i > 0:
            if name[i:].startswith("(anonymous namespace)"):
                continue
            name = name[:i]
            break
    name = name.replace("(anonymous namespace)::", "")
    return _drop_return_type(name)


def _drop_return_type(name: str) -> str:
    """`void k<…>` / `std::enable_if<…>::type ns::k<…>`: keep the last space-separated word that
    is outside template brackets."""
    depth = 0
    start = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch == " " and depth == 0 and i + 1 < len(name):
            start = i + 1
    return name[start:]


def _split_templates(head: str) -> tuple[str, list[str]]:
    """`ns::k<A, B<C>>::f` → ("ns::k::f", ["A", "B<C>"]): the first template list only."""
    depth = 0
    outside: list[str] = []
    arguments: list[str] = []
    current: list[str] = []
    for ch in head:
        if ch == "<":
            depth += 1
            if depth == 1:
                continue
        elif ch == ">":
            depth -= 1
            if depth == 0:
                arguments.append("".join(current))
                current = []
                continue
        elif ch == "," and depth == 1:
            arguments.append("".join(current))
            current = []
            continue
        if depth == 0:
            outside.append(ch)
        elif depth >= 1:
            current.append(ch)
    return "".join(outside), [a.strip() for a in arguments if a.strip()]


def _strip_nested(argument: str) -> str:
    """`flash::FlashAttnFwdSm90<flash::Mainloop<…>>` → `flash::FlashAttnFwdSm90`."""
    depth = 0
    out = []
    for ch in argument:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    return "".join(out).strip()
