"""Kernel names made comparable across two profiles: what stays when the build or the tuning moves.

Three levels, each coarser than the one before; the diff matches on the finest level it can:

- `exact(name)`: the name with hash-like tokens removed (`_0x1f3a9c2e`, `_9f86d081884c7d65`), so
  a rebuilt kernel keeps its identity.
- `normalised(name)`: the kernel's namespace-qualified function name and its first-level template
  arguments that are not types or numbers (`_kernel_names.name_parts`), with plumbing arguments
  (`std::array`, `at::detail::Array`) dropped: `vectorized_elementwise_kernel<4, CUDAFunctor_add<
  c10::BFloat16>, std::array<char*, 3>>` and its `<8, …>` build on another GPU are both
  `at::native::vectorized_elementwise_kernel<at::native::CUDAFunctor_add>`.
- `family(name)`: the normalised name without tile and configuration suffixes: tile shapes
  (`_256x128`, `_64x3`, `tilesize64x64x64`, `_MI16x16x1`), alignment (`_align8`), everything of a
  Tensile / hipBLASLt `Cijk_…` name from its macro tile (`_MT128x144x64…`) on, and a trailing
  compiler counter (`triton_poi_fused_add_3`). A library choosing another tile for the same GEMM
  keeps the family.
- `architecture_neutral(name)`: the family without the GPU architecture the library built the
  kernel for: `volta_` / `ampere_` / `hopper_` …, `sm80` / `sm_90a`, cutlass's `_80_`, `gfx942`,
  Tensile's `ISA942`. cuBLAS's `volta_sgemm_128x64_nn` on a V100 and `ampere_sgemm_128x64_nn` on
  an A100 are both `sgemm_nn`.
"""

from __future__ import annotations

import re

from gpuscope.analysis import name_parts

# a hex token: `0x` + 6 or more hex digits, or 12 or more hex digits holding a digit and a letter
_HASH = re.compile(
    r"[_.$](?:0x[0-9a-fA-F]{6,}|(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{12,})"
    r"(?=[_.$]|$)"
)
_PLUMBING = re.compile(
    r"^(?:std::array|at::detail::Array|\w*OffsetCalculator|at::native::memory::\w+)$"
)
_TENSILE_TILE = re.compile(r"_MT\d+x\d+.*$")
_TILE = re.compile(r"_(?:[A-Za-z]*\d+(?:x\d+)+|align\d+)(?=[_>\s]|$)")
_COUNTER = re.compile(r"_\d+$")
_ARCH = re.compile(
    r"(?<![A-Za-z0-9])(?:maxwell|pascal|volta|turing|ampere|ada|hopper|blackwell|sm_?\d{2,3}[a-z]?"
    r"|gfx\d{3,4}[a-z]?|ISA\d{3,4}[a-z]?)_|_(?:sm_?\d{2,3}[a-z]?|gfx\d{3,4}[a-z]?|ISA\d{3,4}[a-z]?)"
    r"(?![A-Za-z0-9])|(?<=^cutlass)_\d{2,3}(?=_)|(?<=[:<]cutlass)_\d{2,3}(?=_)",
    re.IGNORECASE,
)


def exact(name: str) -> str:
    """The name without hash-like hex tokens (`0x` + 6 hex digits, or 12 with a digit and a
    letter) and the `_` or `.` before them."""
    return _HASH.sub("", name.strip())


def normalised(name: str) -> str:
    """`qualified::name<kept template arguments>`: what the kernel is, without its types."""
    parts = name_parts(exact(name))
    kept = [a for a in parts.templates.split(" ") if a and not _PLUMBING.match(a)]
    return f"{parts.qualified}<{' '.join(kept)}>" if kept else parts.qualified


def family(name: str) -> str:
    """The normalised name without tile / configuration suffixes and a trailing counter."""
    key = normalised(name)
    if key.startswith("Cijk_"):
        return _TENSILE_TILE.sub("", key)
    return _COUNTER.sub("", _TILE.sub("", key))


def architecture_neutral(name: str) -> str | None:
    """The family without its architecture tokens; None when the name has none (then this level
    says nothing the family did not)."""
    key = family(name)
    neutral = _ARCH.sub("", key)
    return neutral if neutral != key else None
