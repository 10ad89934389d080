"""Small helpers shared by the parsers: option lists, integers, dtype names."""

from __future__ import annotations

from collections.abc import Mapping

# Library type spellings → gpuscope's short dtype names (DTYPE_BYTES keys).
_DTYPES: dict[str, str] = {
    "f64_r": "f64", "f32_r": "f32", "f16_r": "f16", "bf16_r": "bf16", "f8_r": "f8",
    "bf8_r": "bf8", "i8_r": "i8", "i32_r": "i32", "u8_r": "u8", "u32_r": "u32",
    "f32_c": "c32", "f64_c": "c64", "xf32_r": "tf32",
    "r_64f": "f64", "r_32f": "f32", "r_16f": "f16", "r_16bf": "bf16", "r_8i": "i8",
    "r_8u": "u8", "r_32i": "i32", "r_32u": "u32", "c_32f": "c32", "c_64f": "c64",
    "r_8f_e4m3": "f8", "r_8f_e5m2": "bf8", "r_8f_e4m3_fnuz": "f8", "r_8f_e5m2_fnuz": "bf8",
    "compute_64f": "f64", "compute_32f": "f32", "compute_16f": "f16", "compute_32i": "i32",
    "compute_32f_fast_tf32": "tf32", "compute_32f_fast_16f": "f32", "compute_32f_fast_16bf": "f32",
    "compute_32f_pedantic": "f32",
    "float": "f32", "double": "f64", "half": "f16", "bfloat16": "bf16", "int8": "i8",
    "int32": "i32", "int64": "i64", "uint8": "u8", "fp8_e4m3": "f8", "fp8_e5m2": "bf8",
}  # fmt: skip


def dtype_name(spelling: str) -> str:
    """Normalize a library's type spelling (`bf16_r`, `R_16BF`, `CUDA_R_16F`, …) to `bf16`."""
    key = spelling.strip().lower()
    for prefix in ("cuda_", "cublas_", "hip_", "cudnn_data_"):
        key = key.removeprefix(prefix)
    return _DTYPES.get(key, key)


def to_int(text: str | None) -> int | None:
    """An integer, or None for anything that is not one (missing, `N/A`, pointers)."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def options(tokens: list[str]) -> dict[str, str]:
    """`-m 1 --lda 2 --flag` → {"m": "1", "lda": "2", "flag": ""} (a value never starts with --)."""
    found: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not token.startswith("-") or _is_number(token):
            i += 1
            continue
        name = token.lstrip("-")
        value = tokens[i + 1] if i + 1 < len(tokens) else ""
        if value.startswith("-") and not _is_number(value):
            value = ""
        found.setdefault(name, value)
        i += 2 if value else 1
    return found


def first(opts: Mapping[str, str], *names: str) -> str | None:
    """The first of `names` present in `opts`."""
    for name in names:
        if name in opts:
            return opts[name]
    return None


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True
